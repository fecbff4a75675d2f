/* single: a test-only engine, registered only in the test build's variant of lbmc_sim
 * (tests/engine/CMakeLists.txt: LBMC_TEST_ENGINE=single), to show that adding an engine
 * is this one file plus one list line. It simulates the M/M/1/B queue: one server
 * (n = 1), exponential service at a constant speed, routing `random` (every policy sends
 * to the one server, but the others count messages). Its state is the queue length and a
 * ring of the waiting customers' arrival times (FCFS); it tells the tally what happens
 * and closes ticks through it, like every engine, so the tick records, the runaway cap,
 * the stop hook and the observers come for free. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ziggurat.h"
#include "engine/engine_type.h"
#include "lbmc/rng.h"
#include "system/policy.h"
#include "system/system.h"

typedef struct {
  lbmc_tally tally;
  lbmc_view view;
  double t, next_arr, next_dep, inv_lambda, inv_mu;
  uint64_t q, B;      /* customers at the server, the one in service included; buffer */
  double *ring;       /* arrival times of the customers, FCFS (cap entries) */
  uint64_t head, cap; /* the oldest customer's slot; slots */
  lbmc_stream *s_arr, *s_svc;
  lbmc_zig_exp zig;
  lbmc_dhist *h_sojourn, *h_wait;
} lbmc_single;

static int lbmc_single_applies(const lbmc_model *m, char *why, size_t len)
{
  if (m->n != 1 || m->J != 1 || m->nrates[0] != 1 || !lbmc_service_is_exponential(&m->service[0]) ||
      strcmp(m->policy->name, "random") != 0) {
    snprintf(why, len, "single applies to one exponential server with routing random");
    return 0;
  }
  return 1;
}

static int64_t lbmc_single_tail(const void *ws, int j, uint32_t k)
{
  (void)j;
  return k == 0 || ((const lbmc_single *)ws)->q >= k;
}
static uint64_t lbmc_single_customers(const void *ws, int j)
{
  (void)j;
  return ((const lbmc_single *)ws)->q;
}
static double lbmc_single_time(const void *ws) { return ((const lbmc_single *)ws)->t; }

static void lbmc_single_destroy(void **ws)
{
  lbmc_single *w = *ws;
  if (!w) return;
  lbmc_tally_free(&w->tally);
  free(w->ring);
  free(w);
  *ws = NULL;
}

static lbmc_err lbmc_single_create(const lbmc_model *m, int K, uint64_t max_customers, void **ws)
{
  lbmc_single *w = calloc(1, sizeof *w);
  lbmc_err err;
  if (!w) return LBMC_ERROR(LBMC_ERR_MEMORY, "single engine: out of memory");
  *ws = w;
  w->inv_lambda = 1.0 / m->lambda;
  w->inv_mu = 1.0 / m->mu[0];
  w->B = m->buffer[0] == LBMC_BUFFER_INF ? UINT64_MAX : (uint64_t)m->buffer[0];
  w->cap = 1024;
  w->ring = malloc(sizeof *w->ring * w->cap);
  lbmc_zig_exp_init(&w->zig);
  w->view =
      (lbmc_view){w, 1, K, m->N, lbmc_single_tail, lbmc_single_customers, NULL, lbmc_single_time};
  err = w->ring ? lbmc_tally_create(&w->tally, 1, K, max_customers, LBMC_TERMS_AT_DEPARTURE)
                : LBMC_ERROR(LBMC_ERR_MEMORY, "single engine: out of memory");
  if (err) lbmc_single_destroy(ws);
  return err;
}

static lbmc_err lbmc_single_reset(void *ws, lbmc_stream *streams)
{
  lbmc_single *w = ws;
  w->s_arr = &streams[LBMC_PURPOSE_ARRIVALS];
  w->s_svc = &streams[LBMC_PURPOSE_SERVICE];
  lbmc_tally_reset(&w->tally, 0);
  w->t = 0;
  w->q = w->head = 0;
  w->next_arr = lbmc_exp_zig(w->s_arr, &w->zig) * w->inv_lambda;
  w->next_dep = INFINITY;
  return LBMC_SUCCESS;
}

