/* The replica store (rep_store.h): rows in one memory block (doubling) while they fit
 * under the threshold, then all in an unlinked temporary file, appended through a write
 * buffer and read back with pread. */
#define _GNU_SOURCE /* O_TMPFILE */
#include "rep_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes of the write buffer of a store in its file (at least one row). */
#define LBMC_REP_STORE_BUFFER ((size_t)256 << 10)

struct lbmc_rep_store_ {
  size_t row;         /* bytes of a row */
  size_t limit;       /* bytes held in memory before the rows go to the file */
  long rows;          /* rows in the store */
  unsigned char *mem; /* in memory: the rows (cap bytes); in the file: the write buffer */
  size_t cap;
  int fd;         /* the file, or -1 while in memory */
  long buf_first; /* in the file: the first row of the write buffer (rows - buf_rows) */
  long buf_rows;  /* rows waiting in the write buffer */
};

lbmc_err lbmc_rep_store_threshold(size_t *limit)
{
  const char *text = getenv(LBMC_REP_STORE_BYTES_ENV);
  char *end;
  unsigned long long v;
  *limit = LBMC_REP_STORE_BYTES;
  if (!text || !*text) return LBMC_SUCCESS;
  errno = 0;
  v = strtoull(text, &end, 10);
  if (*end || errno || text[0] == '-' || text[0] == '+')
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "environment variable %s=%.64s: not a count of bytes (allowed: 0 or a "
                      "positive integer, the bytes of per-replica data held in memory)",
                      LBMC_REP_STORE_BYTES_ENV, text);
  *limit = (size_t)v;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_rep_store_create(size_t row_bytes, lbmc_rep_store **out)
{
  lbmc_rep_store *s;
  size_t limit;
  *out = NULL;
  if (row_bytes == 0) return LBMC_ERROR(LBMC_ERR_INTERNAL, "replica store: rows of 0 bytes");
  LBMC_CALL(lbmc_rep_store_threshold(&limit));
  if (!(s = calloc(1, sizeof *s)))
    return LBMC_ERROR(LBMC_ERR_MEMORY, "replica store: out of memory");
  s->row = row_bytes;
  s->limit = limit;
  s->fd = -1;
  *out = s;
  return LBMC_SUCCESS;
}

void lbmc_rep_store_destroy(lbmc_rep_store **s)
{
  if (!s || !*s) return;
  if ((*s)->fd >= 0) close((*s)->fd);
  free((*s)->mem);
  free(*s);
  *s = NULL;
}

long lbmc_rep_store_rows(const lbmc_rep_store *s) { return s->rows; }
size_t lbmc_rep_store_row_bytes(const lbmc_rep_store *s) { return s->row; }
size_t lbmc_rep_store_held(const lbmc_rep_store *s) { return s->mem ? s->cap : 0; }
int lbmc_rep_store_spilled(const lbmc_rep_store *s) { return s->fd >= 0; }

