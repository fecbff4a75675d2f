/* Private: the ground floor of the point module (point.c, point_checks.c, point_pairs.c,
 * point_reduce.c, point_transient.c): the constants of the verdict's tests and of what
 * each replica keeps, and the small helpers every part uses to write the verdict's
 * reason, an estimate entry and its work space. It depends on no other part of the
 * module, so that the calls among the parts run one way. */
#ifndef LBMC_POINT_VERDICT_H
#define LBMC_POINT_VERDICT_H

#include <stddef.h>

#include "../stats/estimators.h"
#include "lbmc/point.h"

/** Equal parts of a replica's measured period kept for the tests of the verdict: halves
 *  and quarters are unions of them, and their lag-1 correlation says whether the replicas
 *  are short against the relaxation time. */
#define LBMC_PARTS 8
/** Quarters of the measured period (the drift test's units and a replica's own growth),
 *  each LBMC_PARTS_PER_QUARTER consecutive parts. */
#define LBMC_QUARTERS          4
#define LBMC_PARTS_PER_QUARTER (LBMC_PARTS / LBMC_QUARTERS)
/** Fields of a part: its time, integral of customers in the system, arrivals. */
enum { LBMC_PART_LEN, LBMC_PART_AREA, LBMC_PART_ARRIVALS, LBMC_PART_FIELDS };
/** Finer parts of a replica's measured period (at most; one segment each when it has
 *  fewer segments): the series behind its relaxation time (batch means of growing size). */
#define LBMC_FINE_PARTS 64

/* ---- the tests of the verdict (docs/model.md, "Verdicts"; constants named once; the
 * levels and limits that results files describe are in lbmc/point.h) ---- */

/** A not-stationary point is suggested a run this many times longer. */
#define LBMC_SUGGEST_FACTOR 4
/** A point with no customers is suggested a run with about this many arrivals. */
#define LBMC_SUGGEST_ARRIVALS 100

/* The relaxation-time rules (docs/model.md, "Relaxation time"): tau_u is the upper 90%
 * bound of the integrated autocorrelation time of the customers in the system. */
/** Self-consistent window of the estimate: a reading at batches of at least this many tau
 *  (corrected for their length) is used. */
#define LBMC_RELAX_WINDOW 2.0
/** Level of tau_u, the bound the rules use. */
#define LBMC_RELAX_LEVEL 0.90
/** Replicas (R >= 2): each measured period at least this many tau_u long ... */
#define LBMC_RELAX_MIN_TAUS 6.0
/** ... and n_eff = R T / (2 tau_u), the effective number of independent observations
 *  behind the mean, at least this, ... */
#define LBMC_RELAX_MIN_EFFECTIVE 10.0
/** ... and at least this times the squared skewness g of the customers in the system
 *  (its upper reading): the time average over T of a queue in heavy traffic has skewness
 *  about 4.75 g sqrt(tau / T) (M/M/1, g = 2: 9.5 sqrt(tau / T), measured) and a mean of R
 *  of them 1 / sqrt(R) of that; a t interval from skewed means misses on the low side
 *  (Hall 1987), 91% at n_eff = 160 and 94-95% at 300-600 (M/M/1 at rho = 0.95, measured;
 *  docs/model.md): n_eff >= 100 g^2 keeps the mean's skewness below about 0.35. */
#define LBMC_RELAX_SKEW_EFFECTIVE 100.0
/** One replica: its batches at least this many tau_u long (and at least 8 of them). */
#define LBMC_RELAX_BATCH_TAUS 10.0
/** The transient the start may leave (lbmc_transient_bound with the estimated relaxation
 *  time), over the standard error of the mean customers in the system: a bias of a quarter
 *  standard error costs a 95% interval 0.4% of coverage. */
#define LBMC_RELAX_BIAS_SE 0.25

/** Append a clause to the verdict's reason ("; " between clauses). */
void lbmc_point_reason(lbmc_verdict *v, const char *fmt, ...);

/** Store interval iv as entry k of the estimates est. */
void lbmc_point_put(lbmc_estimates *est, size_t k, const lbmc_interval *iv);

/** A work space of at least n doubles in *work (*len of them now; grown, its contents
 *  lost, when shorter). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_work(double **work, size_t *len, size_t n);

#endif
