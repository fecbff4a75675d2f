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
 * equal as whole segments allow; at most one per segment). The replicas' sums are read
 * where they are kept (R >= 2: u->row NULL, no work space); the batches, a few hundred at
 * most, are made here with one entry's terms and their merged batches (U each). */
static lbmc_err lbmc_point_units(lbmc_point *p, long R, lbmc_units *u)
{
  const size_t Sm = p->S - p->d;
  const size_t B = (size_t)p->o.batches < Sm ? (size_t)p->o.batches : Sm;
  lbmc_record rec;
  u->U = R >= 2 ? (size_t)R : (B ? B : 1);
  u->p = p;
  u->y = u->x = u->my = u->mx = u->row = NULL;
  if (R >= 2) return LBMC_SUCCESS;
  LBMC_CALL(lbmc_point_work(&p->work, &p->work_len, u->U * (p->W + 4)));
  u->row = p->work;
  u->y = u->row + u->U * p->W;
  u->x = u->y + u->U;
  u->my = u->x + u->U;
  u->mx = u->my + u->U;
  memset(u->row, 0, sizeof *u->row * u->U * p->W);
  if (R < 1) return LBMC_SUCCESS;
  LBMC_CALL(lbmc_point_full(p, 0, &rec));
  for (size_t b = 0; b < u->U; b++)
    lbmc_point_seg_add(p, &rec, p->d + Sm * b / u->U, p->d + Sm * (b + 1) / u->U,
                       u->row + b * p->W);
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

/* Tail entry e = (j, k - 1): a unit's time at level k (its sums' row), A_k - A_k+1 (A_k at
 * the last level), which lbmc_point_events adds over the units. */
static double lbmc_point_tail_time(const lbmc_point *p, size_t e, const double *row)
{
  const int j = (int)(e / (size_t)p->K), k = (int)(e % (size_t)p->K) + 1;
  return row[lbmc_tk_area_tail(p->J, p->K, j, k)] -
         (k < p->K ? row[lbmc_tk_area_tail(p->J, p->K, j, k + 1)] : 0);
}

/* Tail entry e's departures from its level given the units' time a there: speed(k) a. */
static double lbmc_point_tail_events(const lbmc_point *p, size_t e, double a)
{
  const int j = (int)(e / (size_t)p->K), k = (int)(e % (size_t)p->K) + 1;
  const double *rates;
  const int L = lbmc_model_rates(p->m, j, &rates);
  return rates[(k < L ? k : L) - 1] * a;
}

/* An entry's interval from its units' accumulator: the skewness-corrected ratio interval,
 * or a proportion's; `flags` added (the batch rule's), widened when the units are n >= 2
 * batches (n = 0: replicas), and the rare-event rule with its count `events` (NaN: none). */
static void lbmc_point_entry_finish(const lbmc_point *p, const lbmc_ratio_acc *a,
                                    lbmc_term_kind kind, unsigned flags, double events, size_t n,
                                    lbmc_interval *iv)
{
  if (kind == LBMC_TERM_RATIO)
    lbmc_ratio_acc_interval_skew(a, p->o.confidence, iv);
  else
    lbmc_ratio_acc_proportion(a, p->o.confidence, kind == LBMC_TERM_TRIALS, iv);
  iv->flags |= flags;
  if (n >= 2) lbmc_point_widen_batches(p, n, kind != LBMC_TERM_RATIO, iv);
  lbmc_few_events(events, iv);
}

/* The entries into the set of tail[j][k] behind it (the rule for rare events,
 * lbmc_few_events), into *events; NaN for the other metrics: the departures from level k
 * that its time at level k implies, speed(k) (A_k - A_k+1) over the units, which the
 * entries match within one per server (A_k alone at the last level: a count from above).
 * Errors: as lbmc_units_row. */
static lbmc_err lbmc_point_events(const lbmc_point *p, const lbmc_units *u, int i, size_t e,
                                  double *events)
{
  double a = 0;
  *events = NAN;
  if (i != LBMC_M_TAIL) return LBMC_SUCCESS;
  for (size_t b = 0; b < u->U; b++) {
    const double *row = NULL;
    LBMC_CALL(lbmc_units_row(u, b, &row));
    a += lbmc_point_tail_time(p, e, row);
  }
  *events = lbmc_point_tail_events(p, e, a);
  return LBMC_SUCCESS;
}

/* Interval of entry e of metric i over the batches of one replica (merged first by the
 * batch rule, u->y, u->x, u->my, u->mx their work). */
static lbmc_err lbmc_point_entry(lbmc_point *p, const lbmc_units *u, int i, size_t e,
                                 lbmc_interval *iv)
{
  lbmc_term_kind kind = LBMC_TERM_RATIO;
  lbmc_batch_rule rule;
  unsigned flags = 0;
  size_t n;
  double events;
  lbmc_ratio_acc a;
  for (size_t k = 0; k < u->U; k++) {
    const double *row = NULL;
    LBMC_CALL(lbmc_units_row(u, k, &row));
    kind = lbmc_metric_terms(i, e, row, p->J, p->K, p->N, p->n, &u->y[k], &u->x[k]);
  }
  lbmc_point_batch_rule(p, &rule);
  n = lbmc_batch_merge(u->y, u->x, u->U, 1, &rule, u->my, u->mx, &flags);
  lbmc_ratio_acc_arrays(&a, u->my, u->mx, n, 1);
  LBMC_CALL(lbmc_point_events(p, u, i, e, &events));
  lbmc_point_entry_finish(p, &a, kind, flags, events, n, iv);
  return LBMC_SUCCESS;
}

/* One metric entry of a reduction of R >= 2 replicas: its place and kind, its ratio of
 * sums over the replicas, and a tail entry's time at its level (lbmc_point_events). */
typedef struct {
  int i;
  size_t e;
  lbmc_term_kind kind;
  lbmc_ratio_acc acc;
  double tail;
} lbmc_point_acc;

/* Every entry (but the quantiles and the pair statistics) over the R >= 2 replicas at once:
 * two passes over their rows in replica order, each row's terms of every entry fed to that
 * entry's accumulator (then its tail's time in pass 1), then each entry finished: the same
 * arithmetic as an entry's arrays, a few doubles per entry whatever R. Errors: as
 * lbmc_point_row_at; LBMC_ERR_MEMORY. */
static lbmc_err lbmc_point_entries_replicas(lbmc_point *p, long R)
{
  size_t E = 0, k = 0;
  lbmc_point_acc *a;
  lbmc_err err = LBMC_SUCCESS;
  for (int i = 0; i < LBMC_M_PAIRS_FIRST; i++)
    if (lbmc_metric_get(i)->shape != LBMC_SHAPE_QUANTILE) E += lbmc_metric_size(i, p->J, p->K);
  a = calloc(E ? E : 1, sizeof *a);
  if (!a) return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory for %zu entries", E);
  for (int i = 0; i < LBMC_M_PAIRS_FIRST; i++) {
    if (lbmc_metric_get(i)->shape == LBMC_SHAPE_QUANTILE) continue;
    for (size_t e = 0; e < lbmc_metric_size(i, p->J, p->K); e++, k++) {
      a[k].i = i, a[k].e = e;
      lbmc_ratio_acc_init(&a[k].acc);
    }
  }
  for (int pass = 0; pass < 2 && !err; pass++) {
    for (long r = 0; r < R && !err; r++) {
      const lbmc_point_row *row;
      const double *sums;
      err = lbmc_point_row_at(p, r, &row);
      if (err) break;
      sums = lbmc_point_row_sums(row);
      for (k = 0; k < E; k++) {
        double y, x;
        a[k].kind = lbmc_metric_terms(a[k].i, a[k].e, sums, p->J, p->K, p->N, p->n, &y, &x);
        if (pass) {
          lbmc_ratio_acc_add2(&a[k].acc, y, x);
          continue;
        }
        lbmc_ratio_acc_add1(&a[k].acc, y, x);
        if (a[k].i == LBMC_M_TAIL) a[k].tail += lbmc_point_tail_time(p, a[k].e, sums);
      }
    }
    for (k = 0; k < E && !pass; k++) lbmc_ratio_acc_turn(&a[k].acc);
  }
  for (k = 0; k < E && !err; k++) {
    const double events =
        a[k].i == LBMC_M_TAIL ? lbmc_point_tail_events(p, a[k].e, a[k].tail) : NAN;
    lbmc_interval iv;
    lbmc_point_entry_finish(p, &a[k].acc, a[k].kind, 0, events, 0, &iv);
    lbmc_point_put(&p->est, lbmc_metric_offset(a[k].i, p->J, p->K) + a[k].e, &iv);
  }
  free(a);
  return err;
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

/* The pooled distributions and quantiles of a reduction: the sojourn (k = 0) and wait (1)
 * quantiles q[k][l] at every level l (flags qf[k][l]) of the units pooled (histograms:
 * p->hist[0..1]; mixtures: *pooled, NULL when no customers). */
typedef struct {
  size_t U;
  const size_t *groups;
  double q[2][LBMC_QUANTILES];
  unsigned qf[2][LBMC_QUANTILES];
  lbmc_mixture *pooled;
} lbmc_qunits;

/* One unit's data for Woodruff's intervals: X[k] its customers, Y[k][l] those at or below
 * the pooled quantile q[k][l]. */
typedef struct {
  double X[2], Y[2][LBMC_QUANTILES];
} lbmc_qunit;

/* The pass that pools the units (histograms merged, mixtures added), then the pooled
 * quantiles. */
static lbmc_err lbmc_point_qpool(lbmc_point *p, long R, lbmc_qunits *w)
{
  const int Q = LBMC_QUANTILES;
  lbmc_err err = LBMC_SUCCESS;
  if (p->qkind == LBMC_QK_MIX) {
    for (size_t u = 0; u < w->U && !err; u++) {
      lbmc_mixture *mx;
      err = lbmc_point_unit_mixture(p, R, w->groups, u, &mx);
      if (!err && mx && !w->pooled)
        w->pooled = mx, mx = NULL;
      else if (!err && mx)
        err = lbmc_mixture_add(w->pooled, mx);
      lbmc_mixture_destroy(&mx);
    }
    LBMC_CALL(err);
    for (int k = 0; k < 2; k++)
      for (int l = 0; l < Q; l++) {
        lbmc_point_mix c = {w->pooled, k ? LBMC_MIX_WAIT : LBMC_MIX_SOJOURN};
        w->qf[k][l] = lbmc_point_mix_q(&c, lbmc_quantile_level(l), &w->q[k][l]);
      }
    return LBMC_SUCCESS;
  }
  for (int k = 0; k < 2; k++) lbmc_dhist_init(&p->hist[k], p->tau);
  for (size_t u = 0; u < w->U; u++)
    for (int k = 0; k < 2; k++) {
      LBMC_CALL(lbmc_point_unit_hist(p, R, w->groups, u, k, &p->hist[2]));
      LBMC_CALL(lbmc_dhist_merge(&p->hist[k], &p->hist[2]));
    }
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < Q; l++)
      w->qf[k][l] = lbmc_dhist_quantile(&p->hist[k], lbmc_quantile_level(l), &w->q[k][l]);
  return LBMC_SUCCESS;
}

/* Unit u's data into *out: with histograms its customers at or below the pooled quantiles;
 * with mixtures (docs/model.md, "Quantiles") its customers x its mixture's distribution
 * function at q (sums of probabilities; a unit without customers 0/0, as every unit). */
static lbmc_err lbmc_point_qunit_of(lbmc_point *p, long R, const lbmc_qunits *w, size_t u,
                                    lbmc_qunit *out)
{
  const int Q = LBMC_QUANTILES;
  if (p->qkind == LBMC_QK_MIX) {
    lbmc_mixture *mx;
    const lbmc_err err = lbmc_point_unit_mixture(p, R, w->groups, u, &mx);
    if (err) {
      lbmc_mixture_destroy(&mx);
      return err;
    }
    out->X[0] = out->X[1] = mx ? (double)lbmc_mixture_total(mx) : 0;
    for (int k = 0; k < 2; k++)
      for (int l = 0; l < Q; l++)
        out->Y[k][l] = w->qf[k][l] || !mx || !(out->X[0] > 0)
                           ? 0
                           : out->X[0] * lbmc_mixture_cdf(mx, k ? LBMC_MIX_WAIT : LBMC_MIX_SOJOURN,
                                                          w->q[k][l]);
    lbmc_mixture_destroy(&mx);
    return LBMC_SUCCESS;
  }
  for (int k = 0; k < 2; k++) {
    LBMC_CALL(lbmc_point_unit_hist(p, R, w->groups, u, k, &p->hist[2]));
    out->X[k] = (double)lbmc_dhist_total(&p->hist[2]);
    for (int l = 0; l < Q; l++)
      out->Y[k][l] = w->qf[k][l] ? 0 : lbmc_dhist_count_le(&p->hist[2], w->q[k][l]);
  }
  return LBMC_SUCCESS;
}

/* The pooled distribution of quantiles k (0 sojourn, 1 wait) for Woodruff (c: a mixture's
 * context, filled here). */
static lbmc_pooled_dist lbmc_point_qdist(lbmc_point *p, const lbmc_qunits *w, int k,
                                         lbmc_point_mix *c)
{
  c->mx = w->pooled;
  c->kind = k ? LBMC_MIX_WAIT : LBMC_MIX_SOJOURN;
  if (p->qkind == LBMC_QK_MIX) /* p->hist is not made then: not read */
    return (lbmc_pooled_dist){lbmc_point_mix_q, c,
                              w->pooled ? (double)lbmc_mixture_total(w->pooled) : 0, 0};
  return (lbmc_pooled_dist){lbmc_point_dhist_q, &p->hist[k], (double)lbmc_dhist_total(&p->hist[k]),
                            1};
}

/* Woodruff's intervals of every quantile into the estimates: from the units' accumulators
 * acc[k][l] (replicas), or (acc NULL) from the arrays Y[(k Q + l) U + u], X[k U + u] of the
 * w->U units merged by `rule` (the batches of one replica; work: 3 U doubles). */
static void lbmc_point_quantiles_put(lbmc_point *p, const lbmc_qunits *w,
                                     const lbmc_ratio_acc (*acc)[LBMC_QUANTILES], double *Y,
                                     const double *X, const lbmc_batch_rule *rule, double *work)
{
  const int Q = LBMC_QUANTILES;
  const size_t U = w->U;
  for (int k = 0; k < 2; k++) {
    const size_t off =
        lbmc_metric_offset(k ? LBMC_M_WAIT_QUANTILES : LBMC_M_SOJOURN_QUANTILES, p->J, p->K);
    lbmc_point_mix c;
    const lbmc_pooled_dist d = lbmc_point_qdist(p, w, k, &c);
    for (int l = 0; l < Q; l++) {
      const double level = lbmc_quantile_level(l);
      lbmc_interval band, iv;
      if (acc) {
        lbmc_ratio_acc_proportion(&acc[k][l], p->o.confidence, d.trials, &band);
        lbmc_woodruff_from_band(&d, level, w->q[k][l], w->qf[k][l], &band, 0, p->o.confidence, &iv);
      } else {
        double *Yl = Y + (size_t)(k * Q + l) * U, *Xl = work; /* the rule overwrites X */
        memcpy(Xl, X + k * U, sizeof *X * U);
        lbmc_woodruff(&d, level, w->q[k][l], w->qf[k][l], Yl, Xl, U, p->o.confidence, rule,
                      work + U, &iv);
      }
      lbmc_point_put(&p->est, off + (size_t)l, &iv);
    }
  }
}

/* The quantiles of one replica from its quantile groups, merged by the batch rule: the
 * groups' data in arrays (a few hundred groups at most). */
static lbmc_err lbmc_point_quantiles_one(lbmc_point *p, lbmc_qunits *w)
{
  const int Q = LBMC_QUANTILES;
  const size_t U = w->U;
  lbmc_batch_rule rule;
  double *Y, *X, *work;
  lbmc_point_batch_rule(p, &rule);
  /* Y, X, and X merged with the rule's work */
  LBMC_CALL(lbmc_point_work(&p->work, &p->work_len, U * (2 * Q + 5)));
  Y = p->work, X = Y + 2 * Q * U, work = X + 2 * U;
  for (size_t u = 0; u < U; u++) {
    lbmc_qunit d;
    LBMC_CALL(lbmc_point_qunit_of(p, 1, w, u, &d));
    for (int k = 0; k < 2; k++) {
      X[k * U + u] = d.X[k];
      for (int l = 0; l < Q; l++) Y[(size_t)(k * Q + l) * U + u] = d.Y[k][l];
    }
  }
  lbmc_point_quantiles_put(p, w, NULL, Y, X, &rule, work);
  return LBMC_SUCCESS;
}

/* The quantiles over R >= 2 replicas: each level's band for F(q) from an accumulator fed
 * with the replicas' data in two passes over their quantile data (after the pooling pass:
 * three in all), 2 x LBMC_QUANTILES accumulators whatever R. */
static lbmc_err lbmc_point_quantiles_replicas(lbmc_point *p, long R, lbmc_qunits *w)
{
  const int Q = LBMC_QUANTILES;
  lbmc_ratio_acc acc[2][LBMC_QUANTILES];
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < Q; l++) lbmc_ratio_acc_init(&acc[k][l]);
  for (int pass = 0; pass < 2; pass++) {
    for (size_t u = 0; u < w->U; u++) {
      lbmc_qunit d;
      LBMC_CALL(lbmc_point_qunit_of(p, R, w, u, &d));
      for (int k = 0; k < 2; k++)
        for (int l = 0; l < Q; l++)
          (pass ? lbmc_ratio_acc_add2 : lbmc_ratio_acc_add1)(&acc[k][l], d.Y[k][l], d.X[k]);
    }
    for (int k = 0; k < 2 && !pass; k++)
      for (int l = 0; l < Q; l++) lbmc_ratio_acc_turn(&acc[k][l]);
  }
  lbmc_point_quantiles_put(p, w, acc, NULL, NULL, NULL, NULL);
  return LBMC_SUCCESS;
}

