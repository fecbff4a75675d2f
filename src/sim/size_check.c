/* The checks of a run made before anything runs: the size check (how many events a
 * replica may be asked to simulate: counts are summed in doubles, so a replica must
 * stay below LBMC_MAX_EVENTS, lbmc/sim.h, for its counts to stay exact) and the engine
 * check (the engine asked for, or chosen, simulates the model). */
#include <stdio.h>
#include <unistd.h>

#include "../engine/engine.h"
#include "lbmc/engines.h"
#include "lbmc/sim.h"

double lbmc_run_memory(const lbmc_model *m, const lbmc_run_options *o, double *per_customer)
{
  const lbmc_engine_type *t = lbmc_engine_choose(m, (lbmc_engine_kind)o->engine, NULL, 0, NULL, 0);
  double per = 0, bytes = t && t->memory ? t->memory(m, (int)o->tail_k, &per) : 0;
  if (per_customer) *per_customer = per;
  return bytes;
}

/* This machine's physical memory in bytes (0 if unknown). */
static double lbmc_physical_memory(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

lbmc_err lbmc_run_check_size(const lbmc_model *m, const lbmc_run_options *o, const char *where)
{
  double horizon = o->time + (o->warmup_auto ? 0 : o->warmup);
  double events = 2 * lbmc_model_lambda(m) * (double)lbmc_model_n(m) * horizon;
  double per_customer, bytes = lbmc_run_memory(m, o, &per_customer), ram = lbmc_physical_memory();
  if (ram > 0 && bytes > ram) {
    const lbmc_engine_type *t =
        lbmc_engine_choose(m, (lbmc_engine_kind)o->engine, NULL, 0, NULL, 0);
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "%s: a replica on the %s engine takes about %.3g GiB at n = %lld (%.0f "
                      "bytes per server%s), more than this machine's %.3g GiB of memory: lower "
                      "n, or use an engine whose memory does not grow with n where one applies",
                      where, t->name, bytes / 1073741824.0, (long long)lbmc_model_n(m),
                      bytes / (double)lbmc_model_n(m),
                      per_customer > 0 ? ", and more with each customer held" : "",
                      ram / 1073741824.0);
  }
  if (!(events <= LBMC_MAX_EVENTS))
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "%s: a replica would simulate about %.3g events (2 lambda n (warmup + "
                      "time)); allowed: at most %.3g, the most the counters hold exactly: "
                      "shorten warmup/time or use more replicas",
                      where, events, LBMC_MAX_EVENTS);
  return LBMC_SUCCESS;
}

const char *lbmc_run_engine(const lbmc_model *m, const lbmc_run_options *o, char *why, size_t len)
{
  const lbmc_engine_kind kind = (lbmc_engine_kind)o->engine;
  char reasons[1024], apply[128];
  const lbmc_engine_type *t =
      lbmc_engine_choose(m, kind, reasons, sizeof reasons, apply, sizeof apply);
  if (len) why[0] = '\0';
  if (t) return t->name;
  if (kind != LBMC_ENGINE_AUTO)
    snprintf(why, len, "%s cannot simulate this model (%s); engines that apply: %s",
             lbmc_engine_kind_name(kind), reasons, *apply ? apply : "none");
  else
    snprintf(why, len, "no engine can simulate this model (%s)", reasons);
  return NULL;
}

lbmc_err lbmc_run_check_engine(const lbmc_model *m, const lbmc_run_options *o, const char *where,
                               const char **engine)
{
  char why[1280], key[512];
  const lbmc_engine_type *t;
  if (!lbmc_run_engine(m, o, why, sizeof why))
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: %s", lbmc_run_option_key(key, sizeof key, where, "engine"),
                      why);
  t = lbmc_engine_choose(m, (lbmc_engine_kind)o->engine, NULL, 0, NULL, 0);
  if (o->max_customers > 0 && (uint64_t)o->max_customers > t->cap_max)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %lld is not allowed with the %s engine, which holds customers one "
                      "by one: allowed: 0 (default) to %llu; the occupancy engine takes up to %lld",
                      lbmc_run_option_key(key, sizeof key, where, "max_customers"),
                      o->max_customers, t->name, (unsigned long long)t->cap_max,
                      LBMC_MAX_CUSTOMERS);
  if (engine) *engine = t->name;
  return LBMC_SUCCESS;
}
