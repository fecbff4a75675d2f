/* The phase-type occupancy engine (occ_ph.h, docs/occupancy.md "Phase-type service"):
 * the counts x_j(k, p) of servers per pool, level and phase of the customer in service as
 * a continuous-time Markov chain, simulated exactly.
 *
 * The policies see levels only: the engine keeps pool j's tail counts G_j[k] exactly as
 * the exponential occupancy engine (occ_state.h, occupancy.h), so every occupancy form
 * routes unchanged; the phases are the engine's own, per pool a table x[k][p] and per
 * phase a Fenwick tree over the levels.
 *
 * Arrivals come from the arrival stream exactly as in the other engines (ziggurat
 * Exp(1) / (lambda n), first draw at reset). The occupancy form sends one to a class
 * (j, k). At an idle server (k = 0) the service starts in a phase drawn from alpha
 * (service stream); at a busy one the server joined is uniform within its level, so its
 * phase is p with probability x_j(k, p) / count(j, k) (an exact integer draw, routing
 * stream) and keeps it.
 *
 * Service events. The busy servers of pool j in phase p leave p at total rate
 * mu_j (-T_pp) y_j(p) (y_j(p) = servers in phase p). The next service event is one
 * Exp(D) time, D the sum of those rates, drawn from the service stream after each
 * service event; a service started by an arrival races its own Exp(mu_j (-T_pp)) clock
 * against it (D only grows between service events: arrivals at busy servers change no
 * phase). At the event the pair (j, p) is chosen in proportion to the rates then, the
 * level k in proportion to x_j(k, p) (an exact integer draw below y_j(p) and a descent
 * of phase p's Fenwick tree), and the outcome from row p of T: a phase change to p'
 * with probability T[p][p'] / (-T_pp), a completion with exit_p / (-T_pp). A
 * completion at level k >= 2 starts the next customer in a phase drawn from alpha.
 *
 * Per-customer metrics by conditional expectation (terms at admission): a customer
 * joining class (j, k, p), k >= 1, waits the residual requirement from phase p and k - 1
 * fresh ones, E[W] = (r_p + k - 1) / mu_j with r = (-T)^-1 1, and stays E[W] + 1 / mu_j;
 * at an idle server it waits nothing. The sums are kept as integers (sum of k - 1, and
 * the admissions per phase found) and turned into times at the tick's end. Quantiles
 * from the mixture of the class laws (mixture.h, phase-type pools): entry k m_j + p.
 */
#include "occ_ph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../system/occ_policy.h"
#include "../system/policy.h"
#include "lbmc/rng.h"
#include "occupancy.h"

/* Levels addressable in a pool's phase arrays at the start (a power of two; doubled as
 * the queues grow). */
#define LBMC_PHOCC_SIZE0 16

/* ---- Applicability ---- */

static int lbmc_phocc_applies(const lbmc_model *m, char *why, size_t len)
{
  if (!lbmc_occ_applies_form(m, why, len)) return 0;
  for (int j = 0; j < m->J; j++) {
    if (!lbmc_service_ph(&m->service[j], NULL, NULL)) {
      snprintf(why, len,
               "service not of phase type (pool %d: %s; phase type: exponential, erlang with k "
               "<= %d, hyperexponential, coxian, ph)",
               j + 1, m->service[j].text, LBMC_PH_MAX_PHASES);
      return 0;
    }
    if (m->nrates[j] > 1) {
      snprintf(why, len, "pool %d has a speed list (the phase-type engine takes plain servers)",
               j + 1);
      return 0;
    }
  }
  return lbmc_occ_applies_size(m, why, len);
}

/* ---- The phase arrays ---- */

/* Add d to x_j(k, p) in phase p's Fenwick tree. */
static inline void lbmc_phocc_fen_add(lbmc_phocc_pool *h, uint32_t k, uint32_t p, int64_t d)
{
  for (uint32_t i = k; i < h->size; i += i & -i) h->f[(size_t)i * h->m + p] += d;
}

/* Move one server at level k from phase p to q (both trees share the path). */
static inline void lbmc_phocc_fen_move(lbmc_phocc_pool *h, uint32_t k, uint32_t p, uint32_t q)
{
  for (uint32_t i = k; i < h->size; i += i & -i) {
    h->f[(size_t)i * h->m + p]--;
    h->f[(size_t)i * h->m + q]++;
  }
}

