/* The occupancy engine (occupancy.h, docs/occupancy.md): the counts of servers per pool
 * and level as a continuous-time Markov chain, simulated exactly.
 *
 * Arrivals come from the arrival stream exactly as in the per-server engines (ziggurat
 * Exp(1) / (lambda n), first draw at reset: common random numbers across engines). The
 * policy's occupancy form (occ_policy.h) sends each one to a class (pool, level).
 * Departures: the next completion is one Exp(D) time, D = sum_j mu_j(1) busy slots_j,
 * drawn from the service stream after each completion; a slot becoming busy races its
 * own Exp(mu_j(1)) clock against it (competing exponentials), so the pair stays
 * distributed as for the current D (D only grows between completions). At a completion
 * the finishing slot is chosen with probability proportional to the rates at that
 * moment: pool j with probability mu_j(1) S_j / D (a double draw, J is small), then a
 * busy slot of the pool uniformly (an exact integer draw): slot layer i with
 * probability G[i] / S_j, and the server uniformly among the G[i] at level >= i.
 *
 * Per-customer metrics by conditional expectation (mixture.h): a customer admitted at
 * class (j, k) adds its expected wait (k - L_j + 1)^+ / mu_j(L_j) and sojourn (that
 * plus 1 / mu_j(1)) to the tick, and (j, k) to the mixture of the current batch group.
 * The workload likewise: the expected unfinished work given the counts is the number of
 * customers (each remaining requirement is Exp(1), memoryless), told to the tally as a
 * jump of +1 at an admission and -1 at a completion, with drain rate 0.
 */
#include "occupancy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../system/occ_policy.h"
#include "../system/policy.h"
#include "lbmc/rng.h"
#include "occ_meanfield.h"

/* G arrays of pools with unlimited buffers start with this many levels (doubling). */
#define LBMC_OCC_CAP0 64
/* Relative tolerance for a speed list to count as linear, mu_j(m) = m mu_j(1). */
#define LBMC_OCC_LINEAR_TOL 1e-12

typedef struct {
  lbmc_occ_state st;
  double next_arr, next_dep;
  double inv_lambda_total;
  int64_t phases0[LBMC_MAX_POOLS]; /* st.phases at the start of the current tick */
  lbmc_view view;                  /* the read-only view of st (src/core/tally.h) */
  lbmc_init_kind init;
  lbmc_occ_mf_point mf; /* the mean-field point (init meanfield) */
  int64_t *counts;      /* scratch for rounding: the mean-field levels */
} lbmc_occ;

/* ---- Applicability ---- */

/* 1 if pool j's speed list is linear (or constant, the plain server). */
static int lbmc_occ_linear(const lbmc_model *m, int j)
{
  for (int k = 1; k < m->nrates[j]; k++)
    if (fabs(m->rates[j][k] - (k + 1) * m->rates[j][0]) > LBMC_OCC_LINEAR_TOL * m->rates[j][k])
      return 0;
  return 1;
}

int lbmc_occ_applies_form(const lbmc_model *m, char *why, size_t len)
{
  if (m->policy->occupancy) return 1;
  snprintf(why, len, "%s %s", m->policy_text,
           m->policy->needs_workload ? "reads workloads" : "has no occupancy form");
  return 0;
}

int lbmc_occ_applies_size(const lbmc_model *m, char *why, size_t len)
{
  const lbmc_occupancy_ops *ops = m->policy->occupancy;
  if (m->n > LBMC_MAX_N) {
    snprintf(why, len, "n = %lld exceeds the occupancy engine's limit %lld", (long long)m->n,
             LBMC_MAX_N);
    return 0;
  }
  return ops->applies ? ops->applies(m, why, len) : 1;
}

static int lbmc_occ_applies(const lbmc_model *m, char *why, size_t len)
{
  if (!lbmc_occ_applies_form(m, why, len)) return 0;
  for (int j = 0; j < m->J; j++) {
    if (!lbmc_service_is_exponential(&m->service[j])) {
      snprintf(why, len, "general service (pool %d: %s)", j + 1, m->service[j].text);
      return 0;
    }
    if (!lbmc_occ_linear(m, j)) {
      snprintf(why, len,
               "pool %d's speed list is not linear (mu_k = k mu_1): a customer's service "
               "would depend on later arrivals",
               j + 1);
      return 0;
    }
  }
  return lbmc_occ_applies_size(m, why, len);
}

