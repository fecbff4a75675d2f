/* The estimates and the verdict of a point from what its replicas keep (point.h,
 * point_impl.h; docs/model.md, "Estimation" and "Verdicts"):
 *   - the units: the replicas (R >= 2), or the batches of the one replica (R = 1), merged
 *     by the batch rule until they pass von Neumann's test;
 *   - every metric entry a ratio of sums over the units (src/stats/ratio.c), proportions
 *     with the Korn-Graubard interval and a bound when nothing was seen
 *     (src/stats/proportion.c), quantiles from the pooled histogram with Woodruff's
 *     interval (src/stats/quantile.c);
 *   - the verdict: unstable only when proven (rho >= 1, the customer cap, or the drift
 *     test), not_stationary when the data show that the run is too short (the warm-up
 *     rule near its cap, the halves of the measured period differ, short replicas,
 *     correlated batches, no customers, growth not proven), ok otherwise. */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ticks.h"
#include "lbmc/metrics.h"
#include "lbmc/sim.h"
#include "point_impl.h"

/* The units: the R replicas' sums, or the batches of replica 0's measured period (as
 * equal as whole segments allow; at most one per segment). */
static lbmc_err lbmc_point_units(lbmc_point *p, long R, lbmc_units *u)
{
  const size_t Sm = p->S - p->d;
  size_t B = (size_t)p->o.batches < Sm ? (size_t)p->o.batches : Sm;
  const int rows = R < 2 || p->pe; /* the pair statistics read the rows as one array */
  u->U = R >= 2 ? (size_t)R : (B ? B : 1);
  u->p = p;
  LBMC_CALL(lbmc_point_work(&p->work, &p->work_len, u->U * ((rows ? p->W : 0) + 4)));
  u->y = p->work;
  u->x = u->y + u->U;
  u->my = u->x + u->U;
  u->mx = u->my + u->U;
  u->row = rows ? u->mx + u->U : NULL;
  if (!rows) return LBMC_SUCCESS;
  memset(u->row, 0, sizeof *u->row * u->U * p->W);
  if (R >= 2) {
    for (long i = 0; i < R; i++) {
      const lbmc_point_row *r;
      LBMC_CALL(lbmc_point_row_at(p, i, &r));
      memcpy(u->row + (size_t)i * p->W, lbmc_point_row_sums(r), sizeof(double) * p->W);
    }
  } else if (R == 1) {
    lbmc_record rec;
    LBMC_CALL(lbmc_point_full(p, 0, &rec));
    for (size_t b = 0; b < u->U; b++)
      lbmc_point_seg_add(p, &rec, p->d + Sm * b / u->U, p->d + Sm * (b + 1) / u->U,
                         u->row + b * p->W);
  }
  return LBMC_SUCCESS;
}

/* The batch rule of a one-replica point: LBATCH's, with at most as many batches as its
 * relaxation time allows (each at least LBMC_RELAX_BATCH_TAUS relaxation times long). */
static void lbmc_point_batch_rule(const lbmc_point *p, lbmc_batch_rule *rule)
{
  lbmc_batch_rule_default(rule);
  if (p->batch_cap >= rule->min_batches && p->batch_cap < rule->max_batches)
    rule->max_batches = p->batch_cap;
}

/* Batch means of length l hold only the fraction f(l / tau) of the long-run variance
 * (lbmc_relax_length_factor: l Var(batch mean) = sigma_inf^2 f), so their spread
 * underestimates the variance of the whole period's mean by that factor: the interval of a
 * one-replica point is widened by 1 / sqrt(f) around its estimate, with the point's
 * relaxation time (M/M/1 at rho 0.9, 125 batches of 15 tau: 4%, where its mean covered
 * 91.7%). A proportion's interval stays within [0, 1]. */
static void lbmc_point_widen_batches(const lbmc_point *p, size_t n, int proportion,
                                     lbmc_interval *iv)
{
  const double tau = p->batch_tau, l = p->v.time_used / (double)n;
  double f, s;
  if (!(tau > 0) || !isfinite(tau) || !(l > 0) || !isfinite(iv->lower) || !isfinite(iv->upper))
    return;
  f = lbmc_relax_length_factor(l / tau);
  if (!(f > 0 && f < 1)) return;
  s = 1 / sqrt(f);
  iv->half_width *= s;
  iv->std_err *= s;
  iv->lower = iv->estimate - s * (iv->estimate - iv->lower);
  iv->upper = iv->estimate + s * (iv->upper - iv->estimate);
  if (proportion) iv->lower = fmax(0.0, iv->lower), iv->upper = fmin(1.0, iv->upper);
}

/* The entries into the set of tail[j][k] behind it (the rule for rare events,
 * lbmc_few_events), into *events; NaN for the other metrics: the departures from level k
 * that its time at level k implies, speed(k) (A_k - A_k+1) over the units, which the
 * entries match within one per server (A_k alone at the last level: a count from above).
 * Errors: as lbmc_units_row. */
