/* The size check of a run, made before anything runs: how many events a replica may be
 * asked to simulate (counts are summed in doubles, so a replica must stay below
 * LBMC_MAX_EVENTS, lbmc/sim.h, for its counts to stay exact), and how wide the pair
 * statistics make a tick record. The engine check is in engine_check.c. */
#include "lbmc/sim.h"

lbmc_err lbmc_run_check_size(const lbmc_model *m, const lbmc_run_options *o, const char *where)
{
  double horizon = o->time + (o->warmup_auto ? 0 : o->warmup);
  double events = 2 * lbmc_model_lambda(m) * (double)lbmc_model_n(m) * horizon;
  if (!(events <= LBMC_MAX_EVENTS))
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "%s: a replica would simulate about %.3g events (2 lambda n (warmup + "
                      "time)); allowed: at most %.3g, the most the counters hold exactly: "
                      "shorten warmup/time or use more replicas",
                      where, events, LBMC_MAX_EVENTS);
  return LBMC_SUCCESS;
}

/* The pair statistics' block of a tick record: J C (C + 1) / 2 products within the pools
 * and J (J - 1) / 2 C^2 across them (src/observers/pairs.c), C = tail_k + 1. */
lbmc_err lbmc_run_check_pairs(const lbmc_model *m, const lbmc_run_options *o, const char *where)
{
  const double J = lbmc_model_pools(m), C = (double)o->tail_k + 1;
  const double width = J * C * (C + 1) / 2 + J * (J - 1) / 2 * C * C;
  char key[512];
  if (!o->pairs || width <= LBMC_PAIRS_MAX_WIDTH) return LBMC_SUCCESS;
  return LBMC_ERROR(LBMC_ERR_LIMIT,
                    "%s: the pair statistics of %g pool%s at tail_k %ld take %.0f doubles per "
                    "tick; allowed: at most %d: lower tail_k (the levels of the joint law)",
                    lbmc_run_option_key(key, sizeof key, where, "pairs"), J, J > 1 ? "s" : "",
                    o->tail_k, width, LBMC_PAIRS_MAX_WIDTH);
}
