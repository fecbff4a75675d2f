/* The checks of a point's verdict that rest on the system's time scales and on its
 * model rather than on its halves (docs/model.md, "Verdicts"):
 *   - the relaxation time of the customers in the system (integrated autocorrelation
 *     time) against the measured period, and the transient the start leaves after the
 *     warm-up, against the standard error;
 *   - flow balance: a pool that receives more customers than its servers can serve;
 *   - moments: metrics that are infinite, and estimators whose variance is, decided from
 *     the service laws and the model. */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ticks.h"
#include "../engine/engine.h"
#include "../engine/engine_type.h"
#include "../engine/mf_expansion.h"
#include "lbmc/metrics.h"
#include "lbmc/service.h"
#include "lbmc/sim.h"
#include "point_impl.h"

/* ---- relaxation time ---- */

void lbmc_point_record_moments(const lbmc_point *p, const lbmc_record *rec, size_t from, size_t to,
                               lbmc_moments *out)
{
  memset(out, 0, sizeof *out);
  for (size_t s = from; s < to; s++) {
    const double *seg = rec->seg + s * p->W;
    const lbmc_moments m = {LBMC_TICKS_PER_SEGMENT, seg[LBMC_TK_N_END] / LBMC_TICKS_PER_SEGMENT,
                            seg[LBMC_TK_N_M2], seg[LBMC_TK_N_M3]};
    if (seg[LBMC_TK_LEN] > 0) lbmc_moments_add(out, &m);
  }
}

/* Every pool's service law is exponential (no law given is exponential). */
static int lbmc_point_all_exponential(const lbmc_point *p)
{
  for (int j = 0; j < p->J; j++) {
    const lbmc_service *s = lbmc_model_service(p->m, j);
    if (s && !lbmc_service_is_exponential(s)) return 0;
  }
  return 1;
}

/* What lbmc_relax_estimate_units reads the replicas' summaries through: the point, and the
 * first error of a read (the units then read as empty, and the error is returned). */
typedef struct {
  const lbmc_point *p;
  lbmc_err err;
  lbmc_relax_unit none;
} lbmc_point_relax_get;

/* Replica u's summary of its fine parts (lbmc_relax_estimate_units), from the store. */
static const lbmc_relax_unit *lbmc_point_relax_unit(const void *ctx, size_t u)
{
  lbmc_point_relax_get *g = (lbmc_point_relax_get *)ctx;
  const lbmc_point_row *r;
  if (!g->err) g->err = lbmc_point_row_at(g->p, (long)u, &r);
  return g->err ? &g->none : &r->relax;
}

/* Summary u of an array of them (lbmc_relax_estimate_units). */
static const lbmc_relax_unit *lbmc_point_relax_held(const void *ctx, size_t u)
{
  return (const lbmc_relax_unit *)ctx + u;
}

/* What the relaxation readings add over records: the customers' moments at the tick ends,
 * their within-replica second moments, the mean start, and the parts' sums. */
typedef struct {
  lbmc_moments mom;
  double m2_within, n0, sy, sx;
} lbmc_point_relax_sums;

/* The readings of a point's relaxation that every source gives the same way: the mean
 * start, the mean customers per server from the parts' sums, its standard error from the
 * replicas' (or batches') interval iv, and the customers' skewness from their moments. */
static void lbmc_point_relax_common(const lbmc_point_relax_sums *s, const lbmc_interval *iv,
                                    lbmc_point_relaxation *out)
{
  const lbmc_moments *mom = &s->mom;
  out->n0 = s->n0;
  out->nbar = s->sx > 0 ? s->sy / s->sx : NAN;
  out->se = iv->std_err;
  out->skew = mom->m2 > 0 ? sqrt(mom->n) * mom->m3 / pow(mom->m2, 1.5) : 0;
}

/* Record i of R: its m parts of the measured period into area[0 .. m - 1], len[0 .. m - 1],
 * and its share of s (the parts' sums added in part order). Errors: as lbmc_point_full. */
static lbmc_err lbmc_point_relax_record(lbmc_point *p, long i, long R, size_t m, double *area,
                                        double *len, lbmc_point_relax_sums *s)
{
  lbmc_record rec;
  lbmc_moments rm;
  LBMC_CALL(lbmc_point_full(p, i, &rec));
  for (size_t k = 0; k < m; k++) {
    const double *seg = rec.seg + (p->d + k) * p->W;
    area[k] = seg[LBMC_TK_AREA_N], len[k] = seg[LBMC_TK_LEN];
    s->sy += area[k], s->sx += len[k];
  }
  lbmc_point_record_moments(p, &rec, p->d, p->S, &rm);
  lbmc_moments_add(&s->mom, &rm);
  s->m2_within += rm.m2;
  s->n0 += rec.h.n_start / (double)R;
  return LBMC_SUCCESS;
}

/* lbmc_point_relax_measure of the first round's records of R >= 2 replicas, m <=
 * LBMC_RELAX_UNIT_PARTS parts each (one per segment of the measured period), without
 * holding R x m parts: one pass over the records, each summarised (lbmc_relax_unit_of, 88
 * bytes) from its parts, the parts' sums sy, sx and the replicas' ratio interval added in
 * the order the arrays gave them, so the same bits (lbmc_relax_estimate_units). */
static lbmc_err lbmc_point_relax_records(lbmc_point *p, long R, size_t m,
                                         lbmc_point_relaxation *out)
{
  const size_t Sm = p->S - p->d;
  double *area, *len;
  lbmc_point_relax_sums sums = {{0, 0, 0, 0}, 0, 0, 0, 0};
  lbmc_ratio_acc a;
  lbmc_interval iv;
  lbmc_err err = LBMC_SUCCESS;
  lbmc_relax_unit *units = malloc(sizeof *units * (size_t)R);
  if (!units)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory for %ld replicas' summaries", R);
  err = lbmc_point_work(&p->work, &p->work_len, 2 * m);
  area = p->work, len = area + m;
  lbmc_ratio_acc_init(&a);
  for (long i = 0; i < R && !err; i++) {
    err = lbmc_point_relax_record(p, i, R, m, area, len, &sums);
    if (err) break;
    lbmc_relax_unit_of(area, len, m, &units[i]);
    lbmc_ratio_acc_add1(&a, units[i].y, units[i].x);
  }
  if (!err) {
    const lbmc_moments *mom = &sums.mom;
    lbmc_ratio_acc_turn(&a);
    for (long i = 0; i < R; i++) lbmc_ratio_acc_add2(&a, units[i].y, units[i].x);
    lbmc_ratio_acc_interval(&a, p->o.confidence, &iv);
    lbmc_point_relax_common(&sums, &iv, out);
    err = lbmc_relax_estimate_units(
        lbmc_point_relax_held, units, (size_t)R, m, (double)Sm * p->seg_len / (double)m,
        mom->n > 0 ? sums.m2_within / mom->n : NAN, mom->n > 0 ? mom->m2 / mom->n : NAN,
        LBMC_RELAX_WINDOW, LBMC_RELAX_LEVEL, &out->rx);
  }
  free(units);
  return err;
}

