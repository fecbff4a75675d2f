/* Private: the state of one simulated system (one replica) under a per-server engine,
 * and the primitive state changes every service model shares (the levels and the
 * integrals). Policies read this state; only the engines change it. It sits below
 * both (src/system/), with the model's data (system.h) and the policy interface
 * (policy.h). */
#ifndef LBMC_STATE_H
#define LBMC_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/stream.h"
#include "../core/tally.h"
#include "../core/ziggurat.h"
#include "../stats/dhist.h"
#include "system.h"

/** One server. Servers of pool j are the indices offset[j] .. offset[j]+N[j]-1. Its
 *  customer count is q[s] and its pool pool_of[s] (dense arrays: policies read them
 *  for random servers, so they should stay in cache). The customer in service is
 *  stored inline; only waiting customers occupy customer records. */
typedef struct {
  double t_head;    /* arrival time of the customer in service (exponential engine) */
  int32_t last;     /* last waiting customer (index into cust), -1 if none */
  int32_t busy_pos; /* position in the pool's busy list, -1 if idle */
} lbmc_server;

/** A waiting customer, linked in its server's FCFS queue or in the free list. */
typedef struct {
  double t_arrival; /* arrival time */
  int32_t next;     /* next customer in the queue / free list, -1 = none */
  int32_t pad_;
} lbmc_customer;

/** A server's general-service quantities, together so that one cache line serves a
 *  workload query. */
typedef struct {
  double t_done;    /* time of the server's next completion */
  double work_wait; /* requirements of its waiting customers, summed */
  double V, Vt;     /* service attained per slot customer, at time Vt (speed lists) */
} lbmc_gen_server;

struct lbmc_policy_type_;

typedef struct lbmc_state_ {
  /* Model, read-only during a run. */
  const lbmc_model *m;
  uint32_t n, J, K, R;
  double lambda_total;        /* lambda * n */
  uint32_t B[LBMC_MAX_POOLS]; /* buffer, UINT32_MAX for unlimited */
  double mu[LBMC_MAX_POOLS];
  double inv_mu[LBMC_MAX_POOLS];
  uint32_t slots[LBMC_MAX_POOLS];      /* L_j: length of the pool's speed list (1: constant) */
  const double *rates[LBMC_MAX_POOLS]; /* mu_j(1..L_j) */
  lbmc_zig_exp zig;                    /* exponential sampler tables */

  /* System state. */
  double t;
  lbmc_server *srv; /* n */
  uint32_t *q;      /* n: customers at each server, the one in service included */
  uint8_t *pool_of; /* n: pool of each server */
  int32_t *first;   /* n: first waiting customer of each server, -1 if none */
  int32_t *busy;    /* n; pool j's busy servers at busy[offset[j] .. +nbusy[j]) */
  uint32_t nbusy[LBMC_MAX_POOLS];
  lbmc_customer *cust; /* cust_cap */
  int32_t cust_free;   /* head of the free list */
  uint32_t cust_cap;
  uint32_t *level;                 /* J x (K+1): servers of pool j holding >= k customers */
  uint64_t pool_q[LBMC_MAX_POOLS]; /* customers in pool j */

  /* General service only (NULL otherwise). */
  /* A server of pool j serves up to L_j customers at once (its slots: the first
   * min(q, L_j) of its FCFS queue), sharing its speed mu_j(q) equally; L_j = 1 is a
   * plain FCFS server. V[s] is the service attained per slot customer (at time Vt[s]);
   * a slot customer finishes when V reaches its level f = V at its start + requirement. */
  uint32_t lmax;      /* most slots of any pool */
  double *slot_a;     /* n x lmax: arrival times of the slot customers */
  double *slot_f;     /* n x lmax: their finish levels */
  lbmc_gen_server *g; /* n: t_done, work_wait, V, Vt of each server */
  double *cust_work;  /* cust_cap: requirement of each waiting customer */

  /* Histograms of this quantile group (src/stats/dhist.h), NULL = not recorded. */
  lbmc_dhist *hist_sojourn, *hist_wait;

  /* Random streams (owned by the workspace). */
  lbmc_stream *s_arr, *s_svc, *s_route;

  /* The tick accumulator (src/core/tally.h): counters (policies count their messages
   * in tally.c.messages and tally.c.withdrawals), integrals, customers in the system,
   * the runaway cap, why the engine halted. */
  lbmc_tally tally;

  /* Policy. */
  const struct lbmc_policy_type_ *pol;
  void *pw;
} lbmc_state;

/** Remaining work at server s in time units at its pool's first speed mu_j: the
 *  remaining requirements of the customers in service plus the waiting ones, divided
 *  by mu_j. General-service engine only; used by workload-aware policies (lwl). */
static inline double lbmc_workload(const lbmc_state *st, uint32_t s)
{
  uint32_t q = st->q[s], j = st->pool_of[s], L = st->slots[j], m = q < L ? q : L;
  double v, left = 0;
  const double *f = st->slot_f + (size_t)s * st->lmax;
  if (q == 0) return 0.0;
  if (st->lmax == 1) /* one slot at constant speed: the service ends at t_done */
    return (st->g[s].t_done - st->t) + st->g[s].work_wait * st->inv_mu[j];
  v = st->g[s].V + (st->t - st->g[s].Vt) * st->rates[j][m - 1] / (double)m;
  for (uint32_t i = 0; i < m; i++) left += f[i] - v;
  return (left + st->g[s].work_wait) * st->inv_mu[j];
}

/** Bookkeeping for a server of pool j whose count went from q-1 to q (arrival): the
 *  pool's counts and the tally's integrals. */
static inline void lbmc_level_up(lbmc_state *st, uint32_t j, uint32_t q)
{
  lbmc_tally_up(&st->tally, st->t, j, q);
  st->pool_q[j] += 1;
  if (q <= st->K) st->level[j * (st->K + 1) + q] += 1;
}

/** Bookkeeping for a server of pool j whose count went from q+1 to q (departure). */
static inline void lbmc_level_down(lbmc_state *st, uint32_t j, uint32_t q)
{
  lbmc_tally_down(&st->tally, st->t, j, q);
  st->pool_q[j] -= 1;
  if (q + 1 <= st->K) st->level[j * (st->K + 1) + q + 1] -= 1;
}

#endif
