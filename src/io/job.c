/* Job files: the public API (include/lbmc/job.h), the grid and its points. Parsing is
 * in job_parse.c (sections), job_values.c (values) and job_yaml.c (YAML, messages). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_impl.h"
#include "lbmc/rng.h"

/* ---- creation and destruction ---- */

static lbmc_err lbmc_job_create(const char *text, const char *name, lbmc_job **out)
{
  lbmc_job *job = calloc(1, sizeof *job);
  char key[48], axis[32];
  if (job) {
    job->text = strdup(text);
    job->name = strdup(name);
  }
  if (!job || !job->text || !job->name) {
    lbmc_job_destroy(&job);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "%s: out of memory for the job", name);
  }
  lbmc_jv_init(&job->n, "system.n", "n");
  lbmc_jv_init(&job->lambda, "system.lambda", "lambda");
  lbmc_jv_init(&job->routers, "system.routers", "routers");
  lbmc_jv_init(&job->beta, "system.beta", "beta");
  lbmc_jv_init(&job->policy, "policy", "policy");
  lbmc_jv_init(&job->stale, "stale", "stale");
  lbmc_jv_init(&job->sampling, "sampling", "sampling");
  lbmc_jv_init(&job->time, "run.time", "run.time");
  lbmc_jv_init(&job->warmup, "run.warmup", "run.warmup");
  lbmc_jv_init(&job->service, "system.service", "service");
  for (int j = 0; j < LBMC_MAX_POOLS; j++) {
#define LBMC_JOB_POOL_INIT(field, what)                                                            \
  snprintf(key, sizeof key, "system.pools[%d]." what, j + 1);                                      \
  snprintf(axis, sizeof axis, "pools[%d]." what, j + 1);                                           \
  lbmc_jv_init(&job->field[j], key, axis)
    LBMC_JOB_POOL_INIT(pool_beta, "beta");
    LBMC_JOB_POOL_INIT(pool_mu, "mu");
    LBMC_JOB_POOL_INIT(pool_buffer, "buffer");
    LBMC_JOB_POOL_INIT(pool_service, "service");
    LBMC_JOB_POOL_INIT(pool_mu_k, "mu_k");
#undef LBMC_JOB_POOL_INIT
  }
  lbmc_run_options_default(&job->o);
  job->replicas = LBMC_JOB_DEFAULT_REPLICAS;
  job->seed = 1;
  *out = job;
  return LBMC_SUCCESS;
}

void lbmc_job_destroy(lbmc_job **job)
{
  lbmc_job *j;
  if (!job || !*job) return;
  j = *job;
  lbmc_jv_free(&j->n);
  lbmc_jv_free(&j->lambda);
  lbmc_jv_free(&j->routers);
  lbmc_jv_free(&j->beta);
  lbmc_jv_free(&j->policy);
  lbmc_jv_free(&j->stale);
  lbmc_jv_free(&j->sampling);
  lbmc_jv_free(&j->time);
  lbmc_jv_free(&j->warmup);
  lbmc_jv_free(&j->service);
  for (int p = 0; p < LBMC_MAX_POOLS; p++) {
    lbmc_jv_free(&j->pool_beta[p]);
    lbmc_jv_free(&j->pool_mu[p]);
    lbmc_jv_free(&j->pool_buffer[p]);
    lbmc_jv_free(&j->pool_service[p]);
    lbmc_jv_free(&j->pool_mu_k[p]);
  }
  free(j->text);
  free(j->name);
  free(j->precision_metric);
  free(j->output);
  free(j);
  *job = NULL;
}

/* ---- the grid ---- */

/* P, the strides, and the random-stream capacity (LBMC_ERR_LIMIT). */
static lbmc_err lbmc_job_grid(lbmc_job *job)
{
  const long rmax = lbmc_job_replicas_max(job);
  const long double streams = (long double)LBMC_STREAM_MAX + 1;
  const long allowed = (LBMC_STREAM_MAX + 1) / LBMC_PURPOSES; /* points x replicas */
  long double P = 1;
  for (int a = 0; a < job->naxes; a++) P *= (long double)job->axis[a]->count;
  if (P * rmax * LBMC_PURPOSES > streams)
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "%s: the job needs %.0Lf points x %ld replicas (%s) x %d random streams, "
                      "more than SPRNG's %.0Lf stream numbers; allowed: points x replicas <= "
                      "%ld (reduce the grid or the replicas)",
                      job->name, P, rmax,
                      job->precision.enabled ? "run.precision.max_replicas" : "run.replicas",
                      (int)LBMC_PURPOSES, streams, allowed);
  job->P = (long)P;
  for (int a = job->naxes - 1; a >= 0; a--)
    job->stride[a] = a == job->naxes - 1 ? 1 : job->stride[a + 1] * job->axis[a + 1]->count;
  return lbmc_stream_check_capacity(job->P, rmax);
}

