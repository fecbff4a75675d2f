/* Private: what a point keeps of its replicas (point_store.c): the summarised ones as rows
 * of a replica store in replica order, their quantile data as a byte stream in a second
 * store, a window of the replicas that are in but not in the store yet, and the cursor the
 * passes of the reduction read the rows through (blocks of LBMC_POINT_BLOCK replicas).
 * The point's own state is point_impl.h's; this header needs only the opaque lbmc_point. */
#ifndef LBMC_POINT_STORE_H
#define LBMC_POINT_STORE_H

#include <stdint.h>

#include "../stats/estimators.h"
#include "lbmc/point.h"
#include "point_verdict.h"
#include "record.h"
#include "rep_store.h"

/** What the point's store keeps of one summarised replica (its row, in replica order):
 *  this header, then its sums block (W + 2 LBMC_QUANTILES doubles: its sums over the
 *  measured period, then its own sojourn and wait quantiles, the values its sums cannot
 *  give) and its admissions (J x LBMC_PARTS doubles: admitted to pool j in part k, flow
 *  balance); lbmc_point_row_bytes bytes in all. */
typedef struct {
  int64_t unstable; /* it hit the customer cap */
  int64_t events;   /* arrivals plus departures in its measured period */
  int64_t cap;      /* the cap */
  double cpu_seconds, growth;
  double t_stop;           /* when it hit the cap (unstable) */
  double n_start;          /* customers in the system at its time 0 */
  double fine_sy, fine_sx; /* areas and times of the fine parts of replicas 0 .. i, added
                              in replica and part order */
  lbmc_moments mom;        /* of its customers at the tick ends of its measured period */
  lbmc_relax_unit relax;   /* what the relaxation rule reads of its fine parts */
  double parts[LBMC_PARTS][LBMC_PART_FIELDS];
} lbmc_point_row;

/** The sums block and the admissions of a row (doubles after its header). */
static inline double *lbmc_point_row_sums(const lbmc_point_row *r) { return (double *)(r + 1); }

/** A replica whose record is in but which is not in the store yet: its record until it is
 *  summarised (or until the warm-up is decided), then its row and what is folded in
 *  replica order (fine parts, transient values) or appended with the row (its packed
 *  quantile data), until the replicas before it are in (the point's window). */
typedef struct {
  long i;              /* its replica index */
  int kept;            /* summarised: row, fine, qdata and trans are made */
  int full_in;         /* its record is in the point's record store (p->rstore: waiting for
                          the warm-up's decision) at byte full_off, not in `full` */
  unsigned char *full; /* the whole record in memory, until summarised */
  size_t full_size;    /* its bytes (in memory or in the record store) */
  long full_off;
  lbmc_point_row *row;  /* lbmc_point_row_bytes */
  double *fine;         /* its p->fine fine parts' areas then times (their running sums
                           need replicas 0 .. i - 1 first) */
  unsigned char *qdata; /* its retained sojourn and wait histograms, or its mixture,
                           packed (qsize 0: none retained) */
  size_t qsize;
  double *trans; /* a transient run: S x lbmc_point_trans_width values, until folded into
                    the point's lbmc_point_trans_acc (point_transient.c) */
} lbmc_point_rep;

/** Replicas read per block from the point's store. */
#define LBMC_POINT_BLOCK 1024

/** What a point reads its store through: one block of rows, and the cursor of its
 *  quantile data (a byte stream: per replica its size, 8 bytes, then its bytes). */
typedef struct {
  unsigned char *rows; /* cap rows; rows first .. first + count - 1 when count > 0 */
  long cap, first, count;
  const unsigned char *at; /* the block's rows: `rows`, or the store's own memory */
  long q_next;             /* the replica whose size is at byte q_off of the stream */
  long q_off;
  long q_cur; /* the replica whose bytes are in q (-1: none) */
  unsigned char *q;
  size_t q_size, q_cap;
  unsigned char *rec; /* a whole record read from the record store (lbmc_point_full) */
  size_t rec_cap;
} lbmc_point_cursor;

/** The admissions of row r of point p (J x LBMC_PARTS doubles after its sums block). */
double *lbmc_point_row_adm(const lbmc_point *p, const lbmc_point_row *r);

/** Bytes of a row of the point's store. */
size_t lbmc_point_row_bytes(const lbmc_point *p);

