#include "checkpoint.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define LBMC_CKPT_MAGIC "LBMCCKP2"
#define LBMC_CKPT_HEAD  4 /* doubles before the values: warmup, cpu, sim_time, growth */

struct lbmc_checkpoint_ {
  FILE *f;
  char *path;
  size_t total;
  long batches;
  unsigned char *buf; /* one record */
};

static size_t lbmc_ckpt_record_size(size_t total, long batches, int with_batches)
{
  size_t doubles = LBMC_CKPT_HEAD + total + (with_batches ? (size_t)batches * total : 0);
  return 5 * sizeof(int64_t) + doubles * sizeof(double) + sizeof(uint32_t);
}

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
  if (fread(magic, 1, 8, ck->f) != 8 || memcmp(magic, LBMC_CKPT_MAGIC, 8) != 0 ||
      fread(&len, sizeof len, 1, ck->f) != 1 || len > (1u << 30))
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
                                 lbmc_err (*visit)(const lbmc_ckpt_record *, void *), void *ctx)
{
  long good = ftell(ck->f);
  for (;;) {
    int64_t head[5];
    lbmc_ckpt_record rec;
    size_t size, body;
    uint32_t crc;
    if (fread(head, sizeof head, 1, ck->f) != 1) break;
    if (head[4] != 0 && head[4] != 1) break;
    size = lbmc_ckpt_record_size(ck->total, ck->batches, (int)head[4]);
    body = size - sizeof head - sizeof crc;
    memcpy(ck->buf, head, sizeof head);
    if (fread(ck->buf + sizeof head, 1, body, ck->f) != body ||
        fread(&crc, sizeof crc, 1, ck->f) != 1 ||
        crc != (uint32_t)crc32(0L, ck->buf, (uInt)(size - sizeof crc)))
      break;
    memset(&rec, 0, sizeof rec);
    rec.point = (long)head[0];
    rec.replica = (long)head[1];
    rec.rr.status = (lbmc_status)head[2];
    rec.rr.events = head[3];
    rec.has_batches = (int)head[4];
    {
      double *d = (double *)(ck->buf + sizeof head);
      rec.rr.warmup = d[0];
      rec.rr.cpu_seconds = d[1];
      rec.rr.sim_time = d[2];
      rec.rr.growth = d[3];
      rec.rr.values = d + LBMC_CKPT_HEAD;
      rec.rr.batch_values = rec.has_batches ? d + LBMC_CKPT_HEAD + ck->total : NULL;
    }
    if (visit) LBMC_CHECK(visit(&rec, ctx));
    good = ftell(ck->f);
  }
  if (fseek(ck->f, good, SEEK_SET) != 0 || ftruncate(fileno(ck->f), good) != 0)
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot truncate the damaged end of %s", ck->path);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_checkpoint_open(const char *path, int resume, const char *job_text, long seed,
                              size_t total, long batches,
                              lbmc_err (*visit)(const lbmc_ckpt_record *rec, void *ctx), void *ctx,
                              lbmc_checkpoint **out)
{
  lbmc_checkpoint *ck = calloc(1, sizeof *ck);
  int exists = access(path, F_OK) == 0;
  lbmc_err err = LBMC_SUCCESS;
  *out = NULL;
  if (!ck) return LBMC_ERROR(LBMC_ERR_MEMORY, "checkpoint: out of memory");
  ck->path = strdup(path);
  ck->total = total;
  ck->batches = batches;
  ck->buf = malloc(lbmc_ckpt_record_size(total, batches, 1));
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

lbmc_err lbmc_checkpoint_append(lbmc_checkpoint *ck, long point, long replica,
                                const lbmc_replica_result *rr, int with_batches)
{
  size_t size = lbmc_ckpt_record_size(ck->total, ck->batches, with_batches);
  int64_t head[5] = {point, replica, rr->status, rr->events, with_batches != 0};
  double *d = (double *)(ck->buf + sizeof head);
  uint32_t crc;
  memcpy(ck->buf, head, sizeof head);
  d[0] = rr->warmup;
  d[1] = rr->cpu_seconds;
  d[2] = rr->sim_time;
  d[3] = rr->growth;
  memcpy(d + LBMC_CKPT_HEAD, rr->values, sizeof *d * ck->total);
  if (with_batches)
    memcpy(d + LBMC_CKPT_HEAD + ck->total, rr->batch_values,
           sizeof *d * ck->total * (size_t)ck->batches);
  crc = (uint32_t)crc32(0L, ck->buf, (uInt)(size - sizeof crc));
  memcpy(ck->buf + size - sizeof crc, &crc, sizeof crc);
  if (fwrite(ck->buf, 1, size, ck->f) != size || fflush(ck->f) != 0)
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
