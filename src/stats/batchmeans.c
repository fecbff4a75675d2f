/* Batch means that check themselves: von Neumann's test of lag-1 correlation and the
 * LBATCH-style merging of adjacent batches until the test passes (or the interval is
 * flagged). See estimators.h for the rules and their sources. */
#include <gsl/gsl_cdf.h>
#include <math.h>

#include "estimators.h"

/* C statistic and p-value of values v_i = a_i - r c_i (c = NULL: v_i = a_i), i < b. */
static double lbmc_vn_stat(const double *a, const double *c, double r, size_t b, size_t stride,
                           double *p_value)
{
  double mean = 0, ss = 0, sd = 0, prev = 0, C, sigma;
  *p_value = 1;
  if (b < 3) return 0;
  for (size_t i = 0; i < b; i++) mean += (a[i * stride] - (c ? r * c[i * stride] : 0)) / (double)b;
  for (size_t i = 0; i < b; i++) {
    double v = a[i * stride] - (c ? r * c[i * stride] : 0);
    ss += (v - mean) * (v - mean);
    if (i > 0) sd += (v - prev) * (v - prev);
    prev = v;
  }
  if (!(ss > 0)) return 0; /* all equal: no evidence of correlation */
  C = 1 - sd / (2 * ss);
  sigma = sqrt((double)(b - 2) / ((double)b * (double)b - 1));
  *p_value = gsl_cdf_ugaussian_Q(C / sigma);
  return C;
}

double lbmc_von_neumann(const double *e, size_t b, size_t stride, double *p_value)
{
  return lbmc_vn_stat(e, NULL, 0, b, stride, p_value);
}

void lbmc_batch_rule_default(lbmc_batch_rule *rule)
{
  rule->max_batches = 32;
  rule->min_batches = 8;
  rule->beta = 0.10;
}

/* Merge adjacent pairs of the k batches in place (an odd one out joins the last pair). */
static size_t lbmc_merge_pairs(double *wy, double *wx, size_t k)
{
  size_t h = k / 2;
  for (size_t i = 0; i < h; i++) {
    wy[i] = wy[2 * i] + wy[2 * i + 1];
    wx[i] = wx[2 * i] + wx[2 * i + 1];
  }
  if (k % 2) {
    wy[h - 1] += wy[k - 1];
    wx[h - 1] += wx[k - 1];
  }
  return h;
}

size_t lbmc_batch_merge(const double *y, const double *x, size_t b, size_t stride,
                        const lbmc_batch_rule *rule, double *wy, double *wx, unsigned *flags)
{
  size_t k = b;
  for (size_t i = 0; i < b; i++) {
    wy[i] = y[i * stride];
    wx[i] = x[i * stride];
  }
  while (k > rule->max_batches && k >= 2) k = lbmc_merge_pairs(wy, wx, k);
  while (k >= 3 && k >= rule->min_batches) {
    double sy = 0, sx = 0, p;
    for (size_t i = 0; i < k; i++) sy += wy[i], sx += wx[i];
    if (!(sx > 0)) break; /* no observations: nothing to test */
    lbmc_vn_stat(wy, wx, sy / sx, k, 1, &p);
    if (p >= rule->beta) break;
    if (k / 2 < rule->min_batches) {
      *flags |= LBMC_IV_CORRELATED;
      break;
    }
    k = lbmc_merge_pairs(wy, wx, k);
  }
  return k;
}
