/* lbmc info's tidy rows (info.h): the points --where keeps, the metric entries
 * --metrics names, one row per point, metric and entry with the grid axes as columns. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "info.h"
#include "lbmc/check.h"
#include "lbmc/metrics.h"
#include "lbmc/point.h"

/* The estimate parts of a point entry, each P x total in the results' estimate block; an
 * optional part is a column only when the file holds it (an array with a value). */
static const struct {
  const char *name;
  size_t offset; /* of its double * in lbmc_estimates */
  int optional, digits;
} lbmc_info_parts[] = {
    {"mean", offsetof(lbmc_estimates, estimate), 0, 6},
    {"half_width", offsetof(lbmc_estimates, half_width), 0, 3},
    {"std_err", offsetof(lbmc_estimates, std_err), 0, 3},
    {"lower", offsetof(lbmc_estimates, lower), 0, 6},
    {"upper", offsetof(lbmc_estimates, upper), 0, 6},
    {"upper_bound", offsetof(lbmc_estimates, upper_bound), 1, 3},
};
#define LBMC_INFO_PARTS ((int)(sizeof lbmc_info_parts / sizeof lbmc_info_parts[0]))

static const double *lbmc_info_part(const lbmc_results *res, int p)
{
  return *(double *const *)((const char *)&res->est + lbmc_info_parts[p].offset);
}

const char *lbmc_info_axis_column(const char *axis, char *buf, size_t len)
{
  int j;
  char word[32];
  if (strncmp(axis, "system.", 7) == 0) axis += 7;
  if (sscanf(axis, "pools[%d].%31s", &j, word) == 2)
    snprintf(buf, len, "%s_%d", word, j);
  else
    snprintf(buf, len, "%s", strncmp(axis, "run.", 4) == 0 ? axis + 4 : axis);
  return buf;
}

/* ---- --where ---- */

int lbmc_info_axis(const lbmc_grid *g, const char *name)
{
  char col[64];
  for (int a = 0; g && a < g->A; a++)
    if (strcmp(name, g->axis_name[a]) == 0 ||
        (strncmp(name, "system.", 7) == 0 && strcmp(name + 7, g->axis_name[a]) == 0) ||
        strcmp(name, lbmc_info_axis_column(g->axis_name[a], col, sizeof col)) == 0)
      return a;
  return -1;
}

/* Is `text` value v of axis a: the same text, or the same number? */
static int lbmc_info_same(const char *text, const char *value)
{
  double x, y;
  if (strcmp(text, value) == 0) return 1;
  return lbmc_read_real(text, &x) && lbmc_read_real(value, &y) &&
         fabs(x - y) <= 1e-12 * fmax(fabs(x), fabs(y));
}

static lbmc_err lbmc_info_no_axis(const lbmc_info *info, const char *name)
{
  const lbmc_grid *g = info->grid;
  char allowed[1024] = "", col[64];
  size_t used = 0;
  for (int a = 0; g && a < g->A && used < sizeof allowed; a++)
    used +=
        (size_t)snprintf(allowed + used, sizeof allowed - used, "%s%s (%s)", a ? ", " : "",
                         g->axis_name[a], lbmc_info_axis_column(g->axis_name[a], col, sizeof col));
  if (!g || !g->A)
    return LBMC_ERROR(LBMC_ERR_ARG, "--where: '%s' is not a grid axis: %s has no grid axes", name,
                      info->path);
  return LBMC_ERROR(LBMC_ERR_ARG, "--where: '%s' is not a grid axis of %s; allowed: %s", name,
                    info->path, allowed);
}

/* Mark in ok[] (over every axis' values) the values of axis a that `value` names. */
static lbmc_err lbmc_info_pick(const lbmc_info *info, int a, const char *value, char *ok)
{
  const lbmc_grid *g = info->grid;
  char allowed[1024] = "";
  size_t used = 0;
  int found = 0;
  for (long v = 0; v < g->axis_length[a]; v++) {
    const char *text = g->axis_value[g->axis_first[a] + v];
    if (lbmc_info_same(value, text)) ok[g->axis_first[a] + v] = found = 1;
    if (used < sizeof allowed)
      used += (size_t)snprintf(allowed + used, sizeof allowed - used, "%s%s", v ? ", " : "", text);
  }
  if (found) return LBMC_SUCCESS;
  return LBMC_ERROR(LBMC_ERR_ARG, "--where: %s=%s is not a value of the axis %s; allowed: %s",
                    g->axis_name[a], value, g->axis_name[a], allowed);
}

