/* The occupancy engine in parts: exact integer draws, the level search, the
 * Fenwick tree, the policies' occupancy forms against brute-force enumeration of their
 * per-server rules on small states, state invariants along random runs, tick records,
 * common random numbers with the per-server engine, the Erlang mixture, randomised
 * rounding, binomial splits and the mean-field ODE's fixed points. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fenwick.h"
#include "core/sampler.h"
#include "core/ticks.h"
#include "engine/engine.h"
#include "engine/occ_meanfield.h"
#include "engine/occupancy.h"
#include "lbmc/engines.h"
#include "lbmc/rng.h"
#include "lbmc/sim.h"
#include "policies/occ_laws.h"
#include "stats/mixture.h"
#include "system/occ_policy.h"
#include "unit.h"

#define NDRAW 200000

/* ---- helpers ---- */

/* An occupancy workspace with its streams (numbered from gennum0). */
typedef struct {
  lbmc_model *m;
  void *ws;
  lbmc_occ_state *st;
  lbmc_stream streams[LBMC_PURPOSES];
} oc_engine;

static void oc_open(oc_engine *e, const ut_occ_conf *c, int gennum0, int K)
{
  memset(e, 0, sizeof *e);
  e->m = ut_occ_model(c);
  CU_ASSERT_FATAL(lbmc_engine_occupancy.create(e->m, K, UINT64_MAX, &e->ws) == LBMC_SUCCESS);
  for (int p = 0; p < LBMC_PURPOSES; p++)
    CU_ASSERT_FATAL(lbmc_stream_init(&e->streams[p], gennum0 + p, 777) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_engine_occupancy.reset(e->ws, e->streams) == LBMC_SUCCESS);
  e->st = (lbmc_occ_state *)lbmc_occ_state_of(e->ws);
}

static void oc_close(oc_engine *e)
{
  lbmc_engine_occupancy.destroy(&e->ws);
  for (int p = 0; p < LBMC_PURPOSES; p++) lbmc_stream_free(&e->streams[p]);
  lbmc_model_destroy(&e->m);
}

/* Set the counts: q[s] customers at server s, servers numbered pool by pool as in the
 * model (offset[j] ..); then the policy's reset (pull re-splits its messages). */
static void oc_set(oc_engine *e, const uint32_t *q)
{
  lbmc_occ_state *st = e->st;
  for (uint32_t j = 0; j < st->J; j++)
    for (long s = e->m->offset[j]; s < e->m->offset[j] + e->m->N[j]; s++)
      for (uint32_t a = 0; a < q[s]; a++) {
        CU_ASSERT_FATAL(lbmc_occ_room(st, j, a + 1) == 0);
        lbmc_occ_up(st, j, a);
      }
  if (st->ops->reset) CU_ASSERT_FATAL(st->ops->reset(st, st->pw) == LBMC_SUCCESS);
}

/* Index of class (j, k) among J x (kmax + 1) cells. */
static int oc_cell(lbmc_occ_class c, int kmax) { return (int)c.j * (kmax + 1) + (int)c.k; }

/* ---- exact integers, level search, Fenwick ---- */

/* lbmc_occ_uint is uniform: small ranges by chi-square, and the 52 bits of the SPRNG
 * doubles it relies on are all random (the low 4 bits of u * 2^52 uniform). */
static void test_uint(void)
{
  lbmc_stream s = {0};
  const uint64_t sizes[] = {1, 3, 7, 10};
  long cnt[16];
  double p[16];
  CU_ASSERT_FATAL(lbmc_stream_init(&s, 900, 5) == LBMC_SUCCESS);
  for (int i = 0; i < 4; i++) {
    memset(cnt, 0, sizeof cnt);
    for (long t = 0; t < NDRAW; t++) cnt[lbmc_occ_uint(&s, sizes[i])]++;
    for (uint64_t k = 0; k < sizes[i]; k++) p[k] = 1.0 / (double)sizes[i];
    UT_CHECK_COUNTS("uniform integer", cnt, p, (int)sizes[i], NDRAW);
  }
  memset(cnt, 0, sizeof cnt);
  for (long t = 0; t < NDRAW; t++) {
    double u = lbmc_u01(&s) * 0x1p52;
    UT_CHECK(u == floor(u), "SPRNG double %.17g is not a multiple of 2^-52", u / 0x1p52);
    cnt[(uint64_t)u & 15]++;
  }
  for (int k = 0; k < 16; k++) p[k] = 1.0 / 16;
  UT_CHECK_COUNTS("low 4 of the 52 bits", cnt, p, 16, NDRAW);
  /* large ranges: results stay below n, the top and bottom halves equally likely */
  {
    const uint64_t n = 1000000000000ULL;
    long low = 0;
    for (long t = 0; t < NDRAW; t++) {
      uint64_t v = lbmc_occ_uint(&s, n);
      UT_CHECK(v < n, "draw %llu >= n", (unsigned long long)v);
      low += v < n / 2;
    }
    UT_CHECK_BINOMIAL("lower half of 10^12", low, NDRAW, 0.5);
  }
  lbmc_stream_free(&s);
}

/* Pairs of distinct positions from one number (lbmc_occ_pair1): uniform over the n (n - 1)
 * ordered pairs at small n (n = 5, 20 cells; n = 7, whose 2^52 mod 42 rejects), and at n =
 * 10^7 the same pair as X = floor(w N / 2^52) split by division, on a copy of the stream
 * (the floor identity a = floor(w n / 2^52) the function relies on). Control: a pair
 * taken from X's low digits instead (a = X mod n) must fail that comparison. */
