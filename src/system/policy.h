/* Private: the routing-policy interface. A policy is a table of functions, in the
 * manner of gsl_rng_type or ROSS's tw_lptype; adding a policy is adding one file in
 * src/policies/ and one line to the registry (src/policies/registry.c).
 *
 * The engine calls, per replica: create (once per workspace), reset (empty system at
 * time 0, every server idle), then route at every arrival, on_idle whenever a server
 * becomes idle, and on_change after every change of a server's customer count.
 * A policy reads the state (queue lengths, pools); it changes only its own
 * workspace and the message counters st->c.messages / st->c.withdrawals, which it
 * increments where messages are sent (SPEC section 3: never from a formula).
 * Randomness comes from st->s_route only.
 */
#ifndef LBMC_POLICY_H
#define LBMC_POLICY_H

#include "state.h"

typedef enum {
  LBMC_PARAM_NONE = 0,    /* "pull" */
  LBMC_PARAM_REQUIRED = 1 /* "jsq(2)" */
} lbmc_param_kind;

typedef struct lbmc_policy_type_ {
  const char *name;       /* family name as written by users, e.g. "jsq" */
  lbmc_param_kind param;  /* whether the name takes "(p)" */
  const char *param_name; /* "d" or "c"; NULL without parameter */
  const char *summary;    /* one line for --help */
  int uses_stale;         /* the stale option applies (pull) */
  int uses_sampling;      /* the sampling option applies (jsq(d)) */
  int needs_workload;     /* reads server workloads: needs the general engine */
  /** Checks that depend on the whole model (e.g. d <= n); may be NULL. Errors:
   *  LBMC_ERR_ARG, message prefixed with the model's origin. */
  lbmc_err (*check)(const lbmc_model *m);
  /** Allocate the policy workspace for systems of the state's size. */
  lbmc_err (*create)(const lbmc_state *st, void **ws);
  void (*destroy)(void **ws);
  /** Reset to the empty system at time 0 (may draw from st->s_route). */
  void (*reset)(lbmc_state *st, void *ws);
  /** Choose the server (0 .. n-1) for an arrival at router r (0 .. R-1). */
  uint32_t (*route)(lbmc_state *st, void *ws, uint32_t r);
  /** Server s's idleness has just increased (a departure left it with fewer than
   *  st->slots[pool] customers; with constant speed: it became idle); may be NULL. */
  void (*on_idle)(lbmc_state *st, void *ws, uint32_t s);
  /** Server s's count changed from old_q to st->q[s]; may be NULL. */
  void (*on_change)(lbmc_state *st, void *ws, uint32_t s, uint32_t old_q);
} lbmc_policy_type;

/** Find a policy type by family name and whether a parameter was given; NULL if none. */
const lbmc_policy_type *lbmc_policy_find(const char *name, int has_param);
/** Number of registered policy types and the i-th one (for --help). */
int lbmc_policy_count(void);
const lbmc_policy_type *lbmc_policy_get(int i);

#endif
