/* lbmc info --wide METRIC (info.h): one metric entry as a table the way a paper's table
 * reads, rows one grid axis (default n) and columns another (default policy); every other
 * axis must have one value among the points kept (--where), so that a cell is one point.
 * Text: a cell is "estimate [lower, upper]" with a mark for a verdict that is not ok;
 * CSV and JSON: per column value its estimate, lower and upper ends and status. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "info.h"
#include "lbmc/check.h"
#include "lbmc/metrics.h"
#include "lbmc/point.h"

/* The text form's marks of the verdicts that are not ok (the legend under the table). */
#define LBMC_WIDE_MARK_NS       " (n)"
#define LBMC_WIDE_MARK_UNSTABLE "unstable"

/* The axis named `name` for --rows or --columns, or an error naming the allowed axes. */
static lbmc_err lbmc_wide_axis(const lbmc_info *info, const char *flag, const char *name, int *a)
{
  const lbmc_grid *g = info->grid;
  char allowed[1024] = "";
  size_t used = 0;
  *a = lbmc_info_axis(g, name);
  if (*a >= 0) return LBMC_SUCCESS;
  for (int k = 0; k < g->A && used < sizeof allowed; k++)
    used += (size_t)snprintf(allowed + used, sizeof allowed - used, "%s%s", k ? ", " : "",
                             g->axis_name[k]);
  return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not a grid axis of %s; allowed: %s", flag, name,
                    info->path, allowed);
}

/* The default axes: rows n (else the first axis), columns policy (else the first other
 * axis; -1 when the grid has one axis). */
static void lbmc_wide_defaults(const lbmc_grid *g, int *row, int *col)
{
  if (*row < 0) *row = lbmc_info_axis(g, "n");
  if (*row < 0 || (*col >= 0 && *row == *col))
    for (int a = 0; a < g->A && (*row < 0 || *row == *col); a++) *row = a;
  if (*col < 0) *col = lbmc_info_axis(g, "policy");
  if (*col < 0 || *col == *row || g->axis_dim[*col] == g->axis_dim[*row]) {
    *col = -1;
    for (int a = 0; a < g->A && *col < 0; a++)
      if (g->axis_dim[a] != g->axis_dim[*row]) *col = a;
  }
}

/* Every axis outside the dimensions of the rows and columns has one value among the kept
 * points; else an error that names it, its values and the ways out. */
static lbmc_err lbmc_wide_fixed(const lbmc_info *info, int row, int col)
{
  const lbmc_grid *g = info->grid;
  const lbmc_results *res = info->res;
  for (int a = 0; a < g->A; a++) {
    long first = -1;
    if (g->axis_dim[a] == g->axis_dim[row] || (col >= 0 && g->axis_dim[a] == g->axis_dim[col]))
      continue;
    for (long i = 0; i < res->P; i++) {
      long v;
      if (!info->keep[i]) continue;
      v = lbmc_grid_position(g, a, res->pt[i].index);
      if (first < 0) first = v;
      if (v != first)
        return LBMC_ERROR(LBMC_ERR_ARG,
                          "--wide: the axis %s has several values among the points (%s, %s, ...): "
                          "keep one with --where %s=VALUE, or make it the rows or the columns "
                          "(--rows %s, --columns %s)",
                          g->axis_name[a], g->axis_value[g->axis_first[a] + first],
                          g->axis_value[g->axis_first[a] + v], g->axis_name[a], g->axis_name[a],
                          g->axis_name[a]);
    }
  }
  return LBMC_SUCCESS;
}

/* used[v] = 1 for the values v of axis a that kept points have (a < 0: one value). */
static void lbmc_wide_values(const lbmc_info *info, int a, char *used)
{
  const lbmc_results *res = info->res;
  if (a < 0) {
    used[0] = 1;
    return;
  }
  for (long i = 0; i < res->P; i++)
    if (info->keep[i]) used[lbmc_grid_position(info->grid, a, res->pt[i].index)] = 1;
}

/* The columns: the rows' axis, then per value of the columns' axis one cell (text) or its
 * estimate, lower, upper and status (CSV, JSON), named "VALUE" or "VALUE.mean", ... */
static lbmc_err lbmc_wide_table(const lbmc_info *info, int row, int col, const char *colused,
                                const char *metric, lbmc_table **t)
{
  static const char *const parts[] = {"mean", "lower", "upper", "status"};
  const lbmc_grid *g = info->grid;
  const int per = info->format == LBMC_FORMAT_TABLE ? 1 : 4;
  const long C = col >= 0 ? g->axis_length[col] : 1;
  char **names = calloc((size_t)(C * per + 1), sizeof *names), head[64];
  int n = 0;
  lbmc_err err = names ? LBMC_SUCCESS : LBMC_ERROR(LBMC_ERR_MEMORY, "info: out of memory");
  if (!err) names[n++] = strdup(lbmc_info_axis_column(g->axis_name[row], head, sizeof head));
  for (long v = 0; !err && v < C; v++) {
    const char *value = col >= 0 ? g->axis_value[g->axis_first[col] + v] : metric;
    if (!colused[v]) continue;
    for (int p = 0; p < per; p++) {
      size_t len = strlen(value) + 16;
      names[n] = malloc(len);
      if (names[n]) snprintf(names[n], len, per > 1 ? "%s.%s" : "%s", value, parts[p]);
      n++;
    }
  }
  for (int c = 0; !err && c < n; c++)
    if (!names[c]) err = LBMC_ERROR(LBMC_ERR_MEMORY, "info: out of memory");
  if (!err) err = lbmc_table_create(n, (const char *const *)names, t);
  for (int c = 0; names && c < n; c++) free(names[c]);
  free(names);
  return err;
}