/* The level of the server of rank U (0 <= U < y(p)) among phase p's, ranked by level:
 * the smallest k with x(1, p) + .. + x(k, p) > U. The descent starts at the highest
 * power of two <= top (every x beyond top is 0). */
static inline uint32_t lbmc_phocc_fen_find(const lbmc_phocc_pool *h, uint32_t top, uint32_t p,
                                           int64_t U)
{
  const int64_t *f = h->f;
  const uint32_t m = h->m;
  uint32_t pos = 0;
  for (uint32_t step = 1u << (31 - __builtin_clz(top)); step; step >>= 1) {
    const int64_t v = f[(size_t)(pos + step) * m + p];
    if (v <= U) {
      U -= v;
      pos += step;
    }
  }
  return pos + 1;
}

/* Rebuild the Fenwick trees from x (O(size m)). */
static void lbmc_phocc_fen_build(lbmc_phocc_pool *h)
{
  memcpy(h->f, h->x, sizeof *h->f * h->size * h->m);
  for (uint32_t i = 1; i < h->size; i++) {
    uint32_t up = i + (i & -i);
    if (up < h->size)
      for (uint32_t p = 0; p < h->m; p++) h->f[(size_t)up * h->m + p] += h->f[(size_t)i * h->m + p];
  }
}

/* Make level k addressable in pool h (size > k), doubling; -1 when out of memory. */
static int lbmc_phocc_grow(lbmc_phocc_pool *h, uint32_t k)
{
  uint64_t size = h->size ? h->size : LBMC_PHOCC_SIZE0;
  int64_t *x, *f;
  while (size <= k) size *= 2;
  if (size > UINT32_MAX / LBMC_PHOCC_M) return -1;
  x = realloc(h->x, sizeof *x * size * h->m);
  if (!x) return -1;
  h->x = x;
  f = realloc(h->f, sizeof *f * size * h->m);
  if (!f) return -1;
  h->f = f;
  memset(h->x + (size_t)h->size * h->m, 0, sizeof *x * (size - h->size) * h->m);
  h->size = (uint32_t)size;
  lbmc_phocc_fen_build(h);
  return 0;
}

/* Room for level k in pool j's G array and phase arrays: 0, or -1 (tally halted). */
static inline int lbmc_phocc_room(lbmc_phocc *o, uint32_t j, uint32_t k)
{
  if (lbmc_occ_room(&o->st, j, k) != 0) return -1;
  if (k < o->ph[j].size) return 0;
  if (lbmc_phocc_grow(&o->ph[j], k) == 0) return 0;
  lbmc_tally_out_of_memory(&o->st.tally);
  return -1;
}

/* The law's constants of pool j. */
static void lbmc_phocc_init_law(lbmc_phocc_pool *h, const lbmc_model *m, int j)
{
  const lbmc_service *s = &m->service[j];
  const double *alpha, *T, *exit = lbmc_service_ph_exit(s), *res = lbmc_service_ph_residual(s);
  const int ph = lbmc_service_ph(s, &alpha, &T);
  const double mu = m->rates[j][0];
  double a = 0;
  int starts = 0;
  h->m = (uint32_t)ph;
  h->inv_mu = 1.0 / mu;
  for (int p = 0; p < ph; p++) {
    const double q = -T[p * ph + p];
    double c = 0;
    int n = 0;
    h->rate[p] = mu * q;
    h->res[p] = res[p];
    for (int d = 0; d <= ph; d++) {
      double r = d == ph ? exit[p] : (d == p ? 0.0 : T[p * ph + d]);
      if (!(r > 0)) continue;
      c += r / q;
      h->dest[p][n] = (uint8_t)d;
      h->cum[p][n++] = c;
    }
    h->cum[p][n - 1] = 1.0; /* rounding: the last destination closes the row */
    h->ndest[p] = (uint8_t)n;
    h->next[p] = n == 1 ? h->dest[p][0] : -1;
    a += alpha[p];
    h->acum[p] = a;
    starts += alpha[p] > 0;
  }
  h->acum[ph - 1] = 1.0;
  h->start = -1;
  for (int p = 0; starts == 1 && p < ph; p++)
    if (alpha[p] > 0) h->start = p;
}

/* A phase drawn from alpha (service stream). */
static inline uint32_t lbmc_phocc_alpha(lbmc_phocc *o, const lbmc_phocc_pool *h)
{
  double u;
  uint32_t p = 0;
  if (h->start >= 0) return (uint32_t)h->start;
  u = lbmc_u01(o->st.s_svc);
  while (p + 1 < h->m && u >= h->acum[p]) p++;
  return p;
}

