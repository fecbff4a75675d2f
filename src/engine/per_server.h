/* Private: what the two per-server engines (servers: engine_servers.c; general:
 * engine_general.c) share, so that neither calls the other: the state of every
 * server and its allocation, the start of a replica, its view for the tally (ticks are
 * closed by src/core/tally.h), and the state changes of an arrival and a departure
 * (route, admit, enqueue, leave, start the next waiting customer, tell the policy).
 * The service model (when a customer finishes) is each engine's own.
 *
 * A per-server engine's workspace starts with an lbmc_per_server (its first member),
 * so the functions of the engine table that need no more (set_histograms, time,
 * state, tally, view) are the ones below, taking the workspace itself. */
#ifndef LBMC_PER_SERVER_H
#define LBMC_PER_SERVER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/sampler.h"
#include "../core/stream.h"
#include "../core/ziggurat.h"
#include "../stats/dhist.h"
#include "../system/policy.h"
#include "../system/state.h"
#include "../system/system.h"
#include "lbmc/run_options.h" /* lbmc_init_kind */
#include "occ_meanfield.h"

typedef struct {
  lbmc_state st;           /* the system: servers, queues, the tally */
  double next_arr;         /* time of the next arrival */
  double inv_lambda_total; /* 1 / (lambda n) */
  lbmc_view view;          /* the read-only view of st (src/core/tally.h) */
  lbmc_init_kind init;     /* how replicas start (lbmc_ps_set_init) */
  lbmc_occ_mf_point mf;    /* the mean-field point (init meanfield), settled or not */
  int64_t *counts;         /* scratch: servers per level of one pool */
  uint64_t started;        /* customers placed at the start of this replica */
} lbmc_per_server;

/** The per-server engines' limits, for their tables: customers held one by one are
 *  numbered with 32-bit integers. */
#define LBMC_PS_CAP_MAX ((uint64_t)INT32_MAX - 1)

/** 1 if model m has at most LBMC_MAX_SERVERS servers (numbered with 32-bit integers);
 *  else 0 and the reason in why[len], naming the occupancy engine. */
int lbmc_ps_applies_size(const lbmc_model *m, char *why, size_t len);

/** Allocate the state of model m (set up) with K tail levels and the policy's
 *  workspace; max_customers caps the customers in the system. On error the caller
 *  still calls lbmc_ps_destroy. Errors: LBMC_ERR_MEMORY (and the policy's). */
lbmc_err lbmc_ps_create(lbmc_per_server *ps, const lbmc_model *m, int K, uint64_t max_customers);
/** The same without customer records and busy lists (srv, first, busy and cust stay
 *  NULL, cust_cap 0), for an engine that keeps no waiting customer one by one, and
 *  without the counts: the engine sets st->q and st->q_shift to its own records before
 *  the first reset (and NULLs st->q before lbmc_ps_destroy). pool_of and the levels
 *  only; its tally sums the per-customer terms as `terms` says.
 *  Errors: LBMC_ERR_MEMORY (and the policy's). */
lbmc_err lbmc_ps_create_lean(lbmc_per_server *ps, const lbmc_model *m, int K,
                             uint64_t max_customers, lbmc_terms terms);
/** Bytes of the shared state for model m with K tail levels (lbmc_ps_create: records 1;
 *  lbmc_ps_create_lean: 0, without the counts) and the policy's per-server workspace;
 *  *per_customer: the bytes of a waiting customer's record (records), else 0. */
double lbmc_ps_memory(const lbmc_model *m, int K, int records, double *per_customer);
/** 1 if every pool of m has the same service law (so a requirement may be drawn before
 *  routing: every policy then sees the same requirements). */
