/* jsq(d): sample d servers uniformly, join the one with the fewest customers; 2d
 * messages per arrival (d queries, d replies). Sampling "distinct" (without
 * replacement) or "with_replacement" (Mitzenmacher, IEEE TPDS 12(10), 2001).
 * Ties: uniformly among the sampled positions holding the fewest customers; the
 * sample order is exchangeable, so the first such position is a uniform choice. */
#include "../system/policy.h"
#include "sample.h"

static uint32_t lbmc_jsqd_route(lbmc_state *st, void *ws, uint32_t r)
{
  uint32_t *sorted = ws; /* d: drawn servers, ascending (distinct sampling) */
  const uint32_t d = (uint32_t)st->m->param;
  const int distinct = st->m->sampling == LBMC_SAMPLING_DISTINCT;
  uint32_t best = 0, best_q = UINT32_MAX;
  (void)r;
  st->c.messages += 2 * (int64_t)d;
  if (d == 2 && distinct) { /* the common case, without the general bookkeeping */
    uint32_t a = lbmc_uint(st->s_route, st->n), b = lbmc_uint(st->s_route, st->n - 1);
    b += b >= a;
    return st->q[b] < st->q[a] ? b : a;
  }
  for (uint32_t i = 0; i < d; i++) {
    uint32_t s = distinct ? lbmc_draw_distinct(st->s_route, st->n, sorted, i)
                          : lbmc_uint(st->s_route, st->n);
    if (st->q[s] < best_q) {
      best_q = st->q[s];
      best = s;
    }
  }
  return best;
}

const lbmc_policy_type lbmc_policy_jsq_d = {
    .name = "jsq",
    .param = LBMC_PARAM_REQUIRED,
    .param_name = "d",
    .param_le_n = 1,
    .summary = "sample d servers, join the fewest customers (2d messages); --sampling applies",
    .messages = "2d per arrival (d queries, d replies)",
    .messages_per_arrival = "2*d",
    .uses_sampling = 1,
    .create = lbmc_sample_create,
    .destroy = lbmc_sample_destroy,
    .route = lbmc_jsqd_route,
};
