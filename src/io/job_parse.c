/* Job files: the sections (top level, system, pools, run, run.precision), each a table
 * of keys and readers, and the checks that span sections. The format is documented in
 * docs/job-files.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_impl.h"
#include "lbmc/check.h"
#include "lbmc/rng.h"

#define LBMC_JP_COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

/* Where a key misplaced in another section belongs (for the unknown-key message). */
static const char *lbmc_jp_hint(const char *key)
{
  static const char *const where[][2] = {
      {"n", "system.n"},
      {"lambda", "system.lambda"},
      {"routers", "system.routers"},
      {"pools", "system.pools"},
      {"beta", "system.beta or system.pools[j].beta"},
      {"mu", "system.pools[j].mu"},
      {"buffer", "system.pools[j].buffer"},
      {"policy", "the top-level key policy"},
      {"stale", "the top-level key stale"},
      {"sampling", "the top-level key sampling"},
      {"output", "the top-level key output"},
      {"replicas", "run.replicas"},
      {"warmup", "run.warmup"},
      {"time", "run.time"},
      {"batches", "run.batches"},
      {"confidence", "run.confidence"},
      {"seed", "run.seed"},
      {"tail_k", "run.tail_k"},
      {"max_customers", "run.max_customers"},
      {"service", "system.service or system.pools[j].service"},
      {"mu_k", "system.pools[j].mu_k"},
      {"dist",
       "system.service or system.pools[j].service, e.g. service: {dist: lognormal, scv: 4}"},
      {"scv", "a service distribution, e.g. service: {dist: lognormal, scv: 4}"},
      {"shape", "a service distribution, e.g. service: {dist: weibull, shape: 0.5}"},
      {"precision", "run.precision"},
      {"metric", "run.precision.metric"},
      {"relative", "run.precision.relative"},
      {"max_replicas", "run.precision.max_replicas"},
  };
  for (int i = 0; i < LBMC_JP_COUNT(where); i++)
    if (strcmp(key, where[i][0]) == 0) return where[i][1];
  /* {mu: 1, service: hyperexponential:p=0.25,r1=0.5,r2=1.5}: YAML splits at the commas */
  if (strchr(key, '=') && !strchr(key, ':'))
    return "inside a quoted service text, as in service: \"hyperexponential:p=0.25,r1=0.5,r2=1.5\"";
  return NULL;
}

/* A scalar integer or real: its text parsed, the message naming file, line and key. */
static lbmc_err lbmc_jp_long(const lbmc_jp *c, const yaml_node_t *node, const char *key,
                             const char *what, long *v)
{
  const char *text;
  char where[512];
  LBMC_CHECK(lbmc_jp_scalar(c, node, key, what, &text));
  return lbmc_parse_long(lbmc_jp_where(c, lbmc_jp_line(node), key, where, sizeof where), text, v);
}

static lbmc_err lbmc_jp_real(const lbmc_jp *c, const yaml_node_t *node, const char *key,
                             const char *what, double *v)
{
  const char *text;
  char where[512];
  LBMC_CHECK(lbmc_jp_scalar(c, node, key, what, &text));
  return lbmc_parse_real(lbmc_jp_where(c, lbmc_jp_line(node), key, where, sizeof where), text, v);
}

static lbmc_err lbmc_jp_checked_long(const lbmc_jp *c, const yaml_node_t *node, const char *key,
                                     long lo, long hi, long *v)
{
  char where[512], what[96];
  snprintf(what, sizeof what, "an integer from %ld to %ld", lo, hi);
  LBMC_CHECK(lbmc_jp_long(c, node, key, what, v));
  return lbmc_check_int_range(lbmc_jp_where(c, lbmc_jp_line(node), key, where, sizeof where), *v,
                              lo, hi);
}

/* ---- run.precision ---- */

