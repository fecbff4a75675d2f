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
 * Exp(1) / (lambda n), first draw at reset). The occupancy forms that sample a pair of
 * distinct servers (jsq(2)) draw it from one number while n (n - 1) <= 2^48
 * (lbmc_occ_pair1; the same law as two numbers). The occupancy form sends one to a class
 * (j, k). At an idle server (k = 0) the service starts in a phase drawn from alpha
 * (service stream); at a busy one the server joined is uniform within its level, so its
 * phase is p with probability x_j(k, p) / count(j, k) (an exact integer draw, routing
 * stream) and keeps it.
 *
 * Service events. The busy servers of pool j in phase p leave p at total rate
 * mu_j (-T_pp) y_j(p) (y_j(p) = servers in phase p). The pairs (j, p) are grouped in
 * rate classes (equal mu_j (-T_pp): one class for an Erlang law, two for H2), each with
 * its own exponential clock (below, "The clocks of the rate classes"); the earliest
 * fires, and the server that moves is a uniform busy one of its class (one exact integer
 * draw, service stream): its pair by a scan of the members' y_j(p), its level k by the
 * descent of phase p's Fenwick tree with the rank left over. The outcome comes from row
 * p of T: a phase change to p' with probability T[p][p'] / (-T_pp), a completion with
 * exit_p / (-T_pp) (no draw when one of them is certain). A completion at level k >= 2
 * starts the next customer in a phase drawn from alpha.
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

/* The trees are indexed by level from the top: node i = size - k holds level k, so that
 * the update path of a level, i, i + (i & -i), ... up to size, is short for the low
 * levels (length about the number of one bits of k - 1 plus one) and never longer than
 * log2(size); a search descends log2(size) steps.
 *
 * The lowest LBMC_PHOCC_FLAT levels, where most busy servers are under the policies
 * that balance, are kept out of the trees (their nodes count 0): their counts are read
 * off x directly, so an event there updates no tree, and a search first scans them (a
 * fixed number of steps, without branches) before descending the tree for the levels
 * above. A search returns the same level as one tree over every level would, for the
 * same rank. Eight levels: with H2 of scv 5 under jsq(2) at lambda 0.9, 43% of the
 * servers hold 5 or more customers, and with 4 flat levels whether an event was flat
 * or in the tree was a coin toss for the branch predictor (callgrind's model: 1.9
 * mispredictions per event, 0.96 with 8; instructions 340 -> 337); Erlang-4 and pull,
 * whose servers hold 0 .. 2, pay the longer scan (about 20 instructions per service
 * event, no branch). */
_Static_assert(LBMC_PHOCC_FLAT < LBMC_PHOCC_SIZE0, "the flat levels' rows are allocated");

/* Add d to x_j(k, p) in phase p's Fenwick tree (1 <= k < size; nothing for the flat
 * levels). */
static inline void lbmc_phocc_fen_add(lbmc_phocc_pool *h, uint32_t k, uint32_t p, int64_t d)
{
  int64_t *f = h->f + p;
  const uint32_t m = h->m, size = h->size;
  if (k <= LBMC_PHOCC_FLAT) return;
  for (uint32_t i = size - k; i < size; i += i & -i) f[(size_t)i * m] += d;
}

/* Move one server of phase p one level up (up = 1: from level k to k + 1) or down (up =
 * 0: from k to k - 1). Between two tree levels: its nodes i and i -+ 1 are neighbours:
 * with lo the lower of the two, the update paths of lo and lo + 1 meet at lo + (lo &
 * -lo), beyond which the changes cancel, and on the way lo + 1 visits lo + 1, lo + 2,
 * lo + 4, .. below it: one node for odd lo, 1 + (trailing zeros of lo) in general,
 * about two on average (a loop of that many steps: the branchless form over all
 * log2(size) powers cost 7 instructions a power, 8 powers at the sizes of a mean-field
 * start). Between the flat levels: nothing; across their top: one add. */
