/* Job files: loading YAML with libyaml's document API, messages that name the file and
 * the line, and the walk over a mapping's keys (unknown, duplicate, missing keys; each
 * known key's value read by the caller's reader). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_impl.h"
#include "lbmc/check.h"

int lbmc_job_yaml_line(const yaml_node_t *node)
{
  return node ? (int)node->start_mark.line + 1 : 0;
}

lbmc_err lbmc_job_yaml_fail(const lbmc_job_reader *c, lbmc_err code, int line, const char *key,
                            const char *fmt, ...)
{
  char msg[1024], at[32] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (line > 0) snprintf(at, sizeof at, ":%d", line);
  if (key && *key) return LBMC_ERROR(code, "%s%s: %s: %s", c->name, at, key, msg);
  return LBMC_ERROR(code, "%s%s: %s", c->name, at, msg);
}

const char *lbmc_job_yaml_where(const lbmc_job_reader *c, int line, const char *key, char *buf,
                                size_t len)
{
  snprintf(buf, len, "%s:%d: %s", c->name, line, key);
  return buf;
}

/* ---- loading ---- */

static lbmc_err lbmc_job_yaml_error(const char *name, const yaml_parser_t *p)
{
  const yaml_mark_t *m = &p->problem_mark;
  const char *problem = p->problem ? p->problem : "unknown error";
  switch (p->error) {
  case YAML_MEMORY_ERROR:
    return LBMC_ERROR(LBMC_ERR_MEMORY, "%s: out of memory while reading YAML", name);
  case YAML_READER_ERROR:
    if (p->problem_value != -1)
      return LBMC_ERROR(LBMC_ERR_PARSE,
                        "%s: not valid YAML: %s (byte 0x%X at offset %zu; is it a text file?)",
                        name, problem, (unsigned)p->problem_value, p->problem_offset);
    return LBMC_ERROR(LBMC_ERR_PARSE, "%s: not valid YAML: %s (at offset %zu)", name, problem,
                      p->problem_offset);
  default:
    if (p->context)
      return LBMC_ERROR(LBMC_ERR_PARSE, "%s:%zu:%zu: not valid YAML: %s (%s at line %zu)", name,
                        m->line + 1, m->column + 1, problem, p->context, p->context_mark.line + 1);
    return LBMC_ERROR(LBMC_ERR_PARSE, "%s:%zu:%zu: not valid YAML: %s", name, m->line + 1,
                      m->column + 1, problem);
  }
}

/* After the first document: the rest of the stream must hold no other document. */
static lbmc_err lbmc_job_yaml_no_second(const char *name, yaml_parser_t *p)
{
  yaml_document_t more;
  yaml_node_t *root;
  int line;
  if (!yaml_parser_load(p, &more)) return lbmc_job_yaml_error(name, p);
  root = yaml_document_get_root_node(&more);
  line = root ? (int)more.start_mark.line + 1 : 0;
  yaml_document_delete(&more);
  if (root)
    return LBMC_ERROR(LBMC_ERR_PARSE,
                      "%s:%d: a second YAML document is not allowed; a job file holds one "
                      "document (remove the '---' line)",
                      name, line);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_job_yaml_load(const char *name, const char *text, size_t len, yaml_document_t *doc)
{
  yaml_parser_t p;
  yaml_node_t *root;
  lbmc_err err;
  if (!yaml_parser_initialize(&p))
    return LBMC_ERROR(LBMC_ERR_MEMORY, "%s: cannot create a YAML parser", name);
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  if (!yaml_parser_load(&p, doc)) { /* libyaml frees the document on failure */
    err = lbmc_job_yaml_error(name, &p);
    yaml_parser_delete(&p);
    return err;
  }
  root = yaml_document_get_root_node(doc);
  err = root ? lbmc_job_yaml_no_second(name, &p)
             : LBMC_ERROR(LBMC_ERR_PARSE,
                          "%s: the file is empty (no YAML content); a job needs at least the keys "
                          "system and policy (see docs/job-files.md)",
                          name);
  yaml_parser_delete(&p);
  if (err) yaml_document_delete(doc);
  return err;
}

/* ---- scalars ---- */

static int lbmc_job_yaml_is(const char *text, const char *const *words)
{
  for (; *words; words++)
    if (strcmp(text, *words) == 0) return 1;
  return 0;
}

const char *lbmc_job_yaml_not_scalar(const yaml_node_t *node)
{
  static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
  static const char *const trues[] = {"true", "True", "TRUE", NULL};
  static const char *const falses[] = {"false", "False", "FALSE", NULL};
  const char *text;
  if (node->type == YAML_MAPPING_NODE) return "a mapping";
  if (node->type == YAML_SEQUENCE_NODE) return "a list";
  if (node->type != YAML_SCALAR_NODE) return "an empty value";
  text = (const char *)node->data.scalar.value;
  if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return NULL; /* quoted: a string */
  if (lbmc_job_yaml_is(text, nulls)) return "an empty value";
  if (lbmc_job_yaml_is(text, trues)) return "a boolean (true)";
  if (lbmc_job_yaml_is(text, falses)) return "a boolean (false)";
  return NULL;
}

const char *lbmc_job_yaml_describe(const yaml_node_t *node)
{
  const char *kind = lbmc_job_yaml_not_scalar(node);
  if (node->type == YAML_SEQUENCE_NODE &&
      node->data.sequence.items.top == node->data.sequence.items.start)
    return "an empty list";
  return kind ? kind : "a single value";
}

lbmc_err lbmc_job_yaml_scalar(const lbmc_job_reader *c, const yaml_node_t *node, const char *key,
                              const char *what, const char **text)
{
  const char *kind = lbmc_job_yaml_not_scalar(node);
  if (kind)
    return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, lbmc_job_yaml_line(node), key,
                              "%s is not allowed here; %s is required", kind, what);
  *text = (const char *)node->data.scalar.value;
  return LBMC_SUCCESS;
}

