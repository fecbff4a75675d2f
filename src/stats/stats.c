/* Output analysis on caller-owned arrays (include/lbmc/stats.h): MSER-5 warm-up
 * truncation, Student-t quantiles and intervals, a least-squares slope
 * (docs/model.md, "Estimation"). */
#include "lbmc/stats.h"

#include "estimators.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

size_t lbmc_mser5(const double *y, size_t m) { return lbmc_mser(y, m, 5, 0, NULL); }

double lbmc_t_quantile(double level, long dof)
{
  return gsl_cdf_tdist_Pinv(0.5 + 0.5 * level, (double)dof);
}

void lbmc_mean_interval(const double *x, size_t r, size_t stride, double level, double *mean,
                        double *std_err, double *half_width)
{
  double sum = 0, ss = 0, mu;
  for (size_t i = 0; i < r; i++) sum += x[i * stride];
  if (r == 0 || isnan(sum)) {
    *mean = *std_err = *half_width = NAN;
    return;
  }
  mu = sum / (double)r;
  *mean = mu;
  if (r < 2) {
    *std_err = *half_width = NAN;
    return;
  }
  for (size_t i = 0; i < r; i++) ss += (x[i * stride] - mu) * (x[i * stride] - mu);
  *std_err = sqrt(ss / (double)(r - 1) / (double)r);
  *half_width = lbmc_t_quantile(level, (long)r - 1) * *std_err;
}

void lbmc_linear_fit(const double *y, size_t m, double *b, double *s)
{
  double xm = 0.5 * (double)(m - 1), ym = 0, sxx = 0, sxy = 0, rss = 0, a;
  for (size_t i = 0; i < m; i++) ym += y[i];
  ym /= (double)m;
  for (size_t i = 0; i < m; i++) {
    sxx += ((double)i - xm) * ((double)i - xm);
    sxy += ((double)i - xm) * (y[i] - ym);
  }
  *b = sxy / sxx;
  a = ym - *b * xm;
  for (size_t i = 0; i < m; i++) {
    double e = y[i] - a - *b * (double)i;
    rss += e * e;
  }
  *s = m > 2 ? sqrt(rss / (double)(m - 2)) : 0;
}
