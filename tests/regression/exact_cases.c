/* Exact-value regression: simulate every system of tests/data/cases.json (exact CTMC
 * stationary measures of small systems, see tests/data/cases-README.md) and compare
 * every metric with its exact value.
 *
 * Pass criterion: at least 97% of the 99% confidence intervals cover the
 * exact values, and no estimate lies more than 4 half-widths away. Intervals are
 * Student-t across replicas (fixed seed: deterministic).
 *
 * Tail levels are compared where the normal approximation behind the interval is
 * sound: level k of pool j is included when the expected number of arrivals per
 * replica times the exact x_{k,j} is at least 50 (i.e. the level is reached many
 * times per replica); rarer levels are reported but not judged.
 *
 * --general simulates with the general-service engine (per-customer requirements,
 * an event calendar) instead of the exponential fast path: both must meet the same
 * criterion on exponential service.
 *
 * --occupancy simulates with the occupancy engine (counts of servers per pool
 * and level); the cases it does not apply to (pull with stale: keep and R > 1) are
 * listed with the engine's reason and left out.
 *
 * --swap-mu simulates each heterogeneous case with the speeds of its first two pools
 * exchanged (a deliberately wrong model) and is registered as a test that must FAIL:
 * it proves the comparison has the power to see a wrong model.
 *
 * usage: lbmc-exact-cases CASES.json [--replicas R] [--arrivals A] [--swap-mu]
 *                         [--general | --occupancy] [--case I] [--verbose]
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

typedef struct {
  long replicas;
  double arrivals; /* expected arrivals per replica in the measured period */
  int swap_mu, verbose, general, occupancy;
  long only;
} ec_opts;

#define EC_CONFIDENCE      0.99
#define EC_MIN_COVERAGE    0.97
#define EC_MAX_HW          4.0
#define EC_TAIL_MIN_VISITS 50.0
#define EC_SEED            20261129L

