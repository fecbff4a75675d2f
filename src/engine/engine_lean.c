/* The lean engine: every server, general service, FCFS at a constant speed per pool, in
 * about 40 bytes per server and an event list of O(1) amortised cost per event (a
 * calendar of array buckets, src/core/ladder.h, whose entries are (time, server)). Two
 * forms, by what the policy reads:
 *
 * Queue lengths only (every policy but lwl(d)): a server keeps its count q and the end of
 * its service in progress (a 16-byte record), and has one event in the list while busy. A
 * customer's requirement is drawn from its pool's law when its service starts (FCFS: nothing before
 * its start depends on it), so waiting customers are counts only. The per-customer sums are
 * conditional expectations at admission (terms at admission, as the occupancy engine): a customer
 * joining a server of pool j that holds q >= 1 waits the residual of the service in progress plus q
 * - 1 fresh requirements, E[wait] = (t_done - t) + (q - 1) / mu_j, and E[sojourn] = E[wait] + 1 /
 * mu_j; their averages are unbiased for the mean wait and sojourn. Quantiles come from a systematic
 * subsample: every tag_every-th admitted customer (tag_every = ceil(n / 2^16): every
 * customer up to n = 2^16) keeps its arrival time and the customers ahead of it in a side
 * table, and its actual wait and sojourn go to the histograms when they end; the k-th
 * admitted customer, whatever k, is a customer seen at admission in the steady state, so
 * the subsample's times have the law of all customers' (docs/model.md, "Engines").
 * The workload told to the tally: the remaining requirement of the service in progress,
 * exact, plus 1 (the mean) per waiting customer (its expectation given the state): +S at a
 * start at an idle server, +1 at a wait, S - 1 when a waiting customer starts; drained at
 * mu_j while busy.
 *
 * Workloads (lwl(d)): requirements are drawn at admission (before routing when every
 * pool has the same law, as the general engine: common random numbers across policies),
 * a server keeps its count and drain time D (when it will be empty), lbmc_workload reads
 * D - t, and each customer has an event (its departure, with its server) in the list, D' = max(D,
 * t) + S/mu_j, known at admission with its wait and sojourn (exact, every customer in the
 * histograms).
 *
 * Speed lists (queue-length-dependent speeds, service slots) stay on the general engine. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/bigmem.h"
#include "../core/ladder.h"
#include "../core/sampler.h"
#include "../system/system.h"
#include "engine_type.h"
#include "lbmc/rng.h"
#include "per_server.h"

/* Tag every ceil(n / LBMC_LEAN_TAGGED) admitted customers (queue-length form). */
#define LBMC_LEAN_TAGGED (1u << 16)
#define LBMC_LEAN_NIL    UINT32_MAX

/* A tagged customer: arrival time, customers ahead of it at its server (0: in service),
 * the next tagged customer of the server (FCFS) or of the free list. */
typedef struct {
  double t_arr;
  uint32_t ahead, next;
} lbmc_lean_tag;

typedef struct {
  lbmc_per_server ps; /* first member: see per_server.h */
  int workload;       /* the policy reads workloads: drain times, requirements at admission */
  int common_service; /* one law for every pool: draw before routing (workload form) */
  gsl_rng *sampler;   /* service requirements, from the service stream */
  lbmc_ladder q;      /* the event list */
  /* Each server's 16-byte record (st.q points into it, q_shift 2): its count in aux;
   * queue lengths: t the end of its service in progress, next its first tagged customer
   * (read where tagged says); workloads: t its drain time (st.drain), next unused. */
  lbmc_ladder_node *srv;
  uint64_t *tagged;   /* n bits: the server has tagged customers (queue-length form) */
  lbmc_lean_tag *tag; /* the tagged customers */
  uint32_t tag_cap, tag_used, tag_free;
  uint64_t tag_every, tag_phase;
  lbmc_dhist *h_sojourn, *h_wait; /* this quantile group's, NULL: not recorded */
} lbmc_lean_ws;

static inline int lbmc_lean_is_tagged(const lbmc_lean_ws *w, uint32_t s)
{
  return (int)((w->tagged[s >> 6] >> (s & 63)) & 1);
}

static inline void lbmc_lean_set_tagged(lbmc_lean_ws *w, uint32_t s, int on)
{
  if (on)
    w->tagged[s >> 6] |= 1ULL << (s & 63);
  else
    w->tagged[s >> 6] &= ~(1ULL << (s & 63));
}

