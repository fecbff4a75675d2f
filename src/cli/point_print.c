/* How the commands show a point's estimates and verdict (cli.h): one cell per estimate,
 * with its interval, or "none observed, < X" for an event never seen, "unknown (...)"
 * for a quantile outside the histogram's range, "[a, ?]" for an open end; the table of
 * lbmc sim; and the same as JSON (lower, upper, upper_bound, flags as names), with the
 * point's model as JSON (from its description, lbmc_model_describe). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../stats/dhist.h"
#include "../stats/estimators.h"
#include "cli.h"
#include "lbmc/metrics.h"

#define LBMC_STR2(x) #x
#define LBMC_STR(x)  LBMC_STR2(x)

/* The rule of lbmc_quantile_withheld (stats/dhist.h), with its numbers. */
/* clang-format off */
static const char lbmc_unreliable_note[] =
    "a tail level needs " LBMC_STR(LBMC_Q_TAIL_UNITS) " replicas (or batches), any level "
    LBMC_STR(LBMC_Q_MIN_BEYOND) " customers beyond it";
/* clang-format on */

const char *lbmc_cli_level(double confidence, char *buf, size_t len)
{
  snprintf(buf, len, "%.10g%%", 100 * confidence); /* 99.9999999%, never "100%" */
  return buf;
}

/* A number as the tables print it. */
static const char *lbmc_num(double x, char *buf, size_t len)
{
  if (isnan(x))
    snprintf(buf, len, "?");
  else
    snprintf(buf, len, "%.6g", x);
  return buf;
}

const char *lbmc_cli_cell(char *buf, size_t len, double est, double lower, double upper,
                          double bound, unsigned flags)
{
  char a[32], b[32], c[32];
  if (flags & LBMC_IV_EMPTY)
    snprintf(buf, len, "no data");
  else if (flags & LBMC_IV_INFINITE)
    snprintf(buf, len, "inf (infinite)");
  else if (flags & LBMC_IV_ABOVE_RANGE)
    snprintf(buf, len, "unknown (above the histogram's range, > %s)", lbmc_num(lower, a, sizeof a));
  else if (flags & LBMC_IV_BELOW_RANGE)
    snprintf(buf, len, "unknown (below the histogram's range, < %s)", lbmc_num(upper, a, sizeof a));
  else if ((flags & LBMC_IV_NONE_OBSERVED) && !isnan(bound))
    snprintf(buf, len, "none observed, < %.3g", bound);
  else if (flags & LBMC_IV_NONE_OBSERVED)
    snprintf(buf, len, "0 (none observed)");
  else if ((flags & LBMC_IV_ALL_OBSERVED) && !isnan(lower))
    /* the mirror of "none observed, < b": the bound as 1 - b (lower itself, e.g.
     * 0.9999997, would print as "> 1" at six digits) */
    snprintf(buf, len, "1 (all observed, > 1 - %.3g)", 1 - lower);
  else if (isnan(lower) && isnan(upper))
    snprintf(buf, len, "%s (no interval)", lbmc_num(est, a, sizeof a));
  else
    snprintf(buf, len, "%s [%s, %s]", lbmc_num(est, a, sizeof a), lbmc_num(lower, b, sizeof b),
             lbmc_num(upper, c, sizeof c));
  return buf;
}

/* The note of a row: what its flags mean, shortly. */
static const char *lbmc_note(unsigned flags)
{
  if (flags & LBMC_IV_INFINITE) return "infinite mean: see the status";
  if (flags & LBMC_IV_HEAVY_TAIL) return "heavy tail: no reliable interval";
  if (flags & LBMC_IV_UNRELIABLE) return lbmc_unreliable_note;
  if (flags & LBMC_IV_FEW_EVENTS)
    return "fewer than 20 entries into this level: more replicas or time";
  if (flags & LBMC_IV_CORRELATED) return "batch means correlated: run longer";
  if (flags & LBMC_IV_NO_INTERVAL) return "fewer than two units with data";
  if (flags & LBMC_IV_UPPER_OPEN) return "upper end beyond the data";
  if (flags & LBMC_IV_LOWER_OPEN) return "lower end below the data";
  if (flags & LBMC_IV_START_BIAS) return "start bias not bounded (mean-field start)";
  if (flags & LBMC_IV_START_BIAS_WIDENED)
    return "widened by the start bias's bound (mean-field start)";
  return "";
}

