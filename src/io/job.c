/* The job (include/lbmc/job.h): its settings, the grid and its points, the precision
 * target. A job is filled by reading a file (job_parse.c: sections, as the table of
 * inputs in inputs.h lists them; job_values.c: values; job_yaml.c: YAML, messages) or
 * setting by setting (job_build.c: lbmc sim's flags); both end here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_impl.h"
#include "lbmc/metrics.h"
#include "lbmc/rng.h"

/* ---- creation and destruction ---- */

static void lbmc_job_setting_free(lbmc_job_setting *s)
{
  for (long i = 0; s->v && i < s->count; i++) {
    free(s->v[i].text);
    free(s->v[i].vec);
    free(s->v[i].svc);
  }
  free(s->v);
  s->v = NULL;
  s->count = 0;
}

/* Name the setting of input row (of pool j, 0-based, for the inputs of a pool): its key
 * as in messages ("system.pools[2].mu") and its axis name (the key without "system."). */
static void lbmc_job_name_setting(lbmc_job_setting *s, const lbmc_input *row, int j)
{
  char key[48];
  const char *brackets = strstr(row->key, "[j]");
  if (brackets)
    snprintf(key, sizeof key, "%.*s[%d]%s", (int)(brackets - row->key), row->key, j + 1,
             brackets + 3);
  else
    snprintf(key, sizeof key, "%s", row->key);
  memset(s, 0, sizeof *s);
  s->row = row;
  snprintf(s->key, sizeof s->key, "%s", key);
  snprintf(s->name, sizeof s->name, "%.*s", (int)sizeof s->name - 1, /* cut as ever */
           strncmp(key, "system.", 7) == 0 ? key + 7 : key);
  s->axis = -1;
}

lbmc_err lbmc_job_create(const char *text, const char *name, lbmc_job **out)
{
  lbmc_job *job = calloc(1, sizeof *job);
  if (job) {
    job->text = strdup(text);
    job->name = strdup(name);
  }
  if (!job || !job->text || !job->name) {
    lbmc_job_destroy(&job);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "%s: out of memory for the job", name);
  }
  for (int id = 0; id < LBMC_INPUTS; id++) {
    const lbmc_input *row = &lbmc_inputs[id];
    if (!row->key) continue;
    if (!LBMC_INPUT_IS_POOL(id))
      lbmc_job_name_setting(&job->set[id], row, 0);
    else
      for (int j = 0; j < LBMC_MAX_POOLS; j++)
        lbmc_job_name_setting(&job->pool_set[j][id - LBMC_IN_POOL_FIRST], row, j);
  }
  *out = job;
  return LBMC_SUCCESS;
}

void lbmc_job_destroy(lbmc_job **job)
{
  lbmc_job *j;
  if (!job || !*job) return;
  j = *job;
  for (int id = 0; id < LBMC_INPUTS; id++) lbmc_job_setting_free(&j->set[id]);
  for (int p = 0; p < LBMC_MAX_POOLS; p++)
    for (int k = 0; k < LBMC_POOL_INPUTS; k++) lbmc_job_setting_free(&j->pool_set[p][k]);
  free(j->text);
  free(j->name);
  free(j);
  *job = NULL;
}

lbmc_job_setting *lbmc_job_setting_of(lbmc_job *job, int id, int j)
{
  return LBMC_INPUT_IS_POOL(id) ? &job->pool_set[j][id - LBMC_IN_POOL_FIRST] : &job->set[id];
}

const char *lbmc_job_where(const lbmc_job *job, const lbmc_job_setting *s, int line, char *buf,
                           size_t len)
{
  if (job->built)
    snprintf(buf, len, "%s", s->key);
  else
    snprintf(buf, len, "%s:%d: %s", job->name, line, s->key);
  return buf;
}

/* ---- the grid ---- */

