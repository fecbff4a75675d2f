/* The servers engine: exponential service, the Markov race over every server. The
 * next arrival comes from the arrival stream; the next completion is drawn as one
 * Exp(sum of busy servers' mu) time and a server chosen with probability
 * mu_j / sum (competing exponentials: the winner is independent of the time), both
 * valid while no server becomes busy or idle. A server becoming busy races its own
 * Exp(mu_j) completion against them, which keeps the pair distributed as for the new
 * set of busy servers; after a completion both are drawn afresh. Choosing the server
 * early lets us prefetch its state. No requirement is drawn, so the workload is told to
 * the tally as its expectation given the state: one mean requirement per customer
 * (memoryless), +1 at an admission, -1 at a completion, drain rate 0. Applies to exponential
 * service at constant speed with a policy that does not read workloads (docs/model.md,
 * "Simulation"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../system/system.h"
#include "engine_type.h"
#include "lbmc/model.h"
#include "per_server.h"

typedef struct {
  lbmc_per_server ps;  /* first member: see per_server.h */
  double next_dep;     /* time of the next completion */
  uint32_t dep_server; /* the server of the next completion, chosen with next_dep */
} lbmc_servers_ws;

static double lbmc_servers_service_rate(const lbmc_state *st)
{
  double rate = 0;
  for (uint32_t j = 0; j < st->J; j++) rate += (double)st->nbusy[j] * st->mu[j];
  return rate;
}

/* Pool j with probability nbusy_j mu_j / rate, then a busy server of the pool
 * uniformly; one uniform serves both choices. */
static uint32_t lbmc_servers_pick(lbmc_state *st, double rate)
{
  double x = lbmc_u01(st->s_svc) * rate;
  uint32_t j = 0, i;
  for (; j + 1 < st->J; j++) {
    double w = (double)st->nbusy[j] * st->mu[j];
    if (x < w) break;
    x -= w;
  }
  while (st->nbusy[j] == 0) j--; /* x landed on the last pool by rounding */
  i = (uint32_t)(x * st->inv_mu[j]);
  if (i >= st->nbusy[j]) i = st->nbusy[j] - 1;
  return (uint32_t)st->busy[st->m->offset[j] + i];
}

static void lbmc_servers_draw(lbmc_servers_ws *w)
{
  lbmc_state *st = &w->ps.st;
  double rate = lbmc_servers_service_rate(st);
  if (rate <= 0) {
    w->next_dep = INFINITY;
    return;
  }
  w->next_dep = st->t + lbmc_exp_zig(st->s_svc, &st->zig) / rate;
  w->dep_server = lbmc_servers_pick(st, rate);
  __builtin_prefetch(&st->srv[w->dep_server], 1);
  if (st->first[w->dep_server] >= 0) __builtin_prefetch(&st->cust[st->first[w->dep_server]], 1);
}

static void lbmc_servers_arrival(lbmc_servers_ws *w)
{
  lbmc_state *st = &w->ps.st;
  uint32_t s = lbmc_ps_route(st), j, q;
  if (s == UINT32_MAX) return;
  j = st->pool_of[s];
  q = lbmc_q(st, s);
  if (q == 0) {
    st->srv[s].t_head = st->t;
    st->srv[s].busy_pos = (int32_t)st->nbusy[j];
    st->busy[st->m->offset[j] + st->nbusy[j]++] = (int32_t)s;
  } else if (lbmc_ps_enqueue(&w->ps, s) < 0) {
    return;
  }
  lbmc_ps_admitted(st, s, j, q + 1, q == 0);
  lbmc_tally_work(&st->tally, st->t, j, 1.0);
  if (q == 0) { /* one more busy server: race its completion against the others' */
    double t_new = st->t + lbmc_exp_zig(st->s_svc, &st->zig) * st->inv_mu[j];
    if (t_new < w->next_dep) {
      w->next_dep = t_new;
      w->dep_server = s;
    }
  }
}

static void lbmc_servers_departure(lbmc_servers_ws *w)
{
  lbmc_state *st = &w->ps.st;
  uint32_t s = w->dep_server, j = st->pool_of[s];
  uint32_t q = lbmc_ps_left(st, s, j, st->t - st->srv[s].t_head);
  lbmc_tally_work(&st->tally, st->t, j, -1.0);
  if (q > 0) { /* the first waiting customer starts service */
    st->srv[s].t_head = st->cust[lbmc_ps_start_next(st, s)].t_arrival;
  } else { /* leave the pool's busy list */
    lbmc_server *sv = &st->srv[s];
    int32_t *busy = st->busy + st->m->offset[j];
    int32_t moved = busy[--st->nbusy[j]];
    busy[sv->busy_pos] = moved;
    st->srv[moved].busy_pos = sv->busy_pos;
    sv->busy_pos = -1;
  }
  lbmc_ps_departed(st, s, j, q);
  lbmc_servers_draw(w);
}