int lbmc_ps_same_service(const lbmc_model *m);
/** Free what lbmc_ps_create allocated (safe after a failed create). */
void lbmc_ps_destroy(lbmc_per_server *ps);
/** A system at time 0 with these streams (LBMC_PURPOSES, seeded): every server idle, or,
 *  after lbmc_ps_set_init(LBMC_INIT_MEANFIELD) found a fixed point, customers placed by
 *  randomised rounding of its queue-length distribution (lbmc_occ_round: per pool, the
 *  servers at each level are the floor or the ceiling of N_j s_j(k), in expectation
 *  exactly; one uniform per pool from the aux stream, which nothing else draws from, so
 *  arrivals, requirements and routing keep their streams); the levels laid out over the
 *  pool's servers in order, since every policy treats a pool's servers alike. Counters and
 *  integrals zero, the customers in the system set, the policy reset (it reads the
 *  counts), the first arrival drawn. The engine then sets the service of the servers with
 *  customers. */
void lbmc_ps_reset(lbmc_per_server *ps, lbmc_stream *streams);
/** End of a run to t_end (lbmc_tally_finish): the tick closed into rec at t_end, or at
 *  the clock if the runaway cap was hit (NULL rec discards it); the clock set to the
 *  tick's end. `engine` names the engine in messages. Errors: LBMC_ERR_MEMORY,
 *  LBMC_ERR_INTERRUPTED (a stop request). */
lbmc_err lbmc_ps_finish(lbmc_per_server *ps, double t_end, double *rec, const char *engine);
/** How the next resets start (the engine table's set_init, for the per-server engines):
 *  LBMC_INIT_MEANFIELD computes, once per workspace, the fixed point of the mean-field
 *  ODE of the model with exponential service (occ_meanfield.h: the policy's occupancy
 *  form gives its routing law); without one (the policy has no occupancy form, or the ODE
 *  does not settle) replicas start empty and note[len] says why. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_ps_set_init(lbmc_per_server *ps, lbmc_init_kind init, char *note, size_t len);
/** The engine table's meanfield_start for the per-server engines: 1 when
 *  lbmc_ps_set_init(LBMC_INIT_MEANFIELD) would place customers (the fixed point computed
 *  now if it was not), else 0; ps->init unchanged. */
int lbmc_ps_meanfield_start(lbmc_per_server *ps);
/** 1 if lbmc_ps_reset placed customers on the servers (a mean-field start): the engine
 *  then sets the service of each server with customers (residuals from the aux stream). */
static inline int lbmc_ps_started(const lbmc_per_server *ps) { return ps->started > 0; }

/** A waiting-customer record, or -1 when the records cannot grow (then the tally
 *  halts: out of memory). */
int32_t lbmc_ps_cust_alloc(lbmc_per_server *ps);

/* Engine-table functions of both per-server engines (ws: their workspace). */
void lbmc_ps_set_histograms(void *ws, lbmc_dhist *sojourn, lbmc_dhist *wait);
double lbmc_ps_time(const void *ws);
const lbmc_state *lbmc_ps_state(const void *ws);
lbmc_tally *lbmc_ps_tally(void *ws);
const lbmc_view *lbmc_ps_view(const void *ws);

/** The next arrival time after now: Exp(1) / (lambda n) from the arrival stream. */
static inline void lbmc_ps_next_arrival(lbmc_per_server *ps)
{
  ps->next_arr = ps->st.t + lbmc_exp_zig(ps->st.s_arr, &ps->st.zig) * ps->inv_lambda_total;
}

/** A requirement (mean 1) of pool j's law from the service stream: the ziggurat for the
 *  exponential, GSL's normal ziggurat inline for the lognormal (the numbers of
 *  lbmc_service_sample, without its calls through the gsl_rng), else the law's GSL
 *  sampler (sampler: a gsl_rng on the service stream). */
static inline double lbmc_ps_requirement(lbmc_state *st, gsl_rng *sampler, uint32_t j)
{
  const lbmc_service *svc = &st->m->service[j];
  if (svc->kind == LBMC_SERVICE_EXPONENTIAL) return lbmc_exp_zig(st->s_svc, &st->zig);
  if (svc->kind == LBMC_SERVICE_LOGNORMAL)
    return exp(svc->p[0] + svc->p[1] * lbmc_normal_zig(st->s_svc));
  return lbmc_service_sample(svc, sampler);
}

/** Server s's pool (without touching pool_of when there is one pool). */
static inline uint32_t lbmc_ps_pool(const lbmc_state *st, uint32_t s)
{
  return st->J > 1 ? st->pool_of[s] : 0;
}

