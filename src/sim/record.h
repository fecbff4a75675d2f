/* Private: one finished replica as bytes, the replica record (docs/architecture.md,
 * "Replica results between ranks and on disk"). The replica driver writes it
 * (src/sim/sim.c); the same bytes are the MPI result message a worker sends to rank 0,
 * an entry of the checkpoint (src/io/checkpoint.c adds a CRC), and what rank 0's own
 * replicas hand to the point reduction (src/sim/point.c): so the estimates do not
 * depend on who ran a replica.
 *
 * A record holds raw sums, never per-replica estimates: every estimate of the point is
 * a ratio of sums over its replicas (docs/model.md, "Estimation"). Layout (native byte
 * order; the ranks of one run share it; 8-byte aligned, its size a multiple of 8):
 *   lbmc_record_head                      the fixed head (below)
 *   int64  group_start[G + 1]            quantile group g = segments [start[g], start[g+1])
 *   double seg[S x W]                     segment s: the tick record (src/core/ticks.h,
 *                                         W = lbmc_tick_width(J, K)) summed over its ticks
 *   bytes  quantiles[qbytes]              per group, the sojourn and wait data of its
 *                                         customers: qkind LBMC_QK_HIST, two histograms
 *                                         (uint64 length, lbmc_dhist_pack bytes) each;
 *                                         LBMC_QK_MIX, one Erlang mixture of arrival
 *                                         classes (uint64 length, lbmc_mixture_pack
 *                                         bytes; sojourn and wait share it);
 *                                         LBMC_QK_NONE: nothing
 * Nothing here is collective. */
#ifndef LBMC_RECORD_H
#define LBMC_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "../stats/dhist.h"
#include "../stats/mixture.h"
#include "lbmc/error.h"

/** Version of the layout; a record of another version is refused. */
#define LBMC_RECORD_VERSION 3

/** How a record holds its customers' sojourn and waiting times. */
typedef enum {
  LBMC_QK_NONE = 0, /* none kept (quantiles unknown) */
  LBMC_QK_HIST = 1, /* dynamic histograms (src/stats/dhist.h), sojourn then wait */
  LBMC_QK_MIX = 2   /* Erlang mixtures of arrival classes (src/stats/mixture.h) */
} lbmc_quantile_kind;

/** The fixed head of a record. */
typedef struct {
  int64_t bytes;    /* size of the whole record */
  int64_t version;  /* LBMC_RECORD_VERSION */
  int64_t point;    /* grid index of the point (names the record; not its streams) */
  int64_t replica;  /* 0-based */
  int64_t doubling; /* sequential mode's doubling: the replica ran time x 2^doubling */
  int64_t status;   /* LBMC_STATUS_OK, or LBMC_STATUS_UNSTABLE: the customer cap was hit */
  int64_t S;        /* segments of the measured period (with warmup auto: of the run) */
  int64_t W;        /* doubles per segment */
  int64_t G;        /* quantile groups */
  int64_t qkind;    /* an lbmc_quantile_kind */
  int64_t qbytes;   /* bytes of the quantile data (a multiple of 8) */
  int64_t cap;      /* the runaway cap on customers in the system */
  double t_start;   /* time simulated before the segments (a fixed warm-up; 0 with auto) */
  double seg_len;   /* time of one segment */
  double tau;       /* the histograms' time scale (time) */
  double t_stop;    /* time at which the cap was hit (status unstable), else NaN */
} lbmc_record_head;

/** A record read in place: pointers into its bytes (which must outlive it). */
typedef struct {
  lbmc_record_head h;
  const int64_t *group_start; /* G + 1 */
  const double *seg;          /* S x W */
  const unsigned char *q;     /* qbytes */
  const void *bytes;          /* the record itself, h.bytes long */
} lbmc_record;

/** Bytes of a record with S segments of W doubles, G groups and qbytes of quantile data
 *  (qbytes rounded up to a multiple of 8). */
size_t lbmc_record_size(size_t S, size_t W, size_t G, size_t qbytes);

/** Write a record into buf (cap bytes; 8-byte aligned) from its head h (bytes, version,
 *  qbytes are set here), group_start[G + 1], seg[S x W] and, with qkind LBMC_QK_HIST, the
 *  histogram pairs hist[2 G] (sojourn hist[2 g], wait hist[2 g + 1]), with LBMC_QK_MIX
 *  the mixtures mix[G]. Returns the bytes needed (writes only when they fit, like
 *  snprintf). */
size_t lbmc_record_pack(void *buf, size_t cap, const lbmc_record_head *h,
                        const int64_t *group_start, const double *seg, const lbmc_dhist *hist,
                        const lbmc_mixture *const *mix);

/** Size of the record whose head starts buf (at least sizeof(int64_t) bytes readable): its
 *  first field, or 0 when that cannot be a record's size. */
size_t lbmc_record_size_of(const void *buf);

/** Read the record of len bytes at buf (8-byte aligned, outliving rec): checks its version
 *  and that its parts fit len. Returns 0, or -1 when it is not a valid record. */
int lbmc_record_view(const void *buf, size_t len, lbmc_record *rec);

/** The sojourn (which = 0) or wait (1) histogram of group g of a LBMC_QK_HIST record,
 *  unpacked into h. Errors: LBMC_ERR_FILE (malformed data), LBMC_ERR_ARG (no such group). */
lbmc_err lbmc_record_hist(const lbmc_record *rec, size_t g, int which, lbmc_dhist *h);

/** The mixture of group g of a LBMC_QK_MIX record, as a new mixture (*mx, caller-owned).
 *  Errors: LBMC_ERR_FILE (malformed data), LBMC_ERR_ARG (no such group), LBMC_ERR_MEMORY. */
lbmc_err lbmc_record_mixture(const lbmc_record *rec, size_t g, lbmc_mixture **mx);

#endif
