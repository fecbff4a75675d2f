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
/** The table of a point's estimates: one row per entry, its cell, std err and a note. */
void lbmc_cli_print_point(FILE *f, const lbmc_model *m, long K, const lbmc_estimates *e);
/** The estimates as JSON: per metric, mean, half_width, std_err, lower, upper, upper_bound
 *  (null where they do not exist) and flags (lists of names), in the metric's shape. */
json_t *lbmc_cli_json_estimates(const lbmc_estimates *e, int J, long K);
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
 *  partial results printed if a replica finished), those of the replicas, LBMC_ERR_MEMORY. */
lbmc_err lbmc_sim_run_point(const lbmc_job *job, const lbmc_model *m, const lbmc_run_options *o,
                            const char *engine, int json);

/** Install the handlers of SIGINT and SIGTERM (and SIGUSR1 if usr1) that set the
 *  returned flag to 1 (the program's one global: a handler can reach nothing else).
 *  Not collective; lbmc run calls it before MPI_Init. */
volatile sig_atomic_t *lbmc_cli_catch_stop_signals(int usr1);

/** Help text of the policies, one per line, each starting with `indent`. */
void lbmc_cli_print_policies(FILE *f, const char *indent);
/** The engines of the registry, one per line: "<indent><name> <summary>", in the order
 *  --engine auto tries them. */
void lbmc_cli_print_engines(FILE *f, const char *indent);

#endif
