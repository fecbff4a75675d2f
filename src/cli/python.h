/* Private: the Python package lbmc_analysis as the commands reach it (python.c): lbmc plot
 * hands it the process, --limit (limits.c) reads what it prints. Not collective. */
#ifndef LBMC_CLI_PYTHON_H
#define LBMC_CLI_PYTHON_H

#include <stddef.h>

#include "lbmc/error.h"

/** The interpreter: Debian's python3, which has numpy, scipy, h5py and xarray (the first
 *  python3 on PATH may lack them). */
#define LBMC_PYTHON "/usr/bin/python3"

/** The directory holding lbmc_analysis/: $LBMC_ANALYSIS_DIR if set (only it), else the
 *  installed package next to the program (share/lbmc/python), else the source tree's
 *  analysis/; tried[tlen] lists where it looked. 1 if found, else 0. */
int lbmc_python_find(char *dir, size_t len, char *tried, size_t tlen);

/** Put the package's directory first on PYTHONPATH (of this process and its children).
 *  `what` names the command in the message. Errors: LBMC_ERR_FILE naming where it looked
 *  and how to point lbmc at the package. */
lbmc_err lbmc_python_path(const char *what);

/** Run LBMC_PYTHON -m lbmc_analysis args... (args ends with NULL, at most 60 of them) and
 *  return its standard output in *out (NUL-terminated, caller frees). Errors:
 *  LBMC_ERR_FILE: the package not found (lbmc_python_path), python3 cannot start, or it
 *  fails (the message holds its standard error); LBMC_ERR_MEMORY. */
lbmc_err lbmc_python_run(const char *what, const char *const *args, char **out);

#endif
