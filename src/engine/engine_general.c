/* The general engine: every server, general service. Every arrival draws its service
 * requirement S (mean 1) from the service stream. A server of pool j holding q
 * customers serves the first m = min(q, L_j) of them (its slots; L_j = 1: a plain
 * FCFS server) at total speed mu_j(m), shared equally; the others wait, FCFS. The
 * server's attained service per slot customer V grows at mu_j(m)/m; a slot customer
 * that started at level V0 with requirement S leaves when V = V0 + S. Busy servers
 * sit in a 4-ary min-heap on the time of their next completion (the event calendar:
 * O(log n) per event). With one service distribution for all pools, S is drawn
 * before routing, so every policy sees the same requirements (common random
 * numbers); with different distributions per pool it is drawn from the destination
 * pool's distribution after routing. The workload told to the tally is the actual
 * one: each admitted requirement a jump, drained at the server's total speed mu_j(m)
 * while it serves m slot customers. Applies to every model (docs/model.md,
 * "Simulation"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sampler.h"
#include "../system/system.h"
#include "engine_type.h"
#include "lbmc/rng.h"
#include "per_server.h"

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

typedef struct {
  lbmc_per_server ps;   /* first member: see per_server.h; holds the slot arrays */
  gsl_rng *sampler;     /* service requirements, from the service stream */
  int common_service;   /* every pool has the same distribution: draw before routing */
  lbmc_heap_item *heap; /* busy servers, a 4-ary min-heap on t_done */
  int32_t *hpos;        /* n: position in heap, -1 if not in it (kept only with track) */
  int track;            /* some pool has slots: keys of servers inside the heap change */
  uint32_t hsize;
} lbmc_gen_ws;

/* ---- the heap of busy servers: a 4-ary min-heap of (t_done, server) pairs, the keys
 * stored inline so that a sift touches contiguous memory ---- */

static void lbmc_heap_place(lbmc_gen_ws *w, uint32_t i, lbmc_heap_item it)
{
  w->heap[i] = it;
  if (w->track) w->hpos[it.server] = (int32_t)i;
}

static void lbmc_heap_up(lbmc_gen_ws *w, uint32_t i, lbmc_heap_item it)
{
  while (i > 0) {
    uint32_t parent = (i - 1) / 4;
    if (w->heap[parent].key <= it.key) break;
    lbmc_heap_place(w, i, w->heap[parent]);
    i = parent;
  }
  lbmc_heap_place(w, i, it);
}

static void lbmc_heap_down(lbmc_gen_ws *w, uint32_t i, lbmc_heap_item it)
{
  const lbmc_heap_item *h = w->heap;
  const uint32_t size = w->hsize;
  for (;;) {
    uint32_t c = 4 * i + 1, best;
    uint64_t least;
    if (c + 3 < size) { /* four children: a branch-free tournament (conditional moves) */
      uint64_t k0 = h[c].key, k1 = h[c + 1].key, k2 = h[c + 2].key, k3 = h[c + 3].key;
      uint32_t i01 = c + (k1 < k0), i23 = c + 2 + (k3 < k2);
      uint64_t m01 = k1 < k0 ? k1 : k0, m23 = k3 < k2 ? k3 : k2;
      best = m23 < m01 ? i23 : i01;
      least = m23 < m01 ? m23 : m01;
    } else if (c < size) {
      best = c;
      for (uint32_t k = c + 1; k < size; k++)
        if (h[k].key < h[best].key) best = k;
      least = h[best].key;
    } else {
      break;
    }
    if (least >= it.key) break;
    lbmc_heap_place(w, i, h[best]);
    i = best;
  }
  lbmc_heap_place(w, i, it);
}

/* Server s's completion time is now st->g[s].t_done: restore the heap (push if new).
 * Without slots only the root's key changes (the server that just completed) and a
 * server enters when it becomes busy: positions need not be tracked. */
