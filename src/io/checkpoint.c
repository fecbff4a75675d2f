/* The checkpoint of a run (checkpoint.h): header, CRC-checked records, replay. */
#include "checkpoint.h"

#include "../sim/record.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define LBMC_CKPT_MAGIC "LBMCCKP3"

struct lbmc_checkpoint_ {
  FILE *f;
  char *path;
  size_t total;
  long batches;
  unsigned char *buf; /* one record and its CRC */
  size_t cap;         /* bytes of buf */
};

static lbmc_err lbmc_ckpt_write_header(lbmc_checkpoint *ck, const char *job_text, long seed)
{
  uint64_t len = strlen(job_text);
  int64_t h[3] = {seed, (int64_t)ck->total, ck->batches};
  if (fwrite(LBMC_CKPT_MAGIC, 1, 8, ck->f) != 8 || fwrite(&len, sizeof len, 1, ck->f) != 1 ||
      fwrite(job_text, 1, len, ck->f) != len || fwrite(h, sizeof h, 1, ck->f) != 1 || fflush(ck->f))
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot write the checkpoint %s: %s", ck->path,
                      strerror(errno));
  return LBMC_SUCCESS;
}

/* What the start of an existing file is. */
typedef enum {
  LBMC_CKPT_GOOD,       /* a whole header of this format */
  LBMC_CKPT_INCOMPLETE, /* the start of a header, never fully written */
  LBMC_CKPT_OTHER,      /* the header of another format ("LBMCCKP<v>") */
  LBMC_CKPT_FOREIGN     /* not a checkpoint */
} lbmc_ckpt_kind;

/* Read the header of f: its kind, and for a good one its parts (*text malloc'ed, or
 * NULL when text is NULL) and the format digit in *format. */
static lbmc_ckpt_kind lbmc_ckpt_read_header(FILE *f, char **text, int64_t h[3], char *format)
{
  char magic[8];
  size_t got = fread(magic, 1, 8, f);
  uint64_t len;
  char *t;
  *format = got == 8 ? magic[7] : 0;
  if (got < 8)
    return memcmp(magic, LBMC_CKPT_MAGIC, got) == 0 ? LBMC_CKPT_INCOMPLETE : LBMC_CKPT_FOREIGN;
  if (memcmp(magic, LBMC_CKPT_MAGIC, 7) != 0) return LBMC_CKPT_FOREIGN;
  if (magic[7] != LBMC_CKPT_MAGIC[7]) return LBMC_CKPT_OTHER;
  if (fread(&len, sizeof len, 1, f) != 1) return LBMC_CKPT_INCOMPLETE;
  if (len > (1u << 30) || !(t = malloc(len + 1))) return LBMC_CKPT_FOREIGN;
  if (fread(t, 1, len, f) != len || fread(h, sizeof(int64_t), 3, f) != 3) {
    free(t);
    return LBMC_CKPT_INCOMPLETE;
  }
  t[len] = '\0';
  if (text)
    *text = t;
  else
    free(t);
  return LBMC_CKPT_GOOD;
}

/* The kind of the existing file at path (LBMC_CKPT_FOREIGN if it cannot be read). */
static lbmc_ckpt_kind lbmc_ckpt_kind_of(const char *path, char *format)
{
  FILE *f = fopen(path, "rb");
  int64_t h[3];
  lbmc_ckpt_kind kind = f ? lbmc_ckpt_read_header(f, NULL, h, format) : LBMC_CKPT_FOREIGN;
  if (f) fclose(f);
  return kind;
}

/* Check the header of an existing checkpoint (of this format) against the job. */
static lbmc_err lbmc_ckpt_check_header(lbmc_checkpoint *ck, const char *job_text, long seed)
{
  int64_t h[3];
  char *text = NULL, format;
  int same;
  if (lbmc_ckpt_read_header(ck->f, &text, h, &format) != LBMC_CKPT_GOOD)
    return LBMC_ERROR(LBMC_ERR_FILE, "%s is not an lbmc checkpoint; delete it to start afresh",
                      ck->path);
  same = strcmp(text, job_text) == 0 && h[0] == seed && h[1] == (int64_t)ck->total &&
         h[2] == ck->batches;
  free(text);
  if (!same)
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "%s belongs to a different job (the job file or its seed changed since it "
                      "was written); delete it to start afresh",
                      ck->path);
  return LBMC_SUCCESS;
}