/* ---- Workspace ---- */

static void lbmc_phocc_destroy(void **ws)
{
  lbmc_phocc *o = ws ? *ws : NULL;
  if (!o) return;
  lbmc_occ_state_free(&o->st);
  for (uint32_t j = 0; j < LBMC_MAX_POOLS; j++) {
    free(o->ph[j].x);
    free(o->ph[j].f);
  }
  free(o->counts);
  lbmc_occ_meanfield_free(&o->mf);
  free(o);
  *ws = NULL;
}

static double lbmc_phocc_time(const void *ws) { return ((const lbmc_phocc *)ws)->st.t; }

static lbmc_err lbmc_phocc_create(const lbmc_model *m, int K, uint64_t max_customers, void **ws)
{
  lbmc_phocc *o;
  char why[256];
  lbmc_err err;
  if (!m->is_setup) return LBMC_ERROR(LBMC_ERR_INTERNAL, "occupancy-ph engine: model not set up");
  if (!lbmc_phocc_applies(m, why, sizeof why))
    return LBMC_ERROR(LBMC_ERR_ARG, "the occupancy-ph engine does not apply: %s", why);
  o = calloc(1, sizeof *o);
  if (!o) return LBMC_ERROR(LBMC_ERR_MEMORY, "occupancy-ph engine: out of memory");
  o->inv_lambda_total = 1.0 / (m->lambda * (double)m->n);
  err = lbmc_occ_state_init(&o->st, m, K, max_customers);
  for (int j = 0; j < m->J && !err; j++) {
    lbmc_phocc_init_law(&o->ph[j], m, j);
    if (lbmc_phocc_grow(&o->ph[j], 1) != 0) err = LBMC_ERR_MEMORY;
  }
  lbmc_occ_view_init(&o->view, &o->st);
  if (err) {
    lbmc_phocc_destroy((void **)&o);
    return err == LBMC_ERR_MEMORY ? LBMC_ERROR(err, "occupancy-ph engine: out of memory") : err;
  }
  *ws = o;
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_phocc_set_init(void *ws, lbmc_init_kind init, char *note, size_t len)
{
  lbmc_phocc *o = ws;
  o->init = init;
  if (note && len) note[0] = '\0';
  if (init != LBMC_INIT_MEANFIELD) return LBMC_SUCCESS;
  if (!o->mf.s) {
    LBMC_CALL(lbmc_occ_meanfield_solve(o->st.m, o->st.ops, &o->mf));
    free(o->counts);
    o->counts = malloc(sizeof *o->counts * ((size_t)o->mf.levels * (o->mf.ph + 1) + 1));
    if (!o->counts) return LBMC_ERROR(LBMC_ERR_MEMORY, "occupancy-ph engine: out of memory");
  }
  if (note && !o->mf.settled) snprintf(note, len, "%s", o->mf.note); /* started empty */
  return LBMC_SUCCESS;
}

/* ---- Reset ---- */

/* Pool j's phase arrays from cell counts c[(k M + p)], k < levels, p < M (M >= the pool's
 * phases; level 0 ignored), or empty (c NULL); then y and the trees. -1 when out of
 * memory. */
static int lbmc_phocc_set_phases(lbmc_phocc *o, uint32_t j, const int64_t *c, uint32_t levels,
                                 uint32_t M)
{
  lbmc_phocc_pool *h = &o->ph[j];
  const uint32_t top = o->st.pool[j].top;
  if (top >= h->size && lbmc_phocc_grow(h, top) != 0) return -1;
  memset(h->x, 0, sizeof *h->x * h->size * h->m);
  memset(h->y, 0, sizeof h->y);
  for (uint32_t k = 1; c && k < levels && k <= top; k++)
    for (uint32_t p = 0; p < h->m; p++) {
      h->x[(size_t)k * h->m + p] = c[(size_t)k * M + p];
      h->y[p] += c[(size_t)k * M + p];
    }
  lbmc_phocc_fen_build(h);
  h->waits = h->wait_levels = h->phase_changes = 0;
  memset(h->wait_phase, 0, sizeof h->wait_phase);
  return 0;
}

/* Initial counts: empty, or rounded from the mean-field point (routing stream): the
 * cells (level, phase) of each pool by lbmc_occ_round, then their level sums. */
static int lbmc_phocc_initial(lbmc_phocc *o)
{
  lbmc_occ_state *st = &o->st;
  uint64_t in_system = 0;
  for (uint32_t j = 0; j < st->J; j++) {
    int64_t empty = st->pool[j].N;
    if (o->init == LBMC_INIT_MEANFIELD && o->mf.settled) {
      const uint32_t Lv = o->mf.levels, M = o->mf.ph;
      const double *x = o->mf.x ? o->mf.x : o->mf.s;
      int64_t *cells = o->counts, *lev = o->counts + (size_t)Lv * M;
      lbmc_occ_round(x + (size_t)j * Lv * M, Lv * M, st->pool[j].N, lbmc_u01(st->s_route), cells);
      for (uint32_t k = 0; k < Lv; k++) {
        lev[k] = 0;
        for (uint32_t p = 0; p < M; p++) lev[k] += cells[(size_t)k * M + p];
      }
      if (lbmc_occ_set_counts(st, j, lev, Lv) != 0 ||
          lbmc_phocc_set_phases(o, j, cells, Lv, M) != 0)
        return -1;
    } else if (lbmc_occ_set_counts(st, j, &empty, 1) != 0 ||
               lbmc_phocc_set_phases(o, j, NULL, 0, 1) != 0) {
      return -1;
    }
    in_system += (uint64_t)st->pool[j].Q;
  }
  st->tally.in_system = in_system;
  return 0;
}

/* Total rate of service events D = sum_j sum_p mu_j (-T_pp) y_j(p). */
static double lbmc_phocc_rate(const lbmc_phocc *o)
{
  double D = 0;
  for (uint32_t j = 0; j < o->st.J; j++) {
    const lbmc_phocc_pool *h = &o->ph[j];
    for (uint32_t p = 0; p < h->m; p++) D += h->rate[p] * (double)h->y[p];
  }
  return D;
}

static lbmc_err lbmc_phocc_reset(void *ws, lbmc_stream *streams)
{
  lbmc_phocc *o = ws;
  lbmc_occ_state *st = &o->st;
  double D;
  st->s_arr = &streams[LBMC_PURPOSE_ARRIVALS];
  st->s_svc = &streams[LBMC_PURPOSE_SERVICE];
  st->s_route = &streams[LBMC_PURPOSE_ROUTING];
  lbmc_tally_reset(&st->tally, 0);
  memset(o->wait_levels0, 0, sizeof o->wait_levels0);
  memset(o->wait_phase0, 0, sizeof o->wait_phase0);
  st->t = 0;
  if (lbmc_phocc_initial(o) != 0)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "occupancy-ph engine: out of memory");
  if (st->ops->reset) LBMC_CALL(st->ops->reset(st, st->pw));
  o->next_arr = lbmc_exp_zig(st->s_arr, &st->zig) * o->inv_lambda_total;
  D = lbmc_phocc_rate(o);
  o->next_dep = D > 0 ? lbmc_exp_zig(st->s_svc, &st->zig) / D : INFINITY;
  return LBMC_SUCCESS;
}

