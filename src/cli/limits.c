/* The limit column of lbmc sim --limit and lbmc info --limit: the n -> infinity limit of
 * each metric where one is known, from the one implementation, the Python package's
 * lbmc_analysis.limits (docs/limits.md), reached as lbmc plot reaches it (python.h):
 * `python3 -m lbmc_analysis limit --json POINTS` with the points' parameters as JSON, its
 * answer read back and laid out in the metric order of the estimates. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../io/results.h"
#include "cli.h"
#include "lbmc/metrics.h"
#include "python.h"

/* One pool as the point's JSON gives it: beta, mu or mu_k, buffer, service. */
static json_t *lbmc_limit_pool(double beta, double mu, long buffer, int L, const double *mu_k,
                               const char *service)
{
  json_t *pool = json_object();
  json_object_set_new(pool, "beta", json_real(beta));
  if (L > 1) {
    json_t *speeds = json_array();
    for (int k = 0; k < L; k++) json_array_append_new(speeds, json_real(mu_k[k]));
    json_object_set_new(pool, "mu_k", speeds);
  } else {
    json_object_set_new(pool, "mu", json_real(mu));
  }
  json_object_set_new(pool, "buffer",
                      buffer == LBMC_BUFFER_INF ? json_string("inf") : json_integer(buffer));
  json_object_set_new(pool, "service", json_string(service));
  return pool;
}

/* The settings of a point every view shares. */
static json_t *lbmc_limit_head(const char *policy, double lambda, long long n, long routers,
                               const char *stale, const char *sampling, long K)
{
  json_t *point = json_object();
  json_object_set_new(point, "policy", json_string(policy));
  json_object_set_new(point, "lambda", json_real(lambda));
  json_object_set_new(point, "n", json_integer(n));
  json_object_set_new(point, "routers", json_integer(routers));
  if (*stale) json_object_set_new(point, "stale", json_string(stale));
  if (*sampling) json_object_set_new(point, "sampling", json_string(sampling));
  json_object_set_new(point, "K", json_integer(K));
  return point;
}

json_t *lbmc_limit_point(const lbmc_model_description *d, long K)
{
  json_t *point = lbmc_limit_head(d->policy, d->lambda, d->n, d->routers, d->stale, d->sampling, K);
  json_t *pools = json_array();
  for (int j = 0; j < d->J; j++) {
    const lbmc_pool_description *p = &d->pool[j];
    json_array_append_new(
        pools, lbmc_limit_pool(p->beta, p->mu, p->buffer, p->L, p->mu_k, p->service->text));
  }
  json_object_set_new(point, "pools", pools);
  return point;
}

json_t *lbmc_limit_point_of(const lbmc_results *res, long i)
{
  const lbmc_point_info *p = &res->pt[i];
  json_t *point =
      lbmc_limit_head(p->policy, p->lambda, p->n, p->routers, p->stale, p->sampling, res->K);
  json_t *pools = json_array();
  for (int j = 0; j < res->J; j++)
    json_array_append_new(pools,
                          lbmc_limit_pool(p->beta[j], p->mu[j], p->buffer[j],
                                          res->slots[(size_t)i * (size_t)res->J + (size_t)j],
                                          LBMC_RES_MU_K(res, i, j), LBMC_RES_SERVICE(res, i, j)));
  json_object_set_new(point, "pools", pools);
  if (p->v.status == LBMC_STATUS_UNSTABLE) /* no refined value around a limit it never reaches */
    json_object_set_new(point, "status", json_string("unstable"));
  return point;
}

lbmc_err lbmc_limit_answers(const char *what, json_t *points, const char *const *extra,
                            json_t **answers)
{
  const char *args[64] = {"limit"};
  char *text = NULL, *list = json_dumps(points, JSON_COMPACT | JSON_REAL_PRECISION(17));
  json_error_t jerr;
  int n = 1;
  lbmc_err err;
  *answers = NULL;
  if (!list) return LBMC_ERROR(LBMC_ERR_MEMORY, "%s: out of memory", what);
  for (; extra && *extra && n < 60; extra++) args[n++] = *extra;
  args[n++] = "--json";
  args[n++] = list;
  args[n] = NULL;
  err = lbmc_python_run(what, args, &text);
  free(list);
  if (err) return err;
  *answers = json_loads(text, JSON_ALLOW_NUL, &jerr);
  free(text);
  if (!*answers || !json_is_array(*answers) ||
      json_array_size(*answers) != json_array_size(points)) {
    json_decref(*answers);
    *answers = NULL;
    return LBMC_ERROR(LBMC_ERR_FILE,
                      "%s: python3 -m lbmc_analysis limit did not answer with one result per "
                      "point (a package of another version?)",
                      what);
  }
  return LBMC_SUCCESS;
}