lbmc_err lbmc_point_relax_measure(lbmc_point *p, long R, int from_records,
                                  lbmc_point_relaxation *out)
{
  const int seg_parts = from_records || R == 1;
  const size_t Sm = p->S - p->d, m = seg_parts ? Sm : p->fine;
  /* the replicas whose parts are held here: one, or those of more than LBMC_RELAX_UNIT_PARTS */
  const size_t rows = seg_parts ? (size_t)R : 0;
  double *area = NULL, *len = NULL, *wy = NULL, *wx = NULL, var;
  lbmc_point_relax_sums sums = {{0, 0, 0, 0}, 0, 0, 0, 0};
  lbmc_interval iv;
  memset(out, 0, sizeof *out);
  out->nbar = out->se = out->n0 = NAN;
  out->rx.tau = out->rx.tau_upper = NAN;
  if (R < 1 || m < 1) return LBMC_SUCCESS;
  if (!seg_parts && p->appended < R)
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "point: replicas 0 to %ld are not all folded", R - 1);
  if (seg_parts && R >= 2 && m <= LBMC_RELAX_UNIT_PARTS)
    return lbmc_point_relax_records(p, R, m, out);
  if (seg_parts) { /* the first round's records (or the one replica): their parts */
    LBMC_CALL(lbmc_point_work(&p->work, &p->work_len,
                              2 * rows * m + 4 * (m > (size_t)R ? m : (size_t)R)));
    area = p->work;
    len = area + rows * m;
    wy = len + rows * m;
    wx = wy + (m > (size_t)R ? m : (size_t)R);
  }
  for (long i = 0; i < R; i++) {
    const lbmc_point_row *r;
    if (seg_parts) {
      LBMC_CALL(
          lbmc_point_relax_record(p, i, R, m, area + (size_t)i * m, len + (size_t)i * m, &sums));
    } else {
      LBMC_CALL(lbmc_point_row_at(p, i, &r));
      lbmc_moments_add(&sums.mom, &r->mom);
      sums.m2_within += r->mom.m2;
      sums.n0 += r->n_start / (double)R;
    }
  }
  /* the replicas' (or the one replica's merged batches') means of customers in the system */
  if (R >= 2 && !seg_parts) { /* the rows' sums, two passes */
    lbmc_ratio_acc a;
    lbmc_ratio_acc_init(&a);
    for (int pass = 0; pass < 2; pass++) {
      for (long i = 0; i < R; i++) {
        const lbmc_point_row *r;
        LBMC_CALL(lbmc_point_row_at(p, i, &r));
        (pass ? lbmc_ratio_acc_add2 : lbmc_ratio_acc_add1)(&a, r->relax.y, r->relax.x);
      }
      if (!pass) lbmc_ratio_acc_turn(&a);
    }
    lbmc_ratio_acc_interval(&a, p->o.confidence, &iv);
  } else if (R >= 2) {
    for (long i = 0; i < R; i++) {
      wy[i] = wx[i] = 0;
      for (size_t s = 0; s < m; s++)
        wy[i] += area[(size_t)i * m + s], wx[i] += len[(size_t)i * m + s];
    }
    lbmc_ratio_interval(wy, wx, (size_t)R, 1, p->o.confidence, &iv);
  } else {
    lbmc_batch_rule rule;
    unsigned flags = 0;
    size_t k;
    lbmc_batch_rule_default(&rule);
    k = lbmc_batch_merge(area, len, m, 1, &rule, wy, wx, &flags);
    lbmc_ratio_interval(wy, wx, k, 1, p->o.confidence, &iv);
  }
  if (!seg_parts) { /* the parts' sums the records gave (lbmc_point_relax_record) */
    const lbmc_point_row *r;
    LBMC_CALL(lbmc_point_row_at(p, R - 1, &r));
    sums.sy = r->fine_sy, sums.sx = r->fine_sx; /* the same sums, in order */
  }
  lbmc_point_relax_common(&sums, &iv, out);
  var = sums.mom.n > 0 ? sums.mom.m2 / sums.mom.n : NAN;
  if (seg_parts)
    lbmc_relax_estimate(area, len, (size_t)R, m, (double)Sm * p->seg_len / (double)m,
                        sums.mom.n > 0 ? sums.m2_within / sums.mom.n : NAN, var, LBMC_RELAX_WINDOW,
                        LBMC_RELAX_LEVEL, &out->rx);
  else {
    lbmc_point_relax_get g = {p, LBMC_SUCCESS, {{0}, {0}, 0, 0, 0}};
    const lbmc_err err = lbmc_relax_estimate_units(
        lbmc_point_relax_unit, &g, (size_t)R, m, (double)Sm * p->seg_len / (double)m,
        sums.mom.n > 0 ? sums.m2_within / sums.mom.n : NAN, var, LBMC_RELAX_WINDOW,
        LBMC_RELAX_LEVEL, &out->rx);
    LBMC_CALL(g.err);
    LBMC_CALL(err);
  }
  return LBMC_SUCCESS;
}

/* The integrated autocorrelation time of the customers in the system in the heavy-traffic
 * limit of the pooled system: reflected Brownian motion with drift -(C - Lambda) and
 * variance Lambda (1 + c_s^2) (Poisson arrivals), in customers, tau = Lambda (1 + c_s^2) /
 * (C - Lambda)^2 = rho (1 + c_s^2) / (C (1 - rho)^2), C the servers' total capacity (Harrison,
 * Brownian Motion and Stochastic Flow Systems, 1985, 1.9; Abate and Whitt 1987). M/M/1:
 * 2 rho / (1 - rho)^2 against the exact (1 + rho) / (1 - rho)^2 (lbmc_point_tau_known), below
 * it at every rho < 1 and equal in the limit; servers that do not pool (random routing
 * over n servers) relax n times more slowly. A floor that the data cannot talk the rules
 * below: a run whose queue made no large excursion reads a short tau, and its mean is low
 * too (one replica of M/M/1 at rho 0.9, 1000 batches of 100: of 200 runs, the 14 accepted
 * on their own tau covered 21%). 0 where the limit does not apply: finite buffers,
 * speeds that depend on the queue, rho >= 1, or a service law of infinite variance. With
 * exponential service everywhere the floor is M/M/1 of speed C exactly, (1 + rho) / (C (1 -
 * rho)^2) (lbmc_point_tau_known's value, Abate and Whitt 1988): the fully pooled system.
 * Not a strict bound: JSQ on 2 servers (exact CTMC) relaxes in 3.28 against 3.0 at rho 0.5,
 * 94.8 against 95.0 at 0.9, 389.6 / 389.7 at 0.95, 9949.5 / 9950 at 0.99: within 0.3% in
 * heavy traffic, where the rules need it. */
