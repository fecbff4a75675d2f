/* Private: the checkpoint of a run, an append-only log of finished replicas next to
 * the results file (OUT.h5.ckpt). Rank 0 appends one record per finished replica and
 * flushes it, so a run killed at any moment loses at most the replicas in flight;
 * `lbmc run --resume` reads it back. A record cut short by a crash fails its CRC and
 * is dropped (with the rest of the file).
 *
 * File: the magic "LBMCCKP3", then uint64 length + the job text, int64 seed, int64
 * total (metric vector length), int64 batches; then records, each a replica record
 * (src/sim/record.h: the bytes of the MPI result message, its size in its first 8
 * bytes) followed by uint32 crc32 (zlib) of the record. A file with another "LBMCCKP<v>" magic was
 * written by another version of lbmc and is refused. */
#ifndef LBMC_CHECKPOINT_H
#define LBMC_CHECKPOINT_H

#include <stdio.h>

#include "lbmc/error.h"
#include "lbmc/sim.h"

typedef struct lbmc_checkpoint_ lbmc_checkpoint;

/** Open `path` for appending. With resume = 0 the file must not exist (else an error
 *  says to use --resume or delete it) and is created with the header; with resume = 1
 *  an existing file must belong to the same job text and seed (else LBMC_ERR_MISMATCH),
 *  or be of another format (refused) or incomplete (replaced: it holds nothing),
 *  `visit` is called for every valid record (its bytes, in a buffer reused for the next
 *  record), and appending continues after the last valid one.
 *  Errors: LBMC_ERR_FILE, LBMC_ERR_MISMATCH, LBMC_ERR_ARG. */
lbmc_err lbmc_checkpoint_open(const char *path, int resume, const char *job_text, long seed,
                              size_t total, long batches,
                              lbmc_err (*visit)(const void *record, size_t size, void *ctx),
                              void *ctx, lbmc_checkpoint **ck);
/** Append one replica record (size bytes) with its CRC and flush.
 *  Errors: LBMC_ERR_FILE. */
lbmc_err lbmc_checkpoint_append(lbmc_checkpoint *ck, const void *record, size_t size);
/** What a checkpoint file holds, for lbmc info. */
typedef struct {
  int complete_header; /* 0: the header was never fully written (nothing else is set) */
  char format;         /* the format digit of its magic */
  char *job_text;      /* the job's text (malloc'ed; the caller frees it) */
  long seed, batches;
  size_t total;
  long replicas; /* good records: finished replicas */
  long points;   /* distinct points among them */
} lbmc_ckpt_summary;

/** 1 if the file at path starts with a checkpoint's magic (of any format). */
int lbmc_checkpoint_is(const char *path);
/** Read what the checkpoint at path holds (a header of another format: only `format`
 *  and complete_header = 1). Errors: LBMC_ERR_ARG if it is not a checkpoint. */
lbmc_err lbmc_checkpoint_describe(const char *path, lbmc_ckpt_summary *sum);
/** fsync the file (at point completions). */
void lbmc_checkpoint_sync(lbmc_checkpoint *ck);
/** Close; with remove = 1 also delete the file (the run finished). */
void lbmc_checkpoint_close(lbmc_checkpoint **ck, int remove);

#endif
