/* lbmc plot: a figure from a results file by the Python package (analysis/): runs
 * /usr/bin/python3 -m lbmc_analysis plot with the same arguments, the package found as
 * python.h says. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "python.h"

/* The flags of python3 -m lbmc_analysis plot (analysis/lbmc_analysis/__main__.py), for
 * the bash completion; the Python side reads and checks them. */
const struct option lbmc_plot_opts[] = {
    {"metric", required_argument, 0, 0}, {"x", required_argument, 0, 0},
    {"by", required_argument, 0, 0},     {"where", required_argument, 0, 0},
    {"output", required_argument, 0, 0}, {"linear-x", no_argument, 0, 0},
    {"linear-y", no_argument, 0, 0},     {"bands", no_argument, 0, 0},
    {"no-reference", no_argument, 0, 0}, {"title", required_argument, 0, 0},
    {"dpi", required_argument, 0, 0},    {0, 0, 0, 0}};

int lbmc_cmd_plot(int argc, char **argv)
{
  const char *python = LBMC_PYTHON;
  char **args = calloc((size_t)argc + 4, sizeof *args);
  lbmc_err err;
  if (!args) return lbmc_exit_status(LBMC_ERROR(LBMC_ERR_MEMORY, "plot: out of memory"));
  if ((err = lbmc_python_path("lbmc plot"))) {
    free(args);
    return lbmc_exit_status(err);
  }
  args[0] = (char *)python;
  args[1] = "-m";
  args[2] = "lbmc_analysis";
  args[3] = "plot";
  for (int i = 1; i < argc; i++) args[3 + i] = argv[i];
  fflush(stdout);
  execv(python, args);
  free(args);
  return lbmc_exit_status(LBMC_ERROR(LBMC_ERR_FILE,
                                     "lbmc plot: cannot run %s (%s); it needs Debian's python3 "
                                     "with python3-h5py, -numpy, -xarray and -matplotlib",
                                     python, strerror(errno)));
}
