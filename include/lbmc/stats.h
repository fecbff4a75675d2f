/* Output analysis: warm-up truncation, batch means, confidence intervals, the
 * combination of replicas into estimates and the verdict on a point (status,
 * instability). Pure functions on caller-owned arrays; none is collective
 * (docs/model.md, "Estimation" and "Unstable systems"). */
#ifndef LBMC_STATS_H
#define LBMC_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "lbmc/error.h"
#include "lbmc/run_options.h"

#ifdef __cplusplus
extern "C" {
#endif

/** MSER-5 truncation (White, Cobb & Spratt, "A comparison of five steady-state
 *  truncation heuristics for simulation", Proc. Winter Simulation Conf. 2000):
 *  the m observations y[0..m) are averaged in consecutive groups of 5 (a trailing
 *  partial group is dropped), Z_1..Z_b; the truncation d* (in groups) minimises
 *  MSER(d) = sum_{i>d} (Z_i - mean_{i>d} Z)^2 / (b - d)^2 over 0 <= d <= b/2.
 *  Returns the number of observations to delete, 5 d*. m < 10 gives 0. */
size_t lbmc_mser5(const double *y, size_t m);

/** Two-sided Student-t quantile t_{dof, (1+level)/2} (GSL), dof >= 1, 0 < level < 1. */
double lbmc_t_quantile(double level, long dof);

/** Mean, standard error and confidence half-width of x[0], x[stride], ...,
 *  x[(r-1)*stride] (r values) at the given level, with Student-t on r-1 degrees of
 *  freedom. Any NaN among the values gives NaN results; r = 1 gives NaN half-width
 *  and standard error. */
void lbmc_mean_interval(const double *x, size_t r, size_t stride, double level, double *mean,
                        double *std_err, double *half_width);

/** Least-squares fit of y[i] = a + b i, i = 0..m-1 (m >= 3): slope *b and the
 *  residual standard deviation *s (m-2 degrees of freedom). */
void lbmc_linear_fit(const double *y, size_t m, double *b, double *s);

typedef enum {
  LBMC_STATUS_OK = 0,
  LBMC_STATUS_UNSTABLE = 1,
  LBMC_STATUS_PRECISION_NOT_MET = 2
} lbmc_status;

/** Text of a status: "ok", "unstable", "precision_not_met". */
const char *lbmc_status_name(lbmc_status s);

/** Whether a point is unstable, from its R replicas' results (see lbmc_run_options):
 *  - `surely` (lbmc_model_surely_unstable): rho >= 1 and no finite buffer;
 *  - a replica hit the customer cap (replica_unstable[r] == 1);
 *  - in most replicas (more than half) growth is at least runaway_fraction: the
 *    customers in the system rose steadily, quarter after quarter.
 *  Arrays: R values each. Writes the reason (len bytes) and returns 1 if unstable. */
int lbmc_point_unstable(const lbmc_run_options *o, int surely, double rho, long R,
                        const int8_t *replica_unstable, const double *growth, char *reason,
                        size_t len);

/** Combine replicas into estimates. values: R x total (row = replica); with R = 1,
 *  batch_values (batches x total) give the interval instead. Outputs have `total`
 *  entries each. Any unstable replica makes every output NaN. */
void lbmc_estimate(const double *values, long R, const double *batch_values, long batches,
                   size_t total, double level, double *mean, double *half_width, double *std_err);

#ifdef __cplusplus
}
#endif
#endif
