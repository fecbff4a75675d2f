/* The engine check of a run, made before anything runs: the engine asked for (or, with
 * auto, the one chosen) simulates the model, and the customer cap fits it; and the name
 * of the engine a point runs on. The size check is in size_check.c. */
#include <stdio.h>

#include "../engine/engine.h"
#include "lbmc/engines.h"
#include "lbmc/model.h"
#include "lbmc/sim.h"

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
  if (o->init == LBMC_INIT_TAIL && !t->tail_start) /* say it now, not at the first replica */
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: a tail:... start is not allowed with the %s engine (policy %s), which "
                      "cannot start from a given state; allowed: empty or meanfield, or a model "
                      "the occupancy engine simulates",
                      lbmc_run_option_key(key, sizeof key, where, "init"), t->name,
                      lbmc_model_policy(m));
  if (engine) *engine = t->name;
  return LBMC_SUCCESS;
}
