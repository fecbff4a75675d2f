/* Private: the ladder queue, an event list with O(1) amortised cost per event (W. T. Tang,
 * R. S. M. Goh and I. L.-J. Thng, "Ladder queue: an O(1) priority queue structure for
 * large-scale discrete event simulation", ACM TOMACS 15(3), 2005).
 *
 * Events are the caller's nodes, numbered 0 .. 2^32 - 2: a node holds its time and two
 * 32-bit words, one the queue's link (next) and one the caller's (aux). Three tiers:
 *   Top     an unsorted array of the events later than top_start, with their minimum and
 *           maximum (an array, not a list through the nodes: making a rung of it reads
 *           the nodes in an order known ahead, so their cache misses overlap);
 *   rungs   up to LBMC_LADDER_RUNGS arrays of buckets, each bucket an unsorted list of the
 *           events in an interval of time; rung 0 spans [top_min, top_start] of the Top it
 *           was made from (about LBMC_LADDER_PER_BUCKET events per bucket), rung r + 1 one
 *           bucket of rung r that held more than LBMC_LADDER_THRESHOLD events;
 *   Bottom  a short sorted array of (time, node), the earliest events.
 * An insertion goes to Top if later than top_start, else to the first rung whose
 * unconsumed part starts at or before it, else into Bottom (binary search). The minimum
 * is Bottom's last entry; when Bottom is empty the next non-empty bucket of the lowest
 * rung is split into a new rung (when it holds more than the threshold) or sorted into
 * Bottom; when every rung is consumed, Top becomes the new rung 0; when insertions have
 * made Bottom long, it becomes a new lowest rung (as the paper's Bottom overflow). Each event is
 * moved a bounded number of times (Top, rungs, Bottom), whatever the spread of the event times: the
 * paper proves O(1) amortised cost when the mean increment of the times is finite, whatever their
 * variance (Pareto-like increments included), where a calendar queue (Brown, CACM 31(10), 1988)
 * with a fixed year rescans far events once per year and resizes on samples of the near ones.
 *
 * Memory: the caller's nodes (16 B each), about 4 / LBMC_LADDER_PER_BUCKET bytes of
 * bucket heads per event in the rungs and 4 bytes per event in Top (the arrays keep the
 * largest size they reached); no allocation per event. Not thread-safe. */
#ifndef LBMC_LADDER_H
#define LBMC_LADDER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "lbmc/error.h"

#define LBMC_LADDER_NIL        UINT32_MAX
#define LBMC_LADDER_RUNGS      8  /* the paper's bound on rungs */
#define LBMC_LADDER_THRESHOLD  50 /* a bucket with more events spawns a rung (the paper's) */
#define LBMC_LADDER_PER_BUCKET 2  /* events per bucket of a new rung */
#define LBMC_LADDER_AHEAD                                                                          \
  8                                /* taking bucket k prefetches the first event of bucket         \
                                      k + AHEAD and the second of k + AHEAD / 2 */
#define LBMC_LADDER_TOP_AHEAD  16  /* Top's events prefetched ahead when it becomes a rung */
#define LBMC_LADDER_BOTTOM_MAX 128 /* a longer Bottom becomes a rung at the next insertion */

/** An event: its time, the queue's link, the caller's word. */
typedef struct {
  double t;
  uint32_t next; /* the queue's */
  uint32_t aux;  /* the caller's */
} lbmc_ladder_node;

/** An event in Bottom: its time (copied, for locality) and node. */
typedef struct {
  double t;
  uint32_t i;
} lbmc_ladder_entry;

typedef struct {
  double start, width, inv_width; /* bucket b covers [start + b width, start + (b+1) width) */
  double cur_start;               /* start of bucket cur: events before it are below */
  uint32_t *head;                 /* cap bucket heads, NIL where empty (all NIL when unused) */
  size_t nb, cap, cur;            /* buckets in use, allocated; the first unconsumed */
  size_t count;                   /* events in the rung */
} lbmc_ladder_rung;

typedef struct {
  lbmc_ladder_node *node; /* the caller's nodes: set it again after moving them */
  uint32_t *top;          /* Top's events, in the order of insertion */
  size_t ntop, top_cap;
  double top_min, top_max, top_start;
  lbmc_ladder_rung rung[LBMC_LADDER_RUNGS];
  int nrung;
  lbmc_ladder_entry *bot; /* Bottom, sorted by decreasing time: the minimum is last */
  size_t nbot, bot_cap;
  size_t size; /* events in the queue */
} lbmc_ladder;

/** An empty queue over the caller's nodes. On error the caller still calls
 *  lbmc_ladder_free. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_ladder_create(lbmc_ladder *q, lbmc_ladder_node *node);
/** Free what the queue allocated (safe after a failed create). */
void lbmc_ladder_free(lbmc_ladder *q);
/** Empty the queue (its arrays are kept). */
void lbmc_ladder_clear(lbmc_ladder *q);
/** Insert node i (its time set, not already in the queue). Returns 0, or -1 when Bottom
 *  or Top could not grow (out of memory; the event is not inserted). */
int lbmc_ladder_push(lbmc_ladder *q, uint32_t i);
/** Refill Bottom from the rungs and Top (lbmc_ladder_min's slow path): the earliest
 *  time, INFINITY if the queue is empty. */
double lbmc_ladder_refill(lbmc_ladder *q);
/** Bytes the queue's arrays hold now (bucket heads and Bottom). */
size_t lbmc_ladder_bytes(const lbmc_ladder *q);

/** The earliest event time, INFINITY if the queue is empty. */
static inline double lbmc_ladder_min(lbmc_ladder *q)
{
  return q->nbot ? q->bot[q->nbot - 1].t : lbmc_ladder_refill(q);
}

/** Remove the earliest event and return its node; lbmc_ladder_min must have been called
 *  since the last change and found one. */
static inline uint32_t lbmc_ladder_pop(lbmc_ladder *q)
{
  q->size--;
  return q->bot[--q->nbot].i;
}

#endif