static void test_pair1(void)
{
  lbmc_stream s = {0}, t = {0};
  lbmc_occ_state st;
  long cnt[64];
  double p[64];
  CU_ASSERT_FATAL(lbmc_stream_init(&s, 905, 5) == LBMC_SUCCESS);
  for (int64_t n = 5; n <= 7; n += 2) {
    const int cells = (int)(n * n);
    memset(&st, 0, sizeof st);
    st.n = n;
    st.pair_N = (uint64_t)(n * (n - 1));
    st.pair_thr = (1ULL << LBMC_OCC_BITS) % st.pair_N;
    memset(cnt, 0, sizeof cnt);
    for (long d = 0; d < NDRAW; d++) {
      uint64_t a, b;
      lbmc_occ_pair1(&st, &s, &a, &b);
      UT_CHECK(a < (uint64_t)n && b < (uint64_t)n && a != b, "pair (%llu, %llu) of n = %lld",
               (unsigned long long)a, (unsigned long long)b, (long long)n);
      if (a < (uint64_t)n && b < (uint64_t)n) cnt[a * (uint64_t)n + b]++;
    }
    for (int c = 0; c < cells; c++) p[c] = c / n == c % n ? 0.0 : 1.0 / (double)st.pair_N;
    UT_CHECK_COUNTS("ordered pair", cnt, p, cells, NDRAW);
  }
  { /* n = 10^7: against division, on two streams alike */
    const uint64_t n = 10000000;
    long same = 0, control = 0;
    memset(&st, 0, sizeof st);
    st.n = (int64_t)n;
    st.pair_N = n * (n - 1);
    st.pair_thr = (1ULL << LBMC_OCC_BITS) % st.pair_N;
    CU_ASSERT_FATAL(lbmc_stream_init(&t, 906, 5) == LBMC_SUCCESS);
    lbmc_stream_free(&s);
    CU_ASSERT_FATAL(lbmc_stream_init(&s, 906, 5) == LBMC_SUCCESS);
    for (long d = 0; d < 100000; d++) {
      uint64_t a, b, x = lbmc_occ_uint(&t, st.pair_N), ra = x / (n - 1), rb = x % (n - 1);
      rb += rb >= ra;
      lbmc_occ_pair1(&st, &s, &a, &b);
      same += a == ra && b == rb;
      control += a == x % n;
    }
    UT_CHECK(same == 100000, "%ld of 100000 pairs as by division", same);
    UT_CHECK(control < 100, "control: %ld of 100000 low-digit pairs agree", control);
    lbmc_stream_free(&t);
  }
  lbmc_stream_free(&s);
}

/* The level of every position matches a linear scan, on random tail-count arrays. */
static void test_level_search(void)
{
  lbmc_stream s = {0};
  int64_t G[160];
  CU_ASSERT_FATAL(lbmc_stream_init(&s, 901, 5) == LBMC_SUCCESS);
  for (int trial = 0; trial < 300; trial++) {
    lbmc_occ_pool p = {0};
    uint32_t top = lbmc_uint(&s, 70);
    int64_t N = 0, x[80];
    for (uint32_t k = 0; k <= top; k++)
      N += x[k] = (k == top && top > 0) ? 1 + lbmc_uint(&s, 3) : lbmc_uint(&s, 4);
    if (N == 0) x[0] = N = 1;
    memset(G, 0, sizeof G);
    for (uint32_t k = top + 1; k-- > 0;) G[k] = G[k + 1] + x[k];
    p.G = G;
    p.top = top;
    p.N = N;
    for (int64_t P = 0; P < N; P++) {
      uint32_t want = 0;
      for (uint32_t k = 0; k <= top; k++)
        if (G[k] > P) want = k;
      UT_CHECK(lbmc_occ_level(&p, P) == want, "position %lld: level %u, want %u", (long long)P,
               lbmc_occ_level(&p, P), want);
    }
  }
  lbmc_stream_free(&s);
}

/* jsq(2)'s one-pool route (lbmc_occ_route_pair2: one level search, the higher position's,
 * a tie told by G[k + 1]) against the two positions' levels by a linear scan, the lower
 * taken, a on ties, from a stream made alike: the same class and rank on random tail
 * counts, with one number per pair and with two. The ties must occur (else the tie rule
 * would go untested): with a rule taking the higher position on ties instead, the ranks
 * would differ there. */
static void test_route_pair2(void)
{
  lbmc_stream s = {0}, r = {0}, t = {0};
  int64_t G[160];
  long ties = 0, tie_ranks_differ = 0;
  CU_ASSERT_FATAL(lbmc_stream_init(&s, 907, 5) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_stream_init(&r, 908, 5) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_stream_init(&t, 908, 5) == LBMC_SUCCESS);
  for (int trial = 0; trial < 400; trial++) {
    lbmc_occ_state st;
    uint32_t top = lbmc_uint(&s, 40);
    int64_t N = 0, x[80];
    memset(&st, 0, sizeof st);
    for (uint32_t k = 0; k <= top; k++)
      N += x[k] = (k == top && top > 0) ? 1 + lbmc_uint(&s, 3) : lbmc_uint(&s, 5);
    if (N < 2) x[0] += 2 - N, N = 2;
    memset(G, 0, sizeof G);
    for (uint32_t k = top + 1; k-- > 0;) G[k] = G[k + 1] + x[k];
    st.pool[0].G = G;
    st.pool[0].top = top;
    st.pool[0].N = N;
    st.J = 1;
    st.n = N;
    st.s_route = &r;
    if (trial % 2) { /* one number per pair */
      st.pair_N = (uint64_t)N * (uint64_t)(N - 1);
      st.pair_thr = (1ULL << LBMC_OCC_BITS) % st.pair_N;
    }
    for (int i = 0; i < 200; i++) {
      const lbmc_occ_class c = lbmc_occ_route_pair2(&st);
      uint64_t a, b, pos;
      uint32_t ka = 0, kb = 0, k;
      if (st.pair_N) {
        lbmc_occ_pair1(&st, &t, &a, &b);
      } else {
        a = lbmc_occ_uint(&t, (uint64_t)N);
        b = lbmc_occ_uint(&t, (uint64_t)N - 1);
        b += b >= a;
      }
      for (uint32_t l = 0; l <= top; l++) {
        if (G[l] > (int64_t)a) ka = l;
        if (G[l] > (int64_t)b) kb = l;
      }
      k = kb < ka ? kb : ka;
      pos = kb < ka ? b : a;
      if (ka == kb) {
        ties++;
        tie_ranks_differ += (a > b ? a : b) != a;
      }
      UT_CHECK(c.j == 0 && c.k == k && c.rank1 == pos - (uint64_t)G[k + 1] + 1,
               "positions %llu, %llu: class (%u, %u) rank %llu, want (0, %u) rank %llu",
               (unsigned long long)a, (unsigned long long)b, c.j, c.k, (unsigned long long)c.rank1,
               k, (unsigned long long)(pos - (uint64_t)G[k + 1] + 1));
    }
    UT_CHECK(st.tally.c.messages == 4 * 200, "messages %llu, want 800",
             (unsigned long long)st.tally.c.messages);
  }
  UT_CHECK(ties > 1000 && tie_ranks_differ > 500, "ties %ld, of which %ld with b above a", ties,
           tie_ranks_differ);
  lbmc_stream_free(&s);
  lbmc_stream_free(&r);
  lbmc_stream_free(&t);
}