/* ---- Workspace ---- */

int lbmc_occ_grow(lbmc_occ_state *st, uint32_t j, uint32_t t)
{
  lbmc_occ_pool *p = &st->pool[j];
  uint64_t cap = 2 * (uint64_t)p->cap;
  int64_t *G;
  if (cap < 2 * (uint64_t)t + 2) cap = 2 * (uint64_t)t + 2;
  G = cap <= UINT32_MAX ? realloc(p->G, sizeof *G * cap) : NULL;
  if (!G) {
    lbmc_tally_out_of_memory(&st->tally);
    return -1;
  }
  memset(G + p->cap, 0, sizeof *G * (cap - p->cap));
  p->G = G;
  p->cap = (uint32_t)cap;
  return 0;
}

void lbmc_occ_state_free(lbmc_occ_state *st)
{
  if (st->ops && st->ops->destroy) st->ops->destroy(&st->pw);
  for (uint32_t j = 0; j < st->J; j++) {
    free(st->pool[j].G);
    st->pool[j].G = NULL;
  }
  lbmc_tally_free(&st->tally);
}

static void lbmc_occ_destroy(void **ws)
{
  lbmc_occ *o = ws ? *ws : NULL;
  if (!o) return;
  lbmc_occ_state_free(&o->st);
  free(o->counts);
  lbmc_occ_meanfield_free(&o->mf);
  free(o);
  *ws = NULL;
}

/* The view's functions: ws is the state (lbmc_occ_view_init). */
static int64_t lbmc_occ_tail(const void *ws, int j, uint32_t k)
{
  const lbmc_occ_pool *p = &((const lbmc_occ_state *)ws)->pool[j];
  return k < p->cap ? p->G[k] : 0;
}

static uint64_t lbmc_occ_customers(const void *ws, int j)
{
  return (uint64_t)((const lbmc_occ_state *)ws)->pool[j].Q;
}

static double lbmc_occ_state_time(const void *ws) { return ((const lbmc_occ_state *)ws)->t; }

void lbmc_occ_view_init(lbmc_view *v, const lbmc_occ_state *st)
{
  v->ws = st;
  v->J = (int)st->J;
  v->K = (int)st->K;
  v->N = st->m->N;
  v->tail = lbmc_occ_tail;
  v->customers = lbmc_occ_customers;
  v->workload = NULL;
  v->time = lbmc_occ_state_time;
}

static double lbmc_occ_time(const void *ws) { return ((const lbmc_occ *)ws)->st.t; }

static void lbmc_occ_init_pool(lbmc_occ_pool *p, const lbmc_model *m, int j, uint32_t K)
{
  p->N = m->N[j];
  p->B = m->buffer[j] == LBMC_BUFFER_INF ? UINT32_MAX : (uint32_t)m->buffer[j];
  p->L = (uint32_t)m->nrates[j];
  p->mu1 = m->rates[j][0];
  p->w_slot = 1.0 / p->mu1;
  p->w_wait = 1.0 / (p->L * p->mu1);
  p->cap = p->B != UINT32_MAX ? 2 * p->B + 2 : LBMC_OCC_CAP0;
  if (p->cap < K + 2) p->cap = K + 2;
  p->G = calloc(p->cap, sizeof *p->G);
}

lbmc_err lbmc_occ_state_init(lbmc_occ_state *st, const lbmc_model *m, int K, uint64_t max_customers)
{
  lbmc_err err = LBMC_SUCCESS;
  st->m = m;
  st->J = (uint32_t)m->J;
  st->K = (uint32_t)K;
  st->R = (uint32_t)m->routers;
  st->n = m->n;
  st->pair_N = st->pair_thr = 0; /* two numbers per pair (lbmc_occ_pair1) */
  lbmc_zig_exp_init(&st->zig);
  for (uint32_t j = 0; j <= st->J; j++) st->off[j] = j < st->J ? m->offset[j] : m->n;
  for (uint32_t j = 0; j < st->J; j++) {
    lbmc_occ_init_pool(&st->pool[j], m, (int)j, st->K);
    if (!st->pool[j].G) err = LBMC_ERR_MEMORY;
  }
  if (!err)
    err = lbmc_tally_create(&st->tally, (int)st->J, K, max_customers, LBMC_TERMS_AT_ADMISSION);
  st->tally.has_work = 1;
  st->ops = m->policy->occupancy;
  if (!err && st->ops->create) err = st->ops->create(st, &st->pw);
  return err;
}

