/* Simulation of replicas (docs/model.md, "Simulation"): the replica driver.
 *
 * A replica starts empty at time 0 (or, with init meanfield, near the mean-field
 * fixed point) from its own random streams (numbered from (scenario, replica, purpose)
 * and the seed, see lbmc/rng.h), runs a warm-up that is discarded, then a measured
 * period recorded in segments of raw sums; it writes one replica record. Its point's
 * estimates and verdict come from the records of its replicas (lbmc/point.h).
 */
#ifndef LBMC_SIM_H
#define LBMC_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "lbmc/error.h"
#include "lbmc/model.h"
#include "lbmc/run_options.h"
#include "lbmc/stats.h"
#include "lbmc/types.h"

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

/** Name of the engine that will simulate model m (set up) under o ("occupancy",
 *  "servers", "general"; static): o->engine if it applies, or with auto the first of
 *  occupancy, servers, general that applies; NULL if none, and why[len] then says why
 *  ("occupancy cannot simulate this model (lwl(2) reads workloads); engines that apply:
 *  general"). Prints nothing. */
const char *lbmc_run_engine(const lbmc_model *m, const lbmc_run_options *o, char *why, size_t len);

/** lbmc_run_engine as a check (docs/model.md, "Engines"): *engine (if not NULL) gets
 *  the engine's name. `where` prefixes the key names as for lbmc_run_options_check: "--" for
 *  command-line flags, "jobs/x.yaml: point 3: run." for a job's point.
 *  Errors: LBMC_ERR_ARG naming the engine key, the engine asked for, why it does not
 *  apply (the policy, the service, n) and the engines that do; or naming max_customers
 *  when it exceeds what the engine holds. */
lbmc_err lbmc_run_check_engine(const lbmc_model *m, const lbmc_run_options *o, const char *where,
                               const char **engine);

/** The measured period of a replica (with warmup auto: the whole run) is recorded in
 *  segments, LBMC_SEGMENTS_PER_BATCH per batch and at most LBMC_MAX_SEGMENTS, each of
 *  LBMC_TICKS_PER_SEGMENT ticks (the engine's steps between two calls of the monitor).
 *  A warm-up truncation is a whole number of segments (MSER over segments is MSER-5 over
 *  ticks), batches are unions of segments. */
#define LBMC_TICKS_PER_SEGMENT  5
#define LBMC_SEGMENTS_PER_BATCH 2
#define LBMC_MAX_SEGMENTS       1024
/** Quantile groups of a one-replica point (its units for quantile intervals). */
#define LBMC_MAX_QUANTILE_GROUPS 64

/** Segments of a replica run under o: LBMC_SEGMENTS_PER_BATCH x batches, at most
 *  LBMC_MAX_SEGMENTS. */
long lbmc_run_segments(const lbmc_run_options *o);

/** Doubles of one segment of a replica record of model m (set up) under o: the tick
 *  record's fixed sums (src/core/ticks.h: J pools, o->tail_k levels), then the blocks
 *  of the observers o asks for (src/observers/). */
size_t lbmc_run_segment_width(const lbmc_model *m, const lbmc_run_options *o);

/** The time scale of a model's histograms: 1 / sum_j beta_j mu_j(L_j), the mean
 *  service time of a capacity-weighted server at its saturated speed (time). */
double lbmc_model_time_scale(const lbmc_model *m);

typedef struct lbmc_replica_ lbmc_replica;

/** Workspace for replicas of one model (set up) under options o: the engine, the
 *  segments and the histograms, reused by every lbmc_replica_record. The model and
 *  options must outlive it. Errors: LBMC_ERR_MEMORY, LBMC_ERR_ARG (options). */
lbmc_err lbmc_replica_create(const lbmc_model *m, const lbmc_run_options *o, lbmc_replica **r);
void lbmc_replica_destroy(lbmc_replica **r);

/** Name of the engine that runs the replicas ("occupancy", "servers", "general"). */
const char *lbmc_replica_engine(const lbmc_replica *r);
/** "" when replicas start as o->init asks; otherwise why not, in words (init meanfield
 *  with an engine that has no mean-field start, or a mean-field ODE that does not
 *  settle: replicas then start empty). */
const char *lbmc_replica_init_note(const lbmc_replica *r);

/** A function called after every tick of a replica (LBMC_TICKS_PER_SEGMENT per segment,
 *  and at most about 1000 times during a fixed warm-up) and every few thousand arrivals
 *  inside the engine (LBMC_TALLY_POLL_ARRIVALS arrivals), e.g. to serve MPI requests or to notice
 *  a signal; returning non-zero abandons the replica, which then returns
 *  LBMC_ERR_INTERRUPTED (without printing anything). NULL (the default) for none. */
void lbmc_replica_set_monitor(lbmc_replica *r, int (*monitor)(void *ctx), void *ctx);

/** A work unit: one replica of one point, and how to number and run it. */
typedef struct {
  long point;        /* grid index: names the record (0 for lbmc sim) */
  long scenario;     /* numbers the random streams: the point without its routing axes,
                        so the policies of a scenario share them (lbmc_job_point_scenario) */
  long replica;      /* 0-based, < replicas_max */
  long replicas_max; /* most replicas of any point of the run (the stream numbering) */
  long seed;         /* 0 .. LBMC_SEED_MAX */
  int doubling;      /* sequential mode's doublings: the run's time is o->time x 2^doubling */
  int one_replica;   /* the point's first round is one replica: keep min(batches, 64)
                        quantile groups, the units of its batch-means intervals */
} lbmc_unit;

/** Run unit u: its streams numbered from (u->scenario, u->replica, purpose) and seeded
 *  with u->seed (lbmc/rng.h), an empty system at time 0, a fixed warm-up discarded (none
 *  with warmup auto), then the measured period of o->time x 2^doubling in segments; and
 *  write its replica record (src/sim/record.h: raw sums per segment and the customers'
 *  sojourn and waiting times per quantile group; the bytes lbmc_point_add reads, that
 *  travel to rank 0 and into checkpoints). A replica whose customers exceed the cap stops
 *  there; its record says so (status unstable), which is not an error. *record (8-byte
 *  aligned) is owned by r and valid until its next run; *size bytes. Deterministic: the
 *  same unit gives the same bytes, but the segments' CPU seconds (measured, not
 *  simulated; no estimate uses them). Errors: LBMC_ERR_LIMIT (stream numbers), LBMC_ERR_ARG,
 *  LBMC_ERR_RNG, LBMC_ERR_MEMORY, LBMC_ERR_INTERRUPTED (the monitor asked to stop). */
lbmc_err lbmc_replica_record(lbmc_replica *r, const lbmc_unit *u, const void **record,
                             size_t *size);

#ifdef __cplusplus
}
#endif
#endif
