/* Private: the dispatcher of the engines, what the replica driver calls. It picks the
 * engine of a model from the registry of engine.c (engine_type.h), owns the random
 * streams of a replica and the CPU clock, and hands the rest to the engine. Arrival
 * times come from the arrival stream alone, so they are common random numbers across
 * engines and policies. */
#ifndef LBMC_ENGINE_H
#define LBMC_ENGINE_H

#include <stdint.h>

#include "../observers/observers.h"
#include "../system/state.h"
#include "engine_type.h"
#include "lbmc/types.h"

typedef struct lbmc_engine_ lbmc_engine;

/** The engine type that simulates model m (set up): with LBMC_ENGINE_AUTO the first of
 *  the registry that applies (in the order of LBMC_ENGINE_LIST), else the one of that kind
 *  if it applies; NULL when none does. why[len] gets why the engine asked for does not
 *  apply (with auto: "name: reason" for each, "; "-separated), apply[alen] the names of
 *  every engine that does (", "-separated); either may be NULL with length 0. */
const lbmc_engine_type *lbmc_engine_choose(const lbmc_model *m, lbmc_engine_kind kind, char *why,
                                           size_t len, char *apply, size_t alen);
/** The default runaway cap of engine type t for model m: min(1000 n + 100000,
 *  t->cap_default_max). */
uint64_t lbmc_engine_default_cap(const lbmc_engine_type *t, const lbmc_model *m);

/** Allocate an engine for model m (set up) with K tail levels; the model must outlive
 *  the engine. max_customers caps the customers in the system (runaway guard); 0 for
 *  the engine's default (lbmc_engine_default_cap). kind: LBMC_ENGINE_AUTO (0) for the
 *  first engine of the registry that applies, or one engine by its kind (e.g.
 *  LBMC_ENGINE_GENERAL to cross-check the servers engine).
 *  Errors: LBMC_ERR_MEMORY; LBMC_ERR_ARG if the engine asked for cannot simulate m or
 *  max_customers exceeds what it holds. */
lbmc_err lbmc_engine_create(const lbmc_model *m, int K, uint64_t max_customers,
                            lbmc_engine_kind kind, lbmc_engine **e);
void lbmc_engine_destroy(lbmc_engine **e);

/** Start a replica: empty system at time 0, streams gennum[purpose] (LBMC_PURPOSES
 *  entries) with the seed. Errors: LBMC_ERR_RNG, LBMC_ERR_MEMORY. */
lbmc_err lbmc_engine_reset(lbmc_engine *e, const int *gennum, long seed);

/** Simulate up to time t_end and close the current tick into rec (lbmc_tick_width
 *  doubles, LBMC_TK_CPU set to 0, then the observers' blocks; NULL discards it, e.g.
 *  for the warm-up). Returns LBMC_SUCCESS also when the runaway cap was hit: check
 *  lbmc_engine_overflowed. Errors: LBMC_ERR_MEMORY; LBMC_ERR_INTERRUPTED (quietly)
 *  when the stop hook (lbmc_engine_set_stop) asked. */
lbmc_err lbmc_engine_advance(lbmc_engine *e, double t_end, double *rec);

/** CPU seconds of this thread since the last call (or the reset): the CPU clock is a
 *  system call on some machines, so the replica driver asks once per segment, not per
 *  tick. */
double lbmc_engine_cpu(lbmc_engine *e);

/** Record sojourn and waiting times into these histograms (src/stats/dhist.h) from now
 *  on; NULL stops recording. */
void lbmc_engine_set_histograms(lbmc_engine *e, lbmc_dhist *sojourn, lbmc_dhist *wait);

/** How the next resets start (o->init). Engines without a mean-field start start
 *  empty, and note[len] says so; with one whose ODE does not settle, note says why.
 *  note is "" otherwise. A tail start (LBMC_INIT_TAIL) on an engine that cannot hold it
 *  is LBMC_ERR_ARG naming the engine. Errors: LBMC_ERR_MEMORY, LBMC_ERR_ARG. */
lbmc_err lbmc_engine_set_init(lbmc_engine *e, const lbmc_run_options *o, char *note, size_t len);

/** 1 when set_init with LBMC_INIT_MEANFIELD would start e's replicas near the mean-field
 *  fixed point of its model (computed now if it was not, and kept), else 0; how the next
 *  resets start is unchanged (lbmc_engine_type.meanfield_start). */
int lbmc_engine_meanfield_start(lbmc_engine *e);

/** An empty mixture of arrival classes (stats/mixture.h, caller-owned) if the engine
 *  gives per-customer quantiles that way (occupancy), else *mix = NULL (histograms).
 *  Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_engine_mixture_create(const lbmc_engine *e, lbmc_mixture **mix);
/** Record the admitted customers' arrival classes into mix from now on (NULL: stop);
 *  nothing for engines without mixtures. */
void lbmc_engine_set_mixture(lbmc_engine *e, lbmc_mixture *mix);

/** 1 if per-customer quantiles come from Erlang mixtures (lbmc_engine_mixture_create),
 *  0 if from histograms (lbmc_engine_set_histograms): the engine type's declaration. */
int lbmc_engine_uses_mixtures(const lbmc_engine *e);
/** Attach the observers of the run (not owned; NULL: none): the engine's tally calls
 *  them at every tick close (their blocks follow the fixed part of rec) and move, and
 *  every reset calls theirs. */
void lbmc_engine_set_observers(lbmc_engine *e, lbmc_observers *obs);
/** The stop hook: polled every LBMC_TALLY_POLL_ARRIVALS arrivals inside advance; a nonzero
 *  answer ends advance with LBMC_ERR_INTERRUPTED. NULL: none. */
void lbmc_engine_set_stop(lbmc_engine *e, int (*stop)(void *ctx), void *ctx);
/** The read-only view of the engine's state (src/core/tally.h). */
const lbmc_view *lbmc_engine_view(const lbmc_engine *e);

/** The runaway cap in force (customers). */
uint64_t lbmc_engine_cap(const lbmc_engine *e);
/** 1 if the customers in the system exceeded the cap (the replica is unstable). */
int lbmc_engine_overflowed(const lbmc_engine *e);
/** The simulation clock. */
double lbmc_engine_time(const lbmc_engine *e);
/** Name of the engine in use: "occupancy", "servers", "general". */
const char *lbmc_engine_name(const lbmc_engine *e);
/** The per-server state (read-only use: tests and diagnostics); NULL if the engine
 *  keeps none. */
const lbmc_state *lbmc_engine_state(const lbmc_engine *e);

#endif
