/* The run settings of a replica: their defaults and their checks (include/lbmc/
 * run_options.h). One check serves the command line ("--" prefixes) and job files
 * (a "file: " prefix), so a value is judged, and its message worded, alike. */
#include "lbmc/run_options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/check.h"

const char *const lbmc_init_kind_names[3] = {"empty", "meanfield", "tail"};

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
  if (o->init != LBMC_INIT_EMPTY && o->init != LBMC_INIT_MEANFIELD && o->init != LBMC_INIT_TAIL)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: %d is not allowed; allowed: empty, meanfield, tail:...",
                      LBMC_KEY("init"), o->init);
  if (o->transient[2] > 0 && o->warmup_auto)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: auto is not allowed with %s (a transient run is observed from its "
                      "start; its warm-up is T0)",
                      LBMC_KEY("warmup"), strcmp(where, "--") == 0 ? "--transient" : "transient");
  LBMC_CALL(lbmc_check_positive(LBMC_KEY("runaway_fraction"), o->runaway_fraction));
  if (o->pairs != 0 && o->pairs != 1)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: %d is not allowed; allowed: true, false",
                      LBMC_KEY("pairs"), o->pairs);
#undef LBMC_KEY
  return LBMC_SUCCESS;
}

long lbmc_transient_times(const lbmc_run_options *o)
{
  if (!(o->transient[2] > 0)) return 0;
  return 1 + lround((o->transient[1] - o->transient[0]) / o->transient[2]);
}

double lbmc_transient_time(const lbmc_run_options *o, long i)
{
  return i + 1 < lbmc_transient_times(o) ? o->transient[0] + (double)i * o->transient[2]
                                         : o->transient[1];
}

/* A number at *p up to a character of `stop` (or the end), read by lbmc_read_real as
 * every number lbmc takes (decimal only: no hexadecimal, inf or nan, nothing left over);
 * advances *p to that character. */
static int lbmc_parse_part(const char **p, const char *stop, double *x)
{
  const size_t len = strcspn(*p, stop);
  char small[64], *copy = len < sizeof small ? small : malloc(len + 1);
  int ok;
  if (!copy) return -1;
  memcpy(copy, *p, len);
  copy[len] = '\0';
  ok = lbmc_read_real(copy, x);
  if (copy != small) free(copy);
  if (!ok) return -1;
  *p += len;
  return 0;
}

lbmc_err lbmc_run_options_parse_transient(const char *where, const char *text, lbmc_run_options *o)
{
  const char *p = text;
  double t[3], m;
  for (int i = 0; i < 3; i++) {
    if (lbmc_parse_part(&p, i < 2 ? ":" : "", &t[i]) != 0 || (i < 2 && *p++ != ':'))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: '%s' is not allowed; allowed: T0:T1:DT, three numbers such as "
                        "0:40:0.5 (observation times T0, T0 + DT, ..., T1)",
                        where, text);
  }
  m = (t[1] - t[0]) / t[2];
  if (t[0] < 0 || t[1] <= t[0] || t[2] <= 0)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not allowed; allowed: 0 <= T0 < T1 and DT > 0",
                      where, text);
  if (fabs(m - round(m)) > 1e-9 * fmax(1, m) || round(m) + 1 > LBMC_TRANSIENT_MAX_TIMES)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: '%s' is not allowed; allowed: DT dividing T1 - T0 into at most %d "
                      "steps",
                      where, text, LBMC_TRANSIENT_MAX_TIMES - 1);
  memcpy(o->transient, t, sizeof t);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_run_options_parse_init(const char *where, const char *text, lbmc_run_options *o)
{
  const char *p = text + 5;
  int j = 0, k = 0;
  if (strcmp(text, "empty") == 0 || strcmp(text, "meanfield") == 0) {
    o->init = text[0] == 'e' ? LBMC_INIT_EMPTY : LBMC_INIT_MEANFIELD;
    o->init_levels = o->init_pools = 0;
    return LBMC_SUCCESS;
  }
  if (strncmp(text, "tail:", 5) != 0)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: '%s' is not allowed; allowed: empty, meanfield, or tail:F1,F2,... "
                      "(per pool separated by ';')",
                      where, text);
  memset(o->init_tail, 0, sizeof o->init_tail);
  o->init_levels = 0;
  for (;;) {
    double f;
    if (lbmc_parse_part(&p, ",;", &f) != 0 || !(f >= 0 && f <= 1) ||
        (k > 0 && f > o->init_tail[j][k - 1]))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: '%s' is not allowed; allowed: tail:F1,F2,... with 1 >= F1 >= F2 >= "
                        "... >= 0 (F_k: the fraction of a pool's servers holding at least k "
                        "customers), pools separated by ';'",
                        where, text);
    if (k >= LBMC_INIT_TAIL_LEVELS || j >= LBMC_MAX_POOLS)
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s': at most %d levels and %d pools", where, text,
                        LBMC_INIT_TAIL_LEVELS, LBMC_MAX_POOLS);
    o->init_tail[j][k++] = f;
    if (k > o->init_levels) o->init_levels = k;
    if (*p == '\0') break;
    if (*p++ == ';') {
      j++;
      k = 0;
    }
  }
  o->init = LBMC_INIT_TAIL;
  o->init_pools = j + 1;
  return LBMC_SUCCESS;
}