static lbmc_err lbmc_occ_create(const lbmc_model *m, int K, uint64_t max_customers, void **ws)
{
  lbmc_occ *o;
  char why[256];
  lbmc_err err;
  if (!m->is_setup) return LBMC_ERROR(LBMC_ERR_INTERNAL, "occupancy engine: model not set up");
  if (!lbmc_occ_applies(m, why, sizeof why))
    return LBMC_ERROR(LBMC_ERR_ARG, "the occupancy engine does not apply: %s", why);
  o = calloc(1, sizeof *o);
  if (!o) return LBMC_ERROR(LBMC_ERR_MEMORY, "occupancy engine: out of memory");
  o->inv_lambda_total = 1.0 / (m->lambda * (double)m->n);
  err = lbmc_occ_state_init(&o->st, m, K, max_customers);
  lbmc_occ_view_init(&o->view, &o->st);
  if (err) {
    lbmc_occ_destroy((void **)&o);
    return err == LBMC_ERR_MEMORY ? LBMC_ERROR(err, "occupancy engine: out of memory") : err;
  }
  *ws = o;
  return LBMC_SUCCESS;
}

/* The tail start (--init tail:...): the levels' fractions s_j(k) = F_k - F_{k+1} (F_0 = 1)
 * of every pool in o->mf, as if it were the mean-field point, so that the same
 * randomised rounding gives the counts: each count is the floor or ceiling of N_j s_j(k)
 * with that mean, and exactly N_j s_j(k) when the N_j F_k are integers. */
static lbmc_err lbmc_occ_set_tail(lbmc_occ *o, const lbmc_run_options *ro)
{
  const uint32_t J = o->st.J, levels = (uint32_t)ro->init_levels + 1;
  if (ro->init_pools != 1 && ro->init_pools != (int)J)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--init tail:...: %d lists of fractions for %u pools (give one list, "
                      "for every pool, or one per pool separated by ';')",
                      ro->init_pools, J);
  lbmc_occ_meanfield_free(&o->mf);
  free(o->counts);
  o->mf.s = calloc((size_t)J * levels, sizeof *o->mf.s);
  o->counts = malloc(sizeof *o->counts * levels);
  if (!o->mf.s || !o->counts) return LBMC_ERROR(LBMC_ERR_MEMORY, "occupancy engine: out of memory");
  o->mf.J = J;
  o->mf.levels = levels;
  o->mf.settled = 1;
  for (uint32_t j = 0; j < J; j++) {
    const double *F = ro->init_tail[ro->init_pools == 1 ? 0 : j];
    const uint32_t B = o->st.pool[j].B;
    for (uint32_t k = 0; k < levels; k++) {
      const double hi = k == 0 ? 1 : F[k - 1], lo = k + 1 < levels ? F[k] : 0;
      o->mf.s[j * levels + k] = hi - lo;
      if (B != UINT32_MAX && k > B && hi > 0)
        return LBMC_ERROR(LBMC_ERR_ARG,
                          "--init tail:...: F_%u = %g > 0 but pool %u holds at most %u "
                          "customers per server",
                          k, hi, j + 1, B);
    }
  }
  return LBMC_SUCCESS;
}

/* The mean-field fixed point, computed once per workspace; note[len] (may be NULL) "" when
 * the replicas can start from it, else why not. */
