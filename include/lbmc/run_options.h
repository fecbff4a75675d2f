/* The run settings of a replica (warm-up, measured time, batches, confidence, tail
 * levels, runaway cap), their defaults and their checks: below the simulator, so
 * that job files, the command line and the estimators judge a setting alike.
 * lbmc/sim.h includes this header. */
#ifndef LBMC_RUN_OPTIONS_H
#define LBMC_RUN_OPTIONS_H

#include "lbmc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Run settings of a replica. Times are in the model's time unit. */
typedef struct {
  double warmup;           /* discarded time before the measured period (>= 0) */
  int warmup_auto;         /* 1: MSER-5 chooses the warm-up within `time` (at most half) */
  double time;             /* measured time (with warmup_auto: the whole run) */
  long batches;            /* batch means per replica, >= 2 */
  double confidence;       /* level of the intervals, 0 < confidence < 1 */
  long tail_k;             /* K: tail levels k = 1..K, >= 1 */
  long long max_customers; /* runaway cap on customers in the system; 0 = default
                              min(1000 n + 100000, 2^26) */
  int general_engine;      /* 1: simulate with the general-service engine even when
                             service is exponential (for cross-checks); 0: automatic */
  double runaway_fraction; /* a point is unstable if in most replicas the time-average
                              customers in the system grew from each quarter of the
                              measured period to the next by more than this fraction
                              of the customers admitted (see lbmc_point_unstable) */
} lbmc_run_options;

/** Defaults: warmup 100, time 1000, batches 20, confidence 0.95, tail_k 10,
 *  max_customers 0 (default cap), runaway_fraction 0.02. */
void lbmc_run_options_default(lbmc_run_options *o);

/** Check every setting; `where` prefixes the key names in the messages: "--" names
 *  command-line flags (and writes tail_k as --tail-k), "jobs/x.yaml: " a job file.
 *  Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_run_options_check(const lbmc_run_options *o, const char *where);

#ifdef __cplusplus
}
#endif
#endif