static void test_fenwick(void)
{
  lbmc_fenwick f;
  int64_t c[37];
  lbmc_stream s = {0};
  CU_ASSERT_FATAL(lbmc_stream_init(&s, 902, 5) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_fenwick_init(&f, 37) == 0);
  for (int i = 0; i < 37; i++) c[i] = lbmc_uint(&s, 3);
  lbmc_fenwick_build(&f, c);
  for (int step = 0; step < 2000; step++) {
    uint32_t i = lbmc_uint(&s, 37);
    int64_t total = 0, d = (c[i] > 0 && lbmc_u01(&s) < 0.5) ? -1 : 1;
    c[i] += d;
    lbmc_fenwick_add(&f, i, d);
    for (int k = 0; k < 37; k++) total += c[k];
    for (int64_t v = 0; v < total; v++) {
      int64_t cum = 0;
      uint32_t want = 0;
      while (cum + c[want] <= v) cum += c[want++];
      UT_CHECK(lbmc_fenwick_find(&f, v) == want, "rank %lld: cell %u, want %u", (long long)v,
               lbmc_fenwick_find(&f, v), want);
    }
  }
  lbmc_fenwick_free(&f);
  lbmc_stream_free(&s);
}

/* ---- policies: occupancy forms against enumeration of the per-server rule ---- */

/* Exact class probabilities of a "d servers sampled, fewest customers, ties uniformly"
 * rule on servers with counts q[n], pools pool[n], by enumerating ordered samples:
 * distinct (weights w[s], successive sampling without replacement) or independent
 * uniform draws. */
static void oc_enumerate(int n, const uint32_t *q, const int *pool, const double *w, int d,
                         int distinct, int depth, int *chosen, double prob, int kmax, double *out)
{
  if (depth == d) {
    uint32_t best = UINT32_MAX;
    int ties = 0;
    for (int i = 0; i < d; i++) best = q[chosen[i]] < best ? q[chosen[i]] : best;
    for (int i = 0; i < d; i++) ties += q[chosen[i]] == best;
    for (int i = 0; i < d; i++)
      if (q[chosen[i]] == best) out[pool[chosen[i]] * (kmax + 1) + (int)best] += prob / ties;
    return;
  }
  {
    double left = 0;
    for (int s = 0; s < n; s++) {
      int used = 0;
      for (int i = 0; distinct && i < depth; i++) used |= chosen[i] == s;
      if (!used) left += w[s];
    }
    for (int s = 0; s < n; s++) {
      int used = 0;
      for (int i = 0; distinct && i < depth; i++) used |= chosen[i] == s;
      if (used) continue;
      chosen[depth] = s;
      oc_enumerate(n, q, pool, w, d, distinct, depth + 1, chosen, prob * w[s] / left, kmax, out);
    }
  }
}

/* Route NDRAW arrivals (router r_of(i)) in the occupancy form of c's policy at counts q
 * and compare the class frequencies with p (J x (kmax + 1) cells). */
static void oc_check_route(const ut_occ_conf *c, const uint32_t *q, int kmax, const double *p,
                           int gennum0, const char *what)
{
  oc_engine e;
  long cnt[64] = {0};
  oc_open(&e, c, gennum0, 4);
  oc_set(&e, q);
  for (long i = 0; i < NDRAW; i++) {
    uint32_t r = e.st->R > 1 ? (uint32_t)lbmc_occ_uint(e.st->s_route, e.st->R) : 0;
    lbmc_occ_class cl = e.st->ops->route(e.st, e.st->pw, r);
    CU_ASSERT_FATAL((int)cl.k <= kmax);
    cnt[oc_cell(cl, kmax)]++;
    if (e.st->ops->reset) e.st->ops->reset(e.st, e.st->pw); /* pull: undo the message */
  }
  UT_CHECK_COUNTS(what, cnt, p, c->J * (kmax + 1), NDRAW);
  oc_close(&e);
}