static lbmc_err lbmc_point_events(const lbmc_point *p, const lbmc_units *u, int i, size_t e,
                                  double *events)
{
  const int j = (int)(e / (size_t)p->K), k = (int)(e % (size_t)p->K) + 1;
  const double *rates;
  double a = 0;
  int L;
  *events = NAN;
  if (i != LBMC_M_TAIL) return LBMC_SUCCESS;
  L = lbmc_model_rates(p->m, j, &rates);
  for (size_t b = 0; b < u->U; b++) {
    const double *row = NULL;
    LBMC_CALL(lbmc_units_row(u, b, &row));
    a += row[lbmc_tk_area_tail(p->J, p->K, j, k)] -
         (k < p->K ? row[lbmc_tk_area_tail(p->J, p->K, j, k + 1)] : 0);
  }
  *events = rates[(k < L ? k : L) - 1] * a;
  return LBMC_SUCCESS;
}

/* Interval of entry e of metric i over the units (merged first when they are batches). */
static lbmc_err lbmc_point_entry(lbmc_point *p, const lbmc_units *u, int batches, int i, size_t e,
                                 lbmc_interval *iv)
{
  const double level = p->o.confidence;
  lbmc_term_kind kind = LBMC_TERM_RATIO;
  const double *y = u->y, *x = u->x;
  size_t n = u->U;
  unsigned flags = 0;
  double events;
  for (size_t k = 0; k < u->U; k++) {
    const double *row = NULL;
    LBMC_CALL(lbmc_units_row(u, k, &row));
    kind = lbmc_metric_terms(i, e, row, p->J, p->K, p->N, p->n, &u->y[k], &u->x[k]);
  }
  if (batches) {
    lbmc_batch_rule rule;
    lbmc_point_batch_rule(p, &rule);
    n = lbmc_batch_merge(u->y, u->x, u->U, 1, &rule, u->my, u->mx, &flags);
    y = u->my, x = u->mx;
  }
  if (kind == LBMC_TERM_RATIO)
    lbmc_ratio_interval_skew(y, x, n, 1, level, iv);
  else
    lbmc_proportion_interval(y, x, n, 1, level, kind == LBMC_TERM_TRIALS, iv);
  iv->flags |= flags;
  if (batches && n >= 2) lbmc_point_widen_batches(p, n, kind != LBMC_TERM_RATIO, iv);
  LBMC_CALL(lbmc_point_events(p, u, i, e, &events));
  lbmc_few_events(events, iv);
  return LBMC_SUCCESS;
}

/* ---- quantiles ---- */

/* The histogram `which` (0 sojourn, 1 wait) of unit u into h: replica u's retained
 * histograms, or group groups[u] of replica 0. */
static lbmc_err lbmc_point_unit_hist(lbmc_point *p, long R, const size_t *groups, size_t u,
                                     int which, lbmc_dhist *h)
{
  if (R >= 2) {
    const unsigned char *qdata;
    size_t qsize, used;
    LBMC_CALL(lbmc_point_qdata(p, (long)u, &qdata, &qsize));
    LBMC_CALL(lbmc_dhist_unpack(h, qdata, qsize, &used));
    if (which) LBMC_CALL(lbmc_dhist_unpack(h, qdata + used, qsize - used, &used));
    return LBMC_SUCCESS;
  } else {
    lbmc_record rec;
    LBMC_CALL(lbmc_point_full(p, 0, &rec));
    return lbmc_record_hist(&rec, groups[u], which, h);
  }
}

static unsigned lbmc_point_dhist_q(const void *ctx, double p, double *x)
{
  return lbmc_dhist_quantile(ctx, p, x);
}

/* The mixture `which` (0 sojourn, 1 wait) as a pooled distribution for Woodruff. */
typedef struct {
  const lbmc_mixture *mx;
  lbmc_mix_kind kind;
} lbmc_point_mix;

static unsigned lbmc_point_mix_q(const void *ctx, double p, double *x)
{
  const lbmc_point_mix *c = ctx;
  *x = c->mx ? lbmc_mixture_quantile(c->mx, c->kind, p) : NAN;
  return isnan(*x) ? LBMC_IV_EMPTY : 0;
}

/* The mixture of unit u as a new mixture (NULL: no customers): replica u's retained one,
 * or group groups[u] of replica 0. */
static lbmc_err lbmc_point_unit_mixture(const lbmc_point *p, long R, const size_t *groups, size_t u,
                                        lbmc_mixture **mx)
{
  *mx = NULL;
  if (R >= 2) {
    const unsigned char *qdata;
    size_t qsize;
    LBMC_CALL(lbmc_point_qdata(p, (long)u, &qdata, &qsize));
    if (qsize && lbmc_mixture_unpack(qdata, qsize, mx, NULL))
      return LBMC_ERROR(LBMC_ERR_FILE, "point: a replica's mixture is malformed");
    return LBMC_SUCCESS;
  } else {
    lbmc_record rec;
    LBMC_CALL(lbmc_point_full(p, 0, &rec));
    return lbmc_record_mixture(&rec, groups[u], mx);
  }
}

