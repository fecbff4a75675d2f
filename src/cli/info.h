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
} lbmc_info;

/** Column name of a grid axis in the tidy rows: "pools[2].mu" -> "mu_2", "run.time" ->
 *  "time", other names unchanged (as lbmc_analysis.to_frame names them). */
const char *lbmc_info_axis_column(const char *axis, char *buf, size_t len);
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
 *  the other estimate parts the file holds), engine, replicas, status, reason. Errors:
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

/** The first column of the grid axes in the rows' table (point is column 0). */
#define LBMC_INFO_FIRST_AXIS 1

#endif
