/* Private: the tally, the one tick accumulator of every engine. An engine keeps its own
 * state (servers, or counts per pool and level) and tells the tally what happened:
 * arrivals, blocks, admissions, service starts, departures, messages (the counters),
 * a server's count going up or down (the integrals of customers per pool and of the
 * tail counts, and the observers' move hook), the per-customer sums. At the end of a
 * tick the engine closes it: the tally completes the integrals from the engine's read-
 * only view (lbmc_view), writes the tick record (src/core/ticks.h), lets the observers
 * fill their blocks after it, and starts the next tick. It also holds why an engine
 * stopped early: the runaway cap, out of memory, or a stop request polled every
 * LBMC_TALLY_POLL_ARRIVALS arrivals.
 *
 * Integrals use the signed-time form: over a tick [t0, t1], the integral of a count c is
 * c(t1) (t1 - t0) - sum over its changes at times s of (change) (s - t0); the first term
 * is added when the tick is closed.
 *
 * The hooks (view, observers, stop) are function pointers set by the dispatcher, so the
 * tally, below the engines and the observers, calls neither by name. */
#ifndef LBMC_TALLY_H
#define LBMC_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "lbmc/error.h"
#include "lbmc/types.h"

/** Counters, cumulative since the replica started. messages is 128-bit: full jsq counts
 *  2n messages per arrival, and n reaches 10^12. */
typedef struct {
  int64_t arrivals, blocked, waited, departures, starts, withdrawals;
  unsigned __int128 messages;
  int64_t admitted[LBMC_MAX_POOLS];
} lbmc_counters;

/** Why an engine stopped before the end of a tick (0: it did not). */
typedef enum {
  LBMC_HALT_NONE = 0,
  LBMC_HALT_CAP,    /* the customers in the system exceeded the runaway cap: unstable */
  LBMC_HALT_MEMORY, /* a structure could not grow: an error (LBMC_ERR_MEMORY) */
  LBMC_HALT_STOP    /* the stop hook asked to stop (a signal): LBMC_ERR_INTERRUPTED */
} lbmc_halt;

/** Where the per-customer sums of a tick have their terms. */
typedef enum {
  LBMC_TERMS_AT_DEPARTURE = 0, /* sojourns summed at departures, waits at service starts
                                  (the per-server engines: the times themselves) */
  LBMC_TERMS_AT_ADMISSION      /* both at admissions (the occupancy engines: expected
                                  times given the class joined) */
} lbmc_terms;

/** A read-only view of an engine's state, for closing ticks and for observers. */
typedef struct lbmc_view_ {
  const void *ws; /* the engine's workspace */
  int J, K;
  const int64_t *N; /* J: servers per pool */
  /** Servers of pool j holding at least k customers, 0 <= k <= K (every engine), and
   *  beyond K where the engine keeps them (else -1). */
  int64_t (*tail)(const void *ws, int j, uint32_t k);
  /** Customers in pool j. */
  uint64_t (*customers)(const void *ws, int j);
  /** Unfinished work in pool j, in units of requirement (the service in progress
   *  included; the expected value given the state where the engine does not keep the
   *  requirements); NULL where the engine cannot say. */
  double (*workload)(const void *ws, int j);
  /** The clock. */
  double (*time)(const void *ws);
} lbmc_view;

/** The tally of one engine workspace. */
typedef struct {
  int J, K;
  lbmc_counters c;   /* cumulative */
  lbmc_counters c0;  /* at the start of the current tick */
  double t0;         /* start of the current tick */
  double *area_q;    /* J: integral of customers in pool j, this tick (signed-time form) */
  double *area_tail; /* J x K: integral of servers of pool j holding >= k */
  double sum_sojourn, sum_wait; /* per-customer sums of this tick (time) */
  lbmc_terms terms;
  uint64_t in_system;     /* customers in the system */
  uint64_t max_customers; /* the runaway cap */
  lbmc_halt halt;
  /* Hooks (the dispatcher's): a server of pool j went from `from` to `to` customers at
   * time t; the observers' blocks of a closing tick (NULL block: discard); stop? */
  void (*move)(void *ctx, double t, int j, uint32_t from, uint32_t to);
  void (*observe)(void *ctx, const lbmc_view *v, double t0, double t1, double *block);
  void *obs_ctx;
  int (*stop)(void *ctx);
  void *stop_ctx;
} lbmc_tally;