/* jsq(d), both samplings, and balanced(c): class frequencies against the enumeration. */
static void test_route_sampling(void)
{
  const double beta[] = {0.5, 0.5}, mu[] = {1, 3};
  const uint32_t q[] = {0, 2, 1, 1, 0, 3}; /* pool 1: 0, 2, 1; pool 2: 1, 0, 3 */
  const int pool[] = {0, 0, 0, 1, 1, 1}, kmax = 3;
  const double w1[] = {1, 1, 1, 1, 1, 1}, wmu[] = {1, 1, 1, 3, 3, 3};
  struct {
    const char *policy, *sampling;
    int d, distinct;
    const double *w;
  } cases[] = {{"jsq(2)", NULL, 2, 1, w1},
               {"jsq(3)", NULL, 3, 1, w1},
               {"jsq(2)", "with_replacement", 2, 0, w1},
               {"jsq(3)", "with_replacement", 3, 0, w1},
               {"random", NULL, 1, 1, w1},
               {"balanced(2)", NULL, 2, 1, wmu},
               {"balanced(3)", NULL, 3, 1, wmu}};
  for (int i = 0; i < 7; i++) {
    ut_occ_conf c = {.n = 6,
                     .J = 2,
                     .beta = beta,
                     .mu = mu,
                     .policy = cases[i].policy,
                     .sampling = cases[i].sampling};
    double p[8] = {0};
    int chosen[8];
    oc_enumerate(6, q, pool, cases[i].w, cases[i].d, cases[i].distinct, 0, chosen, 1.0, kmax, p);
    oc_check_route(&c, q, kmax, p, 910 + 4 * i, cases[i].policy);
  }
}

/* jsq: the lowest level, pools in proportion to their servers there. */
static void test_route_jsq(void)
{
  const double beta[] = {0.5, 0.5};
  ut_occ_conf c = {.n = 6, .J = 2, .beta = beta, .policy = "jsq"};
  const uint32_t q1[] = {2, 1, 3, 1, 1, 2}, q2[] = {0, 0, 0, 0, 1, 1};
  const double p1[] = {0, 1.0 / 3, 0, 0, 0, 2.0 / 3, 0, 0}, p2[] = {0.75, 0, 0, 0, 0.25, 0, 0, 0};
  oc_check_route(&c, q1, 3, p1, 940, "jsq, level 1");
  oc_check_route(&c, q2, 3, p2, 944, "jsq, level 0");
}

/* pull, R = 1: an idle slot uniformly (linear speed lists: a server at level k < L has
 * L - k), else a uniform server. */
static void test_route_pull1(void)
{
  const double beta[] = {0.5, 0.5};
  ut_occ_conf c = {.n = 6, .J = 2, .beta = beta, .policy = "pull"};
  const uint32_t q1[] = {0, 2, 1, 1, 0, 0}, q2[] = {1, 2, 1, 3, 1, 1};
  const double p1[] = {1.0 / 3, 0, 0, 0, 2.0 / 3, 0, 0, 0};
  const double p2[] = {0, 2.0 / 6, 1.0 / 6, 0, 0, 2.0 / 6, 0, 1.0 / 6};
  /* speed lists L = 3: idleness 3 - q: q = (0, 2, 1 | 1, 3, 4) has idle slots
   * 3, 1, 2 | 2, 0, 0 (total 8) */
  ut_occ_conf c3 = {.n = 6, .J = 2, .beta = beta, .policy = "pull", .nrates = 3};
  const uint32_t q3[] = {0, 2, 1, 1, 3, 4};
  const double p3[] = {3.0 / 8, 2.0 / 8, 1.0 / 8, 0, 0, 0, 2.0 / 8, 0, 0, 0};
  oc_check_route(&c, q1, 3, p1, 948, "pull R=1, idle servers");
  oc_check_route(&c, q2, 3, p2, 952, "pull R=1, none idle");
  oc_check_route(&c3, q3, 4, p3, 956, "pull R=1, speed lists");
}

/* pull, R = 3, withdraw: router r uniform; with messages (y_j(r) > 0) an idle server of
 * pool j in proportion to y_j(r); else a uniform server, whose message is withdrawn if
 * it is idle. The split y of the idle servers over the routers is redrawn (multinomial)
 * after every arrival, so the frequencies are averages over splits: a router holds none
 * of the I idle servers' messages with probability z = (1 - 1/R)^I, and by symmetry a
 * message it holds is uniform over the idle servers. */
static void test_route_pull_routers(void)
{
  const double beta[] = {0.5, 0.5};
  const uint32_t q[] = {0, 1, 2, 1, 0, 0, 1, 3}; /* idle: 1 in pool 1, 2 in pool 2 */
  const long Rs[] = {3, 20};                     /* found by a scan; by the Fenwick trees */
  for (int i = 0; i < 2; i++) {
    const double z = pow(1 - 1.0 / Rs[i], 3);
    ut_occ_conf c = {.n = 8, .J = 2, .beta = beta, .policy = "pull", .routers = Rs[i]};
    const double p[] = {(1 - z) / 3 + z / 8,         z * 2 / 8, z / 8, 0,
                        (1 - z) * 2 / 3 + z * 2 / 8, z / 8,     0,     z / 8};
    oc_engine e;
    long cnt[8] = {0};
    oc_open(&e, &c, 960 + 4 * i, 4);
    oc_set(&e, q);
    for (long t = 0; t < NDRAW; t++) {
      uint32_t r = (uint32_t)lbmc_occ_uint(e.st->s_route, (uint64_t)Rs[i]);
      cnt[oc_cell(e.st->ops->route(e.st, e.st->pw, r), 3)]++;
      CU_ASSERT_FATAL(e.st->ops->reset(e.st, e.st->pw) == LBMC_SUCCESS); /* a fresh split */
    }
    UT_CHECK_COUNTS(Rs[i] > 16 ? "pull R=20" : "pull R=3", cnt, p, 8, NDRAW);
    UT_CHECK_BINOMIAL("pull withdrawals", (long)e.st->tally.c.withdrawals, NDRAW, z * 3 / 8);
    UT_CHECK(e.st->tally.c.messages == (unsigned __int128)e.st->tally.c.withdrawals,
             "a withdrawal is one message: %ld vs %ld", (long)e.st->tally.c.messages,
             (long)e.st->tally.c.withdrawals);
    oc_close(&e);
  }
}

/* ---- the engine ---- */