lbmc_err lbmc_job_grid(lbmc_job *job)
{
  const long rmax = lbmc_job_replicas_max(job);
  const long double streams = (long double)LBMC_STREAM_MAX + 1;
  const long allowed = (LBMC_STREAM_MAX + 1) / LBMC_PURPOSES; /* points x replicas */
  long double P = 1;
  long length[LBMC_MAX_AXES]; /* of each dimension: that of its first axis */
  for (int a = job->naxes - 1; a >= 0; a--) length[job->dim_of[a]] = job->axis[a]->count;
  for (int d = 0; d < job->ndims; d++) P *= (long double)length[d];
  if (P * rmax * LBMC_PURPOSES > streams)
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "%s: the job needs %.0Lf points x %ld replicas (%s) x %d random streams, "
                      "more than SPRNG's %.0Lf stream numbers; allowed: points x replicas <= "
                      "%ld (reduce the grid or the replicas)",
                      job->name, P, rmax,
                      job->precision.enabled ? "run.precision.max_replicas" : "run.replicas",
                      (int)LBMC_PURPOSES, streams, allowed);
  job->P = (long)P;
  for (int d = job->ndims - 1; d >= 0; d--)
    job->stride[d] = d == job->ndims - 1 ? 1 : job->stride[d + 1] * length[d + 1];
  return lbmc_stream_check_capacity(job->P, rmax);
}

/* The value of setting s at point p: the point's index along the dimension of s'
 * axis (the grid index in mixed radix over the dimensions, the first slowest). */
static const lbmc_input_value *lbmc_job_at(const lbmc_job *job, const lbmc_job_setting *s, long p)
{
  return &s->v[s->axis < 0 ? 0 : (p / job->stride[job->dim_of[s->axis]]) % s->count];
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

/* "<file>: grid point p (name=value, ...)", cut to fit buf; a built job: its name. */
static void lbmc_job_origin(const lbmc_job *job, long p, char *buf, size_t len)
{
  size_t used;
  if (job->built) {
    snprintf(buf, len, "%s", job->name);
    return;
  }
  used = (size_t)snprintf(buf, len, "%s: grid point %ld", job->name, p);
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
  const lbmc_job_setting *vector = LBMC_JOB_SET(job, BETA);
  char terms[1024] = "", lines[512] = "";
  for (int j = 0; j < job->J; j++) {
    size_t t = strlen(terms), l = strlen(lines);
    snprintf(terms + t, sizeof terms - t, "%s%g", j ? " + " : "", beta[j]);
    if (!vector->given)
      snprintf(lines + l, sizeof lines - l, "%s%d", j ? ", " : "",
               lbmc_job_at(job, LBMC_JOB_POOL(job, POOL_BETA, j), p)->line);
  }
  if (vector->given)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: system.beta (line %d): the pool fractions %s sum to %.12g; allowed: "
                      "a sum of 1 (within %g)",
                      origin, lbmc_job_at(job, vector, p)->line, terms, sum, LBMC_BETA_SUM_TOL);
  return LBMC_ERROR(LBMC_ERR_ARG,
                    "%s: system.pools[j].beta (lines %s): the pool fractions %s sum to %.12g; "
                    "allowed: a sum of 1 (within %g), or 'rest' for one pool",
                    origin, lines, terms, sum, LBMC_BETA_SUM_TOL);
}

/* The pools at point p, with a 'rest' fraction computed from the others. The fractions
 * of a built job, without lines to name, are judged by lbmc_model_setup. */