/* The directory of the file: $TMPDIR, or /tmp. */
static const char *lbmc_rep_store_dir(void)
{
  const char *dir = getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

static lbmc_err lbmc_rep_store_io_error(const char *doing)
{
  const int e = errno;
  return LBMC_ERROR(LBMC_ERR_FILE,
                    "cannot %s the temporary file of the replicas' rows in %s: %s (set TMPDIR to "
                    "a directory with room, or %s to hold more in memory)",
                    doing, lbmc_rep_store_dir(), strerror(e), LBMC_REP_STORE_BYTES_ENV);
}

/* All of bytes at `at` written at offset off of the file. */
static lbmc_err lbmc_rep_store_pwrite(int fd, const unsigned char *at, size_t bytes, off_t off)
{
  while (bytes) {
    const ssize_t n = pwrite(fd, at, bytes, off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return lbmc_rep_store_io_error("write");
    at += n, bytes -= (size_t)n, off += n;
  }
  return LBMC_SUCCESS;
}

/* The write buffer's rows into the file. */
static lbmc_err lbmc_rep_store_flush(lbmc_rep_store *s)
{
  if (s->fd < 0 || s->buf_rows == 0) return LBMC_SUCCESS;
  LBMC_CALL(lbmc_rep_store_pwrite(s->fd, s->mem, (size_t)s->buf_rows * s->row,
                                  (off_t)s->buf_first * (off_t)s->row));
  s->buf_first += s->buf_rows;
  s->buf_rows = 0;
  return LBMC_SUCCESS;
}

/* An unlinked file in $TMPDIR (or /tmp). */
static int lbmc_rep_store_tmpfile(void)
{
  const char *dir = lbmc_rep_store_dir();
  char path[4096];
  int fd;
#ifdef O_TMPFILE
  fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
#endif
  snprintf(path, sizeof path, "%s/lbmc-replicas-XXXXXX", dir);
  fd = mkstemp(path);
  if (fd >= 0) unlink(path);
  return fd;
}

/* The rows from memory into a new file; the memory becomes the write buffer. */
static lbmc_err lbmc_rep_store_spill(lbmc_rep_store *s)
{
  const size_t rows = LBMC_REP_STORE_BUFFER / s->row ? LBMC_REP_STORE_BUFFER / s->row : 1;
  unsigned char *buf;
  lbmc_err err;
  if ((s->fd = lbmc_rep_store_tmpfile()) < 0) return lbmc_rep_store_io_error("create");
  err = lbmc_rep_store_pwrite(s->fd, s->mem, (size_t)s->rows * s->row, 0);
  if (err) return err;
  free(s->mem);
  if (!(buf = malloc(rows * s->row))) {
    s->mem = NULL, s->cap = 0;
    return LBMC_ERROR(LBMC_ERR_MEMORY, "replica store: out of memory");
  }
  s->mem = buf, s->cap = rows * s->row;
  s->buf_first = s->rows;
  s->buf_rows = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_rep_store_append(lbmc_rep_store *s, const void *rows, long count)
{
  const unsigned char *in = rows;
  const size_t need = ((size_t)s->rows + (size_t)count) * s->row;
  if (count <= 0) return LBMC_SUCCESS;
  if (s->fd < 0 && need > s->limit) LBMC_CALL(lbmc_rep_store_spill(s));
  if (s->fd < 0) { /* in memory */
    if (need > s->cap) {
      size_t cap = s->cap ? 2 * s->cap : 16 * s->row;
      unsigned char *mem;
      while (cap < need) cap *= 2;
      if (cap > s->limit) cap = s->limit > need ? s->limit : need;
      if (!(mem = realloc(s->mem, cap)))
        return LBMC_ERROR(LBMC_ERR_MEMORY, "replica store: out of memory for %ld rows",
                          s->rows + count);
      s->mem = mem, s->cap = cap;
    }
    memcpy(s->mem + (size_t)s->rows * s->row, in, (size_t)count * s->row);
    s->rows += count;
    return LBMC_SUCCESS;
  }
  while (count > 0) { /* through the write buffer */
    const long room = (long)(s->cap / s->row) - s->buf_rows, n = count < room ? count : room;
    memcpy(s->mem + (size_t)s->buf_rows * s->row, in, (size_t)n * s->row);
    s->buf_rows += n, s->rows += n, count -= n, in += (size_t)n * s->row;
    if (s->buf_rows * (long)s->row == (long)s->cap) LBMC_CALL(lbmc_rep_store_flush(s));
  }
  return LBMC_SUCCESS;
}

void lbmc_rep_store_truncate(lbmc_rep_store *s, long rows)
{
  if (rows < 0 || rows >= s->rows) return;
  if (s->fd >= 0) {
    if (rows >= s->buf_first) {
      s->buf_rows = rows - s->buf_first;
    } else {
      s->buf_first = rows;
      s->buf_rows = 0;
      if (ftruncate(s->fd, (off_t)rows * (off_t)s->row) != 0) { /* the space only */
      }
    }
  }
  s->rows = rows;
}

static lbmc_err lbmc_rep_store_range(const lbmc_rep_store *s, long first, long count)
{
  if (first < 0 || count < 0 || first + count > s->rows)
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "replica store: rows %ld .. %ld of %ld", first,
                      first + count - 1, s->rows);
  return LBMC_SUCCESS;
}

const void *lbmc_rep_store_peek(const lbmc_rep_store *s, long first, long count)
{
  if (s->fd >= 0 || first < 0 || count < 0 || first + count > s->rows) return NULL;
  return s->mem + (size_t)first * s->row;
}

lbmc_err lbmc_rep_store_read(lbmc_rep_store *s, long first, long count, void *out)
{
  unsigned char *at = out;
  size_t bytes = (size_t)count * s->row;
  off_t off = (off_t)first * (off_t)s->row;
  LBMC_CALL(lbmc_rep_store_range(s, first, count));
  if (s->fd < 0) {
    if (count) memcpy(out, s->mem + (size_t)first * s->row, bytes);
    return LBMC_SUCCESS;
  }
  if (first + count > s->buf_first) LBMC_CALL(lbmc_rep_store_flush(s));
  while (bytes) {
    const ssize_t n = pread(s->fd, at, bytes, off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO; /* shorter than its rows */
      return lbmc_rep_store_io_error("read");
    }
    at += n, bytes -= (size_t)n, off += n;
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_rep_store_read_part(lbmc_rep_store *s, long first, long count, size_t off,
                                  size_t bytes, void *out)
{
  unsigned char *at = out;
  LBMC_CALL(lbmc_rep_store_range(s, first, count));
  if (off + bytes > s->row)
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "replica store: bytes %zu .. %zu of a %zu-byte row", off,
                      off + bytes, s->row);
  if (s->fd >= 0 && first + count > s->buf_first) LBMC_CALL(lbmc_rep_store_flush(s));
  for (long r = first; r < first + count; r++, at += bytes) {
    size_t left = bytes;
    off_t pos = (off_t)r * (off_t)s->row + (off_t)off;
    unsigned char *to = at;
    if (s->fd < 0) {
      memcpy(at, s->mem + (size_t)r * s->row + off, bytes);
      continue;
    }
    while (left) {
      const ssize_t n = pread(s->fd, to, left, pos);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (n == 0) errno = EIO;
        return lbmc_rep_store_io_error("read");
      }
      to += n, left -= (size_t)n, pos += n;
    }
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_rep_store_write(lbmc_rep_store *s, long first, long count, const void *rows)
{
  LBMC_CALL(lbmc_rep_store_range(s, first, count));
  if (s->fd < 0) {
    if (count) memcpy(s->mem + (size_t)first * s->row, rows, (size_t)count * s->row);
    return LBMC_SUCCESS;
  }
  if (first + count > s->buf_first) LBMC_CALL(lbmc_rep_store_flush(s));
  return lbmc_rep_store_pwrite(s->fd, rows, (size_t)count * s->row, (off_t)first * (off_t)s->row);
}