/* What Woodruff's interval needs of the units, for the sojourn (k = 0) and wait (1)
 * quantiles at every level l: X[k U + u] the customers of unit u, Y[(k Q + l) U + u] those
 * at or below the pooled quantile q[k][l] (flags qf[k][l]). */
typedef struct {
  size_t U;
  const size_t *groups;
  double *Y, *X, q[2][LBMC_QUANTILES];
  unsigned qf[2][LBMC_QUANTILES];
} lbmc_qunits;

/* Histograms: pooled over the units (first pass), then each unit's customers at or below
 * the pooled quantiles (second pass); the pooled ones stay in p->hist[0..1]. */
static lbmc_err lbmc_point_qunits_hist(lbmc_point *p, long R, lbmc_qunits *w)
{
  const int Q = LBMC_QUANTILES;
  const size_t U = w->U;
  for (int k = 0; k < 2; k++) lbmc_dhist_init(&p->hist[k], p->tau);
  for (size_t u = 0; u < U; u++)
    for (int k = 0; k < 2; k++) {
      LBMC_CALL(lbmc_point_unit_hist(p, R, w->groups, u, k, &p->hist[2]));
      LBMC_CALL(lbmc_dhist_merge(&p->hist[k], &p->hist[2]));
      w->X[k * U + u] = (double)lbmc_dhist_total(&p->hist[2]);
    }
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < Q; l++)
      w->qf[k][l] = lbmc_dhist_quantile(&p->hist[k], lbmc_quantile_level(l), &w->q[k][l]);
  for (size_t u = 0; u < U; u++)
    for (int k = 0; k < 2; k++) {
      LBMC_CALL(lbmc_point_unit_hist(p, R, w->groups, u, k, &p->hist[2]));
      for (int l = 0; l < Q; l++)
        w->Y[(size_t)(k * Q + l) * U + u] =
            w->qf[k][l] ? 0 : lbmc_dhist_count_le(&p->hist[2], w->q[k][l]);
    }
  return LBMC_SUCCESS;
}

/* Mixtures (docs/model.md, "Quantiles"): the same with the pooled mixture *pooled (new,
 * the caller destroys it; NULL when no customers), the units' counts at or below q being
 * their customers x their mixture's distribution function at q (sums of probabilities). */
static lbmc_err lbmc_point_qunits_mix(lbmc_point *p, long R, lbmc_qunits *w, lbmc_mixture **pooled)
{
  const int Q = LBMC_QUANTILES;
  const size_t U = w->U;
  lbmc_err err = LBMC_SUCCESS;
  *pooled = NULL;
  for (size_t u = 0; u < U && !err; u++) {
    lbmc_mixture *mx;
    err = lbmc_point_unit_mixture(p, R, w->groups, u, &mx);
    w->X[u] = w->X[U + u] = mx ? (double)lbmc_mixture_total(mx) : 0;
    if (!err && mx && !*pooled)
      *pooled = mx, mx = NULL;
    else if (!err && mx)
      err = lbmc_mixture_add(*pooled, mx);
    lbmc_mixture_destroy(&mx);
  }
  LBMC_CALL(err);
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < Q; l++) {
      lbmc_point_mix c = {*pooled, k ? LBMC_MIX_WAIT : LBMC_MIX_SOJOURN};
      w->qf[k][l] = lbmc_point_mix_q(&c, lbmc_quantile_level(l), &w->q[k][l]);
    }
  for (size_t u = 0; u < U && !err; u++) {
    lbmc_mixture *mx;
    err = lbmc_point_unit_mixture(p, R, w->groups, u, &mx);
    for (int k = 0; k < 2 && !err; k++)
      for (int l = 0; l < Q; l++)
        w->Y[(size_t)(k * Q + l) * U + u] =
            w->qf[k][l] || !mx || !(w->X[u] > 0) /* no customers: 0/0, as every unit */
                ? 0
                : w->X[u] * lbmc_mixture_cdf(mx, k ? LBMC_MIX_WAIT : LBMC_MIX_SOJOURN, w->q[k][l]);
    lbmc_mixture_destroy(&mx);
  }
  return err;
}

/* Sojourn and wait quantiles from the pooled histograms or mixtures, with Woodruff's
 * intervals over the units (replicas, or the quantile groups of one replica merged by
 * the batch rule). */
