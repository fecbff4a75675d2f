/* Private: the state of the occupancy engine (docs/occupancy.md) and the
 * read-only primitives its events and the policies' occupancy forms share (exact
 * uniform integers, the level of a position, classes). It sits with the per-server
 * state (state.h) below the policies; the engine's own state changes (admissions,
 * departures, growing the arrays) are in src/engine/occupancy.h.
 *
 * With exponential service and a policy that treats the servers of a pool alike, the
 * vector of counts "servers of pool j holding k customers" is itself a Markov chain with
 * the law of the per-server system (lumpability). A pool is stored as its tail counts
 *     G[k] = servers of the pool holding at least k customers,   k = 0 .. top + 1,
 * G[0] = N_j, G nonincreasing, G[top + 1] = 0. An admission at a server holding a moves
 * one server from level a to a + 1: only G[a + 1] changes (+1); a departure from level
 * a + 1 undoes it. Updates are O(1). The servers of a pool are given positions
 * 0 .. N_j - 1 ordered by level, highest first: position P holds level
 *     level(P) = largest k with G[k] > P,
 * so exactly G[k] - G[k+1] positions hold level k, the servers at level >= i are the
 * positions [0, G[i]) and the idle ones [G[1], N_j). A uniform server (or a uniform busy
 * one, or a uniform one below level i) is a uniform integer position in the right range
 * and its level is found by bisection, O(log levels), never a scan of the levels.
 *
 * Uniform integers come from lbmc_occ_uint, exact (Lemire's multiply-and-reject on the
 * 52 random bits of one SPRNG double): a plain floor(u * N) would give some of the 10^12
 * positions 4504 of the 2^52 values of u and others 4503, a relative bias of 2e-4 on the
 * choice of rare classes; the rejection removes it at a cost of one 128-bit multiply.
 *
 * Levels are uint32_t (the G arrays would exhaust memory long before 2^32 levels);
 * counts are int64_t (n up to 10^12). */
#ifndef LBMC_OCC_STATE_H
#define LBMC_OCC_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/stream.h"
#include "../core/tally.h"
#include "../core/ziggurat.h"
#include "system.h"

struct lbmc_mixture_;
struct lbmc_occupancy_ops_;

/** Mask of the 52 random bits of a SPRNG double. */
#define LBMC_OCC_BITS 52
#define LBMC_OCC_MASK ((1ULL << LBMC_OCC_BITS) - 1)

/** One pool in occupancy form. */
typedef struct {
  int64_t *G;    /* cap entries: G[k] = servers holding >= k customers (0 beyond top) */
  uint32_t cap;  /* entries allocated; always >= 2 top + 2 and >= K + 2 */
  uint32_t top;  /* highest level held by a server (0: all idle) */
  uint32_t low;  /* lowest level held by a server */
  uint32_t B;    /* buffer, UINT32_MAX for unlimited */
  uint32_t L;    /* service slots L_j (1: plain server); speeds mu1 * min(q, L) */
  int64_t N;     /* servers */
  int64_t Q;     /* customers: sum_{k>=1} G[k] */
  int64_t S;     /* busy slots: sum_{i=1..L} G[i] (= G[1] when L = 1) */
  double mu1;    /* speed of one slot mu_j(1) */
  double w_wait; /* mean of one waiting phase 1 / mu_j(L) = 1 / (L mu1) */
  double w_slot; /* mean service time in a slot 1 / mu1 */
} lbmc_occ_pool;

/** A class of servers: pool j, level k; and, when the occupancy form chose a server by
 *  its position, 1 + its rank among the class's servers (position - G[k + 1]: uniform
 *  given the class, whatever else the form looked at, since the servers of a class are
 *  exchangeable), else 0. The phase-type engine reads the phase of the server off it
 *  (occ_ph.c); the exponential engine needs the class only. */
typedef struct {
  uint32_t j, k;
  uint64_t rank1;
} lbmc_occ_class;

typedef struct lbmc_occ_state_ {
  /* Model, read-only during a run. */
  const lbmc_model *m;
  uint32_t J, K, R;
  int64_t n;
  int64_t off[LBMC_MAX_POOLS + 1]; /* first position of each pool among the n; off[J] = n */
  lbmc_zig_exp zig;

  /* State. */
  double t;
  lbmc_occ_pool pool[LBMC_MAX_POOLS];

  /* Streams (owned by the caller of reset). */
  lbmc_stream *s_arr, *s_svc, *s_route;

  /* The tick accumulator (src/core/tally.h): counters (the occupancy forms count their
   * messages in tally.c.messages and tally.c.withdrawals), integrals, customers in the
   * system, the runaway cap, why the engine halted. */
  lbmc_tally tally;
  int64_t phases[LBMC_MAX_POOLS]; /* waiting phases of the admitted, cumulative: the sum of
                                     (k - L + 1)^+ over the classes (j, k) joined */
  struct lbmc_mixture_ *mix;      /* arrival classes of the admitted (per-customer quantiles) */

  /* Policy in occupancy form. */
  const struct lbmc_occupancy_ops_ *ops;
  void *pw;

  /* Pairs of distinct positions from one number (lbmc_occ_pair1): pair_N = n (n - 1) when
   * the engine asks for it and n (n - 1) <= LBMC_OCC_PAIR1_MAX, else 0 (two numbers, one
   * per position: the exponential occupancy engine keeps them, its streams unchanged);
   * pair_thr = 2^52 mod pair_N, the rejection threshold. */
  uint64_t pair_N, pair_thr;
} lbmc_occ_state;

