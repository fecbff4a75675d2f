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
 *
 * Phase-type pools (the phase-type occupancy engine; lbmc_mixture_set_ph): a pool whose
 * service law is phase type (alpha, T) with m > 1 phases (plain servers) counts its
 * admissions per class (k, p), k the customers found at the server and p the phase of
 * the one in service (p = 0 when k = 0), at entry e = k m + p of its counts. Given the
 * class, FCFS, the wait is the time the server's phase process, started in phase p,
 * takes to complete k requirements (the residual of the one in service, then k - 1
 * fresh ones started from alpha), and the sojourn the time to k + 1 (for k = 0: one
 * fresh requirement); in requirement units, divided by mu_j. Their distribution
 * functions come from uniformisation of that process (the "deficit" chain of
 * completions still needed, with every class of the pool started at once, so that one
 * pass serves the whole mixture): P(T <= t) = sum_n Pois(theta mu_j t; n) D_n / total,
 * D_n the mass absorbed after n uniformised steps, theta = max_p -T_pp; the Poisson
 * weights are cut where the omitted mass is below LBMC_MIX_PH_EPS on either side, so the
 * distribution function is exact to that absolute error (plus rounding). D_n is kept
 * and extended on demand (a cache in the mixture, filled by the const functions below:
 * one mixture must not be read by two threads at once). At most LBMC_MIX_PH_MAX_STEPS
 * steps: a distribution function that would need more is NaN (theta mu_j t above about
 * 4 x 10^6, far beyond any quantile of a stable system).
 */
#ifndef LBMC_MIXTURE_H
#define LBMC_MIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "lbmc/error.h"
#include "lbmc/types.h"

typedef enum { LBMC_MIX_SOJOURN = 0, LBMC_MIX_WAIT = 1 } lbmc_mix_kind;

/** Absolute error of a phase-type pool's distribution function from the Poisson
 *  weights left out (each side gets half). */
#define LBMC_MIX_PH_EPS 1e-13
/** Most uniformised steps kept per phase-type pool and kind (8 bytes each). */
#define LBMC_MIX_PH_MAX_STEPS (1u << 22)

/** A phase-type pool's law and its uniformisation caches (mixture.c). */
typedef struct lbmc_mix_ph_ lbmc_mix_ph;

typedef struct lbmc_mixture_ {
  uint32_t J;
  uint32_t L[LBMC_MAX_POOLS];      /* slots of each pool */
  double mu1[LBMC_MAX_POOLS];      /* speed of a slot mu_j(1) */
  uint64_t *c[LBMC_MAX_POOLS];     /* c[j][e]: admissions of class e (k customers found: e = k,
                                      or e = k m + p in a phase-type pool) */
  uint32_t cap[LBMC_MAX_POOLS];    /* entries allocated in c[j] */
  uint32_t m[LBMC_MAX_POOLS];      /* phases: 1 (exponential service), or m > 1 */
  lbmc_mix_ph *ph[LBMC_MAX_POOLS]; /* the law of a pool with m > 1 (owned), else NULL */
} lbmc_mixture;

/** An empty mixture for J pools with slot speeds mu1[J] and slots L[J] (1: plain
 *  servers). Caller owns *mx (lbmc_mixture_destroy). Errors: LBMC_ERR_MEMORY,
 *  LBMC_ERR_ARG (J out of range, mu1 <= 0, L < 1). */
lbmc_err lbmc_mixture_create(int J, const double *mu1, const int *L, lbmc_mixture **mx);
void lbmc_mixture_destroy(lbmc_mixture **mx);
/** Make pool j (empty, L_j = 1) a phase-type pool with the law (alpha, T) of m phases
 *  (1 < m <= LBMC_PH_MAX_PHASES; T row-major m x m, rates per unit of requirement), its
 *  exit rates exit = -T 1 and mean residual requirements residual = (-T)^-1 1 (m each,
 *  as lbmc_service_ph_exit / _residual give them; copied). m = 1 leaves the pool
 *  exponential. Errors: LBMC_ERR_ARG (j or m out of range, slots, counts already
 *  recorded), LBMC_ERR_MEMORY. */
lbmc_err lbmc_mixture_set_ph(lbmc_mixture *mx, int j, int m, const double *alpha, const double *T,
                             const double *exit, const double *residual);
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

/** Add another mixture's counts (same pools, speeds and laws). Errors: LBMC_ERR_ARG
 *  (different pools), LBMC_ERR_MEMORY. */
lbmc_err lbmc_mixture_add(lbmc_mixture *dst, const lbmc_mixture *src);
/** Add counts[levels] to pool j (e.g. received from another MPI rank). Errors:
 *  LBMC_ERR_ARG, LBMC_ERR_MEMORY. */
lbmc_err lbmc_mixture_add_counts(lbmc_mixture *mx, int j, const uint64_t *counts, uint32_t levels);
/** Pool j's counts: *counts points at them (owned by mx); returns the number of levels
 *  up to the highest nonzero one (0 when empty). */
uint32_t lbmc_mixture_counts(const lbmc_mixture *mx, int j, const uint64_t **counts);
/** Bytes of the packed form of mx (lbmc_mixture_pack): 8 + 16 J + 8 per level up to
 *  each pool's highest nonzero count; with phase-type pools 8 + 20 J + 8 per class and
 *  8 (m^2 + 3 m) per phase-type pool (its law travels with it). */
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
/** Bytes held (header, counts, phase-type laws and their caches). */
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
