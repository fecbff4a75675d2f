/* Job files: the sections (top level, system, pools, run, run.precision) walked as the
 * table of inputs (inputs.h) lists their keys, each value read as its input's type
 * says, and the checks that span sections. The format is documented in
 * docs/job-files.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_impl.h"
#include "lbmc/check.h"

#define LBMC_JP_COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))
#define LBMC_JP_MAX_KEYS 32

/* ---- keys and hints from the table of inputs ---- */

/* The last word of a key ("mu" of "system.pools[j].mu") and the length of its parent. */
static const char *lbmc_jp_word(const char *key, size_t *parent_len)
{
  const char *dot = strrchr(key, '.');
  *parent_len = dot ? (size_t)(dot - key) : 0;
  return dot ? dot + 1 : key;
}

int lbmc_jp_keys(const char *parent, lbmc_jp_key *keys, int cap)
{
  int n = 0;
  for (int i = 0; i < LBMC_INPUTS && n < cap; i++) {
    const lbmc_input *row = &lbmc_inputs[i];
    size_t len;
    const char *word;
    if (!row->key) continue;
    word = lbmc_jp_word(row->key, &len);
    if (len == strlen(parent) && strncmp(row->key, parent, len) == 0) {
      keys[n].key = word;
      keys[n++].row = row;
    }
  }
  return n;
}

/* Words of a service mapping, not inputs of their own. */
static const char *const lbmc_jp_service_words[][2] = {
    {"dist", "system.service or system.pools[j].service, e.g. service: {dist: lognormal, scv: 4}"},
    {"scv", "a service distribution, e.g. service: {dist: lognormal, scv: 4}"},
    {"shape", "a service distribution, e.g. service: {dist: weibull, shape: 0.5}"},
    {"alpha", "a phase-type service distribution, e.g. service: {dist: ph, alpha: [1, 0], T: "
              "[[-2, 2], [0, -2]]}"},
    {"T", "a phase-type service distribution, e.g. service: {dist: ph, alpha: [1, 0], T: [[-2, "
          "2], [0, -2]]}"},
};

/* Where a key misplaced in another section belongs (for the unknown-key message):
 * every input of that name ("system.beta or system.pools[j].beta", "the top-level key
 * policy"), but not the top-level sections. */
static const char *lbmc_jp_hint(const char *key, char *buf, size_t len)
{
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < LBMC_INPUTS; i++) {
    const lbmc_input *row = &lbmc_inputs[i];
    size_t parent;
    if (!row->key || strcmp(lbmc_jp_word(row->key, &parent), key) != 0) continue;
    if (parent == 0 && row->type == LBMC_IT_SECTION) continue;
    used +=
        (size_t)snprintf(buf + used, used < len ? len - used : 0,
                         parent ? "%s%s" : "%sthe top-level key %s", used ? " or " : "", row->key);
  }
  if (used) return buf;
  for (int i = 0; i < LBMC_JP_COUNT(lbmc_jp_service_words); i++)
    if (strcmp(key, lbmc_jp_service_words[i][0]) == 0) return lbmc_jp_service_words[i][1];
  /* {mu: 1, service: hyperexponential:p=0.25,r1=0.5,r2=1.5}: YAML splits at the commas */
  if (strchr(key, '=') && !strchr(key, ':'))
    return "inside a quoted service text, as in service: \"hyperexponential:p=0.25,r1=0.5,r2=1.5\"";
  return NULL;
}

/* Walk the mapping of section `parent` (table form), named `path` in messages. */
static lbmc_err lbmc_jp_section(lbmc_jp *c, yaml_node_t *v, const char *path, const char *parent)
{
  lbmc_jp_key keys[LBMC_JP_MAX_KEYS];
  int n = lbmc_jp_keys(parent, keys, LBMC_JP_MAX_KEYS);
  return lbmc_jp_walk(c, v, path, keys, n, lbmc_jp_hint);
}

/* ---- system.pools ---- */

/* A pool's speed: mu (constant) or mu_k (by queue length), exactly one of them. */
static lbmc_err lbmc_jp_check_speed(const lbmc_jp *c, int j)
{
  const lbmc_job *job = c->job;
  const lbmc_job_setting *mu = LBMC_JOB_POOL(job, POOL_MU, j);
  const lbmc_job_setting *mu_k = LBMC_JOB_POOL(job, POOL_MU_K, j);
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
  lbmc_job *job = c->job;
  lbmc_job_setting *pools = LBMC_JOB_SET(job, POOLS);
  char where[512], path[48];
  long J;
  pools->given = 1;
  pools->line = lbmc_jp_line(v);
  if (v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.top == v->data.sequence.items.start)
    return lbmc_jp_fail(c, LBMC_ERR_ARG, pools->line, "system.pools",
                        "%s is not allowed here; a list of at least one pool, each a mapping "
                        "{beta, mu, buffer}, is required",
                        lbmc_jp_describe(v));
  J = v->data.sequence.items.top - v->data.sequence.items.start;
  LBMC_CALL(lbmc_check_int_range(
      lbmc_jp_where(c, pools->line, "system.pools (number of pools)", where, sizeof where), J, 1,
      LBMC_MAX_POOLS));
  job->J = (int)J;
  for (c->pool = 0; c->pool < job->J; c->pool++) {
    yaml_node_t *pool = yaml_document_get_node(c->doc, v->data.sequence.items.start[c->pool]);
    job->pool_line[c->pool] = c->key_line = lbmc_jp_line(pool);
    snprintf(path, sizeof path, "system.pools[%d]", c->pool + 1);
    LBMC_CALL(lbmc_jp_section(c, pool, path, "system.pools[j]"));
    LBMC_CALL(lbmc_jp_check_speed(c, c->pool));
  }
  return LBMC_SUCCESS;
}

