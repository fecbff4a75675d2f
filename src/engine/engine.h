/* Private: the dispatcher of the engines, what the replica driver calls. It picks the
 * engine of a model from the registry of engine.c (engine_type.h), owns the random
 * streams of a replica and the CPU clock, and hands the rest to the engine. Arrival
 * times come from the arrival stream alone, so they are common random numbers across
 * engines and policies. */
#ifndef LBMC_ENGINE_H
#define LBMC_ENGINE_H

#include <stdint.h>

#include "../system/state.h"
#include "engine_type.h"
#include "lbmc/types.h"

typedef struct lbmc_engine_ lbmc_engine;

/** Allocate an engine for model m (set up) with K tail levels; the model must outlive
 *  the engine. max_customers caps the customers in the system (runaway guard).
 *  kind: LBMC_ENGINE_AUTO (0) for the first engine of the registry that applies, or
 *  one engine by its kind (e.g. LBMC_ENGINE_GENERAL to cross-check the servers engine).
 *  Errors: LBMC_ERR_MEMORY; LBMC_ERR_ARG if the engine asked for cannot simulate m. */
lbmc_err lbmc_engine_create(const lbmc_model *m, int K, uint64_t max_customers,
                            lbmc_engine_kind kind, lbmc_engine **e);
void lbmc_engine_destroy(lbmc_engine **e);

/** Start a replica: empty system at time 0, streams gennum[purpose] (LBMC_PURPOSES
 *  entries) with the seed. Errors: LBMC_ERR_RNG, LBMC_ERR_MEMORY. */
lbmc_err lbmc_engine_reset(lbmc_engine *e, const int *gennum, long seed);

/** Simulate up to time t_end and close the current tick into rec (lbmc_tick_width
 *  doubles, CPU seconds of the tick included; NULL discards it, e.g. for the warm-up).
 *  Returns LBMC_SUCCESS also when the runaway cap was hit: check
 *  lbmc_engine_overflowed. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_engine_advance(lbmc_engine *e, double t_end, double *rec);

/** Record sojourn and waiting times into these histograms (LBMC_HIST_BINS counts
 *  each, src/core/hist.h) from now on; NULL stops recording. */
void lbmc_engine_set_histograms(lbmc_engine *e, uint64_t *sojourn, uint64_t *wait);

/** 1 if the customers in the system exceeded the cap (the replica is unstable). */
int lbmc_engine_overflowed(const lbmc_engine *e);
/** The simulation clock. */
double lbmc_engine_time(const lbmc_engine *e);
/** Name of the engine in use: "servers", "general", ... */
const char *lbmc_engine_name(const lbmc_engine *e);
/** The per-server state (read-only use: tests and diagnostics); NULL if the engine
 *  keeps none. */
const lbmc_state *lbmc_engine_state(const lbmc_engine *e);

#endif
