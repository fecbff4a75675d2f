/* Estimates of a point from its replicas: the mean over replicas with a Student-t
 * interval, or with one replica the interval of its batch means around the
 * whole-period ratio estimate (docs/model.md, "Estimation"). */
#include <math.h>

#include "lbmc/stats.h"

void lbmc_estimate(const double *values, long R, const double *batch_values, long batches,
                   size_t total, double level, double *mean, double *half_width, double *std_err)
{
  for (size_t i = 0; i < total; i++) {
    if (R == 1 && batch_values) {
      double m, se, hw;
      lbmc_mean_interval(batch_values + i, (size_t)batches, total, level, &m, &se, &hw);
      mean[i] = isnan(m) ? NAN : values[i]; /* point estimate: the whole-period ratio */
      std_err[i] = se;
      half_width[i] = hw;
    } else {
      lbmc_mean_interval(values + i, (size_t)R, total, level, &mean[i], &std_err[i],
                         &half_width[i]);
    }
  }
}