static void lbmc_heap_set(lbmc_gen_ws *w, uint32_t s, int in_heap)
{
  lbmc_heap_item it = {lbmc_time_key(w->ps.st.g[s].t_done), s};
  if (!w->track) {
    if (in_heap)
      lbmc_heap_down(w, 0, it); /* s is the root */
    else
      lbmc_heap_up(w, w->hsize++, it);
    return;
  }
  if (w->hpos[s] < 0) {
    lbmc_heap_up(w, w->hsize++, it);
  } else {
    uint32_t i = (uint32_t)w->hpos[s];
    if (i > 0 && w->heap[(i - 1) / 4].key > it.key)
      lbmc_heap_up(w, i, it);
    else
      lbmc_heap_down(w, i, it);
  }
}

static void lbmc_heap_remove(lbmc_gen_ws *w, uint32_t s)
{
  uint32_t i = w->track ? (uint32_t)w->hpos[s] : 0; /* untracked: only the root leaves */
  lbmc_heap_item last = w->heap[--w->hsize];
  if (w->track) w->hpos[s] = -1;
  if (last.server == s) return;
  if (i > 0 && w->heap[(i - 1) / 4].key > last.key)
    lbmc_heap_up(w, i, last);
  else
    lbmc_heap_down(w, i, last);
}

/* ---- service at one server ---- */

static uint32_t lbmc_gen_slots_used(const lbmc_state *st, uint32_t s)
{
  uint32_t q = lbmc_q(st, s), L = st->slots[st->pool_of[s]];
  return q < L ? q : L;
}

/* Service rate per slot customer with m of them busy. */
static double lbmc_gen_rate(const lbmc_state *st, uint32_t j, uint32_t m)
{
  return st->rates[j][m - 1] / (double)m;
}

/* Bring V up to now (before the count of server s changes). */
static void lbmc_gen_catch_up(lbmc_state *st, uint32_t s)
{
  uint32_t m = lbmc_gen_slots_used(st, s);
  if (m > 0) st->g[s].V += (st->t - st->g[s].Vt) * lbmc_gen_rate(st, st->pool_of[s], m);
  st->g[s].Vt = st->t;
}

/* Index of the slot customer that finishes first. */
static uint32_t lbmc_gen_first_slot(const lbmc_state *st, uint32_t s, uint32_t m)
{
  const double *f = st->slot_f + (size_t)s * st->lmax;
  uint32_t k = 0;
  for (uint32_t i = 1; i < m; i++)
    if (f[i] < f[k]) k = i;
  return k;
}

/* Recompute server s's next completion after its count changed (V is current);
 * in_heap: s was busy before the change. */
static void lbmc_gen_schedule(lbmc_gen_ws *w, uint32_t s, int in_heap)
{
  lbmc_state *st = &w->ps.st;
  uint32_t m = lbmc_gen_slots_used(st, s);
  if (m == 0) {
    if (in_heap) lbmc_heap_remove(w, s);
    return;
  }
  st->g[s].t_done =
      st->t + (st->slot_f[(size_t)s * st->lmax + lbmc_gen_first_slot(st, s, m)] - st->g[s].V) /
                  lbmc_gen_rate(st, st->pool_of[s], m);
  lbmc_heap_set(w, s, in_heap);
}

static double lbmc_gen_requirement(lbmc_gen_ws *w, uint32_t j)
{
  return lbmc_ps_requirement(&w->ps.st, w->sampler, j);
}

/* One slot per server at constant speed (no speed lists): t_done is set directly. */
static void lbmc_gen_arrival_single(lbmc_gen_ws *w, uint32_t s, uint32_t j, uint32_t q, double work)
{
  lbmc_state *st = &w->ps.st;
  lbmc_tally_work(&st->tally, st->t, j, work);
  if (q == 0) {
    st->slot_a[s] = st->t;
    st->g[s].t_done = st->t + work * st->inv_mu[j];
    lbmc_ps_admitted(st, s, j, 1, 1);
    lbmc_tally_drain(&st->tally, st->t, j, st->mu[j]);
    lbmc_heap_set(w, s, 0);
  } else {
    int32_t c = lbmc_ps_enqueue(&w->ps, s);
    if (c < 0) return;
    st->cust_work[c] = work;
    st->g[s].work_wait += work;
    lbmc_ps_admitted(st, s, j, q + 1, 0);
  }
}

