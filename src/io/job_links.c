/* Job files: linked axes, the top-level key `together` (docs/job-files.md, "Linked
 * axes"). A group of settings given as lists of equal length is varied together, like
 * OMNeT++'s parallel iteration: the group is one dimension of the grid instead of the
 * product of its axes. The names are read as written and resolved once the whole file
 * is read, when every setting's values are known; then the axes are put in grid order
 * (the order of the file, the axes of a group next to its first one) and numbered into
 * dimensions. */
#include <stdio.h>
#include <string.h>

#include "job_impl.h"
#include "lbmc/check.h"

#define LBMC_JOB_LINKS_EXAMPLE "e.g. together: [[n, lambda]]"

/* ---- reading ---- */

static lbmc_err lbmc_job_links_group(lbmc_job_reader *c, const yaml_node_t *list, const char *name,
                                     int line)
{
  lbmc_job *job = c->job;
  lbmc_job_group *g = &job->group[job->ngroups];
  long count;
  if (job->ngroups == LBMC_MAX_AXES)
    return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, line, "together",
                              "more than %d groups are not allowed", LBMC_MAX_AXES);
  if (list->type != YAML_SEQUENCE_NODE)
    return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, lbmc_job_yaml_line(list), "together",
                              "%s is not allowed here; a group is a list of the settings varied "
                              "together, " LBMC_JOB_LINKS_EXAMPLE,
                              lbmc_job_yaml_describe(list));
  count = list->data.sequence.items.top - list->data.sequence.items.start;
  if (count < 2)
    return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, lbmc_job_yaml_line(list), "together",
                              "a group of %ld setting%s is not allowed; a group links at least two "
                              "settings, " LBMC_JOB_LINKS_EXAMPLE,
                              count, count == 1 ? "" : "s");
  snprintf(g->name, sizeof g->name, "%s", name);
  g->line = line;
  for (long i = 0; i < count; i++) {
    const yaml_node_t *item = yaml_document_get_node(c->doc, list->data.sequence.items.start[i]);
    lbmc_job_link *l = &job->link[job->nlinks];
    const char *text;
    LBMC_CALL(lbmc_job_yaml_scalar(c, item, "together",
                                   "the name of a setting given as a list, such as n or "
                                   "pools[2].buffer",
                                   &text));
    if (job->nlinks == LBMC_MAX_AXES || strlen(text) >= sizeof l->text)
      return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, lbmc_job_yaml_line(item), "together",
                                "'%s' is not a setting of this job", text);
    snprintf(l->text, sizeof l->text, "%s", text);
    l->line = lbmc_job_yaml_line(item);
    l->group = job->ngroups;
    job->nlinks++;
  }
  job->ngroups++;
  return LBMC_SUCCESS;
}

/* The mapping form: {name: [a, b], ...}, each key naming its group's dimension. */
static lbmc_err lbmc_job_links_named(lbmc_job_reader *c, const yaml_node_t *map)
{
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
       pr++) {
    const yaml_node_t *knode = yaml_document_get_node(c->doc, pr->key);
    const char *name;
    LBMC_CALL(lbmc_job_yaml_scalar(c, knode, "together", "a name for the group", &name));
    if (!*name || strlen(name) >= sizeof c->job->group[0].name)
      return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, lbmc_job_yaml_line(knode), "together",
                                "'%s' is not allowed as a group name; allowed: 1 to %d characters",
                                name, (int)sizeof c->job->group[0].name - 1);
    LBMC_CALL(lbmc_job_links_group(c, yaml_document_get_node(c->doc, pr->value), name,
                                   lbmc_job_yaml_line(knode)));
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_job_links_read(lbmc_job_reader *c, yaml_node_t *node)
{
  lbmc_job_setting *s = LBMC_JOB_SET(c->job, TOGETHER);
  const yaml_node_item_t *items;
  s->given = 1;
  s->line = lbmc_job_yaml_line(node);
  if (node->type == YAML_MAPPING_NODE &&
      node->data.mapping.pairs.top > node->data.mapping.pairs.start)
    return lbmc_job_links_named(c, node);
  if (node->type != YAML_SEQUENCE_NODE ||
      node->data.sequence.items.top == node->data.sequence.items.start)
    return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, s->line, "together",
                              "%s is not allowed here; a list of groups of settings varied "
                              "together, " LBMC_JOB_LINKS_EXAMPLE ", is required",
                              lbmc_job_yaml_describe(node));
  items = node->data.sequence.items.start;
  if (yaml_document_get_node(c->doc, items[0])->type != YAML_SEQUENCE_NODE)
    return lbmc_job_links_group(c, node, "", s->line); /* one group: [n, lambda] */
  for (; items < node->data.sequence.items.top; items++) {
    const yaml_node_t *group = yaml_document_get_node(c->doc, *items);
    LBMC_CALL(lbmc_job_links_group(c, group, "", lbmc_job_yaml_line(group)));
  }
  return LBMC_SUCCESS;
}

/* ---- resolving ---- */

/* The setting that may be an axis named `text` (its axis name "pools[2].buffer" or its
 * key "system.pools[2].buffer"), or NULL. */
static lbmc_job_setting *lbmc_job_links_find(lbmc_job *job, const char *text)
{
  for (int id = 0; id < LBMC_INPUTS; id++) {
    if (!lbmc_inputs[id].key || !lbmc_inputs[id].axis) continue;
    if (id < LBMC_IN_POOL_FIRST || id >= LBMC_IN_POOL_FIRST + LBMC_POOL_INPUTS) {
      lbmc_job_setting *s = &job->set[id];
      if (strcmp(text, s->name) == 0 || strcmp(text, s->key) == 0) return s;
      continue;
    }
    for (int j = 0; j < job->J; j++) {
      lbmc_job_setting *s = &job->pool_set[j][id - LBMC_IN_POOL_FIRST];
      if (strcmp(text, s->name) == 0 || strcmp(text, s->key) == 0) return s;
    }
  }
  return NULL;
}