static lbmc_err lbmc_occ_meanfield(lbmc_occ *o, char *note, size_t len)
{
  if (note && len) note[0] = '\0';
  if (!o->mf.s) {
    LBMC_CALL(lbmc_occ_meanfield_solve(o->st.m, o->st.ops, &o->mf));
    free(o->counts);
    o->counts = malloc(sizeof *o->counts * (o->mf.levels ? o->mf.levels : 1));
    if (!o->counts) return LBMC_ERROR(LBMC_ERR_MEMORY, "occupancy engine: out of memory");
  }
  if (note && !o->mf.settled) snprintf(note, len, "%s", o->mf.note); /* started empty */
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_occ_set_init(void *ws, const lbmc_run_options *ro, char *note, size_t len)
{
  lbmc_occ *o = ws;
  o->init = (lbmc_init_kind)ro->init;
  if (note && len) note[0] = '\0';
  if (o->init == LBMC_INIT_TAIL) return lbmc_occ_set_tail(o, ro);
  if (o->init != LBMC_INIT_MEANFIELD) return LBMC_SUCCESS;
  return lbmc_occ_meanfield(o, note, len);
}

static int lbmc_occ_meanfield_start(void *ws)
{
  lbmc_occ *o = ws;
  return lbmc_occ_meanfield(o, NULL, 0) == LBMC_SUCCESS && o->mf.settled;
}

/* ---- Reset ---- */

int lbmc_occ_set_counts(lbmc_occ_state *st, uint32_t j, const int64_t *x, uint32_t levels)
{
  lbmc_occ_pool *p = &st->pool[j];
  uint32_t top = levels - 1;
  int64_t g = 0;
  while (top > 0 && x[top] == 0) top--;
  if (lbmc_occ_room(st, j, top) != 0) return -1;
  memset(p->G, 0, sizeof *p->G * p->cap);
  p->top = top;
  p->low = 0;
  p->Q = p->S = 0;
  for (uint32_t k = top + 1; k-- > 0;) {
    g += x[k];
    p->G[k] = g;
  }
  while (p->low < p->top && x[p->low] == 0) p->low++;
  for (uint32_t k = 1; k <= p->top; k++) {
    p->Q += p->G[k];
    if (k <= p->L) p->S += p->G[k];
  }
  return 0;
}

/* Initial counts: empty, or rounded from the mean-field point (routing stream). */
static int lbmc_occ_initial(lbmc_occ *o)
{
  lbmc_occ_state *st = &o->st;
  uint64_t in_system = 0;
  for (uint32_t j = 0; j < st->J; j++) {
    int64_t empty = st->pool[j].N;
    if (o->init != LBMC_INIT_EMPTY && o->mf.settled) {
      lbmc_occ_round(o->mf.s + j * o->mf.levels, o->mf.levels, st->pool[j].N, lbmc_u01(st->s_route),
                     o->counts);
      if (lbmc_occ_set_counts(st, j, o->counts, o->mf.levels) != 0) return -1;
    } else if (lbmc_occ_set_counts(st, j, &empty, 1) != 0) {
      return -1;
    }
    in_system += (uint64_t)st->pool[j].Q;
    lbmc_tally_work(&st->tally, 0, j, (double)st->pool[j].Q);
  }
  st->tally.in_system = in_system;
  return 0;
}

/* Total completion rate D = sum_j mu_j(1) S_j. */
static double lbmc_occ_rate(const lbmc_occ_state *st)
{
  double D = 0;
  if (st->J == 1) return st->pool[0].mu1 * (double)st->pool[0].S;
  for (uint32_t j = 0; j < st->J; j++) D += st->pool[j].mu1 * (double)st->pool[j].S;
  return D;
}

static lbmc_err lbmc_occ_reset(void *ws, lbmc_stream *streams)
{
  lbmc_occ *o = ws;
  lbmc_occ_state *st = &o->st;
  double D;
  st->s_arr = &streams[LBMC_PURPOSE_ARRIVALS];
  st->s_svc = &streams[LBMC_PURPOSE_SERVICE];
  st->s_route = &streams[LBMC_PURPOSE_ROUTING];
  lbmc_tally_reset(&st->tally, 0);
  memset(st->phases, 0, sizeof st->phases);
  memset(o->phases0, 0, sizeof o->phases0);
  st->t = 0;
  if (lbmc_occ_initial(o) != 0)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "occupancy engine: out of memory");
  if (st->ops->reset) LBMC_CALL(st->ops->reset(st, st->pw));
  o->next_arr = lbmc_exp_zig(st->s_arr, &st->zig) * o->inv_lambda_total;
  D = lbmc_occ_rate(st);
  o->next_dep = D > 0 ? lbmc_exp_zig(st->s_svc, &st->zig) / D : INFINITY;
  return LBMC_SUCCESS;
}

