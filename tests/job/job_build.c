/* lbmc-job-build: the two doors of a point. A job of one point given setting by setting
 * (src/io/job_build.h, as lbmc sim's flags give it) and a job file with the same
 * settings must give the same point: the same model (every field of its description),
 * run options, replicas, seed and precision target. Controls: a built job that differs
 * in one setting must give a different model; a built job's messages name its settings
 * by their flags; the table of inputs counts the grid axes as LBMC_MAX_AXES says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expect.h"
#include "io/job_build.h"

static const char *const file_text =
    "system:\n"
    "  n: 20\n"
    "  lambda: 0.6\n"
    "  routers: 2\n"
    "  pools:\n"
    "    - {beta: 0.25, mu: 2, buffer: 4, service: \"lognormal:scv=4\"}\n"
    "    - {beta: 0.75, mu_k: [1, 2, 3], service: deterministic}\n"
    "policy: pull\n"
    "stale: keep\n"
    "run:\n"
    "  time: 50\n"
    "  warmup: auto\n"
    "  batches: 10\n"
    "  tail_k: 3\n"
    "  replicas: 4\n"
    "  seed: 9\n"
    "  engine: general\n"
    "  precision: {metric: \"tail[2][3]\", relative: 0.1, max_replicas: 40, max_time: 400}\n";

/* Give input id (of pool j) the value `text`, read as the table's row says. */
static void give(lbmc_job *job, int id, int j, const char *text)
{
  lbmc_input_value v = {0};
  v.text = (char *)text;
  EXPECT(lbmc_input_parse(&lbmc_inputs[id], "test", text, &v) == LBMC_SUCCESS);
  EXPECT(lbmc_job_give(job, id, j, NULL, &v) == LBMC_SUCCESS);
}

static void give_service(lbmc_job *job, int j, const char *text)
{
  lbmc_service svc;
  lbmc_input_value v = {0};
  EXPECT(lbmc_service_parse("test", text, &svc) == LBMC_SUCCESS);
  v.text = svc.text;
  v.svc = &svc;
  EXPECT(lbmc_job_give(job, LBMC_IN_POOL_SERVICE, j, NULL, &v) == LBMC_SUCCESS);
}

/* The settings of file_text given one by one; lambda as given (the control varies it). */
static lbmc_job *built_job(const char *lambda)
{
  static const double speeds[] = {1, 2, 3};
  lbmc_input_value mu_k = {0};
  lbmc_job *job = NULL;
  EXPECT(lbmc_job_build("command line", 2, &job) == LBMC_SUCCESS);
  if (!job) return NULL;
  give(job, LBMC_IN_N, 0, "20");
  give(job, LBMC_IN_LAMBDA, 0, lambda);
  give(job, LBMC_IN_ROUTERS, 0, "2");
  give(job, LBMC_IN_POLICY, 0, "pull");
  give(job, LBMC_IN_STALE, 0, "keep");
  give(job, LBMC_IN_TIME, 0, "50");
  give(job, LBMC_IN_WARMUP, 0, "auto");
  give(job, LBMC_IN_BATCHES, 0, "10");
  give(job, LBMC_IN_TAIL_K, 0, "3");
  give(job, LBMC_IN_REPLICAS, 0, "4");
  give(job, LBMC_IN_SEED, 0, "9");
  give(job, LBMC_IN_ENGINE, 0, "general");
  give(job, LBMC_IN_POOL_BETA, 0, "0.25"), give(job, LBMC_IN_POOL_BETA, 1, "0.75");
  give(job, LBMC_IN_POOL_MU, 0, "2"), give(job, LBMC_IN_POOL_MU, 1, "1");
  give(job, LBMC_IN_POOL_BUFFER, 0, "4"), give(job, LBMC_IN_POOL_BUFFER, 1, "inf");
  mu_k.vec = (double *)speeds;
  mu_k.vec_len = 3;
  EXPECT(lbmc_job_give(job, LBMC_IN_POOL_MU_K, 1, NULL, &mu_k) == LBMC_SUCCESS);
  give_service(job, 0, "lognormal:scv=4");
  give_service(job, 1, "deterministic");
  give(job, LBMC_IN_METRIC, 0, "tail[2][3]");
  give(job, LBMC_IN_RELATIVE, 0, "0.1");
  give(job, LBMC_IN_MAX_REPLICAS, 0, "40");
  give(job, LBMC_IN_MAX_TIME, 0, "400");
  EXPECT(lbmc_job_build_finish(job) == LBMC_SUCCESS);
  return job;
}

/* 1 if the two models' descriptions agree in every field. */
static int same_model(const lbmc_model *a, const lbmc_model *b)
{
  lbmc_model_description x, y;
  int same;
  lbmc_model_describe(a, &x);
  lbmc_model_describe(b, &y);
  same = x.n == y.n && x.lambda == y.lambda && x.rho == y.rho && x.d == y.d &&
         x.routers == y.routers && x.J == y.J && x.surely_unstable == y.surely_unstable &&
         strcmp(x.policy, y.policy) == 0 && strcmp(x.policy_name, y.policy_name) == 0 &&
         strcmp(x.stale, y.stale) == 0 && strcmp(x.sampling, y.sampling) == 0;
  for (int j = 0; same && j < x.J; j++) {
    const lbmc_pool_description *p = &x.pool[j], *q = &y.pool[j];
    same = p->beta == q->beta && p->mu == q->mu && p->buffer == q->buffer &&
           p->servers == q->servers && p->L == q->L &&
           memcmp(p->service, q->service, sizeof *p->service) == 0 &&
           memcmp(p->mu_k, q->mu_k, sizeof *p->mu_k * (size_t)p->L) == 0;
  }
  return same;
}

