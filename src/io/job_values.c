/* Job files: settings that may be grid axes, and the parsing and checking of each
 * value. Checks reuse include/lbmc/check.h and lbmc_run_options_check so that a value
 * is judged, and its message worded, as on the command line. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../policies/registry.h"
#include "job_impl.h"
#include "lbmc/check.h"
#include "lbmc/metrics.h"

typedef lbmc_err (*lbmc_jv_parse_fn)(const lbmc_jp *c, const char *where, int line,
                                     const char *text, lbmc_job_value *v);

/* ---- one value of each kind ---- */

static lbmc_err lbmc_jv_n(const lbmc_jp *c, const char *where, int line, const char *text,
                          lbmc_job_value *v)
{
  LBMC_CHECK(lbmc_parse_long(where, text, &v->l));
  return lbmc_check_int_range(where, v->l, 1, LBMC_MAX_SERVERS);
}

static lbmc_err lbmc_jv_routers(const lbmc_jp *c, const char *where, int line, const char *text,
                                lbmc_job_value *v)
{
  LBMC_CHECK(lbmc_parse_long(where, text, &v->l));
  return lbmc_check_int_range(where, v->l, 1, LBMC_MAX_ROUTERS);
}

static lbmc_err lbmc_jv_positive(const lbmc_jp *c, const char *where, int line, const char *text,
                                 lbmc_job_value *v)
{
  LBMC_CHECK(lbmc_parse_real(where, text, &v->x));
  return lbmc_check_positive(where, v->x);
}

static lbmc_err lbmc_jv_beta(const lbmc_jp *c, const char *where, int line, const char *text,
                             lbmc_job_value *v)
{
  if (strcmp(text, "rest") == 0) {
    v->x = NAN;
    return LBMC_SUCCESS;
  }
  LBMC_CHECK(lbmc_parse_real(where, text, &v->x));
  return lbmc_check_beta(where, v->x);
}

static lbmc_err lbmc_jv_buffer(const lbmc_jp *c, const char *where, int line, const char *text,
                               lbmc_job_value *v)
{
  return lbmc_parse_buffer(where, text, &v->l);
}

static lbmc_err lbmc_jv_choice(const char *where, const char *text, const char *a, const char *b)
{
  if (strcmp(text, a) == 0 || strcmp(text, b) == 0) return LBMC_SUCCESS;
  return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not allowed; allowed: %s, %s", where, text, a, b);
}

static lbmc_err lbmc_jv_stale(const lbmc_jp *c, const char *where, int line, const char *text,
                              lbmc_job_value *v)
{
  return lbmc_jv_choice(where, text, "withdraw", "keep");
}

static lbmc_err lbmc_jv_sampling(const lbmc_jp *c, const char *where, int line, const char *text,
                                 lbmc_job_value *v)
{
  return lbmc_jv_choice(where, text, "distinct", "with_replacement");
}

/* run.time and run.warmup are checked by lbmc_run_options_check, alone in otherwise
 * default options, so the message is the program's usual one with this line. */
lbmc_err lbmc_jv_run_check(const lbmc_jp *c, int line, const lbmc_run_options *o)
{
  char prefix[512];
  snprintf(prefix, sizeof prefix, "%s:%d: run.", c->name, line);
  return lbmc_run_options_check(o, prefix);
}

static lbmc_err lbmc_jv_time(const lbmc_jp *c, const char *where, int line, const char *text,
                             lbmc_job_value *v)
{
  lbmc_run_options o;
  lbmc_run_options_default(&o);
  LBMC_CHECK(lbmc_parse_real(where, text, &v->x));
  o.time = v->x;
  return lbmc_jv_run_check(c, line, &o);
}

static lbmc_err lbmc_jv_warmup(const lbmc_jp *c, const char *where, int line, const char *text,
                               lbmc_job_value *v)
{
  lbmc_run_options o;
  if (strcmp(text, "auto") == 0) {
    v->l = 1;
    return LBMC_SUCCESS;
  }
  lbmc_run_options_default(&o);
  LBMC_CHECK(lbmc_parse_real(where, text, &v->x));
  o.warmup = v->x;
  return lbmc_jv_run_check(c, line, &o);
}

/* ---- policies: parsed by the policy registry, with a `where` that names the file and
 * the line ---- */