static void lbmc_gen_arrival(lbmc_gen_ws *w)
{
  lbmc_state *st = &w->ps.st;
  double work = w->common_service ? lbmc_gen_requirement(w, 0) : 0;
  uint32_t s = lbmc_ps_route(st), j, q, m;
  if (s == UINT32_MAX) return;
  j = st->pool_of[s];
  q = lbmc_q(st, s);
  m = lbmc_gen_slots_used(st, s);
  if (!w->common_service) work = lbmc_gen_requirement(w, j);
  if (!w->track) {
    lbmc_gen_arrival_single(w, s, j, q, work);
    return;
  }
  lbmc_tally_work(&st->tally, st->t, j, work);
  if (m < st->slots[j]) { /* a free slot: service starts at once, the speed changes */
    lbmc_tally_drain(&st->tally, st->t, j, st->rates[j][m] - (m > 0 ? st->rates[j][m - 1] : 0));
    lbmc_gen_catch_up(st, s);
    st->slot_a[(size_t)s * st->lmax + m] = st->t;
    st->slot_f[(size_t)s * st->lmax + m] = st->g[s].V + work;
    lbmc_ps_admitted(st, s, j, q + 1, 1);
    lbmc_gen_schedule(w, s, q > 0);
  } else { /* every slot busy: it waits, nothing else changes */
    int32_t c = lbmc_ps_enqueue(&w->ps, s);
    if (c < 0) return;
    st->cust_work[c] = work;
    st->g[s].work_wait += work;
    lbmc_ps_admitted(st, s, j, q + 1, 0);
  }
}

/* One slot per server at constant speed: the root's customer leaves. */
static void lbmc_gen_departure_single(lbmc_gen_ws *w, uint32_t s, uint32_t j)
{
  lbmc_state *st = &w->ps.st;
  uint32_t q = lbmc_ps_left(st, s, j, st->t - st->slot_a[s]);
  if (q > 0) { /* the first waiting customer starts */
    int32_t c = lbmc_ps_start_next(st, s);
    st->slot_a[s] = st->cust[c].t_arrival;
    st->g[s].t_done = st->t + st->cust_work[c] * st->inv_mu[j];
    st->g[s].work_wait = q > 1 ? st->g[s].work_wait - st->cust_work[c] : 0;
    lbmc_heap_set(w, s, 1);
  } else {
    lbmc_tally_drain(&st->tally, st->t, j, -st->mu[j]);
    lbmc_heap_remove(w, s);
  }
  lbmc_ps_departed(st, s, j, q);
}

static void lbmc_gen_departure(lbmc_gen_ws *w)
{
  lbmc_state *st = &w->ps.st;
  uint32_t s = w->heap[0].server, j = st->pool_of[s], m = lbmc_gen_slots_used(st, s), k, q;
  double *a = st->slot_a + (size_t)s * st->lmax, *f = st->slot_f + (size_t)s * st->lmax;
  double a_k;
  if (!w->track) {
    lbmc_gen_departure_single(w, s, j);
    return;
  }
  lbmc_gen_catch_up(st, s);
  k = lbmc_gen_first_slot(st, s, m);
  st->g[s].V = f[k]; /* exactly its finish level: no drift */
  a_k = a[k];
  a[k] = a[m - 1];
  f[k] = f[m - 1];
  q = lbmc_ps_left(st, s, j, st->t - a_k);
  if (st->first[s] >= 0) { /* the first waiting customer takes the freed slot */
    int32_t c = lbmc_ps_start_next(st, s);
    a[m - 1] = st->cust[c].t_arrival;
    f[m - 1] = st->g[s].V + st->cust_work[c];
    st->g[s].work_wait = st->first[s] >= 0 ? st->g[s].work_wait - st->cust_work[c] : 0;
  } else { /* a slot falls idle: the speed changes */
    lbmc_tally_drain(&st->tally, st->t, j, (m > 1 ? st->rates[j][m - 2] : 0) - st->rates[j][m - 1]);
  }
  lbmc_gen_schedule(w, s, 1);
  lbmc_ps_departed(st, s, j, q);
}

