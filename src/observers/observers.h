/* Private: the observers of a run (observer.h), as one set: created from the run's
 * settings by the registry (registry.c), attached to an engine's tally (the hooks of
 * src/core/tally.h), and laid out after the fixed part of the tick record. */
#ifndef LBMC_OBSERVERS_H
#define LBMC_OBSERVERS_H

#include <stddef.h>

#include "observer.h"

typedef struct lbmc_observers_ lbmc_observers;

/** Observer types registered (LBMC_OBSERVER_LIST), and the i-th (NULL out of range). */
int lbmc_observer_count(void);
const lbmc_observer_type *lbmc_observer_get(int i);

/** Doubles the observers that a run of model m with settings o asks for add to each
 *  tick record (0 when none). */
size_t lbmc_observers_width(const lbmc_model *m, const lbmc_run_options *o);

/** The observers that a run of model m (set up) with settings o asks for, in registry
 *  order, each given its block's offset after the fixed part of the tick record; *out is
 *  NULL when none is asked for. Errors: LBMC_ERR_MEMORY (and an observer's). */
lbmc_err lbmc_observers_create(const lbmc_model *m, const lbmc_run_options *o,
                               lbmc_observers **out);
void lbmc_observers_destroy(lbmc_observers **obs);

/** Hook the set into a tally (NULL obs: unhook): the tally then calls the observers at
 *  every tick close, and at every move if one of them listens to moves. */
void lbmc_observers_attach(lbmc_observers *obs, lbmc_tally *t);
/** A replica starts: every observer's reset with the engine's view. */
void lbmc_observers_reset(lbmc_observers *obs, const lbmc_view *v);

#endif
