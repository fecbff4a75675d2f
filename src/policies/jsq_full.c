/* jsq: join the shortest queue over all n servers (a reference, not a scalable
 * policy); 2n messages per arrival. Ties uniformly among all servers with the
 * fewest customers.
 *
 * Servers are kept in perm[] grouped by customer count, ascending: start[L] is the
 * number of servers holding fewer than L customers, so the servers with L customers
 * are perm[start[L] .. start[L+1]). A count change moves a server across one group
 * boundary by one swap, O(1); the shortest group starts at perm[0]. */
#include <stdlib.h>
#include <string.h>

#include "../system/occ_policy.h"
#include "../system/policy.h"
#include "occ_laws.h"

typedef struct {
  uint32_t *perm;  /* n */
  uint32_t *pos;   /* n: position of each server in perm */
  uint32_t *start; /* levels + 1 */
  uint32_t levels; /* start[] has entries 0 .. levels */
} lbmc_jsq_ws;

static double lbmc_jsq_memory(const lbmc_model *m)
{
  return (double)m->n * 2 * sizeof(uint32_t); /* perm, pos */
}

static lbmc_err lbmc_jsq_create(const lbmc_state *st, void **ws)
{
  lbmc_jsq_ws *w = calloc(1, sizeof *w);
  if (w) {
    w->perm = malloc(sizeof *w->perm * st->n);
    w->pos = malloc(sizeof *w->pos * st->n);
    w->levels = 16;
    w->start = malloc(sizeof *w->start * (w->levels + 1));
  }
  if (!w || !w->perm || !w->pos || !w->start) {
    if (w) {
      free(w->perm);
      free(w->pos);
      free(w->start);
      free(w);
    }
    return LBMC_ERROR(LBMC_ERR_MEMORY, "jsq: out of memory");
  }
  *ws = w;
  return LBMC_SUCCESS;
}

static void lbmc_jsq_destroy(void **ws)
{
  lbmc_jsq_ws *w = *ws;
  if (!w) return;
  free(w->perm);
  free(w->pos);
  free(w->start);
  free(w);
  *ws = NULL;
}

/* The groups from the counts (every server empty, or a mean-field start): a counting
 * sort that keeps the servers of a group in index order (all empty: perm the identity). */
static void lbmc_jsq_reset(lbmc_state *st, void *ws)
{
  lbmc_jsq_ws *w = ws;
  uint32_t top = 0;
  for (uint32_t s = 0; s < st->n; s++)
    if (lbmc_q(st, s) > top) top = lbmc_q(st, s);
  if (top + 2 > w->levels) {
    uint32_t levels = w->levels;
    uint32_t *start;
    while (top + 2 > levels) levels *= 2;
    start = realloc(w->start, sizeof *start * (levels + 1));
    if (!start) { /* keep the structure valid; the replica stops with an error */
      lbmc_tally_out_of_memory(&st->tally);
      return;
    }
    w->start = start;
    w->levels = levels;
  }
  memset(w->start, 0, sizeof *w->start * (w->levels + 1));
  for (uint32_t s = 0; s < st->n; s++) w->start[lbmc_q(st, s)]++;
  for (uint32_t L = 1; L <= w->levels; L++) w->start[L] += w->start[L - 1]; /* ends */
  for (uint32_t s = st->n; s-- > 0;) { /* from the back: start[L] ends at group L's start */
    uint32_t p = --w->start[lbmc_q(st, s)];
    w->perm[p] = s;
    w->pos[s] = p;
  }
}

static void lbmc_jsq_swap(lbmc_jsq_ws *w, uint32_t a, uint32_t b)
{
  uint32_t sa = w->perm[a], sb = w->perm[b];
  w->perm[a] = sb;
  w->pos[sb] = a;
  w->perm[b] = sa;
  w->pos[sa] = b;
}

static void lbmc_jsq_on_change(lbmc_state *st, void *ws, uint32_t s, uint32_t old_q)
{
  lbmc_jsq_ws *w = ws;
  uint32_t q = lbmc_q(st, s);
  if (q > old_q) { /* old_q -> old_q + 1: leave the end of group old_q */
    if (q + 1 > w->levels) {
      uint32_t levels = w->levels * 2;
      uint32_t *start = realloc(w->start, sizeof *start * (levels + 1));
      if (!start) { /* keep the structure valid; the replica stops with an error */
        lbmc_tally_out_of_memory(&st->tally);
        return;
      }
      for (uint32_t L = w->levels + 1; L <= levels; L++) start[L] = st->n;
      w->start = start;
      w->levels = levels;
    }
    lbmc_jsq_swap(w, w->pos[s], w->start[q] - 1);
    w->start[q]--;
  } else { /* old_q -> old_q - 1: leave the front of group old_q */
    lbmc_jsq_swap(w, w->pos[s], w->start[old_q]);
    w->start[old_q]++;
  }
}

static uint32_t lbmc_jsq_route(lbmc_state *st, void *ws, uint32_t r)
{
  lbmc_jsq_ws *w = ws;
  uint32_t L0 = lbmc_q(st, w->perm[0]);
  (void)r;
  st->tally.c.messages += 2 * (int64_t)st->n;
  return w->perm[lbmc_uint(st->s_route, w->start[L0 + 1])];
}

/* ---- Occupancy form (the occupancy engine, src/system/occ_policy.h) ----
 * The lowest occupied level k0 = min_j low_j (kept by the engine in O(1) per event);
 * pool j with probability proportional to its servers at k0. */

static lbmc_occ_class lbmc_jsq_occ_route(lbmc_occ_state *st, void *ws, uint32_t r)
{
  lbmc_occ_class c = {0, st->pool[0].low, 0};
  int64_t U;
  (void)ws;
  (void)r;
  st->tally.c.messages += 2 * (uint64_t)st->n;
  if (st->J == 1) return c;
  for (uint32_t j = 1; j < st->J; j++)
    if (st->pool[j].low < c.k) c.k = st->pool[j].low;
  U = 0;
  for (uint32_t j = 0; j < st->J; j++) U += lbmc_occ_count(&st->pool[j], c.k);
  U = (int64_t)lbmc_occ_uint(st->s_route, (uint64_t)U);
  for (c.j = 0; c.j + 1 < st->J; c.j++) {
    int64_t x = lbmc_occ_count(&st->pool[c.j], c.k);
    if (U < x) break;
    U -= x;
  }
  return c;
}

static const lbmc_occupancy_ops lbmc_jsq_full_occupancy = {
    .route = lbmc_jsq_occ_route,
    .law = lbmc_occ_law_lowest,
};

const lbmc_policy_type lbmc_policy_jsq_full = {
    .name = "jsq",
    .param = LBMC_PARAM_NONE,
    .reports_n = 1,
    .summary = "join the shortest queue over all n servers (2n messages; a reference)",
    .messages = "2n per arrival (n queries, n replies)",
    .messages_per_arrival = "2*d",
    .occupancy = &lbmc_jsq_full_occupancy,
    .memory = lbmc_jsq_memory,
    .create = lbmc_jsq_create,
    .destroy = lbmc_jsq_destroy,
    .reset = lbmc_jsq_reset,
    .route = lbmc_jsq_route,
    .on_change = lbmc_jsq_on_change,
};