static lbmc_err lbmc_jv_policy(const lbmc_jp *c, const char *where, int line, const char *text,
                               lbmc_job_value *v)
{
  lbmc_policy_spec spec;
  (void)c;
  (void)line;
  LBMC_CHECK(lbmc_policy_parse(where, text, &spec));
  v->l = spec.alias && spec.alias->stale >= 0; /* the name fixes stale (jiq: keep) */
  return LBMC_SUCCESS;
}

/* ---- the kinds ---- */

typedef struct {
  lbmc_jv_parse_fn parse;
  const char *what; /* what one value must be */
} lbmc_jv_type;

static const lbmc_jv_type lbmc_jv_types[] = {
    [LBMC_JV_N] = {lbmc_jv_n, "an integer from 1 to 2147483647 (servers)"},
    [LBMC_JV_LAMBDA] = {lbmc_jv_positive, "a positive finite number (arrival rate per server)"},
    [LBMC_JV_ROUTERS] = {lbmc_jv_routers, "an integer from 1 to 1048576 (routers)"},
    [LBMC_JV_BETA] = {lbmc_jv_beta, "a pool fraction in (0, 1] or 'rest'"},
    [LBMC_JV_MU] = {lbmc_jv_positive, "a positive finite number such as 2 or 1/3 (speed)"},
    [LBMC_JV_BUFFER] = {lbmc_jv_buffer, "an integer >= 1 or 'inf' (buffer)"},
    [LBMC_JV_POLICY] = {lbmc_jv_policy, "a policy such as pull, jsq(2) or random"},
    [LBMC_JV_STALE] = {lbmc_jv_stale, "withdraw or keep"},
    [LBMC_JV_SAMPLING] = {lbmc_jv_sampling, "distinct or with_replacement"},
    [LBMC_JV_TIME] = {lbmc_jv_time, "a positive finite number (measured time)"},
    [LBMC_JV_WARMUP] = {lbmc_jv_warmup, "a number >= 0 or 'auto' (warm-up time)"},
};

/* ---- settings ---- */

void lbmc_jv_init(lbmc_job_setting *s, const char *key, const char *name)
{
  memset(s, 0, sizeof *s);
  snprintf(s->key, sizeof s->key, "%s", key);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->axis = -1;
}

void lbmc_jv_free(lbmc_job_setting *s)
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

/* Allocate count zeroed values (freed by lbmc_jv_free even if filled only in part). */
static lbmc_err lbmc_jv_alloc(const lbmc_jp *c, lbmc_job_setting *s, long count)
{
  s->v = calloc((size_t)count, sizeof *s->v);
  if (!s->v) return lbmc_jp_fail(c, LBMC_ERR_MEMORY, s->line, s->key, "out of memory");
  s->count = count;
  return LBMC_SUCCESS;
}

static void lbmc_jv_axis(lbmc_jp *c, lbmc_job_setting *s)
{
  s->axis = c->job->naxes;
  c->job->axis[c->job->naxes++] = s;
}

static lbmc_err lbmc_jv_text(const lbmc_jp *c, const lbmc_job_setting *s, const char *text,
                             lbmc_job_value *v)
{
  v->text = strdup(text);
  if (!v->text) return lbmc_jp_fail(c, LBMC_ERR_MEMORY, v->line, s->key, "out of memory");
  return LBMC_SUCCESS;
}

/* One scalar value; `what` says what is required if the node is not a scalar. */
static lbmc_err lbmc_jv_value(const lbmc_jp *c, const yaml_node_t *node, const lbmc_jv_type *t,
                              const char *what, const lbmc_job_setting *s, lbmc_job_value *v)
{
  const char *text;
  char where[512];
  LBMC_CHECK(lbmc_jp_scalar(c, node, s->key, what, &text));
  v->line = lbmc_jp_line(node);
  LBMC_CHECK(lbmc_jv_text(c, s, text, v));
  return t->parse(c, lbmc_jp_where(c, v->line, s->key, where, sizeof where), v->line, text, v);
}

static lbmc_err lbmc_jv_empty(const lbmc_jp *c, const lbmc_job_setting *s)
{
  return lbmc_jp_fail(c, LBMC_ERR_ARG, s->line, NULL,
                      "the grid is empty: %s is an empty list; allowed: one value, or a list of "
                      "at least one value",
                      s->key);
}

