/* Job files: settings that may be grid axes, vectors (system.beta, mu_k) and service
 * distributions. One value is converted and checked by the
 * table of inputs (inputs.c: include/lbmc/check.h and lbmc_run_options_check) so that
 * a value is judged, and its message worded, as on the command line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_impl.h"
#include "lbmc/check.h"

/* Run options in which only one setting differs from the defaults, judged by
 * lbmc_run_options_check, so the message is the program's usual one with this line. */
static lbmc_err lbmc_job_value_run_check(const lbmc_job_reader *c, int line,
                                         const lbmc_run_options *o)
{
  char prefix[512];
  snprintf(prefix, sizeof prefix, "%s:%d: run.", c->name, line);
  return lbmc_run_options_check(o, prefix);
}

/* One value of input row from its text: converted, checked, and for a run option
 * judged with the other options at their defaults. */
static lbmc_err lbmc_job_value_judge(const lbmc_job_reader *c, const lbmc_input *row,
                                     const char *where, int line, const char *text,
                                     lbmc_input_value *v)
{
  lbmc_run_options o;
  LBMC_CALL(lbmc_input_parse(row, where, text, v));
  LBMC_CALL(lbmc_input_check(row, where, v));
  if (!lbmc_input_is_run_option(row)) return LBMC_SUCCESS;
  lbmc_run_options_default(&o);
  lbmc_input_apply(row, v, &o);
  return lbmc_job_value_run_check(c, line, &o);
}

/* What one value of row must be. */
static const char *lbmc_job_value_what(const lbmc_input *row, char *buf, size_t len)
{
  if (row->what) return row->what;
  snprintf(buf, len, "an integer from %ld to %ld", row->lo, row->hi);
  return buf;
}

/* ---- settings ---- */

/* Allocate count zeroed values (freed with the job even if filled only in part). */
static lbmc_err lbmc_job_value_alloc(const lbmc_job_reader *c, lbmc_job_setting *s, long count)
{
  s->v = calloc((size_t)count, sizeof *s->v);
  if (!s->v) return lbmc_job_yaml_fail(c, LBMC_ERR_MEMORY, s->line, s->key, "out of memory");
  s->count = count;
  return LBMC_SUCCESS;
}

/* Register s as the next grid axis (a setting is read once, so LBMC_MAX_AXES, which
 * counts every setting that may be an axis, is never reached; checked all the same). */