/* ---- Events ---- */

static void lbmc_phocc_arrival(lbmc_phocc *o)
{
  lbmc_occ_state *st = &o->st;
  const uint32_t r = st->R > 1 ? (uint32_t)lbmc_occ_uint(st->s_route, st->R) : 0;
  const lbmc_occ_class c = st->ops->route(st, st->pw, r);
  lbmc_phocc_pool *h = &o->ph[c.j];
  uint32_t p = 0;
  lbmc_tally_arrival(&st->tally);
  if (c.k >= st->pool[c.j].B) {
    st->tally.c.blocked++;
    return;
  }
  if (lbmc_phocc_room(o, c.j, c.k + 1) != 0) return;
  if (c.k == 0) { /* a service starts: its phase from alpha; it races the pending event */
    double t_new;
    p = lbmc_phocc_alpha(o, h);
    h->x[h->m + p]++;
    h->y[p]++;
    lbmc_phocc_fen_add(h, 1, p, 1);
    st->tally.c.starts++;
    t_new = st->t + lbmc_exp_zig(st->s_svc, &st->zig) / h->rate[p];
    if (t_new < o->next_dep) o->next_dep = t_new;
  } else { /* a uniform server of the level: phase p w.p. x(k, p) / count(k) */
    int64_t *xk = h->x + (size_t)c.k * h->m;
    if (h->m > 1) {
      int64_t U =
          (int64_t)lbmc_occ_uint(st->s_route, (uint64_t)lbmc_occ_count(&st->pool[c.j], c.k));
      while (U >= xk[p]) U -= xk[p++];
    }
    xk[p]--;
    xk[h->m + p]++;
    lbmc_phocc_fen_add(h, c.k, p, -1);
    lbmc_phocc_fen_add(h, c.k + 1, p, 1);
    st->tally.c.waited++;
    h->waits++;
    h->wait_levels += c.k - 1;
    h->wait_phase[p]++;
  }
  if (st->mix && lbmc_mixture_record(st->mix, c.j, c.k * h->m + p) != 0) {
    lbmc_tally_out_of_memory(&st->tally);
    return;
  }
  st->tally.c.admitted[c.j]++;
  lbmc_occ_up(st, c.j, c.k);
}

