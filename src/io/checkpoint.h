/* Private: the checkpoint of a run, an append-only log of finished replicas next to
 * the results file (OUT.h5.ckpt). Rank 0 appends one record per finished replica, so a
 * run killed at any moment loses at most the replicas in flight; `lbmc run --resume`
 * reads it back.
 *
 * File (format 5): the magic "LBMCCKP5"; the owner slot, 120 bytes of text "pid=PID
 * host=HOST since=TIME" (NUL-padded; zeros when no run holds the file), rewritten by
 * each run that opens the file; then the header: uint64 length + the job text, int64
 * seed, int64 total (metric vector length), int64 batches, int64 shard index and count
 * (0, 0: the whole job), uint32 crc32 (zlib) of the header from its length on; then
 * records, each a replica record (src/sim/record.h: the bytes of the MPI result
 * message, its size in its first 8 bytes) followed by uint32 crc32 of the record.
 * Format 4 (the same without the shard: a shard killed before writing its results could
 * not say which it was) and format 3 (also without the owner slot and the header's CRC:
 * the magic "LBMCCKP3", then the header without CRC, then the same records) are read
 * and converted to format 5 when resumed; other formats are refused.
 *
 * A run holds an exclusive flock on the file for its life: a second run of the same
 * output, or --resume of it, is refused naming the holder's PID and host (from the
 * owner slot). A lock left by a process that died is free again (the kernel releases
 * it): the owner slot it left names it, and the next run takes over with a note. On a
 * file system without locks the run goes on with a warning, and refuses only when the
 * owner slot names a live process of this host.
 *
 * Replay checks every record's CRC and length: a damaged record is skipped and the
 * replay resynchronises on the next valid record, so every later good record is kept;
 * the damaged file is then kept aside (OUT.h5.ckpt.damaged, .damaged.2, ...) and the
 * checkpoint rewritten with the good records only, with a note of how many records and
 * bytes were dropped. A last record cut short (the run was killed while writing it) is
 * simply dropped. Nothing here is collective. */
#ifndef LBMC_CHECKPOINT_H
#define LBMC_CHECKPOINT_H

#include <stddef.h>

#include "lbmc/error.h"
#include "lbmc/job.h"
#include "lbmc/sim.h"

typedef struct lbmc_checkpoint_ lbmc_checkpoint;

/** Open `path` for appending, and lock it. With resume = 0 the file must not exist
 *  (else an error says to use --resume or delete it) and is created with the header;
 *  with resume = 1 an existing file must belong to the same job (parsed settings,
 *  lbmc_job_compare; else LBMC_ERR_MISMATCH naming the key), seed and shard (shard_index
 *  of shard_count, 0 0 for the whole job; a file of format 3 or 4 does not say), or be of
 *  another format (refused) or incomplete (replaced: it holds nothing); `visit` is
 *  called for every valid record (its bytes, in a buffer reused for the next record),
 *  damaged records are skipped (see above), and appending continues after the last
 *  valid one. Errors: LBMC_ERR_ARG (a live run holds the file, naming its PID and host;
 *  the file exists without --resume), LBMC_ERR_FILE (damaged header, system errors),
 *  LBMC_ERR_MISMATCH, LBMC_ERR_MEMORY, or what visit returns. */
lbmc_err lbmc_checkpoint_open(const char *path, int resume, const lbmc_job *job, size_t total,
                              long batches, long shard_index, long shard_count,
                              lbmc_err (*visit)(const void *record, size_t size, void *ctx),
                              void *ctx, lbmc_checkpoint **ck);
/** Append one replica record (size bytes) with its CRC (one write: the kernel has it
 *  when this returns). Errors: LBMC_ERR_FILE naming the system error. */
lbmc_err lbmc_checkpoint_append(lbmc_checkpoint *ck, const void *record, size_t size);

/** What a checkpoint file holds, for lbmc info. */
typedef struct {
  int complete_header; /* 0: the header was never fully written (nothing else is set) */
  int damaged_header;  /* 1: the header fails its checksum or cannot be read */
  char format;         /* the format digit of its magic */
  char *job_text;      /* the job's text (malloc'ed; the caller frees it) */
  long seed, batches;
  long shard_index, shard_count; /* the run's shard (0 0: the whole job); -1 -1: not
                                    recorded (format 3 or 4) */
  size_t total;
  long replicas;        /* good records: finished replicas */
  long points;          /* distinct points among them */
  long damaged;         /* damaged stretches (resume skips them) */
  long damaged_records; /* about how many records they held */
  size_t damaged_bytes; /* their bytes */
  size_t torn_bytes;    /* a last record cut short */
  char owner[128];      /* the owner slot: "pid=... host=... since=...", "" if none */
  int live;             /* 1: a running process holds the lock; 0: none; -1: unknown */
} lbmc_ckpt_summary;

/** 1 if the file at path starts with a checkpoint's magic (of any format). */
int lbmc_checkpoint_is(const char *path);
/** Read what the checkpoint at path holds (a header of another format: only `format`
 *  and complete_header = 1). Errors: LBMC_ERR_ARG if it is not a checkpoint,
 *  LBMC_ERR_MEMORY. */
lbmc_err lbmc_checkpoint_describe(const char *path, lbmc_ckpt_summary *sum);
/** 1 if the checkpoint at path records the shard of its run (a good header of format 5):
 *  *index of *count, 0 0 for the whole job; 0 if it does not say or cannot be read. Reads
 *  the header only. */
int lbmc_checkpoint_shard(const char *path, long *index, long *count);
/** fsync the file (at point completions). */
void lbmc_checkpoint_sync(lbmc_checkpoint *ck);
/** Close and release the lock (clearing the owner slot); with remove = 1 also delete
 *  the file (the run finished). */
void lbmc_checkpoint_close(lbmc_checkpoint **ck, int remove);

#endif