/** Arrivals between two polls of the stop hook (a power of two): a few hundred
 *  microseconds of simulation at the engines' speeds, so that a stop request acts well
 *  within a second. */
#define LBMC_TALLY_POLL_ARRIVALS 4096u

/** Allocate the integrals of J pools and K tail levels; the tally starts as after
 *  lbmc_tally_reset. On error the caller still calls lbmc_tally_free.
 *  Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_tally_create(lbmc_tally *t, int J, int K, uint64_t max_customers, lbmc_terms terms);
/** Free what lbmc_tally_create allocated (safe after a failed create); the hooks stay. */
void lbmc_tally_free(lbmc_tally *t);
/** A new replica at time 0: counters, integrals, sums and the halt reason cleared; the
 *  customers in the system set to in_system (a non-empty start); the hooks kept. */
void lbmc_tally_reset(lbmc_tally *t, uint64_t in_system);
/** Close the tick [t0, t1] of an engine at clock t1 (or at its clock when it halted):
 *  complete the integrals from the view, write rec (the first lbmc_tick_width(J, K)
 *  doubles; LBMC_TK_CPU = 0, the driver's) and let the observers fill the rest (NULL
 *  rec: the tick is discarded), then start the next tick at t1. The engine has set
 *  sum_sojourn and sum_wait (LBMC_TERMS_AT_ADMISSION: before this call). */
void lbmc_tally_close(lbmc_tally *t, const lbmc_view *v, double t1, double *rec);
/** The end of an engine's advance: LBMC_ERR_MEMORY (with a message naming `engine`) if
 *  it ran out of memory, LBMC_ERR_INTERRUPTED (quietly) at a stop request, else the tick
 *  closed at t_end, or at the clock when the runaway cap was hit (lbmc_tally_close). */
lbmc_err lbmc_tally_finish(lbmc_tally *t, const lbmc_view *v, double t_end, double *rec,
                           const char *engine);

/** A server of pool j went from q - 1 to q customers at time now. */
static inline void lbmc_tally_up(lbmc_tally *t, double now, uint32_t j, uint32_t q)
{
  const double dt = now - t->t0;
  t->area_q[j] -= dt;
  if (q <= (uint32_t)t->K) t->area_tail[j * (uint32_t)t->K + q - 1] -= dt;
  if (t->move) t->move(t->obs_ctx, now, (int)j, q - 1, q);
}

/** A server of pool j went from q + 1 to q customers at time now. */
static inline void lbmc_tally_down(lbmc_tally *t, double now, uint32_t j, uint32_t q)
{
  const double dt = now - t->t0;
  const uint32_t k = q + 1;
  t->area_q[j] += dt;
  if (k <= (uint32_t)t->K) t->area_tail[j * (uint32_t)t->K + k - 1] += dt;
  if (t->move) t->move(t->obs_ctx, now, (int)j, k, q);
}

/** One more customer in the system: the runaway cap is checked here. */
static inline void lbmc_tally_enter(lbmc_tally *t)
{
  if (++t->in_system > t->max_customers) t->halt = LBMC_HALT_CAP;
}

/** A structure could not grow: the replica stops with LBMC_ERR_MEMORY. */
static inline void lbmc_tally_out_of_memory(lbmc_tally *t) { t->halt = LBMC_HALT_MEMORY; }

/** Poll the stop hook now (lbmc_tally_arrival calls it). */
void lbmc_tally_poll(lbmc_tally *t);

/** Count one arrival; every LBMC_TALLY_POLL_ARRIVALS arrivals, ask the stop hook. */
static inline void lbmc_tally_arrival(lbmc_tally *t)
{
  if ((++t->c.arrivals & (LBMC_TALLY_POLL_ARRIVALS - 1)) == 0) lbmc_tally_poll(t);
}

#endif