/* ---- keys ---- */

static lbmc_err lbmc_job_yaml_unknown(const lbmc_job_reader *c, const yaml_node_t *knode,
                                      const char *path, const char *word, const lbmc_job_key *keys,
                                      int nkeys, lbmc_job_key_hint hint)
{
  char allowed[512] = "", extra[160] = "", where[128];
  const char *names[32], *close, *elsewhere = hint ? hint(word, where, sizeof where) : NULL;
  for (int i = 0; i < nkeys && i < 32; i++) {
    size_t len = strlen(allowed);
    names[i] = keys[i].key;
    snprintf(allowed + len, sizeof allowed - len, "%s%s", i ? ", " : "", keys[i].key);
  }
  close = lbmc_suggest(word, names, nkeys < 32 ? nkeys : 32);
  if (close)
    snprintf(extra, sizeof extra, " (did you mean '%s'?)", close);
  else if (elsewhere)
    snprintf(extra, sizeof extra, " (it belongs elsewhere: %s)", elsewhere);
  if (!*path)
    return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, lbmc_job_yaml_line(knode), NULL,
                              "'%s' is not a top-level key; allowed: %s%s", word, allowed, extra);
  return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, lbmc_job_yaml_line(knode), path,
                            "'%s' is not a key; allowed: %s%s", word, allowed, extra);
}

/* The key of pair i as a name; fails for a key that is not a plain scalar. */
static lbmc_err lbmc_job_yaml_key_name(const lbmc_job_reader *c, const yaml_node_t *knode,
                                       const char *path, const char **word)
{
  const char *kind = lbmc_job_yaml_not_scalar(knode);
  if (kind)
    return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, lbmc_job_yaml_line(knode), *path ? path : NULL,
                              "%s is not allowed as a key; keys are names such as '%s'", kind,
                              *path ? "mu" : "system");
  *word = (const char *)knode->data.scalar.value;
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_job_yaml_not_mapping(const lbmc_job_reader *c, const yaml_node_t *map,
                                          const char *path, const lbmc_job_key *keys, int nkeys)
{
  char allowed[512] = "";
  const char *kind = lbmc_job_yaml_describe(map);
  for (int i = 0; i < nkeys; i++) {
    size_t len = strlen(allowed);
    snprintf(allowed + len, sizeof allowed - len, "%s%s", i ? ", " : "", keys[i].key);
  }
  if (!*path)
    return lbmc_job_yaml_fail(c, LBMC_ERR_PARSE, lbmc_job_yaml_line(map), NULL,
                              "the top level is %s; a job file is a mapping of the keys %s (see "
                              "docs/job-files.md)",
                              kind, allowed);
  return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, lbmc_job_yaml_line(map), path,
                            "%s is not allowed here; a mapping of the keys %s is required", kind,
                            allowed);
}

lbmc_err lbmc_job_yaml_walk(lbmc_job_reader *c, yaml_node_t *map, const char *path,
                            const lbmc_job_key *keys, int nkeys, lbmc_job_key_reader read,
                            lbmc_job_key_hint hint)
{
  int seen[32] = {0}; /* line where each key was given */
  const int named_at = c->key_line > 0 ? c->key_line : lbmc_job_yaml_line(map);
  if (nkeys > 32) return LBMC_ERROR(LBMC_ERR_INTERNAL, "%s: too many keys in a table", path);
  if (map->type != YAML_MAPPING_NODE) return lbmc_job_yaml_not_mapping(c, map, path, keys, nkeys);
  /* A key such as 'r1=0.5' is the tail of an unquoted text that YAML split at its commas
   * ({mu: 1, service: hyperexponential:p=0.25,r1=0.5,r2=1.5}): report it before the
   * truncated value it came from. */
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
       pr++) {
    yaml_node_t *knode = yaml_document_get_node(c->doc, pr->key);
    const char *word = (const char *)knode->data.scalar.value;
    if (knode->type == YAML_SCALAR_NODE && strchr(word, '=') && !strchr(word, ':'))
      return lbmc_job_yaml_unknown(c, knode, path, word, keys, nkeys, hint);
  }
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
       pr++) {
    yaml_node_t *knode = yaml_document_get_node(c->doc, pr->key);
    yaml_node_t *vnode = yaml_document_get_node(c->doc, pr->value);
    const char *word = NULL;
    int k = 0;
    LBMC_CALL(lbmc_job_yaml_key_name(c, knode, path, &word));
    while (k < nkeys && strcmp(word, keys[k].key) != 0) k++;
    if (k == nkeys) return lbmc_job_yaml_unknown(c, knode, path, word, keys, nkeys, hint);
    if (seen[k])
      return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, lbmc_job_yaml_line(knode), *path ? path : NULL,
                                "'%s' is given twice (first at line %d); give each key once", word,
                                seen[k]);
    seen[k] = lbmc_job_yaml_line(knode);
    c->key_line = seen[k];
    LBMC_CALL(read(c, keys[k].row, vnode));
  }
  for (int k = 0; k < nkeys; k++)
    if (keys[k].row->need && !seen[k]) {
      if (!*path)
        return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, 0, NULL,
                                  "the key '%s' is required at the top level (%s)", keys[k].key,
                                  keys[k].row->need);
      return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, named_at, path, "the key '%s' is required (%s)",
                                keys[k].key, keys[k].row->need);
    }
  return LBMC_SUCCESS;
}