static double lbmc_point_tau_floor(const lbmc_point *p)
{
  const double rho = lbmc_model_rho(p->m);
  double cap = 0, scv = 0;
  for (int j = 0; j < p->J; j++) {
    const double *rates;
    const lbmc_service *s = lbmc_model_service(p->m, j);
    if (lbmc_model_buffer(p->m, j) != LBMC_BUFFER_INF || lbmc_model_rates(p->m, j, &rates) != 1)
      return 0;
    cap += (double)p->N[j] * rates[0];
    scv = fmax(scv, s ? s->scv : 1.0);
  }
  if (!(rho < 1) || !(cap > 0) || !isfinite(scv)) return 0;
  /* every pool exponential: M/M/1 of speed C, the fully pooled system, exactly */
  if (lbmc_point_all_exponential(p)) return (1 + rho) / (cap * (1 - rho) * (1 - rho));
  return rho * (1 + scv) / (cap * (1 - rho) * (1 - rho));
}

/* The relaxation time and skewness of the customers in the system where they are known
 * exactly: n independent M/M/1 queues (one pool of exponential servers of speed c, unlimited
 * buffers, one server or random routing). Each queue's length has integrated autocorrelation
 * time (1 + rho) / (c (1 - rho)^2) (its asymptotic variance 2 rho (1 + rho) / (1 - rho)^4
 * over its variance rho / (1 - rho)^2, times 2: P. J. Burke's and D. G. Kendall's spectral
 * results as summed by J. Abate and W. Whitt, "The correlation functions of RBM and M/M/1",
 * Stochastic Models 4 (1988) 315-359, and W. Whitt, "Planning queueing simulations",
 * Management Science 35 (1989) 1341-1366, eq. (13); checked here against the Poisson
 * equation of the birth-death generator: 190 at rho 0.9, 780 at 0.95), the same for their
 * sum; the sum of n geometric laws has skewness (1 + rho) / sqrt(n rho). The rules gate on
 * these instead of the run's own readings: the readings are lowest in the runs whose queue
 * made no long excursion, whose means are low too, so a gate on them keeps exactly the runs
 * that miss (M/M/1 at rho 0.9, 10 replicas of 88 relaxation times: of 200 runs the 88 it
 * kept covered 90.9%, all 200 95.5%). Returns 0 (tau, skew untouched) for any other model. */
static int lbmc_point_tau_known(const lbmc_point *p, double *tau, double *skew)
{
  const double rho = lbmc_model_rho(p->m);
  const double *rates;
  if (p->J != 1 || lbmc_model_buffer(p->m, 0) != LBMC_BUFFER_INF ||
      lbmc_model_rates(p->m, 0, &rates) != 1 || !(rates[0] > 0) || !(rho > 0 && rho < 1) ||
      !lbmc_point_all_exponential(p) ||
      (p->N[0] != 1 && strcmp(lbmc_model_policy_name(p->m), "random") != 0))
    return 0;
  *tau = (1 + rho) / (rates[0] * (1 - rho) * (1 - rho));
  *skew = (1 + rho) / sqrt((double)p->N[0] * rho);
  return 1;
}

double lbmc_point_tau_model(const lbmc_point *p)
{
  double tau, skew;
  return lbmc_point_tau_known(p, &tau, &skew) ? tau : lbmc_point_tau_floor(p);
}

double lbmc_point_tau_start(const lbmc_point *p, const lbmc_point_relaxation *m, int *settled)
{
  double tau, skew;
  int dummy;
  settled = settled ? settled : &dummy;
  *settled = 1;
  if (lbmc_point_tau_known(p, &tau, &skew)) return tau;
  *settled = m->rx.resolved;
  tau = lbmc_point_tau_floor(p);
  if (!(tau > 0)) return m->rx.tau; /* no floor: the run's own reading */
  /* the floor, unless the reading proves the system slower (as the relaxation gate); an
   * unresolved reading is a lower bound: at least the floor */
  return m->rx.resolved && !(m->rx.tau_lower > tau) ? tau : fmax(m->rx.tau, tau);
}

double lbmc_point_warmup_needed(const lbmc_point *p, const lbmc_point_relaxation *m,
                                double measured, double bias_se)
{
  return lbmc_transient_warmup(m->n0 - m->nbar, lbmc_point_tau_start(p, m, NULL), measured,
                               bias_se * m->se);
}

/* The measured time per replica the relaxation rule asks of R replicas with tau_u and
 * skewness g of the customers in the system. */
static double lbmc_point_relax_needed(long R, double tau_u, double g)
{
  const double neff = fmax(LBMC_RELAX_MIN_EFFECTIVE, LBMC_RELAX_SKEW_EFFECTIVE * g * g);
  const double total = 2 * neff * tau_u / (double)R; /* n_eff = R T / (2 tau_u) */
  if (R >= 2) return fmax(LBMC_RELAX_MIN_TAUS * tau_u, total);
  return fmax(LBMC_RELAX_MIN_BATCHES * LBMC_RELAX_BATCH_TAUS * tau_u, total);
}

/* ---- the mean-field start's rule ---- */

/* The start bias the rule allows, in standard errors of the customers in the system. */
#define LBMC_MF_BIAS_SE 0.05
/* Fewest replicas: the t interval's spread estimate from at least this many. */
#define LBMC_MF_MIN_REPLICAS 10
/* The start must be the mean-field point: the replicas' mean start within this many
 * customers per pool of n x* (the rounding is off by less than one server per level). */
#define LBMC_MF_START_SLACK 64.0

/* The entry whose start bias is largest in standard errors (metric -1: the customers in the
 * system), its bound and standard error in the metric's units. */
typedef struct {
  double bias, bound, se;
  int metric;
  size_t entry;
} lbmc_point_mf_worst;

/* Free the point's expansion (made or half made) and forget it. */
static void lbmc_point_mf_drop(lbmc_point *p)
{
  if (p->mfx) lbmc_mf_expansion_free(p->mfx);
  free(p->mfx);
  p->mfx = NULL;
}

void lbmc_point_mf_forget(lbmc_point *p)
{
  if (!p->mfx) return;
  lbmc_point_mf_drop(p);
  p->mfx_tried = 0;
}

/* The replicas' mean start is the mean-field point of the model (init meanfield, and the
 * engine did not fall back to an empty start), by levels and phases: with exponential
 * service every engine rounds the same level counts; with phase-type service only the
 * occupancy-ph engine starts the phases at x* (the per-server engines draw the equilibrium
 * residual). */
static int lbmc_point_mf_started(const lbmc_point *p, const lbmc_point_relaxation *m)
{
  const double at = (double)p->n * p->mfx->customers;
  if (!lbmc_point_all_exponential(p)) {
    const lbmc_engine_type *t =
        lbmc_engine_choose(p->m, (lbmc_engine_kind)p->o.engine, NULL, 0, NULL, 0);
    if (!t || strcmp(t->name, "occupancy-ph") != 0) return 0;
  }
  return p->o.init == LBMC_INIT_MEANFIELD && p->o.transient[2] == 0 &&
         fabs(m->n0 - at) <= LBMC_MF_START_SLACK * p->J + 1e-9 * at;
}

