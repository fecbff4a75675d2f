/* The routing laws and the large-n binomial splits that several policies' occupancy
 * forms share (occ_laws.h). */
#include "occ_laws.h"

#include <gsl/gsl_randist.h>
#include <math.h>

/* GSL's binomial sampler takes unsigned int trials: larger ones are summed in chunks. */
#define LBMC_BINOMIAL_CHUNK 2147483648LL

/* ---- Routing laws shared by policies ---- */

/* max(x, 0) without a libm call (fmax honours NaN rules and is not inlined). */
static inline double lbmc_mf_pos(double x) { return x > 0 ? x : 0.0; }

/* x^d for 0 <= x <= 1: products for small integer d (pow is slow in the ODE's loops). */
static double lbmc_mf_power(double x, double d)
{
  double r = 1;
  if (d != floor(d) || d > 64) return pow(x, d);
  for (int i = 0; i < (int)d; i++) r *= x;
  return r;
}

/* Pool j's fractions s_j(0 .. levels-1), clipped at 0, and their total. */
static double lbmc_mf_pool_total(const lbmc_occ_mf *mf, uint32_t j)
{
  double tot = 0;
  for (uint32_t k = 0; k < mf->levels; k++) tot += lbmc_mf_pos(mf->s[j * mf->levels + k]);
  return tot > 0 ? tot : 1.0;
}

/* P(one draw is at level >= k) for k = 0 .. levels into A[levels + 1], draws choosing
 * pool j with probability a[j]. */
static void lbmc_mf_tail(const lbmc_occ_mf *mf, const double *a, const double *tot, double *A)
{
  const uint32_t Lv = mf->levels;
  for (uint32_t k = 0; k <= Lv; k++) A[k] = 0;
  for (uint32_t j = 0; j < mf->J; j++) {
    double g = 0;
    for (uint32_t k = Lv; k-- > 0;) {
      g += lbmc_mf_pos(mf->s[j * Lv + k]);
      A[k] += a[j] * g / tot[j];
    }
  }
}

void lbmc_occ_law_min_of(const lbmc_occ_mf *mf, const double *weight, double d, int exact_distinct,
                         double *p)
{
  const uint32_t Lv = mf->levels, J = mf->J;
  double a[LBMC_MAX_POOLS], tot[LBMC_MAX_POOLS], wsum = 0;
  double *A = mf->work, *P = mf->work + Lv + 1;
  for (uint32_t j = 0; j < J; j++) {
    a[j] = (weight ? weight[j] : 1.0) * mf->b[j];
    wsum += a[j];
    tot[j] = lbmc_mf_pool_total(mf, j);
  }
  for (uint32_t j = 0; j < J; j++) a[j] /= wsum;
  lbmc_mf_tail(mf, a, tot, A);
  for (uint32_t k = 0; k <= Lv; k++) { /* P[k] = P(all d draws at level >= k) */
    if (exact_distinct && d <= 64) {
      double prod = 1;
      for (int i = 0; i < (int)d; i++) prod *= lbmc_mf_pos(mf->n * A[k] - i) / (mf->n - i);
      P[k] = prod;
    } else {
      P[k] = lbmc_mf_power(A[k] < 1 ? A[k] : 1.0, d);
    }
  }
  for (uint32_t k = 0; k < Lv; k++) {
    double den = 0, mass = lbmc_mf_pos(P[k] - P[k + 1]);
    for (uint32_t j = 0; j < J; j++) den += a[j] * lbmc_mf_pos(mf->s[j * Lv + k]) / tot[j];
    for (uint32_t j = 0; j < J; j++)
      p[j * Lv + k] = den > 0 ? mass * a[j] * lbmc_mf_pos(mf->s[j * Lv + k]) / tot[j] / den : 0.0;
  }
}

void lbmc_occ_law_lowest(const lbmc_occ_mf *mf, double *p)
{
  const uint32_t Lv = mf->levels, J = mf->J;
  double left = 1;
  for (uint32_t k = 0; k < Lv; k++) {
    double cnt = 0, share;
    for (uint32_t j = 0; j < J; j++) cnt += mf->n * mf->b[j] * lbmc_mf_pos(mf->s[j * Lv + k]);
    share = (cnt < 1 ? cnt : 1.0) * left;
    for (uint32_t j = 0; j < J; j++)
      p[j * Lv + k] =
          cnt > 0 ? share * mf->n * mf->b[j] * lbmc_mf_pos(mf->s[j * Lv + k]) / cnt : 0.0;
    left -= share;
  }
}

/* ---- Binomial splits for large n ---- */

int64_t lbmc_occ_binomial(const gsl_rng *r, double p, int64_t n)
{
  int64_t x = 0;
  if (p <= 0) return 0;
  if (p >= 1) return n;
  while (n > 0) {
    int64_t chunk = n < LBMC_BINOMIAL_CHUNK ? n : LBMC_BINOMIAL_CHUNK;
    x += gsl_ran_binomial(r, p, (unsigned int)chunk);
    n -= chunk;
  }
  return x;
}

void lbmc_occ_split_equal(const gsl_rng *r, int64_t n, uint32_t R, int64_t *out)
{
  uint32_t half = R / 2;
  int64_t left;
  if (R == 1) {
    out[0] = n;
    return;
  }
  left = lbmc_occ_binomial(r, (double)half / (double)R, n);
  lbmc_occ_split_equal(r, left, half, out);
  lbmc_occ_split_equal(r, n - left, R - half, out + half);
}
