/* random: a server chosen uniformly among all n; no messages (docs/model.md,
 * "Policies"). */
#include "../system/occ_policy.h"
#include "../system/policy.h"
#include "occ_laws.h"

static uint32_t lbmc_random_route(lbmc_state *st, void *ws, uint32_t r)
{
  (void)ws;
  (void)r;
  return lbmc_uint(st->s_route, st->n);
}

/* ---- Occupancy form (the occupancy engine, src/system/occ_policy.h): a uniform position ---- */

static lbmc_occ_class lbmc_random_occ_route(lbmc_occ_state *st, void *ws, uint32_t r)
{
  (void)ws;
  (void)r;
  return lbmc_occ_class_of(st, (int64_t)lbmc_occ_uint(st->s_route, (uint64_t)st->n));
}

static void lbmc_random_occ_law(const lbmc_occ_mf *mf, double *p)
{
  lbmc_occ_law_min_of(mf, NULL, 1, 0, p);
}

static const lbmc_occupancy_ops lbmc_random_occupancy = {
    .route = lbmc_random_occ_route,
    .law = lbmc_random_occ_law,
};

const lbmc_policy_type lbmc_policy_random = {
    .name = "random",
    .param = LBMC_PARAM_NONE,
    .summary = "a server chosen uniformly among all n (0 messages)",
    .messages = "0",
    .messages_per_arrival = "0",
    .occupancy = &lbmc_random_occupancy,
    .route = lbmc_random_route,
};