/* The job's axes as a list "n, pools[1].buffer, ..." ("none" without axes). */
static const char *lbmc_job_links_axes(const lbmc_job *job, char *buf, size_t len)
{
  size_t used = 0;
  snprintf(buf, len, "none");
  for (int a = 0; a < job->naxes && used < len; a++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s", a ? ", " : "", job->axis[a]->name);
  return buf;
}

/* The axis of each name (group_of[axis] = its group), or the error naming the name. */
static lbmc_err lbmc_job_links_assign(const lbmc_job_reader *c, int *group_of)
{
  lbmc_job *job = c->job;
  char axes[1024];
  for (int i = 0; i < job->nlinks; i++) {
    const lbmc_job_link *l = &job->link[i];
    const lbmc_job_setting *s = lbmc_job_links_find(job, l->text);
    if (!s) {
      const char *names[LBMC_MAX_AXES], *close;
      for (int a = 0; a < job->naxes; a++) names[a] = job->axis[a]->name;
      close = lbmc_suggest(l->text, names, job->naxes);
      return lbmc_job_yaml_fail(
          c, LBMC_ERR_ARG, l->line, "together",
          "'%s' is not a setting that can be a list; allowed: the settings this "
          "job gives as lists: %s%s%s%s",
          l->text, lbmc_job_links_axes(job, axes, sizeof axes), close ? " (did you mean '" : "",
          close ? close : "", close ? "'?)" : "");
    }
    if (s->axis < 0)
      return lbmc_job_yaml_fail(
          c, LBMC_ERR_ARG, l->line, "together",
          "'%s' is %s in this job; only settings given as lists can be varied "
          "together (this job's lists: %s)",
          l->text, s->given ? "a single value" : "not given",
          lbmc_job_links_axes(job, axes, sizeof axes));
    if (group_of[s->axis] >= 0)
      return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, l->line, "together",
                                "'%s' is named twice; allowed: each setting in at most one group",
                                l->text);
    group_of[s->axis] = l->group;
  }
  return LBMC_SUCCESS;
}

/* The lists of group g all have the same length; names the lengths if not. */
static lbmc_err lbmc_job_links_lengths(const lbmc_job_reader *c, const int *group_of, int g)
{
  const lbmc_job *job = c->job;
  char lengths[1024] = "";
  size_t used = 0;
  long first = -1;
  int differ = 0;
  for (int a = 0; a < job->naxes; a++) {
    const lbmc_job_setting *s = job->axis[a];
    if (group_of[a] != g) continue;
    differ |= first >= 0 && s->count != first;
    if (first < 0) first = s->count;
    if (used < sizeof lengths)
      used +=
          (size_t)snprintf(lengths + used, sizeof lengths - used, "%s%s has %ld value%s (line %d)",
                           used ? ", " : "", s->name, s->count, s->count == 1 ? "" : "s", s->line);
  }
  if (!differ) return LBMC_SUCCESS;
  return lbmc_job_yaml_fail(
      c, LBMC_ERR_ARG, job->group[g].line, "together",
      "the linked lists have different lengths: %s; allowed: lists of the same "
      "length, whose i-th values go together",
      lengths);
}

/* A group's name is not another dimension's or an axis' name. */
static lbmc_err lbmc_job_links_check_name(const lbmc_job_reader *c, int g)
{
  const lbmc_job *job = c->job;
  const char *name = job->group[g].name;
  if (!*name) return LBMC_SUCCESS;
  for (int a = 0; a < job->naxes; a++)
    if (strcmp(name, job->axis[a]->name) == 0)
      return lbmc_job_yaml_fail(c, LBMC_ERR_ARG, job->group[g].line, "together",
                                "'%s' is not allowed as a group name; it names an axis", name);
  for (int h = 0; h < g; h++)
    if (strcmp(name, job->group[h].name) == 0)
      return lbmc_job_yaml_fail(
          c, LBMC_ERR_ARG, job->group[g].line, "together",
          "'%s' names two groups (first at line %d); give each group its own name", name,
          job->group[h].line);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_job_links_resolve(lbmc_job_reader *c)
{
  lbmc_job *job = c->job;
  lbmc_job_setting *order[LBMC_MAX_AXES];
  int group_of[LBMC_MAX_AXES], placed[LBMC_MAX_AXES] = {0}, n = 0;
  for (int a = 0; a < job->naxes; a++) group_of[a] = -1;
  LBMC_CALL(lbmc_job_links_assign(c, group_of));
  for (int g = 0; g < job->ngroups; g++) {
    LBMC_CALL(lbmc_job_links_lengths(c, group_of, g));
    LBMC_CALL(lbmc_job_links_check_name(c, g));
  }
  job->ndims = 0;
  for (int a = 0; a < job->naxes; a++) {
    if (placed[a]) continue;
    job->dim_name[job->ndims][0] = '\0';
    for (int b = a; b < job->naxes; b++) /* a alone, or its whole group in file order */
      if (b == a || (group_of[a] >= 0 && group_of[b] == group_of[a])) {
        placed[b] = 1;
        job->dim_of[n] = job->ndims;
        order[n++] = job->axis[b];
      }
    if (group_of[a] >= 0)
      memcpy(job->dim_name[job->ndims], job->group[group_of[a]].name, sizeof job->dim_name[0]);
    job->ndims++;
  }
  for (int a = 0; a < n; a++) {
    job->axis[a] = order[a];
    order[a]->axis = a;
  }
  return LBMC_SUCCESS;
}
