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

/* The state of model m: every server's count and pool, the levels, the tally; with
 * records, the customer records and busy lists too. */
static lbmc_err lbmc_ps_create_as(lbmc_per_server *ps, const lbmc_model *m, int K,
                                  uint64_t max_customers, int records, lbmc_terms terms)
{
  lbmc_state *st = &ps->st;
  lbmc_ps_init_model(ps, m, K);
  if (records) st->q = malloc(sizeof *st->q * st->n);
  st->pool_of = malloc(sizeof *st->pool_of * st->n);
  st->level = calloc((size_t)st->J * (st->K + 1), sizeof *st->level);
  if (records) {
    st->srv = malloc(sizeof *st->srv * st->n);
    st->first = malloc(sizeof *st->first * st->n);
    st->busy = malloc(sizeof *st->busy * st->n);
    st->cust_cap = st->n < 1024 ? 1024 : st->n;
    st->cust = malloc(sizeof *st->cust * st->cust_cap);
  }
  lbmc_ps_init_view(ps, m);
  if (!st->pool_of || !st->level ||
      (records && (!st->q || !st->srv || !st->first || !st->busy || !st->cust)))
    return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory for n = %u servers", (unsigned)m->n);
  LBMC_CALL(lbmc_tally_create(&st->tally, (int)st->J, K, max_customers, terms));
  if (st->pol->create) LBMC_CALL(st->pol->create(st, &st->pw));
  return LBMC_SUCCESS;
}

lbmc_err lbmc_ps_create(lbmc_per_server *ps, const lbmc_model *m, int K, uint64_t max_customers)
{
  return lbmc_ps_create_as(ps, m, K, max_customers, 1, LBMC_TERMS_AT_DEPARTURE);
}

lbmc_err lbmc_ps_create_lean(lbmc_per_server *ps, const lbmc_model *m, int K,
                             uint64_t max_customers, lbmc_terms terms)
{
  return lbmc_ps_create_as(ps, m, K, max_customers, 0, terms);
}

double lbmc_ps_memory(const lbmc_model *m, int K, int records, double *per_customer)
{
  const double n = (double)m->n, cust = n < 1024 ? 1024 : n;
  double b = n * sizeof(uint8_t) + (double)m->J * (K + 1) * sizeof(uint32_t);
  if (records)
    b += n * (sizeof(lbmc_server) + sizeof(uint32_t) + 2 * sizeof(int32_t)) +
         cust * sizeof(lbmc_customer); /* srv, q, first, busy; the records */
  if (m->policy->memory) b += m->policy->memory(m);
  if (per_customer) *per_customer = records ? sizeof(lbmc_customer) : 0;
  return b;
}

int lbmc_ps_same_service(const lbmc_model *m)
{
  for (int j = 1; j < m->J; j++)
    if (!lbmc_service_equal(&m->service[0], &m->service[j])) return 0;
  return 1;
}

void lbmc_ps_destroy(lbmc_per_server *ps)
{
  lbmc_state *st = &ps->st;
  lbmc_occ_meanfield_free(&ps->mf);
  free(ps->counts);
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
      *lbmc_q_ref(st, (uint32_t)i) = 0;
      st->pool_of[i] = (uint8_t)j;
    }
    if (st->first) /* the records of the engines that keep waiting customers */
      for (long i = m->offset[j]; i < m->offset[j] + m->N[j]; i++) {
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

/* The mean-field fixed point, computed once per workspace; note[len] "" when the
 * replicas can start from it, else why not. */
static lbmc_err lbmc_ps_meanfield(lbmc_per_server *ps, char *note, size_t len)
{
  const lbmc_model *m = ps->st.m;
  const lbmc_occupancy_ops *ops = m->policy->occupancy;
  char why[256];
  if (len) note[0] = '\0';
  if (!ops || (ops->applies && !ops->applies(m, why, sizeof why))) {
    const int w =
        snprintf(note, len,
                 "replicas start empty: the mean-field start takes its queue lengths "
                 "from the policy's occupancy form, and %s %s%s",
                 m->policy_text, ops ? "cannot use it here: " : "has none", ops ? why : "");
    if (w < 0 && len) note[0] = '\0'; /* a longer note is cut to len */
    return LBMC_SUCCESS;
  }
  if (!ps->mf.s) {
    LBMC_CALL(lbmc_occ_meanfield_solve(m, ops, &ps->mf));
    free(ps->counts);
    ps->counts = malloc(sizeof *ps->counts * (ps->mf.levels ? ps->mf.levels : 1));
    if (!ps->counts) return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory");
  }
  if (!ps->mf.settled) snprintf(note, len, "%s", ps->mf.note); /* started empty */
  return LBMC_SUCCESS;
}

lbmc_err lbmc_ps_set_init(lbmc_per_server *ps, lbmc_init_kind init, char *note, size_t len)
{
  ps->init = init;
  if (len) note[0] = '\0';
  if (init != LBMC_INIT_MEANFIELD) return LBMC_SUCCESS;
  return lbmc_ps_meanfield(ps, note, len);
}

int lbmc_ps_meanfield_start(lbmc_per_server *ps)
{
  char note[256];
  return lbmc_ps_meanfield(ps, note, sizeof note) == LBMC_SUCCESS && !*note;
}

/* The mean-field start: per pool, the servers at each level by randomised rounding (one
 * uniform of the aux stream), laid out in order; the counts and levels set. */
static void lbmc_ps_place(lbmc_per_server *ps, lbmc_stream *aux)
{
  lbmc_state *st = &ps->st;
  const lbmc_model *m = st->m;
  const uint32_t levels = ps->mf.levels;
  for (uint32_t j = 0; j < st->J; j++) {
    uint32_t s = (uint32_t)m->offset[j];
    lbmc_occ_round(ps->mf.s + (size_t)j * levels, levels, m->N[j], lbmc_u01(aux), ps->counts);
    for (uint32_t k = 0; k < levels; k++) {
      for (int64_t c = 0; c < ps->counts[k]; c++) *lbmc_q_ref(st, s++) = k;
      if (k > 0) st->pool_q[j] += (uint64_t)k * (uint64_t)ps->counts[k];
      for (uint32_t l = 1; l <= k && l <= st->K; l++)
        st->level[j * (st->K + 1) + l] += (uint32_t)ps->counts[k];
    }
    ps->started += st->pool_q[j];
  }
}

void lbmc_ps_reset(lbmc_per_server *ps, lbmc_stream *streams)
{
  lbmc_state *st = &ps->st;
  st->s_arr = &streams[LBMC_PURPOSE_ARRIVALS];
  st->s_svc = &streams[LBMC_PURPOSE_SERVICE];
  st->s_route = &streams[LBMC_PURPOSE_ROUTING];
  lbmc_ps_reset_servers(st);
  lbmc_cust_link_free(st, 0, st->cust_cap);
  ps->started = 0;
  if (ps->init == LBMC_INIT_MEANFIELD && ps->mf.settled)
    lbmc_ps_place(ps, &streams[LBMC_PURPOSE_AUX]);
  lbmc_tally_reset(&st->tally, ps->started);
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