static lbmc_err lbmc_point_quantiles(lbmc_point *p, long R)
{
  const int Q = LBMC_QUANTILES, one = R < 2;
  size_t groups[LBMC_MAX_QUANTILE_GROUPS]; /* a one-replica record has at most these */
  double *work;
  lbmc_qunits w = {0};
  lbmc_mixture *pooled = NULL;
  lbmc_batch_rule rule;
  lbmc_err err;
  lbmc_point_batch_rule(p, &rule);
  w.groups = groups;
  if (one) {
    lbmc_record rec;
    LBMC_CALL(lbmc_point_full(p, 0, &rec));
    for (size_t g = 0; g < p->G && w.U < sizeof groups / sizeof *groups; g++)
      if ((size_t)rec.group_start[g] >= p->d) groups[w.U++] = g;
  } else {
    w.U = (size_t)R;
  }
  /* Y, X, and X merged with the rule's work */
  LBMC_CALL(lbmc_point_work(&p->work, &p->work_len, w.U * (2 * Q + 5)));
  w.Y = p->work, w.X = w.Y + 2 * Q * w.U, work = w.X + 2 * w.U;
  err = p->qkind == LBMC_QK_MIX ? lbmc_point_qunits_mix(p, R, &w, &pooled)
                                : lbmc_point_qunits_hist(p, R, &w);
  for (int k = 0; k < 2 && !err; k++) {
    const size_t off =
        lbmc_metric_offset(k ? LBMC_M_WAIT_QUANTILES : LBMC_M_SOJOURN_QUANTILES, p->J, p->K);
    lbmc_point_mix c = {pooled, k ? LBMC_MIX_WAIT : LBMC_MIX_SOJOURN};
    lbmc_pooled_dist d;
    if (p->qkind == LBMC_QK_MIX) /* p->hist is not made then: not read */
      d = (lbmc_pooled_dist){lbmc_point_mix_q, &c, pooled ? (double)lbmc_mixture_total(pooled) : 0,
                             0};
    else
      d = (lbmc_pooled_dist){lbmc_point_dhist_q, &p->hist[k], (double)lbmc_dhist_total(&p->hist[k]),
                             1};
    for (int l = 0; l < Q; l++) {
      lbmc_interval iv;
      double *Yl = w.Y + (size_t)(k * Q + l) * w.U, *Xl = work; /* the rule overwrites X */
      memcpy(Xl, w.X + k * w.U, sizeof *w.X * w.U);
      lbmc_woodruff(&d, lbmc_quantile_level(l), w.q[k][l], w.qf[k][l], Yl, Xl, w.U, p->o.confidence,
                    one ? &rule : NULL, work + w.U, &iv);
      lbmc_point_put(&p->est, off + (size_t)l, &iv);
    }
  }
  lbmc_mixture_destroy(&pooled);
  return err;
}

/* ---- the verdict ---- */

/* Sum of field f over parts [a, b) of a replica's row. */
static double lbmc_parts(const lbmc_point_row *r, int a, int b, int f)
{
  double s = 0;
  for (int k = a; k < b; k++) s += r->parts[k][f];
  return s;
}

/* Halves of the measured period, R >= 2: the paired difference (replica by replica) of the
 * customers per server in its first and second half; p-value of "no difference". */
static lbmc_err lbmc_point_halves(lbmc_point *p, long R)
{
  const double n = (double)p->n;
  double *a;
  lbmc_interval iv;
  LBMC_CALL(lbmc_point_work(&p->work, &p->work_len, 4 * (size_t)R));
  a = p->work;
  for (long i = 0; i < R; i++) {
    const lbmc_point_row *r;
    LBMC_CALL(lbmc_point_row_at(p, i, &r));
    a[4 * i] = lbmc_parts(r, 0, LBMC_PARTS / 2, LBMC_PART_AREA);
    a[4 * i + 1] = lbmc_parts(r, 0, LBMC_PARTS / 2, LBMC_PART_LEN) * n;
    a[4 * i + 2] = lbmc_parts(r, LBMC_PARTS / 2, LBMC_PARTS, LBMC_PART_AREA);
    a[4 * i + 3] = lbmc_parts(r, LBMC_PARTS / 2, LBMC_PARTS, LBMC_PART_LEN) * n;
  }
  lbmc_ratio_paired_difference(a, a + 1, a + 2, a + 3, (size_t)R, 4, p->o.confidence, &iv);
  p->v.halves_p = lbmc_interval_p_value(&iv, 0);
  if (p->v.halves_p < LBMC_STATIONARITY_ALPHA) {
    double y0 = 0, x0 = 0, y1 = 0, x1 = 0;
    for (long i = 0; i < R; i++)
      y0 += a[4 * i], x0 += a[4 * i + 1], y1 += a[4 * i + 2], x1 += a[4 * i + 3];
    p->v.evidence |= LBMC_EV_HALVES;
    lbmc_point_reason(&p->v,
                      "the customers per server differ between the halves of the measured period: "
                      "%.4g then %.4g (p = %.2g)",
                      y0 / x0, y1 / x1, p->v.halves_p);
  }
  return LBMC_SUCCESS;
}

/* Halves and correlation of one replica, R = 1: the customers per server over its batches,
 * merged by the batch rule (flag: still correlated), then Welch's test of the first half
 * of the merged batches against the second. */