/* The value of setting s at point p. */
static const lbmc_job_value *lbmc_job_at(const lbmc_job *job, const lbmc_job_setting *s, long p)
{
  return &s->v[s->axis < 0 ? 0 : (p / job->stride[s->axis]) % s->count];
}

void lbmc_job_point_label(const lbmc_job *job, long p, char *buf, size_t len)
{
  size_t used = 0;
  if (len) buf[0] = '\0';
  for (int a = 0; a < job->naxes && used < len; a++) {
    const lbmc_job_setting *s = job->axis[a];
    used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", a ? " " : "", s->name,
                             lbmc_job_at(job, s, p)->text);
  }
}

/* "<file>: grid point p (name=value, ...)", cut to fit buf. */
static void lbmc_job_origin(const lbmc_job *job, long p, char *buf, size_t len)
{
  size_t used = (size_t)snprintf(buf, len, "%s: grid point %ld", job->name, p);
  for (int a = 0; a < job->naxes && used < len; a++) {
    const lbmc_job_setting *s = job->axis[a];
    used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", a ? ", " : " (", s->name,
                             lbmc_job_at(job, s, p)->text);
  }
  if (job->naxes && used < len) snprintf(buf + used, len - used, ")");
}

/* The fractions at point p do not sum to 1: name them and their lines. */
static lbmc_err lbmc_job_beta_sum(const lbmc_job *job, long p, const char *origin,
                                  const double *beta, double sum)
{
  char terms[1024] = "", lines[512] = "";
  for (int j = 0; j < job->J; j++) {
    size_t t = strlen(terms), l = strlen(lines);
    snprintf(terms + t, sizeof terms - t, "%s%g", j ? " + " : "", beta[j]);
    if (!job->beta.given)
      snprintf(lines + l, sizeof lines - l, "%s%d", j ? ", " : "",
               lbmc_job_at(job, &job->pool_beta[j], p)->line);
  }
  if (job->beta.given)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: system.beta (line %d): the pool fractions %s sum to %.12g; allowed: "
                      "a sum of 1 (within %g)",
                      origin, lbmc_job_at(job, &job->beta, p)->line, terms, sum, LBMC_BETA_SUM_TOL);
  return LBMC_ERROR(LBMC_ERR_ARG,
                    "%s: system.pools[j].beta (lines %s): the pool fractions %s sum to %.12g; "
                    "allowed: a sum of 1 (within %g), or 'rest' for one pool",
                    origin, lines, terms, sum, LBMC_BETA_SUM_TOL);
}

/* The pools at point p, with a 'rest' fraction computed from the others. */
static lbmc_err lbmc_job_point_pools(const lbmc_job *job, long p, const char *origin, double *beta,
                                     double *mu, long *buffer)
{
  const lbmc_job_value *vector = job->beta.given ? lbmc_job_at(job, &job->beta, p) : NULL;
  double sum = 0;
  int rest = -1;
  for (int j = 0; j < job->J; j++) {
    beta[j] = vector ? vector->vec[j] : lbmc_job_at(job, &job->pool_beta[j], p)->x;
    mu[j] = job->pool_mu_k[j].given ? lbmc_job_at(job, &job->pool_mu_k[j], p)->vec[0]
                                    : lbmc_job_at(job, &job->pool_mu[j], p)->x;
    buffer[j] =
        job->pool_buffer[j].given ? lbmc_job_at(job, &job->pool_buffer[j], p)->l : LBMC_BUFFER_INF;
    if (isnan(beta[j]))
      rest = j;
    else
      sum += beta[j];
  }
  if (rest < 0)
    return fabs(sum - 1) > LBMC_BETA_SUM_TOL ? lbmc_job_beta_sum(job, p, origin, beta, sum)
                                             : LBMC_SUCCESS;
  beta[rest] = 1 - sum;
  if (beta[rest] > 0) return LBMC_SUCCESS;
  return LBMC_ERROR(LBMC_ERR_ARG,
                    "%s: %s (line %d): 'rest' = 1 - %.12g = %.12g is not allowed; the other "
                    "pools' fractions must sum to less than 1",
                    origin, vector ? job->beta.key : job->pool_beta[rest].key,
                    vector ? vector->line : lbmc_job_at(job, &job->pool_beta[rest], p)->line, sum,
                    beta[rest]);
}

