/* Job files: the public API (include/lbmc/job.h), the grid and its points. Parsing is
 * in job_parse.c (sections, as the table of inputs in inputs.h lists them),
 * job_values.c (values) and job_yaml.c (YAML, messages). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "job_impl.h"
#include "lbmc/rng.h"

/* ---- creation and destruction ---- */

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
  lbmc_jv_init(s, key, strncmp(key, "system.", 7) == 0 ? key + 7 : key);
}

static lbmc_err lbmc_job_create(const char *text, const char *name, lbmc_job **out)
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
    if (id < LBMC_IN_POOL_FIRST || id >= LBMC_IN_POOL_FIRST + LBMC_POOL_INPUTS)
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
  for (int id = 0; id < LBMC_INPUTS; id++) lbmc_jv_free(&j->set[id]);
  for (int p = 0; p < LBMC_MAX_POOLS; p++)
    for (int k = 0; k < LBMC_POOL_INPUTS; k++) lbmc_jv_free(&j->pool_set[p][k]);
  free(j->text);
  free(j->name);
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
  long length[LBMC_JOB_MAX_AXES]; /* of each dimension: that of its first axis */
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

/* The pools at point p, with a 'rest' fraction computed from the others. */
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
    return fabs(sum - 1) > LBMC_BETA_SUM_TOL ? lbmc_job_beta_sum(job, p, origin, beta, sum)
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
   * keep); other policies ignore the setting. */
  if ((v = lbmc_job_given(job, LBMC_JOB_SET(job, STALE), p)) && !policy->l)
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

/* Every point's model is built and set up once, so that an impossible combination is
 * reported before anything runs. */
static lbmc_err lbmc_job_check_points(const lbmc_job *job)
{
  char prefix[512];
  lbmc_run_options shared;
  snprintf(prefix, sizeof prefix, "%s: run.", job->name);
  lbmc_job_shared_options(job, &shared);
  LBMC_CALL(lbmc_run_options_check(&shared, prefix));
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
    }
    lbmc_model_destroy(&m);
    LBMC_CALL(err);
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
  LBMC_CALL(lbmc_job_create(text, name, &job));
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

/* The whole file into a NUL-terminated buffer; *len excludes the terminator. At most
 * LBMC_JOB_MAX_BYTES: a device or a huge file is refused without reading it all. */
static lbmc_err lbmc_job_read(const char *path, char **text, size_t *len)
{
  FILE *f = fopen(path, "rb");
  size_t cap = 4096, n;
  char *buf = NULL, *bigger;
  struct stat st;
  *text = NULL;
  *len = 0;
  if (!f)
    return LBMC_ERROR(LBMC_ERR_FILE, "%s: cannot read the job file: %s", path, strerror(errno));
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > LBMC_JOB_MAX_BYTES) {
    fclose(f);
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "%s: the job file is %lld bytes; at most %d MiB is allowed (a job file is "
                      "a short YAML text: is it the right file?)",
                      path, (long long)st.st_size, LBMC_JOB_MAX_BYTES >> 20);
  }
  for (;;) {
    if (*len > LBMC_JOB_MAX_BYTES) {
      free(buf);
      fclose(f);
      return LBMC_ERROR(LBMC_ERR_LIMIT,
                        "%s: the job file is longer than %d MiB, the most allowed (a job file is "
                        "a short YAML text: is it the right file?)",
                        path, LBMC_JOB_MAX_BYTES >> 20);
    }
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
  LBMC_CALL(lbmc_job_read(path, &text, &len));
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
