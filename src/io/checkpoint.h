/* Private: the checkpoint of a run, an append-only log of finished replicas next to
 * the results file (OUT.h5.ckpt). Rank 0 appends one record per finished replica and
 * flushes it, so a run killed at any moment loses at most the replicas in flight;
 * `lbmc run --resume` reads it back. A record cut short by a crash fails its CRC and
 * is dropped (with the rest of the file).
 *
 * File: "LBMCCKP2", then uint64 length + the job text, int64 seed, int64 total
 * (metric vector length), int64 batches; then records:
 *   int64 point (grid index), int64 replica, int64 status, int64 events,
 *   int64 has_batches, double warmup, double cpu_seconds, double sim_time,
 *   double growth, double values[total],
 *   [double batch_values[batches x total]], uint32 crc32 (zlib) of the record. */
#ifndef LBMC_CHECKPOINT_H
#define LBMC_CHECKPOINT_H

#include <stdio.h>

#include "lbmc/error.h"
#include "lbmc/sim.h"

typedef struct lbmc_checkpoint_ lbmc_checkpoint;

/** A record read back. */
typedef struct {
  long point, replica;
  lbmc_replica_result rr; /* values / batch_values point into the reader's buffers */
  int has_batches;
} lbmc_ckpt_record;

/** Open `path` for appending. With resume = 0 the file must not exist (else an error
 *  says to use --resume or delete it) and is created with the header; with resume = 1
 *  an existing file must belong to the same job text and seed (else LBMC_ERR_MISMATCH),
 *  `visit` is called for every valid record, and appending continues after the last
 *  valid one. Errors: LBMC_ERR_FILE, LBMC_ERR_MISMATCH, LBMC_ERR_ARG. */
lbmc_err lbmc_checkpoint_open(const char *path, int resume, const char *job_text, long seed,
                              size_t total, long batches,
                              lbmc_err (*visit)(const lbmc_ckpt_record *rec, void *ctx), void *ctx,
                              lbmc_checkpoint **ck);
/** Append one replica (batch values only when batch_values is non-NULL) and flush.
 *  Errors: LBMC_ERR_FILE. */
lbmc_err lbmc_checkpoint_append(lbmc_checkpoint *ck, long point, long replica,
                                const lbmc_replica_result *rr, int with_batches);
/** fsync the file (at point completions). */
void lbmc_checkpoint_sync(lbmc_checkpoint *ck);
/** Close; with remove = 1 also delete the file (the run finished). */
void lbmc_checkpoint_close(lbmc_checkpoint **ck, int remove);

#endif