void lbmc_cli_print_verdict(FILE *f, const lbmc_verdict *v)
{
  fprintf(f, "status: %s%s%s\n", lbmc_status_name(v->status), *v->reason ? ": " : "", v->reason);
  if (v->status == LBMC_STATUS_NOT_STATIONARY && v->suggested_replicas > 0)
    fprintf(f,
            "  more replicas would decide: e.g. --replicas %ld (the numbers below are kept, but "
            "the data cannot tell yet)\n",
            v->suggested_replicas);
  else if (v->status == LBMC_STATUS_NOT_STATIONARY && !isnan(v->suggested_time))
    fprintf(f,
            "  run longer: e.g. --time %g (the numbers below are kept, but the data cannot "
            "tell that the run reached its steady state)\n",
            v->suggested_time);
  else if (v->status == LBMC_STATUS_NOT_STATIONARY && (v->evidence & LBMC_EV_HEAVY_TAIL))
    fprintf(f, "  no run length makes the intervals reliable (heavy tail); the numbers below "
               "are kept, the intervals of the affected metrics withheld\n");
}

void lbmc_cli_print_point(FILE *f, const lbmc_model *m, long K, const lbmc_estimates *e,
                          const double *limit, const double *refined, const double *start_bias)
{
  const int J = lbmc_model_pools(m);
  char label[96], cell[160], lim[32];
  fprintf(f, "  %-28s %-44s", "metric", "estimate [interval]");
  if (limit) fprintf(f, " %-16s", "limit (n -> inf)");
  if (refined) fprintf(f, " %-16s", "refined x*+V/n");
  fprintf(f, " %12s  %s\n", "std err", "note");
  for (int i = 0; i < lbmc_metric_count_in(e->total, J, (int)K); i++) {
    const size_t off = lbmc_metric_offset(i, J, (int)K), len = lbmc_metric_size(i, J, (int)K);
    for (size_t k = 0; k < len; k++) {
      const size_t x = off + k;
      char se[32];
      lbmc_cli_cell(cell, sizeof cell, e->estimate[x], e->lower[x], e->upper[x], e->upper_bound[x],
                    e->flags[x]);
      if (isnan(e->std_err[x]))
        snprintf(se, sizeof se, "%s", "");
      else
        snprintf(se, sizeof se, "%.4g", e->std_err[x]);
      fprintf(f, "  %-28s %-44s",
              lbmc_metric_entry_name(i, (long)k, J, (int)K, label, sizeof label),
              cell); /* named as lbmc info --metrics reads it */
      if (limit) fprintf(f, " %-16s", lbmc_limit_cell(limit[x], lim, sizeof lim));
      if (refined) fprintf(f, " %-16s", lbmc_limit_cell(refined[x], lim, sizeof lim));
      if (start_bias && (e->flags[x] & LBMC_IV_START_BIAS_WIDENED) &&
          !(e->flags[x] & ~(LBMC_IV_START_BIAS_WIDENED | LBMC_IV_START_BIAS)))
        fprintf(f,
                " %12s  widened by the start bias's bound %.3g (standard error %.3g before; "
                "mean-field start)\n",
                se, start_bias[x], start_bias[e->total + x]);
      else
        fprintf(f, " %12s  %s\n", se, lbmc_note(e->flags[x]));
    }
  }
}

/* ---- JSON ---- */

/* A number; JSON has no infinity: an infinite estimate is the string "inf" (its flags say
 * "infinite"), NaN is null. */
static json_t *lbmc_json_num(double x)
{
  if (isinf(x)) return json_string(x > 0 ? "inf" : "-inf");
  return isfinite(x) ? json_real(x) : json_null();
}

/* A limit: a number, "inf" / "-inf", or null when unknown. */
static json_t *lbmc_json_limit(double x)
{
  return isinf(x) ? json_string(x > 0 ? "inf" : "-inf") : lbmc_json_num(x);
}

static json_t *lbmc_json_flags(unsigned flags)
{
  json_t *a = json_array();
  for (int b = 0; b < lbmc_interval_flags(); b++)
    if (flags & (1u << b)) json_array_append_new(a, json_string(lbmc_interval_flag_name(b)));
  return a;
}

