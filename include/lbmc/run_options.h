/* The run settings of a replica (warm-up, measured time, batches, confidence, tail
 * levels, runaway cap), their defaults and their checks: below the simulator, so
 * that job files, the command line and the estimators judge a setting alike.
 * lbmc/sim.h includes this header. */
#ifndef LBMC_RUN_OPTIONS_H
#define LBMC_RUN_OPTIONS_H

#include <stddef.h>

#include "lbmc/error.h"
#include "lbmc/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The engines, one line each, in the order `--engine auto` tries them:
 *  X(KIND, name) for the table `lbmc_engine_<name>` (src/engine/<its file>.c), whose
 *  kind is LBMC_ENGINE_<KIND>. Everything else about an engine (its --engine name, help,
 *  cost, what it applies to) is in its table; names, choices and help are read from
 *  the registry (lbmc/engines.h). Adding an engine: its file and one line here. */
#define LBMC_ENGINE_LIST(X)                                                                        \
  X(OCCUPANCY, occupancy)       /* counts of servers per pool and level (docs/occupancy.md) */     \
  X(OCCUPANCY_PH, occupancy_ph) /* the same per level and phase: phase-type service */             \
  X(SERVERS, servers)           /* every server, exponential service: the Markov race */           \
  X(LEAN, lean)                 /* every server, any service at constant speeds: a calendar queue */ \
  X(GENERAL, general)           /* every server, any service: an event calendar */

/** The engine that simulates a replica (docs/model.md, "Engines"; run.engine,
 *  --engine): 0 for auto, else 1 + the engine's position in LBMC_ENGINE_LIST (a test
 *  build registers one more, LBMC_ENGINE_LISTED). Names: lbmc_engine_kind_name. */
typedef enum {
  LBMC_ENGINE_AUTO = 0, /* the first engine of the list that applies */
#define LBMC_X_ENGINE_KIND(KIND, name) LBMC_ENGINE_##KIND,
  LBMC_ENGINE_LIST(LBMC_X_ENGINE_KIND)
#undef LBMC_X_ENGINE_KIND
      LBMC_ENGINE_LISTED /* the number of kinds above */
} lbmc_engine_kind;

/** How a replica starts (run.init, --init). */
typedef enum {
  LBMC_INIT_EMPTY = 0,     /* every server idle at time 0 */
  LBMC_INIT_MEANFIELD = 1, /* counts rounded from the mean-field fixed point (occupancy
                             engine; docs/occupancy.md); other engines start empty */
  LBMC_INIT_TAIL = 2       /* an explicit state: per pool the fractions F_k of its servers
                              holding >= k customers (init_tail; occupancy engine) */
} lbmc_init_kind;
/** "empty", "meanfield", "tail", indexed by lbmc_init_kind. */
extern const char *const lbmc_init_kind_names[3];

/** Most levels k = 1.. of an explicit start (--init tail:F1,F2,...) per pool. */
#define LBMC_INIT_TAIL_LEVELS 64
/** Most observation times of a transient run (--transient T0:T1:DT). */
#define LBMC_TRANSIENT_MAX_TIMES 100001

/** Run settings of a replica. Times are in the model's time unit. */
typedef struct {
  double warmup;           /* discarded time before the measured period (>= 0) */
  int warmup_auto;         /* 1: MSER-5 chooses the warm-up within `time` (at most half) */
  double time;             /* measured time (with warmup_auto: the whole run) */
  long batches;            /* batch means per replica, >= 2 */
  double confidence;       /* level of the intervals, 0 < confidence < 1 */
  long tail_k;             /* K: tail levels k = 1..K, >= 1 */
  long long max_customers; /* runaway cap on customers in the system, at most
                              LBMC_MAX_CUSTOMERS; 0 = default 1000 n + 100000, and at most
                              2^26 for the engines that hold customers one by one */
  int engine;              /* an lbmc_engine_kind: LBMC_ENGINE_AUTO, or one engine (e.g.
                              LBMC_ENGINE_GENERAL to cross-check the servers engine);
                              lbmc_engine_kind_name gives its name */
  int init;                /* an lbmc_init_kind */
  int init_levels;         /* LBMC_INIT_TAIL: levels given (the longest pool's list) */
  double init_tail[LBMC_MAX_POOLS][LBMC_INIT_TAIL_LEVELS]; /* LBMC_INIT_TAIL: F_{k+1} of pool
                              j at [j][k], non-increasing in k, 0 past the pool's list; a
                              single list applies to every pool */
  int init_pools;          /* LBMC_INIT_TAIL: lists given (1: one for every pool) */
  double transient[3];     /* T0, T1, DT of a transient run (--transient); DT 0: a
                              steady-state run */
  double runaway_fraction; /* a point is unstable if in most replicas the time-average
                              customers in the system grew from each quarter of the
                              measured period to the next by more than this fraction
                              of the customers admitted (see lbmc_point_unstable) */
  int pairs;               /* 1: record the pair statistics (run.pairs, --pairs): the joint
                              law of two servers' queue lengths lumped at tail_k, and the
                              metrics pair_tv, pair_corr (docs/model.md) */
} lbmc_run_options;

/** Defaults: warmup 100, time 1000, batches 20, confidence 0.95, tail_k 10,
 *  max_customers 0 (default cap), engine auto, init empty, runaway_fraction 0.02,
 *  pairs off. */
void lbmc_run_options_default(lbmc_run_options *o);

/** Check every setting; `where` prefixes the key names in the messages: "--" names
 *  command-line flags (and writes tail_k as --tail-k), "jobs/x.yaml: " a job file.
 *  Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_run_options_check(const lbmc_run_options *o, const char *where);

/** Observation times of a transient run, T0 + i DT for i = 0 .. count - 1 (the last is
 *  T1); 0 for a steady-state run. */
long lbmc_transient_times(const lbmc_run_options *o);
/** Observation time i (0 .. lbmc_transient_times - 1) of a transient run: T0 + i DT, the
 *  last exactly T1 (the replica driver ends a tick there, the point and the results file
 *  label the estimates with it). */
double lbmc_transient_time(const lbmc_run_options *o, long i);

/** Parse an --init value ("empty", "meanfield", "tail:F1,F2,...[;F1,...]") into o->init and
 *  the tail start; `where` names the flag or key in messages. Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_run_options_parse_init(const char *where, const char *text, lbmc_run_options *o);
/** Parse a --transient value "T0:T1:DT" into o->transient. Errors: LBMC_ERR_ARG (T0 >= 0,
 *  T1 > T0, DT > 0 dividing T1 - T0, at most LBMC_TRANSIENT_MAX_TIMES times). */
lbmc_err lbmc_run_options_parse_transient(const char *where, const char *text, lbmc_run_options *o);

/** The name of run option `name` ("max_customers") as a message writes it after the
 *  prefix `where` of lbmc_run_options_check: "--max-customers" for "--", else
 *  "<where>max_customers"; into key[len], which is returned. */
const char *lbmc_run_option_key(char *key, size_t len, const char *where, const char *name);

#ifdef __cplusplus
}
#endif
#endif