/* Split spec into conditions: at commas outside brackets, a piece "axis=value" starting a
 * condition when its name is an axis; other pieces continue the previous value (a
 * service text "hyperexponential:p=0.25,r1=0.5,r2=1.5"). */
static lbmc_err lbmc_info_conditions(const lbmc_info *info, const char *spec, char *ok,
                                     char *restricted)
{
  char buf[4096], value[4096] = "";
  int axis = -1, depth = 0;
  size_t start = 0, len = strlen(spec);
  if (len >= sizeof buf) return LBMC_ERROR(LBMC_ERR_ARG, "--where: the value is too long");
  memcpy(buf, spec, len + 1);
  for (size_t i = 0; i <= len; i++) {
    char *piece, *eq;
    int a;
    if (buf[i] == '[' || buf[i] == '(' || buf[i] == '{') depth++;
    if ((buf[i] == ']' || buf[i] == ')' || buf[i] == '}') && depth > 0) depth--;
    if (buf[i] && (buf[i] != ',' || depth > 0)) continue;
    buf[i] = '\0';
    piece = buf + start;
    start = i + 1;
    eq = strchr(piece, '=');
    if (eq) *eq = '\0';
    a = eq ? lbmc_info_axis(info->grid, piece) : -1;
    if (eq && a < 0 && axis < 0) return lbmc_info_no_axis(info, piece);
    if (eq) *eq = '=';
    if (a < 0 && axis < 0)
      return LBMC_ERROR(LBMC_ERR_ARG, "--where: '%s' is not allowed; write axis=value, e.g. n=1000",
                        piece);
    if (a < 0) { /* a piece of the previous value */
      snprintf(value + strlen(value), sizeof value - strlen(value), ",%s", piece);
      continue;
    }
    if (axis >= 0) LBMC_CALL(lbmc_info_pick(info, axis, value, ok));
    axis = a;
    restricted[a] = 1;
    snprintf(value, sizeof value, "%s", eq + 1);
  }
  return axis >= 0 ? lbmc_info_pick(info, axis, value, ok) : LBMC_SUCCESS;
}

lbmc_err lbmc_info_where(lbmc_info *info, const char *spec)
{
  const lbmc_grid *g = info->grid;
  char *ok, *restricted;
  lbmc_err err;
  if (!g) return lbmc_info_no_axis(info, spec);
  ok = calloc((size_t)g->V + 1, 1);
  restricted = calloc((size_t)g->A + 1, 1);
  err = ok && restricted ? lbmc_info_conditions(info, spec, ok, restricted)
                         : LBMC_ERROR(LBMC_ERR_MEMORY, "--where: out of memory");
  for (long i = 0; !err && i < info->res->P; i++)
    for (int a = 0; a < g->A; a++)
      if (restricted[a] && !ok[g->axis_first[a] + lbmc_grid_position(g, a, info->res->pt[i].index)])
        info->keep[i] = 0;
  free(ok);
  free(restricted);
  return err;
}

/* ---- --metrics ---- */

lbmc_err lbmc_info_metrics(lbmc_info *info, const char *spec)
{
  char buf[1024];
  if (strlen(spec) >= sizeof buf)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--metrics: a list of %zu characters is not allowed; at most %zu are",
                      strlen(spec), sizeof buf - 1);
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *tok = buf, *next; tok; tok = next) {
    lbmc_info_metric *m = &info->metric[info->nmetrics];
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    if (!*tok) /* '', 'a,,b', a trailing comma: strtok would have skipped it (and '' meant all) */
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "--metrics '%.200s': an empty name is not allowed; metric names separated "
                        "by single commas are required (e.g. p_wait,utilization[2])",
                        spec);
    if (info->nmetrics == LBMC_INFO_MAX_METRICS)
      return LBMC_ERROR(LBMC_ERR_ARG, "--metrics: more than %d names are not allowed",
                        LBMC_INFO_MAX_METRICS);
    LBMC_CALL(lbmc_metric_parse("--metrics", tok, info->res->J, info->res->K,
                                LBMC_METRIC_WHOLE | (info->res->pairs ? LBMC_METRIC_PAIRS : 0),
                                &m->metric, &m->entry));
    info->nmetrics++;
  }
  return LBMC_SUCCESS;
}

/* ---- rows ---- */

/* The columns of --limit: none, its value (text form), or its value and source; the same
 * again for the refined value with --limit refined. */