static lbmc_err lbmc_job_value_axis(lbmc_job_reader *c, lbmc_job_setting *s)
{
  if (c->job->naxes == LBMC_MAX_AXES)
    return lbmc_job_yaml_fail(c, LBMC_ERR_INTERNAL, s->line, s->key,
                              "one grid axis too many: the table of inputs allows at most %d "
                              "(LBMC_MAX_AXES)",
                              LBMC_MAX_AXES);
  s->axis = c->job->naxes;
  c->job->axis[c->job->naxes++] = s;
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_job_value_text(const lbmc_job_reader *c, const lbmc_job_setting *s,
                                    const char *text, lbmc_input_value *v)
{
  v->text = strdup(text);
  if (!v->text) return lbmc_job_yaml_fail(c, LBMC_ERR_MEMORY, v->line, s->key, "out of memory");
  return LBMC_SUCCESS;
}

/* One scalar value; `what` says what is required if the node is not a scalar. */
static lbmc_err lbmc_job_value_one(const lbmc_job_reader *c, const yaml_node_t *node,
                                   const lbmc_input *row, const char *what,
                                   const lbmc_job_setting *s, lbmc_input_value *v)
{
  const char *text;
  char where[512];
  LBMC_CALL(lbmc_job_yaml_scalar(c, node, s->key, what, &text));
  v->line = lbmc_job_yaml_line(node);
  LBMC_CALL(lbmc_job_value_text(c, s, text, v));
  return lbmc_job_value_judge(c, row, lbmc_job_yaml_where(c, v->line, s->key, where, sizeof where),
                              v->line, text, v);
}

static lbmc_err lbmc_job_value_empty(const lbmc_job_reader *c, const lbmc_job_setting *s)
{
  return lbmc_job_yaml_fail(
      c, LBMC_ERR_ARG, s->line, NULL,
      "the grid is empty: %s is an empty list; allowed: one value, or a list of "
      "at least one value",
      s->key);
}

lbmc_err lbmc_job_value_read(lbmc_job_reader *c, yaml_node_t *node, const lbmc_input *row,
                             lbmc_job_setting *s)
{
  char what[256], one[96];
  const char *t = lbmc_job_value_what(row, one, sizeof one);
  s->given = 1;
  s->line = lbmc_job_yaml_line(node);
  if (!row->axis || node->type != YAML_SEQUENCE_NODE) {
    snprintf(what, sizeof what, row->axis ? "%s, or a list of them," : "%s", t);
    LBMC_CALL(lbmc_job_value_alloc(c, s, 1));
    return lbmc_job_value_one(c, node, row, what, s, &s->v[0]);
  }
  if (node->data.sequence.items.top == node->data.sequence.items.start)
    return lbmc_job_value_empty(c, s);
  LBMC_CALL(
      lbmc_job_value_alloc(c, s, node->data.sequence.items.top - node->data.sequence.items.start));
  for (long i = 0; i < s->count; i++) {
    yaml_node_t *item = yaml_document_get_node(c->doc, node->data.sequence.items.start[i]);
    LBMC_CALL(lbmc_job_value_one(c, item, row, t, s, &s->v[i]));
  }
  return lbmc_job_value_axis(c, s);
}

/* ---- vectors: system.beta, system.pools[j].mu_k ---- */

/* The input of one entry of a vector: a pool fraction, or a speed. */
static const lbmc_input *lbmc_job_value_entry(const lbmc_input *row)
{
  return &lbmc_inputs[row->type == LBMC_IT_BETAS ? LBMC_IN_POOL_BETA : LBMC_IN_POOL_MU];
}

/* The vector's text "[a, b, c]" from its entries' texts. */
static lbmc_err lbmc_job_value_vector_text(const lbmc_job_reader *c, const lbmc_job_setting *s,
                                           const yaml_node_t *vnode, lbmc_input_value *v)
{
  size_t len = 3, used = 0;
  for (yaml_node_item_t *it = vnode->data.sequence.items.start; it < vnode->data.sequence.items.top;
       it++)
    len += strlen((const char *)yaml_document_get_node(c->doc, *it)->data.scalar.value) + 2;
  v->text = malloc(len);
  if (!v->text) return lbmc_job_yaml_fail(c, LBMC_ERR_MEMORY, v->line, s->key, "out of memory");
  used += (size_t)snprintf(v->text, len, "[");
  for (int j = 0; j < v->vec_len; j++) {
    const yaml_node_t *item = yaml_document_get_node(c->doc, vnode->data.sequence.items.start[j]);
    const char *t = (const char *)item->data.scalar.value;
    used += (size_t)snprintf(v->text + used, len - used, "%s%s", j ? ", " : "", t);
  }
  snprintf(v->text + used, len - used, "]");
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_job_value_vector(lbmc_job_reader *c, const yaml_node_t *vnode,
                                      const lbmc_input *row, lbmc_job_setting *s,
                                      lbmc_input_value *v)
{
  const lbmc_input *entry = lbmc_job_value_entry(row);
  int rest = -1;
  v->line = lbmc_job_yaml_line(vnode);
  if (vnode->type != YAML_SEQUENCE_NODE ||
      vnode->data.sequence.items.top == vnode->data.sequence.items.start)
    return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, v->line, s->key,
                              "%s is not allowed here; %s is required",
                              lbmc_job_yaml_describe(vnode), row->what);
  v->vec_len = (int)(vnode->data.sequence.items.top - vnode->data.sequence.items.start);
  if (row->type == LBMC_IT_SPEEDS && v->vec_len > LBMC_MAX_RATES)
    return lbmc_job_yaml_fail(
        c, LBMC_ERR_ARG, v->line, s->key,
        "a list of %d speeds is not allowed; allowed: 1 to %d speeds (the last "
        "one holds for every longer queue)",
        v->vec_len, LBMC_MAX_RATES);
  v->vec = calloc((size_t)v->vec_len, sizeof *v->vec);
  if (!v->vec) return lbmc_job_yaml_fail(c, LBMC_ERR_MEMORY, v->line, s->key, "out of memory");
  for (int j = 0; j < v->vec_len; j++) {
    lbmc_input_value value = {0};
    yaml_node_t *item = yaml_document_get_node(c->doc, vnode->data.sequence.items.start[j]);
    lbmc_err err = lbmc_job_value_one(c, item, entry, entry->what, s, &value);
    free(value.text);
    if (err) return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
    v->vec[j] = value.x;
    if (isnan(value.x) && rest >= 0)
      return lbmc_job_yaml_fail(
          c, LBMC_ERR_ARG, v->line, s->key,
          "'rest' is given for pools %d and %d; allowed: 'rest' for at most one "
          "pool",
          rest + 1, j + 1);
    if (isnan(value.x)) rest = j;
  }
  return lbmc_job_value_vector_text(c, s, vnode, v);
}

lbmc_err lbmc_job_value_read_vectors(lbmc_job_reader *c, yaml_node_t *node, const lbmc_input *row,
                                     lbmc_job_setting *s)
{
  const yaml_node_item_t *items;
  long count;
  s->given = 1;
  s->line = lbmc_job_yaml_line(node);
  if (node->type != YAML_SEQUENCE_NODE)
    return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, s->line, s->key,
                              "%s is not allowed here; %s, or a list of such %s, is required",
                              lbmc_job_yaml_describe(node), row->what,
                              row->type == LBMC_IT_BETAS ? "vectors" : "lists");
  items = node->data.sequence.items.start;
  count = node->data.sequence.items.top - items;
  if (count == 0 && row->type == LBMC_IT_SPEEDS) /* an empty speed list, not an empty axis */
    return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, s->line, s->key,
                              "an empty list is not allowed here; %s is required", row->what);
  if (count == 0) return lbmc_job_value_empty(c, s);
  if (yaml_document_get_node(c->doc, items[0])->type != YAML_SEQUENCE_NODE) {
    LBMC_CALL(lbmc_job_value_alloc(c, s, 1)); /* one vector: not an axis */
    return lbmc_job_value_vector(c, node, row, s, &s->v[0]);
  }
  LBMC_CALL(lbmc_job_value_alloc(c, s, count));
  for (long i = 0; i < count; i++)
    LBMC_CALL(lbmc_job_value_vector(c, yaml_document_get_node(c->doc, items[i]), row, s, &s->v[i]));
  return lbmc_job_value_axis(c, s);
}

