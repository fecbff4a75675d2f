/* Private: the occupancy engine (docs/occupancy.md): exponential service,
 * policies that treat the servers of a pool alike, state = counts of servers per pool
 * and level (src/system/occ_state.h). Event cost and memory independent of n (n up to
 * LBMC_MAX_N). Its table, lbmc_engine_occupancy, is listed in the registry of engine.c;
 * this header adds the state changes of its events (admissions, departures, growing the
 * arrays), for occupancy.c and the unit tests. */
#ifndef LBMC_OCCUPANCY_H
#define LBMC_OCCUPANCY_H

#include <stddef.h>
#include <stdint.h>

#include "../system/occ_state.h"
#include "engine_type.h"

/** The occupancy engine's table. */
extern const lbmc_engine_type lbmc_engine_occupancy;

/** The state of an occupancy workspace (read-only use: tests and diagnostics). */
const lbmc_occ_state *lbmc_occ_state_of(const void *ws);

/* ---- What the occupancy engines share (occupancy.c; occ_ph.c builds on it) ---- */

/** 1 if the model's policy has an occupancy form, else 0 and the reason in why[len]. */
int lbmc_occ_applies_form(const lbmc_model *m, char *why, size_t len);
/** 1 if n is within LBMC_MAX_N and the policy's occupancy form takes the model (its
 *  `applies`), else 0 and the reason in why[len]. Call after lbmc_occ_applies_form. */
int lbmc_occ_applies_size(const lbmc_model *m, char *why, size_t len);
/** Set up the state of model m (set up; its policy has an occupancy form): pools with
 *  empty G arrays for K tail levels, the tally (terms at admission, runaway cap
 *  max_customers), the occupancy form's workspace. On error the caller still calls
 *  lbmc_occ_state_free. Errors: LBMC_ERR_MEMORY, the form's create errors. */
lbmc_err lbmc_occ_state_init(lbmc_occ_state *st, const lbmc_model *m, int K,
                             uint64_t max_customers);
/** Free what lbmc_occ_state_init allocated. */
void lbmc_occ_state_free(lbmc_occ_state *st);
/** The tally's and observers' view of st (v->ws = st): tails from G, customers Q, the
 *  clock; no workload. */
void lbmc_occ_view_init(lbmc_view *v, const lbmc_occ_state *st);
/** Pool j from level counts x[levels] (summing to N_j): G, top, low, Q, S. Returns -1
 *  when out of memory (the tally halted). */
int lbmc_occ_set_counts(lbmc_occ_state *st, uint32_t j, const int64_t *x, uint32_t levels);

/** Grow pool j's G array to hold top level t (2 t + 2 entries: the level search reads
 *  up to 2 t + 1); 0 on success, else halts the tally (out of memory) and returns -1. */
int lbmc_occ_grow(lbmc_occ_state *st, uint32_t j, uint32_t t);

/** Make room for top level t in pool j: 0, or -1 when out of memory (lbmc_occ_grow). */
static inline int lbmc_occ_room(lbmc_occ_state *st, uint32_t j, uint32_t t)
{
  return 2 * (uint64_t)t + 2 <= st->pool[j].cap ? 0 : lbmc_occ_grow(st, j, t);
}

/** Bookkeeping of an admission at a server of pool j holding a customers (a < B_j):
 *  G, top, low, busy slots, the integrals of the tick, customers in the system. The
 *  caller has made room (lbmc_occ_room(st, j, a + 1)). */
static inline void lbmc_occ_up(lbmc_occ_state *st, uint32_t j, uint32_t a)
{
  lbmc_occ_pool *p = &st->pool[j];
  const uint32_t k = a + 1;
  p->G[k]++;
  p->Q++;
  p->top = k > p->top ? k : p->top;
  p->low = (a == p->low && p->G[a] == p->G[k]) ? k : p->low; /* level a emptied */
  p->S += k <= p->L;
  lbmc_tally_up(&st->tally, st->t, j, k);
  lbmc_tally_enter(&st->tally);
}

/** Bookkeeping of a departure from a server of pool j holding k >= 1 customers. */
static inline void lbmc_occ_down(lbmc_occ_state *st, uint32_t j, uint32_t k)
{
  lbmc_occ_pool *p = &st->pool[j];
  p->G[k]--;
  p->Q--;
  p->top = (k == p->top && p->G[k] == 0) ? k - 1 : p->top;
  p->low = k - 1 < p->low ? k - 1 : p->low;
  p->S -= k <= p->L;
  lbmc_tally_down(&st->tally, st->t, j, k - 1);
  st->tally.in_system--;
}

#endif
