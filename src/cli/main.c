/* lbmc: the command-line program. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "lbmc/version.h"

static void lbmc_usage(FILE *f)
{
  fputs("usage: lbmc COMMAND [options]\n"
        "\n"
        "Monte Carlo experiments on large-scale load distribution systems.\n"
        "\n"
        "commands:\n"
        "  sim     simulate one system given by flags (no file)\n"
        "  run     run a job file's grid of systems under MPI, write HDF5 results\n"
        "  info    print a results file as a table\n"
        "  merge   combine result files (shards) of one job\n"
        "\n"
        "'lbmc COMMAND --help' describes a command. 'lbmc --version' prints the version.\n",
        f);
}

int main(int argc, char **argv)
{
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
  if (strcmp(argv[1], "sim") == 0) return lbmc_cmd_sim(argc - 1, argv + 1);
  if (strcmp(argv[1], "run") == 0) return lbmc_cmd_run(argc - 1, argv + 1);
  if (strcmp(argv[1], "info") == 0) return lbmc_cmd_info(argc - 1, argv + 1);
  if (strcmp(argv[1], "merge") == 0) return lbmc_cmd_merge(argc - 1, argv + 1);
  fprintf(stderr,
          "lbmc: error: '%s' is not a command; allowed: sim, run, info, merge (see lbmc --help)\n",
          argv[1]);
  return 2;
}
