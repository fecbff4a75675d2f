/* The size check of a run, made before anything runs: how many events a replica may be
 * asked to simulate (counts are summed in doubles, so a replica must stay below
 * LBMC_MAX_EVENTS, lbmc/sim.h, for its counts to stay exact). The engine check is in
 * engine_check.c. */
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
