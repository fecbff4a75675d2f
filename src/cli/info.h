/* Private: lbmc info, a results file's views (docs/results-format.md). cmd_info.c is the
 * command (options, the header, the formats); info_rows.c selects points (--where) and
 * metric entries (--metrics) and builds the tidy rows, one per point, metric and entry.
 * A further view (e.g. the paired comparisons of info_compare.c) is one more file that fills an
 * lbmc_table from the same lbmc_info and is printed like the rows (table.h), hooked into
 * cmd_info.c by its option and one call. */
#ifndef LBMC_INFO_H
#define LBMC_INFO_H

#include "../io/results.h"
#include "table.h"

/** A metric chosen by --metrics: its index and entry (-1: every entry). */
typedef struct {
  int metric;
  long entry;
} lbmc_info_metric;

#define LBMC_INFO_MAX_METRICS 64

/** A results file as lbmc info reads it, and what the options select. */
typedef struct {
  const char *path;
  lbmc_results *res;
  const lbmc_grid *grid; /* the file's /grid, or the one of its job text; NULL if unknown */
  lbmc_grid *own_grid;   /* the latter, owned */
  char *keep;            /* P: 1 for the points every --where keeps */
  lbmc_info_metric metric[LBMC_INFO_MAX_METRICS];
  int nmetrics; /* 0: the format's default */
  lbmc_format format;
  int width; /* of the text form; 0: no limit */
  /* --limit: P x total limits in the estimates' layout (NaN unknown) and P x
   * LBMC_METRICS sources (NULL unknown; strings of limit_answers), or NULL */
  double *limit;
  const char **limit_source;
  json_t *limit_answers;
  /* --limit refined (limit_mode LBMC_LIMIT_REFINED): the same of the refined mean field
   * x* + V/n at each point's n; a source NULL where unknown (the row gives the reason) */
  int limit_mode;
  double *refined;
  const char **refined_source;
  const char **refined_reason; /* P: why a point's metric has no refined value */
  json_t *refined_answers;
} lbmc_info;

/** Column name of a grid axis in the tidy rows: "pools[2].mu" -> "mu_2", "run.time" ->
 *  "time", other names unchanged (as lbmc_analysis.to_frame names them). */
const char *lbmc_info_axis_column(const char *axis, char *buf, size_t len);
/** The axis of g named `name` (its name, its key with "system.", or its column), or -1
 *  (also for g NULL). */
int lbmc_info_axis(const lbmc_grid *g, const char *name);
/** Narrow info->keep to the points that match spec, "axis=value,axis=value,...": an
 *  axis by its name (pools[2].mu) or column (mu_2), a value as written in the job or
 *  the same number; several values of one axis are alternatives. Errors: LBMC_ERR_ARG
 *  naming the axis or value and what is allowed. */
lbmc_err lbmc_info_where(lbmc_info *info, const char *spec);
/** Add the comma-separated metric names of spec (lbmc_metric_parse; a bare name of a
 *  metric with several entries means all of them). Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_info_metrics(lbmc_info *info, const char *spec);
/** The tidy rows of the kept points and chosen metrics (caller-owned): point, the grid
 *  axes (one column each), metric, entry, pool, k, level, mean, half_width, std_err (and
 *  the other estimate parts the file holds), with info->limit the limit (n -> inf) and
 *  (CSV, JSON) its source, with info->refined the refined value (limit_refined) and (CSV,
 *  JSON) its source or why it is unknown, engine, replicas, status, reason. Errors:
 *  LBMC_ERR_MEMORY. */