/* ---- tagged customers (queue-length form) ---- */

static int lbmc_lean_tag_alloc(lbmc_lean_ws *w, uint32_t *k)
{
  if (w->tag_free != LBMC_LEAN_NIL) {
    *k = w->tag_free;
    w->tag_free = w->tag[*k].next;
    return 0;
  }
  if (w->tag_used == w->tag_cap) {
    uint64_t cap = 2 * (uint64_t)w->tag_cap;
    lbmc_lean_tag *t = cap < LBMC_LEAN_NIL ? realloc(w->tag, sizeof *t * cap) : NULL;
    if (!t) return -1;
    w->tag = t;
    w->tag_cap = (uint32_t)cap;
  }
  *k = w->tag_used++;
  return 0;
}

/* The customer just admitted at server s, which held q before it, is tagged. */
static void lbmc_lean_tag_add(lbmc_lean_ws *w, uint32_t s, uint32_t q)
{
  lbmc_state *st = &w->ps.st;
  uint32_t k;
  if (lbmc_lean_tag_alloc(w, &k) != 0) {
    lbmc_tally_out_of_memory(&st->tally);
    return;
  }
  w->tag[k] = (lbmc_lean_tag){st->t, q, LBMC_LEAN_NIL};
  if (q == 0 && w->h_wait) lbmc_dhist_add(w->h_wait, 0);
  if (!lbmc_lean_is_tagged(w, s)) {
    lbmc_lean_set_tagged(w, s, 1);
    w->srv[s].next = k;
    return;
  }
  for (uint32_t i = w->srv[s].next;; i = w->tag[i].next)
    if (w->tag[i].next == LBMC_LEAN_NIL) {
      w->tag[i].next = k;
      return;
    }
}

/* A completion at server s, which has tagged customers: the one in service (if tagged)
 * leaves, the others move up, the one reaching the head starts its service. */
static void lbmc_lean_tag_depart(lbmc_lean_ws *w, uint32_t s)
{
  const double t = w->ps.st.t;
  uint32_t k = w->srv[s].next;
  if (w->tag[k].ahead == 0) { /* it was in service */
    uint32_t next = w->tag[k].next;
    if (w->h_sojourn) lbmc_dhist_add(w->h_sojourn, t - w->tag[k].t_arr);
    w->tag[k].next = w->tag_free;
    w->tag_free = k;
    if (next == LBMC_LEAN_NIL) lbmc_lean_set_tagged(w, s, 0);
    w->srv[s].next = next;
    k = next;
  }
  for (; k != LBMC_LEAN_NIL; k = w->tag[k].next)
    if (--w->tag[k].ahead == 0 && w->h_wait) lbmc_dhist_add(w->h_wait, t - w->tag[k].t_arr);
}

/* ---- the queue-length form ---- */

static void lbmc_lean_arrival(lbmc_lean_ws *w)
{
  lbmc_state *st = &w->ps.st;
  uint32_t s = lbmc_ps_route(st), j, q;
  double wait;
  if (s == UINT32_MAX) return;
  j = lbmc_ps_pool(st, s);
  q = w->srv[s].aux;
  if (q == 0) { /* its service starts: its requirement now */
    double S = lbmc_ps_requirement(st, w->sampler, j);
    w->srv[s].t = st->t + S * st->inv_mu[j];
    if (lbmc_ladder_push(&w->q, w->srv[s].t, s) != 0) {
      lbmc_tally_out_of_memory(&st->tally);
      return;
    }
    lbmc_tally_work(&st->tally, st->t, j, S);
    lbmc_tally_drain(&st->tally, st->t, j, st->mu[j]);
    wait = 0;
  } else { /* it waits: the expected wait, and one mean requirement of work */
    lbmc_tally_work(&st->tally, st->t, j, 1.0);
    wait = (w->srv[s].t - st->t) + (double)(q - 1) * st->inv_mu[j];
  }
  st->tally.sum_wait += wait;
  st->tally.sum_sojourn += wait + st->inv_mu[j];
  if (++w->tag_phase == w->tag_every) {
    w->tag_phase = 0;
    lbmc_lean_tag_add(w, s, q);
  }
  lbmc_ps_admitted(st, s, j, q + 1, q == 0);
}

