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
#include "../stats/dhist.h"
#include "../stats/mixture.h"
#include "../system/state.h"
#include "lbmc/error.h"
#include "lbmc/run_options.h" /* lbmc_engine_kind, lbmc_init_kind */
#include "lbmc/types.h"

/** The default runaway cap of the engines that hold customers one by one (memory). */
#define LBMC_CAP_DEFAULT_HELD (1ULL << 26)

typedef struct lbmc_engine_type_ {
  const char *name;    /* "servers", "general", "occupancy" */
  const char *summary; /* one line for --help / docs */
  lbmc_engine_kind kind;
  /** Customers it can hold: the largest runaway cap it takes (customers kept one by one
   *  are numbered with 32-bit integers: 2^31 - 2; counts: LBMC_MAX_CUSTOMERS), and the
   *  largest default cap (the default is min(1000 n + 100000, cap_default_max)). */
  uint64_t cap_max, cap_default_max;
  /** 1 if the engine simulates model m exactly (in law); else 0 and a short reason
   *  ("general service", "lwl(2) reads workloads", ...) written to why[len]. */
  int (*applies)(const lbmc_model *m, char *why, size_t len);
  /** Allocate for model m (set up), K tail levels, runaway cap on customers.
   *  Errors: LBMC_ERR_MEMORY. */
  lbmc_err (*create)(const lbmc_model *m, int K, uint64_t max_customers, void **ws);
  void (*destroy)(void **ws);
  /** Start a replica: empty system at time 0 (or as set_init asked), drawing from
   * streams[LBMC_PURPOSES] (owned by the dispatcher, already seeded; they outlive the replica). The
   * first arrival time is drawn here: Exp(1) / (lambda n) from the arrival stream by the ziggurat,
   * as every later one, so arrivals are common random numbers across engines and policies. Errors:
   * LBMC_ERR_MEMORY. */
  lbmc_err (*reset)(void *ws, lbmc_stream *streams);
  /** Simulate up to t_end and close the current tick into rec (lbmc_tick_width
   *  doubles, every field but LBMC_TK_CPU, which the replica driver fills); rec NULL
   *  discards it. Also returns LBMC_SUCCESS when the runaway cap was hit (see
   *  overflowed). Errors: LBMC_ERR_MEMORY. */
  lbmc_err (*advance)(void *ws, double t_end, double *rec);
  /** Record sojourn/wait times into these histograms (src/stats/dhist.h) from now on
   *  (NULL: stop). */
  void (*set_histograms)(void *ws, lbmc_dhist *sojourn, lbmc_dhist *wait);
  int (*overflowed)(const void *ws);
  double (*time)(const void *ws); /* the simulation clock */
  /** The per-server state, read only (tests and diagnostics); NULL for engines that
   *  keep none. */
  const lbmc_state *(*state)(const void *ws);

  /* ---- Optional (NULL where the engine has none) ---- */
  /** How the next resets start (run.init). LBMC_INIT_MEANFIELD: from the mean-field
   *  fixed point, computed now (deterministic, once per workspace); if there is none
   *  (the ODE does not settle), replicas start empty and note[len] says why. NULL: the
   *  engine starts empty only. Errors: LBMC_ERR_MEMORY. */
  lbmc_err (*set_init)(void *ws, lbmc_init_kind init, char *note, size_t len);
  /** Per-customer quantiles from the admitted customers' arrival classes instead of
   *  histograms: an empty mixture for the engine's model (caller-owned). NULL: the
   *  engine records histograms. Errors: LBMC_ERR_MEMORY. */
  lbmc_err (*mixture_create)(const void *ws, lbmc_mixture **mix);
  /** Record the admitted customers' classes into mix from now on (NULL: stop). */
  void (*set_mixture)(void *ws, lbmc_mixture *mix);
} lbmc_engine_type;

#endif