/* The next record of f into *buf (grown to fit; *cap bytes): its size, or 0 at the end of
 * the file or at a record cut short or damaged (its CRC). */
static size_t lbmc_ckpt_next(FILE *f, unsigned char **buf, size_t *cap)
{
  int64_t head;
  size_t size;
  uint32_t crc;
  lbmc_record rec;
  if (fread(&head, sizeof head, 1, f) != 1 || !(size = lbmc_record_size_of(&head))) return 0;
  if (size > *cap) {
    unsigned char *b = realloc(*buf, size);
    if (!b) return 0;
    *buf = b;
    *cap = size;
  }
  memcpy(*buf, &head, sizeof head);
  if (fread(*buf + sizeof head, 1, size - sizeof head, f) != size - sizeof head ||
      fread(&crc, sizeof crc, 1, f) != 1 || crc != (uint32_t)crc32(0L, *buf, (uInt)size) ||
      lbmc_record_view(*buf, size, &rec) != 0)
    return 0;
  return size;
}

static lbmc_err lbmc_ckpt_replay(lbmc_checkpoint *ck,
                                 lbmc_err (*visit)(const void *, size_t, void *), void *ctx)
{
  long good = ftell(ck->f);
  size_t size;
  while ((size = lbmc_ckpt_next(ck->f, &ck->buf, &ck->cap)) > 0) {
    if (visit) LBMC_CALL(visit(ck->buf, size, ctx));
    good = ftell(ck->f);
  }
  if (fseek(ck->f, good, SEEK_SET) != 0 || ftruncate(fileno(ck->f), good) != 0)
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot truncate the damaged end of %s", ck->path);
  return LBMC_SUCCESS;
}

/* An existing file that holds no replicas this run can use is replaced, with a note:
 * a header never fully written (with or without --resume), or another format
 * (without --resume; with it, an error says so). Returns 1 to start afresh. */
static int lbmc_ckpt_replace(const char *path, int resume, lbmc_err *err)
{
  char format;
  lbmc_ckpt_kind kind = lbmc_ckpt_kind_of(path, &format);
  *err = LBMC_SUCCESS;
  if (kind == LBMC_CKPT_INCOMPLETE) {
    fprintf(stderr,
            "lbmc run: note: %s is incomplete: its header was never fully written (the run "
            "that made it stopped as it started), so it holds no replicas; starting afresh\n",
            path);
    return 1;
  }
  if (kind != LBMC_CKPT_OTHER) return 0;
  if (resume)
    *err = LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "%s was written by another version of lbmc (checkpoint format %c, this one "
                      "reads format %c) and cannot be resumed: rerun without --resume to start "
                      "afresh (it is replaced), or delete it",
                      path, format, LBMC_CKPT_MAGIC[7]);
  else
    fprintf(stderr,
            "lbmc run: note: %s was written by another version of lbmc (checkpoint format %c); "
            "starting afresh and replacing it\n",
            path, format);
  return 1;
}