lbmc_err lbmc_jv_read(lbmc_jp *c, yaml_node_t *node, lbmc_jv_kind kind, lbmc_job_setting *s)
{
  const lbmc_jv_type *t = &lbmc_jv_types[kind];
  char what[256];
  s->given = 1;
  s->line = lbmc_jp_line(node);
  if (node->type != YAML_SEQUENCE_NODE) {
    snprintf(what, sizeof what, "%s, or a list of them,", t->what);
    LBMC_CHECK(lbmc_jv_alloc(c, s, 1));
    return lbmc_jv_value(c, node, t, what, s, &s->v[0]);
  }
  if (node->data.sequence.items.top == node->data.sequence.items.start) return lbmc_jv_empty(c, s);
  LBMC_CHECK(lbmc_jv_alloc(c, s, node->data.sequence.items.top - node->data.sequence.items.start));
  for (long i = 0; i < s->count; i++) {
    yaml_node_t *item = yaml_document_get_node(c->doc, node->data.sequence.items.start[i]);
    LBMC_CHECK(lbmc_jv_value(c, item, t, t->what, s, &s->v[i]));
  }
  lbmc_jv_axis(c, s);
  return LBMC_SUCCESS;
}

/* ---- vectors: system.beta, system.pools[j].mu_k ---- */

#define LBMC_JV_VECTOR_WHAT "a vector of pool fractions [beta_1, ..., beta_J]"
#define LBMC_JV_SPEEDS_WHAT                                                                        \
  "a list of speeds [mu(1), ..., mu(L)] by customers at the server (1 to 64 numbers > 0)"

static const char *lbmc_jv_vector_what(lbmc_jv_kind kind)
{
  return kind == LBMC_JV_BETA ? LBMC_JV_VECTOR_WHAT : LBMC_JV_SPEEDS_WHAT;
}

