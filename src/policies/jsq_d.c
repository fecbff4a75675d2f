/* jsq(d): sample d servers uniformly, join the one with the fewest customers; 2d
 * messages per arrival (d queries, d replies). Sampling "distinct" (without
 * replacement) or "with_replacement" (Mitzenmacher, IEEE TPDS 12(10), 2001).
 * Ties: uniformly among the sampled positions holding the fewest customers; the
 * sample order is exchangeable, so the first such position is a uniform choice. */
#include <stdlib.h>

#include "../system/occ_policy.h"
#include "../system/policy.h"
#include "occ_laws.h"
#include "sample.h"

static uint32_t lbmc_jsqd_route(lbmc_state *st, void *ws, uint32_t r)
{
  uint32_t *sorted = ws; /* d: drawn servers, ascending (distinct sampling) */
  const uint32_t d = (uint32_t)st->m->param;
  const int distinct = st->m->sampling == LBMC_SAMPLING_DISTINCT;
  uint32_t best = 0, best_q = UINT32_MAX;
  (void)r;
  st->tally.c.messages += 2 * (int64_t)d;
  if (d == 2 && distinct) { /* the common case, without the general bookkeeping */
    uint32_t a = lbmc_uint(st->s_route, st->n), b = lbmc_uint(st->s_route, st->n - 1);
    b += b >= a;
    return lbmc_q(st, b) < lbmc_q(st, a) ? b : a;
  }
  for (uint32_t i = 0; i < d; i++) {
    uint32_t s = distinct ? lbmc_draw_distinct(st->s_route, st->n, sorted, i)
                          : lbmc_uint(st->s_route, st->n);
    uint32_t q = lbmc_q(st, s);
    if (q < best_q) {
      best_q = q;
      best = s;
    }
  }
  return best;
}

/* ---- Occupancy form (the occupancy engine, src/system/occ_policy.h) ----
 * d positions drawn uniformly (distinct: without replacement) among the n, whose
 * classes follow from the counts; the customer joins the first drawn at the lowest
 * level (the draw order is exchangeable, so this is uniform among the tied). */

static lbmc_err lbmc_jsqd_occ_create(const lbmc_occ_state *st, void **ws)
{
  uint64_t *sorted = malloc(sizeof *sorted * (size_t)st->m->param);
  if (!sorted) return LBMC_ERROR(LBMC_ERR_MEMORY, "jsq(d): out of memory");
  *ws = sorted;
  return LBMC_SUCCESS;
}

static void lbmc_jsqd_occ_destroy(void **ws)
{
  free(*ws);
  *ws = NULL;
}

/* Any d, both samplings, any pools (kept out of line: the common case below is a
 * leaf without its registers and stack). */
__attribute__((noinline)) static lbmc_occ_class lbmc_jsqd_occ_route_any(lbmc_occ_state *st,
                                                                        void *ws)
{
  const uint32_t d = (uint32_t)st->m->param;
  const uint64_t n = (uint64_t)st->n;
  const int distinct = st->m->sampling == LBMC_SAMPLING_DISTINCT;
  lbmc_occ_class best = {0, UINT32_MAX, 0};
  if (d == 2 && distinct) {
    uint64_t a = lbmc_occ_uint(st->s_route, n), b = lbmc_occ_uint(st->s_route, n - 1);
    lbmc_occ_class ca, cb;
    b += b >= a;
    ca = lbmc_occ_class_of(st, (int64_t)a);
    cb = lbmc_occ_class_of(st, (int64_t)b);
    return cb.k < ca.k ? cb : ca;
  }
  for (uint32_t i = 0; i < d; i++) {
    uint64_t Q =
        distinct ? lbmc_occ_draw_distinct(st->s_route, n, ws, i) : lbmc_occ_uint(st->s_route, n);
    lbmc_occ_class c = lbmc_occ_class_of(st, (int64_t)Q);
    if (c.k < best.k) best = c;
  }
  return best;
}

static lbmc_occ_class lbmc_jsqd_occ_route(lbmc_occ_state *st, void *ws, uint32_t r)
{
  (void)r;
  if (st->m->param == 2 && st->m->sampling == LBMC_SAMPLING_DISTINCT && st->J == 1)
    return lbmc_occ_route_pair2(st); /* the common case: one pool, whose positions are the n */
  st->tally.c.messages += 2 * (uint64_t)st->m->param;
  return lbmc_jsqd_occ_route_any(st, ws);
}

static void lbmc_jsqd_occ_law(const lbmc_occ_mf *mf, double *p)
{
  lbmc_occ_law_min_of(mf, NULL, (double)mf->m->param, mf->m->sampling == LBMC_SAMPLING_DISTINCT, p);
}

static const lbmc_occupancy_ops lbmc_jsq_d_occupancy = {
    .create = lbmc_jsqd_occ_create,
    .destroy = lbmc_jsqd_occ_destroy,
    .route = lbmc_jsqd_occ_route,
    .law = lbmc_jsqd_occ_law,
    .pair2 = 1,
};

const lbmc_policy_type lbmc_policy_jsq_d = {
    .name = "jsq",
    .param = LBMC_PARAM_REQUIRED,
    .param_name = "d",
    .param_le_n = 1,
    .summary = "sample d servers, join the fewest customers (2d messages); --sampling applies",
    .messages = "2d per arrival (d queries, d replies)",
    .messages_per_arrival = "2*d",
    .uses_sampling = 1,
    .occupancy = &lbmc_jsq_d_occupancy,
    .create = lbmc_sample_create,
    .destroy = lbmc_sample_destroy,
    .route = lbmc_jsqd_route,
    .prefetch = lbmc_sample_prefetch,
};
