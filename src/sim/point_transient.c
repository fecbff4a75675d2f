/* The transient estimates of a point (include/lbmc/point.h, lbmc_point_transient): what a
 * point keeps of each replica of a transient run (the transient observer's block at each
 * observation time, src/observers/transient.c, and the interval's counts from the tick
 * record) and, over replicas, a pointwise Student-t interval per time and a Bonferroni
 * band over the grid. The replicas are folded into running moments in their order as
 * they arrive (memory: one replica's values plus the moments), so the result does not
 * depend on the order records arrive in (or the number of ranks). */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ticks.h"
#include "../observers/observers.h"
#include "../system/system.h"
#include "point_impl.h"

/* The interval counts kept after the observer's values, in this order. */
static const int lbmc_trans_counts[] = {LBMC_TK_ARRIVALS, LBMC_TK_BLOCKED, LBMC_TK_WAITED,
                                        LBMC_TK_DEPARTURES, LBMC_TK_MESSAGES};
enum {
  LBMC_TC_ARRIVALS,
  LBMC_TC_BLOCKED,
  LBMC_TC_WAITED,
  LBMC_TC_DEPARTURES,
  LBMC_TC_MESSAGES,
  LBMC_TC_COUNT
};

const char *const lbmc_transient_metric_names[] = {
    "mean_queue",           "tail", "customers", "p_wait", "p_block", "throughput",
    "messages_per_arrival", NULL};

long lbmc_transient_index(int J, int K, const char *name, int j, int k)
{
  const long state = (long)lbmc_transient_values(J, K);
  if (strcmp(name, "mean_queue") == 0) return j;
  if (strcmp(name, "tail") == 0) return J + (long)j * K + (k - 1);
  if (strcmp(name, "customers") == 0) return state - 1;
  for (int i = 0; i < LBMC_TRANSIENT_INTERVAL_METRICS; i++)
    if (strcmp(name, lbmc_transient_metric_names[3 + i]) == 0) return state + i;
  return -1;
}

size_t lbmc_point_trans_width(const lbmc_point *p)
{
  return lbmc_transient_values(p->J, p->K) + LBMC_TC_COUNT;
}

lbmc_err lbmc_point_trans_keep(const lbmc_point *p, lbmc_point_rep *r, const lbmc_record *rec)
{
  const size_t V = lbmc_transient_values(p->J, p->K), X = lbmc_point_trans_width(p);
  size_t off;
  if (!(p->o.transient[2] > 0)) return LBMC_SUCCESS;
  off = lbmc_observers_offset(p->m, &p->o, &lbmc_observer_transient);
  if (off == (size_t)-1)
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "point: a transient run without its observer");
  free(r->trans);
  r->trans = malloc(sizeof *r->trans * p->S * X);
  if (!r->trans) return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory for a transient run");
  for (size_t s = 0; s < p->S; s++) {
    const double *seg = rec->seg + s * p->W;
    double *to = r->trans + s * X;
    memcpy(to, seg + lbmc_tick_width(p->J, p->K) + off, sizeof *to * V);
    for (int c = 0; c < LBMC_TC_COUNT; c++) to[V + c] = seg[lbmc_trans_counts[c]];
  }
  return LBMC_SUCCESS;
}

void lbmc_transient_free(lbmc_transient *t)
{
  if (!t) return;
  free(t->time);
  free(t->mean);
  memset(t, 0, sizeof *t);
}

void lbmc_point_trans_forget(lbmc_point *p)
{
  if (!p->tacc) return;
  free(p->tacc->mean);
  free(p->tacc);
  p->tacc = NULL;
}

/* Pair k of the co-moments: (arrivals, waited), (arrivals, blocked), (arrivals, messages). */
static const int lbmc_trans_pair[3] = {LBMC_TC_WAITED, LBMC_TC_BLOCKED, LBMC_TC_MESSAGES};