static void lbmc_point_halves_one(lbmc_point *p, lbmc_units *u)
{
  lbmc_batch_rule rule;
  lbmc_interval iv;
  unsigned flags = 0;
  size_t k, h;
  for (size_t b = 0; b < u->U; b++) {
    u->y[b] = u->row[b * p->W + LBMC_TK_AREA_N];
    u->x[b] = u->row[b * p->W + LBMC_TK_LEN] * (double)p->n;
  }
  lbmc_point_batch_rule(p, &rule);
  k = lbmc_batch_merge(u->y, u->x, u->U, 1, &rule, u->my, u->mx, &flags);
  if (flags & LBMC_IV_CORRELATED) {
    p->v.evidence |= LBMC_EV_CORRELATED;
    lbmc_point_reason(&p->v,
                      "the batch means of customers per server stay correlated after merging "
                      "them down to %zu batches",
                      k);
  }
  if (k < 4) return;
  h = k / 2;
  lbmc_ratio_difference(u->my, u->mx, h, 1, u->my + h, u->mx + h, k - h, 1, p->o.confidence, &iv);
  p->v.halves_p = lbmc_interval_p_value(&iv, 0);
  if (p->v.halves_p < LBMC_STATIONARITY_ALPHA) {
    p->v.evidence |= LBMC_EV_HALVES;
    lbmc_point_reason(&p->v,
                      "the customers per server differ between the halves of the measured period "
                      "(difference %.3g, p = %.2g)",
                      iv.estimate, p->v.halves_p);
  }
}

/* Short replicas, 2 <= R < LBMC_SHORT_MAX_REPLICAS: von Neumann's statistic of each
 * replica's eighths (customers per server, residuals from the pooled mean), averaged over
 * the replicas; under independence each is about N(0, (b - 2) / (b^2 - 1)) (Young 1941),
 * so their mean has that variance / R. A significantly positive mean: the eighths are
 * correlated, the replicas not long against the relaxation time. */
static lbmc_err lbmc_point_short(lbmc_point *p, long R)
{
  const double b = LBMC_PARTS, n = (double)p->n;
  double sy = 0, sx = 0, r, csum = 0, sigma;
  long m = 0;
  if (R < 2 || R >= LBMC_SHORT_MAX_REPLICAS || p->mf_short)
    return LBMC_SUCCESS; /* mf_short: lbmc_point_mf_short */
  for (long i = 0; i < R; i++) {
    const lbmc_point_row *row;
    LBMC_CALL(lbmc_point_row_at(p, i, &row));
    for (int k = 0; k < LBMC_PARTS; k++) {
      if (!(row->parts[k][LBMC_PART_LEN] > 0)) return LBMC_SUCCESS; /* too few segments */
      sy += row->parts[k][LBMC_PART_AREA];
      sx += row->parts[k][LBMC_PART_LEN] * n;
    }
  }
  r = sy / sx;
  for (long i = 0; i < R; i++) {
    double e[LBMC_PARTS], mean = 0, ss = 0, sd = 0;
    const lbmc_point_row *row;
    LBMC_CALL(lbmc_point_row_at(p, i, &row));
    for (int k = 0; k < LBMC_PARTS; k++) {
      e[k] = row->parts[k][LBMC_PART_AREA] - r * row->parts[k][LBMC_PART_LEN] * n;
      mean += e[k] / b;
    }
    for (int k = 0; k < LBMC_PARTS; k++) {
      ss += (e[k] - mean) * (e[k] - mean);
      if (k) sd += (e[k] - e[k - 1]) * (e[k] - e[k - 1]);
    }
    if (ss > 0) csum += 1 - sd / (2 * ss), m++;
  }
  if (m < 2) return LBMC_SUCCESS;
  sigma = sqrt((b - 2) / ((b * b - 1) * (double)m));
  p->v.short_p = gsl_cdf_ugaussian_Q(csum / (double)m / sigma);
  if (p->v.short_p < LBMC_STATIONARITY_ALPHA) {
    p->v.evidence |= LBMC_EV_SHORT;
    lbmc_point_reason(
        &p->v,
        "the replicas are short against the system's relaxation time: the eighths of "
        "their measured periods are correlated (lag-1 %.2f, p = %.2g), and %ld replicas "
        "are too few to make up for it",
        csum / (double)m, p->v.short_p, R);
  }
  return LBMC_SUCCESS;
}

/* 1 if the model cannot be unstable: every buffer finite (the customers are bounded), or
 * one pool at rho < 1 (every policy sends each server at most its share of a load below
 * its speed, or routes by queue lengths among equal servers). */
static int lbmc_point_surely_stable(const lbmc_point *p)
{
  int bounded = 1;
  for (int j = 0; j < p->J; j++) bounded &= lbmc_model_buffer(p->m, j) != LBMC_BUFFER_INF;
  return bounded || (p->J == 1 && lbmc_model_rho(p->m) < 1);
}

/* The replicas that would prove the growth of g (made with R) if its mean and spread
 * stayed: the smallest R' with both one-sided bounds, t_{R'-1} s / sqrt(R'), clear of their
 * thresholds; 0 when the growth slows down (more replicas cannot prove it) or more than
 * 10^5 would be needed. */
static long lbmc_point_drift_replicas(const lbmc_growth *g, long R, double g_min)
{
  const double t = gsl_cdf_tdist_Qinv(LBMC_DRIFT_ALPHA, (double)R - 1);
  const double sg = (g->growth - g->growth_lower) / t * sqrt((double)R);
  const double sd = (g->decel - g->decel_lower) / t * sqrt((double)R);
  if (!(g->decel > 0) || !(g->growth > g_min)) return 0;
  for (long r = R + 1; r <= 100000; r += r < 64 ? 1 : r / 16) {
    const double tr = gsl_cdf_tdist_Qinv(LBMC_DRIFT_ALPHA, (double)r - 1) / sqrt((double)r);
    if (g->growth - tr * sg > g_min && g->decel - tr * sd > 0) return r;
  }
  return 0;
}

