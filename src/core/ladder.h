/* Private: the event list of the lean engine, with O(1) amortised cost per event: a
 * calendar of array buckets (R. Brown, "Calendar queues", CACM 31(10), 1988, with the
 * ladder queue's unsorted Top and sorted Bottom: W. T. Tang, R. S. M. Goh and
 * I. L.-J. Thng, ACM TOMACS 15(3), 2005).
 *
 * An event is a time and the caller's 32-bit word (a server, say), kept together in a
 * 16-byte entry, so that no tier reads anything but its own arrays. Three tiers:
 *   Bottom  a short array of the earliest events sorted by decreasing time: the minimum
 *           is its last entry;
 *   window  nb buckets of equal width over [start, end); bucket b holds, unsorted, the
 *           events whose bucket (a formula monotone in the time) is b, as a list of
 *           chunks of LBMC_LADDER_CHUNK entries (appending writes the bucket's last
 *           chunk, which for the near buckets stays in the cache); the buckets before cur
 *           are consumed: an event that falls there goes into Bottom;
 *   Top     an unsorted array of the events at or after end.
 * When Bottom is empty, the next non-empty bucket is sorted into it (a counting sort into
 * as many sub-intervals as it holds events, then an insertion sort that moves each entry
 * within its sub-interval: O(1) per event when the times are spread); when every bucket
 * is consumed, a new window is laid from Top's minimum: width LBMC_LADDER_PER_BUCKET /
 * rate, the rate of events measured over the window just consumed (the caller's hint, or
 * Top's spread, the first time), and 2 size / LBMC_LADDER_PER_BUCKET buckets (from
 * LBMC_LADDER_BIG events on, LBMC_LADDER_PER_BUCKET_BIG in both: fewer buckets, whose
 * counts and last chunks then stay in the cache), so that by
 * Little's law the window spans about twice the mean time an event waits in the list, and
 * the events left in Top (rescanned at the next window) are few for any law of finite
 * mean. Each event is thus moved a bounded number of times (Top, a bucket, Bottom) plus,
 * when later than the window, once more per window it outlives.
 *
 * Memory: 16 B per event in a bucket plus the unfilled part of each bucket's last chunk
 * (about 2 / LBMC_LADDER_PER_BUCKET chunks per event), 12 B per bucket, 16 B per event of
 * Top (its capacity shrinks back after a window is laid) and of Bottom; the arrays keep
 * their largest size (chunks freed by a bucket are reused); no allocation per event. Not
 * thread-safe. */
#ifndef LBMC_LADDER_H
#define LBMC_LADDER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "lbmc/error.h"

#define LBMC_LADDER_NIL            UINT32_MAX
#define LBMC_LADDER_CHUNK          16   /* entries per chunk of a bucket (256 B) */
#define LBMC_LADDER_PER_BUCKET     256  /* events per bucket the width aims at */
#define LBMC_LADDER_PER_BUCKET_BIG 1024 /* the same from LBMC_LADDER_BIG events on */
#define LBMC_LADDER_BIG            (1u << 19)
#define LBMC_LADDER_MIN_BUCKETS    256 /* buckets of a window, at least */

/** A record of 16 bytes the lean engine keeps per server: a time and two 32-bit words. */
typedef struct {
  double t;
  uint32_t next;
  uint32_t aux;
} lbmc_ladder_node;

/** An event: its time and the caller's word. */
typedef struct {
  double t;
  uint32_t id;
  uint32_t pad;
} lbmc_ladder_entry;

/** A bucket: its first and last chunk and its events (chunk k of a bucket is full but
 *  the last, which holds n - (chunks - 1) LBMC_LADDER_CHUNK entries). */
typedef struct {
  uint32_t head, tail, n;
} lbmc_ladder_bucket;