/** Route an arrival: the server chosen, or UINT32_MAX if it was blocked (counted). */
static inline uint32_t lbmc_ps_route(lbmc_state *st)
{
  uint32_t r = st->R > 1 ? lbmc_uint(st->s_route, st->R) : 0;
  uint32_t s = st->pol->route(st, st->pw, r);
  lbmc_tally_arrival(&st->tally);
  if (lbmc_q(st, s) >= st->B[lbmc_ps_pool(st, s)]) {
    st->tally.c.blocked++;
    return UINT32_MAX;
  }
  return s;
}

/** Counters and integrals of an admission at server s of pool j, now holding q;
 *  served = 1 if the customer starts service at once (a wait of 0). */
static inline void lbmc_ps_admitted(lbmc_state *st, uint32_t s, uint32_t j, uint32_t q, int served)
{
  *lbmc_q_ref(st, s) = q;
  lbmc_level_up(st, j, q);
  st->tally.c.admitted[j]++;
  if (served) {
    st->tally.c.starts++;
    if (st->hist_wait) lbmc_dhist_add(st->hist_wait, 0);
  } else {
    st->tally.c.waited++;
  }
  lbmc_tally_enter(&st->tally);
  if (st->pol->on_change) st->pol->on_change(st, st->pw, s, q - 1);
}

/** Append a waiting customer (arrival time now) to server s's queue; its record,
 *  or -1 (see lbmc_ps_cust_alloc). */
static inline int32_t lbmc_ps_enqueue(lbmc_per_server *ps, uint32_t s)
{
  lbmc_state *st = &ps->st;
  int32_t c = lbmc_ps_cust_alloc(ps);
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

/** A customer of server s (pool j) leaves: its count, the counters and integrals (no
 *  per-customer sums); returns the server's new count. */
static inline uint32_t lbmc_ps_gone(lbmc_state *st, uint32_t s, uint32_t j)
{
  uint32_t q = --*lbmc_q_ref(st, s);
  st->tally.c.departures++;
  st->tally.in_system--;
  lbmc_level_down(st, j, q);
  return q;
}

/** A customer of server s (pool j) leaves after `sojourn` time units: counters,
 *  integrals, histogram (sojourn +INFINITY: a customer present at the start, counted
 *  apart); returns the server's new count. */
static inline uint32_t lbmc_ps_left(lbmc_state *st, uint32_t s, uint32_t j, double sojourn)
{
  if (sojourn < INFINITY) {
    st->tally.sum_sojourn += sojourn;
    if (st->hist_sojourn) lbmc_dhist_add(st->hist_sojourn, sojourn);
  } else { /* present at the start (arrival time -INFINITY): no term */
    st->tally.c.untimed_departures++;
  }
  return lbmc_ps_gone(st, s, j);
}

/** The first waiting customer of server s starts service now (s must have one): it
 *  leaves the queue, its wait is recorded and its record freed; returns the record
 *  (its t_arrival and cust_work stay readable until the next allocation). */
static inline int32_t lbmc_ps_start_next(lbmc_state *st, uint32_t s)
{
  int32_t c = st->first[s];
  double wait = st->t - st->cust[c].t_arrival;
  st->first[s] = st->cust[c].next;
  if (st->first[s] < 0) st->srv[s].last = -1;
  st->cust[c].next = st->cust_free;
  st->cust_free = c;
  if (wait < INFINITY) {
    st->tally.sum_wait += wait;
    if (st->hist_wait) lbmc_dhist_add(st->hist_wait, wait);
  } else { /* present at the start: no term */
    st->tally.c.untimed_starts++;
  }
  st->tally.c.starts++;
  return c;
}

/** Policy hooks after a departure left server s (pool j) with q customers. */
static inline void lbmc_ps_departed(lbmc_state *st, uint32_t s, uint32_t j, uint32_t q)
{
  if (q < st->slots[j] && st->pol->on_idle) st->pol->on_idle(st, st->pw, s);
  if (st->pol->on_change) st->pol->on_change(st, st->pw, s, q + 1);
}

#endif
