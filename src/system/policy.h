/* Private: the routing-policy interface, and the one place where a policy's facts are
 * written. A policy is a table of facts and functions, in the manner of gsl_rng_type
 * or ROSS's tw_lptype; adding a policy is adding one file in src/policies/ and one
 * line to the registry (src/policies/registry.c). Everything else that knows the
 * policies (parsing of the policy text with its aliases, the --help list, the
 * messages of job files and of the model's checks, the engine's choice) reads the
 * table (docs/architecture.md).
 *
 * The per-server engines call, per replica: create (once per workspace), reset (empty
 * system at time 0, every server idle), then route at every arrival, on_idle whenever
 * a server's idleness grows, and on_change after every change of a server's customer
 * count. A policy reads the state (queue lengths through lbmc_q(st, s), which every
 * engine's layout of the counts supports; pools; workloads through lbmc_workload; the
 * model's parameters through st->m); it changes only its own workspace and the message counters
 * st->tally.c.messages / st->tally.c.withdrawals, which it increments where messages are sent
 * (never from a formula; docs/model.md, "Metrics"). Randomness comes from st->s_route
 * only.
 */
#ifndef LBMC_POLICY_H
#define LBMC_POLICY_H

#include "state.h"

typedef enum {
  LBMC_PARAM_NONE = 0,    /* "pull" */
  LBMC_PARAM_REQUIRED = 1 /* "jsq(2)" */
} lbmc_param_kind;

/** Another name of a policy that also fixes a setting: "jiq" is pull with stale keep. */
typedef struct lbmc_policy_alias_ {
  const char *name;    /* as written by users, e.g. "jiq"; NULL ends a list */
  const char *summary; /* one line for --help */
  int stale;           /* the stale setting it fixes (an lbmc_stale), or -1 for none */
} lbmc_policy_alias;

/* The functions of the occupancy engine for a policy (src/system/occ_policy.h). */
struct lbmc_occupancy_ops_;

typedef struct lbmc_policy_type_ {
  /* ---- names and text ---- */
  const char *name;                 /* family name as written by users, e.g. "jsq" */
  const lbmc_policy_alias *aliases; /* NULL, or a list ended by a NULL name */
  lbmc_param_kind param;            /* whether the name takes "(p)" */
  const char *param_name;           /* "d" or "c"; NULL without parameter */
  int param_le_n;                   /* the parameter counts servers drawn among n: 1 <= p <= n */
  int reports_n;                    /* reported with parameter n (full jsq is jsq(n)) */
  const char *summary;              /* one line for --help */
  const char *messages;             /* the message-count rule, e.g. "2d per arrival (d queries, d
                                       replies)"; the counts themselves come from the code */
  const char *messages_per_arrival; /* the same as an expression in d (the reported parameter)
                                       and n, e.g. "2*d", "0"; pull: "1", its large-n limit.
                                       Written to results files for the analysis' references */
  int uses_stale;                   /* the stale setting applies (pull) */
  int uses_sampling;                /* the sampling setting applies (jsq(d), lwl(d)) */

  /* ---- engines that run it ---- */
  /* The per-server engines (servers, general) run it with the functions below; */
  int needs_workload; /* it reads server workloads: the lean and general engines only */
  /* the occupancy engine with these, NULL if it cannot. */
  const struct lbmc_occupancy_ops_ *occupancy;

  /** Bytes of the per-server workspace (create's arrays) for model m, for the size
   *  check; NULL: small, independent of n. */
  double (*memory)(const lbmc_model *m);

  /* ---- the per-server functions ---- */
  /** Allocate the policy workspace for systems of the state's size. */
  lbmc_err (*create)(const lbmc_state *st, void **ws);
  void (*destroy)(void **ws);
  /** Reset to the empty system at time 0 (may draw from st->s_route); may be NULL. */
  void (*reset)(lbmc_state *st, void *ws);
  /** Choose the server (0 .. n-1) for an arrival at router r (0 .. R-1). */
  uint32_t (*route)(lbmc_state *st, void *ws, uint32_t r);
  /** Server s's idleness has just increased (a departure left it with fewer than
   *  st->slots[pool] customers; with constant speed: it became idle); may be NULL. */
  void (*on_idle)(lbmc_state *st, void *ws, uint32_t s);
  /** Server s's count changed from old_q to lbmc_q(st, s); may be NULL. */
  void (*on_change)(lbmc_state *st, void *ws, uint32_t s, uint32_t old_q);
  /** A hint without effect on the results, may be NULL: prefetch the state of the
   *  servers the next route will read, from the numbers already buffered in st->s_route
   *  (consuming none), so that their cache misses overlap the events before the next
   *  arrival (an engine calls it after an arrival). */
  void (*prefetch)(const lbmc_state *st, const void *ws);
} lbmc_policy_type;

#endif