/* A JSON value as a limit: a number, "inf" or "-inf", else NaN (unknown). */
static double lbmc_limit_number(const json_t *v)
{
  const char *s = json_string_value(v);
  if (json_is_number(v)) return json_number_value(v);
  if (s && strcmp(s, "inf") == 0) return INFINITY;
  if (s && strcmp(s, "-inf") == 0) return -INFINITY;
  return NAN;
}

void lbmc_limit_values(const json_t *answer, int J, long K, size_t total, double *values,
                       const char **sources)
{
  const json_t *metrics = json_object_get(answer, "metrics"),
               *source = json_object_get(answer, "source");
  for (size_t k = 0; k < total; k++) values[k] = NAN;
  for (int i = 0; i < lbmc_metric_count_in(total, J, (int)K); i++) {
    const lbmc_metric_info *info = lbmc_metric_get(i);
    const json_t *v = json_object_get(metrics, info->name);
    const size_t off = lbmc_metric_offset(i, J, (int)K), len = lbmc_metric_size(i, J, (int)K);
    if (sources) sources[i] = json_string_value(json_object_get(source, info->name));
    for (size_t e = 0; v && e < len; e++) {
      const json_t *x = v;
      if (info->shape == LBMC_SHAPE_POOL_K)
        x = json_array_get(json_array_get(v, e / (size_t)K), e % (size_t)K);
      else if (info->shape != LBMC_SHAPE_SCALAR)
        x = json_array_get(v, e);
      values[off + e] = lbmc_limit_number(x);
    }
  }
}

const char *lbmc_limit_cell(double x, char *buf, size_t len)
{
  if (isnan(x))
    snprintf(buf, len, "-");
  else if (isinf(x))
    snprintf(buf, len, "%s", x > 0 ? "inf" : "-inf");
  else
    snprintf(buf, len, "%.6g", x);
  return buf;
}

/* 1 if the word after --limit is meant as its value: "refined", or a word that names no
 * file and no results file (.h5), so that "--limit refind" is an unknown value, not a stray
 * argument, while "lbmc info --limit out.h5" reads out.h5. */
static int lbmc_limit_word(const char *w)
{
  const size_t len = strlen(w);
  if (strcmp(w, "refined") == 0) return 1;
  if (!len || w[0] == '-' || access(w, F_OK) == 0) return 0;
  return !(len >= 3 && strcmp(w + len - 3, ".h5") == 0);
}

lbmc_err lbmc_limit_parse_mode(const char *what, const char *value, int argc, char **argv,
                               int *mode)
{
  if (!value && optind < argc && lbmc_limit_word(argv[optind]))
    value = argv[optind++]; /* "--limit refined": the word is the flag's value */
  if (!value) {
    *mode = LBMC_LIMIT_PLAIN;
    return LBMC_SUCCESS;
  }
  if (strcmp(value, "refined") == 0) {
    *mode = LBMC_LIMIT_REFINED;
    return LBMC_SUCCESS;
  }
  return LBMC_ERROR(LBMC_ERR_ARG,
                    "%s: '%s' is not allowed; allowed: nothing (the n -> inf limit) or refined "
                    "(the limit and the refined mean field x* + V/n at the point's n)",
                    what, value);
}

const char *lbmc_limit_reason(const json_t *answer)
{
  const char *note = json_string_value(json_array_get(json_object_get(answer, "notes"), 0));
  return note ? note : "no 1/n expansion of this metric is known (e.g. the quantiles)";
}

/* The --init start of a transient run as python3 -m lbmc_analysis limit --init reads it:
 * "empty" or "tail:F1,F2,...;G1,..." (the levels the run options hold); "" for a start the
 * ODE cannot take (meanfield: a random rounding of the fixed point, not a state). */