/* ---- service distributions: system.service, system.pools[j].service ---- */

#define LBMC_JOB_SERVICE_WHAT       LBMC_IN_SERVICE_WHAT
#define LBMC_JOB_SERVICE_MAX_PARAMS 8
#define LBMC_JOB_SERVICE_DISTS                                                                     \
  "exponential, deterministic, erlang, hyperexponential, lognormal, weibull, lomax, ph or coxian"

/* The text of a list parameter of a service mapping (a list of numbers, or of lists of
 * numbers for ph's T): "[a, b]" or "[[a, b], [c, d]]" with the numbers as written,
 * which lbmc_service_parse reads; malloc'ed into *out. depth 0: the list itself. */
static lbmc_err lbmc_job_value_service_list(const lbmc_job_reader *c, const yaml_node_t *node,
                                            const char *key, int depth, char **out)
{
  const yaml_node_item_t *first = node->data.sequence.items.start,
                         *top = node->data.sequence.items.top;
  size_t len = 3, used = 0;
  char **parts = calloc((size_t)(top - first) + 1, sizeof *parts);
  lbmc_err err = LBMC_SUCCESS;
  *out = NULL;
  if (!parts)
    return lbmc_job_yaml_fail(c, LBMC_ERR_MEMORY, lbmc_job_yaml_line(node), key, "out of memory");
  for (const yaml_node_item_t *it = first; !err && it < top; it++) {
    const yaml_node_t *item = yaml_document_get_node(c->doc, *it);
    const char *text;
    if (item->type == YAML_SEQUENCE_NODE && depth == 0) {
      err = lbmc_job_value_service_list(c, item, key, 1, &parts[it - first]);
    } else if (!(err = lbmc_job_yaml_scalar(
                     c, item, key, depth ? "a number" : "a number or a list of numbers", &text)) &&
               !(parts[it - first] = strdup(text))) {
      err = lbmc_job_yaml_fail(c, LBMC_ERR_MEMORY, lbmc_job_yaml_line(item), key, "out of memory");
    }
    if (!err) len += strlen(parts[it - first]) + 2;
  }
  if (!err && !(*out = malloc(len)))
    err = lbmc_job_yaml_fail(c, LBMC_ERR_MEMORY, lbmc_job_yaml_line(node), key, "out of memory");
  if (!err) {
    used = (size_t)snprintf(*out, len, "[");
    for (const yaml_node_item_t *it = first; it < top; it++)
      used += (size_t)snprintf(*out + used, len - used, "%s%s", it > first ? ", " : "",
                               parts[it - first]);
    snprintf(*out + used, len - used, "]");
  }
  for (const yaml_node_item_t *it = first; it < top; it++) free(parts[it - first]);
  free(parts);
  return err;
}

