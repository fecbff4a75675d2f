/* Exponential service: the Markov race. The next arrival comes from the arrival
 * stream; the next completion is drawn as one Exp(sum of busy servers' mu) time and a
 * server chosen with probability mu_j / sum (competing exponentials: the winner is
 * independent of the time), both valid while no server becomes busy or idle. A server
 * becoming busy races its own Exp(mu_j) completion against them, which keeps the pair
 * distributed as for the new set of busy servers; after a completion both are drawn
 * afresh. Choosing the server early lets us prefetch its state. */
#include <math.h>

#include "engine_impl.h"

static double lbmc_exp_service_rate(const lbmc_state *st)
{
  double rate = 0;
  for (uint32_t j = 0; j < st->J; j++) rate += (double)st->nbusy[j] * st->mu[j];
  return rate;
}

/* Pool j with probability nbusy_j mu_j / rate, then a busy server of the pool
 * uniformly; one uniform serves both choices. */
static uint32_t lbmc_exp_pick(lbmc_state *st, double rate)
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

static void lbmc_exp_draw(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
  double rate = lbmc_exp_service_rate(st);
  if (rate <= 0) {
    e->next_dep = INFINITY;
    return;
  }
  e->next_dep = st->t + lbmc_exp_zig(st->s_svc, &st->zig) / rate;
  e->dep_server = lbmc_exp_pick(st, rate);
  __builtin_prefetch(&st->srv[e->dep_server], 1);
  if (st->first[e->dep_server] >= 0) __builtin_prefetch(&st->cust[st->first[e->dep_server]], 1);
}

void lbmc_engine_exp_reset(lbmc_engine *e) { e->next_dep = INFINITY; }

static void lbmc_exp_arrival(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
  uint32_t s = lbmc_engine_route(st), j, q;
  if (s == UINT32_MAX) return;
  j = st->pool_of[s];
  q = st->q[s];
  if (q == 0) {
    st->srv[s].t_head = st->t;
    st->srv[s].busy_pos = (int32_t)st->nbusy[j];
    st->busy[st->m->offset[j] + st->nbusy[j]++] = (int32_t)s;
  } else if (lbmc_engine_enqueue(e, s) < 0) {
    return;
  }
  lbmc_engine_admitted(st, s, j, q + 1, q == 0);
  if (q == 0) { /* one more busy server: race its completion against the others' */
    double t_new = st->t + lbmc_exp_zig(st->s_svc, &st->zig) * st->inv_mu[j];
    if (t_new < e->next_dep) {
      e->next_dep = t_new;
      e->dep_server = s;
    }
  }
}

static void lbmc_exp_departure(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
  uint32_t s = e->dep_server, j = st->pool_of[s];
  uint32_t q = lbmc_engine_left(st, s, j, st->t - st->srv[s].t_head);
  if (q > 0) { /* the first waiting customer starts service */
    st->srv[s].t_head = st->cust[lbmc_engine_start_next(st, s)].t_arrival;
  } else { /* leave the pool's busy list */
    lbmc_server *sv = &st->srv[s];
    int32_t *busy = st->busy + st->m->offset[j];
    int32_t moved = busy[--st->nbusy[j]];
    busy[sv->busy_pos] = moved;
    st->srv[moved].busy_pos = sv->busy_pos;
    sv->busy_pos = -1;
  }
  lbmc_engine_departed(st, s, j, q);
  lbmc_exp_draw(e);
}

void lbmc_engine_exp_run(lbmc_engine *e, double t_end)
{
  lbmc_state *st = &e->st;
  while (!st->overflow) {
    if (e->next_arr <= e->next_dep) {
      if (e->next_arr > t_end) break;
      st->t = e->next_arr;
      lbmc_exp_arrival(e);
      e->next_arr = st->t + lbmc_exp_zig(st->s_arr, &st->zig) * e->inv_lambda_total;
    } else {
      if (e->next_dep > t_end) break;
      st->t = e->next_dep;
      lbmc_exp_departure(e);
    }
  }
}