/* One replica's values r (S x X) into the moments (Welford; co-moments C_n = C_{n-1} +
 * (x - xbar_{n-1}) (y - ybar_n)). */
static void lbmc_trans_add(const lbmc_point *p, lbmc_point_trans_acc *a, const double *r)
{
  const size_t X = lbmc_point_trans_width(p), V = lbmc_transient_values(p->J, p->K);
  const double n = (double)++a->n;
  for (size_t s = 0; s < p->S; s++) {
    const double *x = r + s * X;
    double *mean = a->mean + s * X, *m2 = a->m2 + s * X, *c = a->c + s * 3;
    const double dx = x[V + LBMC_TC_ARRIVALS] - mean[V + LBMC_TC_ARRIVALS];
    for (size_t v = 0; v < X; v++) {
      const double d = x[v] - mean[v];
      mean[v] += d / n;
      m2[v] += d * (x[v] - mean[v]);
    }
    for (int k = 0; k < 3; k++)
      c[k] += dx * (x[V + (size_t)lbmc_trans_pair[k]] - mean[V + (size_t)lbmc_trans_pair[k]]);
  }
}

lbmc_err lbmc_point_trans_fold(lbmc_point *p, lbmc_point_rep *r, int unstable)
{
  const size_t X = lbmc_point_trans_width(p);
  lbmc_point_trans_acc *a = p->tacc;
  if (!(p->o.transient[2] > 0)) return LBMC_SUCCESS;
  if (!a) {
    a = p->tacc = calloc(1, sizeof *a);
    if (a) a->mean = calloc(p->S * (2 * X + 3), sizeof *a->mean);
    if (!a || !a->mean) {
      lbmc_point_trans_forget(p);
      return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory for a transient run");
    }
    a->m2 = a->mean + p->S * X;
    a->c = a->m2 + p->S * X;
  }
  if (unstable || !r->trans)
    a->unstable++;
  else
    lbmc_trans_add(p, a, r->trans);
  a->folded++;
  free(r->trans);
  r->trans = NULL;
  return LBMC_SUCCESS;
}

/* Student t quantile of two-sided level `level` with df degrees of freedom (NaN if df < 1). */
static double lbmc_trans_t(double level, long df)
{
  return df >= 1 ? gsl_cdf_tdist_Pinv(0.5 + level / 2, (double)df) : NAN;
}

/* Mean and standard error at time s of column v (scaled), or with den >= 0 of the ratio of
 * the sums of column v over column den (pair k of the co-moments): R = ybar / xbar,
 * var(y - R x) / (n xbar^2) (the delta method). */
static void lbmc_trans_est(const lbmc_point *p, size_t s, size_t v, long den, int k, double scale,
                           double *mean, double *se)
{
  const lbmc_point_trans_acc *a = p->tacc;
  const size_t X = lbmc_point_trans_width(p);
  const double n = (double)a->n, *m = a->mean + s * X, *m2 = a->m2 + s * X;
  if (den < 0) {
    *mean = m[v] * scale;
    *se = a->n > 1 ? sqrt(m2[v] / (n - 1) / n) * scale : NAN;
    return;
  }
  *mean = m[den] > 0 ? m[v] / m[den] : NAN;
  *se = a->n > 1 && m[den] > 0
            ? sqrt(fmax(0, m2[v] - 2 * *mean * a->c[s * 3 + (size_t)k] + *mean * *mean * m2[den]) /
                   (n - 1) / n) /
                  m[den]
            : NAN;
}

/* An interval's end x within the values the metric can take, [0, hi] (NaN stays). */
static double lbmc_trans_clip(double x, double hi) { return isnan(x) ? x : fmin(fmax(x, 0), hi); }

/* The largest value each of the Vall columns can take: 1 for the tails, p_wait and p_block
 * (fractions), else inf (counts, rates and messages per arrival are only >= 0). */