/** Row i (< p->appended) of the point's store, through its block: valid until the next
 *  read of another block (one replica at a time; passes in replica order read each block
 *  once). Errors: LBMC_ERR_FILE, LBMC_ERR_INTERNAL (not in the store), LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_row_at(const lbmc_point *p, long i, const lbmc_point_row **row);

/** The units of a reduction (point_reduce.c, point_pairs.c): the replicas' sums, read
 *  where the store keeps them, or the batches of replica 0; rows of W doubles
 *  (lbmc_units_row). */
typedef struct {
  size_t U;                /* units */
  double *row;             /* U x W: the units' raw sums, made by the caller (the batches of
                              one replica, or their merged rows); NULL: the replicas' own
                              sums, read where they are kept */
  double *y, *x, *my, *mx; /* U each: one entry's terms, and the merged batches (the
                              batches of one replica; NULL for the replicas, whose entries
                              are fed to accumulators row by row) */
  const lbmc_point *p;
} lbmc_units;

/** Row k of the units (W doubles) into *row: valid until the next call (the replicas'
 *  own sums are read from the store by blocks: read them in order). Errors: as
 *  lbmc_point_row_at. */
lbmc_err lbmc_units_row(const lbmc_units *u, size_t k, const double **row);

/** Replica u's packed quantile data (u < p->appended; size 0: none), through the cursor of
 *  the stream: read in replica order, each pass from replica 0. Valid until the next call.
 *  Errors: as lbmc_point_row_at. */
lbmc_err lbmc_point_qdata(const lbmc_point *p, long u, const unsigned char **data, size_t *size);

/** The point's stores and cursor (at creation: p->W and p->J set). Errors:
 *  LBMC_ERR_MEMORY, LBMC_ERR_ARG (LBMC_REP_STORE_BYTES malformed). */
lbmc_err lbmc_point_store_create(lbmc_point *p);
/** Free the stores, the window and replica 0's record (nothing for a point without). */
void lbmc_point_store_destroy(lbmc_point *p);
/** Forget every replica: the window emptied, the stores truncated (a new doubling). */
void lbmc_point_store_forget(lbmc_point *p);
/** Free what an entry of the window holds (its index stays). */
void lbmc_point_rep_clear(lbmc_point_rep *r);
/** Replica i's entry in the window, or NULL (not in, or in the store). */
lbmc_point_rep *lbmc_point_win(const lbmc_point *p, long i);
/** Replica i's entry (i >= p->appended), made empty if it was not in. Errors:
 *  LBMC_ERR_MEMORY, LBMC_ERR_INTERNAL (i in the store). */
lbmc_err lbmc_point_win_slot(lbmc_point *p, long i, lbmc_point_rep **r);
/** One past the last replica in the window (p->appended if none). */
long lbmc_point_win_end(const lbmc_point *p);
/** Move the summarised replicas that follow the stored ones, in order, from the window
 *  into the stores (their fine sums and transient values folded). Errors: LBMC_ERR_FILE,
 *  LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_store_flush(lbmc_point *p);

/** Keep replica r's whole record (size bytes, a valid record): before the warm-up is
 *  decided in the point's record store (p->rstore, a byte stream held in memory up to
 *  LBMC_REP_STORE_BYTES, then in its file: the first round's records do not hold the
 *  point's memory), after it in r->full (summarised at once). Errors: LBMC_ERR_MEMORY,
 *  LBMC_ERR_FILE, LBMC_ERR_ARG (LBMC_REP_STORE_BYTES malformed). */
lbmc_err lbmc_point_full_keep(lbmc_point *p, lbmc_point_rep *r, const void *record, size_t size);
/** Replica r's whole record into memory (r->full) if it is in the record store: replica 0
 *  keeps it there for batch means. Errors: LBMC_ERR_MEMORY, LBMC_ERR_FILE. */
lbmc_err lbmc_point_full_hold(const lbmc_point *p, lbmc_point_rep *r);
/** Free the record store (the warm-up decided and every replica in the window summarised:
 *  no record is in it any more; or the point forgets its replicas). */
void lbmc_point_full_release(lbmc_point *p);

/** Replica i's whole record (in the window, or replica 0's kept one) viewed in rec; NULL
 *  record when the point does not hold it. A record in the record store is read into the
 *  point's cursor (or viewed in the store's memory): valid until the next call, or the
 *  next record kept. Errors: LBMC_ERR_FILE, LBMC_ERR_MEMORY, LBMC_ERR_INTERNAL (the bytes
 *  read back are not a record). */
lbmc_err lbmc_point_full(const lbmc_point *p, long i, lbmc_record *rec);

#endif
