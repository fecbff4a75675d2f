/* The checkpoint of a run (checkpoint.h): header, CRC-checked records, replay. */
#include "checkpoint.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define LBMC_CKPT_MAGIC "LBMCCKP2"

struct lbmc_checkpoint_ {
  FILE *f;
  char *path;
  size_t total;
  long batches;
  unsigned char *buf; /* one record and its CRC */
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

/* Check the header of an existing checkpoint against the job. */
static lbmc_err lbmc_ckpt_check_header(lbmc_checkpoint *ck, const char *job_text, long seed)
{
  char magic[8];
  uint64_t len;
  int64_t h[3];
  char *text;
  int same;
  if (fread(magic, 1, 8, ck->f) == 8 && memcmp(magic, LBMC_CKPT_MAGIC, 7) == 0 &&
      magic[7] != LBMC_CKPT_MAGIC[7])
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "%s was written by another version of lbmc (checkpoint format %c, this one "
                      "reads format %c) and cannot be resumed: rerun without --resume to start "
                      "afresh (it is replaced), or delete it",
                      ck->path, magic[7], LBMC_CKPT_MAGIC[7]);
  if (memcmp(magic, LBMC_CKPT_MAGIC, 8) != 0 || fread(&len, sizeof len, 1, ck->f) != 1 ||
      len > (1u << 30))
    return LBMC_ERROR(LBMC_ERR_FILE, "%s is not an lbmc checkpoint; delete it to start afresh",
                      ck->path);
  text = malloc(len + 1);
  if (!text) return LBMC_ERROR(LBMC_ERR_MEMORY, "out of memory reading %s", ck->path);
  same = fread(text, 1, len, ck->f) == len && fread(h, sizeof h, 1, ck->f) == 1;
  if (same) {
    text[len] = '\0';
    same = strcmp(text, job_text) == 0 && h[0] == seed && h[1] == (int64_t)ck->total &&
           h[2] == ck->batches;
  }
  free(text);
  if (!same)
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "%s belongs to a different job (the job file or its seed changed since it "
                      "was written); delete it to start afresh",
                      ck->path);
  return LBMC_SUCCESS;
}

/* Read records until EOF or a damaged one; position the file after the last good one. */
static lbmc_err lbmc_ckpt_replay(lbmc_checkpoint *ck,
                                 lbmc_err (*visit)(const lbmc_record *, void *), void *ctx)
{
  long good = ftell(ck->f);
  for (;;) {
    lbmc_record rec;
    size_t size;
    uint32_t crc;
    if (fread(ck->buf, LBMC_RECORD_HEAD, 1, ck->f) != 1) break;
    size = lbmc_record_size_of(ck->buf, ck->total, ck->batches);
    if (size == 0 ||
        fread(ck->buf + LBMC_RECORD_HEAD, 1, size - LBMC_RECORD_HEAD, ck->f) !=
            size - LBMC_RECORD_HEAD ||
        fread(&crc, sizeof crc, 1, ck->f) != 1 || crc != (uint32_t)crc32(0L, ck->buf, (uInt)size) ||
        lbmc_record_unpack(ck->buf, size, ck->total, ck->batches, &rec) != 0)
      break;
    if (visit) LBMC_CHECK(visit(&rec, ctx));
    good = ftell(ck->f);
  }
  if (fseek(ck->f, good, SEEK_SET) != 0 || ftruncate(fileno(ck->f), good) != 0)
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot truncate the damaged end of %s", ck->path);
  return LBMC_SUCCESS;
}

/* The format digit of an existing checkpoint ("LBMCCKP<v>"), or 0 if it has no such magic. */
static char lbmc_ckpt_format(const char *path)
{
  char magic[8];
  FILE *f = fopen(path, "rb");
  int ok = f && fread(magic, 1, 8, f) == 8 && memcmp(magic, LBMC_CKPT_MAGIC, 7) == 0;
  if (f) fclose(f);
  return ok ? magic[7] : 0;
}

lbmc_err lbmc_checkpoint_open(const char *path, int resume, const char *job_text, long seed,
                              size_t total, long batches,
                              lbmc_err (*visit)(const lbmc_record *rec, void *ctx), void *ctx,
                              lbmc_checkpoint **out)
{
  lbmc_checkpoint *ck = calloc(1, sizeof *ck);
  int exists = access(path, F_OK) == 0;
  char format = exists ? lbmc_ckpt_format(path) : 0;
  lbmc_err err = LBMC_SUCCESS;
  *out = NULL;
  if (exists && !resume && format && format != LBMC_CKPT_MAGIC[7]) { /* unusable: replace it */
    fprintf(stderr,
            "lbmc run: note: %s was written by another version of lbmc (checkpoint format %c); "
            "starting afresh and replacing it\n",
            path, format);
    exists = 0;
  }
  if (!ck) return LBMC_ERROR(LBMC_ERR_MEMORY, "checkpoint: out of memory");
  ck->path = strdup(path);
  ck->total = total;
  ck->batches = batches;
  ck->buf = malloc(lbmc_record_size(total, batches, 1) + sizeof(uint32_t));
  if (!ck->path || !ck->buf) {
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
