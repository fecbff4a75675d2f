/* lbmc-job-api GOOD_DIR: the job API around what lbmc-job-check prints: parsing from
 * text, the kept text and name, accessors out of range, point options, models of
 * points, and the agreement of lbmc_job_parse_file with lbmc_job_parse_text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/job.h"
#include "lbmc/metrics.h"

#include "expect.h"

/* call fails with `code` and a message holding `needle`, nothing printed: the error
 * handler in store mode, as a library caller uses it. */
#define EXPECT_FAILS(call, code, needle)                                                           \
  do {                                                                                             \
    const lbmc_error_mode was_ = lbmc_error_set_mode(LBMC_ERRORS_STORE);                           \
    const lbmc_err got_ = (call);                                                                  \
    lbmc_error_set_mode(was_);                                                                     \
    EXPECT(got_ == (code) && lbmc_error_last() == (code));                                         \
    EXPECT(strstr(lbmc_error_message(), (needle)) != NULL);                                        \
    if (!strstr(lbmc_error_message(), (needle)))                                                   \
      fprintf(stderr, "  message: '%s', wanted '%s' in it\n", lbmc_error_message(), (needle));     \
    lbmc_error_clear();                                                                            \
  } while (0)

static const char *const grid_text = "# a 2 x 3 grid\n"
                                     "system:\n"
                                     "  n: [10, 20]\n"
                                     "  lambda: 0.5\n"
                                     "  pools:\n"
                                     "    - {beta: 0.5, mu: 2, buffer: 4}\n"
                                     "    - {beta: rest, mu: 1/3}\n"
                                     "policy: pull\n"
                                     "run:\n"
                                     "  time: [100, 200, 300]\n"
                                     "  warmup: auto\n"
                                     "  seed: 7\n"
                                     "  replicas: 3\n";

static void test_text(void)
{
  lbmc_job *job = NULL;
  lbmc_model *m = NULL;
  lbmc_run_options o;
  EXPECT(lbmc_job_parse_text(grid_text, "mem.yaml", &job) == LBMC_SUCCESS);
  if (!job) return;
  EXPECT(strcmp(lbmc_job_text(job), grid_text) == 0 && lbmc_job_text(job) != grid_text);
  EXPECT(strcmp(lbmc_job_name(job), "mem.yaml") == 0);
  EXPECT(lbmc_job_points(job) == 6 && lbmc_job_pools(job) == 2 && lbmc_job_axes(job) == 2);
  EXPECT(strcmp(lbmc_job_axis_name(job, 1), "run.time") == 0);
  EXPECT(lbmc_job_axis_length(job, 1) == 3 && strcmp(lbmc_job_axis_value(job, 1, 2), "300") == 0);
  EXPECT(lbmc_job_axis_name(job, 2) == NULL && lbmc_job_axis_name(job, -1) == NULL);
  EXPECT(lbmc_job_axis_length(job, 5) == 0);
  EXPECT(lbmc_job_dims(job) == 2 && lbmc_job_axis_dim(job, 1) == 1 &&
         lbmc_job_axis_dim(job, 2) == -1);
  EXPECT(strcmp(lbmc_job_dim_name(job, 1), "run.time") == 0 && lbmc_job_dim_name(job, 2) == NULL);
  EXPECT(lbmc_job_axis_value(job, 0, 2) == NULL && lbmc_job_axis_value(job, 0, -1) == NULL);
  EXPECT(lbmc_job_seed(job) == 7 && lbmc_job_replicas(job) == 3 && lbmc_job_replicas_max(job) == 3);
  EXPECT(!lbmc_job_precision(job)->enabled && lbmc_job_output(job) == NULL);

  /* point 4 = (n index 1, time index 1): n 20, time 200, warm-up auto */
  lbmc_job_point_options(job, 4, &o);
  EXPECT(o.time == 200 && o.warmup_auto == 1 && o.batches == 20);
  EXPECT(lbmc_job_point_model(job, 4, &m) == LBMC_SUCCESS);
  if (m) {
    EXPECT(lbmc_model_n(m) == 20 && lbmc_model_buffer(m, 0) == 4);
    EXPECT(lbmc_model_buffer(m, 1) == LBMC_BUFFER_INF);
    EXPECT(fabs(lbmc_model_beta(m, 1) - 0.5) < 1e-15);
    EXPECT(fabs(lbmc_model_mu(m, 1) - 1.0 / 3) < 1e-15);
    EXPECT(strcmp(lbmc_model_stale(m), "withdraw") == 0);
    lbmc_model_destroy(&m);
  }
  /* out of range: an error with its message, and no model */
  EXPECT_FAILS(lbmc_job_point_model(job, 6, &m), LBMC_ERR_ARG, "6");
  EXPECT(m == NULL);
  lbmc_job_destroy(&job);
  EXPECT(job == NULL);
  lbmc_job_destroy(&job); /* no-op on NULL */
  lbmc_job_destroy(NULL);
}

