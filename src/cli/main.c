/* lbmc: the command-line program. The commands are one table (lbmc_commands), which
 * the usage text and the bash completion (completion.c) read. */
#include <stdio.h>
#include <string.h>

#include "../io/h5file.h"
#include "cli.h"
#include "lbmc/version.h"

const lbmc_command lbmc_commands[] = {
    {"sim", lbmc_cmd_sim, "simulate one system given by flags (no file)", NULL, NULL},
    {"run", lbmc_cmd_run, "run a job file's grid of systems under MPI, write HDF5 results",
     lbmc_run_opts, "*.y*ml"},
    {"info", lbmc_cmd_info, "print a results file as a table, CSV or JSON", lbmc_info_opts,
     "*.h5*"},
    {"merge", lbmc_cmd_merge, "combine result files (shards) of one job", NULL, "*.h5"},
    {"plot", lbmc_cmd_plot, "draw a metric against a grid axis (the Python package)",
     lbmc_plot_opts, "*.h5"},
    {"completion", lbmc_cmd_completion, "print the bash completion script (lbmc completion bash)",
     NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static void lbmc_usage(FILE *f)
{
  fputs("usage: lbmc COMMAND [options]\n"
        "\n"
        "Monte Carlo experiments on large-scale load distribution systems.\n"
        "\n"
        "commands:\n",
        f);
  for (const lbmc_command *c = lbmc_commands; c->name; c++)
    fprintf(f, "  %-11s %s\n", c->name, c->summary);
  fputs("\n'lbmc COMMAND --help' describes a command. 'lbmc --version' prints the version.\n", f);
}

int main(int argc, char **argv)
{
  lbmc_h5_guard_exit(); /* before any HDF5 call: no crash at exit after a failed close */
  if (argc < 2) {
    lbmc_usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    lbmc_usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("lbmc %s (revision %s, %s build)\n", LBMC_VERSION, lbmc_revision(), lbmc_build_type());
    return 0;
  }
  for (const lbmc_command *c = lbmc_commands; c->name; c++)
    if (strcmp(argv[1], c->name) == 0) return c->run(argc - 1, argv + 1);
  fprintf(stderr, "lbmc: error: '%s' is not a command; allowed:", argv[1]);
  for (const lbmc_command *c = lbmc_commands; c->name; c++)
    fprintf(stderr, "%s %s", c == lbmc_commands ? "" : ",", c->name);
  fprintf(stderr, " (see lbmc --help)\n");
  return 2;
}