static double ec_num(json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

/* Build the model of one case; returns 0 on success. */
static int ec_model(json_t *in, const ec_opts *o, lbmc_model **m, int *swapped)
{
  json_t *pools = json_object_get(in, "pools");
  size_t J = json_array_size(pools);
  double beta[LBMC_MAX_POOLS], mu[LBMC_MAX_POOLS], ntot = 0;
  long buffer[LBMC_MAX_POOLS];
  const char *policy = json_string_value(json_object_get(in, "policy"));
  json_t *param = json_object_get(in, "policy_param");
  const char *stale = json_string_value(json_object_get(in, "stale"));
  char ptext[64];
  for (size_t j = 0; j < J; j++) ntot += ec_num(json_object_get(json_array_get(pools, j), "N"));
  for (size_t j = 0; j < J; j++) {
    json_t *p = json_array_get(pools, j), *b = json_object_get(p, "B");
    beta[j] = ec_num(json_object_get(p, "N")) / ntot;
    mu[j] = ec_num(json_object_get(p, "mu"));
    buffer[j] = json_is_string(b) ? LBMC_BUFFER_INF : (long)json_integer_value(b);
  }
  *swapped = 0;
  if (o->swap_mu && J >= 2 && mu[0] != mu[1]) {
    double t = mu[0];
    mu[0] = mu[1];
    mu[1] = t;
    *swapped = 1;
  }
  if (json_is_integer(param))
    snprintf(ptext, sizeof ptext, "%s(%lld)", policy, (long long)json_integer_value(param));
  else
    snprintf(ptext, sizeof ptext, "%s", policy);
  if (lbmc_model_create(m) || lbmc_model_set_n(*m, (long)ntot) ||
      lbmc_model_set_lambda(*m, ec_num(json_object_get(in, "lambda")) / ntot) ||
      lbmc_model_set_pools(*m, (int)J, beta, mu, buffer) || lbmc_model_set_policy(*m, ptext) ||
      lbmc_model_set_routers(*m, (long)json_integer_value(json_object_get(in, "routers"))) ||
      (stale && lbmc_model_set_stale(*m, stale)) || lbmc_model_setup(*m))
    return 1;
  return 0;
}

static void ec_scalar(th_tally *t, const th_result *r, json_t *sm, const char *name,
                      const char *exact_name, const char *tag, int verbose)
{
  char label[160];
  snprintf(label, sizeof label, "%s %s", tag, name);
  th_compare(t, r, th_index(r, name, 0, 0), ec_num(json_object_get(sm, exact_name)), label,
             verbose);
}

static void ec_pool(th_tally *t, const th_result *r, json_t *sm, const char *name, const char *tag,
                    int verbose)
{
  json_t *a = json_object_get(sm, name);
  char label[160];
  for (int j = 0; j < r->J; j++) {
    snprintf(label, sizeof label, "%s %s[%d]", tag, name, j + 1);
    th_compare(t, r, th_index(r, name, j, 0), ec_num(json_array_get(a, (size_t)j)), label, verbose);
  }
}

static void ec_tail(th_tally *t, const th_result *r, json_t *sm, const char *tag, int verbose)
{
  json_t *a = json_object_get(sm, "tail");
  char label[160];
  for (int j = 0; j < r->J; j++) {
    json_t *row = json_array_get(a, (size_t)j);
    for (int k = 1; k <= r->K && (size_t)k <= json_array_size(row); k++) {
      double x = ec_num(json_array_get(row, (size_t)k - 1));
      if (x * r->arrivals < EC_TAIL_MIN_VISITS) continue; /* too rare to judge */
      snprintf(label, sizeof label, "%s tail[%d][k=%d]", tag, j + 1, k);
      th_compare(t, r, th_index(r, "tail", j, k), x, label, verbose);
    }
  }
}

static int ec_case(json_t *c, long idx, const ec_opts *o, th_tally *t)
{
  json_t *in = json_object_get(c, "input"),
         *sm = json_object_get(json_object_get(c, "result"), "spec_metrics");
  lbmc_model *m = NULL;
  lbmc_run_options ro;
  th_result r;
  char tag[96], why[512];
  int swapped;
  double lambda_total = ec_num(json_object_get(in, "lambda"));
  if (ec_model(in, o, &m, &swapped)) return 1;
  if (o->swap_mu && !swapped) {
    lbmc_model_destroy(&m);
    return 0;
  }
  lbmc_run_options_default(&ro);
  ro.engine =
      o->occupancy ? LBMC_ENGINE_OCCUPANCY : (o->general ? LBMC_ENGINE_GENERAL : LBMC_ENGINE_AUTO);
  if (o->occupancy && !lbmc_run_engine(m, &ro, why, sizeof why)) {
    printf("case #%ld: %s: left out\n", idx, why);
    lbmc_model_destroy(&m);
    return 0;
  }
  ro.confidence = EC_CONFIDENCE;
  ro.time = o->arrivals / lambda_total;
  ro.warmup = 0.05 * ro.time;
  if (th_simulate(m, &ro, idx, o->replicas, EC_SEED, &r)) return 1;
  snprintf(tag, sizeof tag, "#%ld %s %s%s%s R=%ld", idx,
           json_string_value(json_object_get(in, "pools_spec")), lbmc_model_policy(m),
           *lbmc_model_stale(m) ? "/" : "", lbmc_model_stale(m), lbmc_model_routers(m));
  printf("case %s, rho %.3g: status %s\n", tag, lbmc_model_rho(m), lbmc_status_name(r.status));
  ec_scalar(t, &r, sm, "p_wait", "p_wait", tag, o->verbose);
  ec_scalar(t, &r, sm, "p_block", "p_block", tag, o->verbose);
  ec_scalar(t, &r, sm, "p_wait_or_block", "p_wait_or_block", tag, o->verbose);
  ec_scalar(t, &r, sm, "mean_sojourn", "mean_sojourn", tag, o->verbose);
  ec_scalar(t, &r, sm, "mean_wait", "mean_wait", tag, o->verbose);
  ec_scalar(t, &r, sm, "messages_per_arrival", "messages_per_arrival", tag, o->verbose);
  ec_scalar(t, &r, sm, "withdrawals_per_arrival", "withdrawals_per_arrival", tag, o->verbose);
  ec_scalar(t, &r, sm, "throughput", "throughput_per_server", tag, o->verbose);
  ec_pool(t, &r, sm, "mean_queue", tag, o->verbose);
  ec_pool(t, &r, sm, "utilization", tag, o->verbose);
  ec_pool(t, &r, sm, "admitted_share", tag, o->verbose);
  ec_tail(t, &r, sm, tag, o->verbose);
  th_result_free(&r);
  lbmc_model_destroy(&m);
  return 0;
}

int main(int argc, char **argv)
{
  ec_opts o = {.replicas = 20, .arrivals = 2e5, .swap_mu = 0, .verbose = 0, .only = -1};
  json_error_t jerr;
  json_t *root, *cases;
  th_tally t = {.max_hw = EC_MAX_HW};
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--replicas") == 0 && i + 1 < argc)
      o.replicas = atol(argv[++i]);
    else if (strcmp(argv[i], "--arrivals") == 0 && i + 1 < argc)
      o.arrivals = atof(argv[++i]);
    else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
      o.only = atol(argv[++i]);
    else if (strcmp(argv[i], "--swap-mu") == 0)
      o.swap_mu = 1;
    else if (strcmp(argv[i], "--general") == 0)
      o.general = 1;
    else if (strcmp(argv[i], "--occupancy") == 0)
      o.occupancy = 1;
    else if (strcmp(argv[i], "--verbose") == 0)
      o.verbose = 1;
    else
      path = argv[i];
  }
  if (!path) {
    fprintf(
        stderr,
        "usage: %s CASES.json [--replicas R] [--arrivals A] [--swap-mu] [--case I] [--verbose]\n",
        argv[0]);
    return 2;
  }
  root = json_load_file(path, 0, &jerr);
  if (!root) {
    fprintf(stderr, "%s:%d: %s\n", path, jerr.line, jerr.text);
    return 2;
  }
  cases = json_object_get(root, "cases");
  printf(
      "%zu cases, %ld replicas each, ~%.3g arrivals per replica, %.0f%% intervals, %s engine%s\n",
      json_array_size(cases), o.replicas, o.arrivals, 100 * EC_CONFIDENCE,
      o.general ? "general-service" : (o.occupancy ? "occupancy" : "exponential"),
      o.swap_mu ? ", pools' mu SWAPPED (this run must fail)" : "");
  for (size_t i = 0; i < json_array_size(cases); i++) {
    if (o.only >= 0 && (long)i != o.only) continue;
    if (ec_case(json_array_get(cases, i), (long)i, &o, &t)) {
      fprintf(stderr, "case %zu could not be simulated\n", i);
      return 1;
    }
  }
  json_decref(root);
  return th_verdict(&t, EC_MIN_COVERAGE);
}