/* The vector's text "[a, b, c]" from its entries' texts. */
static lbmc_err lbmc_jv_vector_text(const lbmc_jp *c, const lbmc_job_setting *s,
                                    const yaml_node_t *vnode, lbmc_job_value *v)
{
  size_t len = 3, used = 0;
  for (yaml_node_item_t *it = vnode->data.sequence.items.start; it < vnode->data.sequence.items.top;
       it++)
    len += strlen((const char *)yaml_document_get_node(c->doc, *it)->data.scalar.value) + 2;
  v->text = malloc(len);
  if (!v->text) return lbmc_jp_fail(c, LBMC_ERR_MEMORY, v->line, s->key, "out of memory");
  used += (size_t)snprintf(v->text, len, "[");
  for (int j = 0; j < v->vec_len; j++) {
    const yaml_node_t *item = yaml_document_get_node(c->doc, vnode->data.sequence.items.start[j]);
    const char *t = (const char *)item->data.scalar.value;
    used += (size_t)snprintf(v->text + used, len - used, "%s%s", j ? ", " : "", t);
  }
  snprintf(v->text + used, len - used, "]");
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_jv_vector(lbmc_jp *c, const yaml_node_t *vnode, lbmc_jv_kind kind,
                               lbmc_job_setting *s, lbmc_job_value *v)
{
  const lbmc_jv_type *t = &lbmc_jv_types[kind];
  int rest = -1;
  v->line = lbmc_jp_line(vnode);
  if (vnode->type != YAML_SEQUENCE_NODE ||
      vnode->data.sequence.items.top == vnode->data.sequence.items.start)
    return lbmc_jp_fail(c, LBMC_ERR_ARG, v->line, s->key, "%s is not allowed here; %s is required",
                        lbmc_jp_describe(vnode), lbmc_jv_vector_what(kind));
  v->vec_len = (int)(vnode->data.sequence.items.top - vnode->data.sequence.items.start);
  if (kind == LBMC_JV_MU && v->vec_len > LBMC_MAX_RATES)
    return lbmc_jp_fail(c, LBMC_ERR_ARG, v->line, s->key,
                        "a list of %d speeds is not allowed; allowed: 1 to %d speeds (the last "
                        "one holds for every longer queue)",
                        v->vec_len, LBMC_MAX_RATES);
  v->vec = calloc((size_t)v->vec_len, sizeof *v->vec);
  if (!v->vec) return lbmc_jp_fail(c, LBMC_ERR_MEMORY, v->line, s->key, "out of memory");
  for (int j = 0; j < v->vec_len; j++) {
    lbmc_job_value entry = {0};
    yaml_node_t *item = yaml_document_get_node(c->doc, vnode->data.sequence.items.start[j]);
    lbmc_err err = lbmc_jv_value(c, item, t, t->what, s, &entry);
    free(entry.text);
    if (err) return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
    v->vec[j] = entry.x;
    if (isnan(entry.x) && rest >= 0)
      return lbmc_jp_fail(c, LBMC_ERR_ARG, v->line, s->key,
                          "'rest' is given for pools %d and %d; allowed: 'rest' for at most one "
                          "pool",
                          rest + 1, j + 1);
    if (isnan(entry.x)) rest = j;
  }
  return lbmc_jv_vector_text(c, s, vnode, v);
}

lbmc_err lbmc_jv_read_vectors(lbmc_jp *c, yaml_node_t *node, lbmc_jv_kind kind, lbmc_job_setting *s)
{
  const yaml_node_item_t *items;
  long count;
  s->given = 1;
  s->line = lbmc_jp_line(node);
  if (node->type != YAML_SEQUENCE_NODE)
    return lbmc_jp_fail(c, LBMC_ERR_ARG, s->line, s->key,
                        "%s is not allowed here; %s, or a list of such %s, is required",
                        lbmc_jp_describe(node), lbmc_jv_vector_what(kind),
                        kind == LBMC_JV_BETA ? "vectors" : "lists");
  items = node->data.sequence.items.start;
  count = node->data.sequence.items.top - items;
  if (count == 0 && kind == LBMC_JV_MU) /* an empty speed list, not an empty axis */
    return lbmc_jp_fail(c, LBMC_ERR_ARG, s->line, s->key,
                        "an empty list is not allowed here; %s is required", LBMC_JV_SPEEDS_WHAT);
  if (count == 0) return lbmc_jv_empty(c, s);
  if (yaml_document_get_node(c->doc, items[0])->type != YAML_SEQUENCE_NODE) {
    LBMC_CHECK(lbmc_jv_alloc(c, s, 1)); /* one vector: not an axis */
    return lbmc_jv_vector(c, node, kind, s, &s->v[0]);
  }
  LBMC_CHECK(lbmc_jv_alloc(c, s, count));
  for (long i = 0; i < count; i++)
    LBMC_CHECK(lbmc_jv_vector(c, yaml_document_get_node(c->doc, items[i]), kind, s, &s->v[i]));
  lbmc_jv_axis(c, s);
  return LBMC_SUCCESS;
}

/* ---- service distributions: system.service, system.pools[j].service ---- */

#define LBMC_JV_SERVICE_WHAT                                                                       \
  "a service distribution, as text such as lognormal:scv=4 or as a mapping such as "               \
  "{dist: lognormal, scv: 4}"
#define LBMC_JV_SERVICE_MAX_PARAMS 8

/* The mapping form {dist: NAME, KEY: VALUE, ...}: dist required, every other key a
 * parameter (checked by lbmc_service_make), each key once; its text is
 * "NAME:KEY=VALUE,..." with the values as written. */
static lbmc_err lbmc_jv_service_map(const lbmc_jp *c, const yaml_node_t *node,
                                    const lbmc_job_setting *s, const char *where, lbmc_job_value *v)
{
  const char *dist = NULL, *names[LBMC_JV_SERVICE_MAX_PARAMS], *texts[LBMC_JV_SERVICE_MAX_PARAMS];
  double values[LBMC_JV_SERVICE_MAX_PARAMS];
  int n = 0, dist_line = 0, lines[LBMC_JV_SERVICE_MAX_PARAMS];
  char dkey[96], key[96], pwhere[640];
  size_t len, used;
  snprintf(dkey, sizeof dkey, "%s.dist", s->key);
  for (yaml_node_pair_t *pr = node->data.mapping.pairs.start; pr < node->data.mapping.pairs.top;
       pr++) {
    const yaml_node_t *knode = yaml_document_get_node(c->doc, pr->key);
    const yaml_node_t *vnode = yaml_document_get_node(c->doc, pr->value);
    const char *word, *kind = lbmc_jp_not_scalar(knode), *text;
    const int kline = lbmc_jp_line(knode);
    if (kind)
      return lbmc_jp_fail(c, LBMC_ERR_ARG, kline, s->key,
                          "%s is not allowed as a key; the keys are dist and the distribution's "
                          "parameters, e.g. {dist: lognormal, scv: 4}",
                          kind);
    word = (const char *)knode->data.scalar.value;
    if (strcmp(word, "dist") == 0) {
      if (dist)
        return lbmc_jp_fail(c, LBMC_ERR_ARG, kline, s->key,
                            "'dist' is given twice (first at line %d); give each key once",
                            dist_line);
      LBMC_CHECK(lbmc_jp_scalar(c, vnode, dkey,
                                "a distribution name (exponential, deterministic, erlang, "
                                "hyperexponential, lognormal, weibull or lomax)",
                                &dist));
      dist_line = kline;
      continue;
    }
    for (int i = 0; i < n; i++)
      if (strcmp(names[i], word) == 0)
        return lbmc_jp_fail(c, LBMC_ERR_ARG, kline, s->key,
                            "'%s' is given twice (first at line %d); give each key once", word,
                            lines[i]);
    if (n == LBMC_JV_SERVICE_MAX_PARAMS)
      return lbmc_jp_fail(c, LBMC_ERR_ARG, kline, s->key,
                          "more than %d parameters are not allowed; a distribution has at most 3",
                          LBMC_JV_SERVICE_MAX_PARAMS);
    snprintf(key, sizeof key, "%s.%s", s->key, word);
    LBMC_CHECK(lbmc_jp_scalar(c, vnode, key, "a number", &text));
    LBMC_CHECK(lbmc_parse_real(lbmc_jp_where(c, lbmc_jp_line(vnode), key, pwhere, sizeof pwhere),
                               text, &values[n]));
    names[n] = word;
    texts[n] = text;
    lines[n++] = kline;
  }
  if (!dist)
    return lbmc_jp_fail(c, LBMC_ERR_ARG, v->line, s->key,
                        "the key 'dist' is required in a mapping (the distribution: exponential, "
                        "deterministic, erlang, hyperexponential, lognormal, weibull or lomax), "
                        "e.g. {dist: lognormal, scv: 4}");
  len = strlen(dist) + 1;
  for (int i = 0; i < n; i++) len += strlen(names[i]) + strlen(texts[i]) + 2;
  v->text = malloc(len);
  if (!v->text) return lbmc_jp_fail(c, LBMC_ERR_MEMORY, v->line, s->key, "out of memory");
  used = (size_t)snprintf(v->text, len, "%s", dist);
  for (int i = 0; i < n; i++)
    used +=
        (size_t)snprintf(v->text + used, len - used, "%s%s=%s", i ? "," : ":", names[i], texts[i]);
  return lbmc_service_make(where, dist, n, names, values, v->svc);
}

/* One distribution: a scalar in the text form, or a mapping. */
static lbmc_err lbmc_jv_service(const lbmc_jp *c, const yaml_node_t *node, const char *what,
                                const lbmc_job_setting *s, lbmc_job_value *v)
{
  char where[512];
  const char *text;
  size_t len;
  v->line = lbmc_jp_line(node);
  v->svc = calloc(1, sizeof *v->svc);
  if (!v->svc) return lbmc_jp_fail(c, LBMC_ERR_MEMORY, v->line, s->key, "out of memory");
  lbmc_jp_where(c, v->line, s->key, where, sizeof where);
  if (node->type == YAML_MAPPING_NODE) return lbmc_jv_service_map(c, node, s, where, v);
  LBMC_CHECK(lbmc_jp_scalar(c, node, s->key, what, &text));
  LBMC_CHECK(lbmc_jv_text(c, s, text, v));
  LBMC_CHECK(lbmc_service_parse(where, text, v->svc));
  /* kept as written, without surrounding blanks */
  len = strspn(v->text, " \t");
  memmove(v->text, v->text + len, strlen(v->text + len) + 1);
  for (len = strlen(v->text); len > 0 && (v->text[len - 1] == ' ' || v->text[len - 1] == '\t');)
    v->text[--len] = '\0';
  return LBMC_SUCCESS;
}

lbmc_err lbmc_jv_read_service(lbmc_jp *c, yaml_node_t *node, lbmc_job_setting *s)
{
  s->given = 1;
  s->line = lbmc_jp_line(node);
  if (node->type != YAML_SEQUENCE_NODE) {
    LBMC_CHECK(lbmc_jv_alloc(c, s, 1));
    return lbmc_jv_service(c, node, LBMC_JV_SERVICE_WHAT ", or a list of them,", s, &s->v[0]);
  }
  if (node->data.sequence.items.top == node->data.sequence.items.start) return lbmc_jv_empty(c, s);
  /* [hyperexponential:p=0.25,r1=0.5,r2=1.5] is three items to YAML: say so before the
   * first of them is judged incomplete */
  for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top;
       it++) {
    const yaml_node_t *item = yaml_document_get_node(c->doc, *it);
    const char *t = (const char *)item->data.scalar.value;
    if (item->type == YAML_SCALAR_NODE && item->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        strchr(t, '=') && !strchr(t, ':'))
      return lbmc_jp_fail(c, LBMC_ERR_ARG, lbmc_jp_line(item), s->key,
                          "'%s' is not allowed as a list item; in [...] commas separate the items, "
                          "so quote a text with several parameters (\"hyperexponential:p=0.25,"
                          "r1=0.5,r2=1.5\") or write a mapping {dist: hyperexponential, p: 0.25, "
                          "r1: 0.5, r2: 1.5}",
                          t);
  }
  LBMC_CHECK(lbmc_jv_alloc(c, s, node->data.sequence.items.top - node->data.sequence.items.start));
  for (long i = 0; i < s->count; i++) {
    yaml_node_t *item = yaml_document_get_node(c->doc, node->data.sequence.items.start[i]);
    LBMC_CHECK(lbmc_jv_service(c, item, LBMC_JV_SERVICE_WHAT, s, &s->v[i]));
  }
  lbmc_jv_axis(c, s);
  return LBMC_SUCCESS;
}

