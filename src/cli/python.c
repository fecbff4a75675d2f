/* The Python package lbmc_analysis (analysis/) as the commands reach it: found where
 * `cmake --install` puts it (share/lbmc/python next to the program's bin/) or in the
 * source tree lbmc was built from (analysis/), or where $LBMC_ANALYSIS_DIR says; run as
 * /usr/bin/python3 -m lbmc_analysis ARGS (Debian's python3, which has numpy, scipy,
 * h5py). lbmc plot hands it the process (exec); --limit reads its output (python.h). */
#include "python.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef LBMC_SOURCE_DIR
#define LBMC_SOURCE_DIR ""
#endif
#ifndef LBMC_PYTHON_DIR /* the package's place relative to the program's bin/ */
#define LBMC_PYTHON_DIR "../share/lbmc/python"
#endif

/* Does dir hold the package (dir/lbmc_analysis/__init__.py)? */
static int lbmc_python_has_package(const char *dir)
{
  char path[2 * PATH_MAX];
  if (snprintf(path, sizeof path, "%s/lbmc_analysis/__init__.py", dir) >= (int)sizeof path)
    return 0;
  return *dir && access(path, R_OK) == 0;
}

int lbmc_python_find(char *dir, size_t len, char *tried, size_t tlen)
{
  const char *env = getenv("LBMC_ANALYSIS_DIR");
  char exe[PATH_MAX], *slash;
  ssize_t n;
  tried[0] = '\0';
  if (env) {
    snprintf(dir, len, "%s", env);
    snprintf(tried, tlen, "%s (LBMC_ANALYSIS_DIR)", env);
    return lbmc_python_has_package(dir);
  }
  n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    if ((slash = strrchr(exe, '/'))) *slash = '\0';
    snprintf(dir, len, "%s/%s", exe, LBMC_PYTHON_DIR);
    snprintf(tried, tlen, "%s", dir);
    if (lbmc_python_has_package(dir)) return 1;
  }
  snprintf(dir, len, "%s/analysis", LBMC_SOURCE_DIR);
  snprintf(tried + strlen(tried), tlen - strlen(tried), "%s%s", *tried ? ", " : "", dir);
  return lbmc_python_has_package(dir);
}

lbmc_err lbmc_python_path(const char *what)
{
  char dir[PATH_MAX + 64], tried[3 * PATH_MAX], path[4 * PATH_MAX];
  const char *old = getenv("PYTHONPATH");
  if (!lbmc_python_find(dir, sizeof dir, tried, sizeof tried))
    return LBMC_ERROR(LBMC_ERR_FILE,
                      "%s needs the Python package lbmc_analysis, found neither installed nor in "
                      "the source tree (looked in %s): install lbmc with cmake --install, or set "
                      "LBMC_ANALYSIS_DIR to the folder holding lbmc_analysis/ (analysis/ of the "
                      "sources)",
                      what, tried);
  snprintf(path, sizeof path, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
  setenv("PYTHONPATH", path, 1);
  return LBMC_SUCCESS;
}

/* Append n bytes to the growing buffer *buf (*len used, *cap allocated). 0, or -1. */
static int lbmc_python_append(char **buf, size_t *len, size_t *cap, const char *bytes, size_t n)
{
  if (*len + n + 1 > *cap) {
    size_t want = 2 * (*len + n + 1);
    char *grown = realloc(*buf, want);
    if (!grown) return -1;
    *buf = grown;
    *cap = want;
  }
  memcpy(*buf + *len, bytes, n);
  *len += n;
  (*buf)[*len] = '\0';
  return 0;
}

/* The child: stdout and stderr to the pipes, then python3 -m lbmc_analysis args. */
static void lbmc_python_child(int out, int err, const char *const *args)
{
  const char *argv[64] = {LBMC_PYTHON, "-m", "lbmc_analysis"};
  int n = 3;
  for (; *args && n < 63; args++) argv[n++] = *args;
  argv[n] = NULL;
  dup2(out, STDOUT_FILENO);
  dup2(err, STDERR_FILENO);
  execv(LBMC_PYTHON, (char *const *)argv);
  fprintf(stderr, "cannot run %s (%s)", LBMC_PYTHON, strerror(errno));
  _exit(127);
}

lbmc_err lbmc_python_run(const char *what, const char *const *args, char **out)
{
  int po[2], pe[2], status = 0, oom = 0;
  char *text = NULL, *msg = NULL, chunk[4096];
  size_t tlen = 0, tcap = 0, mlen = 0, mcap = 0;
  struct pollfd fds[2];
  pid_t pid;
  *out = NULL;
  LBMC_CALL(lbmc_python_path(what));
  if (pipe(po) != 0) return LBMC_ERROR(LBMC_ERR_FILE, "%s: cannot make a pipe", what);
  if (pipe(pe) != 0) {
    close(po[0]), close(po[1]);
    return LBMC_ERROR(LBMC_ERR_FILE, "%s: cannot make a pipe", what);
  }
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid == 0) {
    close(po[0]), close(pe[0]);
    lbmc_python_child(po[1], pe[1], args);
  }
  close(po[1]), close(pe[1]);
  if (pid < 0) {
    close(po[0]), close(pe[0]);
    return LBMC_ERROR(LBMC_ERR_FILE, "%s: cannot start %s (%s)", what, LBMC_PYTHON,
                      strerror(errno));
  }
  fds[0] = (struct pollfd){po[0], POLLIN, 0};
  fds[1] = (struct pollfd){pe[0], POLLIN, 0};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) { /* both pipes, so that neither fills up */
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int k = 0; k < 2; k++) {
      ssize_t got;
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      got = read(fds[k].fd, chunk, sizeof chunk);
      if (got <= 0) {
        close(fds[k].fd);
        fds[k].fd = -1;
      } else if (k == 0) {
        oom |= lbmc_python_append(&text, &tlen, &tcap, chunk, (size_t)got);
      } else {
        oom |= lbmc_python_append(&msg, &mlen, &mcap, chunk, (size_t)got);
      }
    }
  }
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (oom || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    lbmc_err err;
    while (mlen && (msg[mlen - 1] == '\n' || msg[mlen - 1] == ' ')) msg[--mlen] = '\0';
    /* Exit status 2 is the package's own refusal of its input (docs/limits.md): it ran, so
     * advice about installing numpy and scipy would mislead. */
    bool refused = WIFEXITED(status) && WEXITSTATUS(status) == 2;
    err = oom ? LBMC_ERROR(LBMC_ERR_MEMORY, "%s: out of memory reading lbmc_analysis", what)
              : LBMC_ERROR(LBMC_ERR_FILE, "%s: %s -m lbmc_analysis failed (%s %d)%s%s%s", what,
                           LBMC_PYTHON, WIFEXITED(status) ? "exit status" : "signal",
                           WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                           mlen ? ": " : "", mlen ? msg : "",
                           refused ? ""
                                   : "; it needs Debian's python3 with python3-numpy and -scipy");
    free(text);
    free(msg);
    return err;
  }
  free(msg);
  *out = text ? text : strdup("");
  return *out ? LBMC_SUCCESS : LBMC_ERROR(LBMC_ERR_MEMORY, "%s: out of memory", what);
}
