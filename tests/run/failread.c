/* Test-only LD_PRELOAD shim (tests/run/readerror.sh), the read twin of failwrite.c: read(),
 * pread() and preadv() of files whose path contains LBMC_FAILREAD_MATCH fail with EIO, as on
 * a failing disk; with LBMC_FAILREAD_AFTER=N only once N reads of such files succeeded (a
 * failure in the middle of a pass), and with LBMC_FAILREAD_ONCE=1 that one read only (a
 * transient error: the reads after it succeed, so an error dropped on the way shows). With
 * LBMC_FAILREAD_TRACE=1 each read of such files prints "failread: read K" (K from 0) to
 * stderr, between the program's own lines. An unlinked file's path is the one it had, with
 * " (deleted)" after it (an O_TMPFILE file: its directory and "#inode"), so a directory
 * matches the replica store's file. Other files are read as usual. With LBMC_FAILREAD_COUNT
 * naming a file, the count of reads of matching files that succeeded is written there at exit
 * (with LBMC_FAILREAD_AFTER large, a test learns how many reads a run makes, then fails each
 * in turn). */
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

static unsigned long long lbmc_failread_reads = 0; /* reads let through from matching files */
static unsigned long long lbmc_failread_calls = 0; /* reads of matching files, failed or not */

/* At exit: the count of reads let through into the file LBMC_FAILREAD_COUNT names (none: the
 * file is left alone, so that a launcher such as mpirun does not write 0 over its child's). */
__attribute__((destructor)) static void lbmc_failread_report(void)
{
  const char *path = getenv("LBMC_FAILREAD_COUNT");
  FILE *f = path && *path && lbmc_failread_reads ? fopen(path, "w") : NULL;
  if (!f) return;
  fprintf(f, "%llu\n", lbmc_failread_reads);
  fclose(f);
}

/* 1 when this read of fd is to fail (errno is then EIO). */
static int lbmc_failread_now(int fd)
{
  const char *after = getenv("LBMC_FAILREAD_AFTER");
  const char *match = getenv("LBMC_FAILREAD_MATCH");
  char path[PATH_MAX];
  if (!match || !*match || !strstr(lbmc_fd_path(fd, path, sizeof path), match)) return 0;
  const char *once = getenv("LBMC_FAILREAD_ONCE"), *trace = getenv("LBMC_FAILREAD_TRACE");
  const unsigned long long k = lbmc_failread_calls++;
  if (trace && *trace == '1') fprintf(stderr, "failread: read %llu\n", k);
  if ((after && k < strtoull(after, NULL, 10)) ||
      (after && once && *once == '1' && k > strtoull(after, NULL, 10))) {
    lbmc_failread_reads++;
    return 0;
  }
  errno = EIO;
  return 1;
}

ssize_t read(int fd, void *buf, size_t count)
{
  ssize_t (*real)(int, void *, size_t) = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
  return lbmc_failread_now(fd) ? -1 : real(fd, buf, count);
}

ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
  ssize_t (*real)(int, void *, size_t, off_t) =
      (ssize_t(*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
  return lbmc_failread_now(fd) ? -1 : real(fd, buf, count, offset);
}

ssize_t pread64(int fd, void *buf, size_t count, off_t offset)
{
  ssize_t (*real)(int, void *, size_t, off_t) =
      (ssize_t(*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
  return lbmc_failread_now(fd) ? -1 : real(fd, buf, count, offset);
}

ssize_t preadv(int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
  ssize_t (*real)(int, const struct iovec *, int, off_t) =
      (ssize_t(*)(int, const struct iovec *, int, off_t))dlsym(RTLD_NEXT, "preadv");
  return lbmc_failread_now(fd) ? -1 : real(fd, iov, iovcnt, offset);
}
