/* random: a server chosen uniformly among all n; no messages (docs/model.md,
 * "Policies"). */
#include "../system/policy.h"

static uint32_t lbmc_random_route(lbmc_state *st, void *ws, uint32_t r)
{
  (void)ws;
  (void)r;
  return lbmc_uint(st->s_route, st->n);
}

const lbmc_policy_type lbmc_policy_random = {
    .name = "random",
    .param = LBMC_PARAM_NONE,
    .summary = "a server chosen uniformly among all n (0 messages)",
    .messages = "0",
    .messages_per_arrival = "0",
    .route = lbmc_random_route,
};