static int lbmc_info_limit_columns(const lbmc_info *info)
{
  return (!info->limit ? 0 : info->format == LBMC_FORMAT_TABLE ? 1 : 2) * (info->refined ? 2 : 1);
}

/* The columns: point, the axes, the entry's names, the estimate parts the file holds,
 * then (text form) the estimate with its interval as one cell, or (CSV, JSON) the
 * interval's flags by name, engine, replicas, status, reason (the text form shows the
 * entry's name only, the one cell for the parts, and no reason). */
static lbmc_err lbmc_info_table(const lbmc_info *info, lbmc_table **t)
{
  static const char *const names[] = {"metric", "entry", "pool", "k", "level"};
  const int A = info->grid ? info->grid->A : 0;
  char(*axis)[64] = calloc((size_t)A + 1, sizeof *axis);
  const char **cols = calloc((size_t)A + LBMC_INFO_PARTS + 16, sizeof *cols);
  int n = 0, digits[LBMC_INFO_PARTS + 1];
  lbmc_err err = LBMC_SUCCESS;
  if (!axis || !cols) err = LBMC_ERROR(LBMC_ERR_MEMORY, "info: out of memory");
  for (int c = 0; !err && c < 1 + A + 5; c++, n++)
    cols[n] = c == 0   ? "point"
              : c <= A ? lbmc_info_axis_column(info->grid->axis_name[c - 1], axis[c - 1], 64)
                       : names[c - 1 - A];
  for (int p = 0; !err && p < LBMC_INFO_PARTS; p++) {
    const double *x = lbmc_info_part(info->res, p);
    int has = x && !lbmc_info_parts[p].optional;
    for (size_t k = 0; x && !has && k < (size_t)info->res->P * info->res->total; k++)
      has = !isnan(x[k]);
    if (has) digits[n - 1 - A - 5] = lbmc_info_parts[p].digits, cols[n++] = lbmc_info_parts[p].name;
  }
  cols[n++] = info->format == LBMC_FORMAT_TABLE ? "estimate [interval]" : "flags";
  if (info->limit) cols[n++] = info->format == LBMC_FORMAT_TABLE ? "limit (n -> inf)" : "limit";
  if (info->limit && info->format != LBMC_FORMAT_TABLE) cols[n++] = "limit_source";
  if (info->refined)
    cols[n++] = info->format == LBMC_FORMAT_TABLE ? "refined x*+V/n" : "limit_refined";
  if (info->refined && info->format != LBMC_FORMAT_TABLE) cols[n++] = "limit_refined_source";
  cols[n++] = "engine";
  cols[n++] = "replicas";
  cols[n++] = "status";
  cols[n++] = "reason";
  if (!err) err = lbmc_table_create(n, cols, t);
  for (int c = 0, last = n - 5 - lbmc_info_limit_columns(info); !err && c < n; c++) {
    (*t)->col[c].hidden = (c > A && c <= A + 5 && c != A + 2) || c == n - 1 ||
                          (c > A + 5 && c < last && info->format == LBMC_FORMAT_TABLE);
    if (c > A + 5 && c < last) (*t)->col[c].digits = digits[c - A - 6];
  }
  free(axis);
  free(cols);
  return err;
}

int lbmc_info_axis_kind(const lbmc_grid *g, int a)
{
  int kind = 2;
  for (long v = 0; v < g->axis_length[a] && kind; v++) {
    const char *text = g->axis_value[g->axis_first[a] + v];
    double x;
    if (strcmp(text, "inf") == 0 || strcmp(text, "infinity") == 0)
      kind = 1;
    else if (!lbmc_read_real(text, &x))
      kind = 0;
    else if (x != floor(x) || fabs(x) > 9e15 || strpbrk(text, "./eE"))
      kind = kind > 1 ? 1 : kind;
  }
  return kind;
}

lbmc_err lbmc_info_axis_cell(lbmc_table *t, int col, const lbmc_grid *g, int a, int kind,
                             long index)
{
  const char *text = lbmc_grid_value(g, a, index);
  double x = INFINITY;
  if (kind == 0) return lbmc_table_text(t, col, text);
  if (text[0] != 'i') lbmc_read_real(text, &x);
  if (kind == 2)
    lbmc_table_int(t, col, (long)x);
  else
    lbmc_table_real(t, col, x);
  return LBMC_SUCCESS;
}

