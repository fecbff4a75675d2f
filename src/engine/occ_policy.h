/* Private: a routing policy in occupancy form (issue 10, docs/occupancy.md).
 *
 * The occupancy engine (occupancy.c) does not see servers, only classes (pool j,
 * level k) and their counts (occ_state.h). A policy that treats the servers of a pool
 * alike has an occupancy form: a table of functions like lbmc_policy_type, defined in
 * the policy's own file (src/policies/X.c, section "Occupancy form") next to its
 * per-server form, and listed in src/policies/occ_registry.c.
 *
 * The engine calls, per replica: create (once per workspace), reset (after the engine
 * has set the initial counts: the empty system, or the mean-field start), then route at
 * every arrival and on_idle whenever a server's idleness increases. route returns the
 * class of the server the customer is sent to (the engine blocks it if the server is
 * full); like the per-server forms it counts messages (st->c.messages, withdrawals) where
 * they are sent, and draws from st->s_route only.
 *
 * law is the policy's routing law in the mean-field limit (or the chain's own, where it
 * extends to fractional counts): given the state as fractions, the probability that an
 * arrival is sent to class (j, k). The mean-field start (occ_meanfield.c) integrates the
 * drift it defines.
 */
#ifndef LBMC_OCC_POLICY_H
#define LBMC_OCC_POLICY_H

#include <gsl/gsl_rng.h>

#include "occ_state.h"

struct lbmc_policy_type_;

/** The state handed to a routing law: fractions of each pool's servers per level. */
typedef struct {
  const lbmc_model *m;
  uint32_t J, levels;       /* levels 0 .. levels-1 in every pool */
  double n;                 /* servers (a real number: laws may use counts) */
  double b[LBMC_MAX_POOLS]; /* N_j / n */
  const double *s;          /* J x levels: fraction of pool j's servers at level k, >= 0 */
  double *work;             /* scratch of 2 (levels + 1) doubles */
} lbmc_occ_mf;

typedef struct lbmc_occ_ops_ {
  const struct lbmc_policy_type_ *policy; /* the per-server form of the same policy */
  /** 1 if the occupancy form simulates model m exactly in law; else 0 and a short
   *  reason in why[len]. NULL: always. */
  int (*applies)(const lbmc_model *m, char *why, size_t len);
  /** Workspace for the state's model; NULL when none is needed. Errors: LBMC_ERR_MEMORY. */
  lbmc_err (*create)(const lbmc_occ_state *st, void **ws);
  void (*destroy)(void **ws);
  /** Start of a replica, the counts already set (may draw from st->s_route). Errors:
   *  LBMC_ERR_MEMORY. NULL: nothing to do. */
  lbmc_err (*reset)(lbmc_occ_state *st, void *ws);
  /** The class for an arrival at router r (0 .. R-1). */
  lbmc_occ_class (*route)(lbmc_occ_state *st, void *ws, uint32_t r);
  /** A server of pool j has just gained idleness (a departure left it with fewer than L_j
   *  customers); the counts already show it. NULL: nothing. */
  void (*on_idle)(lbmc_occ_state *st, void *ws, uint32_t j);
  /** Routing law: p[j * levels + k] = probability that an arrival in state mf is sent
   *  to a server of pool j at level k (sum 1 over the classes). */
  void (*law)(const lbmc_occ_mf *mf, double *p);
} lbmc_occ_ops;

/** The occupancy form of a policy type, or NULL if it has none (lwl). */
const lbmc_occ_ops *lbmc_occ_ops_find(const struct lbmc_policy_type_ *policy);

/* Routing laws shared by several policies (occ_meanfield.c). */

/** d draws, each a server of pool j with probability proportional to weight[j] N_j
 *  (weight NULL: 1, a uniform server), uniform within its pool; the customer joins the
 *  fewest customers among them, ties uniformly. exact_distinct: the draws are uniform
 *  without replacement and the chain's own law at n is used, prod_i (n T_k - i)/(n - i)
 *  for "all d at level >= k" (T_k: fraction of servers at level >= k); otherwise draws
 *  are independent (the n -> infinity law of both samplings): T_k^d. */
void lbmc_occ_law_min_of(const lbmc_occ_mf *mf, const double *weight, double d, int exact_distinct,
                         double *p);
/** The lowest occupied level, pools in proportion to their servers there. A level's
 *  share is min(1, servers there) of what the levels below left: the chain's law at
 *  integer counts, continuous between them. */
void lbmc_occ_law_lowest(const lbmc_occ_mf *mf, double *p);

/** Binomial(n, p) for n up to 2^62 (GSL's sampler takes 32-bit n: a sum over chunks).
 *  r: a gsl_rng (lbmc_sampler_create). */
int64_t lbmc_occ_binomial(const gsl_rng *r, double p, int64_t n);
/** Multinomial split of n items over R equally likely cells into out[R], by binomial
 *  halving (R - 1 binomials). */
void lbmc_occ_split_equal(const gsl_rng *r, int64_t n, uint32_t R, int64_t *out);

#endif