static inline void lbmc_phocc_fen_shift(lbmc_phocc_pool *h, uint32_t k, int up, uint32_t p)
{
  int64_t *f = h->f + p;
  const uint32_t m = h->m, lo = h->size - k - (uint32_t)up; /* k + 1 up, k down */
  const int64_t d = up ? 1 : -1;                            /* the change at lo */
  const uint32_t low = lo & -lo;
  if (k + (uint32_t)up <= LBMC_PHOCC_FLAT) return; /* both levels flat */
  if (k + (uint32_t)up == LBMC_PHOCC_FLAT + 1) {   /* to or from the lowest tree level */
    lbmc_phocc_fen_add(h, LBMC_PHOCC_FLAT + 1, p, d);
    return;
  }
  f[(size_t)lo * m] += d;
  for (uint32_t s = 1; s < low; s <<= 1) f[(size_t)(lo + s) * m] -= d; /* ctz(lo) steps */
}

/* Move one server at level k from phase p to q (both trees share the path). */
static inline void lbmc_phocc_fen_move(lbmc_phocc_pool *h, uint32_t k, uint32_t p, uint32_t q)
{
  int64_t *f = h->f;
  const uint32_t m = h->m, size = h->size;
  if (k <= LBMC_PHOCC_FLAT) return;
  for (uint32_t i = size - k; i < size; i += i & -i) {
    f[(size_t)i * m + p]--;
    f[(size_t)i * m + q]++;
  }
}

/* The level of the server of rank U (0 <= U < y(p)) among phase p's, ranked by level
 * from the top: with V = y(p) - 1 - U its rank from the bottom, the flat level holding
 * V when the flat levels hold more than V servers (a scan without branches on the
 * data); else, since the servers of the tree levels then rank 0 .. above U, the
 * smallest node i with x(size - 1, p) + .. + x(size - i, p) > U, level size - i, by the
 * descent from size / 2, without branches on the data. */
static inline uint32_t lbmc_phocc_fen_find(const lbmc_phocc_pool *h, uint32_t p, int64_t U)
{
  const int64_t *f = h->f + p, *x = h->x + p;
  const uint32_t m = h->m;
  const int64_t V = h->y[p] - 1 - U;
  int64_t cum = 0;
  uint32_t k = 1, pos = 0;
  for (uint32_t l = 1; l <= LBMC_PHOCC_FLAT; l++) /* levels below V's: cum <= V */
    k += (uint32_t)((cum += x[(size_t)l * m]) <= V);
  if (V < cum) return k;
  for (uint32_t step = h->size >> 1; step; step >>= 1) {
    const int64_t v = f[(size_t)(pos + step) * m];
    const int64_t take = -(int64_t)(v <= U); /* all ones when the subtree is passed */
    U -= v & take;
    pos += step & (uint32_t)take;
  }
  return h->size - (pos + 1);
}

/* Build the Fenwick trees of the levels LBMC_PHOCC_FLAT + 1 .. size - 1 from x (O(size
 * m); the flat levels' nodes count 0). */
static void lbmc_phocc_fen_build(lbmc_phocc_pool *h)
{
  const uint32_t m = h->m, size = h->size;
  memset(h->f, 0, sizeof *h->f * m);
  for (uint32_t i = 1; i < size; i++)
    if (size - i > LBMC_PHOCC_FLAT)
      memcpy(h->f + (size_t)i * m, h->x + (size_t)(size - i) * m, sizeof *h->f * m);
    else
      memset(h->f + (size_t)i * m, 0, sizeof *h->f * m);
  for (uint32_t i = 1; i < size; i++) {
    uint32_t up = i + (i & -i);
    if (up < size)
      for (uint32_t p = 0; p < m; p++) h->f[(size_t)up * m + p] += h->f[(size_t)i * m + p];
  }
}

/* Make level k addressable in pool h: size (a power of two) doubled until size > k, the
 * arrays grown (doubling) when size passes their capacity, and the trees rebuilt (their
 * indices count from size). At most log2 of the highest level times per replica. 0, or
 * -1 when out of memory. */
static int lbmc_phocc_grow(lbmc_phocc_pool *h, uint32_t k)
{
  uint64_t size = h->size, cap = h->cap;
  while (size <= k) size *= 2;
  if (size > UINT32_MAX / LBMC_PHOCC_M) return -1;
  if (size > cap) {
    int64_t *x, *f;
    while (cap < size) cap *= 2;
    x = realloc(h->x, sizeof *x * cap * h->m);
    if (!x) return -1;
    h->x = x;
    f = realloc(h->f, sizeof *f * cap * h->m);
    if (!f) return -1;
    h->f = f;
    h->cap = (uint32_t)cap;
  }
  memset(h->x + (size_t)h->size * h->m, 0, sizeof *h->x * (size - h->size) * h->m);
  h->size = (uint32_t)size;
  lbmc_phocc_fen_build(h);
  return 0;
}

