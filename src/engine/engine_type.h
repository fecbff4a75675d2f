/* Private: the engine interface. An engine is a table of functions, like a policy
 * (src/system/policy.h): it owns its state and simulates one replica at a time. The
 * dispatcher (engine.c, the only file that lists the engines, one line each) picks
 * the engine of a model, owns the random streams and the CPU clock; no engine file
 * calls another. The engines that keep every server (servers: engine_exp.c;
 * general: engine_general.c) share their state changes through per_server.h.
 * Adding an engine: one file defining a const lbmc_engine_type, one line in the
 * registry of engine.c (docs/architecture.md). */
#ifndef LBMC_ENGINE_TYPE_H
#define LBMC_ENGINE_TYPE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/stream.h"
#include "../system/state.h"
#include "lbmc/error.h"
#include "lbmc/types.h"

typedef enum {
  LBMC_ENGINE_AUTO = 0, /* the first engine of the registry that applies */
  LBMC_ENGINE_SERVERS,  /* per-server exponential race (engine_exp.c) */
  LBMC_ENGINE_GENERAL,  /* per-server event calendar, general service (engine_general.c) */
  LBMC_ENGINE_OCCUPANCY /* occupancy counts (issue 10) */
} lbmc_engine_kind;     /* names: auto, servers, general, occupancy */

typedef struct lbmc_engine_type_ {
  const char *name;    /* "servers", "general", "occupancy" */
  const char *summary; /* one line for --help / docs */
  lbmc_engine_kind kind;
  /** 1 if the engine simulates model m exactly (in law); else 0 and a short reason
   *  ("general service", "lwl(2) reads workloads", ...) written to why[len]. */
  int (*applies)(const lbmc_model *m, char *why, size_t len);
  /** Allocate for model m (set up), K tail levels, runaway cap on customers.
   *  Errors: LBMC_ERR_MEMORY. */
  lbmc_err (*create)(const lbmc_model *m, int K, uint64_t max_customers, void **ws);
  void (*destroy)(void **ws);
  /** Start a replica: empty system at time 0, drawing from streams[LBMC_PURPOSES]
   *  (owned by the dispatcher, already seeded; they outlive the replica). The first
   *  arrival time is drawn here: Exp(1) / (lambda n) from the arrival stream by the
   *  ziggurat, as every later one, so arrivals are common random numbers across
   *  engines and policies. Errors: LBMC_ERR_MEMORY. */
  lbmc_err (*reset)(void *ws, lbmc_stream *streams);
  /** Simulate up to t_end and close the current tick into rec (lbmc_tick_width
   *  doubles, every field but LBMC_TK_CPU, which the dispatcher fills); rec NULL
   *  discards it. Also returns LBMC_SUCCESS when the runaway cap was hit (see
   *  overflowed). Errors: LBMC_ERR_MEMORY. */
  lbmc_err (*advance)(void *ws, double t_end, double *rec);
  /** Record sojourn/wait times into these histograms (LBMC_HIST_BINS counts each,
   *  src/core/hist.h) from now on (NULL: stop). */
  void (*set_histograms)(void *ws, uint64_t *sojourn, uint64_t *wait);
  int (*overflowed)(const void *ws);
  double (*time)(const void *ws); /* the simulation clock */
  /** The per-server state, read only (tests and diagnostics); NULL for engines that
   *  keep none. */
  const lbmc_state *(*state)(const void *ws);
} lbmc_engine_type;

#endif