lbmc_err lbmc_info_rows(const lbmc_info *info, lbmc_table **t);
/** Paired comparisons (info_compare.c): for each scenario (the grid point
 *  without its routing axes) with a point of policy A and one of policy B (spec "A,B",
 *  as in /points/policy; same routers, stale and sampling when several), and each chosen
 *  metric entry (--metrics; default p_wait_or_block, mean_sojourn, messages_per_arrival;
 *  quantiles are left out), a row: the scenario, the entry, A's and B's estimates, the
 *  difference A - B and the ratio A / B with paired intervals over their first
 *  min(R_A, R_B) replicas (src/stats/ratio.c), the unpaired (Welch) half-width and the
 *  gain (unpaired over paired half-width). Errors: LBMC_ERR_ARG (a bad spec, no scenario
 *  with both policies, a file of layout 1 without the replicas' weights),
 *  LBMC_ERR_MEMORY. */
lbmc_err lbmc_info_compare(const lbmc_info *info, const char *spec, lbmc_table **t);

/** --limit: the limits of the kept points into info->limit and info->limit_source, by
 *  one call of the Python package (lbmc_limit_answers); with info->limit_mode
 *  LBMC_LIMIT_REFINED also the refined values into info->refined and
 *  info->refined_source, by a second call (each point at its own n). Errors: those of
 *  lbmc_limit_answers (the package missing, python3 failing), LBMC_ERR_MEMORY. */
lbmc_err lbmc_info_limits(lbmc_info *info);
/** lbmc info --wide: the metric entry and the axes of the rows and columns (NULL: the
 *  defaults, n and policy). */
typedef struct {
  const char *metric, *rows, *columns;
} lbmc_info_wide_spec;
/** The wide view (info_wide.c): one metric entry (spec->metric, one entry: p_wait,
 *  utilization[2]) of the kept points as a table with a row per value of the rows' axis
 *  (default n, else the first axis) and per value of the columns' axis (default policy,
 *  else the first axis varied apart from the rows; none for a one-axis grid) one cell,
 *  "estimate [lower, upper]" with " (n)" for not_stationary and "unstable" (text form), or
 *  the columns VALUE.mean, VALUE.lower, VALUE.upper, VALUE.status (CSV, JSON). Every other
 *  axis must have one value among the kept points (--where). legend[len] gets a line
 *  saying what the table shows and what its marks mean. Errors: LBMC_ERR_ARG (a metric
 *  that is not one entry, an unknown axis, rows and columns varied together, another axis
 *  with several values, no grid), LBMC_ERR_MEMORY. */
lbmc_err lbmc_info_wide(const lbmc_info *info, const lbmc_info_wide_spec *spec, lbmc_table **t,
                        char *legend, size_t len);

/** Kind of the values of axis a of g: 2 all integers, 1 all numbers ('inf' included), 0
 *  text. */
int lbmc_info_axis_kind(const lbmc_grid *g, int a);
/** The cell `col` of the last row of t: axis a's value at grid cell `index`, a number
 *  when the axis' kind (lbmc_info_axis_kind) says every value is one, else the text as
 *  written. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_info_axis_cell(lbmc_table *t, int col, const lbmc_grid *g, int a, int kind,
                             long index);
/** lbmc info --transient (info_transient.c): the transient estimates (/transient) of the
 *  kept points as rows, one per point, observation time and entry of the chosen
 *  transient metrics (spec: comma-separated names of lbmc_transient_metric_names, an
 *  entry as mean_queue[2] or tail[1][3], a bare name every entry; NULL: customers,
 *  mean_queue and p_wait for the text form, every metric for CSV and JSON): point, the
 *  grid axes, time, metric, entry, pool, k, mean, lower, upper (pointwise), band_lower,
 *  band_upper (simultaneous over the times), replicas. The text form shows at most
 *  about 40 times per point (every `step`-th and the last; *step set, 1 for CSV and
 *  JSON). Errors: LBMC_ERR_ARG (a file without /transient, an unknown metric or entry,
 *  naming what is allowed), LBMC_ERR_MEMORY. */
lbmc_err lbmc_info_transient(const lbmc_info *info, const char *spec, lbmc_table **t, long *step);

/** The first column of the grid axes in the rows' table (point is column 0). */
#define LBMC_INFO_FIRST_AXIS 1

#endif
