/* Private: the engine struct and the state changes both service models share
 * (engine.c: common; engine_exp.c: exponential service, the Markov race;
 * engine_general.c: general service, an event calendar). */
#ifndef LBMC_ENGINE_IMPL_H
#define LBMC_ENGINE_IMPL_H

#include <gsl/gsl_rng.h>
#include <string.h>

#include "engine.h"
#include "../core/hist.h"
#include "lbmc/rng.h"
#include "../system/policy.h"

typedef struct {
  uint64_t key; /* t_done of the server, as the bits of the double: for times >= 0 the
                   bit patterns order like the values, and integers compare faster */
  uint32_t server;
} lbmc_heap_item;

static inline uint64_t lbmc_time_key(double t)
{
  uint64_t k;
  memcpy(&k, &t, sizeof k);
  return k;
}

static inline double lbmc_key_time(uint64_t k)
{
  double t;
  memcpy(&t, &k, sizeof t);
  return t;
}

struct lbmc_engine_ {
  lbmc_state st;
  lbmc_stream streams[LBMC_PURPOSES];
  int general; /* 1: general-service engine */
  double next_arr;
  double inv_lambda_total;
  lbmc_counters c0; /* counters at the start of the current tick */
  double cpu0;      /* thread CPU time at the start of the current tick */
  int mem_error;

  /* exponential engine */
  double next_dep;
  uint32_t dep_server; /* the server of the next completion, chosen with next_dep */

  /* general engine (the slot arrays are in the state) */
  gsl_rng *sampler;     /* service requirements, from the service stream */
  int common_service;   /* every pool has the same distribution: draw before routing */
  lbmc_heap_item *heap; /* busy servers, a 4-ary min-heap on t_done */
  int32_t *hpos;        /* n: position in heap, -1 if not in it (kept only with track) */
  int track;            /* some pool has slots: keys of servers inside the heap change */
  uint32_t hsize;
};

/* engine_exp.c */
void lbmc_engine_exp_reset(lbmc_engine *e);
void lbmc_engine_exp_run(lbmc_engine *e, double t_end);
/* engine_general.c */
lbmc_err lbmc_engine_general_create(lbmc_engine *e);
void lbmc_engine_general_destroy(lbmc_engine *e);
void lbmc_engine_general_reset(lbmc_engine *e);
void lbmc_engine_general_run(lbmc_engine *e, double t_end);

/** A waiting-customer record, or -1 when the cap on records is reached or memory is
 *  exhausted (then e->mem_error / st->overflow are set). */
int32_t lbmc_engine_cust_alloc(lbmc_engine *e);

/** Route an arrival: the server chosen, or UINT32_MAX if it was blocked (counted). */
static inline uint32_t lbmc_engine_route(lbmc_state *st)
{
  uint32_t r = st->R > 1 ? lbmc_uint(st->s_route, st->R) : 0;
  uint32_t s = st->pol->route(st, st->pw, r);
  st->c.arrivals++;
  if (st->q[s] >= st->B[st->pool_of[s]]) {
    st->c.blocked++;
    return UINT32_MAX;
  }
  return s;
}

/** Counters and integrals of an admission at server s of pool j, now holding q;
 *  served = 1 if the customer starts service at once (a wait of 0). */
static inline void lbmc_engine_admitted(lbmc_state *st, uint32_t s, uint32_t j, uint32_t q,
                                        int served)
{
  st->q[s] = q;
  lbmc_level_up(st, j, q);
  st->c.admitted[j]++;
  if (served) {
    st->c.starts++;
    if (st->hist_wait) st->hist_wait[0]++;
  } else {
    st->c.waited++;
  }
  if (++st->in_system > st->max_customers) st->overflow = 1;
  if (st->pol->on_change) st->pol->on_change(st, st->pw, s, q - 1);
}

/** Append a waiting customer (arrival time now) to server s's queue; its record. */
static inline int32_t lbmc_engine_enqueue(lbmc_engine *e, uint32_t s)
{
  lbmc_state *st = &e->st;
  int32_t c = lbmc_engine_cust_alloc(e);
  if (c < 0) return -1;
  st->cust[c].t_arrival = st->t;
  st->cust[c].next = -1;
  if (st->srv[s].last >= 0)
    st->cust[st->srv[s].last].next = c;
  else
    st->first[s] = c;
  st->srv[s].last = c;
  return c;
}

/** A customer of server s (pool j) leaves after `sojourn` time units: counters,
 *  integrals, histogram; returns the server's new count. */
static inline uint32_t lbmc_engine_left(lbmc_state *st, uint32_t s, uint32_t j, double sojourn)
{
  uint32_t q = --st->q[s];
  st->sum_sojourn += sojourn;
  if (st->hist_sojourn) st->hist_sojourn[lbmc_hist_bin(sojourn)]++;
  st->c.departures++;
  st->in_system--;
  lbmc_level_down(st, j, q);
  return q;
}

/** The first waiting customer of server s starts service now (s must have one): it
 *  leaves the queue, its wait is recorded and its record freed; returns the record
 *  (its t_arrival and cust_work stay readable until the next allocation). */
static inline int32_t lbmc_engine_start_next(lbmc_state *st, uint32_t s)
{
  int32_t c = st->first[s];
  double wait = st->t - st->cust[c].t_arrival;
  st->first[s] = st->cust[c].next;
  if (st->first[s] < 0) st->srv[s].last = -1;
  st->cust[c].next = st->cust_free;
  st->cust_free = c;
  st->sum_wait += wait;
  if (st->hist_wait) st->hist_wait[lbmc_hist_bin(wait)]++;
  st->c.starts++;
  return c;
}

/** Policy hooks after a departure left server s (pool j) with q customers. */
static inline void lbmc_engine_departed(lbmc_state *st, uint32_t s, uint32_t j, uint32_t q)
{
  if (q < st->slots[j] && st->pol->on_idle) st->pol->on_idle(st, st->pw, s);
  if (st->pol->on_change) st->pol->on_change(st, st->pw, s, q + 1);
}

#endif
