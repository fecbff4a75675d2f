/* Private: the pace model of lbmc run's ETA and expected unit times (runner_pace.c): the
 * wall time of a batch of k work units of total work x (n x simulated time x 2^doubling)
 * is modelled as a k + b x: a fixed cost per unit (set-up, reduction, messages) plus a
 * cost proportional to its work, fitted by least squares over the batches finished so
 * far. Pure arithmetic: no clock, no MPI. */
#ifndef LBMC_PACE_H
#define LBMC_PACE_H

/* The sums of the least-squares fit (zero-initialised: no batch yet). */
typedef struct {
  double n;          /* batches */
  double kk, kx, xx; /* sums of k^2, k x, x^2 */
  double ky, xy, yy; /* sums of k y, x y, y^2 (y: wall seconds) */
} lbmc_pace_fit;

/* The fixed cost per unit is used only when the fit tells it from zero: at least
 * LBMC_PACE_MIN_BATCHES batches, units of different work (not all k and x in
 * proportion), and a above LBMC_PACE_Z of its standard errors; else a = 0. */
#define LBMC_PACE_MIN_BATCHES 3
#define LBMC_PACE_Z           2.0

/** A finished batch of `units` (>= 1) units of total work `work` (>= 0) that took
 *  `seconds` of wall time. */
void lbmc_pace_fit_add(lbmc_pace_fit *f, double units, double work, double seconds);

/** The fitted model: *a seconds per unit (>= 0) and *b seconds per unit of work (>= 0).
 *  Least squares of seconds on (units, work) without intercept; a is 0 when the fit
 *  cannot tell it from 0 (see LBMC_PACE_Z), and then b = sum(x y) / sum(x^2), the
 *  proportional model; a negative b (more work, less time) gives b = 0 and a = the
 *  mean time per unit. Returns 1 when the fit has data (any batch of work or units with
 *  a positive sum of squares), 0 when not (*a = *b = 0). */
int lbmc_pace_fit_solve(const lbmc_pace_fit *f, double *a, double *b);

/** The ETA, seconds: elapsed wall time `elapsed` scaled by the model's time of the work
 *  left (units_left units of work_left) over its time of the work done by this run
 *  (units_done units of work_done), a k + b x each; NAN when nothing done has a modelled
 *  time yet. With a = 0 it is elapsed x work_left / work_done. */
double lbmc_pace_eta(double a, double b, double elapsed, double units_left, double work_left,
                     double units_done, double work_done);

#endif