static lbmc_err lbmc_gen_advance(void *ws, double t_end, double *rec)
{
  lbmc_gen_ws *w = ws;
  lbmc_state *st = &w->ps.st;
  while (!st->tally.halt) {
    double next_dep = w->hsize ? lbmc_key_time(w->heap[0].key) : INFINITY;
    if (w->ps.next_arr <= next_dep) {
      if (w->ps.next_arr > t_end) break;
      st->t = w->ps.next_arr;
      lbmc_gen_arrival(w);
      lbmc_ps_next_arrival(&w->ps);
    } else {
      if (next_dep > t_end) break;
      st->t = next_dep;
      lbmc_gen_departure(w);
    }
  }
  return lbmc_ps_finish(&w->ps, t_end, rec, "general");
}

/* ---- the engine table ---- */

static int lbmc_gen_applies(const lbmc_model *m, char *why, size_t len)
{
  return lbmc_ps_applies_size(m, why, len);
}

/* The shared state, the slot arrays, each server's general-service quantities, the
 * waiting requirements and the heap with its positions. */
static double lbmc_gen_memory(const lbmc_model *m, int K, double *per_customer)
{
  const double n = (double)m->n, cust = n < 1024 ? 1024 : n;
  double lmax = 1, b = lbmc_ps_memory(m, K, 1, per_customer);
  for (int j = 0; j < m->J; j++)
    if (m->nrates[j] > lmax) lmax = m->nrates[j];
  *per_customer += sizeof(double);
  return b +
         n * (2 * lmax * sizeof(double) + sizeof(lbmc_gen_server) + sizeof(lbmc_heap_item) +
              sizeof(int32_t)) +
         cust * sizeof(double);
}

static void lbmc_gen_destroy(void **ws)
{
  lbmc_gen_ws *w = *ws;
  lbmc_state *st;
  if (!w) return;
  st = &w->ps.st;
  free(st->slot_a);
  free(st->slot_f);
  free(st->g);
  free(st->cust_work);
  free(w->heap);
  free(w->hpos);
  lbmc_sampler_destroy(&w->sampler);
  lbmc_ps_destroy(&w->ps);
  free(w);
  *ws = NULL;
}

