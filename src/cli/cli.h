/* Private: the command-line program's commands and shared helpers. */
#ifndef LBMC_CLI_H
#define LBMC_CLI_H

#include <jansson.h>
#include <stdio.h>

#include "lbmc/error.h"
#include "lbmc/job.h"
#include "lbmc/model.h"
#include "lbmc/point.h"
#include "lbmc/sim.h"

/* Each command returns the process exit status (0, 1 or 2). */
int lbmc_cmd_sim(int argc, char **argv);
int lbmc_cmd_run(int argc, char **argv);
int lbmc_cmd_merge(int argc, char **argv);
int lbmc_cmd_info(int argc, char **argv);

/** Parse "beta:mu:buffer[,beta:mu:buffer...]" into arrays of LBMC_MAX_POOLS entries;
 *  `where` names the source ("--pools"). Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_cli_parse_pools(const char *where, const char *text, int *J, double *beta, double *mu,
                              long *buffer);

/** The interval level as a percentage without rounding to 100 ("95%", "99.9999999%"). */
const char *lbmc_cli_level(double confidence, char *buf, size_t len);
/** One estimate as a table cell: "0.4998 [0.4962, 0.5034]", "none observed, < 3e-06",
 *  "0 (none observed)", "unknown (above the histogram's range, > X)", "1.2 [0.9, ?]" (an
 *  open end), "1.2 (no interval)", "no data". Returns buf. */
const char *lbmc_cli_cell(char *buf, size_t len, double est, double lower, double upper,
                          double bound, unsigned flags);
/** The status line (and "run longer" with the suggested time) of a verdict. */
void lbmc_cli_print_verdict(FILE *f, const lbmc_verdict *v);
/** The table of a point's estimates: one row per entry, its cell, std err and a note. */
void lbmc_cli_print_point(FILE *f, const lbmc_model *m, long K, const lbmc_estimates *e);
/** The estimates as JSON: per metric, mean, half_width, std_err, lower, upper, upper_bound
 *  (null where they do not exist) and flags (lists of names), in the metric's shape. */
json_t *lbmc_cli_json_estimates(const lbmc_estimates *e, int J, long K);
/** The verdict's evidence as JSON. */
json_t *lbmc_cli_json_verdict(const lbmc_verdict *v);

/** Print a one-paragraph description of the model. */
void lbmc_cli_print_model(FILE *f, const lbmc_model *m);

/** lbmc info FILE --compare A,B (info_compare.c): per scenario of res (its job parsed, or
 *  NULL) and per metric entry metric[c], entry[c] (names[c], nc of them; quantiles are
 *  skipped), the paired difference and ratio of policy A's and B's estimates, with the
 *  unpaired half-width for comparison. Errors: LBMC_ERR_ARG (a bad spec, no scenario
 *  with both, a file without per-replica weights), LBMC_ERR_MEMORY. */
struct lbmc_results_;
lbmc_err lbmc_info_compare(const struct lbmc_results_ *res, const lbmc_job *job, const char *spec,
                           const int *metric, const long *entry, const char *const *names, int nc);

/** Help text of the policies, one per line, each starting with `indent`. */
void lbmc_cli_print_policies(FILE *f, const char *indent);

#endif
