/* Test-only LD_PRELOAD shim (tests/run/files.sh): flock() fails with ENOLCK ("No locks
 * available"), as on a file system without locks (NFS without lockd, some Lustre
 * mounts). With LBMC_NOFLOCK_MATCH set, only for files whose path contains that text. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int flock(int fd, int op)
{
  const char *match = getenv("LBMC_NOFLOCK_MATCH");
  int (*real)(int, int) = (int (*)(int, int))dlsym(RTLD_NEXT, "flock");
  if (match && *match) {
    char link[64], path[PATH_MAX];
    ssize_t n;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof path - 1);
    path[n > 0 ? n : 0] = '\0';
    if (!strstr(path, match)) return real(fd, op);
  }
  errno = ENOLCK;
  return -1;
}
