/* random: a server chosen uniformly among all n; no messages (SPEC section 2). */
#include "../engine/occ_policy.h"
#include "../engine/policy.h"

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
    .route = lbmc_random_route,
};

/* ---- Occupancy form (issue 10, src/engine/occ_policy.h): a uniform position ---- */

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

const lbmc_occ_ops lbmc_occ_random = {
    .policy = &lbmc_policy_random,
    .route = lbmc_random_occ_route,
    .law = lbmc_random_occ_law,
};