static lbmc_err lbmc_servers_advance(void *ws, double t_end, double *rec)
{
  lbmc_servers_ws *w = ws;
  lbmc_state *st = &w->ps.st;
  while (!st->tally.halt) {
    if (w->ps.next_arr <= w->next_dep) {
      if (w->ps.next_arr > t_end) break;
      st->t = w->ps.next_arr;
      lbmc_servers_arrival(w);
      lbmc_ps_next_arrival(&w->ps);
    } else {
      if (w->next_dep > t_end) break;
      st->t = w->next_dep;
      lbmc_servers_departure(w);
    }
  }
  return lbmc_ps_finish(&w->ps, t_end, rec, "servers");
}

static double lbmc_servers_memory(const lbmc_model *m, int K, double *per_customer)
{
  return lbmc_ps_memory(m, K, 1, per_customer);
}

static int lbmc_servers_applies(const lbmc_model *m, char *why, size_t len)
{
  if (!lbmc_model_needs_general(m)) return lbmc_ps_applies_size(m, why, len);
  if (m->policy->needs_workload) {
    snprintf(why, len, "%s reads workloads", m->policy_text);
    return 0;
  }
  for (int j = 0; j < m->J; j++)
    if (m->nrates[j] > 1) {
      snprintf(why, len, "pool %d has queue-length-dependent speeds", j + 1);
      return 0;
    }
  snprintf(why, len, "general service");
  return 0;
}

static void lbmc_servers_destroy(void **ws)
{
  lbmc_servers_ws *w = *ws;
  if (!w) return;
  lbmc_ps_destroy(&w->ps);
  free(w);
  *ws = NULL;
}

static lbmc_err lbmc_servers_create(const lbmc_model *m, int K, uint64_t max_customers, void **ws)
{
  lbmc_servers_ws *w = calloc(1, sizeof *w);
  lbmc_err err;
  if (!w) return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory");
  err = lbmc_ps_create(&w->ps, m, K, max_customers);
  w->ps.st.tally.has_work = 1;
  *ws = w;
  if (err) lbmc_servers_destroy(ws);
  return err;
}

/* A mean-field start: the servers with customers join their pools' busy lists, their
 * waiting customers get records with unknown arrival times (no per-customer terms), and
 * the first completion is drawn; the work told is the customers (memoryless). */
static void lbmc_servers_start(lbmc_servers_ws *w)
{
  lbmc_state *st = &w->ps.st;
  for (uint32_t s = 0; s < st->n; s++) {
    const uint32_t q = lbmc_q(st, s), j = st->pool_of[s];
    if (q == 0) continue;
    st->srv[s].t_head = -INFINITY;
    st->srv[s].busy_pos = (int32_t)st->nbusy[j];
    st->busy[st->m->offset[j] + st->nbusy[j]++] = (int32_t)s;
    for (uint32_t k = 1; k < q; k++) {
      int32_t c = lbmc_ps_enqueue(&w->ps, s);
      if (c < 0) return; /* the tally halts: out of memory */
      st->cust[c].t_arrival = -INFINITY;
    }
  }
  for (uint32_t j = 0; j < st->J; j++) lbmc_tally_work(&st->tally, 0, j, (double)st->pool_q[j]);
  lbmc_servers_draw(w);
}

static lbmc_err lbmc_servers_reset(void *ws, lbmc_stream *streams)
{
  lbmc_servers_ws *w = ws;
  lbmc_ps_reset(&w->ps, streams);
  w->next_dep = INFINITY;
  if (lbmc_ps_started(&w->ps)) lbmc_servers_start(w);
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_servers_set_init(void *ws, const lbmc_run_options *o, char *note, size_t len)
{
  return lbmc_ps_set_init(&((lbmc_servers_ws *)ws)->ps, (lbmc_init_kind)o->init, note, len);
}

static int lbmc_servers_meanfield_start(void *ws)
{
  return lbmc_ps_meanfield_start(&((lbmc_servers_ws *)ws)->ps);
}

const lbmc_engine_type lbmc_engine_servers = {
    .name = "servers",
    .summary = "every server, exponential service: the Markov race (the fast path)",
    .speed = 1e7,
    .cap_max = LBMC_PS_CAP_MAX,
    .cap_default_max = LBMC_CAP_DEFAULT_HELD,
    .applies = lbmc_servers_applies,
    .create = lbmc_servers_create,
    .destroy = lbmc_servers_destroy,
    .reset = lbmc_servers_reset,
    .advance = lbmc_servers_advance,
    .set_histograms = lbmc_ps_set_histograms,
    .time = lbmc_ps_time,
    .state = lbmc_ps_state,
    .tally = lbmc_ps_tally,
    .view = lbmc_ps_view,
    .set_init = lbmc_servers_set_init,
    .meanfield_start = lbmc_servers_meanfield_start,
    .memory = lbmc_servers_memory,
};