/* ---- one key ---- */

lbmc_err lbmc_jp_read(lbmc_jp *c, const lbmc_input *row, yaml_node_t *v)
{
  const int id = (int)(row - lbmc_inputs);
  lbmc_job_setting *s = id >= LBMC_IN_POOL_FIRST && id < LBMC_IN_POOL_FIRST + LBMC_POOL_INPUTS
                            ? &c->job->pool_set[c->pool][id - LBMC_IN_POOL_FIRST]
                            : &c->job->set[id];
  switch (row->type) {
  case LBMC_IT_SECTION:
    s->given = 1;
    s->line = lbmc_jp_line(v);
    return lbmc_jp_section(c, v, row->key, row->key);
  case LBMC_IT_POOLS: return lbmc_jp_pools(c, v);
  case LBMC_IT_BETAS:
  case LBMC_IT_SPEEDS: return lbmc_jv_read_vectors(c, v, row, s);
  case LBMC_IT_SERVICE: return lbmc_jv_read_service(c, v, s);
  case LBMC_IT_LINKS: return lbmc_jl_read(c, v);
  default: return lbmc_jv_read(c, v, row, s);
  }
}

/* ---- checks that span sections ---- */

/* Beta given exactly once for each pool (its own key, or system.beta), 'rest' for at
 * most one pool, system.beta vectors of length J. */
static lbmc_err lbmc_jp_check_betas(const lbmc_jp *c)
{
  const lbmc_job *job = c->job;
  int rest = -1;
  const lbmc_job_setting *beta = LBMC_JOB_SET(job, BETA);
  for (int j = 0; j < job->J; j++) {
    const lbmc_job_setting *b = LBMC_JOB_POOL(job, POOL_BETA, j);
    if (b->given && beta->given)
      return lbmc_jp_fail(c, LBMC_ERR_ARG, b->line, b->key,
                          "not allowed together with system.beta (line %d); give the fractions "
                          "either per pool or as system.beta",
                          beta->line);
    if (!b->given && !beta->given)
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
  for (long i = 0; beta->given && i < beta->count; i++)
    if (beta->v[i].vec_len != job->J)
      return lbmc_jp_fail(c, LBMC_ERR_ARG, beta->v[i].line, "system.beta",
                          "%s has %d entries; allowed: one per pool (system.pools has %d)",
                          beta->v[i].text, beta->v[i].vec_len, job->J);
  return LBMC_SUCCESS;
}

/* A setting given for all pools (system.service, system.buffer: `all`) or per pool
 * (`one` of each pool), not both. */
static lbmc_err lbmc_jp_check_all_pools(const lbmc_jp *c, const lbmc_job_setting *all, int pool_id,
                                        const char *what)
{
  const lbmc_job *job = c->job;
  for (int j = 0; j < job->J && all->given; j++) {
    const lbmc_job_setting *one = &job->pool_set[j][pool_id - LBMC_IN_POOL_FIRST];
    if (one->given)
      return lbmc_jp_fail(c, LBMC_ERR_ARG, one->line, one->key,
                          "not allowed together with %s (line %d); give the %s either for all "
                          "pools (%s) or per pool",
                          all->key, all->line, what, all->key);
  }
  return LBMC_SUCCESS;
}

/* run.precision: its keys into job->precision, the metric resolved, and the
 * budget at least run.replicas. */
static lbmc_err lbmc_jp_check_precision(const lbmc_jp *c)
{
  lbmc_job *job = c->job;
  const lbmc_job_setting *max = LBMC_JOB_SET(job, MAX_REPLICAS);
  if (!LBMC_JOB_SET(job, PRECISION)->given) return LBMC_SUCCESS;
  job->precision.enabled = 1;
  job->precision.relative = LBMC_JOB_SET(job, RELATIVE)->v[0].x;
  job->precision.max_replicas = max->v[0].l;
  if (LBMC_JOB_SET(job, MAX_TIME)->given)
    job->precision.max_time = LBMC_JOB_SET(job, MAX_TIME)->v[0].x;
  LBMC_CALL(lbmc_jv_metric(c));
  if (job->precision.max_replicas < lbmc_job_replicas(job))
    return lbmc_jp_fail(c, LBMC_ERR_ARG, max->line, max->key,
                        "%ld is not allowed; allowed: at least run.replicas = %ld",
                        job->precision.max_replicas, lbmc_job_replicas(job));
  return LBMC_SUCCESS;
}

lbmc_err lbmc_jp_job(lbmc_jp *c)
{
  LBMC_CALL(lbmc_jp_section(c, yaml_document_get_root_node(c->doc), "", ""));
  LBMC_CALL(lbmc_jp_check_betas(c));
  LBMC_CALL(lbmc_jp_check_all_pools(c, LBMC_JOB_SET(c->job, SERVICE), LBMC_IN_POOL_SERVICE,
                                    "service distribution"));
  LBMC_CALL(
      lbmc_jp_check_all_pools(c, LBMC_JOB_SET(c->job, BUFFER), LBMC_IN_POOL_BUFFER, "buffer"));
  LBMC_CALL(lbmc_jp_check_precision(c));
  return lbmc_jl_resolve(c);
}