static lbmc_err lbmc_job_point_pools(const lbmc_job *job, long p, const char *origin, double *beta,
                                     double *mu, long *buffer)
{
  const lbmc_job_setting *all = LBMC_JOB_SET(job, BETA), *buffers = LBMC_JOB_SET(job, BUFFER);
  const lbmc_input_value *vector = all->given ? lbmc_job_at(job, all, p) : NULL;
  double sum = 0;
  int rest = -1;
  for (int j = 0; j < job->J; j++) {
    const lbmc_job_setting *mu_k = LBMC_JOB_POOL(job, POOL_MU_K, j);
    const lbmc_job_setting *buf = buffers->given ? buffers : LBMC_JOB_POOL(job, POOL_BUFFER, j);
    beta[j] = vector ? vector->vec[j] : lbmc_job_at(job, LBMC_JOB_POOL(job, POOL_BETA, j), p)->x;
    mu[j] = mu_k->given ? lbmc_job_at(job, mu_k, p)->vec[0]
                        : lbmc_job_at(job, LBMC_JOB_POOL(job, POOL_MU, j), p)->x;
    buffer[j] = buf->given ? lbmc_job_at(job, buf, p)->l : LBMC_BUFFER_INF;
    if (isnan(beta[j]))
      rest = j;
    else
      sum += beta[j];
  }
  if (rest < 0)
    return fabs(sum - 1) > LBMC_BETA_SUM_TOL && !job->built
               ? lbmc_job_beta_sum(job, p, origin, beta, sum)
               : LBMC_SUCCESS;
  beta[rest] = 1 - sum;
  if (beta[rest] > 0) return LBMC_SUCCESS;
  return LBMC_ERROR(LBMC_ERR_ARG,
                    "%s: %s (line %d): 'rest' = 1 - %.12g = %.12g is not allowed; the other "
                    "pools' fractions must sum to less than 1",
                    origin, vector ? all->key : LBMC_JOB_POOL(job, POOL_BETA, rest)->key,
                    vector ? vector->line
                           : lbmc_job_at(job, LBMC_JOB_POOL(job, POOL_BETA, rest), p)->line,
                    sum, beta[rest]);
}

/* The value at point p of a setting given in the file, or NULL. */
static const lbmc_input_value *lbmc_job_given(const lbmc_job *job, const lbmc_job_setting *s,
                                              long p)
{
  return s->given ? lbmc_job_at(job, s, p) : NULL;
}

/* Set up the model m (fresh from lbmc_model_create) as point p. */
static lbmc_err lbmc_job_point_fill(const lbmc_job *job, long p, lbmc_model *m)
{
  const lbmc_input_value *policy = lbmc_job_at(job, LBMC_JOB_SET(job, POLICY), p), *v;
  double beta[LBMC_MAX_POOLS], mu[LBMC_MAX_POOLS];
  long buffer[LBMC_MAX_POOLS];
  char origin[1024];
  lbmc_job_origin(job, p, origin, sizeof origin);
  LBMC_CALL(lbmc_model_set_origin(m, origin));
  LBMC_CALL(lbmc_job_point_pools(job, p, origin, beta, mu, buffer));
  LBMC_CALL(lbmc_model_set_n(m, lbmc_job_at(job, LBMC_JOB_SET(job, N), p)->l));
  LBMC_CALL(lbmc_model_set_lambda(m, lbmc_job_at(job, LBMC_JOB_SET(job, LAMBDA), p)->x));
  LBMC_CALL(lbmc_model_set_pools(m, job->J, beta, mu, buffer));
  for (int j = 0; j < job->J; j++) {
    if ((v = lbmc_job_given(job, LBMC_JOB_POOL(job, POOL_MU_K, j), p)))
      LBMC_CALL(lbmc_model_set_rates(m, j, v->vec_len, v->vec));
    if ((v = lbmc_job_given(job, LBMC_JOB_POOL(job, POOL_SERVICE, j), p)))
      LBMC_CALL(lbmc_model_set_service(m, j, v->svc));
  }
  if ((v = lbmc_job_given(job, LBMC_JOB_SET(job, SERVICE), p)))
    LBMC_CALL(lbmc_model_set_service(m, -1, v->svc));
  LBMC_CALL(lbmc_model_set_policy(m, policy->text));
  if ((v = lbmc_job_given(job, LBMC_JOB_SET(job, ROUTERS), p)))
    LBMC_CALL(lbmc_model_set_routers(m, v->l));
  /* stale and sampling apply to the policies whose types read them (jiq fixes stale to
   * keep); other policies ignore the setting. A built job gives stale to the model
   * whatever the policy: the model judges it against jiq's. */
  if ((v = lbmc_job_given(job, LBMC_JOB_SET(job, STALE), p)) && (!policy->l || job->built))
    LBMC_CALL(lbmc_model_set_stale(m, v->text));
  if ((v = lbmc_job_given(job, LBMC_JOB_SET(job, SAMPLING), p)))
    LBMC_CALL(lbmc_model_set_sampling(m, v->text));
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
  LBMC_CALL(lbmc_model_create(&m));
  err = lbmc_job_point_fill(job, p, m);
  if (err) {
    lbmc_model_destroy(&m);
    return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
  }
  *out = m;
  return LBMC_SUCCESS;
}