/* The (pool, phase) of the next service event, in proportion to mu_j (-T_pp) y_j(p). */
static void lbmc_phocc_pick(lbmc_phocc *o, uint32_t *jj, uint32_t *pp)
{
  double x = lbmc_u01(o->st.s_svc) * lbmc_phocc_rate(o);
  uint32_t lj = 0, lp = 0;
  for (uint32_t j = 0; j < o->st.J; j++) {
    const lbmc_phocc_pool *h = &o->ph[j];
    for (uint32_t p = 0; p < h->m; p++) {
      double w = h->rate[p] * (double)h->y[p];
      if (w <= 0) continue;
      lj = j;
      lp = p;
      if (x < w) goto found;
      x -= w;
    }
  }
found: /* or the last busy (pool, phase), if x ran past the end by rounding */
  *jj = lj;
  *pp = lp;
}

static void lbmc_phocc_service(lbmc_phocc *o)
{
  lbmc_occ_state *st = &o->st;
  uint32_t j, p, k, d;
  lbmc_phocc_pool *h;
  double D;
  lbmc_phocc_pick(o, &j, &p);
  h = &o->ph[j];
  k = lbmc_phocc_fen_find(h, st->pool[j].top, p,
                          (int64_t)lbmc_occ_uint(st->s_svc, (uint64_t)h->y[p]));
  if (h->next[p] >= 0) {
    d = (uint32_t)h->next[p];
  } else {
    const double u = lbmc_u01(st->s_svc);
    uint32_t i = 0;
    while (i + 1 < h->ndest[p] && u >= h->cum[p][i]) i++;
    d = h->dest[p][i];
  }
  if (d < h->m) { /* a phase change at level k */
    h->x[(size_t)k * h->m + p]--;
    h->x[(size_t)k * h->m + d]++;
    h->y[p]--;
    h->y[d]++;
    lbmc_phocc_fen_move(h, k, p, d);
    h->phase_changes++;
  } else { /* a completion at level k */
    h->x[(size_t)k * h->m + p]--;
    h->y[p]--;
    lbmc_phocc_fen_add(h, k, p, -1);
    lbmc_occ_down(st, j, k);
    st->tally.c.departures++;
    if (k >= 2) { /* the next customer starts */
      const uint32_t q = lbmc_phocc_alpha(o, h);
      h->x[(size_t)(k - 1) * h->m + q]++;
      h->y[q]++;
      lbmc_phocc_fen_add(h, k - 1, q, 1);
      st->tally.c.starts++;
    } else if (st->ops->on_idle) {
      st->ops->on_idle(st, st->pw, j); /* idleness grew */
    }
  }
  D = lbmc_phocc_rate(o);
  o->next_dep = D > 0 ? st->t + lbmc_exp_zig(st->s_svc, &st->zig) / D : INFINITY;
}

static void lbmc_phocc_run(lbmc_phocc *o, double t_end)
{
  lbmc_occ_state *st = &o->st;
  while (!st->tally.halt) {
    if (o->next_arr <= o->next_dep) {
      if (o->next_arr > t_end) break;
      st->t = o->next_arr;
      lbmc_phocc_arrival(o);
      o->next_arr = st->t + lbmc_exp_zig(st->s_arr, &st->zig) * o->inv_lambda_total;
    } else {
      if (o->next_dep > t_end) break;
      st->t = o->next_dep;
      lbmc_phocc_service(o);
    }
  }
}

/* ---- Ticks ---- */

/* Per-customer sums of the tick into the tally (terms at admission): per pool,
 * (sum of (k - 1) + sum_p admissions that found phase p x r_p) / mu_j for the waits,
 * plus admitted / mu_j for the sojourns. */