/* Every redundant part of the state agrees with G; returns the disagreements. */
long ut_occ_state_errors(const lbmc_occ_state *st)
{
  long err = 0;
  uint64_t total = 0;
  for (uint32_t j = 0; j < st->J; j++) {
    const lbmc_occ_pool *p = &st->pool[j];
    int64_t Q = 0, S = 0;
    uint32_t low = 0;
    err += p->G[0] != p->N || 2 * p->top + 2 > p->cap || p->G[p->top + 1] != 0;
    err += p->top > 0 && p->G[p->top] == 0;
    for (uint32_t k = 1; k < p->cap; k++) {
      err += p->G[k] > p->G[k - 1] || p->G[k] < 0;
      Q += p->G[k];
      if (k <= p->L) S += p->G[k];
    }
    while (lbmc_occ_count(p, low) == 0) low++;
    err += p->Q != Q || p->S != S || p->low != low || (p->B != UINT32_MAX && p->top > p->B);
    total += (uint64_t)Q;
  }
  return err + (total != st->tally.in_system);
}

/* Random runs of several models: invariants at every tick, tick records consistent with
 * the counters (arrivals = admitted + blocked, customers balance, areas add up). */
static void test_invariants(void)
{
  const double beta3[] = {0.3, 0.3, 0.4}, mu3[] = {1, 0.5, 2};
  const long buf3[] = {3, LBMC_BUFFER_INF, 1};
  ut_occ_conf cases[] = {
      {.n = 13,
       .J = 3,
       .beta = beta3,
       .mu = mu3,
       .buffer = buf3,
       .policy = "jsq(2)",
       .lambda = 1.1},
      {.n = 40, .J = 3, .beta = beta3, .mu = mu3, .policy = "pull", .routers = 3, .lambda = 1.0},
      {.n = 60, .J = 3, .beta = beta3, .mu = mu3, .policy = "pull", .routers = 20, .lambda = 1.0},
      {.n = 9,
       .J = 3,
       .beta = beta3,
       .mu = mu3,
       .buffer = buf3,
       .policy = "balanced(3)",
       .lambda = 1.2},
      {.n = 7, .J = 3, .beta = beta3, .mu = mu3, .policy = "jsq", .lambda = 1.0},
      {.n = 11, .J = 3, .beta = beta3, .mu = mu3, .policy = "pull", .nrates = 3, .lambda = 2.5},
      {.n = 5, .policy = "random", .lambda = 0.9}};
  for (int i = 0; i < 7; i++) {
    oc_engine e;
    const int K = 4, J = cases[i].J ? cases[i].J : 1;
    double *rec = malloc(sizeof *rec * lbmc_tick_width(J, K)), prev_n = 0;
    long bad = 0;
    oc_open(&e, &cases[i], 970 + 4 * i, K);
    for (int t = 1; t <= 200; t++) {
      CU_ASSERT_FATAL(lbmc_engine_occupancy.advance(e.ws, 0.5 * t, rec) == LBMC_SUCCESS);
      bad += ut_occ_state_errors(e.st);
      bad += ut_tick_errors(rec, J, K, 0.5, &prev_n);
    }
    UT_CHECK(bad == 0, "%s: %ld inconsistencies", cases[i].policy, bad);
    free(rec);
    oc_close(&e);
  }
}

/* Common random numbers: the occupancy and per-server engines see the same arrival
 * times (the same count in every tick, from the same arrival stream). */
static void test_common_arrivals(void)
{
  const double beta[] = {0.5, 0.5}, mu[] = {2, 1.0 / 3};
  ut_occ_conf c = {
      .n = 50, .J = 2, .beta = beta, .mu = mu, .policy = "pull", .routers = 2, .lambda = 1};
  oc_engine e;
  lbmc_engine *srv = NULL;
  int gennum[LBMC_PURPOSES] = {980, 981, 982, 983};
  const int K = 3;
  double *a = malloc(sizeof *a * lbmc_tick_width(2, K)),
         *b = malloc(sizeof *b * lbmc_tick_width(2, K));
  long diff = 0;
  oc_open(&e, &c, 980, K);
  CU_ASSERT_FATAL(lbmc_engine_create(e.m, K, 0, LBMC_ENGINE_SERVERS, &srv) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_engine_reset(srv, gennum, 777) == LBMC_SUCCESS);
  for (int t = 1; t <= 100; t++) {
    CU_ASSERT_FATAL(lbmc_engine_occupancy.advance(e.ws, 0.3 * t, a) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_engine_advance(srv, 0.3 * t, b) == LBMC_SUCCESS);
    diff += a[LBMC_TK_ARRIVALS] != b[LBMC_TK_ARRIVALS];
  }
  UT_CHECK(diff == 0, "%ld ticks with different arrival counts", diff);
  lbmc_engine_destroy(&srv);
  oc_close(&e);
  free(a);
  free(b);
}

/* Which models the engine takes, and the reasons it gives for the others. */
static void test_applies(void)
{
  static const struct {
    ut_occ_conf c;
    int applies;
    const char *why;
  } cases[] = {{{.n = 10, .policy = "jsq(2)"}, 1, ""},
               {{.n = 10, .policy = "lwl(2)"}, 0, "reads workloads"},
               {{.n = 10, .policy = "jiq", .routers = 2}, 0, "keep and R > 1"},
               {{.n = 10, .policy = "jiq"}, 1, ""},
               {{.n = 10, .policy = "pull", .routers = 2, .nrates = 2}, 0, "speed list and R > 1"},
               {{.n = 10, .policy = "pull", .nrates = 2}, 1, ""},
               {{.n = 1000000000000LL, .policy = "jsq(2)"}, 1, ""}};
  char why[256];
  for (int i = 0; i < 7; i++) {
    lbmc_model *m = ut_occ_model(&cases[i].c);
    int a;
    why[0] = '\0';
    a = lbmc_engine_occupancy.applies(m, why, sizeof why);
    UT_CHECK(a == cases[i].applies && strstr(why, cases[i].why), "%s: applies %d (%s)",
             cases[i].c.policy, a, why);
    lbmc_model_destroy(&m);
  }
  { /* general service, and a speed list that is not linear */
    ut_occ_conf c = {.n = 10, .policy = "random"};
    lbmc_model *m = ut_occ_model(&c);
    lbmc_service svc;
    const double rates[] = {1, 1.5};
    CU_ASSERT_FATAL(lbmc_service_parse("service", "erlang:k=2", &svc) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_model_set_service(m, -1, &svc) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_model_setup(m) == LBMC_SUCCESS);
    UT_CHECK(!lbmc_engine_occupancy.applies(m, why, sizeof why) && strstr(why, "general service"),
             "erlang service: %s", why);
    lbmc_service_exponential(&svc);
    CU_ASSERT_FATAL(lbmc_model_set_service(m, -1, &svc) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_model_set_rates(m, 0, 2, rates) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_model_setup(m) == LBMC_SUCCESS);
    UT_CHECK(!lbmc_engine_occupancy.applies(m, why, sizeof why) && strstr(why, "not linear"),
             "mu_k = (1, 1.5): %s", why);
    lbmc_model_destroy(&m);
  }
}

