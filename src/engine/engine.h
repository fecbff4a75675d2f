/* Private: the event engine of one replica (exponential service: the Markov race).
 *
 * Between events the system state is constant; the next arrival comes from the
 * arrival stream (inter-arrival Exp(lambda n)), the next service completion from the
 * service stream (Exp(sum of busy servers' mu), redrawn whenever that sum changes;
 * exact by memorylessness), so arrivals are common random numbers across policies.
 */
#ifndef LBMC_ENGINE_H
#define LBMC_ENGINE_H

#include "state.h"

typedef struct lbmc_engine_ lbmc_engine;

/** Allocate an engine for model m (set up) with K tail levels; the model must outlive
 *  the engine. max_customers caps the customers in the system (runaway guard).
 *  Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_engine_create(const lbmc_model *m, int K, uint64_t max_customers, lbmc_engine **e);
void lbmc_engine_destroy(lbmc_engine **e);

/** Start a replica: empty system at time 0, streams gennum[purpose] (LBMC_PURPOSES
 *  entries) with the seed. Errors: LBMC_ERR_RNG. */
lbmc_err lbmc_engine_reset(lbmc_engine *e, const int *gennum, long seed);

/** Simulate up to time t_end and close the current tick into rec (lbmc_tick_width
 *  doubles; NULL discards it, e.g. for the warm-up). Returns LBMC_SUCCESS also when
 *  the runaway cap was hit: check lbmc_engine_overflowed. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_engine_advance(lbmc_engine *e, double t_end, double *rec);

/** 1 if the customers in the system exceeded the cap (the replica is unstable). */
int lbmc_engine_overflowed(const lbmc_engine *e);
/** The state (read-only use: tests and diagnostics). */
const lbmc_state *lbmc_engine_state(const lbmc_engine *e);

#endif