/* The standard error of entry e of metric i over the R replicas' sums (as the reduction's
 * entries: a ratio or a proportion of their sums) into *se; NAN without one. Only for
 * sequential mode's target entry: the rule decides before the reduction estimates the
 * entries (their batches, with one replica, need the relaxation rules' cap), and the other
 * entries' bounds are set against the estimates' own standard errors (lbmc_point_mf_flags).
 * Two passes over the rows into an accumulator. Errors: as lbmc_point_row_at. */
static lbmc_err lbmc_point_mf_se(const lbmc_point *p, long R, int i, size_t e, double *se)
{
  lbmc_interval iv;
  lbmc_term_kind kind = LBMC_TERM_RATIO;
  lbmc_ratio_acc a;
  *se = NAN;
  lbmc_ratio_acc_init(&a);
  for (int pass = 0; pass < 2; pass++) {
    for (long k = 0; k < R; k++) {
      const lbmc_point_row *r;
      double y, x;
      LBMC_CALL(lbmc_point_row_at(p, k, &r));
      kind = lbmc_metric_terms(i, e, lbmc_point_row_sums(r), p->J, p->K, p->N, p->n, &y, &x);
      (pass ? lbmc_ratio_acc_add2 : lbmc_ratio_acc_add1)(&a, y, x);
    }
    if (!pass) lbmc_ratio_acc_turn(&a);
  }
  if (kind == LBMC_TERM_RATIO)
    lbmc_ratio_acc_interval(&a, p->o.confidence, &iv);
  else
    lbmc_ratio_acc_proportion(&a, p->o.confidence, kind == LBMC_TERM_TRIALS, &iv);
  *se = iv.std_err > 0 ? iv.std_err : NAN;
  return LBMC_SUCCESS;
}

/* 1 when entry e of metric i holds the verdict under the rule with the customers in the
 * system: sequential mode's target entry. */
static int lbmc_point_mf_holds(const lbmc_point *p, int i, size_t e)
{
  return i >= 0 && i == p->target_metric && (long)e == p->target_entry;
}

/* The mean-field start's rule, in place of the relaxation rules (run length against the
 * relaxation time, the start's transient from the run's own tau, the lag-1 test of the
 * eighths) for a point whose replicas start at the mean-field point x* of a model the
 * refined mean field covers (mf_expansion.h; docs/model.md, "The mean-field start's
 * rule"). It holds when
 *   - the model's bound on the start bias over the measured period [w, w + T] of each
 *     replica (order 1/n: (1/n) min(sup_{t >= w} |b(t)|, int_w^inf |b| / T), b the bias path
 *     of mf_expansion.h) is at most LBMC_MF_BIAS_SE standard errors for the entries that
 *     hold the point: the customers in the system (mean_queue pooled, as the relaxation
 *     rules gate on them) and, in sequential mode, the target entry if it is a function of
 *     the mean-field state (lbmc_mf_expansion_entry), against the standard error of its
 *     estimate over the replicas (without one, mean_sojourn and p_wait take the model's;
 *     another entry is then not gated); and
 *   - the replicas' means are near normal: at least LBMC_MF_MIN_REPLICAS replicas, and
 *     R n_s >= max(LBMC_RELAX_MIN_EFFECTIVE, LBMC_RELAX_SKEW_EFFECTIVE g^2), the relaxation
 *     rule's count of effective samples for a skewness g, with g one server's queue-length
 *     skewness at x* and n_s = n min(1, var(N) / (n W)) the servers' effective number (W/n
 *     the variance of the customers per server): each replica mean sums n servers, so its
 *     skewness is O(1/sqrt(n)) whatever T is.
 * *holds = 1 when it holds, 0 otherwise; *applies says whether the rule covers the point
 * (then *need is the measured time per replica with which it would hold with R replicas,
 * *worst the holding entry of the largest bound in standard errors). The other entries are
 * widened by their bounds, or flagged when they have no functional, by lbmc_point_mf_flags.
 * Errors: as lbmc_point_row_at (the target entry's standard error reads the rows). */
static lbmc_err lbmc_point_mf_short(lbmc_point *p, long R, const lbmc_point_relaxation *m,
                                    int *holds, int *applies, double *need,
                                    lbmc_point_mf_worst *worst)
{
  const lbmc_verdict *v = &p->v;
  const double n = (double)p->n, T = v->time_used, w = v->warmup_used;
  const int debug = getenv("LBMC_DEBUG_RELAX") != NULL;
  double ns, neff, gsk;
  const lbmc_mf_expansion *x;
  *holds = *applies = 0;
  *need = NAN;
  worst->bias = worst->bound = worst->se = NAN;
  worst->metric = -1, worst->entry = 0;
  if (p->o.init != LBMC_INIT_MEANFIELD || R < LBMC_MF_MIN_REPLICAS)
    return LBMC_SUCCESS; /* no expansion */
  if (!p->mfx_tried) {
    p->mfx_tried = 1;
    p->mfx = calloc(1, sizeof *p->mfx);
    if (!p->mfx || lbmc_mf_expansion_compute(p->m, p->mfx) != LBMC_SUCCESS || !p->mfx->ok) {
      lbmc_point_mf_drop(p);
      lbmc_error_clear();
    }
  }
  x = p->mfx;
  if (!x || !lbmc_point_mf_started(p, m) || !(m->se > 0)) return LBMC_SUCCESS;
  if (debug) {
    fprintf(stderr,
            "mf rule: x* %.10g customers per server, D0 %.10g, tau_N %.6g, W %.6g, I0 %.6g; "
            "sojourn %.10g + %.8g / n (ratio %.4g), p_wait %.10g + %.8g / n (ratio %.4g)\n",
            x->customers, x->D0, x->tau, x->W, x->I0, x->f[LBMC_MF_SOJOURN].value,
            x->f[LBMC_MF_SOJOURN].D, x->f[LBMC_MF_SOJOURN].ratio, x->f[LBMC_MF_WAIT].value,
            x->f[LBMC_MF_WAIT].D, x->f[LBMC_MF_WAIT].ratio);
    for (int i = 0; i < LBMC_M_PAIRS_FIRST; i++) /* every entry's refined mean field and bound */
      for (size_t e = 0; e < lbmc_metric_size(i, p->J, p->K); e++) {
        const int k = lbmc_mf_expansion_entry(x, i, e, p->J, p->K);
        char name[64];
        double area;
        if (k >= 0)
          fprintf(stderr, "mf entry %s %.17g %.17g bias %.4g%s\n",
                  lbmc_metric_entry_name(i, (long)e, p->J, p->K, name, sizeof name), x->f[k].value,
                  x->f[k].D, lbmc_mf_expansion_bias(x, k, n, w, T, &area),
                  lbmc_point_mf_holds(p, i, e) ? " (holds the point)" : "");
      }
  }
  *applies = 1;
  *need = 0;
  worst->bias = 0;
  /* the customers in the system (metric -1), then sequential mode's target entry */
  for (int h = 0; h < 2; h++) {
    const int i = h == 0 ? -1 : p->target_metric;
    const size_t e = h == 0 ? 0 : (size_t)p->target_entry;
    double area = 0, measured, se, b;
    int k, fallback;
    if (h == 1 && !(i >= 0 && i < LBMC_M_PAIRS_FIRST && e < lbmc_metric_size(i, p->J, p->K)))
      continue; /* no target, or one without a functional (a quantile, a pair statistic) */
    k = i < 0 ? LBMC_MF_CUSTOMERS : lbmc_mf_expansion_entry(x, i, e, p->J, p->K);
    if (k < 0) continue; /* no functional, or identically 0 at order 1/n */
    /* n x the bound against n x the entry's standard error over the replicas; where it has
     * none (every replica read the same: none or all observed), mean_sojourn and p_wait take
     * N's times the model's ratio of their long-run spreads, and the other entries are not
     * gated: they report no symmetric interval, only a one-sided bound from the
     * opportunities counted, far above the 1/n bias of a level never visited */
    if (i >= 0) {
      LBMC_CALL(lbmc_point_mf_se(p, R, i, e, &measured));
      measured *= n;
    } else
      measured = m->se;
    fallback = k == LBMC_MF_SOJOURN || k == LBMC_MF_WAIT;
    se = isfinite(measured) ? measured : fallback ? m->se * x->f[k].ratio : NAN;
    b = n * lbmc_mf_expansion_bias(x, k, n, w, T, &area);
    if (!(se > 0) || b == 0) continue; /* no spread to compare with, or no bias */
    if (!(b / se <= worst->bias)) {
      worst->bias = b / se, worst->bound = b / n, worst->se = se / n;
      worst->metric = i, worst->entry = e;
    }
    /* the length whose integral bound area / T' is LBMC_MF_BIAS_SE of the standard error,
     * that falling like T'^(-1/2) from the one measured (slower than the truth while T is
     * short against tau_N: from a fixed start the spread first grows with T) */
    *need = fmax(*need, area * area / (LBMC_MF_BIAS_SE * LBMC_MF_BIAS_SE * se * se * T));
  }
  /* N's variance over time (m->rx.var) against n W: the servers' dependence */
  ns = n * fmin(1.0, m->rx.var > 0 ? m->rx.var / (x->W * n) : 1.0);
  neff = (double)R * ns;
  gsk = x->skew;
  if (neff < fmax(LBMC_RELAX_MIN_EFFECTIVE, LBMC_RELAX_SKEW_EFFECTIVE * gsk * gsk))
    return LBMC_SUCCESS;
  *holds = worst->bias <= LBMC_MF_BIAS_SE;
  return LBMC_SUCCESS;
}

