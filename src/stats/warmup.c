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

void lbmc_growth_test(const double *nbar, const double *arrivals, size_t units, size_t stride,
                      double alpha, double c, double g_min, lbmc_growth *out)
{
  double sy = 0, sx = 0, dbar = 0, ssr = 0, ssd = 0, n = (double)units, r, t;
  out->growth = out->growth_lower = out->decel = out->decel_lower = NAN;
  out->proven = 0;
  if (units < 2) return;
  for (size_t i = 0; i < units; i++) {
    const double *q = nbar + i * stride;
    sy += q[3] - q[2];
    sx += arrivals[i * stride];
    dbar += ((q[3] - q[2]) - c * (q[2] - q[1])) / n;
  }
  if (!(sx > 0)) return;
  r = sy / sx; /* customers accumulated per arrival: a ratio of sums (delta method) */
  for (size_t i = 0; i < units; i++) {
    const double *q = nbar + i * stride;
    double e = (q[3] - q[2]) - r * arrivals[i * stride], d = (q[3] - q[2]) - c * (q[2] - q[1]);
    ssr += e * e;
    ssd += (d - dbar) * (d - dbar);
  }
  t = gsl_cdf_tdist_Qinv(alpha, n - 1); /* one-sided */
  out->growth = r;
  out->growth_lower = r - t * sqrt(ssr / (n * (n - 1))) / (sx / n);
  out->decel = dbar;
  out->decel_lower = dbar - t * sqrt(ssd / (n * (n - 1)));
  out->proven = out->growth_lower > g_min && out->decel_lower > 0;
}
