/* Private: one finished replica as bytes. The same record travels in the MPI result
 * message (src/run/runner.c) and is appended to the checkpoint (checkpoint.c, which
 * adds only a CRC), so one pair of functions packs and unpacks it.
 *
 * Layout (native byte order, ranks of one run share it): int64 point (grid index),
 * int64 replica, int64 status, int64 events, int64 has_batches (0 or 1), double
 * warmup, double cpu_seconds, double sim_time, double growth, double values[total],
 * then with has_batches double batch_values[batches x total]. Nothing is collective. */
#ifndef LBMC_RECORD_H
#define LBMC_RECORD_H

#include <stddef.h>

#include "lbmc/sim.h"

/** Bytes of the fixed head (the five int64 fields), which tell the record's size. */
#define LBMC_RECORD_HEAD (5 * sizeof(int64_t))

/** A record unpacked: rr.values and rr.batch_values point into the packed bytes. */
typedef struct {
  long point;   /* grid index of the point */
  long replica; /* 0-based */
  lbmc_replica_result rr;
} lbmc_record;

/** Bytes of a record with `total` metric entries, with or without `batches` rows of
 *  batch means. */
size_t lbmc_record_size(size_t total, long batches, int with_batches);

/** Pack replica `replica` of grid point `point` into buf (lbmc_record_size bytes,
 *  8-byte aligned); batch means are included when rr->batch_values is not NULL.
 *  Returns the bytes written. */
size_t lbmc_record_pack(void *buf, long point, long replica, const lbmc_replica_result *rr,
                        size_t total, long batches);

/** Size of the record whose head (LBMC_RECORD_HEAD bytes) starts buf, or 0 if the
 *  head is not a record's (has_batches neither 0 nor 1). */
size_t lbmc_record_size_of(const void *buf, size_t total, long batches);

/** Unpack the record of len bytes at buf (8-byte aligned; it must outlive rec).
 *  Returns 0, or -1 if len is not the record's size. */
int lbmc_record_unpack(const void *buf, size_t len, size_t total, long batches, lbmc_record *rec);

#endif