/* The slot arrays, the workloads and the heap, for the state's n servers. */
static lbmc_err lbmc_gen_alloc(lbmc_gen_ws *w)
{
  lbmc_state *st = &w->ps.st;
  size_t n = st->n;
  for (uint32_t j = 0; j < st->J; j++)
    if (st->slots[j] > st->lmax) st->lmax = st->slots[j];
  st->slot_a = malloc(sizeof *st->slot_a * n * st->lmax);
  st->slot_f = malloc(sizeof *st->slot_f * n * st->lmax);
  st->g = malloc(sizeof *st->g * n);
  st->cust_work = malloc(sizeof *st->cust_work * st->cust_cap);
  w->heap = malloc(sizeof *w->heap * n);
  w->hpos = malloc(sizeof *w->hpos * n);
  if (!st->slot_a || !st->slot_f || !st->g || !st->cust_work || !w->heap || !w->hpos)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory for the event calendar");
  w->common_service = lbmc_ps_same_service(st->m);
  w->track = st->lmax > 1;
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_gen_create(const lbmc_model *m, int K, uint64_t max_customers, void **ws)
{
  lbmc_gen_ws *w = calloc(1, sizeof *w);
  lbmc_err err;
  if (!w) return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory");
  err = lbmc_ps_create(&w->ps, m, K, max_customers);
  w->ps.st.tally.has_work = 1;
  if (!err) err = lbmc_gen_alloc(w);
  *ws = w;
  if (err) lbmc_gen_destroy(ws);
  return err;
}

/* A mean-field start (one slot per server): the customer in service of each server with
 * customers has the equilibrium residual of its pool's law (lbmc_service_residual), the
 * waiting ones fresh requirements, all from the aux stream; their arrival times are
 * unknown (no per-customer terms); the work and drain rates are told to the tally. */
static lbmc_err lbmc_gen_start(lbmc_gen_ws *w, lbmc_stream *aux)
{
  lbmc_state *st = &w->ps.st;
  double work[LBMC_MAX_POOLS] = {0}, busy[LBMC_MAX_POOLS] = {0};
  gsl_rng *r = NULL;
  LBMC_CALL(lbmc_sampler_create(aux, &r));
  for (uint32_t s = 0; s < st->n && !st->tally.halt; s++) {
    const uint32_t q = lbmc_q(st, s), j = st->pool_of[s];
    const lbmc_service *svc = &st->m->service[j];
    double R;
    if (q == 0) continue;
    R = lbmc_service_residual(svc, r);
    st->slot_a[s] = -INFINITY;
    st->g[s].t_done = R * st->inv_mu[j];
    lbmc_heap_set(w, s, 0);
    work[j] += R;
    busy[j] += 1;
    for (uint32_t k = 1; k < q; k++) {
      int32_t c = lbmc_ps_enqueue(&w->ps, s);
      if (c < 0) break; /* the tally halts: out of memory */
      st->cust[c].t_arrival = -INFINITY;
      st->cust_work[c] = lbmc_service_sample(svc, r);
      st->g[s].work_wait += st->cust_work[c];
      work[j] += st->cust_work[c];
    }
  }
  lbmc_sampler_destroy(&r);
  for (uint32_t j = 0; j < st->J; j++) {
    lbmc_tally_work(&st->tally, 0, j, work[j]);
    lbmc_tally_drain(&st->tally, 0, j, busy[j] * st->mu[j]);
  }
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_gen_reset(void *ws, lbmc_stream *streams)
{
  lbmc_gen_ws *w = ws;
  lbmc_state *st = &w->ps.st;
  lbmc_ps_reset(&w->ps, streams);
  lbmc_sampler_destroy(&w->sampler); /* a sampler reads the service stream of this reset */
  LBMC_CALL(lbmc_sampler_create(st->s_svc, &w->sampler));
  for (uint32_t s = 0; s < st->n; s++) {
    w->hpos[s] = -1;
    st->g[s].work_wait = 0;
    st->g[s].V = st->g[s].Vt = st->g[s].t_done = 0;
  }
  w->hsize = 0;
  return lbmc_ps_started(&w->ps) ? lbmc_gen_start(w, &streams[LBMC_PURPOSE_AUX]) : LBMC_SUCCESS;
}

static lbmc_err lbmc_gen_set_init(void *ws, const lbmc_run_options *o, char *note, size_t len)
{
  lbmc_gen_ws *w = ws;
  const lbmc_init_kind init = (lbmc_init_kind)o->init;
  if (init == LBMC_INIT_MEANFIELD && w->track) {
    snprintf(note, len,
             "replicas start empty: the general engine has no mean-field start with speed "
             "lists");
    w->ps.init = LBMC_INIT_EMPTY;
    return LBMC_SUCCESS;
  }
  return lbmc_ps_set_init(&w->ps, init, note, len);
}

static int lbmc_gen_meanfield_start(void *ws)
{
  lbmc_gen_ws *w = ws;
  return !w->track && lbmc_ps_meanfield_start(&w->ps); /* none with speed lists */
}

const lbmc_engine_type lbmc_engine_general = {
    .name = "general",
    .summary = "every server, general service and speed lists: an event calendar",
    .speed = 1e7,
    .cap_max = LBMC_PS_CAP_MAX,
    .cap_default_max = LBMC_CAP_DEFAULT_HELD,
    .applies = lbmc_gen_applies,
    .create = lbmc_gen_create,
    .destroy = lbmc_gen_destroy,
    .reset = lbmc_gen_reset,
    .advance = lbmc_gen_advance,
    .set_histograms = lbmc_ps_set_histograms,
    .time = lbmc_ps_time,
    .state = lbmc_ps_state,
    .tally = lbmc_ps_tally,
    .view = lbmc_ps_view,
    .set_init = lbmc_gen_set_init,
    .meanfield_start = lbmc_gen_meanfield_start,
    .memory = lbmc_gen_memory,
};