/* ---- run.precision.metric ---- */

/* The metric names (names[LBMC_METRICS]) and the list "p_wait, ..., utilization[j]". */
static void lbmc_jv_metric_names(const char **names, char *allowed, size_t len)
{
  allowed[0] = '\0';
  for (int i = 0; i < LBMC_METRICS; i++) {
    const lbmc_metric_info *m = lbmc_metric_get(i);
    size_t used = strlen(allowed);
    names[i] = m->name;
    snprintf(allowed + used, len - used, "%s%s%s", i ? ", " : "", m->name,
             m->shape == LBMC_SHAPE_POOL     ? "[j]"
             : m->shape == LBMC_SHAPE_POOL_K ? "[j][k]"
                                             : "");
  }
}

lbmc_err lbmc_jv_metric(const lbmc_jp *c)
{
  lbmc_job *job = c->job;
  const char *text = job->precision_metric, *p = text, *names[LBMC_METRICS], *close;
  const char *const key = "run.precision.metric";
  const int line = job->precision_line;
  char name[64], allowed[512];
  long idx[2] = {0, 0};
  int nidx = 0, i;
  size_t len = strcspn(text, "[");
  snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), text);
  for (p = text + len; *p == '[' && nidx < 2; nidx++) {
    char *end;
    idx[nidx] = strtol(p + 1, &end, 10);
    if (end == p + 1 || *end != ']') break;
    p = end + 1;
  }
  lbmc_jv_metric_names(names, allowed, sizeof allowed);
  i = lbmc_metric_find(name);
  if (i < 0 || *p) {
    close = i < 0 ? lbmc_jp_suggest(name, names, LBMC_METRICS) : NULL;
    return lbmc_jp_fail(c, LBMC_ERR_ARG, line, key, "'%s' is not a metric; allowed: %s%s%s%s", text,
                        allowed, close ? " (did you mean '" : "", close ? close : "",
                        close ? "'?)" : "");
  }
  job->precision.metric = i;
  switch (lbmc_metric_get(i)->shape) {
  case LBMC_SHAPE_SCALAR:
    if (nidx == 0) return LBMC_SUCCESS;
    return lbmc_jp_fail(c, LBMC_ERR_ARG, line, key,
                        "'%s' is not allowed; %s is one number per point: write '%s'", text, name,
                        name);
  case LBMC_SHAPE_POOL:
    if (nidx == 1 && idx[0] >= 1 && idx[0] <= job->J) {
      job->precision.index = idx[0] - 1;
      return LBMC_SUCCESS;
    }
    return lbmc_jp_fail(c, LBMC_ERR_ARG, line, key,
                        "'%s' is not allowed; %s has one value per pool: write '%s[j]' with "
                        "1 <= j <= %d (a scalar is required)",
                        text, name, name, job->J);
  default:
    if (nidx == 2 && idx[0] >= 1 && idx[0] <= job->J && idx[1] >= 1 && idx[1] <= job->o.tail_k) {
      job->precision.index = (idx[0] - 1) * job->o.tail_k + (idx[1] - 1);
      return LBMC_SUCCESS;
    }
    return lbmc_jp_fail(c, LBMC_ERR_ARG, line, key,
                        "'%s' is not allowed; %s has one value per pool and level: write "
                        "'%s[j][k]' with 1 <= j <= %d and 1 <= k <= %ld (run.tail_k)",
                        text, name, name, job->J, job->o.tail_k);
  }
}