/* Set up the model m (fresh from lbmc_model_create) as point p. */
static lbmc_err lbmc_job_point_fill(const lbmc_job *job, long p, lbmc_model *m)
{
  const lbmc_job_value *policy = lbmc_job_at(job, &job->policy, p);
  double beta[LBMC_MAX_POOLS], mu[LBMC_MAX_POOLS];
  long buffer[LBMC_MAX_POOLS];
  char origin[1024];
  lbmc_job_origin(job, p, origin, sizeof origin);
  LBMC_CHECK(lbmc_model_set_origin(m, origin));
  LBMC_CHECK(lbmc_job_point_pools(job, p, origin, beta, mu, buffer));
  LBMC_CHECK(lbmc_model_set_n(m, lbmc_job_at(job, &job->n, p)->l));
  LBMC_CHECK(lbmc_model_set_lambda(m, lbmc_job_at(job, &job->lambda, p)->x));
  LBMC_CHECK(lbmc_model_set_pools(m, job->J, beta, mu, buffer));
  for (int j = 0; j < job->J; j++) {
    const lbmc_job_value *v;
    if (job->pool_mu_k[j].given) {
      v = lbmc_job_at(job, &job->pool_mu_k[j], p);
      LBMC_CHECK(lbmc_model_set_rates(m, j, v->vec_len, v->vec));
    }
    if (job->pool_service[j].given)
      LBMC_CHECK(lbmc_model_set_service(m, j, lbmc_job_at(job, &job->pool_service[j], p)->svc));
  }
  if (job->service.given)
    LBMC_CHECK(lbmc_model_set_service(m, -1, lbmc_job_at(job, &job->service, p)->svc));
  LBMC_CHECK(lbmc_model_set_policy(m, policy->text));
  if (job->routers.given)
    LBMC_CHECK(lbmc_model_set_routers(m, lbmc_job_at(job, &job->routers, p)->l));
  /* stale applies to pull (jiq fixes it to keep), sampling to jsq(d); other policies
   * ignore the setting. */
  if (job->stale.given && !policy->l)
    LBMC_CHECK(lbmc_model_set_stale(m, lbmc_job_at(job, &job->stale, p)->text));
  if (job->sampling.given)
    LBMC_CHECK(lbmc_model_set_sampling(m, lbmc_job_at(job, &job->sampling, p)->text));
  return lbmc_model_setup(m);
}

lbmc_err lbmc_job_point_model(const lbmc_job *job, long p, lbmc_model **out)
{
  lbmc_model *m = NULL;
  lbmc_err err;
  *out = NULL;
  if (p < 0 || p >= job->P)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: grid point %ld does not exist; allowed: 0 to %ld",
                      job->name, p, job->P - 1);
  LBMC_CHECK(lbmc_model_create(&m));
  err = lbmc_job_point_fill(job, p, m);
  if (err) {
    lbmc_model_destroy(&m);
    return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
  }
  *out = m;
  return LBMC_SUCCESS;
}

void lbmc_job_point_options(const lbmc_job *job, long p, lbmc_run_options *o)
{
  *o = job->o;
  if (p < 0 || p >= job->P) return;
  if (job->time.given) o->time = lbmc_job_at(job, &job->time, p)->x;
  if (job->warmup.given) {
    const lbmc_job_value *w = lbmc_job_at(job, &job->warmup, p);
    o->warmup_auto = (int)w->l;
    if (!w->l) o->warmup = w->x;
  }
}

/* Every point's model is built and set up once, so that an impossible combination is
 * reported before anything runs. */
static lbmc_err lbmc_job_check_points(const lbmc_job *job)
{
  char prefix[512];
  snprintf(prefix, sizeof prefix, "%s: run.", job->name);
  LBMC_CHECK(lbmc_run_options_check(&job->o, prefix));
  for (long p = 0; p < job->P; p++) {
    lbmc_model *m;
    lbmc_run_options o;
    char origin[1024];
    lbmc_err err;
    LBMC_CHECK(lbmc_job_point_model(job, p, &m));
    lbmc_job_point_options(job, p, &o);
    lbmc_job_origin(job, p, origin, sizeof origin);
    err = lbmc_run_check_size(m, &o, origin);
    lbmc_model_destroy(&m);
    LBMC_CHECK(err);
  }
  return LBMC_SUCCESS;
}