static void lbmc_lean_departure(lbmc_lean_ws *w)
{
  lbmc_state *st = &w->ps.st;
  const uint32_t s = lbmc_ladder_pop(&w->q), j = lbmc_ps_pool(st, s);
  const uint32_t q = lbmc_ps_gone(st, s, j);
  if (lbmc_lean_is_tagged(w, s)) lbmc_lean_tag_depart(w, s);
  if (q > 0) { /* the next customer starts: its requirement now */
    double S = lbmc_ps_requirement(st, w->sampler, j);
    w->srv[s].t = st->t + S * st->inv_mu[j];
    if (lbmc_ladder_push(&w->q, w->srv[s].t, s) != 0) lbmc_tally_out_of_memory(&st->tally);
    st->tally.c.starts++;
    lbmc_tally_work(&st->tally, st->t, j, S - 1.0);
  } else {
    lbmc_tally_drain(&st->tally, st->t, j, -st->mu[j]);
  }
  lbmc_ps_departed(st, s, j, q);
}

/* ---- the workload form ---- */

static void lbmc_lean_arrival_work(lbmc_lean_ws *w)
{
  lbmc_state *st = &w->ps.st;
  double S = w->common_service ? lbmc_ps_requirement(st, w->sampler, 0) : 0, start, dep;
  uint32_t s = lbmc_ps_route(st), j, q;
  if (s == UINT32_MAX) return;
  j = lbmc_ps_pool(st, s);
  q = w->srv[s].aux;
  if (!w->common_service) S = lbmc_ps_requirement(st, w->sampler, j);
  start = q > 0 ? w->srv[s].t : st->t;
  dep = start + S * st->inv_mu[j];
  w->srv[s].t = dep;
  if (lbmc_ladder_push(&w->q, dep, s) != 0) {
    lbmc_tally_out_of_memory(&st->tally);
    return;
  }
  st->tally.sum_wait += start - st->t;
  st->tally.sum_sojourn += dep - st->t;
  if (w->h_wait) lbmc_dhist_add(w->h_wait, start - st->t);
  if (w->h_sojourn) lbmc_dhist_add(w->h_sojourn, dep - st->t);
  lbmc_tally_work(&st->tally, st->t, j, S);
  if (q == 0) lbmc_tally_drain(&st->tally, st->t, j, st->mu[j]);
  lbmc_ps_admitted(st, s, j, q + 1, q == 0);
}

static void lbmc_lean_departure_work(lbmc_lean_ws *w)
{
  lbmc_state *st = &w->ps.st;
  const uint32_t s = lbmc_ladder_pop(&w->q), j = lbmc_ps_pool(st, s);
  const uint32_t q = lbmc_ps_gone(st, s, j);
  if (q > 0)
    st->tally.c.starts++;
  else
    lbmc_tally_drain(&st->tally, st->t, j, -st->mu[j]);
  lbmc_ps_departed(st, s, j, q);
}

/* ---- the run ---- */

/* Start loading the state of the server of the next completion (it is known: Bottom's
 * last entry), so that its cache miss overlaps the events before it. */
static inline void lbmc_lean_prefetch(const lbmc_lean_ws *w)
{
  if (w->q.nbot) {
    const uint32_t s = lbmc_ladder_peek(&w->q);
    __builtin_prefetch(&w->srv[s], 1);
    if (w->ps.st.J > 1) __builtin_prefetch(&w->ps.st.pool_of[s], 0);
  }
}

static lbmc_err lbmc_lean_advance(void *ws, double t_end, double *rec)
{
  lbmc_lean_ws *w = ws;
  lbmc_state *st = &w->ps.st;
  while (!st->tally.halt) {
    double next_dep = lbmc_ladder_min(&w->q);
    if (w->ps.next_arr <= next_dep) {
      if (next_dep == INFINITY && w->q.size > 0) { /* the event list could not grow */
        lbmc_tally_out_of_memory(&st->tally);
        break;
      }
      if (w->ps.next_arr > t_end) break;
      st->t = w->ps.next_arr;
      if (w->workload)
        lbmc_lean_arrival_work(w);
      else
        lbmc_lean_arrival(w);
      lbmc_ps_next_arrival(&w->ps);
      if (st->pol->prefetch) st->pol->prefetch(st, st->pw); /* the next arrival's samples */
    } else {
      if (next_dep > t_end) break;
      st->t = next_dep;
      if (w->workload)
        lbmc_lean_departure_work(w);
      else
        lbmc_lean_departure(w);
      lbmc_lean_prefetch(w);
    }
  }
  return lbmc_ps_finish(&w->ps, t_end, rec, "lean");
}

/* ---- the engine table ---- */

