/* The run settings of a replica: their defaults and their checks (include/lbmc/
 * run_options.h). One check serves the command line ("--" prefixes) and job files
 * (a "file: " prefix), so a value is judged, and its message worded, alike. */
#include "lbmc/run_options.h"

#include <stdio.h>
#include <string.h>

#include "lbmc/check.h"

const char *const lbmc_init_kind_names[2] = {"empty", "meanfield"};

void lbmc_run_options_default(lbmc_run_options *o)
{
  memset(o, 0, sizeof *o);
  o->warmup = 100;
  o->time = 1000;
  o->batches = 20;
  o->confidence = 0.95;
  o->tail_k = 10;
  o->runaway_fraction = 0.02;
}

const char *lbmc_run_option_key(char *key, size_t len, const char *where, const char *name)
{
  size_t w = strlen(where);
  snprintf(key, len, "%s%s", where, name);
  if (strcmp(where, "--") == 0)
    for (char *c = key + w; *c; c++)
      if (*c == '_') *c = '-';
  return key;
}

lbmc_err lbmc_run_options_check(const lbmc_run_options *o, const char *where)
{
  char key[160];
#define LBMC_KEY(name) lbmc_run_option_key(key, sizeof key, where, name)
  if (!o->warmup_auto) LBMC_CALL(lbmc_check_nonnegative(LBMC_KEY("warmup"), o->warmup));
  LBMC_CALL(lbmc_check_positive(LBMC_KEY("time"), o->time));
  LBMC_CALL(lbmc_check_int_range(LBMC_KEY("batches"), o->batches, 2, 100000));
  LBMC_CALL(lbmc_check_open_unit(LBMC_KEY("confidence"), o->confidence));
  LBMC_CALL(lbmc_check_int_range(LBMC_KEY("tail_k"), o->tail_k, 1, 100000));
  if (o->max_customers < 0 || o->max_customers > LBMC_MAX_CUSTOMERS)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: %lld is not allowed; allowed: 0 (default) to %lld",
                      LBMC_KEY("max_customers"), o->max_customers, LBMC_MAX_CUSTOMERS);
  if (o->engine < LBMC_ENGINE_AUTO) /* past the registry: when the engine is chosen */
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: %d is not allowed; allowed: an engine's name or auto",
                      LBMC_KEY("engine"), o->engine);
  if (o->init != LBMC_INIT_EMPTY && o->init != LBMC_INIT_MEANFIELD)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: %d is not allowed; allowed: empty, meanfield",
                      LBMC_KEY("init"), o->init);
  LBMC_CALL(lbmc_check_positive(LBMC_KEY("runaway_fraction"), o->runaway_fraction));
#undef LBMC_KEY
  return LBMC_SUCCESS;
}