static void test_errors(void)
{
  lbmc_job *job = (lbmc_job *)&job; /* must be reset to NULL on failure */
  EXPECT_FAILS(lbmc_job_parse_text("system: [", "x.yaml", &job), LBMC_ERR_PARSE, "x.yaml");
  EXPECT(job == NULL);
  EXPECT_FAILS(lbmc_job_parse_text("[1, 2]", "x.yaml", &job), LBMC_ERR_PARSE, "x.yaml");
  EXPECT(job == NULL);
  EXPECT_FAILS(lbmc_job_parse_text("", NULL, &job), LBMC_ERR_PARSE, "");
  EXPECT(job == NULL);
  EXPECT_FAILS(lbmc_job_parse_text("policy: pull\n", "x.yaml", &job), LBMC_ERR_ARG, "x.yaml");
  EXPECT(job == NULL);
  EXPECT_FAILS(lbmc_job_parse_file("/nonexistent/x.yaml", &job), LBMC_ERR_FILE,
               "/nonexistent/x.yaml");
  EXPECT(job == NULL);
}

/* Service distributions and speed lists reach the points' models exactly: the parsed
 * parameters (not a re-parse of the text), per pool or for all pools, and the grid
 * order of a service axis. */
static void test_service(void)
{
  static const char *const text =
      "system:\n"
      "  n: 20\n"
      "  lambda: 0.5\n"
      "  service: [{dist: lognormal, scv: 1/3}, \"hyperexponential:p=1/3,r1=2/3,r2=4/3\"]\n"
      "  pools:\n"
      "    - {beta: 0.5, mu_k: [1, 2, 4]}\n"
      "    - {beta: 0.5, mu: 3}\n"
      "policy: [random, pull]\n";
  lbmc_job *job = NULL;
  lbmc_model *m = NULL;
  const double *rates;
  EXPECT(lbmc_job_parse_text(text, "svc.yaml", &job) == LBMC_SUCCESS);
  if (!job) return;
  EXPECT(lbmc_job_points(job) == 4 && lbmc_job_axes(job) == 2);
  EXPECT(strcmp(lbmc_job_axis_name(job, 0), "service") == 0);
  EXPECT(strcmp(lbmc_job_axis_value(job, 0, 0), "lognormal:scv=1/3") == 0);
  EXPECT(strcmp(lbmc_job_axis_value(job, 0, 1), "hyperexponential:p=1/3,r1=2/3,r2=4/3") == 0);
  /* point 1: lognormal scv 1/3 (exact), pull */
  EXPECT(lbmc_job_point_model(job, 1, &m) == LBMC_SUCCESS);
  if (m) {
    for (int j = 0; j < 2; j++) {
      const lbmc_service *s = lbmc_model_service(m, j);
      EXPECT(s->kind == LBMC_SERVICE_LOGNORMAL && s->scv == 1.0 / 3);
      EXPECT(strcmp(s->text, "lognormal:scv=0.3333333333333333") == 0);
    }
    EXPECT(lbmc_model_rates(m, 0, &rates) == 3 && rates[0] == 1 && rates[1] == 2 && rates[2] == 4);
    EXPECT(lbmc_model_rates(m, 1, &rates) == 1 && rates[0] == 3);
    EXPECT(lbmc_model_mu(m, 0) == 1 && fabs(lbmc_model_rho(m) - 0.5 / (0.5 * 4 + 0.5 * 3)) < 1e-15);
    EXPECT(lbmc_model_needs_general(m));
    lbmc_model_destroy(&m);
  }
  /* point 2: the explicit hyperexponential keeps p = 1/3 to the last bit */
  EXPECT(lbmc_job_point_model(job, 2, &m) == LBMC_SUCCESS);
  if (m) {
    const lbmc_service *s = lbmc_model_service(m, 1);
    EXPECT(s->kind == LBMC_SERVICE_HYPEREXPONENTIAL && s->p[0] == 1.0 / 3 && s->p[1] == 2.0 / 3 &&
           s->p[2] == 4.0 / 3);
    lbmc_model_destroy(&m);
  }
  lbmc_job_destroy(&job);
}