static void lbmc_limit_start(const lbmc_run_options *o, int J, char *buf, size_t len)
{
  size_t at = 0;
  if (o->init == LBMC_INIT_EMPTY) {
    snprintf(buf, len, "empty");
    return;
  }
  *buf = '\0';
  if (o->init != LBMC_INIT_TAIL) return;
  at += (size_t)snprintf(buf, len, "tail:");
  for (int j = 0; j < (o->init_pools == 1 ? 1 : J) && at < len; j++)
    for (int k = 0; k < o->init_levels && at < len; k++)
      at += (size_t)snprintf(buf + at, len - at, "%s%.17g",
                             k   ? ","
                             : j ? ";"
                                 : "",
                             o->init_tail[j][k]);
  if (at >= len) *buf = '\0';
}

/* One metric's curve of a transient answer into the "transient" object of lbmc sim's JSON:
 * estimates.<metric>.<key> = the answer's field, time the first axis. */
static void lbmc_limit_put_curve(json_t *transient, const char *metric, const char *key,
                                 const json_t *curve)
{
  json_t *one = json_object_get(json_object_get(transient, "estimates"), metric);
  if (one) json_object_set(one, key, curve && !json_is_null(curve) ? (json_t *)curve : json_null());
}

/* Why the mean-field ODE of the occupancy state (lbmc_analysis.limits.ode) does not describe
 * the model d, into why[len]; 0 if it does. */
static int lbmc_limit_no_ode(const lbmc_model_description *d, char *why, size_t len)
{
  if (strcmp(d->policy_name, "lwl") == 0) {
    snprintf(why, len, "no ODE: %s reads the servers' workloads and has no occupancy form",
             d->policy);
    return 1;
  }
  for (int j = 0; j < d->J; j++)
    if (!lbmc_service_is_exponential(d->pool[j].service)) {
      snprintf(why, len,
               "no ODE: the service of pool %d (%.200s) is not exponential; the transient ODE is "
               "that of the occupancy state under exponential service",
               j + 1, d->pool[j].service->text);
      return 1;
    }
  return 0;
}

lbmc_err lbmc_limit_transient(const lbmc_model_description *d, long K, const lbmc_run_options *o,
                              const lbmc_transient *t, json_t *transient)
{
  char start[LBMC_MAX_POOLS * LBMC_INIT_TAIL_LEVELS * 26 + 16], times[96], n[32];
  const char *extra[] = {"--transient", times, "--init", start, "--refined", n, NULL};
  json_t *points = json_array(), *answers = NULL;
  const json_t *answer, *time;
  lbmc_err err;
  char why[512];
  if (lbmc_limit_no_ode(d, why, sizeof why)) {
    json_object_set_new(transient, "limit_note", json_string(why));
    json_decref(points);
    return LBMC_SUCCESS;
  }
  lbmc_limit_start(o, d->J, start, sizeof start);
  if (!*start) {
    json_object_set_new(transient, "limit_note",
                        json_string("no ODE from this start (a mean-field start is a random "
                                    "rounding of the fixed point: compare with the steady-state "
                                    "limit columns)"));
    json_decref(points);
    return LBMC_SUCCESS;
  }
  snprintf(times, sizeof times, "%.17g:%.17g:%.17g", t->time[0], t->time[t->times - 1],
           o->transient[2]);
  snprintf(n, sizeof n, "%lld", (long long)d->n);
  json_array_append_new(points, lbmc_limit_point(d, K));
  err = lbmc_limit_answers("--limit refined --transient", points, extra, &answers);
  json_decref(points);
  if (err) return err;
  answer = json_array_get(answers, 0);
  time = json_object_get(answer, "time");
  if (json_array_size(time) != (size_t)t->times) {
    json_decref(answers);
    return LBMC_ERROR(LBMC_ERR_FILE,
                      "--limit refined --transient: python3 -m lbmc_analysis limit answered on %zu "
                      "times for the run's %ld (a package of another version?)",
                      json_array_size(time), t->times);
  }
  lbmc_limit_put_curve(transient, "mean_queue", "limit", json_object_get(answer, "mean_queue"));
  lbmc_limit_put_curve(transient, "tail", "limit", json_object_get(answer, "tail"));
  lbmc_limit_put_curve(transient, "mean_queue", "limit_refined",
                       json_object_get(answer, "mean_queue_refined"));
  lbmc_limit_put_curve(transient, "tail", "limit_refined", json_object_get(answer, "tail_refined"));
  json_object_set(transient, "limit_source", json_object_get(answer, "source"));
  json_decref(answers);
  return LBMC_SUCCESS;
}
