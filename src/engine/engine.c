#include "engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbmc/rng.h"
#include "policy.h"
#include "ticks.h"

struct lbmc_engine_ {
  lbmc_state st;
  lbmc_stream streams[LBMC_PURPOSES];
  double next_arr, next_dep;
  uint32_t dep_server; /* the server of the next completion, chosen with next_dep */
  double inv_lambda_total;
  lbmc_counters c0; /* counters at the start of the current tick */
  double cpu0;      /* thread CPU time at the start of the current tick */
  int mem_error;
};

static double lbmc_thread_cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

lbmc_err lbmc_engine_create(const lbmc_model *m, int K, uint64_t max_customers, lbmc_engine **out)
{
  lbmc_engine *e;
  lbmc_state *st;
  lbmc_err err;
  if (!m->is_setup) return LBMC_ERROR(LBMC_ERR_INTERNAL, "engine: model not set up");
  e = calloc(1, sizeof *e);
  if (!e) return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory");
  st = &e->st;
  st->m = m;
  st->n = (uint32_t)m->n;
  st->J = (uint32_t)m->J;
  st->K = (uint32_t)K;
  st->R = (uint32_t)m->routers;
  st->lambda_total = m->lambda * (double)m->n;
  e->inv_lambda_total = 1.0 / st->lambda_total;
  st->max_customers = max_customers;
  lbmc_zig_exp_init(&st->zig);
  for (int j = 0; j < m->J; j++) {
    st->B[j] = m->buffer[j] == LBMC_BUFFER_INF ? UINT32_MAX : (uint32_t)m->buffer[j];
    st->mu[j] = m->mu[j];
    st->inv_mu[j] = 1.0 / m->mu[j];
  }
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
  if (!st->srv || !st->q || !st->pool_of || !st->first || !st->busy || !st->level || !st->area_q || !st->area_tail || !st->cust) {
    lbmc_engine_destroy(&e);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory for n = %u servers", (unsigned)m->n);
  }
  for (int p = 0; p < LBMC_PURPOSES; p++) e->streams[p].pos = LBMC_STREAM_BUF;
  st->s_arr = &e->streams[LBMC_PURPOSE_ARRIVALS];
  st->s_svc = &e->streams[LBMC_PURPOSE_SERVICE];
  st->s_route = &e->streams[LBMC_PURPOSE_ROUTING];
  st->pol = m->policy;
  if (st->pol->create) {
    err = st->pol->create(st, &st->pw);
    if (err) {
      lbmc_engine_destroy(&e);
      return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
    }
  }
  *out = e;
  return LBMC_SUCCESS;
}

void lbmc_engine_destroy(lbmc_engine **e)
{
  lbmc_state *st;
  if (!e || !*e) return;
  st = &(*e)->st;
  if (st->pol && st->pol->destroy) st->pol->destroy(&st->pw);
  for (int p = 0; p < LBMC_PURPOSES; p++) lbmc_stream_free(&(*e)->streams[p]);
  free(st->srv);
  free(st->q);
  free(st->pool_of);
  free(st->first);
  free(st->busy);
  free(st->level);
  free(st->area_q);
  free(st->area_tail);
  free(st->cust);
  free(*e);
  *e = NULL;
}

/* Free list over cust[from .. to). */
static void lbmc_cust_link_free(lbmc_state *st, uint32_t from, uint32_t to)
{
  for (uint32_t i = from; i < to; i++) st->cust[i].next = (i + 1 < to) ? (int32_t)(i + 1) : -1;
  st->cust_free = from < to ? (int32_t)from : -1;
}

static double lbmc_engine_service_rate(const lbmc_state *st)
{
  double rate = 0;
  for (uint32_t j = 0; j < st->J; j++) rate += (double)st->nbusy[j] * st->mu[j];
  return rate;
}

static uint32_t lbmc_engine_pick_departure(lbmc_state *st, double rate);

/* Draw the next service completion after a departure: its time, Exp(rate) with
 * rate = sum of the busy servers' mu, and its server, chosen now with probability
 * mu_j / rate (the winner of competing exponentials is independent of the time).
 * Both stay valid while no server becomes busy or idle: an arrival at an idle server
 * races its own Exp(mu_j) completion against them (lbmc_engine_arrival), which
 * keeps the pair distributed as for the new set of busy servers. Choosing the
 * server early lets us prefetch its state. */
static void lbmc_engine_draw_departure(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
  double rate = lbmc_engine_service_rate(st);
  if (rate <= 0) {
    e->next_dep = INFINITY;
    return;
  }
  e->next_dep = st->t + lbmc_exp_zig(st->s_svc, &st->zig) / rate;
  e->dep_server = lbmc_engine_pick_departure(st, rate);
  __builtin_prefetch(&st->srv[e->dep_server], 1);
  if (st->first[e->dep_server] >= 0) __builtin_prefetch(&st->cust[st->first[e->dep_server]], 1);
}