/* The run options of point p (p < 0: the settings that are not axes only). */
static void lbmc_job_options(const lbmc_job *job, long p, lbmc_run_options *o)
{
  lbmc_run_options_default(o);
  for (int id = 0; id < LBMC_INPUTS; id++) {
    const lbmc_job_setting *s = &job->set[id];
    if (s->given && lbmc_input_is_run_option(&lbmc_inputs[id]) && (s->axis < 0 || p >= 0))
      lbmc_input_apply(&lbmc_inputs[id], lbmc_job_at(job, s, p), o);
  }
}

void lbmc_job_shared_options(const lbmc_job *job, lbmc_run_options *o)
{
  lbmc_job_options(job, -1, o);
}

void lbmc_job_point_options(const lbmc_job *job, long p, lbmc_run_options *o)
{
  lbmc_job_options(job, p >= 0 && p < job->P ? p : -1, o);
}

lbmc_err lbmc_job_check_points(const lbmc_job *job)
{
  char prefix[512];
  lbmc_run_options shared;
  snprintf(prefix, sizeof prefix, "%s: run.", job->name);
  lbmc_job_shared_options(job, &shared);
  LBMC_CALL(lbmc_run_options_check(&shared, prefix));
  if (shared.transient[2] > 0 && LBMC_JOB_SET(job, METRIC)->given) {
    const lbmc_job_setting *metric = LBMC_JOB_SET(job, METRIC);
    char where[512];
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: not allowed with run.transient (a transient run has a fixed number of "
                      "replicas: run.replicas); leave run.precision out",
                      lbmc_job_where(job, metric, metric->v[0].line, where, sizeof where));
  }
  for (int k = 0; shared.transient[2] > 0 && k < 2; k++) {
    const lbmc_job_setting *s = k ? LBMC_JOB_SET(job, WARMUP) : LBMC_JOB_SET(job, TIME);
    char where[512];
    if (s->given)
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: not allowed with run.transient (a transient run is observed from 0 "
                        "to T1 of T0:T1:DT; its warm-up is T0): leave run.%s out",
                        lbmc_job_where(job, s, s->v[0].line, where, sizeof where),
                        k ? "warmup" : "time");
  }
  for (long p = 0; p < job->P; p++) {
    lbmc_model *m;
    lbmc_run_options o;
    char origin[1024];
    lbmc_err err;
    LBMC_CALL(lbmc_job_point_model(job, p, &m));
    lbmc_job_point_options(job, p, &o);
    lbmc_job_origin(job, p, origin, sizeof origin);
    err = lbmc_run_check_size(m, &o, origin);
    if (!err) {
      char where[1100];
      snprintf(where, sizeof where, "%s: run.", origin);
      err = lbmc_run_check_engine(m, &o, where, NULL);
      if (!err) err = lbmc_run_check_pairs(m, &o, where);
    }
    lbmc_model_destroy(&m);
    LBMC_CALL(err);
  }
  return LBMC_SUCCESS;
}

/* ---- the precision target ---- */