/* The mean-field start's rule did not hold where it applies: why, and the replica length
 * with which it would (when shorter than what the relaxation rules ask). */
static void lbmc_point_mf_advice(lbmc_point *p, long R, double need,
                                 const lbmc_point_mf_worst *worst)
{
  lbmc_verdict *v = &p->v;
  const lbmc_mf_expansion *x = p->mfx;
  char name[64];
  if (!(worst->bias <= LBMC_MF_BIAS_SE))
    lbmc_point_reason(v,
                      "the mean-field start's rule: the model bounds the start bias of %s over "
                      "the measured period by %.2g standard errors (%.3g against a standard "
                      "error of %.3g; at most %g allowed; refined mean field D0/n = %.3g "
                      "customers per server, tau_N = %.3g); %ld replicas of %.4g would pass",
                      worst->metric < 0 ? "the customers per server (mean_queue pooled)"
                                        : lbmc_metric_entry_name(worst->metric, (long)worst->entry,
                                                                 p->J, p->K, name, sizeof name),
                      worst->bias, worst->bound, worst->se, LBMC_MF_BIAS_SE, x->D0 / (double)p->n,
                      x->tau, R, need);
  if (isfinite(need) && need > v->time_used && (isnan(p->need_measured) || need < p->need_measured))
    p->need_measured = need;
}

/* Entry k of the estimates widened by the start bias's bound b (point_impl.h). */
void lbmc_point_mf_widen(lbmc_point *p, size_t k, double b, int proportion)
{
  lbmc_estimates *e = &p->est;
  const double hw = e->half_width[k], est = e->estimate[k];
  p->mf_widen[k] = b;
  p->mf_widen[p->total + k] = e->std_err[k];
  e->lower[k] = fmax(0.0, e->lower[k] - b);
  e->upper[k] = proportion ? fmin(1.0, e->upper[k] + b) : e->upper[k] + b;
  e->half_width[k] = fmax(est - e->lower[k], e->upper[k] - est);
  if (hw > 0) e->std_err[k] *= e->half_width[k] / hw;
  e->flags[k] |= LBMC_IV_START_BIAS_WIDENED;
}

/* Where the mean-field start's rule made the point ok: the entries whose start bias it does
 * not bound (no functional of the state: quantiles, pair statistics, messages) are flagged
 * LBMC_IV_START_BIAS; where the rule decided the point (the relaxation rules withheld ok),
 * every entry with a functional that does not hold the point and whose bound exceeds
 * LBMC_MF_BIAS_SE of its estimate's standard error is widened by it
 * (LBMC_IV_START_BIAS_WIDENED). */