/* The drift test (lbmc_growth_test) on the quarters of the replicas, R >= 2: proven
 * growth makes the point unstable; growth significant at the stationarity level but not
 * proven (slowing down, or too small) makes it not stationary. */
static lbmc_err lbmc_point_drift(lbmc_point *p, long R)
{
  const double g_min = p->o.runaway_fraction / 2;
  const int Q = LBMC_QUARTERS, w = LBMC_PARTS_PER_QUARTER;
  const size_t stride = (size_t)Q + 1; /* per replica: Q quarter means, last arrivals */
  lbmc_growth g, g2;
  double *a;
  LBMC_CALL(lbmc_point_work(&p->work, &p->work_len, stride * (size_t)R));
  a = p->work;
  for (long i = 0; i < R; i++) {
    const lbmc_point_row *r;
    LBMC_CALL(lbmc_point_row_at(p, i, &r));
    for (int q = 0; q < Q; q++) {
      double len = lbmc_parts(r, w * q, w * (q + 1), LBMC_PART_LEN);
      a[stride * i + q] = len > 0 ? lbmc_parts(r, w * q, w * (q + 1), LBMC_PART_AREA) / len : 0;
    }
    a[stride * i + Q] = lbmc_parts(r, w * (Q - 1), LBMC_PARTS, LBMC_PART_ARRIVALS);
  }
  lbmc_growth_test(a, a + Q, (size_t)R, stride, LBMC_DRIFT_ALPHA, LBMC_DRIFT_DECEL, g_min, &g);
  p->v.growth = g.growth;
  p->v.growth_lower = g.growth_lower;
  p->v.decel_lower = g.decel_lower;
  if (g.proven && !lbmc_point_surely_stable(p)) {
    p->v.evidence |= LBMC_EV_DRIFT;
    lbmc_point_reason(
        &p->v,
        "the customers in the system keep growing without slowing down: %.3g of the "
        "arrivals accumulate in the last quarter of the run (at least %.3g, drift test "
        "at level %g)",
        g.growth, g.growth_lower, LBMC_DRIFT_ALPHA);
    return LBMC_SUCCESS;
  }
  if (p->v.evidence & LBMC_EV_OVERLOAD) return LBMC_SUCCESS; /* proven by flow balance */
  /* growth seen: significant at the stationarity level and, as the drift test asks,
   * above g_min (a smaller one is a fluctuation of a bounded system that the halves
   * test judges) */
  lbmc_growth_test(a, a + Q, (size_t)R, stride, LBMC_STATIONARITY_ALPHA, LBMC_DRIFT_DECEL, 0, &g2);
  if (g2.growth_lower > 0 && g.growth > g_min) {
    /* a model that cannot be unstable is filling up: a longer run, not more replicas */
    const long more = lbmc_point_surely_stable(p) ? 0 : lbmc_point_drift_replicas(&g, R, g_min);
    p->v.evidence |= LBMC_EV_GROWING;
    p->v.suggested_replicas = more;
    if (more > 0)
      lbmc_point_reason(&p->v,
                        "the customers in the system were still growing at the end of the run "
                        "(%.3g of the arrivals in the last quarter, not proven to be unbounded "
                        "with %ld replicas: about %ld replicas would decide it)",
                        g.growth, R, more);
    else if (lbmc_point_surely_stable(p))
      lbmc_point_reason(&p->v,
                        "the customers in the system were still growing at the end of the run "
                        "(%.3g of the arrivals in the last quarter; the model settles, its "
                        "customers bounded or its load below its capacity: a longer run)",
                        g.growth);
    else
      lbmc_point_reason(&p->v,
                        "the customers in the system were still growing at the end of the run "
                        "(%.3g of the arrivals in the last quarter, slowing down: a longer run "
                        "tells whether it settles)",
                        g.growth);
  }
  return LBMC_SUCCESS;
}

/* *yes = 1 if rho >= 1 with unlimited buffers, or a replica went over the customer cap. */
static lbmc_err lbmc_point_surely(lbmc_point *p, long R, int *yes)
{
  *yes = 1;
  if (lbmc_model_surely_unstable(p->m)) {
    p->v.evidence |= LBMC_EV_RHO;
    lbmc_point_reason(&p->v, "rho = %.6g >= 1 with unlimited buffers: the servers cannot keep up",
                      lbmc_model_rho(p->m));
    return LBMC_SUCCESS;
  }
  for (long i = 0; i < R; i++) {
    const lbmc_point_row *r;
    LBMC_CALL(lbmc_point_row_at(p, i, &r));
    if (r->unstable) {
      p->v.evidence |= LBMC_EV_CAP;
      lbmc_point_reason(&p->v,
                        "replica %ld: the customers in the system exceeded the cap of %lld "
                        "(max_customers) at time %.6g",
                        i, (long long)r->cap, r->t_stop);
      return LBMC_SUCCESS;
    }
  }
  *yes = 0;
  return LBMC_SUCCESS;
}