static lbmc_err lbmc_jp_metric(lbmc_jp *c, yaml_node_t *v)
{
  const char *text;
  LBMC_CHECK(lbmc_jp_scalar(c, v, "run.precision.metric", "a metric name such as p_wait", &text));
  c->job->precision_line = lbmc_jp_line(v);
  c->job->precision_metric = strdup(text);
  if (!c->job->precision_metric)
    return lbmc_jp_fail(c, LBMC_ERR_MEMORY, lbmc_jp_line(v), "run.precision.metric",
                        "out of memory");
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_jp_relative(lbmc_jp *c, yaml_node_t *v)
{
  char where[512];
  double *x = &c->job->precision.relative;
  LBMC_CHECK(lbmc_jp_real(c, v, "run.precision.relative", "a positive number such as 0.05", x));
  return lbmc_check_positive(
      lbmc_jp_where(c, lbmc_jp_line(v), "run.precision.relative", where, sizeof where), *x);
}

static lbmc_err lbmc_jp_max_replicas(lbmc_jp *c, yaml_node_t *v)
{
  c->job->max_replicas_line = lbmc_jp_line(v);
  return lbmc_jp_checked_long(c, v, "run.precision.max_replicas", 1,
                              (LBMC_STREAM_MAX + 1) / LBMC_PURPOSES,
                              &c->job->precision.max_replicas);
}

static lbmc_err lbmc_jp_precision(lbmc_jp *c, yaml_node_t *v)
{
  static const lbmc_jp_key keys[] = {
      {"metric", lbmc_jp_metric, 1, "the metric whose interval is targeted, e.g. p_wait"},
      {"relative", lbmc_jp_relative, 1, "the target relative half-width, e.g. 0.05"},
      {"max_replicas", lbmc_jp_max_replicas, 1, "the most replicas a point may get"},
  };
  c->job->precision.enabled = 1;
  return lbmc_jp_walk(c, v, "run.precision", keys, LBMC_JP_COUNT(keys), lbmc_jp_hint);
}

/* ---- run ---- */

static lbmc_err lbmc_jp_replicas(lbmc_jp *c, yaml_node_t *v)
{
  c->job->replicas_line = lbmc_jp_line(v);
  return lbmc_jp_checked_long(c, v, "run.replicas", 1, LBMC_JOB_MAX_REPLICAS, &c->job->replicas);
}

static lbmc_err lbmc_jp_seed(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jp_checked_long(c, v, "run.seed", 0, LBMC_SEED_MAX, &c->job->seed);
}

static lbmc_err lbmc_jp_warmup(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read(c, v, LBMC_JV_WARMUP, &c->job->warmup);
}

static lbmc_err lbmc_jp_time(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read(c, v, LBMC_JV_TIME, &c->job->time);
}

/* batches, confidence, tail_k, max_customers: judged by lbmc_run_options_check. */
static lbmc_err lbmc_jp_batches(lbmc_jp *c, yaml_node_t *v)
{
  lbmc_run_options o;
  lbmc_run_options_default(&o);
  LBMC_CHECK(lbmc_jp_long(c, v, "run.batches", "an integer >= 2", &o.batches));
  LBMC_CHECK(lbmc_jv_run_check(c, lbmc_jp_line(v), &o));
  c->job->o.batches = o.batches;
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_jp_confidence(lbmc_jp *c, yaml_node_t *v)
{
  lbmc_run_options o;
  lbmc_run_options_default(&o);
  LBMC_CHECK(lbmc_jp_real(c, v, "run.confidence", "a level between 0 and 1", &o.confidence));
  LBMC_CHECK(lbmc_jv_run_check(c, lbmc_jp_line(v), &o));
  c->job->o.confidence = o.confidence;
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_jp_tail_k(lbmc_jp *c, yaml_node_t *v)
{
  lbmc_run_options o;
  lbmc_run_options_default(&o);
  LBMC_CHECK(lbmc_jp_long(c, v, "run.tail_k", "an integer >= 1", &o.tail_k));
  LBMC_CHECK(lbmc_jv_run_check(c, lbmc_jp_line(v), &o));
  c->job->o.tail_k = o.tail_k;
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_jp_max_customers(lbmc_jp *c, yaml_node_t *v)
{
  lbmc_run_options o;
  long x;
  lbmc_run_options_default(&o);
  LBMC_CHECK(lbmc_jp_long(c, v, "run.max_customers", "an integer >= 0 (0: default cap)", &x));
  o.max_customers = x;
  LBMC_CHECK(lbmc_jv_run_check(c, lbmc_jp_line(v), &o));
  c->job->o.max_customers = o.max_customers;
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_jp_run(lbmc_jp *c, yaml_node_t *v)
{
  static const lbmc_jp_key keys[] = {
      {"replicas", lbmc_jp_replicas, 0, ""},
      {"warmup", lbmc_jp_warmup, 0, ""},
      {"time", lbmc_jp_time, 0, ""},
      {"batches", lbmc_jp_batches, 0, ""},
      {"confidence", lbmc_jp_confidence, 0, ""},
      {"seed", lbmc_jp_seed, 0, ""},
      {"tail_k", lbmc_jp_tail_k, 0, ""},
      {"max_customers", lbmc_jp_max_customers, 0, ""},
      {"precision", lbmc_jp_precision, 0, ""},
  };
  return lbmc_jp_walk(c, v, "run", keys, LBMC_JP_COUNT(keys), lbmc_jp_hint);
}

/* ---- system and its pools ---- */

static lbmc_err lbmc_jp_pool_beta(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read(c, v, LBMC_JV_BETA, &c->job->pool_beta[c->pool]);
}

static lbmc_err lbmc_jp_pool_mu(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read(c, v, LBMC_JV_MU, &c->job->pool_mu[c->pool]);
}

static lbmc_err lbmc_jp_pool_buffer(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read(c, v, LBMC_JV_BUFFER, &c->job->pool_buffer[c->pool]);
}

static lbmc_err lbmc_jp_pool_mu_k(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read_vectors(c, v, LBMC_JV_MU, &c->job->pool_mu_k[c->pool]);
}

static lbmc_err lbmc_jp_pool_service(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read_service(c, v, &c->job->pool_service[c->pool]);
}

/* A pool's speed: mu (constant) or mu_k (by queue length), exactly one of them. */
static lbmc_err lbmc_jp_check_speed(const lbmc_jp *c, int j)
{
  const lbmc_job *job = c->job;
  const lbmc_job_setting *mu = &job->pool_mu[j], *mu_k = &job->pool_mu_k[j];
  if (mu->given && mu_k->given)
    return lbmc_jp_fail(c, LBMC_ERR_ARG, mu_k->line, mu_k->key,
                        "not allowed together with system.pools[%d].mu (line %d); give either mu "
                        "(a constant speed) or mu_k (speeds by the customers at the server)",
                        j + 1, mu->line);
  if (!mu->given && !mu_k->given)
    return lbmc_jp_fail(c, LBMC_ERR_ARG, job->pool_line[j], NULL,
                        "system.pools[%d]: the key 'mu' is required (the speed of the pool's "
                        "servers, e.g. 2 or 1/3), or 'mu_k' (speeds by the customers at the "
                        "server, e.g. [1, 2, 3])",
                        j + 1);
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_jp_pools(lbmc_jp *c, yaml_node_t *v)
{
  static const lbmc_jp_key keys[] = {
      {"beta", lbmc_jp_pool_beta, 0, ""},       {"mu", lbmc_jp_pool_mu, 0, ""},
      {"buffer", lbmc_jp_pool_buffer, 0, ""},   {"mu_k", lbmc_jp_pool_mu_k, 0, ""},
      {"service", lbmc_jp_pool_service, 0, ""},
  };
  lbmc_job *job = c->job;
  char where[512], path[48];
  long J;
  job->pools_line = lbmc_jp_line(v);
  if (v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.top == v->data.sequence.items.start)
    return lbmc_jp_fail(c, LBMC_ERR_ARG, job->pools_line, "system.pools",
                        "%s is not allowed here; a list of at least one pool, each a mapping "
                        "{beta, mu, buffer}, is required",
                        lbmc_jp_describe(v));
  J = v->data.sequence.items.top - v->data.sequence.items.start;
  LBMC_CHECK(lbmc_check_int_range(
      lbmc_jp_where(c, job->pools_line, "system.pools (number of pools)", where, sizeof where), J,
      1, LBMC_MAX_POOLS));
  job->J = (int)J;
  for (c->pool = 0; c->pool < job->J; c->pool++) {
    yaml_node_t *pool = yaml_document_get_node(c->doc, v->data.sequence.items.start[c->pool]);
    job->pool_line[c->pool] = c->key_line = lbmc_jp_line(pool);
    snprintf(path, sizeof path, "system.pools[%d]", c->pool + 1);
    LBMC_CHECK(lbmc_jp_walk(c, pool, path, keys, LBMC_JP_COUNT(keys), lbmc_jp_hint));
    LBMC_CHECK(lbmc_jp_check_speed(c, c->pool));
  }
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_jp_n(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read(c, v, LBMC_JV_N, &c->job->n);
}

static lbmc_err lbmc_jp_lambda(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read(c, v, LBMC_JV_LAMBDA, &c->job->lambda);
}

static lbmc_err lbmc_jp_routers(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read(c, v, LBMC_JV_ROUTERS, &c->job->routers);
}

static lbmc_err lbmc_jp_beta(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read_vectors(c, v, LBMC_JV_BETA, &c->job->beta);
}

static lbmc_err lbmc_jp_service(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read_service(c, v, &c->job->service);
}

static lbmc_err lbmc_jp_system(lbmc_jp *c, yaml_node_t *v)
{
  static const lbmc_jp_key keys[] = {
      {"n", lbmc_jp_n, 1, "the number of servers: an integer >= 1, or a list of them"},
      {"lambda", lbmc_jp_lambda, 1, "the arrival rate per server: a number > 0, or a list"},
      {"routers", lbmc_jp_routers, 0, ""},
      {"pools", lbmc_jp_pools, 1, "a list of pools, each a mapping {beta, mu, buffer}"},
      {"beta", lbmc_jp_beta, 0, ""},
      {"service", lbmc_jp_service, 0, ""},
  };
  return lbmc_jp_walk(c, v, "system", keys, LBMC_JP_COUNT(keys), lbmc_jp_hint);
}

/* ---- top level ---- */

static lbmc_err lbmc_jp_policy(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read(c, v, LBMC_JV_POLICY, &c->job->policy);
}

static lbmc_err lbmc_jp_stale(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read(c, v, LBMC_JV_STALE, &c->job->stale);
}

static lbmc_err lbmc_jp_sampling(lbmc_jp *c, yaml_node_t *v)
{
  return lbmc_jv_read(c, v, LBMC_JV_SAMPLING, &c->job->sampling);
}

static lbmc_err lbmc_jp_output(lbmc_jp *c, yaml_node_t *v)
{
  const char *text;
  LBMC_CHECK(lbmc_jp_scalar(c, v, "output", "a file path such as results/x.h5", &text));
  if (!*text)
    return lbmc_jp_fail(c, LBMC_ERR_ARG, lbmc_jp_line(v), "output",
                        "an empty path is not allowed; a file path such as results/x.h5 is "
                        "required (or leave the key out)");
  c->job->output = strdup(text);
  if (!c->job->output)
    return lbmc_jp_fail(c, LBMC_ERR_MEMORY, lbmc_jp_line(v), "output", "out of memory");
  return LBMC_SUCCESS;
}

/* ---- checks that span sections ---- */

/* Beta given exactly once for each pool (its own key, or system.beta), 'rest' for at
 * most one pool, system.beta vectors of length J. */
static lbmc_err lbmc_jp_check_betas(const lbmc_jp *c)
{
  const lbmc_job *job = c->job;
  int rest = -1;
  for (int j = 0; j < job->J; j++) {
    const lbmc_job_setting *b = &job->pool_beta[j];
    if (b->given && job->beta.given)
      return lbmc_jp_fail(c, LBMC_ERR_ARG, b->line, b->key,
                          "not allowed together with system.beta (line %d); give the fractions "
                          "either per pool or as system.beta",
                          job->beta.line);
    if (!b->given && !job->beta.given)
      return lbmc_jp_fail(c, LBMC_ERR_ARG, job->pool_line[j], NULL,
                          "system.pools[%d]: the key 'beta' is required (the pool's fraction of "
                          "the servers, or 'rest'), unless system.beta gives the fractions",
                          j + 1);
    for (long i = 0; b->given && i < b->count; i++)
      if (isnan(b->v[i].x) && rest >= 0 && rest != j)
        return lbmc_jp_fail(c, LBMC_ERR_ARG, b->v[i].line, b->key,
                            "'rest' is also given for system.pools[%d].beta; allowed: 'rest' for "
                            "at most one pool",
                            rest + 1);
      else if (isnan(b->v[i].x))
        rest = j;
  }
  for (long i = 0; job->beta.given && i < job->beta.count; i++)
    if (job->beta.v[i].vec_len != job->J)
      return lbmc_jp_fail(c, LBMC_ERR_ARG, job->beta.v[i].line, "system.beta",
                          "%s has %d entries; allowed: one per pool (system.pools has %d)",
                          job->beta.v[i].text, job->beta.v[i].vec_len, job->J);
  return LBMC_SUCCESS;
}

/* The service given for all pools (system.service) or per pool, not both. */
static lbmc_err lbmc_jp_check_services(const lbmc_jp *c)
{
  const lbmc_job *job = c->job;
  for (int j = 0; j < job->J && job->service.given; j++)
    if (job->pool_service[j].given)
      return lbmc_jp_fail(c, LBMC_ERR_ARG, job->pool_service[j].line, job->pool_service[j].key,
                          "not allowed together with system.service (line %d); give the service "
                          "distribution either for all pools (system.service) or per pool",
                          job->service.line);
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_jp_check_precision(const lbmc_jp *c)
{
  const lbmc_job *job = c->job;
  if (!job->precision.enabled) return LBMC_SUCCESS;
  LBMC_CHECK(lbmc_jv_metric(c));
  if (job->precision.max_replicas < job->replicas)
    return lbmc_jp_fail(c, LBMC_ERR_ARG, job->max_replicas_line, "run.precision.max_replicas",
                        "%ld is not allowed; allowed: at least run.replicas = %ld",
                        job->precision.max_replicas, job->replicas);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_jp_job(lbmc_jp *c)
{
  static const lbmc_jp_key keys[] = {
      {"system", lbmc_jp_system, 1, "the servers, arrivals and pools: n, lambda, pools"},
      {"policy", lbmc_jp_policy, 1, "a routing policy such as pull, or a list of them"},
      {"stale", lbmc_jp_stale, 0, ""},
      {"sampling", lbmc_jp_sampling, 0, ""},
      {"run", lbmc_jp_run, 0, ""},
      {"output", lbmc_jp_output, 0, ""},
  };
  LBMC_CHECK(lbmc_jp_walk(c, yaml_document_get_root_node(c->doc), "", keys, LBMC_JP_COUNT(keys),
                          lbmc_jp_hint));
  LBMC_CHECK(lbmc_jp_check_betas(c));
  LBMC_CHECK(lbmc_jp_check_services(c));
  LBMC_CHECK(lbmc_jp_check_precision(c));
  return LBMC_SUCCESS;
}