static void lbmc_phocc_customer_sums(lbmc_phocc *o)
{
  lbmc_occ_state *st = &o->st;
  lbmc_tally *t = &st->tally;
  double wait = 0, sojourn = 0;
  for (uint32_t j = 0; j < st->J; j++) {
    const lbmc_phocc_pool *h = &o->ph[j];
    double a = (double)(t->c.admitted[j] - t->c0.admitted[j]);
    double w = (double)(h->wait_levels - o->wait_levels0[j]);
    for (uint32_t p = 0; p < h->m; p++)
      w += (double)(h->wait_phase[p] - o->wait_phase0[j][p]) * h->res[p];
    wait += w * h->inv_mu;
    sojourn += (w + a) * h->inv_mu;
  }
  t->sum_wait = wait;
  t->sum_sojourn = sojourn;
}

static lbmc_err lbmc_phocc_advance(void *ws, double t_end, double *rec)
{
  lbmc_phocc *o = ws;
  lbmc_occ_state *st = &o->st;
  lbmc_phocc_run(o, t_end);
  lbmc_phocc_customer_sums(o);
  LBMC_CALL(lbmc_tally_finish(&st->tally, &o->view, t_end, rec, "occupancy-ph"));
  for (uint32_t j = 0; j < st->J; j++) {
    o->wait_levels0[j] = o->ph[j].wait_levels;
    memcpy(o->wait_phase0[j], o->ph[j].wait_phase, sizeof o->wait_phase0[j]);
  }
  st->t = st->tally.t0;
  return LBMC_SUCCESS;
}

/* ---- The rest of the table ---- */

static void lbmc_phocc_set_histograms(void *ws, lbmc_dhist *sojourn, lbmc_dhist *wait)
{
  (void)ws; /* per-customer quantiles come from the mixture (set_mixture) */
  (void)sojourn;
  (void)wait;
}

static lbmc_err lbmc_phocc_mixture_create(const void *ws, lbmc_mixture **mx)
{
  const lbmc_occ_state *st = &((const lbmc_phocc *)ws)->st;
  double mu1[LBMC_MAX_POOLS];
  int L[LBMC_MAX_POOLS];
  lbmc_err err;
  for (uint32_t j = 0; j < st->J; j++) {
    mu1[j] = st->pool[j].mu1;
    L[j] = 1;
  }
  LBMC_CALL(lbmc_mixture_create((int)st->J, mu1, L, mx));
  for (uint32_t j = 0; j < st->J; j++) {
    const lbmc_service *s = &st->m->service[j];
    const double *alpha, *T;
    int ph = lbmc_service_ph(s, &alpha, &T);
    err = lbmc_mixture_set_ph(*mx, (int)j, ph, alpha, T, lbmc_service_ph_exit(s),
                              lbmc_service_ph_residual(s));
    if (err) {
      lbmc_mixture_destroy(mx);
      return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
    }
  }
  return LBMC_SUCCESS;
}

static void lbmc_phocc_set_mixture(void *ws, lbmc_mixture *mix)
{
  ((lbmc_phocc *)ws)->st.mix = mix;
}
static lbmc_tally *lbmc_phocc_tally(void *ws) { return &((lbmc_phocc *)ws)->st.tally; }
static const lbmc_view *lbmc_phocc_view(const void *ws) { return &((const lbmc_phocc *)ws)->view; }

const lbmc_engine_type lbmc_engine_occupancy_ph = {
    .name = "occupancy-ph",
    .summary = "counts of servers per pool, level and phase (phase-type service: erlang k <= 16, "
               "hyperexponential, coxian, ph; plain servers; policies that treat a pool's servers "
               "alike): event cost and memory independent of n, n <= 10^12",
    .speed = 1e7,
    .mixtures = 1,
    .cap_max = LBMC_MAX_CUSTOMERS,
    .cap_default_max = LBMC_MAX_CUSTOMERS, /* counts: memory does not grow with customers */
    .applies = lbmc_phocc_applies,
    .create = lbmc_phocc_create,
    .destroy = lbmc_phocc_destroy,
    .reset = lbmc_phocc_reset,
    .advance = lbmc_phocc_advance,
    .set_histograms = lbmc_phocc_set_histograms,
    .time = lbmc_phocc_time,
    .tally = lbmc_phocc_tally,
    .view = lbmc_phocc_view,
    .set_init = lbmc_phocc_set_init,
    .mixture_create = lbmc_phocc_mixture_create,
    .set_mixture = lbmc_phocc_set_mixture,
};
