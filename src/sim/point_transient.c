/* The transient estimates of a point (include/lbmc/point.h, lbmc_point_transient): what a
 * point keeps of each replica of a transient run (the transient observer's block at each
 * observation time, src/observers/transient.c, and the interval's counts from the tick
 * record) and, over replicas, a pointwise Student-t interval per time and a Bonferroni
 * band over the grid. The replicas are pooled in their order, so the result does not
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
  long off;
  if (!(p->o.transient[2] > 0)) return LBMC_SUCCESS;
  off = lbmc_observers_offset(p->m, &p->o, "transient");
  if (off < 0) return LBMC_ERROR(LBMC_ERR_INTERNAL, "point: a transient run without its observer");
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

/* Student t quantile of two-sided level `level` with df degrees of freedom (NaN if df < 1). */
static double lbmc_trans_t(double level, long df)
{
  return df >= 1 ? gsl_cdf_tdist_Pinv(0.5 + level / 2, (double)df) : NAN;
}

/* Row i, value v: mean and standard error over the n replicas in use[] of a per-replica
 * value (ratio < 0), or of the ratio of sums of y = column num over x = column den
 * (delta method: var(y - R x) / (n xbar^2)). */
static void lbmc_trans_moments(const lbmc_point *p, const long *use, long n, size_t i, size_t X,
                               long col, long num, long den, double scale, double *mean, double *se)
{
  double sx = 0, sy = 0, ss = 0, m;
  for (long u = 0; u < n; u++) {
    const double *row = p->rep[use[u]].trans + i * X;
    sy += col >= 0 ? row[col] * scale : row[num];
    sx += col >= 0 ? 1 : row[den];
  }
  m = sx > 0 ? sy / sx : NAN;
  for (long u = 0; u < n && isfinite(m); u++) {
    const double *row = p->rep[use[u]].trans + i * X;
    const double d = col >= 0 ? row[col] * scale - m : row[num] - m * row[den];
    ss += d * d;
  }
  *mean = m;
  *se = n > 1 && isfinite(m) ? sqrt(ss / (double)(n - 1) / (double)n) / (sx / (double)n) : NAN;
}

lbmc_err lbmc_point_transient(const lbmc_point *p, long R, lbmc_transient *out)
{
  const size_t V = lbmc_transient_values(p->J, p->K), X = lbmc_point_trans_width(p);
  const size_t Vall = V + LBMC_TRANSIENT_INTERVAL_METRICS;
  const long T = lbmc_transient_times(&p->o);
  long n = 0, *use;
  double tp, tb;
  lbmc_transient_free(out);
  if (T <= 0) return LBMC_ERROR(LBMC_ERR_ARG, "point: not a transient run");
  if (R > p->nrep) R = p->nrep;
  use = malloc(sizeof *use * (size_t)(R > 0 ? R : 1));
  out->time = malloc(sizeof *out->time * (size_t)T);
  out->mean = malloc(sizeof *out->mean * 5 * (size_t)T * Vall);
  if (!use || !out->time || !out->mean) {
    free(use);
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
  for (long i = 0; i < R; i++) {
    const lbmc_point_rep *r = &p->rep[i];
    if (!r->kept.present || !r->trans) continue;
    if (r->kept.unstable)
      out->unstable++;
    else
      use[n++] = i;
  }
  out->replicas = n;
  tp = lbmc_trans_t(p->o.confidence, n - 1);
  tb = lbmc_trans_t(1 - (1 - p->o.confidence) / (double)T, n - 1);
  for (long i = 0; i < T; i++) {
    out->time[i] =
        i + 1 < T ? p->o.transient[0] + (double)i * p->o.transient[2] : p->o.transient[1];
    for (size_t v = 0; v < Vall; v++) {
      const size_t at = (size_t)i * Vall + v;
      double m = NAN, se = NAN;
      if (v < V)
        lbmc_trans_moments(p, use, n, (size_t)i, X, (long)v, 0, 0, 1, &m, &se);
      else if (i > 0 && v == V + 0) /* p_wait */
        lbmc_trans_moments(p, use, n, (size_t)i, X, -1, (long)V + LBMC_TC_WAITED,
                           (long)V + LBMC_TC_ARRIVALS, 1, &m, &se);
      else if (i > 0 && v == V + 1) /* p_block */
        lbmc_trans_moments(p, use, n, (size_t)i, X, -1, (long)V + LBMC_TC_BLOCKED,
                           (long)V + LBMC_TC_ARRIVALS, 1, &m, &se);
      else if (i > 0 && v == V + 2) /* throughput */
        lbmc_trans_moments(p, use, n, (size_t)i, X, (long)V + LBMC_TC_DEPARTURES, 0, 0,
                           1 / (out->time[i] - out->time[i - 1]), &m, &se);
      else if (i > 0) /* messages per arrival */
        lbmc_trans_moments(p, use, n, (size_t)i, X, -1, (long)V + LBMC_TC_MESSAGES,
                           (long)V + LBMC_TC_ARRIVALS, 1, &m, &se);
      out->mean[at] = m;
      out->lower[at] = m - tp * se;
      out->upper[at] = m + tp * se;
      out->band_lower[at] = m - tb * se;
      out->band_upper[at] = m + tb * se;
    }
  }
  free(use);
  return LBMC_SUCCESS;
}