/* The mapping form {dist: NAME, KEY: VALUE, ...}: dist required, every other key a
 * parameter, each key once; its text is "NAME:KEY=VALUE,..." with the values as
 * written (lists as "[a, b]"). Numbers are checked by lbmc_service_make; a mapping
 * with a list (ph, coxian) by lbmc_service_parse of its text. */
static lbmc_err lbmc_job_value_service_map(const lbmc_job_reader *c, const yaml_node_t *node,
                                           const lbmc_job_setting *s, const char *where,
                                           lbmc_input_value *v)
{
  const char *dist = NULL, *names[LBMC_JOB_SERVICE_MAX_PARAMS], *texts[LBMC_JOB_SERVICE_MAX_PARAMS];
  char *lists[LBMC_JOB_SERVICE_MAX_PARAMS] = {NULL};
  double values[LBMC_JOB_SERVICE_MAX_PARAMS];
  int n = 0, dist_line = 0, lines[LBMC_JOB_SERVICE_MAX_PARAMS], has_list = 0;
  char dkey[96], key[96], pwhere[640];
  size_t len, used;
  lbmc_err err = LBMC_SUCCESS;
  snprintf(dkey, sizeof dkey, "%s.dist", s->key);
  for (yaml_node_pair_t *pr = node->data.mapping.pairs.start;
       !err && pr < node->data.mapping.pairs.top; pr++) {
    const yaml_node_t *knode = yaml_document_get_node(c->doc, pr->key);
    const yaml_node_t *vnode = yaml_document_get_node(c->doc, pr->value);
    const char *word, *kind = lbmc_job_yaml_not_scalar(knode), *text;
    const int kline = lbmc_job_yaml_line(knode);
    int twice = -1;
    if (kind) {
      err =
          lbmc_job_yaml_fail(c, LBMC_ERR_ARG, kline, s->key,
                             "%s is not allowed as a key; the keys are dist and the distribution's "
                             "parameters, e.g. {dist: lognormal, scv: 4}",
                             kind);
      break;
    }
    word = (const char *)knode->data.scalar.value;
    if (strcmp(word, "dist") == 0) {
      if (dist)
        err = lbmc_job_yaml_fail(c, LBMC_ERR_ARG, kline, s->key,
                                 "'dist' is given twice (first at line %d); give each key once",
                                 dist_line);
      else
        err = lbmc_job_yaml_scalar(c, vnode, dkey,
                                   "a distribution name (" LBMC_JOB_SERVICE_DISTS ")", &dist);
      dist_line = kline;
      continue;
    }
    for (int i = 0; i < n; i++)
      if (strcmp(names[i], word) == 0) twice = i;
    if (twice >= 0) {
      err = lbmc_job_yaml_fail(c, LBMC_ERR_ARG, kline, s->key,
                               "'%s' is given twice (first at line %d); give each key once", word,
                               lines[twice]);
      break;
    }
    if (n == LBMC_JOB_SERVICE_MAX_PARAMS) {
      err = lbmc_job_yaml_fail(
          c, LBMC_ERR_ARG, kline, s->key,
          "more than %d parameters are not allowed; a distribution has at most 3",
          LBMC_JOB_SERVICE_MAX_PARAMS);
      break;
    }
    snprintf(key, sizeof key, "%s.%s", s->key, word);
    names[n] = word;
    lines[n] = kline;
    values[n] = 0;
    if (vnode->type == YAML_SEQUENCE_NODE) { /* ph and coxian: read from the text */
      err = lbmc_job_value_service_list(c, vnode, key, 0, &lists[n]);
      texts[n] = lists[n];
      has_list = 1;
    } else if (!(err = lbmc_job_yaml_scalar(c, vnode, key, "a number", &text))) {
      texts[n] = text;
      err = lbmc_parse_real(
          lbmc_job_yaml_where(c, lbmc_job_yaml_line(vnode), key, pwhere, sizeof pwhere), text,
          &values[n]);
    }
    n++;
  }
  if (!err && !dist)
    err = lbmc_job_yaml_fail(
        c, LBMC_ERR_ARG, v->line, s->key,
        "the key 'dist' is required in a mapping (the distribution: " LBMC_JOB_SERVICE_DISTS
        "), e.g. {dist: lognormal, scv: 4}");
  if (!err) {
    len = strlen(dist) + 1;
    for (int i = 0; i < n; i++) len += strlen(names[i]) + strlen(texts[i]) + 2;
    v->text = malloc(len);
    if (!v->text) err = lbmc_job_yaml_fail(c, LBMC_ERR_MEMORY, v->line, s->key, "out of memory");
  }
  if (!err) {
    used = (size_t)snprintf(v->text, len, "%s", dist);
    for (int i = 0; i < n; i++)
      used += (size_t)snprintf(v->text + used, len - used, "%s%s=%s", i ? "," : ":", names[i],
                               texts[i]);
    err = has_list ? lbmc_service_parse(where, v->text, v->svc)
                   : lbmc_service_make(where, dist, n, names, values, v->svc);
  }
  for (int i = 0; i < n; i++) free(lists[i]);
  return err;
}