/* One field of a metric in its shape: doubles x as numbers (as limits with lim = 1), or
 * flags (x NULL). */
static json_t *lbmc_json_field_of(const double *x, const unsigned *flags, lbmc_shape shape, int J,
                                  long K, int lim)
{
  json_t *(*num)(double) = lim ? lbmc_json_limit : lbmc_json_num;
  json_t *a;
  if (shape == LBMC_SHAPE_SCALAR) return x ? num(x[0]) : lbmc_json_flags(flags[0]);
  a = json_array();
  if (shape == LBMC_SHAPE_QUANTILE || shape == LBMC_SHAPE_POOL) {
    const int n = shape == LBMC_SHAPE_QUANTILE ? LBMC_QUANTILES : J;
    for (int k = 0; k < n; k++) json_array_append_new(a, x ? num(x[k]) : lbmc_json_flags(flags[k]));
    return a;
  }
  for (int j = 0; j < J; j++) {
    json_t *row = json_array();
    for (long k = 0; k < K; k++) {
      const size_t i = (size_t)j * (size_t)K + (size_t)k;
      json_array_append_new(row, x ? num(x[i]) : lbmc_json_flags(flags[i]));
    }
    json_array_append_new(a, row);
  }
  return a;
}

static json_t *lbmc_json_field(const double *x, const unsigned *flags, lbmc_shape shape, int J,
                               long K)
{
  return lbmc_json_field_of(x, flags, shape, J, K, 0);
}

json_t *lbmc_cli_json_estimates(const lbmc_estimates *e, int J, long K, const double *limit,
                                const char *const *sources, const double *refined,
                                const char *const *refined_sources, const char *refined_reason)
{
  json_t *est = json_object();
  for (int i = 0; i < lbmc_metric_count_in(e->total, J, (int)K); i++) {
    const lbmc_metric_info *info = lbmc_metric_get(i);
    const size_t off = lbmc_metric_offset(i, J, (int)K);
    json_t *o = json_object();
    json_object_set_new(o, "mean", lbmc_json_field(e->estimate + off, NULL, info->shape, J, K));
    json_object_set_new(o, "half_width",
                        lbmc_json_field(e->half_width + off, NULL, info->shape, J, K));
    json_object_set_new(o, "std_err", lbmc_json_field(e->std_err + off, NULL, info->shape, J, K));
    json_object_set_new(o, "lower", lbmc_json_field(e->lower + off, NULL, info->shape, J, K));
    json_object_set_new(o, "upper", lbmc_json_field(e->upper + off, NULL, info->shape, J, K));
    json_object_set_new(o, "upper_bound",
                        lbmc_json_field(e->upper_bound + off, NULL, info->shape, J, K));
    json_object_set_new(o, "flags", lbmc_json_field(NULL, e->flags + off, info->shape, J, K));
    if (limit) {
      json_object_set_new(o, "limit", lbmc_json_field_of(limit + off, NULL, info->shape, J, K, 1));
      json_object_set_new(o, "limit_source",
                          sources && sources[i] ? json_string(sources[i]) : json_null());
    }
    if (refined) { /* where a metric has no refined value: null, and the reason */
      const char *src = refined_sources ? refined_sources[i] : NULL;
      json_object_set_new(o, "limit_refined",
                          lbmc_json_field_of(refined + off, NULL, info->shape, J, K, 1));
      json_object_set_new(o, "limit_refined_source",
                          src              ? json_string(src)
                          : refined_reason ? json_string(refined_reason)
                                           : json_null());
    }
    json_object_set_new(est, info->name, o);
  }
  return est;
}

/* n C x C blocks of x as nested lists, [block][a][b]. */
static json_t *lbmc_json_blocks(const double *x, size_t n, int C)
{
  json_t *out = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *block = json_array();
    for (int a = 0; a < C; a++) {
      json_t *row = json_array();
      for (int b = 0; b < C; b++)
        json_array_append_new(
            row, lbmc_json_num(x[(i * (size_t)C + (size_t)a) * (size_t)C + (size_t)b]));
      json_array_append_new(block, row);
    }
    json_array_append_new(out, block);
  }
  return out;
}