/* The arrays of pool h at reset: capacity at least LBMC_PHOCC_SIZE0 levels and above
 * top, size the smallest power of two above top (>= 2), every count zero, in x up to
 * the capacity (the search reads the flat levels' rows even when size is below them;
 * grow keeps the rows from size on zero). -1 when out of memory. */
static int lbmc_phocc_clear(lbmc_phocc_pool *h, uint32_t top)
{
  h->size = 2;
  if (!h->cap) {
    h->x = malloc(sizeof *h->x * LBMC_PHOCC_SIZE0 * h->m);
    h->f = malloc(sizeof *h->f * LBMC_PHOCC_SIZE0 * h->m);
    if (!h->x || !h->f) return -1;
    h->cap = LBMC_PHOCC_SIZE0;
  }
  memset(h->y, 0, sizeof h->y);
  memset(h->x, 0, sizeof *h->x * h->cap * h->m);
  if (top >= h->size && lbmc_phocc_grow(h, top) != 0) return -1;
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
    h->inv_rate[p] = 1.0 / h->rate[p];
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

/* The rate classes of the pairs (j, p): pairs of equal rate, in order of first
 * appearance. */
static void lbmc_phocc_init_classes(lbmc_phocc *o)
{
  uint32_t n = 0;
  o->C = 0;
  for (uint32_t j = 0; j < o->st.J; j++)
    for (uint32_t p = 0; p < o->ph[j].m; p++) o->ph[j].cls[p] = UINT16_MAX;
  for (uint32_t j0 = 0; j0 < o->st.J; j0++)
    for (uint32_t p0 = 0; p0 < o->ph[j0].m; p0++) {
      lbmc_phocc_class *c = &o->cls[o->C];
      if (o->ph[j0].cls[p0] != UINT16_MAX) continue;
      c->rate = o->ph[j0].rate[p0];
      c->inv_rate = 1.0 / c->rate;
      c->busy = 0;
      c->first = n;
      c->n = 0;
      for (uint32_t j = j0; j < o->st.J; j++)
        for (uint32_t p = 0; p < o->ph[j].m; p++)
          if (o->ph[j].cls[p] == UINT16_MAX && o->ph[j].rate[p] == c->rate) {
            o->ph[j].cls[p] = (uint16_t)o->C;
            o->ymem[n] = &o->ph[j].y[p];
            o->member[n++] = (uint16_t)(j * LBMC_PHOCC_M + p);
            c->n++;
          }
      o->C++;
    }
}

/* y_j(p) += d, and its class's busy servers. */
static inline void lbmc_phocc_busy(lbmc_phocc *o, lbmc_phocc_pool *h, uint32_t p, int64_t d)
{
  h->y[p] += d;
  o->cls[h->cls[p]].busy += d;
}

/* A phase drawn from alpha (service stream). */
static inline uint32_t lbmc_phocc_alpha(lbmc_phocc *o, const lbmc_phocc_pool *h)
{
  double u;
  uint32_t p = 0;
  if (h->start >= 0) return (uint32_t)h->start;
  u = lbmc_u01(o->st.s_svc);
  for (uint32_t q = 0; q + 1 < h->m; q++) p += u >= h->acum[q]; /* without branches */
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
  if (m->n >= 2 && m->n <= (1LL << 25) &&
      (uint64_t)m->n * (uint64_t)(m->n - 1) <= LBMC_OCC_PAIR1_MAX) {
    o->st.pair_N = (uint64_t)m->n * (uint64_t)(m->n - 1); /* pairs from one number */
    o->st.pair_thr = (1ULL << LBMC_OCC_BITS) % o->st.pair_N;
  }
  o->pair2 = !err && o->st.ops->pair2 && m->J == 1 && m->param == 2 &&
             m->sampling == LBMC_SAMPLING_DISTINCT;
  for (int j = 0; j < m->J && !err; j++) {
    lbmc_phocc_init_law(&o->ph[j], m, j);
    if (lbmc_phocc_clear(&o->ph[j], 0) != 0) err = LBMC_ERR_MEMORY;
  }
  if (!err) lbmc_phocc_init_classes(o);
  lbmc_occ_view_init(&o->view, &o->st);
  if (err) {
    lbmc_phocc_destroy((void **)&o);
    return err == LBMC_ERR_MEMORY ? LBMC_ERROR(err, "occupancy-ph engine: out of memory") : err;
  }
  *ws = o;
  return LBMC_SUCCESS;
}

/* The mean-field fixed point, computed once per workspace; note[len] (may be NULL) "" when
 * the replicas can start from it, else why not. */
static lbmc_err lbmc_phocc_meanfield(lbmc_phocc *o, char *note, size_t len)
{
  if (note && len) note[0] = '\0';
  if (!o->mf.s) {
    LBMC_CALL(lbmc_occ_meanfield_solve(o->st.m, o->st.ops, &o->mf));
    free(o->counts);
    o->counts = malloc(sizeof *o->counts * ((size_t)o->mf.levels * (o->mf.ph + 1) + 1));
    if (!o->counts) return LBMC_ERROR(LBMC_ERR_MEMORY, "occupancy-ph engine: out of memory");
  }
  if (note && !o->mf.settled) snprintf(note, len, "%s", o->mf.note); /* started empty */
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_phocc_set_init(void *ws, const lbmc_run_options *ro, char *note, size_t len)
{
  lbmc_phocc *o = ws;
  o->init = (lbmc_init_kind)ro->init;
  if (note && len) note[0] = '\0';
  if (o->init != LBMC_INIT_MEANFIELD) return LBMC_SUCCESS;
  return lbmc_phocc_meanfield(o, note, len);
}

static int lbmc_phocc_meanfield_start(void *ws)
{
  lbmc_phocc *o = ws;
  return lbmc_phocc_meanfield(o, NULL, 0) == LBMC_SUCCESS && o->mf.settled;
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
  for (uint32_t p = 0; p < h->m; p++) o->cls[h->cls[p]].busy -= h->y[p];
  if (lbmc_phocc_clear(h, top) != 0) return -1;
  for (uint32_t k = 1; c && k < levels && k <= top; k++)
    for (uint32_t p = 0; p < h->m; p++) {
      h->x[(size_t)k * h->m + p] = c[(size_t)k * M + p];
      lbmc_phocc_busy(o, h, p, c[(size_t)k * M + p]);
    }
  lbmc_phocc_fen_build(h);
  h->wait_levels = h->phase_changes = 0;
  memset(h->wait_phase, 0, sizeof h->wait_phase);
  return 0;
}

/* E[work | counts] of a pool in units of requirement: sum over (k, p) of x(k, p) (r_p +
 * k - 1), the residual of the service in progress plus k - 1 fresh requirements. */
static double lbmc_phocc_work(const lbmc_phocc_pool *h)
{
  double w = 0;
  for (uint32_t k = 1; k < h->size; k++)
    for (uint32_t p = 0; p < h->m; p++)
      w += (double)h->x[(size_t)k * h->m + p] * (h->res[p] + (double)(k - 1));
  return w;
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
    lbmc_tally_work(&st->tally, 0, j, lbmc_phocc_work(&o->ph[j]));
  }
  st->tally.in_system = in_system;
  return 0;
}

/* ---- The clocks of the rate classes ----
 * Class c's servers leave their phases at total rate rate_c busy_c; its clock next_c is
 * an Exp(rate_c busy_c) time from its last draw (service stream), INFINITY when none is
 * busy, and the next service event is the earliest clock: the classes race, which
 * chooses a class in proportion to rate_c busy_c without a draw. A server joins a class
 * only by an arrival at an idle server or by an event of another class (a server leaves
 * its class only at its own event); the pending time is then rescaled,
 * t + (next_c - t) (busy_c - 1) / busy_c, since the residual of an exponential time is
 * exponential with the same rate (memoryless) and a scaled one has the scaled rate. The
 * class that fired draws afresh. */

/* A fresh clock for class c at time t. */
static inline void lbmc_phocc_draw(lbmc_phocc *o, lbmc_phocc_class *c)
{
  lbmc_occ_state *st = &o->st;
  c->next = c->busy > 0 ? st->t + lbmc_exp_zig(st->s_svc, &st->zig) * c->inv_rate / (double)c->busy
                        : INFINITY;
}

/* A server has joined class c (busy_c already counts it). */
static inline void lbmc_phocc_join(lbmc_phocc *o, lbmc_phocc_class *c)
{
  const double t = o->st.t;
  if (c->busy == 1)
    lbmc_phocc_draw(o, c);
  else
    c->next = t + (c->next - t) * ((double)(c->busy - 1) / (double)c->busy);
}

/* The earliest clock: next_dep and its class (the first on ties). Without branches on
 * the clocks (selects): which class fires is a coin toss a predictor cannot learn. */
static inline void lbmc_phocc_earliest(lbmc_phocc *o)
{
  uint32_t best = 0;
  double next = o->cls[0].next;
  if (o->C == 2) { /* H2, and any law of two rates */
    const uint32_t earlier = o->cls[1].next < next;
    o->dep_cls = earlier;
    o->next_dep = earlier ? o->cls[1].next : next;
    return;
  }
  for (uint32_t c = 1; c < o->C; c++) {
    const double v = o->cls[c].next;
    const uint32_t earlier = v < next;
    best = earlier ? c : best;
    next = earlier ? v : next;
  }
  o->dep_cls = best;
  o->next_dep = next;
}

static lbmc_err lbmc_phocc_reset(void *ws, lbmc_stream *streams)
{
  lbmc_phocc *o = ws;
  lbmc_occ_state *st = &o->st;
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
  for (uint32_t c = 0; c < o->C; c++) lbmc_phocc_draw(o, &o->cls[c]);
  lbmc_phocc_earliest(o);
  return LBMC_SUCCESS;
}

/* ---- Events ---- */

static void lbmc_phocc_arrival(lbmc_phocc *o)
{
  lbmc_occ_state *st = &o->st;
  const uint32_t r = st->R > 1 ? (uint32_t)lbmc_occ_uint(st->s_route, st->R) : 0;
  const lbmc_occ_class c = o->pair2 ? lbmc_occ_route_pair2(st) : st->ops->route(st, st->pw, r);
  lbmc_phocc_pool *h = &o->ph[c.j];
  uint32_t p = 0;
  lbmc_tally_arrival(&st->tally);
  if (c.k >= st->pool[c.j].B) {
    st->tally.c.blocked++;
    return;
  }
  if (lbmc_phocc_room(o, c.j, c.k + 1) != 0) return;
  if (c.k == 0) { /* a service starts: its phase from alpha; its class's clock is rescaled */
    lbmc_phocc_class *cl;
    p = lbmc_phocc_alpha(o, h);
    h->x[h->m + p]++;
    lbmc_phocc_busy(o, h, p, 1);
    lbmc_phocc_fen_add(h, 1, p, 1);
    st->tally.c.starts++;
    cl = &o->cls[h->cls[p]];
    lbmc_phocc_join(o, cl);
    if (cl->next < o->next_dep) {
      o->next_dep = cl->next;
      o->dep_cls = h->cls[p];
    }
  } else { /* a uniform server of the level: phase p w.p. x(k, p) / count(k) */
    int64_t *xk = h->x + (size_t)c.k * h->m;
    if (h->m > 1) { /* the server's rank within its level, from the form or drawn here */
      int64_t U = c.rank1 ? (int64_t)(c.rank1 - 1)
                          : (int64_t)lbmc_occ_uint(st->s_route,
                                                   (uint64_t)lbmc_occ_count(&st->pool[c.j], c.k));
      int64_t cum = 0;
      for (uint32_t q = 0; q + 1 < h->m; q++) p += (cum += xk[q]) <= U; /* without branches */
    }
    xk[p]--;
    xk[h->m + p]++;
    lbmc_phocc_fen_shift(h, c.k, 1, p);
    st->tally.c.waited++;
    h->wait_levels += c.k - 1;
    h->wait_phase[p]++;
  }
  if (st->mix && lbmc_mixture_record(st->mix, c.j, c.k * h->m + p) != 0) {
    lbmc_tally_out_of_memory(&st->tally);
    return;
  }
  st->tally.c.admitted[c.j]++;
  /* E[work | state]: a service started in phase p leaves r_p, a waiting one a mean
   * requirement */
  lbmc_tally_work(&st->tally, st->t, c.j, c.k == 0 ? h->res[p] : 1.0);
  lbmc_occ_up(st, c.j, c.k);
}

/* The server of an event of class c: a uniform busy one of the class, its pair (pool
 * *jj, phase *pp) from the members' counts and its level (returned) from the pair's
 * Fenwick tree, with one exact integer draw. */
static uint32_t lbmc_phocc_pick(lbmc_phocc *o, const lbmc_phocc_class *c, uint32_t *jj,
                                uint32_t *pp)
{
  int64_t U = (int64_t)lbmc_occ_uint(o->st.s_svc, (uint64_t)c->busy), cum = 0, before = 0;
  const int64_t *const *y = o->ymem + c->first;
  uint32_t i = 0, j, p;
  for (uint32_t a = 0; c->n > 1 && a < c->n; a++) { /* the member holding rank U, without
                                                       branches (a single one holds all) */
    const int64_t passed = -(int64_t)((cum += *y[a]) <= U);
    i += (uint32_t)(passed & 1);
    before += *y[a] & passed;
  }
  j = o->member[c->first + i] / LBMC_PHOCC_M;
  p = o->member[c->first + i] % LBMC_PHOCC_M;
  *jj = j;
  *pp = p;
  return lbmc_phocc_fen_find(&o->ph[j], p, U - before);
}

/* The server of phase p of pool h joins phase q's class (after an event of class cf). */
static inline void lbmc_phocc_enter(lbmc_phocc *o, lbmc_phocc_pool *h, uint32_t q, uint32_t cf)
{
  lbmc_phocc_busy(o, h, q, 1);
  if (h->cls[q] != cf) lbmc_phocc_join(o, &o->cls[h->cls[q]]);
}

static void lbmc_phocc_service(lbmc_phocc *o)
{
  lbmc_occ_state *st = &o->st;
  const uint32_t cf = o->dep_cls;
  uint32_t j, p, k, d;
  lbmc_phocc_pool *h;
  k = lbmc_phocc_pick(o, &o->cls[cf], &j, &p);
  h = &o->ph[j];
  if (h->next[p] >= 0) {
    d = (uint32_t)h->next[p];
  } else {
    const double u = lbmc_u01(st->s_svc);
    uint32_t i = 0;
    while (i + 1 < h->ndest[p] && u >= h->cum[p][i]) i++;
    d = h->dest[p][i];
  }
  lbmc_phocc_busy(o, h, p, -1);
  if (d < h->m) { /* a phase change at level k */
    h->x[(size_t)k * h->m + p]--;
    h->x[(size_t)k * h->m + d]++;
    lbmc_phocc_enter(o, h, d, cf);
    lbmc_phocc_fen_move(h, k, p, d);
    lbmc_tally_work(&st->tally, st->t, j, h->res[d] - h->res[p]);
    h->phase_changes++;
  } else { /* a completion at level k */
    h->x[(size_t)k * h->m + p]--;
    lbmc_occ_down(st, j, k);
    st->tally.c.departures++;
    if (k >= 2) { /* the next customer starts, in phase q */
      const uint32_t q = lbmc_phocc_alpha(o, h);
      h->x[(size_t)(k - 1) * h->m + q]++;
      lbmc_phocc_enter(o, h, q, cf);
      if (q == p) {
        lbmc_phocc_fen_shift(h, k, 0, p);
      } else {
        lbmc_phocc_fen_add(h, k, p, -1);
        lbmc_phocc_fen_add(h, k - 1, q, 1);
      }
      st->tally.c.starts++;
      lbmc_tally_work(&st->tally, st->t, j, h->res[q] - 1.0 - h->res[p]);
    } else {
      lbmc_phocc_fen_add(h, k, p, -1);
      lbmc_tally_work(&st->tally, st->t, j, -h->res[p]);
      if (st->ops->on_idle) st->ops->on_idle(st, st->pw, j); /* idleness grew */
    }
  }
  lbmc_phocc_draw(o, &o->cls[cf]);
  lbmc_phocc_earliest(o);
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
    .meanfield_start = lbmc_phocc_meanfield_start,
    .mixture_create = lbmc_phocc_mixture_create,
    .set_mixture = lbmc_phocc_set_mixture,
};
