/* Test-only, for the LD_PRELOAD shims (failwrite.c, failread.c): the path a file
 * descriptor was opened with. */
#ifndef LBMC_TEST_FD_PATH_H
#define LBMC_TEST_FD_PATH_H

#include <stdio.h>
#include <unistd.h>

/* The path of fd into path[len] (from /proc/self/fd; an unlinked file's ends with
 * " (deleted)"), "" when unknown. Returns path. */
static inline char *lbmc_fd_path(int fd, char *path, size_t len)
{
  char link[64];
  ssize_t n;
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  n = readlink(link, path, len - 1);
  path[n > 0 ? n : 0] = '\0';
  return path;
}

#endif