lbmc_err lbmc_checkpoint_open(const char *path, int resume, const char *job_text, long seed,
                              size_t total, long batches,
                              lbmc_err (*visit)(const void *record, size_t size, void *ctx),
                              void *ctx, lbmc_checkpoint **out)
{
  lbmc_checkpoint *ck = calloc(1, sizeof *ck);
  int exists = access(path, F_OK) == 0;
  lbmc_err err = LBMC_SUCCESS;
  *out = NULL;
  if (exists && lbmc_ckpt_replace(path, resume, &err)) exists = 0;
  if (err || !ck) {
    free(ck);
    return err ? err : LBMC_ERROR(LBMC_ERR_MEMORY, "checkpoint: out of memory");
  }
  ck->path = strdup(path);
  ck->total = total;
  ck->batches = batches;
  if (!ck->path) {
    err = LBMC_ERROR(LBMC_ERR_MEMORY, "checkpoint: out of memory");
  } else if (exists && !resume) {
    err = LBMC_ERROR(LBMC_ERR_ARG,
                     "%s exists: an earlier run of this output did not finish; continue it with "
                     "--resume, or delete the file to start afresh",
                     path);
  } else if (exists) {
    ck->f = fopen(path, "r+b");
    if (!ck->f) err = LBMC_ERROR(LBMC_ERR_FILE, "cannot open %s: %s", path, strerror(errno));
    if (!err) err = lbmc_ckpt_check_header(ck, job_text, seed);
    if (!err) err = lbmc_ckpt_replay(ck, visit, ctx);
  } else {
    ck->f = fopen(path, "wb");
    if (!ck->f) err = LBMC_ERROR(LBMC_ERR_FILE, "cannot create %s: %s", path, strerror(errno));
    if (!err) err = lbmc_ckpt_write_header(ck, job_text, seed);
  }
  if (err) {
    lbmc_checkpoint_close(&ck, 0);
    return err;
  }
  *out = ck;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_checkpoint_append(lbmc_checkpoint *ck, const void *record, size_t size)
{
  uint32_t crc = (uint32_t)crc32(0L, record, (uInt)size);
  if (fwrite(record, 1, size, ck->f) != size || fwrite(&crc, sizeof crc, 1, ck->f) != 1 ||
      fflush(ck->f) != 0)
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot append to the checkpoint %s: %s", ck->path,
                      strerror(errno));
  return LBMC_SUCCESS;
}

int lbmc_checkpoint_is(const char *path)
{
  char magic[7];
  FILE *f = fopen(path, "rb");
  int is = f && fread(magic, 1, 7, f) == 7 && memcmp(magic, LBMC_CKPT_MAGIC, 7) == 0;
  if (f) fclose(f);
  return is;
}

lbmc_err lbmc_checkpoint_describe(const char *path, lbmc_ckpt_summary *sum)
{
  FILE *f = fopen(path, "rb");
  int64_t h[3];
  char format = 0, *text = NULL;
  lbmc_ckpt_kind kind = f ? lbmc_ckpt_read_header(f, &text, h, &format) : LBMC_CKPT_FOREIGN;
  unsigned char *buf = NULL;
  size_t cap = 0;
  long *points = NULL;
  memset(sum, 0, sizeof *sum);
  sum->job_text = text;
  sum->format = format;
  sum->complete_header = kind != LBMC_CKPT_INCOMPLETE;
  if (kind == LBMC_CKPT_FOREIGN) {
    if (f) fclose(f);
    return LBMC_ERROR(LBMC_ERR_ARG, "%s is not an lbmc checkpoint", path);
  }
  if (kind == LBMC_CKPT_GOOD) {
    sum->seed = (long)h[0];
    sum->total = (size_t)h[1];
    sum->batches = (long)h[2];
  }
  for (size_t size; kind == LBMC_CKPT_GOOD && (size = lbmc_ckpt_next(f, &buf, &cap)) > 0;) {
    long *more = realloc(points, sizeof *points * (size_t)(sum->replicas + 1));
    lbmc_record rec;
    if (!more) break;
    points = more;
    lbmc_record_view(buf, size, &rec);
    points[sum->replicas++] = (long)rec.h.point; /* the good records: finished replicas */
  }
  for (long i = 0; i < sum->replicas; i++) { /* distinct points */
    long k = 0;
    while (k < i && points[k] != points[i]) k++;
    sum->points += k == i;
  }
  free(points);
  free(buf);
  fclose(f);
  return LBMC_SUCCESS;
}

void lbmc_checkpoint_sync(lbmc_checkpoint *ck)
{
  if (ck && ck->f) fsync(fileno(ck->f));
}

void lbmc_checkpoint_close(lbmc_checkpoint **ck, int remove)
{
  if (!ck || !*ck) return;
  if ((*ck)->f) fclose((*ck)->f);
  if (remove && (*ck)->path) unlink((*ck)->path);
  free((*ck)->path);
  free((*ck)->buf);
  free(*ck);
  *ck = NULL;
}
