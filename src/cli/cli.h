/* Private: the command-line program's commands and shared helpers. */
#ifndef LBMC_CLI_H
#define LBMC_CLI_H

#include <getopt.h>
#include <jansson.h>
#include <signal.h>
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
int lbmc_cmd_plot(int argc, char **argv);
int lbmc_cmd_completion(int argc, char **argv);

/** A command of the program: its name, function, one-line summary, long options
 *  (getopt's table ending with a zero entry; NULL: lbmc sim's, from the table of
 *  inputs, or none) and the files it takes (a glob, "*.h5", or NULL). */
typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
  const struct option *opts;
  const char *files;
} lbmc_command;

/** The commands, ending with an entry whose name is NULL (main.c). */
extern const lbmc_command lbmc_commands[];
/** The long options of lbmc run, lbmc info and lbmc plot. */
extern const struct option lbmc_run_opts[], lbmc_info_opts[], lbmc_plot_opts[];

/** lbmc run under srun: LBMC_ERR_ARG (the message printed by task 0 only) if Slurm says
 *  this step has several tasks while MPI gives it one rank: mpi_size < 0 before
 *  MPI_Init (judged from the environment: no PMI/PMIx variables), else the size of
 *  MPI_COMM_WORLD. Not collective. */
lbmc_err lbmc_cli_check_launch(int mpi_size);

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
/** The table of a point's estimates: one row per entry, its cell, the limit (n -> inf)
 *  when `limit` is not NULL (lbmc_limit_values' layout), the refined mean field x* + V/n
 *  when `refined` is not NULL (same layout; "-" where unknown), std err and a note;
 *  start_bias (NULL: none) as lbmc_point_start_bias, for the note of the entries flagged
 *  start_bias_widened (their bound and standard error before the widening). */
void lbmc_cli_print_point(FILE *f, const lbmc_model *m, long K, const lbmc_estimates *e,
                          const double *limit, const double *refined, const double *start_bias);
/** The estimates as JSON: per metric, mean, half_width, std_err, lower, upper, upper_bound
 *  (null where they do not exist) and flags (lists of names), in the metric's shape; with
 *  `limit` (not NULL), "limit" in the same shape (null where unknown, "inf" where
 *  infinite) and "limit_source" (text, or null), from lbmc_limit_values; with `refined`
 *  (not NULL) also "limit_refined" (x* + V/n, null where unknown) and
 *  "limit_refined_source" (its source, or where unknown the reason: refined_reason). */
json_t *lbmc_cli_json_estimates(const lbmc_estimates *e, int J, long K, const double *limit,
                                const char *const *sources, const double *refined,
                                const char *const *refined_sources, const char *refined_reason);
/** The pair statistics' tables as JSON (lbmc/point.h): per table ("joint", ...), its
 *  parts ("mean", "lower", "upper", "std_err") as nested lists [j][a][b] (within a
 *  pool) or [i][j][a][b] (across pools), null where a value does not exist. */
json_t *lbmc_cli_json_pairs(const lbmc_pair_estimates *pe);
/** A transient run's estimates as JSON: time, replicas, band ("bonferroni") and per metric
 *  mean, lower, upper, band_lower, band_upper, each with time the first axis, then pools,
 *  then levels (null where undefined: the interval quantities at the first time). */
json_t *lbmc_cli_json_transient(const lbmc_transient *t);
/** The same as a table (at most about 40 rows: every step-th time and the last). */
void lbmc_cli_print_transient(FILE *f, const lbmc_transient *t, double confidence);
/** The verdict's evidence as JSON. */
json_t *lbmc_cli_json_verdict(const lbmc_verdict *v);

/** The model's views, from its description (lbmc_model_describe): a paragraph of text,
 *  and a JSON object (n, lambda, rho, policy, routers, stale, sampling, pools: beta, mu,
 *  buffer ("inf" or an integer), servers, service, scv (null if infinite), mu_k),
 *  caller-owned. */
void lbmc_cli_print_model(FILE *f, const lbmc_model_description *d);
json_t *lbmc_cli_json_model(const lbmc_model_description *d);

/** lbmc sim's run of its point (sim_run.c): the job of one point its flags built, the
 *  point's model m (set up) and run options o, the engine that runs it; the replicas
 *  one after another through sequential mode's driver, then the point printed as a
 *  table, or as JSON with json = 1. Errors: LBMC_ERR_INTERRUPTED after a signal (the
 *  partial results printed if a replica finished), those of the replicas, LBMC_ERR_MEMORY.
 *  progress: LBMC_SIM_PROGRESS_* (--progress), every: seconds between two lines off a
 *  terminal (NaN: the default); limit: LBMC_LIMIT_* (--limit). */
lbmc_err lbmc_sim_run_point(const lbmc_job *job, const lbmc_model *m, const lbmc_run_options *o,
                            const char *engine, int json, int limit, int progress, double every);

/* ---- the limit column (limits.c; docs/limits.md) ---- */

struct lbmc_results_;

/** A point's parameters as python3 -m lbmc_analysis limit reads them (docs/limits.md,
 *  "The point and the result"): policy, lambda, n, routers, stale, sampling, K and pools
 *  [{beta, mu or mu_k, buffer, service}]; caller-owned. From a model's description with K
 *  tail levels, or from point i of a results file. */