/** Largest n (n - 1) drawn from one number: the rejection then discards less than 1/16
 *  of the numbers (n <= 16777216). */
#define LBMC_OCC_PAIR1_MAX (1ULL << 48)

/** Uniform integer on {0, ..., n-1}, exact, for 1 <= n <= 2^52 (Lemire, "Fast random
 *  integer generation in an interval", ACM TOMACS 29(1), 2019, with 52-bit words:
 *  b n / 2^52 is accepted unless its low part falls in the 2^52 mod n values that would
 *  favour some results; the division runs only when the low part is below n). */
static inline uint64_t lbmc_occ_uint(lbmc_stream *s, uint64_t n)
{
  for (;;) {
    uint64_t b = (uint64_t)(int64_t)(lbmc_u01(s) * 0x1p52); /* < 2^52: the signed conversion */
    unsigned __int128 m = (unsigned __int128)b * n;
    uint64_t l = (uint64_t)m & LBMC_OCC_MASK;
    if (l < n && l < (1ULL << LBMC_OCC_BITS) % n) continue;
    return (uint64_t)(m >> LBMC_OCC_BITS);
  }
}

/** An ordered pair of distinct positions (a, b), uniform over the N = n (n - 1) of
 *  {0 .. n-1}, from one 52-bit number where two would otherwise be used (st->pair_N =
 *  N <= 2^52, st->pair_thr = 2^52 mod N): X = floor(w N / 2^52) by Lemire's multiply and
 *  reject (lbmc_occ_uint) is uniform on {0 .. N-1}; a = floor(X / (n - 1)) =
 *  floor(w n / 2^52) (a floor of a floor divided by an integer), b' = X - a (n - 1) <
 *  n - 1 uniform given a, and b = b' + (b' >= a) skips a: the law of lbmc_occ_uint(n)
 *  then lbmc_occ_uint(n - 1), with multiplies only. */
static inline void lbmc_occ_pair1(const lbmc_occ_state *st, lbmc_stream *s, uint64_t *a,
                                  uint64_t *b)
{
  const uint64_t n = (uint64_t)st->n, N = st->pair_N;
  for (;;) {
    uint64_t w = (uint64_t)(int64_t)(lbmc_u01(s) * 0x1p52), x, y;
    unsigned __int128 m = (unsigned __int128)w * N;
    if (((uint64_t)m & LBMC_OCC_MASK) < st->pair_thr) continue;
    x = (uint64_t)(m >> LBMC_OCC_BITS);
    *a = (uint64_t)(((unsigned __int128)w * n) >> LBMC_OCC_BITS);
    y = x - *a * (n - 1);
    *b = y + (y >= *a);
    return;
  }
}

/** Level of position P (0 <= P < N) of pool p: the largest k with G[k] > P, by binary
 *  lifting over the powers of two below top + 1 (conditional moves, no branch on the
 *  data): floor(log2(top + 1)) + 1 steps, reading G up to 2 top + 1 (zeros past top; the
 *  arrays keep that room, lbmc_occ_room). */
static inline uint32_t lbmc_occ_level(const lbmc_occ_pool *p, int64_t P)
{
  const int64_t *G = p->G;
  uint32_t k = 0;
  for (uint32_t step = 1u << (31 - __builtin_clz(p->top + 1)); step; step >>= 1)
    k = G[k + step] > P ? k + step : k;
  return k;
}

/** Pool of global position Q (0 <= Q < n). O(J). */
static inline uint32_t lbmc_occ_pool_of(const lbmc_occ_state *st, int64_t Q)
{
  uint32_t j = 0;
  while (j + 1 < st->J && Q >= st->off[j + 1]) j++;
  return j;
}

/** Class of global position Q: a uniform server of the system when Q is uniform. */
static inline lbmc_occ_class lbmc_occ_class_of(const lbmc_occ_state *st, int64_t Q)
{
  lbmc_occ_class c;
  c.j = lbmc_occ_pool_of(st, Q);
  c.k = lbmc_occ_level(&st->pool[c.j], Q - st->off[c.j]);
  c.rank1 = (uint64_t)(Q - st->off[c.j] - st->pool[c.j].G[c.k + 1]) + 1;
  return c;
}

/** Servers of pool p at level k. */
static inline int64_t lbmc_occ_count(const lbmc_occ_pool *p, uint32_t k)
{
  return k > p->top ? 0 : p->G[k] - p->G[k + 1];
}

/** Idle slots of pool p: sum_{i=1..L} (N - G[i]) (idle servers when L = 1). */
static inline int64_t lbmc_occ_idle_slots(const lbmc_occ_pool *p)
{
  return (int64_t)p->L * p->N - p->S;
}

#endif
