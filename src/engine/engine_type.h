/* Private: the engine interface. An engine is a table of functions, like a policy
 * (src/system/policy.h): it owns its state and simulates one replica at a time, telling
 * its tally (src/core/tally.h) what happens and closing its ticks through it, so that
 * the tick records, the runaway cap and the observers (src/observers/) are the same for
 * every engine. The dispatcher (engine.c) picks the engine of a model, owns the random
 * streams, the CPU clock and the observers; no engine file calls another. The engines
 * that keep every server (servers: engine_servers.c; general: engine_general.c) share
 * their state changes through per_server.h.
 * Adding an engine: one file defining a const lbmc_engine_type, one line in
 * LBMC_ENGINE_LIST (include/lbmc/run_options.h), the file in src/CMakeLists.txt
 * (docs/architecture.md). */
#ifndef LBMC_ENGINE_TYPE_H
#define LBMC_ENGINE_TYPE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/stream.h"
#include "../core/tally.h"
#include "../stats/dhist.h"
#include "../stats/mixture.h"
#include "../system/state.h"
#include "lbmc/error.h"
#include "lbmc/run_options.h" /* lbmc_init_kind */
#include "lbmc/types.h"

/** The default runaway cap of the engines that hold customers one by one (memory). */
#define LBMC_CAP_DEFAULT_HELD (1ULL << 26)

typedef struct lbmc_engine_type_ {
  const char *name;    /* "occupancy", "servers", "general": its --engine choice */
  const char *summary; /* one line for --help, the results file and docs */
  /** Events (arrivals and completions) per CPU second on one core, the nominal figure
   *  of the cost estimates (--dry-run). */
  double speed;
  /** 1: per-customer quantiles from Erlang mixtures of arrival classes (mixture_create,
   *  set_mixture); 0: from histograms of the customers' times (set_histograms). */
  int mixtures;
  /** Customers it can hold: the largest runaway cap it takes (customers kept one by one
   *  are numbered with 32-bit integers: 2^31 - 2; counts: LBMC_MAX_CUSTOMERS), and the
   *  largest default cap (the default is min(1000 n + 100000, cap_default_max)). */
  uint64_t cap_max, cap_default_max;
  /** 1 if the engine simulates model m exactly (in law); else 0 and a short reason
   *  ("general service", "lwl(2) reads workloads", ...) written to why[len]. */
  int (*applies)(const lbmc_model *m, char *why, size_t len);
  /** Allocate for model m (set up), K tail levels, runaway cap on customers; the
   *  workspace's tally (src/core/tally.h) is created here.
   *  Errors: LBMC_ERR_MEMORY. */
  lbmc_err (*create)(const lbmc_model *m, int K, uint64_t max_customers, void **ws);
  void (*destroy)(void **ws);
  /** Start a replica: empty system at time 0 (or as set_init asked), drawing from
   * streams[LBMC_PURPOSES] (owned by the dispatcher, already seeded; they outlive the replica). The
   * first arrival time is drawn here: Exp(1) / (lambda n) from the arrival stream by the ziggurat,
   * as every later one, so arrivals are common random numbers across engines and policies. Errors:
   * LBMC_ERR_MEMORY. */
  lbmc_err (*reset)(void *ws, lbmc_stream *streams);
  /** Simulate up to t_end (stopping early when its tally halts) and close the current
   *  tick into rec through the tally (lbmc_tally_finish); rec NULL discards it. Returns
   *  LBMC_SUCCESS also when the runaway cap was hit. Errors: LBMC_ERR_MEMORY,
   *  LBMC_ERR_INTERRUPTED (the stop hook asked). */
  lbmc_err (*advance)(void *ws, double t_end, double *rec);
  /** Record sojourn/wait times into these histograms (src/stats/dhist.h) from now on
   *  (NULL: stop). Engines with mixtures ignore it. */
  void (*set_histograms)(void *ws, lbmc_dhist *sojourn, lbmc_dhist *wait);
  double (*time)(const void *ws); /* the simulation clock */
  /** The workspace's tally (counters, integrals, halt reason, hooks). */
  lbmc_tally *(*tally)(void *ws);
  /** The read-only view of its state (per pool: tail counts, customers; extras). */
  const lbmc_view *(*view)(const void *ws);

  /* ---- Optional (NULL where the engine has none) ---- */
  /** Bytes of a workspace for model m (set up) with K tail levels when a replica starts:
   *  its arrays per server and per pool, the policy's per-server workspace included
   *  (lbmc_policy_type.memory); *per_customer (not NULL) gets the bytes each customer in
   *  the system adds beyond them (0: none). NULL: small, independent of n. */
  double (*memory)(const lbmc_model *m, int K, double *per_customer);
  /** The per-server state, read only (tests and diagnostics). */
  const lbmc_state *(*state)(const void *ws);
  /** How the next resets start (run.init). LBMC_INIT_MEANFIELD: from the mean-field
   *  fixed point, computed now (deterministic, once per workspace); if there is none
   *  (the ODE does not settle), replicas start empty and note[len] says why. NULL: the
   *  engine starts empty only. LBMC_INIT_TAIL (engines with tail_start only; the others
   *  are refused it before set_init is called): from the state o->init_tail (every pool's
   *  counts by the same randomised rounding). Errors: LBMC_ERR_MEMORY, LBMC_ERR_ARG (a
   *  tail start the model cannot hold). */
  lbmc_err (*set_init)(void *ws, const lbmc_run_options *o, char *note, size_t len);
  /** 1: set_init takes LBMC_INIT_TAIL (a start from given tail fractions). */
  int tail_start;
  /** 1 when set_init(LBMC_INIT_MEANFIELD) would start the replicas near the mean-field
   *  fixed point of the workspace's model (it is computed now if it was not, as set_init
   *  does, and kept), else 0 (no fixed point, the ODE does not settle, or out of memory);
   *  how the next resets start is unchanged. NULL: the engine has no mean-field start. */
  int (*meanfield_start)(void *ws);
  /** With mixtures: an empty mixture for the engine's model (caller-owned).
   *  Errors: LBMC_ERR_MEMORY. */
  lbmc_err (*mixture_create)(const void *ws, lbmc_mixture **mix);
  /** Record the admitted customers' classes into mix from now on (NULL: stop). */
  void (*set_mixture)(void *ws, lbmc_mixture *mix);
} lbmc_engine_type;

#endif