/* Room for one more arrival time in the ring (doubling, unrolled to the new size). */
static int lbmc_single_room(lbmc_single *w)
{
  double *r;
  if (w->q < w->cap) return 0;
  r = malloc(sizeof *r * 2 * w->cap);
  if (!r) return -1;
  for (uint64_t i = 0; i < w->q; i++) r[i] = w->ring[(w->head + i) % w->cap];
  free(w->ring);
  w->ring = r;
  w->head = 0;
  w->cap *= 2;
  return 0;
}

static void lbmc_single_arrival(lbmc_single *w)
{
  lbmc_tally *t = &w->tally;
  lbmc_tally_arrival(t);
  if (w->q >= w->B) {
    t->c.blocked++;
    return;
  }
  if (lbmc_single_room(w) != 0) {
    lbmc_tally_out_of_memory(t);
    return;
  }
  w->ring[(w->head + w->q) % w->cap] = w->t;
  t->c.admitted[0]++;
  if (w->q == 0) {
    t->c.starts++;
    if (w->h_wait) lbmc_dhist_add(w->h_wait, 0);
    w->next_dep = w->t + lbmc_exp_zig(w->s_svc, &w->zig) * w->inv_mu;
  } else {
    t->c.waited++;
  }
  w->q++;
  lbmc_tally_up(t, w->t, 0, (uint32_t)w->q);
  lbmc_tally_enter(t);
}

static void lbmc_single_departure(lbmc_single *w)
{
  lbmc_tally *t = &w->tally;
  const double sojourn = w->t - w->ring[w->head];
  w->head = (w->head + 1) % w->cap;
  w->q--;
  t->c.departures++;
  t->in_system--;
  t->sum_sojourn += sojourn;
  if (w->h_sojourn) lbmc_dhist_add(w->h_sojourn, sojourn);
  lbmc_tally_down(t, w->t, 0, (uint32_t)w->q);
  w->next_dep = INFINITY;
  if (w->q > 0) {
    const double wait = w->t - w->ring[w->head];
    t->c.starts++;
    t->sum_wait += wait;
    if (w->h_wait) lbmc_dhist_add(w->h_wait, wait);
    w->next_dep = w->t + lbmc_exp_zig(w->s_svc, &w->zig) * w->inv_mu;
  }
}

static lbmc_err lbmc_single_advance(void *ws, double t_end, double *rec)
{
  lbmc_single *w = ws;
  while (!w->tally.halt) {
    if (w->next_arr <= w->next_dep) {
      if (w->next_arr > t_end) break;
      w->t = w->next_arr;
      lbmc_single_arrival(w);
      w->next_arr = w->t + lbmc_exp_zig(w->s_arr, &w->zig) * w->inv_lambda;
    } else {
      if (w->next_dep > t_end) break;
      w->t = w->next_dep;
      lbmc_single_departure(w);
    }
  }
  LBMC_CALL(lbmc_tally_finish(&w->tally, &w->view, t_end, rec, "single"));
  w->t = w->tally.t0;
  return LBMC_SUCCESS;
}

static void lbmc_single_set_histograms(void *ws, lbmc_dhist *sojourn, lbmc_dhist *wait)
{
  ((lbmc_single *)ws)->h_sojourn = sojourn;
  ((lbmc_single *)ws)->h_wait = wait;
}

static lbmc_tally *lbmc_single_tally(void *ws) { return &((lbmc_single *)ws)->tally; }
static const lbmc_view *lbmc_single_view(const void *ws)
{
  return &((const lbmc_single *)ws)->view;
}

const lbmc_engine_type lbmc_engine_single = {
    .name = "single",
    .summary = "test only: the M/M/1/B queue, one server and a ring of arrival times",
    .speed = 1e7,
    .cap_max = (uint64_t)1 << 40,
    .cap_default_max = LBMC_CAP_DEFAULT_HELD,
    .applies = lbmc_single_applies,
    .create = lbmc_single_create,
    .destroy = lbmc_single_destroy,
    .reset = lbmc_single_reset,
    .advance = lbmc_single_advance,
    .set_histograms = lbmc_single_set_histograms,
    .time = lbmc_single_time,
    .tally = lbmc_single_tally,
    .view = lbmc_single_view,
};
