/* Simulation of replicas and their steady-state estimates (SPEC section 4).
 *
 * A replica starts empty at time 0 from its own random streams (numbered from
 * (point, replica, purpose) and the seed, see lbmc/rng.h), runs a warm-up that is
 * discarded, then a measured period cut into `batches` batch means. Estimates of a
 * replica are ratio estimators over its whole measured period (lbmc/metrics.h);
 * across replicas the estimate is the mean with a Student-t interval; with one
 * replica the interval comes from its batch means.
 */
#ifndef LBMC_SIM_H
#define LBMC_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "lbmc/error.h"
#include "lbmc/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  LBMC_STATUS_OK = 0,
  LBMC_STATUS_UNSTABLE = 1,
  LBMC_STATUS_PRECISION_NOT_MET = 2
} lbmc_status;

/** Text of a status: "ok", "unstable", "precision_not_met". */
const char *lbmc_status_name(lbmc_status s);

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

/** Most events (arrivals plus departures) a replica may be expected to simulate: counts
 *  are summed in doubles, exact up to 2^53; 2^50 leaves a factor 8 of margin. */
#define LBMC_MAX_EVENTS 1125899906842624.0

/** Check that a replica of model m under o is expected to simulate at most
 *  LBMC_MAX_EVENTS events (about 2 lambda n (warmup + time)); `where` prefixes the
 *  message. Errors: LBMC_ERR_LIMIT. */
lbmc_err lbmc_run_check_size(const lbmc_model *m, const lbmc_run_options *o, const char *where);

/** Ticks (sub-intervals recorded for warm-up detection and batching) per batch. */
#define LBMC_TICKS_PER_BATCH 10

/** The outcome of one replica. Arrays are caller-owned. */
typedef struct {
  lbmc_status status;   /* LBMC_STATUS_OK or LBMC_STATUS_UNSTABLE */
  char reason[192];     /* why unstable, "" otherwise */
  double warmup;        /* warm-up time used (chosen by MSER-5 with warmup_auto) */
  int64_t events;       /* arrivals plus departures in the measured period */
  double cpu_seconds;   /* CPU time of the measured period */
  double sim_time;      /* measured time actually used */
  double growth;        /* the smallest of the three increases of the time-average
                           customers in the system from one quarter of the measured
                           period to the next, each per customer admitted in the later
                           quarter: about the net fraction of arrivals accumulating
                           (> 0 in every quarter only while the system fills up) */
  double *values;       /* in: array of lbmc_metric_total(J, K); out: the estimates
                           (NaN when unstable) */
  double *batch_values; /* in: NULL or array of batches x lbmc_metric_total(J, K);
                           out: the batch means, row b = batch b */
} lbmc_replica_result;

typedef struct lbmc_replica_ lbmc_replica;

/** Workspace for replicas of one model (set up) under options o: the engine and the
 *  tick buffers, reused by every lbmc_replica_run. The model and options must outlive
 *  it. Errors: LBMC_ERR_MEMORY, LBMC_ERR_ARG (options). */
lbmc_err lbmc_replica_create(const lbmc_model *m, const lbmc_run_options *o, lbmc_replica **r);
void lbmc_replica_destroy(lbmc_replica **r);

/** A function called after every tick of a replica (10 x batches times per replica),
 *  e.g. to serve MPI requests or to notice a signal; returning non-zero abandons the
 *  replica, which then returns LBMC_ERR_INTERRUPTED (without printing anything).
 *  NULL (the default) for none. */
void lbmc_replica_set_monitor(lbmc_replica *r, int (*monitor)(void *ctx), void *ctx);

/** Run replica `replica` (0-based, < replicas_max) of grid point `point` with the job
 *  seed (0 .. LBMC_SEED_MAX). Deterministic: the same arguments give bit-identical
 *  results. An unstable system is not an error: res->status says so.
 *  Errors: LBMC_ERR_LIMIT (stream numbers), LBMC_ERR_RNG, LBMC_ERR_MEMORY,
 *  LBMC_ERR_INTERRUPTED (the monitor asked to stop). */
lbmc_err lbmc_replica_run(lbmc_replica *r, long point, long replica, long replicas_max, long seed,
                          lbmc_replica_result *res);

/** Whether a point is unstable, from its R replicas' results (see lbmc_run_options):
 *  - `surely` (lbmc_model_surely_unstable): rho >= 1 and no finite buffer;
 *  - a replica hit the customer cap (replica_unstable[r] == 1);
 *  - in most replicas (more than half) growth is at least runaway_fraction: the
 *    customers in the system rose steadily, quarter after quarter.
 *  Arrays: R values each. Writes the reason (len bytes) and returns 1 if unstable. */
int lbmc_point_unstable(const lbmc_run_options *o, int surely, double rho, long R,
                        const int8_t *replica_unstable, const double *growth, char *reason,
                        size_t len);

/** 1 if the model is unstable for certain: rho >= 1 with every buffer unlimited. */
int lbmc_model_surely_unstable(const lbmc_model *m);

/** Combine replicas into estimates. values: R x total (row = replica); with R = 1,
 *  batch_values (batches x total) give the interval instead. Outputs have `total`
 *  entries each. Any unstable replica makes every output NaN. */
void lbmc_estimate(const double *values, long R, const double *batch_values, long batches,
                   size_t total, double level, double *mean, double *half_width, double *std_err);

#ifdef __cplusplus
}
#endif
#endif