lbmc_err lbmc_engine_reset(lbmc_engine *e, const int *gennum, long seed)
{
  lbmc_state *st = &e->st;
  const lbmc_model *m = st->m;
  for (int p = 0; p < LBMC_PURPOSES; p++) LBMC_CHECK(lbmc_stream_init(&e->streams[p], gennum[p], seed));
  for (uint32_t j = 0; j < st->J; j++) {
    for (long i = m->offset[j]; i < m->offset[j] + m->N[j]; i++) {
      lbmc_server *s = &st->srv[i];
      st->q[i] = 0;
      st->pool_of[i] = (uint8_t)j;
      st->first[i] = -1;
      s->last = -1;
      s->busy_pos = -1;
    }
    st->nbusy[j] = 0;
    st->pool_q[j] = 0;
  }
  memset(st->level, 0, sizeof *st->level * st->J * (st->K + 1));
  for (uint32_t j = 0; j < st->J; j++) st->level[j * (st->K + 1)] = (uint32_t)m->N[j];
  lbmc_cust_link_free(st, 0, st->cust_cap);
  st->in_system = 0;
  st->overflow = 0;
  e->mem_error = 0;
  memset(&st->c, 0, sizeof st->c);
  e->c0 = st->c;
  st->t = st->t0 = 0;
  st->sum_sojourn = st->sum_wait = 0;
  memset(st->area_q, 0, sizeof *st->area_q * st->J);
  memset(st->area_tail, 0, sizeof *st->area_tail * st->J * st->K);
  if (st->pol->reset) st->pol->reset(st, st->pw);
  e->next_arr = lbmc_exp_zig(st->s_arr, &st->zig) * e->inv_lambda_total;
  e->next_dep = INFINITY;
  e->cpu0 = lbmc_thread_cpu();
  return LBMC_SUCCESS;
}

static int32_t lbmc_cust_alloc(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
  int32_t i = st->cust_free;
  if (i < 0) {
    uint64_t cap = (uint64_t)st->cust_cap * 2;
    lbmc_customer *c;
    if (cap > INT32_MAX) cap = INT32_MAX;
    if (cap <= st->cust_cap) return -1;
    c = realloc(st->cust, sizeof *c * cap);
    if (!c) return -1;
    st->cust = c;
    lbmc_cust_link_free(st, st->cust_cap, (uint32_t)cap);
    st->cust_cap = (uint32_t)cap;
    i = st->cust_free;
  }
  st->cust_free = st->cust[i].next;
  return i;
}

static void lbmc_engine_arrival(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
  uint32_t r = st->R > 1 ? lbmc_uint(st->s_route, st->R) : 0;
  uint32_t s = st->pol->route(st, st->pw, r);
  uint32_t j = st->pool_of[s], q = st->q[s];
  lbmc_server *sv = &st->srv[s];
  st->c.arrivals++;
  if (q >= st->B[j]) {
    st->c.blocked++;
    return;
  }
  if (q == 0) {
    sv->t_head = st->t;
    sv->busy_pos = (int32_t)st->nbusy[j];
    st->busy[st->m->offset[j] + st->nbusy[j]++] = (int32_t)s;
    st->c.starts++;
  } else {
    int32_t c = lbmc_cust_alloc(e);
    if (c < 0) {
      e->mem_error = 1;
      st->overflow = 1;
      return;
    }
    st->cust[c].t_arrival = st->t;
    st->cust[c].next = -1;
    if (sv->last >= 0)
      st->cust[sv->last].next = c;
    else
      st->first[s] = c;
    sv->last = c;
    st->c.waited++;
  }
  st->q[s] = ++q;
  lbmc_level_up(st, j, q);
  st->c.admitted[j]++;
  if (++st->in_system > st->max_customers) st->overflow = 1;
  if (st->pol->on_change) st->pol->on_change(st, st->pw, s, q - 1);
  if (q == 1) { /* one more busy server: race its completion against the others' */
    double t_new = st->t + lbmc_exp_zig(st->s_svc, &st->zig) * st->inv_mu[j];
    if (t_new < e->next_dep) {
      e->next_dep = t_new;
      e->dep_server = s;
    }
  }
}

/* The server completing service: pool j with probability nbusy_j mu_j / rate, then a
 * busy server of the pool uniformly; one uniform serves both choices. */
static uint32_t lbmc_engine_pick_departure(lbmc_state *st, double rate)
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

