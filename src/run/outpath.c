/* Checks of an output path before anything is computed (lbmc run, lbmc merge). */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbmc/runner.h"

/* 1 if the file starts like an HDF5 file or an lbmc checkpoint (something lbmc wrote),
 * also a checkpoint whose first bytes only were written. */
static int lbmc_ours(const char *path)
{
  unsigned char head[8] = {0};
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(head, 1, sizeof head, f) : 0;
  if (f) fclose(f);
  return (got < 8 && memcmp(head, "LBMCCKP", got < 7 ? got : 7) == 0) ||
         (got == 8 &&
          (memcmp(head, "\x89HDF\r\n\x1a\n", 8) == 0 || memcmp(head, "LBMCCKP", 7) == 0));
}

static int lbmc_ends_with(const char *s, const char *end)
{
  const size_t n = strlen(s), m = strlen(end);
  return n >= m && strcmp(s + n - m, end) == 0;
}

/* 1 if a and b name the same existing file. */
static int lbmc_same_file(const struct stat *a, const char *b)
{
  struct stat sb;
  return stat(b, &sb) == 0 && sb.st_dev == a->st_dev && sb.st_ino == a->st_ino;
}

lbmc_err lbmc_check_output_path(const char *path, const char *const *inputs, int ninputs)
{
  struct stat st;
  char copy[4096], dir[4096];
  const char *slash = path ? strrchr(path, '/') : NULL, *base = slash ? slash + 1 : path;
  if (!path || !*path)
    return LBMC_ERROR(LBMC_ERR_ARG, "output: an empty path is not allowed; name an .h5 file");
  if (strcmp(path, "-") == 0) /* the usual "standard output" would become a file named '-' */
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "output: '-' (standard output) is not allowed: HDF5 writes a file it can "
                      "seek in, not a pipe; name a file, e.g. results.h5 (lbmc sim --json prints "
                      "the results to standard output; ./- names a file called '-')");
  if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "output: %s names a directory, not a file; name a file in it, e.g. "
                      "%s%sresults.h5",
                      path, path, *base ? "/" : "");
  snprintf(copy, sizeof copy, "%s", path);
  snprintf(dir, sizeof dir, "%s", dirname(copy)); /* dirname may modify its argument */
  if (stat(dir, &st) != 0)
    return LBMC_ERROR(LBMC_ERR_ARG, "output: %s: the directory %s does not exist; create it first",
                      path, dir);
  if (!S_ISDIR(st.st_mode))
    return LBMC_ERROR(LBMC_ERR_ARG, "output: %s: %s is not a directory; name a file in a directory",
                      path, dir);
  if (access(dir, W_OK | X_OK) != 0)
    return LBMC_ERROR(LBMC_ERR_ARG, "output: %s: the directory %s is not writable", path, dir);
  if (stat(path, &st) != 0) return LBMC_SUCCESS; /* a new file */
  if (S_ISDIR(st.st_mode))
    return LBMC_ERROR(LBMC_ERR_ARG, "output: %s is a directory; name a file in it, e.g. %s/out.h5",
                      path, path);
  if (!S_ISREG(st.st_mode))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "output: %s exists and is not a regular file (a device, FIFO or socket); "
                      "refusing to replace it",
                      path);
  for (int i = 0; i < ninputs; i++)
    if (inputs[i] && lbmc_same_file(&st, inputs[i]))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "output: %s is also an input (%s); refusing to overwrite it, choose "
                        "another output name",
                        path, inputs[i]);
  if (!lbmc_ours(path) && lbmc_ends_with(path, ".ckpt"))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "output: %s exists and is not an lbmc checkpoint (it does not start with "
                      "LBMCCKP): if it is the checkpoint of a run whose first bytes were "
                      "damaged, it cannot be resumed; move it aside or delete it",
                      path);
  if (!lbmc_ours(path))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "output: %s exists and is not an HDF5 file (lbmc only replaces its own "
                      "results); delete it or choose another name",
                      path);
  return LBMC_SUCCESS;
}
