/* Test-only LD_PRELOAD shim (tests/run/diskfull.sh): write(), pwrite() and pwritev() of files whose
 * path contains LBMC_FAILWRITE_MATCH fail with the errno LBMC_FAILWRITE_ERRNO names
 * (EIO, EDQUOT or ENOSPC; default EIO), as on a failing disk, a full quota or a full file
 * system; with LBMC_FAILWRITE_AFTER=N only once N bytes were written to such files (a
 * failure in the middle of a file). Other files are written as usual. fsync() of a file
 * or directory whose path contains LBMC_FAILWRITE_FSYNC (or ends with it, when it ends
 * with '$') fails the same way, as when the disk reports a lost write at the flush. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fd_path.h"

/* The errno LBMC_FAILWRITE_ERRNO names. */
static int lbmc_failwrite_code(void)
{
  const char *name = getenv("LBMC_FAILWRITE_ERRNO");
  if (name && strcmp(name, "EDQUOT") == 0) return EDQUOT;
  if (name && strcmp(name, "ENOSPC") == 0) return ENOSPC;
  return EIO;
}

/* The errno to fail a write of count bytes to fd with, or 0 to write it. */
static int lbmc_failwrite_errno(int fd, size_t count)
{
  static unsigned long long written = 0; /* bytes let through to matching files */
  const char *after = getenv("LBMC_FAILWRITE_AFTER");
  const char *match = getenv("LBMC_FAILWRITE_MATCH");
  char path[PATH_MAX];
  if (!match || !*match || !strstr(lbmc_fd_path(fd, path, sizeof path), match)) return 0;
  if (after && written + count <= strtoull(after, NULL, 10)) {
    written += count;
    return 0;
  }
  return lbmc_failwrite_code();
}

ssize_t write(int fd, const void *buf, size_t count)
{
  ssize_t (*real)(int, const void *, size_t) =
      (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
  int e = lbmc_failwrite_errno(fd, count);
  if (e) {
    errno = e;
    return -1;
  }
  return real(fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset)
{
  ssize_t (*real)(int, const void *, size_t, off_t) =
      (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  int e = lbmc_failwrite_errno(fd, count);
  if (e) {
    errno = e;
    return -1;
  }
  return real(fd, buf, count, offset);
}

ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
  ssize_t (*real)(int, const struct iovec *, int, off_t) =
      (ssize_t(*)(int, const struct iovec *, int, off_t))dlsym(RTLD_NEXT, "pwritev");
  size_t count = 0;
  int e;
  for (int i = 0; i < iovcnt; i++) count += iov[i].iov_len;
  e = lbmc_failwrite_errno(fd, count);
  if (e) {
    errno = e;
    return -1;
  }
  return real(fd, iov, iovcnt, offset);
}

int fsync(int fd)
{
  int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  const char *match = getenv("LBMC_FAILWRITE_FSYNC");
  char path[PATH_MAX];
  size_t m, p;
  if (!match || !*match) return real(fd);
  lbmc_fd_path(fd, path, sizeof path);
  m = strlen(match), p = strlen(path);
  if (match[m - 1] == '$' ? p >= m - 1 && strncmp(path + p - (m - 1), match, m - 1) == 0
                          : strstr(path, match) != NULL) {
    errno = lbmc_failwrite_code();
    return -1;
  }
  return real(fd);
}