static int same_options(const lbmc_run_options *a, const lbmc_run_options *b)
{
  return a->warmup == b->warmup && a->warmup_auto == b->warmup_auto && a->time == b->time &&
         a->batches == b->batches && a->confidence == b->confidence && a->tail_k == b->tail_k &&
         a->max_customers == b->max_customers && a->engine == b->engine && a->init == b->init &&
         a->runaway_fraction == b->runaway_fraction;
}

static void test_same_point(void)
{
  lbmc_job *file = NULL, *built = built_job("0.6"), *other = built_job("0.7");
  lbmc_model *a = NULL, *b = NULL, *c = NULL;
  lbmc_run_options oa, ob;
  const lbmc_precision *pa, *pb;
  EXPECT(lbmc_job_parse_text(file_text, "doors.yaml", &file) == LBMC_SUCCESS);
  if (!file || !built || !other) return;
  EXPECT(lbmc_job_points(built) == 1 && lbmc_job_axes(built) == 0 && lbmc_job_pools(built) == 2);
  EXPECT(lbmc_job_point_model(file, 0, &a) == LBMC_SUCCESS);
  EXPECT(lbmc_job_point_model(built, 0, &b) == LBMC_SUCCESS);
  EXPECT(lbmc_job_point_model(other, 0, &c) == LBMC_SUCCESS);
  EXPECT(a && b && c && same_model(a, b));
  EXPECT(a && c && !same_model(a, c)); /* control: one setting differs */
  lbmc_job_point_options(file, 0, &oa);
  lbmc_job_point_options(built, 0, &ob);
  EXPECT(same_options(&oa, &ob));
  EXPECT(lbmc_job_replicas(file) == lbmc_job_replicas(built) &&
         lbmc_job_replicas_max(file) == lbmc_job_replicas_max(built) &&
         lbmc_job_seed(file) == lbmc_job_seed(built));
  pa = lbmc_job_precision(file), pb = lbmc_job_precision(built);
  EXPECT(pa->enabled && pb->enabled && pa->metric == pb->metric && pa->index == pb->index &&
         pa->relative == pb->relative && pa->max_replicas == pb->max_replicas &&
         pa->max_time == pb->max_time);
  lbmc_model_destroy(&a), lbmc_model_destroy(&b), lbmc_model_destroy(&c);
  lbmc_job_destroy(&file), lbmc_job_destroy(&built), lbmc_job_destroy(&other);
}

/* What `call` prints on stderr, into buf (len bytes); returns its code. */
static lbmc_err capture(lbmc_err (*call)(lbmc_job *), lbmc_job *job, char *buf, size_t len)
{
  FILE *f = tmpfile();
  int saved = dup(2);
  size_t n;
  lbmc_err err;
  fflush(stderr);
  dup2(fileno(f), 2);
  err = call(job);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(f);
  n = fread(buf, 1, len - 1, f);
  buf[n] = '\0';
  fclose(f);
  return err;
}

/* A built job names its settings by their flags: the budget below the replicas. */
static void test_flag_names(void)
{
  lbmc_job *job = NULL;
  char out[1024];
  EXPECT(lbmc_job_build("command line", 1, &job) == LBMC_SUCCESS);
  if (!job) return;
  give(job, LBMC_IN_REPLICAS, 0, "20");
  give(job, LBMC_IN_MAX_REPLICAS, 0, "10");
  give(job, LBMC_IN_METRIC, 0, "p_wait");
  give(job, LBMC_IN_RELATIVE, 0, "0.1");
  EXPECT(capture(lbmc_job_build_finish, job, out, sizeof out) == LBMC_ERR_ARG);
  EXPECT(strstr(out, "--max-replicas: 10 is not allowed; allowed: at least --replicas = 20"));
  lbmc_job_destroy(&job);
}

/* LBMC_MAX_AXES, counted at compile time, against the rows marked axis in the table. */
static void test_axis_count(void)
{
  int axes = 0;
  for (int id = 0; id < LBMC_INPUTS; id++)
    if (lbmc_inputs[id].axis) axes += LBMC_INPUT_IS_POOL(id) ? LBMC_MAX_POOLS : 1;
  EXPECT(axes == LBMC_MAX_AXES);
  EXPECT(lbmc_inputs[LBMC_IN_POLICY].routing && lbmc_inputs[LBMC_IN_ROUTERS].routing &&
         !lbmc_inputs[LBMC_IN_N].routing && !lbmc_inputs[LBMC_IN_TIME].routing);
}

int main(void)
{
  test_same_point();
  test_flag_names();
  test_axis_count();
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
