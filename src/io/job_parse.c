/* Job files (lbmc_job_parse_file, lbmc_job_parse_text): the text loaded as YAML, the
 * sections (top level, system, pools, run, run.precision) walked as the table of inputs
 * (inputs.h) lists their keys, each value read as its input's type says, the checks
 * that span sections, then the grid and every point checked (job.c). The format is
 * documented in docs/job-files.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "job_impl.h"
#include "lbmc/check.h"

#define LBMC_JOB_PARSE_COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))
#define LBMC_JOB_PARSE_MAX_KEYS 32

/* ---- keys and hints from the table of inputs ---- */

/* The last word of a key ("mu" of "system.pools[j].mu") and the length of its parent. */
static const char *lbmc_job_parse_word(const char *key, size_t *parent_len)
{
  const char *dot = strrchr(key, '.');
  *parent_len = dot ? (size_t)(dot - key) : 0;
  return dot ? dot + 1 : key;
}

/* The keys directly under `parent` in the table of inputs ("" for the top level,
 * "system", "system.pools[j]", "run", "run.precision"), in table order; at most cap.
 * Returns their number. */
static int lbmc_job_parse_keys(const char *parent, lbmc_job_key *keys, int cap)
{
  int n = 0;
  for (int i = 0; i < LBMC_INPUTS && n < cap; i++) {
    const lbmc_input *row = &lbmc_inputs[i];
    size_t len;
    const char *word;
    if (!row->key) continue;
    word = lbmc_job_parse_word(row->key, &len);
    if (len == strlen(parent) && strncmp(row->key, parent, len) == 0) {
      keys[n].key = word;
      keys[n++].row = row;
    }
  }
  return n;
}

/* Words of a service mapping, not inputs of their own. */
static const char *const lbmc_job_parse_service_words[][2] = {
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
static const char *lbmc_job_parse_hint(const char *key, char *buf, size_t len)
{
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < LBMC_INPUTS; i++) {
    const lbmc_input *row = &lbmc_inputs[i];
    size_t parent;
    if (!row->key || strcmp(lbmc_job_parse_word(row->key, &parent), key) != 0) continue;
    if (parent == 0 && row->type == LBMC_IT_SECTION) continue;
    used +=
        (size_t)snprintf(buf + used, used < len ? len - used : 0,
                         parent ? "%s%s" : "%sthe top-level key %s", used ? " or " : "", row->key);
  }
  if (used) return buf;
  for (int i = 0; i < LBMC_JOB_PARSE_COUNT(lbmc_job_parse_service_words); i++)
    if (strcmp(key, lbmc_job_parse_service_words[i][0]) == 0)
      return lbmc_job_parse_service_words[i][1];
  /* {mu: 1, service: hyperexponential:p=0.25,r1=0.5,r2=1.5}: YAML splits at the commas */
  if (strchr(key, '=') && !strchr(key, ':'))
    return "inside a quoted service text, as in service: \"hyperexponential:p=0.25,r1=0.5,r2=1.5\"";
  return NULL;
}

static lbmc_err lbmc_job_parse_key(lbmc_job_reader *c, const lbmc_input *row, yaml_node_t *v);

/* Walk the mapping of section `parent` (table form), named `path` in messages. */
static lbmc_err lbmc_job_parse_section(lbmc_job_reader *c, yaml_node_t *v, const char *path,
                                       const char *parent)
{
  lbmc_job_key keys[LBMC_JOB_PARSE_MAX_KEYS];
  int n = lbmc_job_parse_keys(parent, keys, LBMC_JOB_PARSE_MAX_KEYS);
  return lbmc_job_yaml_walk(c, v, path, keys, n, lbmc_job_parse_key, lbmc_job_parse_hint);
}

/* ---- system.pools ---- */

/* Setting s given together with `other`, which excludes it: "<file>:<line>: <s>: not
 * allowed together with <other> (line n); <advice>". */
static lbmc_err lbmc_job_parse_excluded(const lbmc_job_reader *c, const lbmc_job_setting *s,
                                        const lbmc_job_setting *other, const char *advice)
{
  return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, s->line, s->key,
                            "not allowed together with %s (line %d); %s", other->key, other->line,
                            advice);
}

