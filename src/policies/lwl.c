/* lwl(d): sample d servers uniformly, join the one with the least workload: the
 * remaining work at the server in time units at its pool's speed (the service in
 * progress plus the waiting requirements; Bramson, Lu & Prabhakar, "Asymptotic
 * independence of queues under randomized load balancing", Queueing Systems 71,
 * 2012). 2d messages per arrival. Sampling distinct (default) or with_replacement;
 * ties (e.g. several idle servers) uniformly among the sampled positions. Needs the
 * general-service engine, which keeps the workloads. */
#include "../system/policy.h"
#include "sample.h"

/* Any d and sampling (not inlined: the d = 2 path below stays short). */
static __attribute__((noinline)) uint32_t lbmc_lwl_route_any(lbmc_state *st, uint32_t *sorted)
{
  const uint32_t d = (uint32_t)st->m->param;
  const int distinct = st->m->sampling == LBMC_SAMPLING_DISTINCT;
  uint32_t best = 0;
  double best_w = 0;
  for (uint32_t i = 0; i < d; i++) {
    uint32_t s = distinct ? lbmc_draw_distinct(st->s_route, st->n, sorted, i)
                          : lbmc_uint(st->s_route, st->n);
    double work = lbmc_workload(st, s);
    if (i == 0 || work < best_w) {
      best_w = work;
      best = s;
    }
  }
  return best;
}

static uint32_t lbmc_lwl_route(lbmc_state *st, void *ws, uint32_t r)
{
  const uint32_t d = (uint32_t)st->m->param;
  (void)r;
  st->tally.c.messages += 2 * (int64_t)d;
  if (d == 2 && st->m->sampling == LBMC_SAMPLING_DISTINCT) { /* the same draws and choice */
    const uint32_t a = lbmc_uint(st->s_route, st->n);
    uint32_t b = lbmc_uint(st->s_route, st->n - 1);
    b += b >= a;
    return lbmc_workload(st, b) < lbmc_workload(st, a) ? b : a;
  }
  return lbmc_lwl_route_any(st, ws); /* ws: d drawn servers, ascending (distinct) */
}

const lbmc_policy_type lbmc_policy_lwl = {
    .name = "lwl",
    .param = LBMC_PARAM_REQUIRED,
    .param_name = "d",
    .param_le_n = 1,
    .summary = "sample d servers, join the least remaining work (2d messages); general engine",
    .messages = "2d per arrival (d queries, d replies)",
    .messages_per_arrival = "2*d",
    .uses_sampling = 1,
    .needs_workload = 1,
    .create = lbmc_sample_create,
    .destroy = lbmc_sample_destroy,
    .route = lbmc_lwl_route,
    .prefetch = lbmc_sample_prefetch,
};
