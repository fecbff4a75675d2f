/* balanced(c): balanced routing (Chen & Ye, "Asymptotic optimality of balanced
 * routing", Operations Research 60(1), 2012): sample c distinct servers one after
 * another, each draw with probability proportional to its service rate among the
 * servers not yet drawn; join the one with the fewest customers, ties uniformly.
 * 2c messages per arrival.
 *
 * A draw picks pool j with probability (N_j - k_j) mu_j / sum_i (N_i - k_i) mu_i
 * (k_j = servers of pool j already drawn), then a uniform undrawn server of pool j. */
#include <stdlib.h>

#include "../system/occ_policy.h"
#include "../system/policy.h"
#include "occ_laws.h"
#include "sample.h"

typedef struct {
  uint32_t *drawn; /* J x c: local indices drawn in each pool, ascending */
  uint32_t k[LBMC_MAX_POOLS];
} lbmc_balanced_ws;

static lbmc_err lbmc_balanced_create(const lbmc_state *st, void **ws)
{
  lbmc_balanced_ws *w = calloc(1, sizeof *w);
  if (w) w->drawn = malloc(sizeof *w->drawn * st->J * (size_t)st->m->param);
  if (!w || !w->drawn) {
    free(w);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "balanced(c): out of memory");
  }
  *ws = w;
  return LBMC_SUCCESS;
}

static void lbmc_balanced_destroy(void **ws)
{
  lbmc_balanced_ws *w = *ws;
  if (!w) return;
  free(w->drawn);
  free(w);
  *ws = NULL;
}

static uint32_t lbmc_balanced_pool(lbmc_state *st, const lbmc_balanced_ws *w)
{
  const lbmc_model *m = st->m;
  double total = 0, x;
  uint32_t j, last = 0;
  for (j = 0; j < st->J; j++) total += (double)(m->N[j] - w->k[j]) * st->mu[j];
  x = lbmc_u01(st->s_route) * total;
  for (j = 0; j < st->J; j++) {
    double wj = (double)(m->N[j] - w->k[j]) * st->mu[j];
    if (wj <= 0) continue;
    last = j;
    if (x < wj) return j;
    x -= wj;
  }
  return last; /* rounding at the upper end */
}

static uint32_t lbmc_balanced_route(lbmc_state *st, void *ws, uint32_t r)
{
  lbmc_balanced_ws *w = ws;
  const uint32_t c = (uint32_t)st->m->param;
  uint32_t best = 0, best_q = UINT32_MAX, ties = 0;
  (void)r;
  for (uint32_t j = 0; j < st->J; j++) w->k[j] = 0;
  for (uint32_t i = 0; i < c; i++) {
    uint32_t j = lbmc_balanced_pool(st, w);
    uint32_t local =
        lbmc_draw_distinct(st->s_route, (uint32_t)st->m->N[j], w->drawn + j * c, w->k[j]);
    uint32_t s = (uint32_t)st->m->offset[j] + local, q = lbmc_q(st, s);
    w->k[j]++;
    if (q < best_q) {
      best_q = q;
      best = s;
      ties = 1;
    } else if (q == best_q && lbmc_uint(st->s_route, ++ties) == 0) {
      best = s; /* reservoir choice: each tied server kept with probability 1/ties */
    }
  }
  st->tally.c.messages += 2 * (int64_t)c;
  return best;
}

/* ---- Occupancy form (the occupancy engine, src/system/occ_policy.h) ----
 * The same draws on positions: pool j with probability (N_j - k_j) mu_j / sum, then a
 * position uniform among the pool's undrawn ones, whose level follows from the counts
 * (class weight mu_j x_j(k), without replacement); ties by reservoir choice. */

typedef struct {
  uint64_t *drawn; /* J x c: positions drawn in each pool, ascending */
  int64_t k[LBMC_MAX_POOLS];
} lbmc_balanced_occ_ws;

static lbmc_err lbmc_balanced_occ_create(const lbmc_occ_state *st, void **ws)
{
  lbmc_balanced_occ_ws *w = calloc(1, sizeof *w);
  if (w) w->drawn = malloc(sizeof *w->drawn * st->J * (size_t)st->m->param);
  if (!w || !w->drawn) {
    free(w);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "balanced(c): out of memory");
  }
  *ws = w;
  return LBMC_SUCCESS;
}

static void lbmc_balanced_occ_destroy(void **ws)
{
  lbmc_balanced_occ_ws *w = *ws;
  if (!w) return;
  free(w->drawn);
  free(w);
  *ws = NULL;
}

static uint32_t lbmc_balanced_occ_pool(lbmc_occ_state *st, const lbmc_balanced_occ_ws *w)
{
  const double *mu = st->m->mu;
  double total = 0, x;
  uint32_t j, last = 0;
  for (j = 0; j < st->J; j++) total += (double)(st->pool[j].N - w->k[j]) * mu[j];
  x = lbmc_u01(st->s_route) * total;
  for (j = 0; j < st->J; j++) {
    double wj = (double)(st->pool[j].N - w->k[j]) * mu[j];
    if (wj <= 0) continue;
    last = j;
    if (x < wj) return j;
    x -= wj;
  }
  return last; /* rounding at the upper end */
}

static lbmc_occ_class lbmc_balanced_occ_route(lbmc_occ_state *st, void *ws, uint32_t r)
{
  lbmc_balanced_occ_ws *w = ws;
  const uint32_t c = (uint32_t)st->m->param;
  lbmc_occ_class best = {0, UINT32_MAX, 0};
  uint64_t ties = 0;
  (void)r;
  for (uint32_t j = 0; j < st->J; j++) w->k[j] = 0;
  for (uint32_t i = 0; i < c; i++) {
    uint32_t j = lbmc_balanced_occ_pool(st, w);
    uint64_t P = lbmc_occ_draw_distinct(st->s_route, (uint64_t)st->pool[j].N, w->drawn + j * c,
                                        (uint32_t)w->k[j]);
    const uint32_t k = lbmc_occ_level(&st->pool[j], (int64_t)P);
    lbmc_occ_class cl = {j, k, P - (uint64_t)st->pool[j].G[k + 1] + 1};
    w->k[j]++;
    if (cl.k < best.k) {
      best = cl;
      ties = 1;
    } else if (cl.k == best.k && lbmc_occ_uint(st->s_route, ++ties) == 0) {
      best = cl; /* reservoir choice: each tied server kept with probability 1/ties */
    }
  }
  st->tally.c.messages += 2 * (uint64_t)c;
  return best;
}

static void lbmc_balanced_occ_law(const lbmc_occ_mf *mf, double *p)
{
  lbmc_occ_law_min_of(mf, mf->m->mu, (double)mf->m->param, 0, p);
}

static const lbmc_occupancy_ops lbmc_balanced_occupancy = {
    .create = lbmc_balanced_occ_create,
    .destroy = lbmc_balanced_occ_destroy,
    .route = lbmc_balanced_occ_route,
    .law = lbmc_balanced_occ_law,
};

const lbmc_policy_type lbmc_policy_balanced = {
    .name = "balanced",
    .param = LBMC_PARAM_REQUIRED,
    .param_name = "c",
    .param_le_n = 1,
    .summary = "sample c distinct servers with probability proportional to mu, join the fewest "
               "customers (2c messages)",
    .messages = "2c per arrival (c queries, c replies)",
    .messages_per_arrival = "2*d",
    .occupancy = &lbmc_balanced_occupancy,
    .create = lbmc_balanced_create,
    .destroy = lbmc_balanced_destroy,
    .route = lbmc_balanced_route,
};