/* The cells naming entry e of metric m: metric, entry, pool, k, level (from column c). */
static lbmc_err lbmc_info_entry_cells(lbmc_table *t, int c, const lbmc_results *res, int m, long e)
{
  const lbmc_shape shape = lbmc_metric_get(m)->shape;
  char name[64];
  LBMC_CALL(lbmc_table_text(t, c, lbmc_metric_get(m)->name));
  LBMC_CALL(
      lbmc_table_text(t, c + 1, lbmc_metric_entry_name(m, e, res->J, res->K, name, sizeof name)));
  if (shape == LBMC_SHAPE_POOL) lbmc_table_int(t, c + 2, e + 1);
  if (shape == LBMC_SHAPE_POOL_K) {
    lbmc_table_int(t, c + 2, e / res->K + 1);
    lbmc_table_int(t, c + 3, e % res->K + 1);
  }
  if (shape == LBMC_SHAPE_QUANTILE) lbmc_table_real(t, c + 4, lbmc_quantile_level((int)e));
  return LBMC_SUCCESS;
}

/* One row: point i, entry e of metric m. */
static lbmc_err lbmc_info_row(const lbmc_info *info, lbmc_table *t, const int *kinds, long i, int m,
                              long e)
{
  const lbmc_results *res = info->res;
  const lbmc_point_info *p = &res->pt[i];
  const lbmc_estimates *est = &res->est;
  const int A = info->grid ? info->grid->A : 0;
  const size_t k = (size_t)i * res->total + lbmc_metric_offset(m, res->J, res->K) + (size_t)e;
  const int col = t->ncols - 5 - lbmc_info_limit_columns(info); /* estimate, or flags */
  LBMC_CALL(lbmc_table_add_row(t));
  lbmc_table_int(t, 0, p->index);
  for (int a = 0; a < A; a++)
    LBMC_CALL(lbmc_info_axis_cell(t, 1 + a, info->grid, a, kinds[a], p->index));
  LBMC_CALL(lbmc_info_entry_cells(t, 1 + A, res, m, e));
  for (int q = 0; q < LBMC_INFO_PARTS; q++) {
    const int c = lbmc_table_column(t, lbmc_info_parts[q].name);
    if (c >= 0) lbmc_table_real(t, c, lbmc_info_part(res, q)[k]);
  }
  if (info->format == LBMC_FORMAT_TABLE) {
    char cell[160];
    LBMC_CALL(
        lbmc_table_text(t, col,
                        p->v.status == LBMC_STATUS_UNSTABLE
                            ? "-"
                            : lbmc_cli_cell(cell, sizeof cell, est->estimate[k], est->lower[k],
                                            est->upper[k], est->upper_bound[k], est->flags[k])));
  } else if (est->flags[k]) {
    char names[256];
    LBMC_CALL(
        lbmc_table_text(t, col, lbmc_interval_flag_names(est->flags[k], names, sizeof names)));
  }
  if (info->limit) {
    const double x = info->limit[k];
    const char *source = info->limit_source[(size_t)i * LBMC_METRICS + (size_t)m];
    char text[32];
    if (info->format == LBMC_FORMAT_TABLE || isinf(x))
      LBMC_CALL(lbmc_table_text(t, col + 1, lbmc_limit_cell(x, text, sizeof text)));
    else
      lbmc_table_real(t, col + 1, x);
    if (info->format != LBMC_FORMAT_TABLE && source) LBMC_CALL(lbmc_table_text(t, col + 2, source));
  }
  if (info->refined) { /* blank where unknown, with the reason in CSV and JSON */
    const int c = col + 1 + lbmc_info_limit_columns(info) / 2;
    const double x = info->refined[k];
    const char *source = info->refined_source[(size_t)i * LBMC_METRICS + (size_t)m];
    char text[32];
    if (info->format == LBMC_FORMAT_TABLE || isinf(x))
      LBMC_CALL(lbmc_table_text(t, c, lbmc_limit_cell(x, text, sizeof text)));
    else if (!isnan(x)) /* unknown: an empty cell (null in JSON) */
      lbmc_table_real(t, c, x);
    if (info->format != LBMC_FORMAT_TABLE)
      LBMC_CALL(lbmc_table_text(t, c + 1, isnan(x) || !source ? info->refined_reason[i] : source));
  }
  LBMC_CALL(lbmc_table_text(t, t->ncols - 4, p->engine[0] ? p->engine : "-"));
  lbmc_table_int(t, t->ncols - 3, p->v.replicas);
  LBMC_CALL(lbmc_table_text(t, t->ncols - 2, lbmc_status_name(p->v.status)));
  return lbmc_table_text(t, t->ncols - 1, p->v.reason);
}

