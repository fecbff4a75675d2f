/* Private: the joint law of two distinct servers' queue lengths and its distance from
 * the product of the marginals, from independent units (docs/model.md, "Pair
 * statistics"). Pure functions on caller-owned arrays, as estimators.h: no allocation,
 * nothing collective.
 *
 * Unit u of U (a replica, or a batch of one replica) holds, for C levels (a server
 * holding a customers for a < C - 1, at least C - 1 for the last):
 *   L_u         its time;
 *   Y_u[a][b]   the integral over its time of the ordered pairs of distinct servers at
 *               levels (a, b): x_a (x_b - 1{a = b}) within a pool of N servers, x_{1,a}
 *               x_{2,b} across two pools;
 *   F_u[a]      the integral of the first server's pool's count x_{1,a};
 *   H_u[b]      the same for the second server's pool (within a pool: F).
 * The joint law P(a, b) = E[Y(a, b)] / (pairs L), pairs = N (N - 1) or N_1 N_2; the
 * marginals p(a) = E[F(a)] / (N_1 L), q(b) = E[H(b)] / (N_2 L).
 *
 * The deviation from independence, D(a, b) = P(a, b) - p(a) q(b), is O(1/n): the
 * product of the pooled marginals p^(a) q^(b) is biased by their covariance, which is of
 * the order of Var / T, the same order as D itself at large n. The estimate
 *   D^(a, b) = P^(a, b) - p^(a) q^(b) + m/(m - 1) sum_u w_u^2 (p_u(a) - p^(a))(q_u(b) - q^(b)),
 * w_u = L_u / sum L, p_u the unit's own marginal, removes that covariance: with equal
 * L_u it is P^ minus the U-statistic of products of *different* units' marginals,
 * (1 / (m (m - 1))) sum_{u != v} p_u(a) q_v(b), unbiased for p(a) q(b) because the units
 * are independent. Intervals: the delta method (first order in the units' residuals;
 * the correction is of second order) with Student t on m - 1 degrees of freedom. */
#ifndef LBMC_PAIRLAW_H
#define LBMC_PAIRLAW_H

#include <stddef.h>

#include "estimators.h"

/** The units' integrals (layout above): arrays owned by the caller. */
typedef struct {
  size_t U, C;          /* units, levels */
  const double *L;      /* U */
  const double *Y;      /* U x C x C, unit-major, then a, then b */
  const double *F, *H;  /* U x C each (H may equal F) */
  double pairs, N1, N2; /* ordered pairs of distinct servers; the two pools' servers */
} lbmc_pair_data;

/** The pooled estimates over units [from, to): arrays owned by the caller. */
typedef struct {
  size_t from, to;
  double Lsum, Lbar;     /* sum of L_u, and its mean over the units */
  double *P, *p, *q, *D; /* C x C, C, C, C x C: the joint law, the marginals, D^ */
} lbmc_pair_fit;

/** Fill f (its arrays and from, to set) from the units [f->from, f->to) of d: P^, p^, q^
 *  and D^ with the product correction (D^ NaN with fewer than two units, or no time or
 *  no pairs). */
void lbmc_pair_fit_units(const lbmc_pair_data *d, lbmc_pair_fit *f);

/** sum_{a,b} W[a C + b] D(a, b) over the units of f (fitted), with its delta-method
 *  interval at the two-sided level: unit u's residual is
 *  sum W (Y_u / pairs - P^ L_u) - sum_a (W q^)_a (F_u(a) / N1 - p^(a) L_u)
 *  - sum_b (W' p^)_b (H_u(b) / N2 - q^(b) L_u), over the mean L; se^2 = sum of their
 *  squares / (m (m - 1)). LBMC_IV_EMPTY without time or pairs; LBMC_IV_NO_INTERVAL (and
 *  a NaN estimate: D^ cannot be corrected) with fewer than two units. */
void lbmc_pair_linear(const lbmc_pair_data *d, const lbmc_pair_fit *f, const double *W,
                      double level, lbmc_interval *out);

/** D(a, b) alone: lbmc_pair_linear with W the indicator of (a, b), in O(units). */
void lbmc_pair_entry(const lbmc_pair_data *d, const lbmc_pair_fit *f, size_t a, size_t b,
                     double level, lbmc_interval *out);

/** The joint law P(a, b) over the units of f with the Korn-Graubard interval of a time
 *  fraction (lbmc_proportion_interval); work: 2 U doubles. */
void lbmc_pair_joint(const lbmc_pair_data *d, const lbmc_pair_fit *f, size_t a, size_t b,
                     double level, double *work, lbmc_interval *out);

/** The total-variation distance tv = 1/2 sum_{a,b} |D(a, b)| by cross-fitting over the
 *  halves A = [0, U/2) and B = [U/2, U) of the units (fitted as fa and fb): the signs
 *  s_A of D^ from A weigh the differences D^ from B and the other way round,
 *    tv^ = (1/2 sum s_A D^_B + 1/2 sum s_B D^_A) / 2.
 *  A sign and a difference from independent units: where D = 0 a term has mean 0
 *  (the plug-in 1/2 sum |D^| has mean about 0.8 se per entry instead), where |D| is large
 *  against its error the sign is right and the term unbiased, and in between the mean is
 *  |D| (1 - 2 P(wrong sign)) <= |D|: never above tv. Its std_err is the sum of the two
 *  halves' own (delta method, signs held fixed) over 2, which bounds the true one whatever
 *  the two halves' correlation; t on min(m_A, m_B) - 1 degrees of freedom. Needs two
 *  units in each half (else a NaN estimate and LBMC_IV_NO_INTERVAL). work: C x C doubles. */
void lbmc_pair_tv(const lbmc_pair_data *d, const lbmc_pair_fit *fa, const lbmc_pair_fit *fb,
                  double level, double *work, lbmc_interval *out);

#endif