/* No arrivals, or no departures, over the units. */
static lbmc_err lbmc_point_empty(lbmc_point *p, const lbmc_units *u)
{
  double arrivals = 0, departures = 0;
  for (size_t k = 0; k < u->U; k++) {
    const double *row = NULL;
    LBMC_CALL(lbmc_units_row(u, k, &row));
    arrivals += row[LBMC_TK_ARRIVALS];
    departures += row[LBMC_TK_DEPARTURES];
  }
  if (arrivals > 0 && departures > 0) return LBMC_SUCCESS;
  p->v.evidence |= LBMC_EV_EMPTY;
  lbmc_point_reason(&p->v, arrivals > 0 ? "no customer departed in the measured period"
                                        : "no customer arrived in the measured period");
  return LBMC_SUCCESS;
}

/* The `time` setting that the relaxation and transient rules ask for. */
static double lbmc_point_relax_time(const lbmc_point *p)
{
  const lbmc_verdict *v = &p->v;
  double t = p->need_measured;
  if (isnan(t) && isnan(p->need_warmup)) return NAN;
  if (isnan(t)) t = v->time_used;
  if (!p->o.warmup_auto) return t; /* the time setting is the measured period */
  /* warmup auto: the run holds the warm-up too, and MSER's cap is half of it */
  {
    const double w = isnan(p->need_warmup) ? v->warmup_used : fmax(v->warmup_used, p->need_warmup);
    return fmax(t + w, 2 * w);
  }
}

/* Status, the warm-up's evidence and the suggested time. */
static void lbmc_point_conclude(lbmc_point *p)
{
  lbmc_verdict *v = &p->v;
  const unsigned relax = LBMC_EV_RELAX | LBMC_EV_TRANSIENT;
  const unsigned longer = LBMC_EV_NEAR_CAP | LBMC_EV_HALVES | LBMC_EV_SHORT | LBMC_EV_CORRELATED |
                          LBMC_EV_EMPTY | LBMC_EV_GROWING | relax | LBMC_EV_HEAVY_TAIL;
  if (v->evidence & (LBMC_EV_RHO | LBMC_EV_CAP | LBMC_EV_DRIFT | LBMC_EV_OVERLOAD)) {
    v->status = LBMC_STATUS_UNSTABLE;
    v->suggested_replicas = 0;
    for (size_t k = 0; k < LBMC_ESTIMATE_ARRAYS * p->total; k++) p->est.estimate[k] = NAN;
    memset(p->est.flags, 0, sizeof *p->est.flags * p->total);
    lbmc_point_pairs_clear(p);
    return;
  }
  if (!(v->evidence & longer)) return;
  v->status = LBMC_STATUS_NOT_STATIONARY;
  if (v->evidence & LBMC_EV_HEAVY_TAIL) return; /* no run length helps */
  if (p->o.transient[2] > 0) { /* its length is T1 - T0 by design: no --time helps */
    lbmc_point_reason(v, "a transient run: its steady-state rows average each replica over "
                         "T0..T1 from its start; for the steady state run without transient");
    return;
  }
  v->suggested_time =
      (v->evidence & (longer & ~relax & ~LBMC_EV_HEAVY_TAIL)) ? LBMC_SUGGEST_FACTOR * v->time : NAN;
  if (v->evidence & relax) {
    const double t = lbmc_point_relax_time(p);
    if (isfinite(t)) v->suggested_time = isnan(v->suggested_time) ? t : fmax(v->suggested_time, t);
  }
  if (isnan(v->suggested_time)) v->suggested_time = LBMC_SUGGEST_FACTOR * v->time;
  if (v->evidence & LBMC_EV_EMPTY)
    v->suggested_time =
        fmax(v->suggested_time, LBMC_SUGGEST_ARRIVALS / (lbmc_model_lambda(p->m) * (double)p->n));
}

/* Reset the verdict for a reduction of R replicas. */
static void lbmc_point_verdict_start(lbmc_point *p, long R)
{
  lbmc_verdict *v = &p->v;
  memset(v, 0, sizeof *v);
  v->status = LBMC_STATUS_OK;
  v->replicas = R;
  v->doubling = p->doubling;
  v->time =
      p->o.transient[2] > 0 ? p->o.transient[1] - p->o.transient[0] : ldexp(p->o.time, p->doubling);
  v->warmup_used = p->o.transient[2] > 0 ? p->o.transient[0] /* observed from T0 */
                   : p->o.warmup_auto    ? (double)p->d * p->seg_len
                                         : p->o.warmup;
  v->time_used = p->o.transient[2] > 0 ? p->o.transient[1] - p->o.transient[0] /* S - 1 ticks */
                                       : (double)(p->S - p->d) * p->seg_len;
  v->suggested_time = v->halves_p = v->short_p = NAN;
  v->growth = v->growth_lower = v->decel_lower = NAN;
  v->relaxation_time = v->relaxation_upper = v->transient_bound = v->overload = NAN;
  v->warmup_near_cap = p->near_cap;
  p->batch_cap = 0;
  p->batch_tau = NAN;
  p->need_measured = p->need_warmup = NAN;
  p->flow_factor = 0;
  p->flow_pool = -1;
  for (size_t k = 0; k < LBMC_ESTIMATE_ARRAYS * p->total; k++) p->est.estimate[k] = NAN;
  memset(p->est.flags, 0, sizeof *p->est.flags * p->total);
  for (size_t k = 0; k < 2 * p->total; k++) p->mf_widen[k] = NAN;
  lbmc_point_pairs_clear(p);
  if (p->near_cap && R > 0) {
    v->evidence |= LBMC_EV_NEAR_CAP;
    lbmc_point_reason(v,
                      "the warm-up rule (MSER) discarded %.3g of the %.3g run, near its cap of "
                      "half the run: the transient lasts about as long as the run",
                      v->warmup_used, v->time);
  }
}