json_t *lbmc_cli_json_pairs(const lbmc_pair_estimates *pe)
{
  json_t *out = json_object();
  for (int t = 0; t < LBMC_PAIR_TABLES; t++) {
    json_t *table = json_object();
    for (int k = 0; k < LBMC_PAIR_PARTS; k++) {
      json_t *v;
      if (!lbmc_pair_table_across(t)) {
        v = lbmc_json_blocks(pe->v[t][k], (size_t)pe->J, pe->C);
      } else { /* [i][j][a][b]: J rows of J blocks */
        v = json_array();
        for (int i = 0; i < pe->J; i++)
          json_array_append_new(v, lbmc_json_blocks(pe->v[t][k] + (size_t)i * (size_t)pe->J *
                                                                      (size_t)pe->C * (size_t)pe->C,
                                                    (size_t)pe->J, pe->C));
      }
      json_object_set_new(table, lbmc_pair_part_name(k), v);
    }
    json_object_set_new(out, lbmc_pair_table_name(t), table);
  }
  return out;
}

json_t *lbmc_cli_json_verdict(const lbmc_verdict *v)
{
  json_t *o = json_object(), *ev = json_array();
  char names[512];
  lbmc_evidence_names(v->evidence, names, sizeof names);
  for (char *save = NULL, *tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
    json_array_append_new(ev, json_string(tok));
  json_object_set_new(o, "evidence", ev);
  json_object_set_new(o, "level", json_integer(v->doubling)); /* the key as before */
  json_object_set_new(o, "time", lbmc_json_num(v->time));
  json_object_set_new(o, "warmup_used", lbmc_json_num(v->warmup_used));
  json_object_set_new(o, "time_used", lbmc_json_num(v->time_used));
  json_object_set_new(o, "suggested_time", lbmc_json_num(v->suggested_time));
  json_object_set_new(o, "warmup_near_cap", json_boolean(v->warmup_near_cap));
  json_object_set_new(o, "halves_p", lbmc_json_num(v->halves_p));
  json_object_set_new(o, "short_p", lbmc_json_num(v->short_p));
  json_object_set_new(o, "growth", lbmc_json_num(v->growth));
  json_object_set_new(o, "growth_lower", lbmc_json_num(v->growth_lower));
  json_object_set_new(o, "decel_lower", lbmc_json_num(v->decel_lower));
  json_object_set_new(o, "relaxation_time", lbmc_json_num(v->relaxation_time));
  json_object_set_new(o, "relaxation_upper", lbmc_json_num(v->relaxation_upper));
  json_object_set_new(o, "transient_bound", lbmc_json_num(v->transient_bound));
  json_object_set_new(o, "overload", lbmc_json_num(v->overload));
  json_object_set_new(o, "suggested_replicas", json_integer(v->suggested_replicas));
  return o;
}

json_t *lbmc_cli_json_model(const lbmc_model_description *d)
{
  json_t *model = json_object(), *pools = json_array();
  json_object_set_new(model, "n", json_integer(d->n));
  json_object_set_new(model, "lambda", json_real(d->lambda));
  json_object_set_new(model, "rho", json_real(d->rho));
  json_object_set_new(model, "policy", json_string(d->policy));
  json_object_set_new(model, "routers", json_integer(d->routers));
  json_object_set_new(model, "stale", json_string(d->stale));
  json_object_set_new(model, "sampling", json_string(d->sampling));
  for (int j = 0; j < d->J; j++) {
    const lbmc_pool_description *p = &d->pool[j];
    json_t *pool = json_object(), *speeds = json_array();
    json_object_set_new(pool, "beta", json_real(p->beta));
    json_object_set_new(pool, "mu", json_real(p->mu));
    json_object_set_new(pool, "buffer",
                        p->buffer == LBMC_BUFFER_INF ? json_string("inf")
                                                     : json_integer(p->buffer));
    json_object_set_new(pool, "servers", json_integer(p->servers));
    json_object_set_new(pool, "service", json_string(p->service->text));
    json_object_set_new(pool, "scv", lbmc_json_num(p->service->scv)); /* null if infinite */
    for (int k = 0; k < p->L; k++) json_array_append_new(speeds, json_real(p->mu_k[k]));
    json_object_set_new(pool, "mu_k", speeds);
    json_array_append_new(pools, pool);
  }
  json_object_set_new(model, "pools", pools);
  return model;
}
