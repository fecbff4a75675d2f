/* General service: every arrival draws its service requirement S (mean 1) from the
 * service stream. A server of pool j holding q customers serves the first
 * m = min(q, L_j) of them (its slots; L_j = 1: a plain FCFS server) at total speed
 * mu_j(m), shared equally; the others wait, FCFS. The server's attained service per
 * slot customer V grows at mu_j(m)/m; a slot customer that started at level V0 with
 * requirement S leaves when V = V0 + S. Busy servers sit in a binary min-heap on the
 * time of their next completion (the event calendar: O(log n) per event). With one
 * service distribution for all pools, S is drawn before routing, so every policy sees
 * the same requirements (common random numbers); with different distributions per
 * pool it is drawn from the destination pool's distribution after routing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sampler.h"
#include "engine_impl.h"

static int lbmc_gen_same_service(const lbmc_model *m)
{
  for (int j = 1; j < m->J; j++) {
    const lbmc_service *a = &m->service[0], *b = &m->service[j];
    if (a->kind != b->kind || memcmp(a->p, b->p, sizeof a->p) != 0) return 0;
  }
  return 1;
}

lbmc_err lbmc_engine_general_create(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
  size_t n = st->n;
  for (uint32_t j = 0; j < st->J; j++)
    if (st->slots[j] > st->lmax) st->lmax = st->slots[j];
  st->slot_a = malloc(sizeof *st->slot_a * n * st->lmax);
  st->slot_f = malloc(sizeof *st->slot_f * n * st->lmax);
  st->g = malloc(sizeof *st->g * n);
  st->cust_work = malloc(sizeof *st->cust_work * st->cust_cap);
  e->heap = malloc(sizeof *e->heap * n);
  e->hpos = malloc(sizeof *e->hpos * n);
  if (!st->slot_a || !st->slot_f || !st->g || !st->cust_work || !e->heap || !e->hpos)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory for the event calendar");
  e->common_service = lbmc_gen_same_service(st->m);
  e->track = st->lmax > 1;
  return lbmc_sampler_create(st->s_svc, &e->sampler);
}

void lbmc_engine_general_destroy(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
  free(st->slot_a);
  free(st->slot_f);
  free(st->g);
  free(st->cust_work);
  free(e->heap);
  free(e->hpos);
  lbmc_sampler_destroy(&e->sampler);
}

void lbmc_engine_general_reset(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
  for (uint32_t s = 0; s < st->n; s++) {
    e->hpos[s] = -1;
    st->g[s].work_wait = 0;
    st->g[s].V = st->g[s].Vt = st->g[s].t_done = 0;
  }
  e->hsize = 0;
}

/* ---- the heap of busy servers: a 4-ary min-heap of (t_done, server) pairs, the keys
 * stored inline so that a sift touches contiguous memory ---- */

static void lbmc_heap_place(lbmc_engine *e, uint32_t i, lbmc_heap_item it)
{
  e->heap[i] = it;
  if (e->track) e->hpos[it.server] = (int32_t)i;
}

static void lbmc_heap_up(lbmc_engine *e, uint32_t i, lbmc_heap_item it)
{
  while (i > 0) {
    uint32_t parent = (i - 1) / 4;
    if (e->heap[parent].key <= it.key) break;
    lbmc_heap_place(e, i, e->heap[parent]);
    i = parent;
  }
  lbmc_heap_place(e, i, it);
}

static void lbmc_heap_down(lbmc_engine *e, uint32_t i, lbmc_heap_item it)
{
  const lbmc_heap_item *h = e->heap;
  const uint32_t size = e->hsize;
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
    lbmc_heap_place(e, i, h[best]);
    i = best;
  }
  lbmc_heap_place(e, i, it);
}

/* Server s's completion time is now st->g[s].t_done: restore the heap (push if new).
 * Without slots only the root's key changes (the server that just completed) and a
 * server enters when it becomes busy: positions need not be tracked. */
static void lbmc_heap_set(lbmc_engine *e, uint32_t s, int in_heap)
{
  lbmc_heap_item it = {lbmc_time_key(e->st.g[s].t_done), s};
  if (!e->track) {
    if (in_heap)
      lbmc_heap_down(e, 0, it); /* s is the root */
    else
      lbmc_heap_up(e, e->hsize++, it);
    return;
  }
  if (e->hpos[s] < 0) {
    lbmc_heap_up(e, e->hsize++, it);
  } else {
    uint32_t i = (uint32_t)e->hpos[s];
    if (i > 0 && e->heap[(i - 1) / 4].key > it.key)
      lbmc_heap_up(e, i, it);
    else
      lbmc_heap_down(e, i, it);
  }
}

static void lbmc_heap_remove(lbmc_engine *e, uint32_t s)
{
  uint32_t i = e->track ? (uint32_t)e->hpos[s] : 0; /* untracked: only the root leaves */
  lbmc_heap_item last = e->heap[--e->hsize];
  if (e->track) e->hpos[s] = -1;
  if (last.server == s) return;
  if (i > 0 && e->heap[(i - 1) / 4].key > last.key)
    lbmc_heap_up(e, i, last);
  else
    lbmc_heap_down(e, i, last);
}

/* ---- service at one server ---- */