lbmc_err lbmc_job_resolve_precision(lbmc_job *job)
{
  const lbmc_job_setting *metric = LBMC_JOB_SET(job, METRIC),
                         *max = LBMC_JOB_SET(job, MAX_REPLICAS);
  const lbmc_job_setting *max_time = LBMC_JOB_SET(job, MAX_TIME);
  lbmc_run_options o;
  char where[512];
  if (!metric->given) return LBMC_SUCCESS;
  job->precision.enabled = 1;
  job->precision.relative = LBMC_JOB_SET(job, RELATIVE)->v[0].x;
  job->precision.max_replicas = max->v[0].l;
  if (max_time->given) job->precision.max_time = max_time->v[0].x;
  lbmc_job_shared_options(job, &o);
  LBMC_CALL(lbmc_metric_parse(lbmc_job_where(job, metric, metric->v[0].line, where, sizeof where),
                              metric->v[0].text, job->J, (int)o.tail_k,
                              o.pairs ? LBMC_METRIC_PAIRS : 0, &job->precision.metric,
                              &job->precision.index));
  if (job->precision.max_replicas < lbmc_job_replicas(job))
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: %ld is not allowed; allowed: at least %s = %ld",
                      lbmc_job_where(job, max, max->line, where, sizeof where),
                      job->precision.max_replicas, LBMC_JOB_SET(job, REPLICAS)->key,
                      lbmc_job_replicas(job));
  return LBMC_SUCCESS;
}

/* ---- getters ---- */

const char *lbmc_job_text(const lbmc_job *job) { return job->text; }
const char *lbmc_job_name(const lbmc_job *job) { return job->name; }
long lbmc_job_points(const lbmc_job *job) { return job->P; }
int lbmc_job_pools(const lbmc_job *job) { return job->J; }
int lbmc_job_axes(const lbmc_job *job) { return job->naxes; }
const lbmc_precision *lbmc_job_precision(const lbmc_job *job) { return &job->precision; }

long lbmc_job_replicas(const lbmc_job *job)
{
  const lbmc_job_setting *s = LBMC_JOB_SET(job, REPLICAS);
  return s->given ? s->v[0].l : LBMC_JOB_DEFAULT_REPLICAS;
}

long lbmc_job_seed(const lbmc_job *job)
{
  const lbmc_job_setting *s = LBMC_JOB_SET(job, SEED);
  return s->given ? s->v[0].l : LBMC_DEFAULT_SEED;
}

const char *lbmc_job_output(const lbmc_job *job)
{
  const lbmc_job_setting *s = LBMC_JOB_SET(job, OUTPUT);
  return s->given ? s->v[0].text : NULL;
}

long lbmc_job_replicas_max(const lbmc_job *job)
{
  return job->precision.enabled ? job->precision.max_replicas : lbmc_job_replicas(job);
}

const char *lbmc_job_axis_name(const lbmc_job *job, int a)
{
  return a >= 0 && a < job->naxes ? job->axis[a]->name : NULL;
}

long lbmc_job_axis_length(const lbmc_job *job, int a)
{
  return a >= 0 && a < job->naxes ? job->axis[a]->count : 0;
}

int lbmc_job_dims(const lbmc_job *job) { return job->ndims; }

int lbmc_job_axis_routing(const lbmc_job *job, int a)
{
  return a >= 0 && a < job->naxes && job->axis[a]->row->routing;
}

int lbmc_job_axis_dim(const lbmc_job *job, int a)
{
  return a >= 0 && a < job->naxes ? job->dim_of[a] : -1;
}

const char *lbmc_job_dim_name(const lbmc_job *job, int d)
{
  int first = -1, count = 0;
  if (d < 0 || d >= job->ndims) return NULL;
  for (int a = 0; a < job->naxes; a++)
    if (job->dim_of[a] == d && count++ == 0) first = a;
  return count == 1 && !job->dim_name[d][0] ? job->axis[first]->name : job->dim_name[d];
}

const char *lbmc_job_axis_value(const lbmc_job *job, int a, long v)
{
  if (a < 0 || a >= job->naxes || v < 0 || v >= job->axis[a]->count) return NULL;
  return job->axis[a]->v[v].text;
}
