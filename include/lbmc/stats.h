/* Output analysis: MSER-5 warm-up truncation, Student-t intervals, a least-squares
 * slope, and the statuses of a point's verdict. Pure functions on caller-owned arrays;
 * none is collective (docs/model.md, "Estimation"). The estimators of a point are in
 * lbmc/point.h, built on src/stats/estimators.h. */
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
  LBMC_STATUS_PRECISION_NOT_MET = 2,
  LBMC_STATUS_NOT_STATIONARY = 3 /* the data cannot tell: run longer (numbers kept, marked) */
} lbmc_status;
#define LBMC_STATUSES 4

/** Text of a status: "ok", "unstable", "precision_not_met", "not_stationary". Which
 *  status a point gets, and why: lbmc/point.h. */
const char *lbmc_status_name(lbmc_status s);

#ifdef __cplusplus
}
#endif
#endif
