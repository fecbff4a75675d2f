/* The table of inputs (inputs.h) and the reading of one value of each type, shared by
 * job files and lbmc sim so that a value is judged and worded the same everywhere. */
#include "inputs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../policies/registry.h"
#include "lbmc/check.h"
#include "lbmc/engines.h"

const lbmc_input lbmc_inputs[LBMC_INPUTS] = {
#define LBMC_X_INPUT_ROW(id, ...)  [LBMC_IN_##id] = {__VA_ARGS__},
#define LBMC_X_INPUT_AXIS(id, ...) [LBMC_IN_##id] = {.axis = 1, __VA_ARGS__},
    LBMC_INPUT_LIST(LBMC_X_INPUT_ROW, LBMC_X_INPUT_AXIS)
#undef LBMC_X_INPUT_ROW
#undef LBMC_X_INPUT_AXIS
};

int lbmc_input_is_run_option(const lbmc_input *row)
{
  return row->type == LBMC_IT_RUN_REAL || row->type == LBMC_IT_RUN_INT ||
         row->type == LBMC_IT_RUN_COUNT || row->type == LBMC_IT_WARMUP ||
         row->type == LBMC_IT_CHOICE || row->type == LBMC_IT_ENGINE || row->type == LBMC_IT_INIT ||
         row->type == LBMC_IT_TRANSIENT || row->type == LBMC_IT_RUN_SWITCH;
}

int lbmc_input_takes_value(const lbmc_input *row)
{
  return row->type != LBMC_IT_FLAG && row->type != LBMC_IT_RUN_SWITCH;
}

/* Index of text among the ", "-separated words of choices, or -1. */
static int lbmc_input_choice(const char *choices, const char *text)
{
  const size_t len = strlen(text);
  int i = 0;
  for (const char *p = choices; *p; i++) {
    size_t w = strcspn(p, ",");
    if (w == len && strncmp(p, text, len) == 0) return i;
    p += w;
    while (*p == ',' || *p == ' ') p++;
  }
  return -1;
}

lbmc_err lbmc_input_parse(const lbmc_input *row, const char *where, const char *text,
                          lbmc_input_value *v)
{
  switch (row->type) {
  case LBMC_IT_INT:
  case LBMC_IT_RUN_INT:
  case LBMC_IT_RUN_COUNT: { /* too large for any integer: say the setting's real limits */
    char allowed[256];
    if (row->what)
      snprintf(allowed, sizeof allowed, "%s", row->what);
    else
      snprintf(allowed, sizeof allowed, "an integer from %ld to %ld", row->lo, row->hi);
    return lbmc_parse_long_allowed(where, text, strlen(text), allowed, &v->l);
  }
  case LBMC_IT_POSITIVE:
  case LBMC_IT_RUN_REAL: return lbmc_parse_real(where, text, &v->x);
  case LBMC_IT_BETA:
    if (strcmp(text, "rest") == 0) {
      v->x = NAN;
      return LBMC_SUCCESS;
    }
    return lbmc_parse_real(where, text, &v->x);
  case LBMC_IT_BUFFER: return lbmc_parse_buffer(where, text, &v->l);
  case LBMC_IT_WARMUP:
    v->l = strcmp(text, "auto") == 0;
    return v->l ? LBMC_SUCCESS : lbmc_parse_real(where, text, &v->x);
  case LBMC_IT_POLICY: {
    lbmc_policy_spec spec;
    LBMC_CALL(lbmc_policy_parse(where, text, &spec));
    v->l = spec.alias && spec.alias->stale >= 0; /* the name fixes stale (jiq: keep) */
    return LBMC_SUCCESS;
  }
  case LBMC_IT_OPTION:
  case LBMC_IT_CHOICE:
    v->l = lbmc_input_choice(row->choices, text);
    if (v->l >= 0) return LBMC_SUCCESS;
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not allowed; allowed: %s", where, text,
                      row->choices);
  case LBMC_IT_ENGINE: {
    char names[256];
    v->l = lbmc_engine_kind_find(text);
    if (v->l >= 0) return LBMC_SUCCESS;
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not allowed; allowed: %s", where, text,
                      lbmc_engine_names(names, sizeof names, 1, ", ", ", "));
  }
  case LBMC_IT_PATH:
    if (*text) return LBMC_SUCCESS;
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: an empty path is not allowed; %s is required (or leave the key out)",
                      where, row->what);
  case LBMC_IT_FLAG: v->l = 1; return LBMC_SUCCESS;
  case LBMC_IT_RUN_SWITCH: /* lbmc sim's flag has no text */
    v->l = !text || strcmp(text, "true") == 0;
    if (!text || v->l || strcmp(text, "false") == 0) return LBMC_SUCCESS;
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not allowed; allowed: true, false", where, text);
  case LBMC_IT_INIT:
  case LBMC_IT_TRANSIENT: {
    lbmc_run_options o;
    lbmc_run_options_default(&o);
    return row->type == LBMC_IT_INIT ? lbmc_run_options_parse_init(where, text, &o)
                                     : lbmc_run_options_parse_transient(where, text, &o);
  }
  default: return LBMC_SUCCESS; /* text kept as written */
  }
}