static int lbmc_lean_applies(const lbmc_model *m, char *why, size_t len)
{
  for (int j = 0; j < m->J; j++)
    if (m->nrates[j] > 1) {
      snprintf(why, len, "pool %d has queue-length-dependent speeds (the general engine's)", j + 1);
      return 0;
    }
  return lbmc_ps_applies_size(m, why, len);
}

/* The shared state without the counts, the records, the event list (ladder.h: an entry
 * per event, the unfilled half of the last chunk of each of the 2 / PER_BUCKET buckets
 * per event, the buckets; events: at most one per server, and for workloads one per
 * customer), and for queue lengths the tagged bits and the side table (about
 * 2^16 tagged customers, a few each). */
static double lbmc_lean_memory(const lbmc_model *m, int K, double *per_customer)
{
  const double n = (double)m->n,
               ev = sizeof(lbmc_ladder_entry) *
                        (1 + LBMC_LADDER_CHUNK / (double)LBMC_LADDER_PER_BUCKET) +
                    2 * sizeof(lbmc_ladder_bucket) / (double)LBMC_LADDER_PER_BUCKET;
  double b = lbmc_ps_memory(m, K, 0, per_customer) + n * (sizeof(lbmc_ladder_node) + ev);
  if (m->policy->needs_workload) {
    *per_customer = ev;
    return b;
  }
  return b + n / 8 + 4.0 * LBMC_LEAN_TAGGED * sizeof(lbmc_lean_tag);
}

static void lbmc_lean_destroy(void **ws)
{
  lbmc_lean_ws *w = *ws;
  if (!w) return;
  free(w->srv);
  free(w->tagged);
  free(w->tag);
  w->ps.st.q = NULL; /* in srv */
  lbmc_ladder_free(&w->q);
  lbmc_sampler_destroy(&w->sampler);
  lbmc_ps_destroy(&w->ps);
  free(w);
  *ws = NULL;
}

static lbmc_err lbmc_lean_alloc(lbmc_lean_ws *w)
{
  lbmc_state *st = &w->ps.st;
  w->workload = st->pol->needs_workload;
  w->common_service = lbmc_ps_same_service(st->m);
  w->srv = malloc(sizeof *w->srv * st->n);
  lbmc_advise_huge(w->srv, sizeof *w->srv * st->n);
  if (w->srv) {
    st->q = &w->srv[0].aux;
    st->q_shift = 2; /* 16-byte records */
  }
  if (w->workload) {
    st->drain = w->srv;
  } else {
    w->tagged = calloc(((size_t)st->n + 63) / 64, sizeof *w->tagged);
    w->tag_every = ((uint64_t)st->n + LBMC_LEAN_TAGGED - 1) / LBMC_LEAN_TAGGED;
    w->tag_cap = 1024;
    w->tag = malloc(sizeof *w->tag * w->tag_cap);
  }
  if (!w->srv || (!w->workload && (!w->tagged || !w->tag)))
    return LBMC_ERROR(LBMC_ERR_MEMORY, "lean engine: out of memory for n = %u servers",
                      (unsigned)st->n);
  return lbmc_ladder_create(&w->q);
}

static lbmc_err lbmc_lean_create(const lbmc_model *m, int K, uint64_t max_customers, void **ws)
{
  lbmc_lean_ws *w = calloc(1, sizeof *w);
  lbmc_err err;
  if (!w) return LBMC_ERROR(LBMC_ERR_MEMORY, "lean engine: out of memory");
  *ws = w;
  err = lbmc_ps_create_lean(&w->ps, m, K, max_customers, LBMC_TERMS_AT_ADMISSION);
  w->ps.st.tally.has_work = 1;
  if (!err) err = lbmc_lean_alloc(w);
  if (err) lbmc_lean_destroy(ws);
  return err;
}

/* A mean-field start: the customer in service of each server with customers has the
 * equilibrium residual of its pool's law (lbmc_service_residual), from the aux stream;
 * queue lengths: the waiting customers stay counts (their requirements are drawn when they
 * start), work told as their expectation, 1 each; workloads: they get requirements too,
 * and each customer its departure event. None is tagged or in the per-customer sums. */