static void lbmc_engine_departure(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
  uint32_t s = e->dep_server;
  lbmc_server *sv = &st->srv[s];
  uint32_t j = st->pool_of[s], q = --st->q[s];
  st->sum_sojourn += st->t - sv->t_head;
  st->c.departures++;
  st->in_system--;
  lbmc_level_down(st, j, q);
  if (q > 0) { /* the first waiting customer starts service */
    int32_t c = st->first[s];
    sv->t_head = st->cust[c].t_arrival;
    st->first[s] = st->cust[c].next;
    if (st->first[s] < 0) sv->last = -1;
    st->cust[c].next = st->cust_free;
    st->cust_free = c;
    st->sum_wait += st->t - sv->t_head;
    st->c.starts++;
  } else {
    int32_t *busy = st->busy + st->m->offset[j];
    int32_t moved = busy[--st->nbusy[j]];
    busy[sv->busy_pos] = moved;
    st->srv[moved].busy_pos = sv->busy_pos;
    sv->busy_pos = -1;
    if (st->pol->on_idle) st->pol->on_idle(st, st->pw, s);
  }
  if (st->pol->on_change) st->pol->on_change(st, st->pw, s, q + 1);
  lbmc_engine_draw_departure(e);
}

static void lbmc_engine_close_tick(lbmc_engine *e, double t1, double *rec)
{
  lbmc_state *st = &e->st;
  const int J = (int)st->J, K = (int)st->K;
  double len = t1 - st->t0, area_n = 0, cpu = lbmc_thread_cpu();
  for (int j = 0; j < J; j++) {
    st->area_q[j] += (double)st->pool_q[j] * len;
    area_n += st->area_q[j];
    for (int k = 1; k <= K; k++)
      st->area_tail[j * K + k - 1] += (double)st->level[j * (K + 1) + k] * len;
  }
  if (rec) {
    rec[LBMC_TK_LEN] = len;
    rec[LBMC_TK_ARRIVALS] = (double)(st->c.arrivals - e->c0.arrivals);
    rec[LBMC_TK_BLOCKED] = (double)(st->c.blocked - e->c0.blocked);
    rec[LBMC_TK_WAITED] = (double)(st->c.waited - e->c0.waited);
    rec[LBMC_TK_DEPARTURES] = (double)(st->c.departures - e->c0.departures);
    rec[LBMC_TK_STARTS] = (double)(st->c.starts - e->c0.starts);
    rec[LBMC_TK_SUM_SOJOURN] = st->sum_sojourn;
    rec[LBMC_TK_SUM_WAIT] = st->sum_wait;
    rec[LBMC_TK_MESSAGES] = (double)(st->c.messages - e->c0.messages);
    rec[LBMC_TK_WITHDRAWALS] = (double)(st->c.withdrawals - e->c0.withdrawals);
    rec[LBMC_TK_AREA_N] = area_n;
    rec[LBMC_TK_N_END] = (double)st->in_system;
    rec[LBMC_TK_CPU] = cpu - e->cpu0;
    for (int j = 0; j < J; j++) {
      rec[lbmc_tk_admitted(J, K, j)] = (double)(st->c.admitted[j] - e->c0.admitted[j]);
      rec[lbmc_tk_area_q(J, K, j)] = st->area_q[j];
      for (int k = 1; k <= K; k++) rec[lbmc_tk_area_tail(J, K, j, k)] = st->area_tail[j * K + k - 1];
    }
  }
  e->c0 = st->c;
  e->cpu0 = cpu;
  st->t = st->t0 = t1;
  st->sum_sojourn = st->sum_wait = 0;
  memset(st->area_q, 0, sizeof *st->area_q * J);
  memset(st->area_tail, 0, sizeof *st->area_tail * J * K);
}

lbmc_err lbmc_engine_advance(lbmc_engine *e, double t_end, double *rec)
{
  lbmc_state *st = &e->st;
  while (!st->overflow) {
    if (e->next_arr <= e->next_dep) {
      if (e->next_arr > t_end) break;
      st->t = e->next_arr;
      lbmc_engine_arrival(e);
      e->next_arr = st->t + lbmc_exp_zig(st->s_arr, &st->zig) * e->inv_lambda_total;
    } else {
      if (e->next_dep > t_end) break;
      st->t = e->next_dep;
      lbmc_engine_departure(e);
    }
  }
  if (e->mem_error && st->in_system < st->max_customers)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory with %llu customers in the system",
                      (unsigned long long)st->in_system);
  lbmc_engine_close_tick(e, st->overflow ? st->t : t_end, rec);
  return LBMC_SUCCESS;
}

int lbmc_engine_overflowed(const lbmc_engine *e) { return e->st.overflow; }
const lbmc_state *lbmc_engine_state(const lbmc_engine *e) { return &e->st; }
