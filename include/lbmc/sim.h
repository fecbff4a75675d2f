/* Simulation of replicas and their steady-state estimates (docs/model.md, "Simulation" and
 * "Estimation").
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
#include "lbmc/run_options.h"
#include "lbmc/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif
