/* The state both per-server engines keep (per_server.h): its allocation from the
 * model, the start of a replica, customer records, and the closing of a tick into
 * its record (src/core/ticks.h). */
#include "per_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ticks.h"
#include "../system/system.h"
#include "lbmc/rng.h"

int lbmc_ps_applies_size(const lbmc_model *m, char *why, size_t len)
{
  if (m->n <= LBMC_MAX_SERVERS) return 1;
  snprintf(why, len,
           "n = %lld exceeds the per-server limit of %ld servers (numbered with 32-bit "
           "integers); the occupancy engine takes n up to 10^12",
           (long long)m->n, LBMC_MAX_SERVERS);
  return 0;
}

/* The model's numbers, copied where the event loops read them. */
static void lbmc_ps_init_model(lbmc_per_server *ps, const lbmc_model *m, int K, uint64_t cap)
{
  lbmc_state *st = &ps->st;
  st->m = m;
  st->n = (uint32_t)m->n;
  st->J = (uint32_t)m->J;
  st->K = (uint32_t)K;
  st->R = (uint32_t)m->routers;
  st->lambda_total = m->lambda * (double)m->n;
  ps->inv_lambda_total = 1.0 / st->lambda_total;
  st->max_customers = cap;
  lbmc_zig_exp_init(&st->zig);
  for (int j = 0; j < m->J; j++) {
    st->B[j] = m->buffer[j] == LBMC_BUFFER_INF ? UINT32_MAX : (uint32_t)m->buffer[j];
    st->mu[j] = m->mu[j];
    st->inv_mu[j] = 1.0 / m->mu[j];
    st->slots[j] = (uint32_t)m->nrates[j];
    st->rates[j] = m->rates[j];
  }
  st->pol = m->policy;
}

lbmc_err lbmc_ps_create(lbmc_per_server *ps, const lbmc_model *m, int K, uint64_t max_customers)
{
  lbmc_state *st = &ps->st;
  lbmc_ps_init_model(ps, m, K, max_customers);
  st->srv = malloc(sizeof *st->srv * st->n);
  st->q = malloc(sizeof *st->q * st->n);
  st->pool_of = malloc(sizeof *st->pool_of * st->n);
  st->first = malloc(sizeof *st->first * st->n);
  st->busy = malloc(sizeof *st->busy * st->n);
  st->level = calloc((size_t)st->J * (st->K + 1), sizeof *st->level);
  st->area_q = calloc(st->J, sizeof *st->area_q);
  st->area_tail = calloc((size_t)st->J * st->K, sizeof *st->area_tail);
  st->cust_cap = st->n < 1024 ? 1024 : st->n;
  st->cust = malloc(sizeof *st->cust * st->cust_cap);
  if (!st->srv || !st->q || !st->pool_of || !st->first || !st->busy || !st->level || !st->area_q ||
      !st->area_tail || !st->cust)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory for n = %u servers", (unsigned)m->n);
  if (st->pol->create) LBMC_CALL(st->pol->create(st, &st->pw));
  return LBMC_SUCCESS;
}

void lbmc_ps_destroy(lbmc_per_server *ps)
{
  lbmc_state *st = &ps->st;
  if (st->pol && st->pol->destroy) st->pol->destroy(&st->pw);
  free(st->srv);
  free(st->q);
  free(st->pool_of);
  free(st->first);
  free(st->busy);
  free(st->level);
  free(st->area_q);
  free(st->area_tail);
  free(st->cust);
  memset(ps, 0, sizeof *ps);
}

/* Free list over cust[from .. to). */
static void lbmc_cust_link_free(lbmc_state *st, uint32_t from, uint32_t to)
{
  for (uint32_t i = from; i < to; i++) st->cust[i].next = (i + 1 < to) ? (int32_t)(i + 1) : -1;
  st->cust_free = from < to ? (int32_t)from : -1;
}

int32_t lbmc_ps_cust_alloc(lbmc_per_server *ps)
{
  lbmc_state *st = &ps->st;
  int32_t i = st->cust_free;
  if (i < 0) {
    uint64_t cap = (uint64_t)st->cust_cap * 2;
    lbmc_customer *c;
    if (cap > INT32_MAX) cap = INT32_MAX;
    c = cap > st->cust_cap ? realloc(st->cust, sizeof *c * cap) : NULL;
    if (c) st->cust = c;
    if (c && st->cust_work) {
      double *w = realloc(st->cust_work, sizeof *w * cap);
      if (w)
        st->cust_work = w;
      else
        c = NULL;
    }
    if (!c) {
      ps->mem_error = 1;
      st->overflow = 1;
      return -1;
    }
    lbmc_cust_link_free(st, st->cust_cap, (uint32_t)cap);
    st->cust_cap = (uint32_t)cap;
    i = st->cust_free;
  }
  st->cust_free = st->cust[i].next;
  return i;
}

/* Every server idle, in its pool; level[j][0] counts all of pool j's servers. */
static void lbmc_ps_reset_servers(lbmc_state *st)
{
  const lbmc_model *m = st->m;
  for (uint32_t j = 0; j < st->J; j++) {
    for (long i = m->offset[j]; i < m->offset[j] + m->N[j]; i++) {
      st->q[i] = 0;
      st->pool_of[i] = (uint8_t)j;
      st->first[i] = -1;
      st->srv[i].last = -1;
      st->srv[i].busy_pos = -1;
    }
    st->nbusy[j] = 0;
    st->pool_q[j] = 0;
  }
  memset(st->level, 0, sizeof *st->level * st->J * (st->K + 1));
  for (uint32_t j = 0; j < st->J; j++) st->level[j * (st->K + 1)] = (uint32_t)m->N[j];
}

void lbmc_ps_reset(lbmc_per_server *ps, lbmc_stream *streams)
{
  lbmc_state *st = &ps->st;
  st->s_arr = &streams[LBMC_PURPOSE_ARRIVALS];
  st->s_svc = &streams[LBMC_PURPOSE_SERVICE];
  st->s_route = &streams[LBMC_PURPOSE_ROUTING];
  lbmc_ps_reset_servers(st);
  lbmc_cust_link_free(st, 0, st->cust_cap);
  st->in_system = 0;
  st->overflow = 0;
  ps->mem_error = 0;
  memset(&st->c, 0, sizeof st->c);
  ps->c0 = st->c;
  st->t = st->t0 = 0;
  st->sum_sojourn = st->sum_wait = 0;
  memset(st->area_q, 0, sizeof *st->area_q * st->J);
  memset(st->area_tail, 0, sizeof *st->area_tail * st->J * st->K);
  st->hist_sojourn = st->hist_wait = NULL;
  if (st->pol->reset) st->pol->reset(st, st->pw);
  ps->next_arr = lbmc_exp_zig(st->s_arr, &st->zig) * ps->inv_lambda_total;
}

/* The tick's counts since c0, its sums and its integrals into rec (all but CPU). */
static void lbmc_ps_record(const lbmc_per_server *ps, double len, double area_n, double *rec)
{
  const lbmc_state *st = &ps->st;
  const int J = (int)st->J, K = (int)st->K;
  rec[LBMC_TK_LEN] = len;
  rec[LBMC_TK_ARRIVALS] = (double)(st->c.arrivals - ps->c0.arrivals);
  rec[LBMC_TK_BLOCKED] = (double)(st->c.blocked - ps->c0.blocked);
  rec[LBMC_TK_WAITED] = (double)(st->c.waited - ps->c0.waited);
  rec[LBMC_TK_DEPARTURES] = (double)(st->c.departures - ps->c0.departures);
  rec[LBMC_TK_STARTS] = (double)(st->c.starts - ps->c0.starts);
  rec[LBMC_TK_SUM_SOJOURN] = st->sum_sojourn;
  rec[LBMC_TK_SUM_WAIT] = st->sum_wait;
  rec[LBMC_TK_MESSAGES] = (double)(st->c.messages - ps->c0.messages);
  rec[LBMC_TK_WITHDRAWALS] = (double)(st->c.withdrawals - ps->c0.withdrawals);
  rec[LBMC_TK_AREA_N] = area_n;
  rec[LBMC_TK_N_END] = (double)st->in_system;
  rec[LBMC_TK_SOJOURNS] = rec[LBMC_TK_DEPARTURES]; /* a sojourn is summed at its departure */
  rec[LBMC_TK_WAITS] = rec[LBMC_TK_STARTS];        /* a wait at its service start */
  for (int j = 0; j < J; j++) {
    rec[lbmc_tk_admitted(J, K, j)] = (double)(st->c.admitted[j] - ps->c0.admitted[j]);
    rec[lbmc_tk_area_q(J, K, j)] = st->area_q[j];
    for (int k = 1; k <= K; k++) rec[lbmc_tk_area_tail(J, K, j, k)] = st->area_tail[j * K + k - 1];
  }
}

/* Close the tick [t0, t1]: complete the integrals (the signed-time form of state.h),
 * record it, and start the next one at t1. */
static void lbmc_ps_close_tick(lbmc_per_server *ps, double t1, double *rec)
{
  lbmc_state *st = &ps->st;
  const int J = (int)st->J, K = (int)st->K;
  double len = t1 - st->t0, area_n = 0;
  for (int j = 0; j < J; j++) {
    st->area_q[j] += (double)st->pool_q[j] * len;
    area_n += st->area_q[j];
    for (int k = 1; k <= K; k++)
      st->area_tail[j * K + k - 1] += (double)st->level[j * (K + 1) + k] * len;
  }
  if (rec) lbmc_ps_record(ps, len, area_n, rec);
  ps->c0 = st->c;
  st->t = st->t0 = t1;
  st->sum_sojourn = st->sum_wait = 0;
  memset(st->area_q, 0, sizeof *st->area_q * J);
  memset(st->area_tail, 0, sizeof *st->area_tail * J * K);
}

lbmc_err lbmc_ps_finish(lbmc_per_server *ps, double t_end, double *rec)
{
  lbmc_state *st = &ps->st;
  if (ps->mem_error && st->in_system < st->max_customers)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory with %llu customers in the system",
                      (unsigned long long)st->in_system);
  lbmc_ps_close_tick(ps, st->overflow ? st->t : t_end, rec);
  return LBMC_SUCCESS;
}

void lbmc_ps_set_histograms(void *ws, lbmc_dhist *sojourn, lbmc_dhist *wait)
{
  lbmc_per_server *ps = ws;
  ps->st.hist_sojourn = sojourn;
  ps->st.hist_wait = wait;
}

int lbmc_ps_overflowed(const void *ws) { return ((const lbmc_per_server *)ws)->st.overflow; }
double lbmc_ps_time(const void *ws) { return ((const lbmc_per_server *)ws)->st.t; }
const lbmc_state *lbmc_ps_state(const void *ws) { return &((const lbmc_per_server *)ws)->st; }
