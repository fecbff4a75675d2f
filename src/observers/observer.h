/* Private: the observer interface. An observer watches a replica without being part of
 * any engine: at the end of every tick it sees a read-only view of the state (per pool,
 * the servers holding at least k customers and the customers; the engine's extras, such
 * as the workload, where it has them: src/core/tally.h, lbmc_view) and writes its own
 * block of the tick record, after the fixed sums of src/core/ticks.h; optionally it is
 * told every move of a server from one count to another, for integrals over time. New
 * outputs (time series, pair statistics, workload) are observers, not edits of the
 * engines: every engine closes its ticks through the tally, which calls the observers.
 *
 * Adding an observer: one file defining a const lbmc_observer_type, one line in
 * LBMC_OBSERVER_LIST (registry.c), the file in src/CMakeLists.txt
 * (docs/architecture.md). An observer must not draw random numbers: a run with it gives
 * the same replicas as a run without. */
#ifndef LBMC_OBSERVER_H
#define LBMC_OBSERVER_H

#include <stddef.h>
#include <stdint.h>

#include "../core/tally.h"
#include "lbmc/error.h"
#include "lbmc/run_options.h"
#include "lbmc/types.h"

typedef struct lbmc_observer_type_ {
  const char *name;    /* a word, for messages and docs */
  const char *summary; /* one line: what it records */
  /** 1 if a run with these settings asks for the observer. */
  int (*wanted)(const lbmc_model *m, const lbmc_run_options *o);
  /** Doubles it adds to each tick record (its block), for model m and K tail levels. */
  size_t (*width)(const lbmc_model *m, int K);
  /** Allocate for model m (set up) and K tail levels. Errors: LBMC_ERR_MEMORY. */
  lbmc_err (*create)(const lbmc_model *m, int K, void **ws);
  void (*destroy)(void **ws);
  /** A replica starts; v shows its initial state (after the engine's reset). */
  void (*reset)(void *ws, const lbmc_view *v);
  /** The tick [t0, t1] closes; v shows the state at t1. Fill block (width doubles), or
   *  discard the tick when block is NULL (the warm-up), and start the next one. */
  void (*close)(void *ws, const lbmc_view *v, double t0, double t1, double *block);
  /** Optional (NULL: not told): a server of pool j went from `from` to `to` customers at
   *  time t (to = from +- 1). Called in the engine's event loop: keep it cheap; the view
   *  is not consistent during the call, so use only the arguments. */
  void (*move)(void *ws, double t, int j, uint32_t from, uint32_t to);
} lbmc_observer_type;

#endif