static uint32_t lbmc_gen_slots_used(const lbmc_state *st, uint32_t s)
{
  uint32_t q = st->q[s], L = st->slots[st->pool_of[s]];
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
static void lbmc_gen_schedule(lbmc_engine *e, uint32_t s, int in_heap)
{
  lbmc_state *st = &e->st;
  uint32_t m = lbmc_gen_slots_used(st, s);
  if (m == 0) {
    if (in_heap) lbmc_heap_remove(e, s);
    return;
  }
  st->g[s].t_done =
      st->t + (st->slot_f[(size_t)s * st->lmax + lbmc_gen_first_slot(st, s, m)] - st->g[s].V) /
                  lbmc_gen_rate(st, st->pool_of[s], m);
  lbmc_heap_set(e, s, in_heap);
}

static double lbmc_gen_requirement(lbmc_engine *e, uint32_t j)
{
  const lbmc_service *svc = &e->st.m->service[j];
  if (svc->kind == LBMC_SERVICE_EXPONENTIAL) return lbmc_exp_zig(e->st.s_svc, &e->st.zig);
  return lbmc_service_sample(svc, e->sampler);
}

/* One slot per server at constant speed (no speed lists): t_done is set directly. */
static void lbmc_gen_arrival_single(lbmc_engine *e, uint32_t s, uint32_t j, uint32_t q, double work)
{
  lbmc_state *st = &e->st;
  if (q == 0) {
    st->slot_a[s] = st->t;
    st->g[s].t_done = st->t + work * st->inv_mu[j];
    lbmc_engine_admitted(st, s, j, 1, 1);
    lbmc_heap_set(e, s, 0);
  } else {
    int32_t c = lbmc_engine_enqueue(e, s);
    if (c < 0) return;
    st->cust_work[c] = work;
    st->g[s].work_wait += work;
    lbmc_engine_admitted(st, s, j, q + 1, 0);
  }
}

static void lbmc_gen_arrival(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
  double work = e->common_service ? lbmc_gen_requirement(e, 0) : 0;
  uint32_t s = lbmc_engine_route(st), j, q, m;
  if (s == UINT32_MAX) return;
  j = st->pool_of[s];
  q = st->q[s];
  m = lbmc_gen_slots_used(st, s);
  if (!e->common_service) work = lbmc_gen_requirement(e, j);
  if (!e->track) {
    lbmc_gen_arrival_single(e, s, j, q, work);
    return;
  }
  if (m < st->slots[j]) { /* a free slot: service starts at once, the speed changes */
    lbmc_gen_catch_up(st, s);
    st->slot_a[(size_t)s * st->lmax + m] = st->t;
    st->slot_f[(size_t)s * st->lmax + m] = st->g[s].V + work;
    lbmc_engine_admitted(st, s, j, q + 1, 1);
    lbmc_gen_schedule(e, s, q > 0);
  } else { /* every slot busy: it waits, nothing else changes */
    int32_t c = lbmc_engine_enqueue(e, s);
    if (c < 0) return;
    st->cust_work[c] = work;
    st->g[s].work_wait += work;
    lbmc_engine_admitted(st, s, j, q + 1, 0);
  }
}

/* One slot per server at constant speed: the root's customer leaves. */
static void lbmc_gen_departure_single(lbmc_engine *e, uint32_t s, uint32_t j)
{
  lbmc_state *st = &e->st;
  uint32_t q = lbmc_engine_left(st, s, j, st->t - st->slot_a[s]);
  if (q > 0) { /* the first waiting customer starts */
    int32_t c = lbmc_engine_start_next(st, s);
    st->slot_a[s] = st->cust[c].t_arrival;
    st->g[s].t_done = st->t + st->cust_work[c] * st->inv_mu[j];
    st->g[s].work_wait = q > 1 ? st->g[s].work_wait - st->cust_work[c] : 0;
    lbmc_heap_set(e, s, 1);
  } else {
    lbmc_heap_remove(e, s);
  }
  lbmc_engine_departed(st, s, j, q);
}

static void lbmc_gen_departure(lbmc_engine *e)
{
  lbmc_state *st = &e->st;
  uint32_t s = e->heap[0].server, j = st->pool_of[s], m = lbmc_gen_slots_used(st, s), k, q;
  double *a = st->slot_a + (size_t)s * st->lmax, *f = st->slot_f + (size_t)s * st->lmax;
  double a_k;
  if (!e->track) {
    lbmc_gen_departure_single(e, s, j);
    return;
  }
  lbmc_gen_catch_up(st, s);
  k = lbmc_gen_first_slot(st, s, m);
  st->g[s].V = f[k]; /* exactly its finish level: no drift */
  a_k = a[k];
  a[k] = a[m - 1];
  f[k] = f[m - 1];
  q = lbmc_engine_left(st, s, j, st->t - a_k);
  if (st->first[s] >= 0) { /* the first waiting customer takes the freed slot */
    int32_t c = lbmc_engine_start_next(st, s);
    a[m - 1] = st->cust[c].t_arrival;
    f[m - 1] = st->g[s].V + st->cust_work[c];
    st->g[s].work_wait = st->first[s] >= 0 ? st->g[s].work_wait - st->cust_work[c] : 0;
  }
  lbmc_gen_schedule(e, s, 1);
  lbmc_engine_departed(st, s, j, q);
}

void lbmc_engine_general_run(lbmc_engine *e, double t_end)
{
  lbmc_state *st = &e->st;
  while (!st->overflow) {
    double next_dep = e->hsize ? lbmc_key_time(e->heap[0].key) : INFINITY;
    if (e->next_arr <= next_dep) {
      if (e->next_arr > t_end) break;
      st->t = e->next_arr;
      lbmc_gen_arrival(e);
      e->next_arr = st->t + lbmc_exp_zig(st->s_arr, &st->zig) * e->inv_lambda_total;
    } else {
      if (next_dep > t_end) break;
      st->t = next_dep;
      lbmc_gen_departure(e);
    }
  }
}
