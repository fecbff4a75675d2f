/* The state both per-server engines keep (per_server.h): its allocation from the
 * model, the start of a replica, customer records, and the view through which the
 * tally (src/core/tally.h) closes a tick into its record. */
#include "per_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static void lbmc_ps_init_model(lbmc_per_server *ps, const lbmc_model *m, int K)
{
  lbmc_state *st = &ps->st;
  st->m = m;
  st->n = (uint32_t)m->n;
  st->J = (uint32_t)m->J;
  st->K = (uint32_t)K;
  st->R = (uint32_t)m->routers;
  st->lambda_total = m->lambda * (double)m->n;
  ps->inv_lambda_total = 1.0 / st->lambda_total;
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

static int64_t lbmc_ps_tail(const void *ws, int j, uint32_t k)
{
  const lbmc_state *st = &((const lbmc_per_server *)ws)->st;
  return k <= st->K ? (int64_t)st->level[(uint32_t)j * (st->K + 1) + k] : -1;
}

static uint64_t lbmc_ps_customers(const void *ws, int j)
{
  return ((const lbmc_per_server *)ws)->st.pool_q[j];
}

/* The view of the tally and the observers. */
static void lbmc_ps_init_view(lbmc_per_server *ps, const lbmc_model *m)
{
  ps->view.ws = ps;
  ps->view.J = (int)ps->st.J;
  ps->view.K = (int)ps->st.K;
  ps->view.N = m->N;
  ps->view.tail = lbmc_ps_tail;
  ps->view.customers = lbmc_ps_customers;
  ps->view.workload = NULL;
  ps->view.time = lbmc_ps_time;
}

lbmc_err lbmc_ps_create(lbmc_per_server *ps, const lbmc_model *m, int K, uint64_t max_customers)
{
  lbmc_state *st = &ps->st;
  lbmc_ps_init_model(ps, m, K);
  st->srv = malloc(sizeof *st->srv * st->n);
  st->q = malloc(sizeof *st->q * st->n);
  st->pool_of = malloc(sizeof *st->pool_of * st->n);
  st->first = malloc(sizeof *st->first * st->n);
  st->busy = malloc(sizeof *st->busy * st->n);
  st->level = calloc((size_t)st->J * (st->K + 1), sizeof *st->level);
  st->cust_cap = st->n < 1024 ? 1024 : st->n;
  st->cust = malloc(sizeof *st->cust * st->cust_cap);
  lbmc_ps_init_view(ps, m);
  if (!st->srv || !st->q || !st->pool_of || !st->first || !st->busy || !st->level || !st->cust)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory for n = %u servers", (unsigned)m->n);
  LBMC_CALL(lbmc_tally_create(&st->tally, (int)st->J, K, max_customers, LBMC_TERMS_AT_DEPARTURE));
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
  lbmc_tally_free(&st->tally);
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
      lbmc_tally_out_of_memory(&st->tally);
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
  lbmc_tally_reset(&st->tally, 0);
  st->t = 0;
  st->hist_sojourn = st->hist_wait = NULL;
  if (st->pol->reset) st->pol->reset(st, st->pw);
  ps->next_arr = lbmc_exp_zig(st->s_arr, &st->zig) * ps->inv_lambda_total;
}

lbmc_err lbmc_ps_finish(lbmc_per_server *ps, double t_end, double *rec, const char *engine)
{
  LBMC_CALL(lbmc_tally_finish(&ps->st.tally, &ps->view, t_end, rec, engine));
  ps->st.t = ps->st.tally.t0;
  return LBMC_SUCCESS;
}

void lbmc_ps_set_histograms(void *ws, lbmc_dhist *sojourn, lbmc_dhist *wait)
{
  lbmc_per_server *ps = ws;
  ps->st.hist_sojourn = sojourn;
  ps->st.hist_wait = wait;
}

double lbmc_ps_time(const void *ws) { return ((const lbmc_per_server *)ws)->st.t; }
const lbmc_state *lbmc_ps_state(const void *ws) { return &((const lbmc_per_server *)ws)->st; }
lbmc_tally *lbmc_ps_tally(void *ws) { return &((lbmc_per_server *)ws)->st.tally; }
const lbmc_view *lbmc_ps_view(const void *ws) { return &((const lbmc_per_server *)ws)->view; }
