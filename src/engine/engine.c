/* The engine: allocation, reset, ticks; the event loops are in engine_exp.c
 * (exponential service) and engine_general.c (general service). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_impl.h"
#include "ticks.h"

static double lbmc_thread_cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void lbmc_engine_init_model(lbmc_engine *e, const lbmc_model *m, int K, uint64_t cap)
{
  lbmc_state *st = &e->st;
  st->m = m;
  st->n = (uint32_t)m->n;
  st->J = (uint32_t)m->J;
  st->K = (uint32_t)K;
  st->R = (uint32_t)m->routers;
  st->lambda_total = m->lambda * (double)m->n;
  e->inv_lambda_total = 1.0 / st->lambda_total;
  st->max_customers = cap;
  lbmc_zig_exp_init(&st->zig);
  for (int j = 0; j < m->J; j++) {
    st->B[j] = m->buffer[j] == LBMC_BUFFER_INF ? UINT32_MAX : (uint32_t)m->buffer[j];
    st->mu[j] = m->mu[j];
    st->inv_mu[j] = 1.0 / m->mu[j];
    st->slots[j] = (uint32_t)m->nrates[j];
    st->rates[j] = m->rates[j];
  }
  for (int p = 0; p < LBMC_PURPOSES; p++) e->streams[p].pos = LBMC_STREAM_BUF;
  st->s_arr = &e->streams[LBMC_PURPOSE_ARRIVALS];
  st->s_svc = &e->streams[LBMC_PURPOSE_SERVICE];
  st->s_route = &e->streams[LBMC_PURPOSE_ROUTING];
  st->pol = m->policy;
}

lbmc_err lbmc_engine_create(const lbmc_model *m, int K, uint64_t max_customers, int general,
                            lbmc_engine **out)
{
  lbmc_engine *e;
  lbmc_state *st;
  lbmc_err err = LBMC_SUCCESS;
  if (!m->is_setup) return LBMC_ERROR(LBMC_ERR_INTERNAL, "engine: model not set up");
  e = calloc(1, sizeof *e);
  if (!e) return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory");
  st = &e->st;
  lbmc_engine_init_model(e, m, K, max_customers);
  e->general = general || lbmc_model_needs_general(m);
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
    err = LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory for n = %u servers", (unsigned)m->n);
  if (!err && e->general) err = lbmc_engine_general_create(e);
  if (!err && st->pol->create) err = st->pol->create(st, &st->pw);
  if (err) {
    lbmc_engine_destroy(&e);
    return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
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
  lbmc_engine_general_destroy(*e);
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

int32_t lbmc_engine_cust_alloc(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
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
      e->mem_error = 1;
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

lbmc_err lbmc_engine_reset(lbmc_engine *e, const int *gennum, long seed)
{
  lbmc_state *st = &e->st;
  const lbmc_model *m = st->m;
  for (int p = 0; p < LBMC_PURPOSES; p++)
    LBMC_CHECK(lbmc_stream_init(&e->streams[p], gennum[p], seed));
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
  st->hist_sojourn = st->hist_wait = NULL;
  if (st->pol->reset) st->pol->reset(st, st->pw);
  e->next_arr = lbmc_exp_zig(st->s_arr, &st->zig) * e->inv_lambda_total;
  if (e->general)
    lbmc_engine_general_reset(e);
  else
    lbmc_engine_exp_reset(e);
  e->cpu0 = lbmc_thread_cpu();
  return LBMC_SUCCESS;
}

void lbmc_engine_set_histograms(lbmc_engine *e, uint64_t *sojourn, uint64_t *wait)
{
  e->st.hist_sojourn = sojourn;
  e->st.hist_wait = wait;
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
    rec[LBMC_TK_SOJOURNS] = rec[LBMC_TK_DEPARTURES];
    rec[LBMC_TK_WAITS] = rec[LBMC_TK_STARTS];
    for (int j = 0; j < J; j++) {
      rec[lbmc_tk_admitted(J, K, j)] = (double)(st->c.admitted[j] - e->c0.admitted[j]);
      rec[lbmc_tk_area_q(J, K, j)] = st->area_q[j];
      for (int k = 1; k <= K; k++)
        rec[lbmc_tk_area_tail(J, K, j, k)] = st->area_tail[j * K + k - 1];
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
  if (e->general)
    lbmc_engine_general_run(e, t_end);
  else
    lbmc_engine_exp_run(e, t_end);
  if (e->mem_error && st->in_system < st->max_customers)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory with %llu customers in the system",
                      (unsigned long long)st->in_system);
  lbmc_engine_close_tick(e, st->overflow ? st->t : t_end, rec);
  return LBMC_SUCCESS;
}

int lbmc_engine_overflowed(const lbmc_engine *e) { return e->st.overflow; }
const lbmc_state *lbmc_engine_state(const lbmc_engine *e) { return &e->st; }
int lbmc_engine_is_general(const lbmc_engine *e) { return e->general; }