lbmc_err lbmc_input_check(const lbmc_input *row, const char *where, const lbmc_input_value *v)
{
  switch (row->type) {
  case LBMC_IT_INT: /* the row's own wording of its range, as lbmc_input_parse's message */
    if (row->what && (v->l < row->lo || v->l > row->hi))
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: %ld is not allowed; %s is required", where, v->l,
                        row->what);
    return lbmc_check_int_range(where, v->l, row->lo, row->hi);
  case LBMC_IT_POSITIVE: return lbmc_check_positive(where, v->x);
  case LBMC_IT_BETA: return isnan(v->x) ? LBMC_SUCCESS : lbmc_check_beta(where, v->x);
  default: return LBMC_SUCCESS;
  }
}

void lbmc_input_apply(const lbmc_input *row, const lbmc_input_value *v, lbmc_run_options *o)
{
  char *at = (char *)o + row->opt;
  switch (row->type) {
  case LBMC_IT_RUN_REAL: memcpy(at, &v->x, sizeof v->x); break;
  case LBMC_IT_RUN_INT: memcpy(at, &v->l, sizeof v->l); break;
  case LBMC_IT_RUN_COUNT: {
    long long c = v->l;
    memcpy(at, &c, sizeof c);
    break;
  }
  case LBMC_IT_CHOICE:
  case LBMC_IT_ENGINE:
  case LBMC_IT_RUN_SWITCH: {
    int c = (int)v->l;
    memcpy(at, &c, sizeof c);
    break;
  }
  case LBMC_IT_WARMUP:
    o->warmup_auto = (int)v->l;
    if (!v->l) o->warmup = v->x;
    break;
  case LBMC_IT_INIT: /* checked by lbmc_input_parse */
    if (v->text) (void)lbmc_run_options_parse_init("", v->text, o);
    break;
  case LBMC_IT_TRANSIENT:
    if (v->text) (void)lbmc_run_options_parse_transient("", v->text, o);
    break;
  default: break;
  }
}

const char *lbmc_input_default(const lbmc_input *row, char *buf, size_t len)
{
  lbmc_run_options o;
  const char *at = (const char *)&o + row->opt;
  buf[0] = '\0';
  lbmc_run_options_default(&o);
  if (row->def) {
    snprintf(buf, len, " (default %s)", row->def);
  } else if (row->type == LBMC_IT_RUN_REAL || row->type == LBMC_IT_WARMUP) {
    double x;
    memcpy(&x, at, sizeof x);
    snprintf(buf, len, " (default %g)", x);
  } else if (row->type == LBMC_IT_RUN_INT) {
    long l;
    memcpy(&l, at, sizeof l);
    snprintf(buf, len, " (default %ld)", l);
  }
  return buf;
}
