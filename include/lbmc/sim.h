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
 *  LBMC_MAX_EVENTS events (about 2 lambda n (warmup + time)), and that the memory it will
 *  take at its start (lbmc_run_memory) fits in this machine's physical memory; `where`
 *  prefixes the message, which names the memory. Errors: LBMC_ERR_LIMIT. */
lbmc_err lbmc_run_check_size(const lbmc_model *m, const lbmc_run_options *o, const char *where);

/** Most doubles the pair statistics may add to a tick record (run.pairs): per pool
 *  (K + 1)(K + 2) / 2, per two pools (K + 1)^2, for K = tail_k. */
#define LBMC_PAIRS_MAX_WIDTH 65536

/** With o->pairs, check that the pair statistics of model m fit in LBMC_PAIRS_MAX_WIDTH
 *  doubles per tick (J pools, o->tail_k levels); nothing without. `where` prefixes the
 *  key as for lbmc_run_options_check ("--" names --pairs). Errors: LBMC_ERR_LIMIT. */
lbmc_err lbmc_run_check_pairs(const lbmc_model *m, const lbmc_run_options *o, const char *where);

/** The memory a replica of model m (set up) under o will take when it starts, in bytes:
 *  the state of the engine that will simulate it (lbmc_run_engine; its per-server and
 *  per-pool arrays, the policy's per-server workspace included), and in *per_customer
 *  (not NULL) the bytes each customer in the system adds to it (0: none; the per-server
 *  engines hold waiting customers one by one). 0 if no engine applies, or the engine's
 *  state is small whatever n (occupancy). Prints nothing. */
double lbmc_run_memory(const lbmc_model *m, const lbmc_run_options *o, double *per_customer);

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

/** How far the replica running (or the last one run) is: its simulated time over the
 *  time it runs to (warm-up and measured period), in [0, 1]; 0 before the first. Cheap,
 *  for a monitor's progress line. */
double lbmc_replica_fraction(const lbmc_replica *r);

/** 1 when r's engine can start its replicas near the mean-field fixed point for r's
 *  model (run.init meanfield would not fall back to empty), else 0; r's own start is
 *  unchanged. For advice after a run from empty that did not reach its steady state.
 *  May solve the mean-field ODE (occupancy engine; kept for later replicas). */
int lbmc_replica_meanfield_applies(lbmc_replica *r);

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

/** The cost of a point's replicas, measured on the engine that will run them
 *  (lbmc_run_calibrate): the registry's nominal speeds are off by 2-7x for the per-server
 *  engines at large n (cache misses grow with n), so estimates come from a short run. */
typedef struct {
  double create_cpu;      /* CPU seconds to set up the replica workspace (engine, its start,
                             a mean-field ODE): once per point and rank; 0 when the
                             calibration did not start as the point does */
  double start_cpu;       /* CPU seconds of one replica's start (streams, state) and, for
                             a calibration that is not whole, of its share of the point's
                             reduction (about one replica's: the quantiles of long
                             queues' mixtures) */
  double reduce_cpu;      /* a whole calibration's: CPU seconds of the point's reduction,
                             once per point (its fixed part, e.g. a transient run's
                             bands, dominates a short replica's cost); else 0 */
  double cpu_per_time;    /* CPU seconds per unit of simulated time, in the calibration's
                             second half (near the steady state) */
  double events_per_time; /* events (arrivals plus departures) per unit of time, idem */
  double events;          /* events the calibration simulated (not counted anywhere) */
  const char *engine;     /* the engine measured (static) */
  int meanfield;          /* 1: the calibration started near the mean-field fixed point */
} lbmc_calibration;

/** Calibrate the cost of a replica of model m (set up) under o: a replica of the engine
 *  o chooses runs about `events` events (arrivals plus departures; a few 10^5 are
 *  enough) from the streams of replica 0 of scenario 0 with `seed`; its CPU time per
 *  unit of simulated time over the second half gives the estimate, the reduction of
 *  its record (a point of one replica) each replica's share of the point's. A run from empty
 *  whose `events` cover less than 20 time units (large n) starts near the mean-field
 *  fixed point where that engine has a start there, since the steady state's cost is
 *  what a run pays for (that start's set-up is then not counted). A replica of at most 4
 *  x `events` (about 2 lambda n (warm-up + time)) is run whole as o asks, its CPU time
 *  over its time: a system that grows (unstable at small n) costs more per event as it
 *  grows, and the runaway cap may stop it early; the reduction of its one-replica point
 *  is then charged once per point (reduce_cpu), not per replica: it is mostly fixed
 *  (a transient run at n = 10: 1 ms against 0.2 ms per replica), and charging it per
 *  replica made estimates 3-5x too high. Nothing is recorded or counted in any
 *  result. A surely unstable model costs nothing (*c zero, engine NULL). monitor (may
 *  be NULL) is polled as lbmc_replica_set_monitor's. Thread CPU time: the same thread
 *  must run it. Errors: lbmc_replica_create's, the engine's, LBMC_ERR_INTERRUPTED. */
lbmc_err lbmc_run_calibrate(const lbmc_model *m, const lbmc_run_options *o, double events,
                            long seed, int (*monitor)(void *ctx), void *ctx, lbmc_calibration *c);

/** Estimated CPU seconds of one replica under o at `doubling` from calibration c: its
 *  start plus cpu_per_time x the simulated time (fixed warm-up, none with warmup auto,
 *  plus time x 2^doubling; a transient run's end time T1). */
double lbmc_calibration_replica(const lbmc_calibration *c, const lbmc_run_options *o, int doubling);

/** Estimated CPU seconds of a point's R replicas under o at `doubling` and of its
 *  reduction: R x lbmc_calibration_replica plus c's reduce_cpu once (not the replica
 *  workspace's set-up, create_cpu, which is paid per rank). */
double lbmc_calibration_point(const lbmc_calibration *c, const lbmc_run_options *o, long R,
                              int doubling);

/** Events a calibration simulates by default (lbmc_run_calibrate's `events`). */
#define LBMC_CALIBRATION_EVENTS 3e5

#ifdef __cplusplus
}
#endif
#endif