typedef struct {
  /* the window: bucket b covers [start + b width, start + (b + 1) width) */
  double start, end, width, inv_width; /* inv_width 0: every event before end in bucket 0 */
  lbmc_ladder_bucket *bk;
  size_t nb, bk_cap, cur; /* buckets in use, allocated, the first unconsumed */
  size_t taken;           /* events sorted into Bottom from this window's buckets */
  double rate_hint;       /* events per unit time the caller expects (0: none) */
  /* the chunks of the buckets */
  lbmc_ladder_entry *ent; /* chunk c is ent[c CHUNK .. (c + 1) CHUNK) */
  uint32_t *cnext;        /* the next chunk of a bucket, or of the free list */
  uint32_t chunk_used, chunk_cap, chunk_free;
  /* Top */
  lbmc_ladder_entry *top;
  size_t ntop, top_cap;
  double top_min, top_max;
  /* Bottom, sorted by decreasing time */
  lbmc_ladder_entry *bot;
  size_t nbot, bot_cap, bot_ins; /* bot_ins: events put into it since it was filled */
  uint32_t *cnt;                 /* the counting sort's counts */
  size_t cnt_cap;
  size_t size; /* events in the queue */
} lbmc_ladder;

/** An empty queue. On error the caller still calls lbmc_ladder_free.
 *  Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_ladder_create(lbmc_ladder *q);
/** Free what the queue allocated (safe after a failed create). */
void lbmc_ladder_free(lbmc_ladder *q);
/** Empty the queue (its arrays are kept). */
void lbmc_ladder_clear(lbmc_ladder *q);
/** Lay an empty window from time t0 for about `size` events arriving at `rate` per unit
 *  time (both > 0; a hint: the widths adapt to the measured rate), so that the events
 *  pushed next go straight into buckets rather than into Top. Only on an empty queue
 *  (after create or clear); returns 0, or -1 out of memory (the queue is unchanged). */
int lbmc_ladder_plan(lbmc_ladder *q, double t0, double rate, size_t size);
/** lbmc_ladder_push, every case (its slow path). */
int lbmc_ladder_push_any(lbmc_ladder *q, double t, uint32_t id);

/** The bucket of time t < end: monotone in t, in [0, nb - 1]. */
static inline size_t lbmc_ladder_bucket_of(const lbmc_ladder *q, double t)
{
  const double x = (t - q->start) * q->inv_width;
  return x > 0 ? (x < (double)(q->nb - 1) ? (size_t)x : q->nb - 1) : 0;
}

/** Insert an event at time t (not NaN) with the caller's word id. Returns 0, or -1 out
 *  of memory (the event is not inserted). Inline, the common case: an unconsumed bucket
 *  whose last chunk has room. */
static inline int lbmc_ladder_push(lbmc_ladder *q, double t, uint32_t id)
{
  if (t < q->end) {
    const size_t b = lbmc_ladder_bucket_of(q, t);
    lbmc_ladder_bucket *k = &q->bk[b];
    const uint32_t r = k->n % LBMC_LADDER_CHUNK;
    if (b >= q->cur && r != 0) {
      q->ent[(size_t)k->tail * LBMC_LADDER_CHUNK + r] = (lbmc_ladder_entry){t, id, 0};
      k->n++;
      q->size++;
      return 0;
    }
  }
  return lbmc_ladder_push_any(q, t, id);
}
/** Refill Bottom from the buckets and Top (lbmc_ladder_min's slow path): the earliest
 *  time, INFINITY if the queue is empty (or out of memory: size is then > 0). */
double lbmc_ladder_refill(lbmc_ladder *q);
/** Bytes the queue's arrays hold now. */
size_t lbmc_ladder_bytes(const lbmc_ladder *q);

/** The earliest event time, INFINITY if the queue is empty. */
static inline double lbmc_ladder_min(lbmc_ladder *q)
{
  return q->nbot ? q->bot[q->nbot - 1].t : lbmc_ladder_refill(q);
}

/** Remove the earliest event and return its word; lbmc_ladder_min must have been called
 *  since the last change and found one. */
static inline uint32_t lbmc_ladder_pop(lbmc_ladder *q)
{
  q->size--;
  return q->bot[--q->nbot].id;
}

/** The word of the earliest event, lbmc_ladder_min having found one (for prefetching). */
static inline uint32_t lbmc_ladder_peek(const lbmc_ladder *q) { return q->bot[q->nbot - 1].id; }

#endif