static lbmc_err lbmc_point_mf_flags(lbmc_point *p)
{
  const int count = lbmc_metric_count_in(p->total, p->J, p->K);
  const double n = (double)p->n, T = p->v.time_used, w = p->v.warmup_used;
  const int debug = getenv("LBMC_DEBUG_RELAX") != NULL;
  const double *sums = NULL;
  const lbmc_point_row *row0 = NULL;
  if (p->mf_short == LBMC_MF_RULE_OFF || !p->mfx) return LBMC_SUCCESS;
  if (p->appended > 0) { /* replica 0's sums, for the kind of each entry's terms only */
    LBMC_CALL(lbmc_point_row_at(p, 0, &row0));
    sums = lbmc_point_row_sums(row0);
  }
  for (int i = 0; i < count; i++) {
    const size_t off = lbmc_metric_offset(i, p->J, p->K), len = lbmc_metric_size(i, p->J, p->K);
    for (size_t e = 0; e < len; e++) {
      const int k = lbmc_mf_expansion_entry(p->mfx, i, e, p->J, p->K);
      const double se = p->est.std_err[off + e];
      double area, b, y, x;
      if (k == LBMC_MF_NONE) p->est.flags[off + e] |= LBMC_IV_START_BIAS;
      if (k < 0 || p->mf_short != LBMC_MF_RULE_DECIDED || lbmc_point_mf_holds(p, i, e) ||
          !(se > 0) || !sums || !isfinite(p->est.lower[off + e]) ||
          !isfinite(p->est.upper[off + e]))
        continue; /* nothing to widen, or an interval without a standard error */
      b = lbmc_mf_expansion_bias(p->mfx, k, n, w, T, &area);
      if (debug) {
        char name[64];
        fprintf(stderr, "mf widen %s bound %.17g se %.17g (%.3g se) [%.17g, %.17g]\n",
                lbmc_metric_entry_name(i, (long)e, p->J, p->K, name, sizeof name), b, se, b / se,
                p->est.lower[off + e], p->est.upper[off + e]);
      }
      if (!(b > LBMC_MF_BIAS_SE * se)) continue;
      lbmc_point_mf_widen(p, off + e, b,
                          lbmc_metric_terms(i, e, sums, p->J, p->K, p->N, p->n, &y, &x) !=
                              LBMC_TERM_RATIO);
    }
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_point_relax_check(lbmc_point *p, long R)
{
  lbmc_verdict *v = &p->v;
  lbmc_point_relaxation m;
  double tau_u, need, wneed, skew_u, tau_s, mf_need;
  lbmc_point_mf_worst mf_worst;
  const double T = v->time_used, w = v->warmup_used;
  int mf_applies = 0;
  p->mf_short = LBMC_MF_RULE_OFF;
  p->batch_cap = 0;
  p->batch_tau = NAN;
  p->need_measured = p->need_warmup = NAN;
  if (p->moment_any)
    return LBMC_SUCCESS; /* N's variance or skewness is infinite: no
                            relaxation time to measure (the metrics that
                            depend on it are marked) */
  LBMC_CALL(lbmc_point_relax_measure(p, R, 0, &m));
  if (getenv("LBMC_DEBUG_RELAX"))
    fprintf(stderr,
            "relax: var %g skew %g reading %g at %g (dof %g) tau %g tau_u %g tau_l %g resolved %d "
            "se %g nbar %g\n",
            m.rx.var, m.skew, m.rx.reading, m.rx.scale, m.rx.dof, m.rx.tau, m.rx.tau_upper,
            m.rx.tau_lower, m.rx.resolved, m.se, m.nbar);
  v->relaxation_time = m.rx.tau;
  tau_u = m.rx.tau_upper;
  if (isnan(tau_u) || !(m.rx.var > 0)) return LBMC_SUCCESS; /* no variation: nothing to relax */
  /* the mean-field start's rule, decided before the relaxation rules, which run as before;
   * where it holds it overrides their verdict (the state before them restored) */
  int mf_ok;
  LBMC_CALL(lbmc_point_mf_short(p, R, &m, &mf_ok, &mf_applies, &mf_need, &mf_worst));
  const lbmc_verdict before = *v;
  {
    /* where the model gives a floor, the rules gate on it unless the reading proves (its
     * lower bound at 90% above the floor) that the system relaxes more slowly: a gate on
     * the run's own tau_u keeps the runs whose queue made no long excursion, whose means are
     * low too (JSQ(2), 2 servers, rho 0.95, 10 replicas of 80 tau, fixed warm-up: the 81 of
     * 200 runs kept covered 88.9%; on the floor 151, 94.0%: docs/model.md "Relaxation
     * time") */
    const double floor_tau = lbmc_point_tau_floor(p);
    if (floor_tau > 0 && m.rx.resolved && !(m.rx.tau_lower > floor_tau))
      tau_u = floor_tau;
    else
      tau_u = fmax(tau_u, floor_tau);
    if (isfinite(m.rx.tau)) m.rx.tau = fmax(m.rx.tau, floor_tau);
  }
  v->relaxation_upper = tau_u;
  /* the skewness of N as a negative binomial law of its mean and variance, (2 - p) CV with
   * p = min(1, mean / variance): exact for M/M/1's geometric law ((1 + rho) / sqrt(rho)),
   * for sums of independent ones and for a Poisson law (1 / sqrt(L)); a sample skewness of
   * correlated samples is too noisy to gate on, and smallest in the runs whose intervals
   * are too narrow (no large excursion) */
  skew_u = m.nbar > 0 ? (2 - fmin(1.0, m.nbar / m.rx.var)) * sqrt(m.rx.var) / m.nbar : 0;
  double tau_k = NAN, skew_k = NAN;
  const int known = lbmc_point_tau_known(p, &tau_k, &skew_k);
  if (known) { /* exact: no reading, no selection */
    m.rx.tau = tau_u = v->relaxation_time = v->relaxation_upper = tau_k;
    m.rx.resolved = 1;
    skew_u = skew_k;
  }
  need = lbmc_point_relax_needed(R, tau_u, skew_u);
  if (R == 1 && isfinite(tau_u)) /* the batches: each at least LBMC_RELAX_BATCH_TAUS tau_u */
    p->batch_cap =
        (size_t)fmax((double)LBMC_RELAX_MIN_BATCHES, floor(T / (LBMC_RELAX_BATCH_TAUS * tau_u)));
  if (R == 1 && m.rx.resolved && isfinite(m.rx.tau)) p->batch_tau = m.rx.tau;
  if (!m.rx.resolved || !(T >= need)) {
    p->need_measured = m.rx.resolved && isfinite(need)
                           ? need
                           : fmax(LBMC_SUGGEST_FACTOR * T, isfinite(need) ? need : 0);
    v->evidence |= LBMC_EV_RELAX;
    if (known)
      lbmc_point_reason(v,
                        "the measured period (%.4g per replica) is %.2g relaxation times: the "
                        "customers in the system decorrelate over %.3g (integrated "
                        "autocorrelation time, exact for independent M/M/1 queues), and with "
                        "skewness %.2g %s needs %.3g",
                        T, T / tau_k, tau_k, skew_u,
                        R >= 2 ? "the interval of the replicas' means" : "batch means", need);
    else if (m.rx.resolved && isfinite(need))
      lbmc_point_reason(v,
                        "the measured period (%.4g per replica) is %.2g relaxation times: the "
                        "customers in the system decorrelate over about %.3g (integrated "
                        "autocorrelation time; at most %.3g at 90%%), and with skewness about "
                        "%.2g %s needs %.3g",
                        T, T / m.rx.tau, m.rx.tau, tau_u, skew_u,
                        R >= 2 ? "the interval of the replicas' means" : "batch means", need);
    else if (isfinite(m.rx.tau))
      lbmc_point_reason(v,
                        "the measured period (%.4g per replica) is too short to measure the "
                        "relaxation time of the customers in the system: it is at least %.3g "
                        "(integrated autocorrelation time), the run at most %.2g of them",
                        T, m.rx.tau, T / m.rx.tau);
    else /* no reading: the raw one is a lower bound far below tau, often below T too */
      lbmc_point_reason(v,
                        "the measured period (%.4g per replica) is too short to measure the "
                        "relaxation time of the customers in the system: it is far longer "
                        "than the run's longest batches (%.3g; their autocorrelation, a lower "
                        "bound, reads %.3g)",
                        T, m.rx.scale, m.rx.reading);
  }
  /* the start's transient needs a finite tau (without one the rule above already withholds
   * ok and asks for a longer run) */
  tau_s = lbmc_point_tau_start(p, &m, NULL); /* the one the automatic warm-up was chosen by */
  v->transient_bound = m.se > 0 && isfinite(m.rx.tau)
                           ? lbmc_transient_bound(m.n0 - m.nbar, tau_s, w, T) / m.se
                           : NAN;
  if (v->transient_bound > LBMC_RELAX_BIAS_SE) {
    wneed = lbmc_point_warmup_needed(p, &m, T, LBMC_RELAX_BIAS_SE);
    p->need_warmup = wneed;
    /* with the same warm-up, a run f times longer makes bound / se f^(1/2) times smaller;
     * only once the run spans the relaxation rule's length: shorter, se does not fall like
     * T^(-1/2) (a run of 0.001 time units with tau 6 asked for --time 3.8e11), and the
     * relaxation rule's own length and the warm-up above are the advice */
    if (!p->o.warmup_auto && !(v->evidence & LBMC_EV_RELAX))
      p->need_measured = fmax(isnan(p->need_measured) ? 0 : p->need_measured,
                              T * pow(v->transient_bound / LBMC_RELAX_BIAS_SE, 2));
    v->evidence |= LBMC_EV_TRANSIENT;
    lbmc_point_reason(v,
                      "the start (%.4g customers against a mean of %.4g) may leave a bias up to "
                      "%.3g standard errors after the warm-up of %.4g (relaxation time about "
                      "%.3g); a warm-up of %.4g would make it a quarter",
                      m.n0, m.nbar, v->transient_bound, w, tau_s, wneed);
  }
  if (mf_ok) {
    p->mf_short = LBMC_MF_RULE_HOLDS; /* lbmc_point_short's lag-1 test is replaced too */
    if (v->evidence & (LBMC_EV_RELAX | LBMC_EV_TRANSIENT)) {
      p->mf_short = LBMC_MF_RULE_DECIDED; /* the other entries' bounds widen their intervals */
      *v = before;
      p->need_measured = p->need_warmup = NAN;
      v->relaxation_time = v->relaxation_upper = p->mfx->tau;
      v->transient_bound = mf_worst.bias;
    }
  } else if (mf_applies && (v->evidence & (LBMC_EV_RELAX | LBMC_EV_TRANSIENT)))
    lbmc_point_mf_advice(p, R, mf_need, &mf_worst);
  return LBMC_SUCCESS;
}

/* ---- flow balance ---- */

/* Pool j's admissions and time over the last half of the measured period, in two passes
 * over the rows: per eighth of each replica (units: 4 R, in replica then eighth order) into
 * *in, per replica (their sums) into *across. */
static lbmc_err lbmc_point_flow_terms(const lbmc_point *p, long R, int j, lbmc_ratio_acc *in,
                                      lbmc_ratio_acc *across)
{
  lbmc_ratio_acc_init(in);
  lbmc_ratio_acc_init(across);
  for (int pass = 0; pass < 2; pass++) {
    void (*add)(lbmc_ratio_acc *, double, double) =
        pass ? lbmc_ratio_acc_add2 : lbmc_ratio_acc_add1;
    for (long i = 0; i < R; i++) {
      const lbmc_point_row *r;
      double ry = 0, rx = 0;
      LBMC_CALL(lbmc_point_row_at(p, i, &r));
      for (int k = LBMC_PARTS / 2; k < LBMC_PARTS; k++) {
        const double y = lbmc_point_row_adm(p, r)[j * LBMC_PARTS + k];
        const double x = r->parts[k][LBMC_PART_LEN];
        add(in, y, x);
        ry += y, rx += x;
      }
      add(across, ry, rx);
    }
    if (!pass) lbmc_ratio_acc_turn(in), lbmc_ratio_acc_turn(across);
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_point_flow(lbmc_point *p, long R)
{
  lbmc_verdict *v = &p->v;
  const double n = (double)p->n, lambda = lbmc_model_lambda(p->m);
  const double g_min = p->o.runaway_fraction / 2 * lambda * n; /* per unit time */
  double worst_factor = 0;
  int worst = -1;
  for (int j = 0; j < p->J; j++) {
    const double *rates;
    const int L = lbmc_model_rates(p->m, j, &rates);
    const double cap = (double)p->N[j] * rates[L - 1];
    lbmc_interval in, across;
    lbmc_ratio_acc ain, aacross;
    double se, t, lower, upper, factor;
    if (lbmc_model_buffer(p->m, j) != LBMC_BUFFER_INF || R < 1) continue;
    LBMC_CALL(lbmc_point_flow_terms(p, R, j, &ain, &aacross));
    lbmc_ratio_acc_interval(&ain, 0.5, &in);
    if (!(in.dof > 0) || isnan(in.std_err)) continue;
    se = in.std_err;
    if (R >= 2) { /* the replicas' own spread, if larger */
      lbmc_ratio_acc_interval(&aacross, 0.5, &across);
      if (across.std_err > se) se = across.std_err;
    }
    t = gsl_cdf_tdist_Qinv(LBMC_DRIFT_ALPHA, in.dof);
    lower = in.estimate - t * se;
    upper = in.estimate + t * se;
    factor = lower / (cap + g_min);
    if (isnan(v->overload) || factor > v->overload) v->overload = factor;
    if (lower > cap + g_min) {
      v->evidence |= LBMC_EV_OVERLOAD;
      lbmc_point_reason(v,
                        "pool %d receives %.4g [%.4g, %.4g] customers per unit time in the last "
                        "half of the run (interval at level 1 - %g); its capacity is %.4g: "
                        "its queues grow without bound (flow balance)",
                        j + 1, in.estimate, lower, upper, 2 * LBMC_DRIFT_ALPHA, cap);
      continue;
    }
    /* above the capacity but not proven: the data that would prove it (se ~ 1/sqrt(R T)) */
    if (in.estimate > cap + g_min && se > 0) {
      const double f = pow(t * se / (in.estimate - cap - g_min), 2);
      if (f > worst_factor) worst_factor = f, worst = j;
    }
  }
  if (worst >= 0 && !(v->evidence & LBMC_EV_OVERLOAD)) {
    p->flow_factor = worst_factor;
    p->flow_pool = worst;
  }
  return LBMC_SUCCESS;
}

/* ---- moments ---- */

/* Sup of the b with E[S^b] finite for pool j's service law. */
static double lbmc_point_tail_index(const lbmc_point *p, int j)
{
  const lbmc_service *s = lbmc_model_service(p->m, j);
  return s ? lbmc_service_tail_index(s) : INFINITY;
}

/* The moment of S whose finiteness makes pool j's mean wait finite (its customers can
 * wait): 2 for a single-slot server under a policy that does not look at the work
 * (the residual service a waiting customer meets is length-biased: Pollaczek-
 * Khinchine); lwl(d) with distinct sampling waits only behind d loaded servers: 1 + 1/d
 * (Hellemans and Van Houdt 2018). Servers with L slots: 1 + 1/L is necessary, 2
 * sufficient (*sure = 0 between). */
static double lbmc_point_wait_moment(const lbmc_point *p, int j, int *sure)
{
  const double *rates;
  const int L = lbmc_model_rates(p->m, j, &rates);
  const char *policy = lbmc_model_policy_name(p->m);
  *sure = 1;
  if (strcmp(policy, "lwl") == 0 && strcmp(lbmc_model_sampling(p->m), "with_replacement") != 0 &&
      L == 1) {
    const long d = lbmc_model_policy_param(p->m);
    return d >= 1 ? 1 + 1.0 / (double)d : 2;
  }
  if (L > 1) *sure = 0;
  return L > 1 ? 1 + 1.0 / (double)L : 2;
}

/* 1 if pool j's customers can wait: it holds more customers than service slots. */
static int lbmc_point_can_wait(const lbmc_point *p, int j)
{
  const double *rates;
  const long B = lbmc_model_buffer(p->m, j);
  return B == LBMC_BUFFER_INF || B > lbmc_model_rates(p->m, j, &rates);
}

void lbmc_point_moments(lbmc_point *p)
{
  const int J = p->J, K = p->K;
  const size_t ow = lbmc_metric_offset(LBMC_M_MEAN_WAIT, J, K);
  const size_t os = lbmc_metric_offset(LBMC_M_MEAN_SOJOURN, J, K);
  const size_t oq = lbmc_metric_offset(LBMC_M_MEAN_QUEUE, J, K);
  const size_t ol = lbmc_metric_offset(LBMC_M_MEAN_WORKLOAD, J, K);
  char pools[256] = "", heavy_pools[256] = "", work_pools[256] = "";
  int any_inf = 0, any_heavy = 0, undecided = 0;
  memset(p->moment_flags, 0, sizeof *p->moment_flags * p->total);
  p->heavy_all = p->moment_any = 0;
  p->moment_reason[0] = '\0';
  for (int j = 0; j < J; j++) {
    const double a = lbmc_point_tail_index(p, j);
    int sure;
    const double need = lbmc_point_wait_moment(p, j, &sure);
    if (!isfinite(a)) continue;
    if (a <= 2) { /* the work in progress at a busy server has mean E[S^2] / (2 E[S]): the
                     mean workload is infinite, buffer 1 included (Brumelle's H = lambda G) */
      p->moment_flags[ol + (size_t)j] = LBMC_IV_INFINITE;
      snprintf(work_pools + strlen(work_pools), sizeof work_pools - strlen(work_pools), "%s%d",
               *work_pools ? ", " : "", j + 1);
    } else if (a <= 3) /* finite, but its variance (E[S^3]) is not */
      p->moment_flags[ol + (size_t)j] |= LBMC_IV_HEAVY_TAIL;
    if (a <= 2) { /* E[S^2] infinite: busy periods and every time average are long-range
                     dependent, so no estimator has a finite variance */
      p->heavy_all = 1;
      snprintf(heavy_pools + strlen(heavy_pools), sizeof heavy_pools - strlen(heavy_pools), "%s%d",
               *heavy_pools ? ", " : "", j + 1);
    }
    if (!lbmc_point_can_wait(p, j)) continue;
    if (a <= need) { /* the mean wait at pool j is infinite */
      any_inf = 1;
      p->moment_flags[oq + (size_t)j] = LBMC_IV_INFINITE;
      p->moment_flags[ow] = p->moment_flags[os] = LBMC_IV_INFINITE;
      snprintf(pools + strlen(pools), sizeof pools - strlen(pools), "%s%d", *pools ? ", " : "",
               j + 1);
    } else {
      undecided |= !sure && a <= 2;
      if (a <= 4) { /* the mean is finite, but the waits' sum over a run has infinite variance:
                       a service of length s makes about s customers wait about s */
        any_heavy = 1;
        p->moment_flags[oq + (size_t)j] |= LBMC_IV_HEAVY_TAIL;
        p->moment_flags[ow] |= LBMC_IV_HEAVY_TAIL;
        p->moment_flags[os] |= LBMC_IV_HEAVY_TAIL;
      }
    }
  }
  for (size_t k = 0; k < p->total && p->heavy_all; k++)
    p->moment_flags[k] |= p->moment_flags[k] & LBMC_IV_INFINITE ? 0 : LBMC_IV_HEAVY_TAIL;
  /* quantiles keep their intervals (Woodruff's band is of counts, always finite) */
  for (int q = 0; q < 2; q++) {
    const size_t off =
        lbmc_metric_offset(q ? LBMC_M_WAIT_QUANTILES : LBMC_M_SOJOURN_QUANTILES, J, K);
    for (int l = 0; l < LBMC_QUANTILES; l++) p->moment_flags[off + (size_t)l] = 0;
  }
  if (any_inf)
    snprintf(p->moment_reason, sizeof p->moment_reason,
             "mean_wait, mean_sojourn and mean_queue of pool %s are infinite: the service law "
             "has an infinite moment E[S^2] (or E[S^(1+1/d)] for lwl(d)) where customers wait, "
             "so the mean wait is infinite (Pollaczek-Khinchine); quantiles stay finite",
             pools);
  if (*work_pools)
    snprintf(p->moment_reason + strlen(p->moment_reason),
             sizeof p->moment_reason - strlen(p->moment_reason),
             "%smean_workload of pool %s is infinite (the service in progress has the mean "
             "residual E[S^2] / (2 E[S]))",
             *p->moment_reason ? "; " : "", work_pools);
  if (p->heavy_all)
    snprintf(p->moment_reason + strlen(p->moment_reason),
             sizeof p->moment_reason - strlen(p->moment_reason),
             "%sheavy tail: the service law of pool %s has infinite variance, so the "
             "busy periods and every time average are long-range dependent and no "
             "estimator has a finite variance; the intervals from the spread of replicas "
             "or batches undercover at any run length%s",
             *p->moment_reason ? "; " : "", heavy_pools,
             undecided ? " (the mean wait of servers with several slots may be infinite too)" : "");
  p->moment_any = p->heavy_all || any_inf || any_heavy || *work_pools;
}

lbmc_err lbmc_point_apply_moments(lbmc_point *p)
{
  lbmc_verdict *v = &p->v;
  lbmc_estimates *e = &p->est;
  int any_inf = 0;
  for (size_t k = 0; k < p->total; k++) {
    const unsigned f = p->moment_flags[k];
    if (f & LBMC_IV_INFINITE) {
      e->estimate[k] = INFINITY;
      e->half_width[k] = e->std_err[k] = e->lower[k] = e->upper[k] = e->upper_bound[k] = NAN;
      e->flags[k] = LBMC_IV_INFINITE;
      any_inf = 1;
    } else if ((f & LBMC_IV_HEAVY_TAIL) && !isnan(e->lower[k]) &&
               !(e->flags[k] & (LBMC_IV_EMPTY | LBMC_IV_NONE_OBSERVED | LBMC_IV_ALL_OBSERVED))) {
      e->half_width[k] = e->std_err[k] = e->lower[k] = e->upper[k] = NAN;
      e->flags[k] |= LBMC_IV_HEAVY_TAIL;
    }
  }
  if (any_inf) v->evidence |= LBMC_EV_INFINITE;
  if (p->heavy_all) v->evidence |= LBMC_EV_HEAVY_TAIL;
  if (any_inf || p->heavy_all) lbmc_point_reason(v, "%s", p->moment_reason);
  return lbmc_point_mf_flags(p);
}
