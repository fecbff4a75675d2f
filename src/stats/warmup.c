/* Warm-up truncation for the point: MSER-k with any group size and cap, and the "near
 * the cap" signal that the run is too short; the drift test for unbounded growth. See
 * estimators.h for the rules and their sources. */
#include <gsl/gsl_cdf.h>
#include <math.h>

#include "estimators.h"

size_t lbmc_mser(const double *y, size_t m, size_t batch, size_t cap_groups, int *near_cap)
{
  size_t g = batch ? m / batch : 0, cap = g / 2, best = 0;
  double best_val = INFINITY, sum = 0, sum2 = 0, shift = 0;
  if (near_cap) *near_cap = 0;
  if (g < 2) return 0;
  if (cap_groups > 0 && cap_groups < cap) cap = cap_groups;
  /* suffix sums of the group means (shifted by the last one, against cancellation) make
   * every MSER(d) O(1); d runs downwards, so "<=" keeps the smallest d among ties */
  for (size_t k = 0; k < batch; k++) shift += y[(g - 1) * batch + k] / (double)batch;
  for (size_t d = g; d-- > 0;) {
    double z = 0, cnt = (double)(g - d), mean, ss;
    for (size_t k = 0; k < batch; k++) z += y[d * batch + k];
    z = z / (double)batch - shift;
    sum += z;
    sum2 += z * z;
    if (d > cap) continue;
    mean = sum / cnt;
    ss = sum2 - cnt * mean * mean;
    if ((ss < 0 ? 0 : ss) / (cnt * cnt) <= best_val) {
      best_val = (ss < 0 ? 0 : ss) / (cnt * cnt);
      best = d;
    }
  }
  if (near_cap && cap >= 1) *near_cap = (double)best > 0.8 * (double)cap;
  return batch * best;
}

void lbmc_growth_acc_init(lbmc_growth_acc *a, size_t units, double c)
{
  a->units = units;
  a->n = (double)units;
  a->c = c;
  a->sy = a->sx = a->dbar = a->r = a->ssr = a->ssd = 0;
}

void lbmc_growth_acc_add1(lbmc_growth_acc *a, const double *q, double arrivals)
{
  a->sy += q[3] - q[2];
  a->sx += arrivals;
  a->dbar += ((q[3] - q[2]) - a->c * (q[2] - q[1])) / a->n;
}

void lbmc_growth_acc_turn(lbmc_growth_acc *a)
{
  a->r = a->sy / a->sx; /* customers accumulated per arrival: a ratio of sums (delta method) */
}

void lbmc_growth_acc_add2(lbmc_growth_acc *a, const double *q, double arrivals)
{
  const double e = (q[3] - q[2]) - a->r * arrivals, d = (q[3] - q[2]) - a->c * (q[2] - q[1]);
  a->ssr += e * e;
  a->ssd += (d - a->dbar) * (d - a->dbar);
}

void lbmc_growth_acc_test(const lbmc_growth_acc *a, double alpha, double g_min, lbmc_growth *out)
{
  const double n = a->n, r = a->r;
  double t;
  out->growth = out->growth_lower = out->decel = out->decel_lower = NAN;
  out->proven = 0;
  if (a->units < 2 || !(a->sx > 0)) return;
  t = gsl_cdf_tdist_Qinv(alpha, n - 1); /* one-sided */
  out->growth = r;
  out->growth_lower = r - t * sqrt(a->ssr / (n * (n - 1))) / (a->sx / n);
  out->decel = a->dbar;
  out->decel_lower = a->dbar - t * sqrt(a->ssd / (n * (n - 1)));
  out->proven = out->growth_lower > g_min && out->decel_lower > 0;
}

void lbmc_growth_test(const double *nbar, const double *arrivals, size_t units, size_t stride,
                      double alpha, double c, double g_min, lbmc_growth *out)
{
  lbmc_growth_acc a;
  lbmc_growth_acc_init(&a, units, c);
  for (size_t i = 0; i < units; i++)
    lbmc_growth_acc_add1(&a, nbar + i * stride, arrivals[i * stride]);
  lbmc_growth_acc_turn(&a);
  for (size_t i = 0; i < units; i++)
    lbmc_growth_acc_add2(&a, nbar + i * stride, arrivals[i * stride]);
  lbmc_growth_acc_test(&a, alpha, g_min, out);
}