/* One distribution: a scalar in the text form, or a mapping. */
static lbmc_err lbmc_job_value_service(const lbmc_job_reader *c, const yaml_node_t *node,
                                       const char *what, const lbmc_job_setting *s,
                                       lbmc_input_value *v)
{
  char where[512];
  const char *text;
  size_t len;
  v->line = lbmc_job_yaml_line(node);
  v->svc = calloc(1, sizeof *v->svc);
  if (!v->svc) return lbmc_job_yaml_fail(c, LBMC_ERR_MEMORY, v->line, s->key, "out of memory");
  lbmc_job_yaml_where(c, v->line, s->key, where, sizeof where);
  if (node->type == YAML_MAPPING_NODE) return lbmc_job_value_service_map(c, node, s, where, v);
  LBMC_CALL(lbmc_job_yaml_scalar(c, node, s->key, what, &text));
  LBMC_CALL(lbmc_job_value_text(c, s, text, v));
  LBMC_CALL(lbmc_service_parse(where, text, v->svc));
  /* kept as written, without surrounding blanks */
  len = strspn(v->text, " \t");
  memmove(v->text, v->text + len, strlen(v->text + len) + 1);
  for (len = strlen(v->text); len > 0 && (v->text[len - 1] == ' ' || v->text[len - 1] == '\t');)
    v->text[--len] = '\0';
  return LBMC_SUCCESS;
}

lbmc_err lbmc_job_value_read_service(lbmc_job_reader *c, yaml_node_t *node, lbmc_job_setting *s)
{
  s->given = 1;
  s->line = lbmc_job_yaml_line(node);
  if (node->type != YAML_SEQUENCE_NODE) {
    LBMC_CALL(lbmc_job_value_alloc(c, s, 1));
    return lbmc_job_value_service(c, node, LBMC_JOB_SERVICE_WHAT ", or a list of them,", s,
                                  &s->v[0]);
  }
  if (node->data.sequence.items.top == node->data.sequence.items.start)
    return lbmc_job_value_empty(c, s);
  /* [hyperexponential:p=0.25,r1=0.5,r2=1.5] is three items to YAML: say so before the
   * first of them is judged incomplete */
  for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top;
       it++) {
    const yaml_node_t *item = yaml_document_get_node(c->doc, *it);
    const char *t = (const char *)item->data.scalar.value;
    if (item->type == YAML_SCALAR_NODE && item->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        strchr(t, '=') && !strchr(t, ':'))
      return lbmc_job_yaml_fail(
          c, LBMC_ERR_ARG, lbmc_job_yaml_line(item), s->key,
          "'%s' is not allowed as a list item; in [...] commas separate the items, "
          "so quote a text with several parameters (\"hyperexponential:p=0.25,"
          "r1=0.5,r2=1.5\") or write a mapping {dist: hyperexponential, p: 0.25, "
          "r1: 0.5, r2: 1.5}",
          t);
  }
  LBMC_CALL(
      lbmc_job_value_alloc(c, s, node->data.sequence.items.top - node->data.sequence.items.start));
  for (long i = 0; i < s->count; i++) {
    yaml_node_t *item = yaml_document_get_node(c->doc, node->data.sequence.items.start[i]);
    LBMC_CALL(lbmc_job_value_service(c, item, LBMC_JOB_SERVICE_WHAT, s, &s->v[i]));
  }
  return lbmc_job_value_axis(c, s);
}