/* ---- parsing ---- */

lbmc_err lbmc_job_parse_text(const char *text, const char *name, lbmc_job **out)
{
  lbmc_job *job = NULL;
  yaml_document_t doc;
  lbmc_err err;
  *out = NULL;
  if (!name) name = "job";
  if (!text) return LBMC_ERROR(LBMC_ERR_ARG, "%s: no job text", name);
  LBMC_CHECK(lbmc_job_create(text, name, &job));
  err = lbmc_jp_load(job->name, job->text, strlen(job->text), &doc);
  if (!err) {
    lbmc_jp c = {&doc, job->name, job, 0, 0};
    err = lbmc_jp_job(&c);
    yaml_document_delete(&doc);
  }
  if (!err) err = lbmc_job_grid(job);
  if (!err) err = lbmc_job_check_points(job);
  if (err) {
    lbmc_job_destroy(&job);
    return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
  }
  *out = job;
  return LBMC_SUCCESS;
}

/* The whole file into a NUL-terminated buffer; *len excludes the terminator. */
static lbmc_err lbmc_job_read(const char *path, char **text, size_t *len)
{
  FILE *f = fopen(path, "rb");
  size_t cap = 4096, n;
  char *buf = NULL, *bigger;
  *text = NULL;
  *len = 0;
  if (!f)
    return LBMC_ERROR(LBMC_ERR_FILE, "%s: cannot read the job file: %s", path, strerror(errno));
  for (;;) {
    bigger = realloc(buf, cap + 1);
    if (!bigger) {
      free(buf);
      fclose(f);
      return LBMC_ERROR(LBMC_ERR_MEMORY, "%s: out of memory reading the job file", path);
    }
    buf = bigger;
    n = fread(buf + *len, 1, cap - *len, f);
    *len += n;
    if (*len < cap) break;
    cap *= 2;
  }
  if (ferror(f)) {
    free(buf);
    fclose(f);
    return LBMC_ERROR(LBMC_ERR_FILE, "%s: cannot read the job file", path);
  }
  fclose(f);
  buf[*len] = '\0';
  *text = buf;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_job_parse_file(const char *path, lbmc_job **job)
{
  char *text;
  const char *nul;
  size_t len;
  lbmc_err err;
  *job = NULL;
  LBMC_CHECK(lbmc_job_read(path, &text, &len));
  nul = memchr(text, '\0', len);
  if (nul)
    err = LBMC_ERROR(LBMC_ERR_PARSE,
                     "%s: not valid YAML: the file holds a NUL byte at offset %zu (is it a "
                     "binary file?); a job file is YAML text",
                     path, (size_t)(nul - text));
  else
    err = lbmc_job_parse_text(text, path, job);
  free(text);
  return err ? lbmc_error_trace(__FILE__, __LINE__, __func__, err) : LBMC_SUCCESS;
}

/* ---- getters ---- */

const char *lbmc_job_text(const lbmc_job *job) { return job->text; }
const char *lbmc_job_name(const lbmc_job *job) { return job->name; }
long lbmc_job_points(const lbmc_job *job) { return job->P; }
int lbmc_job_pools(const lbmc_job *job) { return job->J; }
int lbmc_job_axes(const lbmc_job *job) { return job->naxes; }
long lbmc_job_replicas(const lbmc_job *job) { return job->replicas; }
long lbmc_job_seed(const lbmc_job *job) { return job->seed; }
const lbmc_precision *lbmc_job_precision(const lbmc_job *job) { return &job->precision; }
const char *lbmc_job_output(const lbmc_job *job) { return job->output; }

long lbmc_job_replicas_max(const lbmc_job *job)
{
  return job->precision.enabled ? job->precision.max_replicas : job->replicas;
}

const char *lbmc_job_axis_name(const lbmc_job *job, int a)
{
  return a >= 0 && a < job->naxes ? job->axis[a]->name : NULL;
}

long lbmc_job_axis_length(const lbmc_job *job, int a)
{
  return a >= 0 && a < job->naxes ? job->axis[a]->count : 0;
}

const char *lbmc_job_axis_value(const lbmc_job *job, int a, long v)
{
  if (a < 0 || a >= job->naxes || v < 0 || v >= job->axis[a]->count) return NULL;
  return job->axis[a]->v[v].text;
}
