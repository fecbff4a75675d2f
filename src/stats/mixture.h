/* Private: the law of sojourn and waiting times as a mixture over arrival classes
 * (the occupancy engine's quantiles, docs/occupancy.md).
 *
 * With exponential service and FCFS, a customer admitted at a server of pool j that
 * holds k customers waits for (k - L_j + 1)^+ departures of that server, each after an
 * Exp(mu_j(L_j)) time (all its slots stay busy meanwhile, whatever arrives later), then
 * is served in a slot at speed mu_j(1) (speed lists are linear, mu_j(m) = m mu_j(1), in
 * the occupancy engine; L_j = 1 is the plain server):
 *     W | (j, k) ~ Erlang(a, L_j mu_j(1)),  a = (k - L_j + 1)^+   (W = 0 when a = 0),
 *     S | (j, k) = W + Exp(mu_j(1))          (Erlang(k + 1, mu_j) when L_j = 1).
 * The law of the sojourn (wait) time of a customer picked uniformly among the admitted
 * of a period is therefore the mixture of these laws weighted by the counts c_j(k) of
 * admissions per class: counts are all the summary holds. Replicas, batch groups or
 * MPI ranks are pooled by adding counts (lbmc_mixture_add, or the arrays of
 * lbmc_mixture_counts; lbmc_mixture_pack / unpack give the bytes); quantiles are roots of the
 * mixture's distribution function (GSL's incomplete gamma function and Brent's method), exact for
 * the mixture: no histogram binning. Size: 8 bytes per (pool, level) up to the highest level any
 * admitted customer found, plus a fixed header of about 1.5 KiB.
 */
#ifndef LBMC_MIXTURE_H
#define LBMC_MIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "lbmc/error.h"
#include "lbmc/types.h"

typedef enum { LBMC_MIX_SOJOURN = 0, LBMC_MIX_WAIT = 1 } lbmc_mix_kind;

typedef struct lbmc_mixture_ {
  uint32_t J;
  uint32_t L[LBMC_MAX_POOLS];   /* slots of each pool */
  double mu1[LBMC_MAX_POOLS];   /* speed of a slot mu_j(1) */
  uint64_t *c[LBMC_MAX_POOLS];  /* c[j][k]: admissions that found k customers */
  uint32_t cap[LBMC_MAX_POOLS]; /* entries allocated in c[j] */
} lbmc_mixture;

/** An empty mixture for J pools with slot speeds mu1[J] and slots L[J] (1: plain
 *  servers). Caller owns *mx (lbmc_mixture_destroy). Errors: LBMC_ERR_MEMORY,
 *  LBMC_ERR_ARG (J out of range, mu1 <= 0, L < 1). */
lbmc_err lbmc_mixture_create(int J, const double *mu1, const int *L, lbmc_mixture **mx);
void lbmc_mixture_destroy(lbmc_mixture **mx);
/** Forget every count (keeps the storage). */
void lbmc_mixture_clear(lbmc_mixture *mx);

/** Grow pool j's counts to hold level k; 0 on success, -1 when out of memory. */
int lbmc_mixture_grow(lbmc_mixture *mx, uint32_t j, uint32_t k);
/** One admission at pool j, level k (the hot path). 0 on success, -1 out of memory. */
static inline int lbmc_mixture_record(lbmc_mixture *mx, uint32_t j, uint32_t k)
{
  if (k >= mx->cap[j] && lbmc_mixture_grow(mx, j, k) != 0) return -1;
  mx->c[j][k]++;
  return 0;
}

/** Add another mixture's counts (same pools and speeds). Errors: LBMC_ERR_ARG
 *  (different pools), LBMC_ERR_MEMORY. */
lbmc_err lbmc_mixture_add(lbmc_mixture *dst, const lbmc_mixture *src);
/** Add counts[levels] to pool j (e.g. received from another MPI rank). Errors:
 *  LBMC_ERR_ARG, LBMC_ERR_MEMORY. */
lbmc_err lbmc_mixture_add_counts(lbmc_mixture *mx, int j, const uint64_t *counts, uint32_t levels);
/** Pool j's counts: *counts points at them (owned by mx); returns the number of levels
 *  up to the highest nonzero one (0 when empty). */
uint32_t lbmc_mixture_counts(const lbmc_mixture *mx, int j, const uint64_t **counts);
/** Bytes of the packed form of mx (lbmc_mixture_pack): 8 + 16 J + 8 per level up to
 *  each pool's highest nonzero count. */
size_t lbmc_mixture_packed_size(const lbmc_mixture *mx);
/** Write mx into buf[len] (native byte order, as the replica record), so that it can
 *  travel between MPI ranks or into a checkpoint; returns the bytes written, 0 if len
 *  is below lbmc_mixture_packed_size. */
size_t lbmc_mixture_pack(const lbmc_mixture *mx, void *buf, size_t len);
/** A new mixture (caller-owned) from the packed bytes buf[len]; *used (if not NULL) gets
 *  the bytes it took. Errors: LBMC_ERR_PARSE (not a packed mixture, or cut short),
 *  LBMC_ERR_MEMORY. */
lbmc_err lbmc_mixture_unpack(const void *buf, size_t len, lbmc_mixture **mx, size_t *used);
/** Admissions recorded. */
uint64_t lbmc_mixture_total(const lbmc_mixture *mx);
/** Bytes held (header and counts). */
size_t lbmc_mixture_bytes(const lbmc_mixture *mx);

/** P(T <= t) for T the sojourn (wait) time of a uniformly chosen recorded customer;
 *  NaN when empty. */
double lbmc_mixture_cdf(const lbmc_mixture *mx, lbmc_mix_kind kind, double t);
/** Mean of the same law (time units); NaN when empty. */
double lbmc_mixture_mean(const lbmc_mixture *mx, lbmc_mix_kind kind);
/** The p-quantile inf{t : P(T <= t) >= p}, 0 < p < 1, to a relative 1e-12; NaN when
 *  empty. (A wait quantile is 0 when at least a fraction p did not wait.) */
double lbmc_mixture_quantile(const lbmc_mixture *mx, lbmc_mix_kind kind, double p);

#endif