static lbmc_err lbmc_lean_start(lbmc_lean_ws *w, lbmc_stream *aux)
{
  lbmc_state *st = &w->ps.st;
  double work[LBMC_MAX_POOLS] = {0}, busy[LBMC_MAX_POOLS] = {0};
  gsl_rng *r = NULL;
  LBMC_CALL(lbmc_sampler_create(aux, &r));
  for (uint32_t s = 0; s < st->n && !st->tally.halt; s++) {
    const uint32_t q = w->srv[s].aux, j = st->pool_of[s];
    const lbmc_service *svc = &st->m->service[j];
    double R, D;
    if (q == 0) continue;
    R = lbmc_service_residual(svc, r);
    D = R * st->inv_mu[j];
    work[j] += R;
    busy[j] += 1;
    if (!w->workload) {
      w->srv[s].t = D;
      if (lbmc_ladder_push(&w->q, D, s) != 0) lbmc_tally_out_of_memory(&st->tally);
      work[j] += (double)(q - 1);
      continue;
    }
    for (uint32_t k = 0; k < q; k++) {
      if (k > 0) {
        double S = lbmc_service_sample(svc, r);
        D += S * st->inv_mu[j];
        work[j] += S;
      }
      if (lbmc_ladder_push(&w->q, D, s) != 0) lbmc_tally_out_of_memory(&st->tally);
    }
    w->srv[s].t = D;
  }
  lbmc_sampler_destroy(&r);
  for (uint32_t j = 0; j < st->J; j++) {
    lbmc_tally_work(&st->tally, 0, j, work[j]);
    lbmc_tally_drain(&st->tally, 0, j, busy[j] * st->mu[j]);
  }
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_lean_reset(void *ws, lbmc_stream *streams)
{
  lbmc_lean_ws *w = ws;
  lbmc_state *st = &w->ps.st;
  for (uint32_t s = 0; s < st->n; s++) w->srv[s].t = 0; /* counts: lbmc_ps_reset */
  lbmc_ps_reset(&w->ps, streams);
  lbmc_sampler_destroy(&w->sampler); /* a sampler reads the service stream of this reset */
  LBMC_CALL(lbmc_sampler_create(st->s_svc, &w->sampler));
  lbmc_ladder_clear(&w->q);
  /* the departures come at about the arrival rate; about one event per busy server (queue
   * lengths) or per customer (workloads) */
  if (lbmc_ladder_plan(&w->q, st->t, 1 / w->ps.inv_lambda_total, st->n) != 0)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "lean engine: out of memory for the event list");
  if (!w->workload) memset(w->tagged, 0, sizeof *w->tagged * (((size_t)st->n + 63) / 64));
  w->tag_used = 0;
  w->tag_free = LBMC_LEAN_NIL;
  w->tag_phase = 0;
  w->h_sojourn = w->h_wait = NULL;
  return lbmc_ps_started(&w->ps) ? lbmc_lean_start(w, &streams[LBMC_PURPOSE_AUX]) : LBMC_SUCCESS;
}

static lbmc_err lbmc_lean_set_init(void *ws, const lbmc_run_options *o, char *note, size_t len)
{
  return lbmc_ps_set_init(&((lbmc_lean_ws *)ws)->ps, (lbmc_init_kind)o->init, note, len);
}

static int lbmc_lean_meanfield_start(void *ws)
{
  return lbmc_ps_meanfield_start(&((lbmc_lean_ws *)ws)->ps);
}

static void lbmc_lean_set_histograms(void *ws, lbmc_dhist *sojourn, lbmc_dhist *wait)
{
  lbmc_lean_ws *w = ws;
  w->h_sojourn = sojourn;
  w->h_wait = wait;
}

const lbmc_engine_type lbmc_engine_lean = {
    .name = "lean",
    .summary = "every server in about 35-45 bytes, general service at constant speeds: a "
               "calendar of array buckets (O(1) per event), requirements drawn at service start "
               "(lwl(d): at "
               "admission, drain times)",
    .speed = 5e6,
    .cap_max = LBMC_PS_CAP_MAX,
    .cap_default_max = LBMC_PS_CAP_MAX,
    .applies = lbmc_lean_applies,
    .create = lbmc_lean_create,
    .destroy = lbmc_lean_destroy,
    .reset = lbmc_lean_reset,
    .advance = lbmc_lean_advance,
    .set_histograms = lbmc_lean_set_histograms,
    .time = lbmc_ps_time,
    .state = lbmc_ps_state,
    .tally = lbmc_ps_tally,
    .view = lbmc_ps_view,
    .set_init = lbmc_lean_set_init,
    .meanfield_start = lbmc_lean_meanfield_start,
    .memory = lbmc_lean_memory,
};