/* The file and its text give the same job. */
/* Scenarios: the grid without its routing axes. n (2) x policy (3) x lambda (2) x routers
 * (2): 4 scenarios (n, lambda); every policy and router count of a scenario shares it. */
static void test_scenarios(void)
{
  static const char *const text = "system:\n"
                                  "  n: [10, 20]\n"
                                  "  lambda: [0.5, 0.7]\n"
                                  "  routers: [1, 2]\n"
                                  "  pools: [{beta: 1, mu: 1}]\n"
                                  "policy: [random, jsq(2), pull]\n";
  lbmc_job *job = NULL;
  int seen[4] = {0};
  EXPECT(lbmc_job_parse_text(text, "scenarios.yaml", &job) == LBMC_SUCCESS);
  if (!job) return;
  EXPECT(lbmc_job_points(job) == 24 && lbmc_job_scenarios(job) == 4);
  for (int a = 0; a < lbmc_job_axes(job); a++) /* n, lambda, routers, policy */
    EXPECT(lbmc_job_axis_routing(job, a) == (a >= 2));
  for (long p = 0; p < 24; p++) {
    lbmc_model *m = NULL;
    long s = lbmc_job_point_scenario(job, p);
    EXPECT(s >= 0 && s < 4);
    if (s < 0 || s >= 4 || lbmc_job_point_model(job, p, &m)) continue;
    /* scenario = (n index) * 2 + (lambda index), whatever the policy and routers */
    EXPECT(s == (lbmc_model_n(m) == 20) * 2 + (lbmc_model_lambda(m) > 0.6));
    seen[s]++;
    lbmc_model_destroy(&m);
  }
  EXPECT(seen[0] == 6 && seen[1] == 6 && seen[2] == 6 && seen[3] == 6);
  lbmc_job_destroy(&job);
  EXPECT(lbmc_job_parse_text("system: {n: 5, lambda: 0.5, pools: [{beta: 1, mu: 1}]}\n"
                             "policy: pull\n",
                             "one.yaml", &job) == LBMC_SUCCESS);
  if (job) EXPECT(lbmc_job_scenarios(job) == 1 && lbmc_job_point_scenario(job, 0) == 0);
  lbmc_job_destroy(&job);
}

static void test_file(const char *dir)
{
  char path[4096];
  lbmc_job *a = NULL, *b = NULL;
  snprintf(path, sizeof path, "%s/precision.yaml", dir);
  EXPECT(lbmc_job_parse_file(path, &a) == LBMC_SUCCESS);
  if (!a) return;
  EXPECT(strcmp(lbmc_job_name(a), path) == 0);
  EXPECT(lbmc_job_parse_text(lbmc_job_text(a), path, &b) == LBMC_SUCCESS);
  if (b) {
    const lbmc_precision *pa = lbmc_job_precision(a), *pb = lbmc_job_precision(b);
    EXPECT(lbmc_job_points(a) == lbmc_job_points(b));
    EXPECT(pa->enabled && pb->enabled && pa->metric == pb->metric && pa->index == pb->index);
    EXPECT(pa->metric == lbmc_metric_find("utilization") && pa->index == 1);
    EXPECT(pa->relative == 0.05 && pa->max_replicas == 512 && lbmc_job_replicas_max(a) == 512);
    EXPECT(strcmp(lbmc_job_output(b), "results/precision.h5") == 0);
  }
  lbmc_job_destroy(&a);
  lbmc_job_destroy(&b);
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: lbmc-job-api GOOD_DIR\n");
    return 2;
  }
  test_text();
  test_errors();
  test_service();
  test_scenarios();
  test_file(argv[1]);
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("job API: all checks passed\n");
  return failures ? 1 : 0;
}