/* The dispatcher's choice (auto: occupancy, servers, lean, general in turn) and the messages
 * when the engine asked for does not apply. */
static void test_choice(void)
{
  static const struct {
    ut_occ_conf c;
    lbmc_engine_kind kind;
    const char *engine; /* NULL: none applies */
    const char *why;    /* in the message */
  } cases[] = {
      {{.n = 10, .policy = "jsq(2)"}, LBMC_ENGINE_AUTO, "occupancy", ""},
      {{.n = 10, .policy = "jsq(2)"}, LBMC_ENGINE_SERVERS, "servers", ""},
      {{.n = 10, .policy = "jiq", .routers = 2}, LBMC_ENGINE_AUTO, "servers", ""},
      {{.n = 10, .policy = "lwl(2)"}, LBMC_ENGINE_AUTO, "lean", ""},
      {{.n = 10, .policy = "pull", .nrates = 2}, LBMC_ENGINE_AUTO, "occupancy", ""},
      {{.n = 10, .policy = "pull", .routers = 2, .nrates = 2}, LBMC_ENGINE_AUTO, "general", ""},
      {{.n = 10, .policy = "lwl(2)"},
       LBMC_ENGINE_OCCUPANCY,
       NULL,
       "occupancy cannot simulate this model (lwl(2) reads workloads); engines that apply: "
       "lean, general"},
      {{.n = 10, .policy = "lwl(2)"},
       LBMC_ENGINE_SERVERS,
       NULL,
       "engines that apply: lean, general"},
      {{.n = 3000000000LL, .policy = "jsq(2)"}, LBMC_ENGINE_AUTO, "occupancy", ""},
      {{.n = 3000000000LL, .policy = "jsq(2)"},
       LBMC_ENGINE_SERVERS,
       NULL,
       "per-server limit of 2147483647 servers"},
      {{.n = 3000000000LL, .policy = "lwl(2)"}, LBMC_ENGINE_AUTO, NULL, "no engine"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lbmc_model *m = ut_occ_model(&cases[i].c);
    lbmc_run_options o;
    char why[1024];
    const char *name;
    lbmc_run_options_default(&o);
    o.engine = cases[i].kind;
    name = lbmc_run_engine(m, &o, why, sizeof why);
    UT_CHECK(cases[i].engine ? name && strcmp(name, cases[i].engine) == 0 && !*why
                             : !name && strstr(why, cases[i].why),
             "case %zu (%s, %s): %s, %s", i, cases[i].c.policy,
             lbmc_engine_kind_name(cases[i].kind), name ? name : "none", why);
    lbmc_model_destroy(&m);
  }
}

/* ---- mixture ---- */

/* Packed bytes: unpacking gives the same counts and quantiles; adding a packed copy
 * doubles the counts; a cut-short packing is refused. */
static void test_mixture_bytes(void)
{
  const double mu[] = {1.5, 0.25};
  const int L[] = {2, 1};
  lbmc_mixture *a = NULL, *b = NULL;
  unsigned char buf[4096];
  size_t size, used = 0;
  CU_ASSERT_FATAL(lbmc_mixture_create(2, mu, L, &a) == LBMC_SUCCESS);
  for (uint32_t i = 0; i < 200; i++) CU_ASSERT_FATAL(lbmc_mixture_record(a, i % 2, i % 13) == 0);
  size = lbmc_mixture_packed_size(a);
  UT_CHECK(size == 8 + 2 * 16 + 8 * (13 + 13), "packed size %zu", size);
  CU_ASSERT_FATAL(lbmc_mixture_pack(a, buf, sizeof buf) == size);
  CU_ASSERT_EQUAL(lbmc_mixture_pack(a, buf, size - 1), 0);
  CU_ASSERT_FATAL(lbmc_mixture_unpack(buf, size, &b, &used) == LBMC_SUCCESS);
  CU_ASSERT_EQUAL(used, size);
  UT_CHECK(lbmc_mixture_total(b) == 200, "unpacked total %llu",
           (unsigned long long)lbmc_mixture_total(b));
  for (double p = 0.1; p < 1; p += 0.2)
    UT_CHECK(lbmc_mixture_quantile(a, LBMC_MIX_SOJOURN, p) ==
                 lbmc_mixture_quantile(b, LBMC_MIX_SOJOURN, p),
             "quantile %g after a round trip", p);
  CU_ASSERT_FATAL(lbmc_mixture_add(b, a) == LBMC_SUCCESS);
  UT_CHECK(lbmc_mixture_total(b) == 400, "total after adding");
  lbmc_mixture_destroy(&b);
  CU_ASSERT(lbmc_mixture_unpack(buf, size - 8, &b, NULL) != LBMC_SUCCESS && b == NULL);
  lbmc_mixture_destroy(&a);
}

static void test_mixture(void)
{
  const double mu[] = {2, 0.5};
  const int L1[] = {1, 1}, L3[] = {3, 1};
  lbmc_mixture *a = NULL, *b = NULL, *c = NULL;
  CU_ASSERT_FATAL(lbmc_mixture_create(2, mu, L1, &a) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_mixture_create(2, mu, L1, &b) == LBMC_SUCCESS);
  /* one class: quantiles of Erlang(k + 1, mu) and, for the wait, Erlang(k, mu) */
  for (int i = 0; i < 10; i++) CU_ASSERT_FATAL(lbmc_mixture_record(a, 1, 3) == 0);
  for (double p = 0.1; p < 1; p += 0.2) {
    double want = gsl_cdf_gamma_Pinv(p, 4, 1 / 0.5),
           got = lbmc_mixture_quantile(a, LBMC_MIX_SOJOURN, p);
    UT_CHECK(fabs(got - want) <= 1e-10 * want, "Erlang(4, 0.5) quantile %g: %.15g vs %.15g", p, got,
             want);
    want = gsl_cdf_gamma_Pinv(p, 3, 1 / 0.5);
    got = lbmc_mixture_quantile(a, LBMC_MIX_WAIT, p);
    UT_CHECK(fabs(got - want) <= 1e-10 * want, "Erlang(3, 0.5) quantile %g", p);
  }
  /* a mixture: the cdf at its quantile is p; pooling by add equals recording both */
  for (int i = 0; i < 30; i++) CU_ASSERT_FATAL(lbmc_mixture_record(b, 0, (uint32_t)(i % 5)) == 0);
  CU_ASSERT_FATAL(lbmc_mixture_create(2, mu, L1, &c) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_mixture_add(c, a) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_mixture_add(c, b) == LBMC_SUCCESS);
  UT_CHECK(lbmc_mixture_total(c) == 40, "pooled total %llu",
           (unsigned long long)lbmc_mixture_total(c));
  for (double p = 0.05; p < 1; p += 0.1) {
    double t = lbmc_mixture_quantile(c, LBMC_MIX_SOJOURN, p);
    double F =
        (10 * gsl_cdf_gamma_P(t, 4, 2) +
         6 * (gsl_cdf_gamma_P(t, 1, 0.5) + gsl_cdf_gamma_P(t, 2, 0.5) + gsl_cdf_gamma_P(t, 3, 0.5) +
              gsl_cdf_gamma_P(t, 4, 0.5) + gsl_cdf_gamma_P(t, 5, 0.5))) /
        40;
    UT_CHECK(fabs(F - p) < 1e-10, "mixture cdf at its %g-quantile: %.12g", p, F);
  }
  /* waits: 6 of 40 did not wait (class (0, 0)): quantiles up to 0.15 are 0 */
  UT_CHECK(lbmc_mixture_quantile(c, LBMC_MIX_WAIT, 0.14) == 0, "wait quantile in the atom");
  UT_CHECK(lbmc_mixture_quantile(c, LBMC_MIX_WAIT, 0.16) > 0, "wait quantile past the atom");
  UT_CHECK(fabs(lbmc_mixture_mean(c, LBMC_MIX_SOJOURN) -
                (10 * 8.0 + 6 * (1 + 2 + 3 + 4 + 5) / 2.0) / 40) < 1e-12,
           "mixture mean");
  lbmc_mixture_destroy(&a);
  lbmc_mixture_destroy(&b);
  lbmc_mixture_destroy(&c);
  /* slots: L = 3 at mu = 2 per slot, class k = 5: W ~ Erlang(3, 6), S = W + Exp(2);
   * the cdf of S against a numerical convolution */
  CU_ASSERT_FATAL(lbmc_mixture_create(2, mu, L3, &a) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_mixture_record(a, 0, 5) == 0);
  for (double t = 0.25; t < 4; t += 0.5) {
    double conv = 0, h = t / 20000;
    for (int i = 0; i < 20000; i++) { /* int_0^t f_W(w) P(Y <= t - w) dw, midpoint */
      double w = (i + 0.5) * h;
      conv += gsl_ran_gamma_pdf(w, 3, 1.0 / 6) * -expm1(-2 * (t - w)) * h;
    }
    UT_CHECK(fabs(lbmc_mixture_cdf(a, LBMC_MIX_SOJOURN, t) - conv) < 1e-7,
             "slots: cdf(%g) = %.10g, convolution %.10g", t,
             lbmc_mixture_cdf(a, LBMC_MIX_SOJOURN, t), conv);
  }
  UT_CHECK(fabs(lbmc_mixture_mean(a, LBMC_MIX_WAIT) - 0.5) < 1e-12, "slots: mean wait 3/6");
  lbmc_mixture_destroy(&a);
}

/* ---- initial states ---- */

static void test_round(void)
{
  const double s[] = {0.5, 0.3, 0.15, 0.04, 0.01};
  const int64_t N = 1001;
  double mean[5] = {0};
  int64_t x[5];
  lbmc_stream st = {0};
  CU_ASSERT_FATAL(lbmc_stream_init(&st, 990, 5) == LBMC_SUCCESS);
  for (int t = 0; t < 20000; t++) {
    int64_t sum = 0;
    lbmc_occ_round(s, 5, N, lbmc_u01(&st), x);
    for (int k = 0; k < 5; k++) {
      sum += x[k];
      UT_CHECK(x[k] == (int64_t)floor(s[k] * N) || x[k] == (int64_t)ceil(s[k] * N),
               "count %lld for target %g", (long long)x[k], s[k] * N);
      mean[k] += (double)x[k] / 20000;
    }
    UT_CHECK(sum == N, "counts sum to %lld", (long long)sum);
  }
  for (int k = 0; k < 5; k++) /* each count is a two-point variable with spread <= 1 */
    UT_CHECK(fabs(mean[k] - s[k] * N) <= UT_Z * 0.5 / sqrt(20000.0), "mean count %g vs %g", mean[k],
             s[k] * N);
  lbmc_stream_free(&st);
}

static void test_split(void)
{
  lbmc_stream st = {0};
  gsl_rng *r = NULL;
  int64_t out[7], sum = 0;
  long first = 0;
  CU_ASSERT_FATAL(lbmc_stream_init(&st, 991, 5) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_sampler_create(&st, &r) == LBMC_SUCCESS);
  lbmc_occ_split_equal(r, 1000000000000LL, 7, out);
  for (int i = 0; i < 7; i++) {
    sum += out[i];
    UT_CHECK(fabs((double)out[i] - 1e12 / 7) < UT_Z * sqrt(1e12 / 7), "cell %d: %lld", i,
             (long long)out[i]);
  }
  UT_CHECK(sum == 1000000000000LL, "split sums to %lld", (long long)sum);
  for (int t = 0; t < 20000; t++) {
    lbmc_occ_split_equal(r, 4, 3, out);
    first += out[0];
  }
  UT_CHECK_NORMAL("Binomial(4, 1/3) mean", first / 20000.0, 4.0 / 3, sqrt(4 * 2.0 / 9 / 20000));
  lbmc_sampler_destroy(&r);
  lbmc_stream_free(&st);
}

/* The mean-field ODE's stationary points against the known fixed points. */
static void test_meanfield(void)
{
  lbmc_occ_mf_point pt;
  { /* JSQ(2): tail fractions lambda^(2^k - 1) */
    ut_occ_conf c = {.n = 1000000000, .policy = "jsq(2)", .lambda = 0.9};
    lbmc_model *m = ut_occ_model(&c);
    CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m, m->policy->occupancy, &pt) == LBMC_SUCCESS);
    UT_CHECK(pt.settled, "jsq(2): %s", pt.note);
    for (uint32_t k = 1; k <= 6 && pt.settled; k++) {
      double tail = 0;
      for (uint32_t i = k; i < pt.levels; i++) tail += pt.s[i];
      UT_CHECK(fabs(tail - pow(0.9, pow(2, k) - 1)) < 1e-8, "jsq(2) tail %u: %.12g vs %.12g", k,
               tail, pow(0.9, pow(2, k) - 1));
    }
    lbmc_occ_meanfield_free(&pt);
    lbmc_model_destroy(&m);
  }
  { /* PULL, the paper's example: busy fractions a / (a + mu_j), a = 5 + sqrt(29) */
    const double beta[] = {0.5, 0.5}, mu[] = {2, 1.0 / 3}, a = 5 + sqrt(29.0);
    ut_occ_conf c = {
        .n = 1000000000, .J = 2, .beta = beta, .mu = mu, .policy = "pull", .lambda = 1};
    lbmc_model *m = ut_occ_model(&c);
    CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m, m->policy->occupancy, &pt) == LBMC_SUCCESS);
    UT_CHECK(pt.settled, "pull: %s", pt.note);
    for (uint32_t j = 0; j < 2 && pt.settled; j++)
      UT_CHECK(fabs(1 - pt.s[j * pt.levels] - a / (a + mu[j])) < 1e-8, "pull pool %u busy %.12g",
               j + 1, 1 - pt.s[j * pt.levels]);
    lbmc_occ_meanfield_free(&pt);
    lbmc_model_destroy(&m);
  }
  { /* random, M/M/1 queues: s(k) = (1 - rho) rho^k */
    ut_occ_conf c = {.n = 1000, .policy = "random", .lambda = 0.8};
    lbmc_model *m = ut_occ_model(&c);
    CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m, m->policy->occupancy, &pt) == LBMC_SUCCESS);
    UT_CHECK(pt.settled, "random: %s", pt.note);
    for (uint32_t k = 0; k < 10 && pt.settled; k++)
      UT_CHECK(fabs(pt.s[k] - 0.2 * pow(0.8, k)) < 1e-8, "random s(%u) = %.12g", k, pt.s[k]);
    lbmc_occ_meanfield_free(&pt);
    lbmc_model_destroy(&m);
  }
  { /* JSQ(2) on the PULL example: unstable, the ODE does not settle */
    const double beta[] = {0.5, 0.5}, mu[] = {2, 1.0 / 3};
    ut_occ_conf c = {.n = 1000000, .J = 2, .beta = beta, .mu = mu, .policy = "jsq(2)", .lambda = 1};
    lbmc_model *m = ut_occ_model(&c);
    CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m, m->policy->occupancy, &pt) == LBMC_SUCCESS);
    UT_CHECK(!pt.settled && strstr(pt.note, "unstable"), "jsq(2) example: %s", pt.note);
    lbmc_occ_meanfield_free(&pt);
    lbmc_model_destroy(&m);
  }
}

int ut_register_occupancy(void)
{
  static const ut_test tests[] = {
      {"exact uniform integers on 52-bit words", test_uint},
      {"pairs of distinct positions from one number", test_pair1},
      {"level of a position: binary lifting", test_level_search},
      {"jsq(2) one-pool route: one level search", test_route_pair2},
      {"Fenwick tree", test_fenwick},
      {"jsq(d), random, balanced(c): classes vs enumeration", test_route_sampling},
      {"jsq: lowest level", test_route_jsq},
      {"pull, R = 1: idle slots", test_route_pull1},
      {"pull, R = 3 and 20, withdraw: messages by router", test_route_pull_routers},
      {"state invariants and tick records", test_invariants},
      {"common arrivals with the per-server engine", test_common_arrivals},
      {"which models apply", test_applies},
      {"engine choice and messages", test_choice},
      {"Erlang mixture: quantiles, pooling, slots", test_mixture},
      {"Erlang mixture: packed bytes", test_mixture_bytes},
      {"randomised rounding", test_round},
      {"binomial splits up to 10^12", test_split},
      {"mean-field fixed points", test_meanfield},
      {NULL, NULL}};
  return ut_add_suite("occupancy engine", tests);
}