/* The cells of point i's entry k from column c: the text cell with its mark, or the
 * estimate, the ends and the status. *marks gathers the verdicts seen (bit = status). */
static lbmc_err lbmc_wide_cells(const lbmc_info *info, lbmc_table *t, int c, long i, size_t k,
                                unsigned *marks)
{
  const lbmc_results *res = info->res;
  const lbmc_estimates *e = &res->est;
  const lbmc_status status = res->pt[i].v.status;
  char cell[192];
  *marks |= 1u << status;
  if (info->format != LBMC_FORMAT_TABLE) {
    if (status != LBMC_STATUS_UNSTABLE) {
      lbmc_table_real(t, c, e->estimate[k]);
      lbmc_table_real(t, c + 1, e->lower[k]);
      lbmc_table_real(t, c + 2, e->upper[k]);
    }
    return lbmc_table_text(t, c + 3, lbmc_status_name(status));
  }
  if (status == LBMC_STATUS_UNSTABLE) return lbmc_table_text(t, c, LBMC_WIDE_MARK_UNSTABLE);
  lbmc_cli_cell(cell, sizeof cell - sizeof LBMC_WIDE_MARK_NS, e->estimate[k], e->lower[k],
                e->upper[k], e->upper_bound[k], e->flags[k]);
  if (status == LBMC_STATUS_NOT_STATIONARY) strcat(cell, LBMC_WIDE_MARK_NS);
  return lbmc_table_text(t, c, cell);
}

/* The rows: one per value of the rows' axis that a kept point has, its cells from the
 * kept point of each column value ("-" or empty where there is none). */
static lbmc_err lbmc_wide_fill(const lbmc_info *info, int row, int col, const char *rowused,
                               const char *colused, size_t off, lbmc_table *t, unsigned *marks)
{
  const lbmc_grid *g = info->grid;
  const lbmc_results *res = info->res;
  const int per = info->format == LBMC_FORMAT_TABLE ? 1 : 4;
  for (long r = 0; r < g->axis_length[row]; r++) {
    const char *value = g->axis_value[g->axis_first[row] + r];
    double x;
    if (!rowused[r]) continue;
    LBMC_CALL(lbmc_table_add_row(t));
    if (lbmc_read_real(value, &x) && x == floor(x) && fabs(x) < 9e15 && !strpbrk(value, "."))
      lbmc_table_int(t, 0, (long)x);
    else
      LBMC_CALL(lbmc_table_text(t, 0, value));
    for (long i = 0; i < res->P; i++) {
      int c = 1;
      long v;
      if (!info->keep[i] || lbmc_grid_position(g, row, res->pt[i].index) != r) continue;
      v = col >= 0 ? lbmc_grid_position(g, col, res->pt[i].index) : 0;
      for (long u = 0; u < v; u++) c += colused[u] ? per : 0;
      LBMC_CALL(lbmc_wide_cells(info, t, c, i, (size_t)i * res->total + off, marks));
    }
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_info_wide(const lbmc_info *info, const lbmc_info_wide_spec *spec, lbmc_table **t,
                        char *legend, size_t len)
{
  const lbmc_grid *g = info->grid;
  const lbmc_results *res = info->res;
  int m, row = -1, col = -1;
  long entry;
  char *rowused = NULL, *colused = NULL, name[64];
  unsigned marks = 0;
  lbmc_err err;
  *t = NULL;
  *legend = '\0';
  LBMC_CALL(lbmc_metric_parse("--wide", spec->metric, res->J, res->K, 0, &m, &entry));
  if (!g || g->A == 0)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--wide: %s has no grid axes to make rows of; use lbmc info "
                      "without --wide",
                      info->path);
  if (spec->rows) LBMC_CALL(lbmc_wide_axis(info, "--rows", spec->rows, &row));
  if (spec->columns) LBMC_CALL(lbmc_wide_axis(info, "--columns", spec->columns, &col));
  if (row >= 0 && col >= 0 && g->axis_dim[row] == g->axis_dim[col])
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--rows %s, --columns %s: %s; allowed: two axes that vary independently",
                      g->axis_name[row], g->axis_name[col],
                      row == col ? "the same axis" : "the axes are varied together");
  lbmc_wide_defaults(g, &row, &col);
  LBMC_CALL(lbmc_wide_fixed(info, row, col));
  rowused = calloc((size_t)g->axis_length[row] + 1, 1);
  colused = calloc((size_t)(col >= 0 ? g->axis_length[col] : 1) + 1, 1);
  if (!rowused || !colused) {
    free(rowused);
    free(colused);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "info: out of memory");
  }
  lbmc_wide_values(info, row, rowused);
  lbmc_wide_values(info, col, colused);
  lbmc_metric_entry_name(m, entry, res->J, res->K, name, sizeof name);
  err = lbmc_wide_table(info, row, col, colused, name, t);
  if (!err)
    err = lbmc_wide_fill(info, row, col, rowused, colused,
                         lbmc_metric_offset(m, res->J, res->K) + (size_t)entry, *t, &marks);
  if (!err)
    snprintf(legend, len, "%s by %s (rows)%s%s%s%s%s", name, g->axis_name[row],
             col >= 0 ? " and " : "", col >= 0 ? g->axis_name[col] : "",
             col >= 0 ? " (columns)" : "",
             marks & (1u << LBMC_STATUS_NOT_STATIONARY)
                 ? "; (n): not_stationary, the data cannot tell that the run reached its "
                   "steady state (lbmc info without --wide gives the reasons)"
                 : "",
             marks & (1u << LBMC_STATUS_UNSTABLE) ? "; unstable: proven, no estimate" : "");
  free(rowused);
  free(colused);
  if (err) lbmc_table_destroy(t);
  return err;
}