/* Every metric entry but the quantiles and the pair statistics. */
static lbmc_err lbmc_point_entries(lbmc_point *p, lbmc_units *u, int batches)
{
  for (int i = 0; i < LBMC_M_PAIRS_FIRST; i++) {
    const size_t off = lbmc_metric_offset(i, p->J, p->K), len = lbmc_metric_size(i, p->J, p->K);
    if (lbmc_metric_get(i)->shape == LBMC_SHAPE_QUANTILE) continue;
    for (size_t e = 0; e < len; e++) {
      lbmc_interval iv;
      LBMC_CALL(lbmc_point_entry(p, u, batches, i, e, &iv));
      lbmc_point_put(&p->est, off + e, &iv);
    }
  }
  return LBMC_SUCCESS;
}

/* A pool above its capacity but not proven overloaded: the data that would decide. */
static void lbmc_point_flow_advice(lbmc_point *p, long R)
{
  lbmc_verdict *v = &p->v;
  const double f = p->flow_factor;
  if (!(f > 0) || (v->evidence & (LBMC_EV_DRIFT | LBMC_EV_OVERLOAD))) return;
  v->evidence |= LBMC_EV_GROWING;
  if (R >= 2) v->suggested_replicas = (long)ceil((double)R * f * 1.2);
  lbmc_point_reason(v,
                    "pool %d receives more customers than its capacity in the last half of the "
                    "run, not proven at level 1 - %g: about %.2g times the data would decide "
                    "(%ld replicas, or runs %.2g times longer)",
                    p->flow_pool + 1, LBMC_DRIFT_ALPHA, f * 1.2,
                    R >= 2 ? v->suggested_replicas : 1L, f * 1.2);
}

lbmc_err lbmc_point_reduce(lbmc_point *p, long R)
{
  lbmc_units u = {0};
  int surely;
  if (!lbmc_point_ready(p, R))
    return LBMC_ERROR(LBMC_ERR_ARG, "point: replicas 0 to %ld are not all in", R - 1);
  lbmc_point_verdict_start(p, R);
  LBMC_CALL(lbmc_point_surely(p, R, &surely));
  if (surely || R < 1) {
    lbmc_point_conclude(p);
    return LBMC_SUCCESS;
  }
  LBMC_CALL(lbmc_point_flow(p, R));
  if (R >= 2) LBMC_CALL(lbmc_point_drift(p, R));
  if (!(p->v.evidence & (LBMC_EV_DRIFT | LBMC_EV_OVERLOAD))) {
    lbmc_point_flow_advice(p, R);
    LBMC_CALL(lbmc_point_relax_check(p, R));
    if (R >= 2) {
      LBMC_CALL(lbmc_point_halves(p, R));
      LBMC_CALL(lbmc_point_short(p, R));
    }
    LBMC_CALL(lbmc_point_units(p, R, &u));
    if (R == 1) lbmc_point_halves_one(p, &u);
    LBMC_CALL(lbmc_point_empty(p, &u));
    LBMC_CALL(lbmc_point_entries(p, &u, R == 1));
    if (p->pe) LBMC_CALL(lbmc_point_pairs_reduce(p, &u, R == 1));
    if (p->qkind != LBMC_QK_NONE) LBMC_CALL(lbmc_point_quantiles(p, R));
    LBMC_CALL(lbmc_point_apply_moments(p));
  }
  lbmc_point_conclude(p);
  if (getenv("LBMC_DEBUG_MEMORY")) { /* bytes held per structure (docs/architecture.md) */
    lbmc_point_held mem;
    lbmc_point_held_of(p, &mem);
    fprintf(stderr,
            "point memory: %ld replicas (%ld stored, %zu bytes a row); in memory: window %zu, "
            "records %zu, sums %zu, quantiles %zu, parts %zu, work %zu, store %zu bytes; in "
            "the store's file %zu bytes\n",
            mem.replicas, mem.stored, p->row_bytes, mem.slots, mem.records, mem.sums, mem.quantiles,
            mem.parts, mem.work, mem.store, mem.file);
  }
  return LBMC_SUCCESS;
}