/* A pool's speed: mu (constant) or mu_k (by queue length), exactly one of them. */
static lbmc_err lbmc_job_parse_check_speed(const lbmc_job_reader *c, int j)
{
  const lbmc_job *job = c->job;
  const lbmc_job_setting *mu = LBMC_JOB_POOL(job, POOL_MU, j);
  const lbmc_job_setting *mu_k = LBMC_JOB_POOL(job, POOL_MU_K, j);
  if (mu->given && mu_k->given)
    return lbmc_job_parse_excluded(c, mu_k, mu,
                                   "give either mu (a constant speed) or mu_k (speeds by the "
                                   "customers at the server)");
  if (!mu->given && !mu_k->given)
    return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, job->pool_line[j], NULL,
                              "system.pools[%d]: the key 'mu' is required (the speed of the pool's "
                              "servers, e.g. 2 or 1/3), or 'mu_k' (speeds by the customers at the "
                              "server, e.g. [1, 2, 3])",
                              j + 1);
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_job_parse_pools(lbmc_job_reader *c, yaml_node_t *v)
{
  lbmc_job *job = c->job;
  lbmc_job_setting *pools = LBMC_JOB_SET(job, POOLS);
  char where[512], path[48];
  long J;
  pools->given = 1;
  pools->line = lbmc_job_yaml_line(v);
  if (v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.top == v->data.sequence.items.start)
    return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, pools->line, "system.pools",
                              "%s is not allowed here; a list of at least one pool, each a mapping "
                              "{beta, mu, buffer}, is required",
                              lbmc_job_yaml_describe(v));
  J = v->data.sequence.items.top - v->data.sequence.items.start;
  LBMC_CALL(lbmc_check_int_range(
      lbmc_job_yaml_where(c, pools->line, "system.pools (number of pools)", where, sizeof where), J,
      1, LBMC_MAX_POOLS));
  job->J = (int)J;
  for (c->pool = 0; c->pool < job->J; c->pool++) {
    yaml_node_t *pool = yaml_document_get_node(c->doc, v->data.sequence.items.start[c->pool]);
    job->pool_line[c->pool] = c->key_line = lbmc_job_yaml_line(pool);
    snprintf(path, sizeof path, "system.pools[%d]", c->pool + 1);
    LBMC_CALL(lbmc_job_parse_section(c, pool, path, "system.pools[j]"));
    LBMC_CALL(lbmc_job_parse_check_speed(c, c->pool));
  }
  return LBMC_SUCCESS;
}

/* ---- one key ---- */

/* Read the value of input `row` (a key of the mapping being walked; of pool c->pool for
 * the inputs of a pool) into its setting. */
static lbmc_err lbmc_job_parse_key(lbmc_job_reader *c, const lbmc_input *row, yaml_node_t *v)
{
  lbmc_job_setting *s = lbmc_job_setting_of(c->job, (int)(row - lbmc_inputs), c->pool);
  switch (row->type) {
  case LBMC_IT_SECTION:
    s->given = 1;
    s->line = lbmc_job_yaml_line(v);
    return lbmc_job_parse_section(c, v, row->key, row->key);
  case LBMC_IT_POOLS: return lbmc_job_parse_pools(c, v);
  case LBMC_IT_BETAS:
  case LBMC_IT_SPEEDS: return lbmc_job_value_read_vectors(c, v, row, s);
  case LBMC_IT_SERVICE: return lbmc_job_value_read_service(c, v, s);
  case LBMC_IT_LINKS: return lbmc_job_links_read(c, v);
  default: return lbmc_job_value_read(c, v, row, s);
  }
}

/* ---- checks that span sections ---- */

/* Beta given exactly once for each pool (its own key, or system.beta), 'rest' for at
 * most one pool, system.beta vectors of length J. */