/* --limit refined: the refined values of the kept points (points, at: count of them), each
 * at its own n, by one call of the Python package. */
static lbmc_err lbmc_info_refined(lbmc_info *info, json_t *points, const long *at, long count)
{
  static const char *const refined[] = {"--refined", "n", NULL};
  const lbmc_results *res = info->res;
  info->refined = malloc(sizeof *info->refined * ((size_t)res->P * res->total + 1));
  info->refined_source = calloc((size_t)res->P * LBMC_METRICS + 1, sizeof *info->refined_source);
  info->refined_reason = calloc((size_t)res->P + 1, sizeof *info->refined_reason);
  if (!info->refined || !info->refined_source || !info->refined_reason)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "--limit: out of memory");
  for (size_t k = 0; k < (size_t)res->P * res->total; k++) info->refined[k] = NAN;
  if (count)
    LBMC_CALL(lbmc_limit_answers("--limit refined", points, refined, &info->refined_answers));
  for (long c = 0; c < count; c++) {
    const json_t *answer = json_array_get(info->refined_answers, (size_t)c);
    lbmc_limit_values(answer, res->J, res->K, res->total,
                      info->refined + (size_t)at[c] * res->total,
                      info->refined_source + (size_t)at[c] * LBMC_METRICS);
    info->refined_reason[at[c]] = lbmc_limit_reason(answer);
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_info_limits(lbmc_info *info)
{
  const lbmc_results *res = info->res;
  json_t *points = json_array();
  long *at = malloc(sizeof *at * ((size_t)res->P + 1)), count = 0;
  lbmc_err err = LBMC_SUCCESS;
  info->limit = malloc(sizeof *info->limit * ((size_t)res->P * res->total + 1));
  info->limit_source = calloc((size_t)res->P * LBMC_METRICS + 1, sizeof *info->limit_source);
  if (!points || !at || !info->limit || !info->limit_source)
    err = LBMC_ERROR(LBMC_ERR_MEMORY, "--limit: out of memory");
  for (size_t k = 0; !err && k < (size_t)res->P * res->total; k++) info->limit[k] = NAN;
  for (long i = 0; !err && i < res->P; i++) /* the kept points, in one call */
    if (info->keep[i]) {
      json_array_append_new(points, lbmc_limit_point_of(res, i));
      at[count++] = i;
    }
  if (!err && count) err = lbmc_limit_answers("--limit", points, NULL, &info->limit_answers);
  for (long c = 0; !err && c < count; c++)
    lbmc_limit_values(json_array_get(info->limit_answers, (size_t)c), res->J, res->K, res->total,
                      info->limit + (size_t)at[c] * res->total,
                      info->limit_source + (size_t)at[c] * LBMC_METRICS);
  if (!err && info->limit_mode == LBMC_LIMIT_REFINED)
    err = lbmc_info_refined(info, points, at, count);
  json_decref(points);
  free(at);
  return err;
}

lbmc_err lbmc_info_rows(const lbmc_info *info, lbmc_table **t)
{
  const lbmc_results *res = info->res;
  const int A = info->grid ? info->grid->A : 0;
  int *kinds = calloc((size_t)A + 1, sizeof *kinds);
  lbmc_err err =
      kinds ? lbmc_info_table(info, t) : LBMC_ERROR(LBMC_ERR_MEMORY, "info: out of memory");
  for (int a = 0; !err && a < A; a++) kinds[a] = lbmc_info_axis_kind(info->grid, a);
  for (long i = 0; !err && i < res->P; i++) {
    if (!info->keep[i]) continue;
    for (int s = 0; !err && s < (info->nmetrics ? info->nmetrics : lbmc_metric_count(res->pairs));
         s++) {
      const int m = info->nmetrics ? info->metric[s].metric : s;
      const long e = info->nmetrics ? info->metric[s].entry : -1;
      const long size = (long)lbmc_metric_size(m, res->J, res->K);
      for (long x = e < 0 ? 0 : e; !err && x < (e < 0 ? size : e + 1); x++)
        err = lbmc_info_row(info, *t, kinds, i, m, x);
    }
  }
  free(kinds);
  if (err) lbmc_table_destroy(t);
  return err;
}
