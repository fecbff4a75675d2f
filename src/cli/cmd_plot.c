/* lbmc plot: a figure from a results file by the Python package (analysis/):
 * runs /usr/bin/python3 -m lbmc_analysis plot with the same arguments, the package found
 * where `cmake --install` puts it (share/lbmc/python next to the program's bin/) or in
 * the source tree lbmc was built from (analysis/), whichever comes first. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifndef LBMC_SOURCE_DIR
#define LBMC_SOURCE_DIR ""
#endif
#ifndef LBMC_PYTHON_DIR /* the package's place relative to the program's bin/ */
#define LBMC_PYTHON_DIR "../share/lbmc/python"
#endif
#define LBMC_PYTHON "/usr/bin/python3"

/* The flags of python3 -m lbmc_analysis plot (analysis/lbmc_analysis/__main__.py), for
 * the bash completion; the Python side reads and checks them. */
const struct option lbmc_plot_opts[] = {
    {"metric", required_argument, 0, 0}, {"x", required_argument, 0, 0},
    {"by", required_argument, 0, 0},     {"where", required_argument, 0, 0},
    {"output", required_argument, 0, 0}, {"linear-x", no_argument, 0, 0},
    {"linear-y", no_argument, 0, 0},     {"bands", no_argument, 0, 0},
    {"no-reference", no_argument, 0, 0}, {"title", required_argument, 0, 0},
    {"dpi", required_argument, 0, 0},    {0, 0, 0, 0}};

/* Does dir hold the package (dir/lbmc_analysis/__init__.py)? */
static int lbmc_plot_has_package(const char *dir)
{
  char path[2 * PATH_MAX];
  if (snprintf(path, sizeof path, "%s/lbmc_analysis/__init__.py", dir) >= (int)sizeof path)
    return 0;
  return *dir && access(path, R_OK) == 0;
}

/* The directory to put on PYTHONPATH: $LBMC_ANALYSIS_DIR if set (only it), else the
 * installed package next to the program, else the source tree's analysis/; tried[]
 * lists where it looked. 0 if none holds the package. */
static int lbmc_plot_find(char *dir, size_t len, char *tried, size_t tlen)
{
  const char *env = getenv("LBMC_ANALYSIS_DIR");
  char exe[PATH_MAX], *slash;
  ssize_t n;
  tried[0] = '\0';
  if (env) {
    snprintf(dir, len, "%s", env);
    snprintf(tried, tlen, "%s (LBMC_ANALYSIS_DIR)", env);
    return lbmc_plot_has_package(dir);
  }
  n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    if ((slash = strrchr(exe, '/'))) *slash = '\0';
    snprintf(dir, len, "%s/%s", exe, LBMC_PYTHON_DIR);
    snprintf(tried, tlen, "%s", dir);
    if (lbmc_plot_has_package(dir)) return 1;
  }
  snprintf(dir, len, "%s/analysis", LBMC_SOURCE_DIR);
  snprintf(tried + strlen(tried), tlen - strlen(tried), "%s%s", *tried ? ", " : "", dir);
  return lbmc_plot_has_package(dir);
}

int lbmc_cmd_plot(int argc, char **argv)
{
  char dir[PATH_MAX + 64], tried[3 * PATH_MAX], path[4 * PATH_MAX];
  const char *old = getenv("PYTHONPATH"), *python = LBMC_PYTHON;
  char **args = calloc((size_t)argc + 4, sizeof *args);
  if (!args) return lbmc_exit_status(LBMC_ERROR(LBMC_ERR_MEMORY, "plot: out of memory"));
  if (!lbmc_plot_find(dir, sizeof dir, tried, sizeof tried)) {
    free(args);
    return lbmc_exit_status(LBMC_ERROR(
        LBMC_ERR_FILE,
        "lbmc plot needs the Python package lbmc_analysis, found neither installed nor in the "
        "source tree (looked in %s): install lbmc with cmake --install, or set "
        "LBMC_ANALYSIS_DIR to the folder holding lbmc_analysis/ (analysis/ of the sources)",
        tried));
  }
  snprintf(path, sizeof path, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
  setenv("PYTHONPATH", path, 1);
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