static lbmc_err lbmc_job_parse_check_betas(const lbmc_job_reader *c)
{
  const lbmc_job *job = c->job;
  int rest = -1;
  const lbmc_job_setting *beta = LBMC_JOB_SET(job, BETA);
  for (int j = 0; j < job->J; j++) {
    const lbmc_job_setting *b = LBMC_JOB_POOL(job, POOL_BETA, j);
    if (b->given && beta->given)
      return lbmc_job_parse_excluded(c, b, beta,
                                     "give the fractions either per pool or as system.beta");
    if (!b->given && !beta->given)
      return lbmc_job_yaml_fail(
          c, LBMC_ERR_ARG, job->pool_line[j], NULL,
          "system.pools[%d]: the key 'beta' is required (the pool's fraction of "
          "the servers, or 'rest'), unless system.beta gives the fractions",
          j + 1);
    for (long i = 0; b->given && i < b->count; i++)
      if (isnan(b->v[i].x) && rest >= 0 && rest != j)
        return lbmc_job_yaml_fail(
            c, LBMC_ERR_ARG, b->v[i].line, b->key,
            "'rest' is also given for system.pools[%d].beta; allowed: 'rest' for "
            "at most one pool",
            rest + 1);
      else if (isnan(b->v[i].x))
        rest = j;
  }
  for (long i = 0; beta->given && i < beta->count; i++)
    if (beta->v[i].vec_len != job->J)
      return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, beta->v[i].line, "system.beta",
                                "%s has %d entries; allowed: one per pool (system.pools has %d)",
                                beta->v[i].text, beta->v[i].vec_len, job->J);
  return LBMC_SUCCESS;
}

/* A setting given for all pools (system.service, system.buffer: `all`) or per pool
 * (`one` of each pool), not both. */
static lbmc_err lbmc_job_parse_check_all_pools(const lbmc_job_reader *c,
                                               const lbmc_job_setting *all, int pool_id,
                                               const char *what)
{
  const lbmc_job *job = c->job;
  char advice[160];
  snprintf(advice, sizeof advice, "give the %s either for all pools (%s) or per pool", what,
           all->key);
  for (int j = 0; j < job->J && all->given; j++) {
    const lbmc_job_setting *one = &job->pool_set[j][pool_id - LBMC_IN_POOL_FIRST];
    if (one->given) return lbmc_job_parse_excluded(c, one, all, advice);
  }
  return LBMC_SUCCESS;
}

/* Fill the job from the loaded document: every section, then the checks that span
 * sections (beta given once per pool, vector lengths, 'rest', precision). */
static lbmc_err lbmc_job_parse_sections(lbmc_job_reader *c)
{
  LBMC_CALL(lbmc_job_parse_section(c, yaml_document_get_root_node(c->doc), "", ""));
  LBMC_CALL(lbmc_job_parse_check_betas(c));
  LBMC_CALL(lbmc_job_parse_check_all_pools(c, LBMC_JOB_SET(c->job, SERVICE), LBMC_IN_POOL_SERVICE,
                                           "service distribution"));
  LBMC_CALL(lbmc_job_parse_check_all_pools(c, LBMC_JOB_SET(c->job, BUFFER), LBMC_IN_POOL_BUFFER,
                                           "buffer"));
  LBMC_CALL(lbmc_job_resolve_precision(c->job));
  return lbmc_job_links_resolve(c);
}

/* ---- the file ---- */

lbmc_err lbmc_job_parse_text(const char *text, const char *name, lbmc_job **out)
{
  lbmc_job *job = NULL;
  yaml_document_t doc;
  lbmc_err err;
  *out = NULL;
  if (!name) name = "job";
  if (!text) return LBMC_ERROR(LBMC_ERR_ARG, "%s: no job text", name);
  LBMC_CALL(lbmc_job_create(text, name, &job));
  err = lbmc_job_yaml_load(job->name, job->text, strlen(job->text), &doc);
  if (!err) {
    lbmc_job_reader c = {&doc, job->name, job, 0, 0};
    err = lbmc_job_parse_sections(&c);
    yaml_document_delete(&doc);
  }
  if (!err) err = lbmc_job_grid(job);
  if (!err) err = lbmc_job_check_repeats(job);
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
static lbmc_err lbmc_job_parse_read(const char *path, char **text, size_t *len)
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
  LBMC_CALL(lbmc_job_parse_read(path, &text, &len));
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