/* ---- Events ---- */

static void lbmc_occ_arrival(lbmc_occ *o)
{
  lbmc_occ_state *st = &o->st;
  const uint32_t r = st->R > 1 ? (uint32_t)lbmc_occ_uint(st->s_route, st->R) : 0;
  const lbmc_occ_class c = st->ops->route(st, st->pw, r);
  lbmc_occ_pool *p = &st->pool[c.j];
  lbmc_tally_arrival(&st->tally);
  if (c.k >= p->B) {
    st->tally.c.blocked++;
    return;
  }
  if (lbmc_occ_room(st, c.j, c.k + 1) != 0 ||
      (st->mix && lbmc_mixture_record(st->mix, c.j, c.k) != 0)) {
    lbmc_tally_out_of_memory(&st->tally);
    return;
  }
  st->tally.c.admitted[c.j]++;
  lbmc_tally_work(&st->tally, st->t, c.j, 1.0); /* E[work | state]: one mean requirement each */
  lbmc_occ_up(st, c.j, c.k);
  if (c.k < p->L) { /* a slot becomes busy: race its completion against the others' */
    double t_new = st->t + lbmc_exp_zig(st->s_svc, &st->zig) * p->w_slot;
    st->tally.c.starts++;
    if (t_new < o->next_dep) o->next_dep = t_new;
  } else {
    st->tally.c.waited++;
    st->phases[c.j] += c.k + 1 - p->L;
  }
}

/* The pool of the completing slot: probability mu_j(1) S_j / D. */
static uint32_t lbmc_occ_dep_pool(lbmc_occ_state *st, double D)
{
  double x;
  uint32_t j = 0;
  if (st->J == 1) return 0;
  x = lbmc_u01(st->s_svc) * D;
  for (; j + 1 < st->J; j++) {
    double w = st->pool[j].mu1 * (double)st->pool[j].S;
    if (x < w) break;
    x -= w;
  }
  while (st->pool[j].S == 0) j--; /* x landed past the last busy pool by rounding */
  return j;
}

static void lbmc_occ_departure(lbmc_occ *o)
{
  lbmc_occ_state *st = &o->st;
  const uint32_t j = lbmc_occ_dep_pool(st, lbmc_occ_rate(st));
  const lbmc_occ_pool *p = &st->pool[j];
  uint32_t k;
  double D;
  if (p->L == 1) { /* a uniform busy server: positions [0, G[1]) */
    k = lbmc_occ_level(p, (int64_t)lbmc_occ_uint(st->s_svc, (uint64_t)p->G[1]));
  } else { /* a uniform busy slot: layer i (servers at level >= i) with weight G[i] */
    int64_t U = (int64_t)lbmc_occ_uint(st->s_svc, (uint64_t)p->S);
    uint32_t i = 1;
    while (U >= p->G[i]) U -= p->G[i++];
    k = lbmc_occ_level(p, U);
  }
  lbmc_occ_down(st, j, k);
  lbmc_tally_work(&st->tally, st->t, j, -1.0);
  st->tally.c.departures++;
  st->tally.c.starts += k > p->L;                                     /* a waiting one starts */
  if (st->ops->on_idle && k <= p->L) st->ops->on_idle(st, st->pw, j); /* idleness grew */
  D = lbmc_occ_rate(st);
  o->next_dep = D > 0 ? st->t + lbmc_exp_zig(st->s_svc, &st->zig) / D : INFINITY;
}

