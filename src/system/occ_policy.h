/* Private: a routing policy in occupancy form (docs/occupancy.md), the
 * occupancy engine's side of the policy interface (policy.h).
 *
 * The occupancy engine (src/engine/occupancy.c) does not see servers, only classes
 * (pool j, level k) and their counts (occ_state.h). A policy that treats the servers of
 * a pool alike has an occupancy form: a table of functions like lbmc_policy_type,
 * defined in the policy's own file (src/policies/X.c, section "Occupancy form") next to
 * its per-server form, and named by the `occupancy` field of its lbmc_policy_type.
 *
 * The engine calls, per replica: create (once per workspace), reset (after the engine
 * has set the initial counts: the empty system, or the mean-field start), then route at
 * every arrival and on_idle whenever a server's idleness increases. route returns the
 * class of the server the customer is sent to (the engine blocks it if the server is
 * full); like the per-server forms it counts messages (st->tally.c.messages, withdrawals) where
 * they are sent, and draws from st->s_route only.
 *
 * law is the policy's routing law in the mean-field limit (or the chain's own, where it
 * extends to fractional counts): given the state as fractions, the probability that an
 * arrival is sent to class (j, k). The mean-field start (occ_meanfield.c) integrates the
 * drift it defines.
 */
#ifndef LBMC_OCC_POLICY_H
#define LBMC_OCC_POLICY_H

#include "occ_state.h"

/** The state handed to a routing law: fractions of each pool's servers per level. */
typedef struct {
  const lbmc_model *m;
  uint32_t J, levels;       /* levels 0 .. levels-1 in every pool */
  double n;                 /* servers (a real number: laws may use counts) */
  double b[LBMC_MAX_POOLS]; /* N_j / n */
  const double *s;          /* J x levels: fraction of pool j's servers at level k, >= 0 */
  double *work;             /* scratch of 2 (levels + 1) doubles */
} lbmc_occ_mf;

typedef struct lbmc_occupancy_ops_ {
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
  /** 1 if route is lbmc_occ_route_pair2 below whenever the model has one pool, param 2
   *  and distinct sampling (jsq(2)): an engine may then call that inline (the same
   *  numbers drawn, the same class). */
  int pair2;
} lbmc_occupancy_ops;

/** jsq(2) over one pool, distinct sampling (jsq_d.c's occupancy form for that case; a
 *  header function so that an engine can inline it): two distinct uniform positions a, b
 *  (one number when the engine set st->pair_N, else two), the class of the lower level
 *  and the drawn position's rank in it; 4 messages. The lower level is the higher
 *  position's (positions rank levels from the top), so one level search; on a tie (the
 *  lower position at the same level, i.e. at or above G[k + 1]) a, the first drawn, as
 *  the general loop of jsq(d) chooses. */
static inline lbmc_occ_class lbmc_occ_route_pair2(lbmc_occ_state *st)
{
  const lbmc_occ_pool *p = &st->pool[0];
  const uint64_t n = (uint64_t)st->n;
  uint64_t a, b, hi, lo;
  lbmc_occ_class c;
  st->tally.c.messages += 4;
  if (st->pair_N) {
    lbmc_occ_pair1(st, st->s_route, &a, &b);
  } else {
    a = lbmc_occ_uint(st->s_route, n);
    b = lbmc_occ_uint(st->s_route, n - 1);
    b += b >= a;
  }
  hi = a > b ? a : b;
  lo = a ^ b ^ hi;
  c.j = 0;
  c.k = lbmc_occ_level(p, (int64_t)hi);
  a = (int64_t)lo >= p->G[c.k + 1] ? a : hi;
  c.rank1 = (uint64_t)((int64_t)a - p->G[c.k + 1]) + 1;
  return c;
}

#endif