json_t *lbmc_limit_point(const lbmc_model_description *d, long K);
json_t *lbmc_limit_point_of(const struct lbmc_results_ *res, long i);
/** The limits of `points` (a JSON list of lbmc_limit_point objects), by one call of
 *  python3 -m lbmc_analysis limit [extra...] --json POINTS: *answers is its list of
 *  results, one per point (caller's; json_decref). `what` names the option in messages
 *  ("--limit"); extra: more arguments (e.g. "--refined", "20"), NULL-terminated, or NULL.
 *  Errors: those of lbmc_python_run (the package missing, python3 failing: the message
 *  says where it looked and what python3 said); LBMC_ERR_FILE when the answer is not one
 *  result per point. Not collective. */
lbmc_err lbmc_limit_answers(const char *what, json_t *points, const char *const *extra,
                            json_t **answers);
/** One result laid out as a flat metric vector of `total` entries (J pools, K levels):
 *  values NaN where unknown, +-INFINITY where infinite; sources (if not NULL;
 *  lbmc_metric_count_in entries) the source of each metric's limit, strings owned by
 *  answer, NULL where unknown. */
void lbmc_limit_values(const json_t *answer, int J, long K, size_t total, double *values,
                       const char **sources);
/** A limit as the tables print it: "%.6g", "inf", or "-" when unknown. Returns buf. */
const char *lbmc_limit_cell(double x, char *buf, size_t len);

/** The columns --limit asks for: the n -> inf limit, or it and the refined mean field. */
enum { LBMC_LIMIT_NONE = 0, LBMC_LIMIT_PLAIN = 1, LBMC_LIMIT_REFINED = 2 };
/** The value of --limit (`what`, for messages) as getopt gave it (`value`: optarg of an
 *  optional argument, NULL when none): nothing, or "refined" (also as the next word,
 *  argv[optind], which is then consumed) -> *mode LBMC_LIMIT_PLAIN or LBMC_LIMIT_REFINED.
 *  Errors: LBMC_ERR_ARG naming the value and what is allowed. */
lbmc_err lbmc_limit_parse_mode(const char *what, const char *value, int argc, char **argv,
                               int *mode);
/** Why a refined answer (python3 -m lbmc_analysis limit --refined) has no value for a
 *  metric: its first note (e.g. "lwl(d) has no occupancy form"), else that the metric has
 *  no 1/n expansion (quantiles). A string of answer, or static. */
const char *lbmc_limit_reason(const json_t *answer);
/** --transient with --limit refined: the mean-field ODE x(t) and the refined x(t) +
 *  V(t)/n (Gast, Bortolussi & Tribastone 2019; lbmc_analysis.limits.transient_for_point)
 *  of the point (description d, K levels) from the run's start (o->init: empty or an
 *  explicit tail start) on the run's times (t), by one call of the Python package, put
 *  into `transient` (the object of lbmc_cli_json_transient): estimates.mean_queue and
 *  estimates.tail get "limit" (the ODE) and "limit_refined", time the first axis;
 *  "limit_source" says where they come from. A mean-field start has no ODE: a
 *  "limit_note" says so. Errors: those of lbmc_limit_answers; LBMC_ERR_FILE when the
 *  answer's times are not the run's. Not collective. */
lbmc_err lbmc_limit_transient(const lbmc_model_description *d, long K, const lbmc_run_options *o,
                              const lbmc_transient *t, json_t *transient);

/** --progress of lbmc sim and lbmc run, in the order of its words (src/io/inputs.h). */
enum { LBMC_SIM_PROGRESS_AUTO, LBMC_SIM_PROGRESS_ALWAYS, LBMC_SIM_PROGRESS_NEVER };
/** What --progress allows, for both commands' errors and help. */
#define LBMC_PROGRESS_ALLOWED                                                                      \
  "auto, always, never, or the seconds between two progress lines (a number >= 0)"

/** --progress WHEN, one vocabulary for lbmc sim and lbmc run: auto, always or never
 *  (*mode: LBMC_SIM_PROGRESS_*, *seconds NaN), or a number of seconds >= 0 between two
 *  progress lines (*mode LBMC_SIM_PROGRESS_ALWAYS, *seconds the number). Errors:
 *  LBMC_ERR_ARG naming `where`, the value and LBMC_PROGRESS_ALLOWED. */
lbmc_err lbmc_cli_parse_progress(const char *where, const char *text, int *mode, double *seconds);

/** Install the handlers of SIGINT and SIGTERM (and SIGUSR1 if usr1) that set the
 *  returned flag to 1 (the program's one global: a handler can reach nothing else).
 *  Not collective; lbmc run calls it before MPI_Init. */
volatile sig_atomic_t *lbmc_cli_catch_stop_signals(int usr1);

/** The error for an argument `arg` that is not an option of lbmc `command` (opts: its
 *  getopt_long table, ended by a NULL name), with "did you mean '--x'?" when arg looks
 *  like a typo of one (lbmc_suggest). Returns LBMC_ERR_ARG. */
lbmc_err lbmc_cli_unknown_option(const char *command, const char *arg, const struct option *opts);

/** Help text of the policies, one per line, each starting with `indent`. */
void lbmc_cli_print_policies(FILE *f, const char *indent);
/** The engines of the registry, one per line: "<indent><name> <summary>", in the order
 *  --engine auto tries them. */
void lbmc_cli_print_engines(FILE *f, const char *indent);

#endif