static void lbmc_occ_run(lbmc_occ *o, double t_end)
{
  lbmc_occ_state *st = &o->st;
  while (!st->tally.halt) {
    if (o->next_arr <= o->next_dep) {
      if (o->next_arr > t_end) break;
      st->t = o->next_arr;
      lbmc_occ_arrival(o);
      o->next_arr = st->t + lbmc_exp_zig(st->s_arr, &st->zig) * o->inv_lambda_total;
    } else {
      if (o->next_dep > t_end) break;
      st->t = o->next_dep;
      lbmc_occ_departure(o);
    }
  }
}

/* ---- Ticks ---- */

/* Per-customer sums of the tick into the tally: the expected waits and sojourns of the
 * customers admitted in it (terms at admission). */
static void lbmc_occ_customer_sums(lbmc_occ *o)
{
  lbmc_occ_state *st = &o->st;
  lbmc_tally *t = &st->tally;
  double wait = 0, sojourn = 0;
  for (uint32_t j = 0; j < st->J; j++) {
    double a = (double)(t->c.admitted[j] - t->c0.admitted[j]);
    double w = (double)(st->phases[j] - o->phases0[j]) * st->pool[j].w_wait;
    wait += w;
    sojourn += w + a * st->pool[j].w_slot;
  }
  t->sum_wait = wait;
  t->sum_sojourn = sojourn;
}

static lbmc_err lbmc_occ_advance(void *ws, double t_end, double *rec)
{
  lbmc_occ *o = ws;
  lbmc_occ_state *st = &o->st;
  lbmc_occ_run(o, t_end);
  lbmc_occ_customer_sums(o);
  LBMC_CALL(lbmc_tally_finish(&st->tally, &o->view, t_end, rec, "occupancy"));
  memcpy(o->phases0, st->phases, sizeof o->phases0);
  st->t = st->tally.t0;
  return LBMC_SUCCESS;
}

/* ---- The rest of the table ---- */

static void lbmc_occ_set_histograms(void *ws, lbmc_dhist *sojourn, lbmc_dhist *wait)
{
  (void)ws; /* per-customer quantiles come from the mixture (set_mixture) */
  (void)sojourn;
  (void)wait;
}

static lbmc_err lbmc_occ_mixture_create(const void *ws, lbmc_mixture **mx)
{
  const lbmc_occ_state *st = &((const lbmc_occ *)ws)->st;
  double mu1[LBMC_MAX_POOLS];
  int L[LBMC_MAX_POOLS];
  for (uint32_t j = 0; j < st->J; j++) {
    mu1[j] = st->pool[j].mu1;
    L[j] = (int)st->pool[j].L;
  }
  return lbmc_mixture_create((int)st->J, mu1, L, mx);
}

static void lbmc_occ_set_mixture(void *ws, lbmc_mixture *mix) { ((lbmc_occ *)ws)->st.mix = mix; }
static lbmc_tally *lbmc_occ_tally(void *ws) { return &((lbmc_occ *)ws)->st.tally; }
static const lbmc_view *lbmc_occ_view(const void *ws) { return &((const lbmc_occ *)ws)->view; }
const lbmc_occ_state *lbmc_occ_state_of(const void *ws) { return &((const lbmc_occ *)ws)->st; }

const lbmc_engine_type lbmc_engine_occupancy = {
    .name = "occupancy",
    .summary = "counts of servers per pool and level (exponential service, policies that treat "
               "a pool's servers alike): event cost and memory independent of n, n <= 10^12",
    .speed = 2e7,
    .mixtures = 1,
    .cap_max = LBMC_MAX_CUSTOMERS,
    .cap_default_max = LBMC_MAX_CUSTOMERS, /* counts: memory does not grow with customers */
    .applies = lbmc_occ_applies,
    .create = lbmc_occ_create,
    .destroy = lbmc_occ_destroy,
    .reset = lbmc_occ_reset,
    .advance = lbmc_occ_advance,
    .set_histograms = lbmc_occ_set_histograms,
    .time = lbmc_occ_time,
    .tally = lbmc_occ_tally,
    .view = lbmc_occ_view,
    .set_init = lbmc_occ_set_init,
    .tail_start = 1,
    .meanfield_start = lbmc_occ_meanfield_start,
    .mixture_create = lbmc_occ_mixture_create,
    .set_mixture = lbmc_occ_set_mixture,
};
