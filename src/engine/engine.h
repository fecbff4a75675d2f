/* Private: the event engine of one replica. Two service models behind one interface:
 * exponential service (the Markov race, engine_exp.c) and general service (per-customer
 * requirements and an event calendar, engine_general.c). Arrival times come from the
 * arrival stream alone, so they are common random numbers across policies. */
#ifndef LBMC_ENGINE_H
#define LBMC_ENGINE_H

#include "../system/state.h"

typedef struct lbmc_engine_ lbmc_engine;

/** Allocate an engine for model m (set up) with K tail levels; the model must outlive
 *  the engine. max_customers caps the customers in the system (runaway guard).
 *  general = 1 forces the general-service engine even where the exponential one
 *  would do (it is used anyway when lbmc_model_needs_general). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_engine_create(const lbmc_model *m, int K, uint64_t max_customers, int general,
                            lbmc_engine **e);
void lbmc_engine_destroy(lbmc_engine **e);

/** Start a replica: empty system at time 0, streams gennum[purpose] (LBMC_PURPOSES
 *  entries) with the seed. Errors: LBMC_ERR_RNG. */
lbmc_err lbmc_engine_reset(lbmc_engine *e, const int *gennum, long seed);

/** Simulate up to time t_end and close the current tick into rec (lbmc_tick_width
 *  doubles; NULL discards it, e.g. for the warm-up). Returns LBMC_SUCCESS also when
 *  the runaway cap was hit: check lbmc_engine_overflowed. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_engine_advance(lbmc_engine *e, double t_end, double *rec);

/** Record sojourn and waiting times into these histograms (LBMC_HIST_BINS counts
 *  each, src/engine/hist.h) from now on; NULL stops recording. */
void lbmc_engine_set_histograms(lbmc_engine *e, uint64_t *sojourn, uint64_t *wait);
/** 1 if the engine runs the general-service model. */
int lbmc_engine_is_general(const lbmc_engine *e);

/** 1 if the customers in the system exceeded the cap (the replica is unstable). */
int lbmc_engine_overflowed(const lbmc_engine *e);
/** The state (read-only use: tests and diagnostics). */
const lbmc_state *lbmc_engine_state(const lbmc_engine *e);

#endif
