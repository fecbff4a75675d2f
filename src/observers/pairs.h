/* Private: the block of the pair statistics in a tick record (pairs.c, the observer;
 * read by the point, src/sim/point_pairs.c; docs/model.md, "Pair statistics").
 *
 * Levels a = 0 .. K (C = K + 1 of them): a server holding a customers for a < K, and
 * "at least K" for a = K; x_{j,a} = servers of pool j at level a. Per tick [t0, t1]:
 *   within pool j, for 0 <= a <= b <= K (the upper triangle, row after row):
 *     the integral of x_{j,a} (x_{j,b} - 1{a = b}) dt, the ordered pairs of distinct
 *     servers of the pool at levels (a, b): P(Q1 = a, Q2 = b) is its time average over
 *     N_j (N_j - 1);
 *   across pools i < j (in the order (0,1), (0,2), ..., (J-2, J-1)), for a, b = 0 .. K
 *   (a row-major square, a pool i's level):
 *     the integral of x_{i,a} x_{j,b} dt: P(Q1 = a in pool i, Q2 = b in pool j) is its
 *     time average over N_i N_j.
 * The marginals, the integrals of x_{j,a}, are the tick record's own (src/core/ticks.h:
 * the time x N_j and the integrals of the servers holding at least k). */
#ifndef LBMC_OBSERVERS_PAIRS_H
#define LBMC_OBSERVERS_PAIRS_H

#include <stddef.h>

#include "observer.h"

/** The observer (pairs.c), wanted by runs with run.pairs. */
extern const lbmc_observer_type lbmc_observer_pairs;

/** Entries of pool j's triangle, C = K + 1 levels. */
static inline size_t lbmc_pairs_triangle(int K) { return (size_t)(K + 1) * (size_t)(K + 2) / 2; }

/** Doubles of the block for J pools and K + 1 levels. */
static inline size_t lbmc_pairs_width(int J, int K)
{
  const size_t C = (size_t)K + 1;
  return (size_t)J * lbmc_pairs_triangle(K) + (size_t)J * (size_t)(J - 1) / 2 * C * C;
}

/** Offset in the block of pool j's entry (a, b), any order of a and b. */
static inline size_t lbmc_pairs_within(int K, int j, int a, int b)
{
  const size_t C = (size_t)K + 1, lo = (size_t)(a < b ? a : b), hi = (size_t)(a < b ? b : a);
  return (size_t)j * lbmc_pairs_triangle(K) + lo * C - lo * (lo - 1) / 2 + (hi - lo);
}

/** Offset in the block of the entry (a in pool i, b in pool j), i != j, any order of the
 *  pools. */
static inline size_t lbmc_pairs_across(int J, int K, int i, int j, int a, int b)
{
  const size_t C = (size_t)K + 1;
  size_t pair;
  if (i > j) {
    int t = i;
    i = j, j = t, t = a, a = b, b = t;
  }
  /* pairs before (i, j): those of the pools before i, then (i, i+1) .. (i, j-1) */
  pair = (size_t)i * (size_t)(2 * J - i - 1) / 2 + (size_t)(j - i - 1);
  return (size_t)J * lbmc_pairs_triangle(K) + pair * C * C + (size_t)a * C + (size_t)b;
}

#endif