static void lbmc_trans_ranges(int J, int K, size_t Vall, double *hi)
{
  const long tail0 = lbmc_transient_index(J, K, "tail", 0, 1);
  const long pw = lbmc_transient_index(J, K, "p_wait", 0, 1);
  const long pb = lbmc_transient_index(J, K, "p_block", 0, 1);
  for (size_t v = 0; v < Vall; v++) {
    const long i = (long)v;
    hi[v] = (i >= tail0 && i < tail0 + (long)J * K) || i == pw || i == pb ? 1 : INFINITY;
  }
}

lbmc_err lbmc_point_transient(const lbmc_point *p, long R, lbmc_transient *out)
{
  const size_t V = lbmc_transient_values(p->J, p->K);
  const size_t Vall = V + LBMC_TRANSIENT_INTERVAL_METRICS;
  const long T = lbmc_transient_times(&p->o), n = p->tacc ? p->tacc->n : 0;
  const long A = (long)V + LBMC_TC_ARRIVALS;
  double tp, tb, *hi;
  lbmc_transient_free(out);
  if (T <= 0) return LBMC_ERROR(LBMC_ERR_ARG, "point: not a transient run");
  (void)R; /* the replicas folded so far: 0 .. R - 1 once they are all in */
  out->time = malloc(sizeof *out->time * (size_t)T);
  out->mean = malloc(sizeof *out->mean * (5 * (size_t)T * Vall + Vall));
  if (!out->time || !out->mean) {
    lbmc_transient_free(out);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory for transient estimates");
  }
  out->times = T;
  out->values = Vall;
  out->J = p->J;
  out->K = p->K;
  out->lower = out->mean + (size_t)T * Vall;
  out->upper = out->lower + (size_t)T * Vall;
  out->band_lower = out->upper + (size_t)T * Vall;
  out->band_upper = out->band_lower + (size_t)T * Vall;
  out->replicas = n;
  out->unstable = p->tacc ? p->tacc->unstable : 0;
  hi = out->band_upper + (size_t)T * Vall; /* the last Vall of the block */
  lbmc_trans_ranges(p->J, p->K, Vall, hi);
  tp = lbmc_trans_t(p->o.confidence, n - 1);
  tb = lbmc_trans_t(1 - (1 - p->o.confidence) / (double)T, n - 1);
  for (long i = 0; i < T; i++) {
    out->time[i] = lbmc_transient_time(&p->o, i);
    for (size_t v = 0; v < Vall; v++) {
      const size_t at = (size_t)i * Vall + v, s = (size_t)i;
      double m = NAN, se = NAN;
      if (n == 0 || (v >= V && (i == 0 || (size_t)i >= p->S)))
        ; /* no replica, or no interval before the first time */
      else if (v < V)
        lbmc_trans_est(p, s, v, -1, 0, 1, &m, &se);
      else if (v == V + 0) /* p_wait */
        lbmc_trans_est(p, s, V + LBMC_TC_WAITED, A, 0, 1, &m, &se);
      else if (v == V + 1) /* p_block */
        lbmc_trans_est(p, s, V + LBMC_TC_BLOCKED, A, 1, 1, &m, &se);
      else if (v == V + 2) /* throughput */
        lbmc_trans_est(p, s, V + LBMC_TC_DEPARTURES, -1, 0, 1 / (out->time[i] - out->time[i - 1]),
                       &m, &se);
      else /* messages per arrival */
        lbmc_trans_est(p, s, V + LBMC_TC_MESSAGES, A, 2, 1, &m, &se);
      out->mean[at] = m;
      out->lower[at] = lbmc_trans_clip(m - tp * se, hi[v]);
      out->upper[at] = lbmc_trans_clip(m + tp * se, hi[v]);
      out->band_lower[at] = lbmc_trans_clip(m - tb * se, hi[v]);
      out->band_upper[at] = lbmc_trans_clip(m + tb * se, hi[v]);
    }
  }
  return LBMC_SUCCESS;
}