/* Sojourn and wait quantiles from the pooled histograms or mixtures, with Woodruff's
 * intervals over the units (replicas, or the quantile groups of one replica merged by
 * the batch rule). */
static lbmc_err lbmc_point_quantiles(lbmc_point *p, long R)
{
  size_t groups[LBMC_MAX_QUANTILE_GROUPS]; /* a one-replica record has at most these */
  lbmc_qunits w = {0};
  lbmc_err err;
  w.groups = groups;
  if (R < 2) {
    lbmc_record rec;
    LBMC_CALL(lbmc_point_full(p, 0, &rec));
    for (size_t g = 0; g < p->G && w.U < sizeof groups / sizeof *groups; g++)
      if ((size_t)rec.group_start[g] >= p->d) groups[w.U++] = g;
  } else {
    w.U = (size_t)R;
  }
  err = lbmc_point_qpool(p, R, &w);
  if (!err) err = R < 2 ? lbmc_point_quantiles_one(p, &w) : lbmc_point_quantiles_replicas(p, R, &w);
  lbmc_mixture_destroy(&w.pooled);
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
  lbmc_paired_acc acc;
  lbmc_interval iv;
  lbmc_paired_acc_init(&acc, 0);
  for (int pass = 0; pass < 2; pass++) { /* two passes over the rows */
    for (long i = 0; i < R; i++) {
      const lbmc_point_row *r;
      double a[4];
      LBMC_CALL(lbmc_point_row_at(p, i, &r));
      a[0] = lbmc_parts(r, 0, LBMC_PARTS / 2, LBMC_PART_AREA);
      a[1] = lbmc_parts(r, 0, LBMC_PARTS / 2, LBMC_PART_LEN) * n;
      a[2] = lbmc_parts(r, LBMC_PARTS / 2, LBMC_PARTS, LBMC_PART_AREA);
      a[3] = lbmc_parts(r, LBMC_PARTS / 2, LBMC_PARTS, LBMC_PART_LEN) * n;
      (pass ? lbmc_paired_acc_add2 : lbmc_paired_acc_add1)(&acc, a[0], a[1], a[2], a[3]);
    }
    if (!pass) lbmc_paired_acc_turn(&acc);
  }
  lbmc_paired_acc_interval(&acc, p->o.confidence, &iv);
  p->v.halves_p = lbmc_interval_p_value(&iv, 0);
  if (p->v.halves_p < LBMC_STATIONARITY_ALPHA) {
    /* the sums of each half, in replica order: pass 1's */
    const double y0 = acc.a.sy, x0 = acc.a.sx, y1 = acc.b.sy, x1 = acc.b.sx;
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
  if (R < 2 || R >= LBMC_SHORT_MAX_REPLICAS || p->mf_short != LBMC_MF_RULE_OFF)
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
  lbmc_growth g, g2;
  lbmc_growth_acc acc; /* one accumulation, two tests */
  lbmc_growth_acc_init(&acc, (size_t)R, LBMC_DRIFT_DECEL);
  for (int pass = 0; pass < 2; pass++) { /* two passes over the rows */
    for (long i = 0; i < R; i++) {
      const lbmc_point_row *r;
      double a[LBMC_QUARTERS], arrivals;
      LBMC_CALL(lbmc_point_row_at(p, i, &r));
      for (int q = 0; q < Q; q++) {
        double len = lbmc_parts(r, w * q, w * (q + 1), LBMC_PART_LEN);
        a[q] = len > 0 ? lbmc_parts(r, w * q, w * (q + 1), LBMC_PART_AREA) / len : 0;
      }
      arrivals = lbmc_parts(r, w * (Q - 1), LBMC_PARTS, LBMC_PART_ARRIVALS);
      (pass ? lbmc_growth_acc_add2 : lbmc_growth_acc_add1)(&acc, a, arrivals);
    }
    if (!pass) lbmc_growth_acc_turn(&acc);
  }
  lbmc_growth_acc_test(&acc, LBMC_DRIFT_ALPHA, g_min, &g);
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
  lbmc_growth_acc_test(&acc, LBMC_STATIONARITY_ALPHA, 0, &g2);
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
static lbmc_err lbmc_point_entries(lbmc_point *p, lbmc_units *u, long R)
{
  if (R >= 2) return lbmc_point_entries_replicas(p, R);
  for (int i = 0; i < LBMC_M_PAIRS_FIRST; i++) {
    const size_t off = lbmc_metric_offset(i, p->J, p->K), len = lbmc_metric_size(i, p->J, p->K);
    if (lbmc_metric_get(i)->shape == LBMC_SHAPE_QUANTILE) continue;
    for (size_t e = 0; e < len; e++) {
      lbmc_interval iv;
      LBMC_CALL(lbmc_point_entry(p, u, i, e, &iv));
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
    LBMC_CALL(lbmc_point_entries(p, &u, R));
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
