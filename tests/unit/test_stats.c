/* Output analysis (lbmc/stats.h): MSER-5, t quantiles and intervals, the linear fit. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

#include "lbmc/sim.h"
#include "lbmc/stats.h"
#include "unit.h"

/* MSER-5 by its definition (O(b^2)): the reference for lbmc_mser5. */
static size_t mser5_reference(const double *y, size_t m)
{
  size_t b = m / 5, best = 0;
  double best_val = INFINITY;
  if (m < 10) return 0;
  for (size_t d = 0; d <= b / 2; d++) {
    double mean = 0, ss = 0;
    for (size_t i = d; i < b; i++)
      mean += (y[5 * i] + y[5 * i + 1] + y[5 * i + 2] + y[5 * i + 3] + y[5 * i + 4]) / 5;
    mean /= (double)(b - d);
    for (size_t i = d; i < b; i++) {
      double zi = (y[5 * i] + y[5 * i + 1] + y[5 * i + 2] + y[5 * i + 3] + y[5 * i + 4]) / 5;
      ss += (zi - mean) * (zi - mean);
    }
    if (ss / ((double)(b - d) * (double)(b - d)) < best_val * (1 - 1e-12)) {
      best_val = ss / ((double)(b - d) * (double)(b - d));
      best = d;
    }
  }
  return 5 * best;
}

/* With g i.i.d. N(0, s^2) group means after the transient, MSER picks d0 + k groups
 * only if MSER(d0 + k) < MSER(d0). By Cochran's theorem the sum of squares of the g
 * groups splits into S_k (the g - k kept, g - k - 1 dof) and D_k = S_0 - S_k (k dof),
 * independent, so the event is F_{k, g-k-1} > c_k with
 * c_k = (g^2 - (g - k)^2) (g - k - 1) / (k (g - k)^2). The union bound over k >= K gives
 * P(truncation >= d0 + K groups) <= sum_{k >= K} P(F > c_k); return the smallest K with
 * bound <= alpha (kmax = the largest k MSER may choose). */
static size_t mser_excess_bound(size_t g, size_t kmax, double alpha)
{
  for (size_t K = 1; K <= kmax; K++) {
    double tail = 0;
    for (size_t k = K; k <= kmax; k++) {
      double gk = (double)(g - k), c = ((double)g * g - gk * gk) * (gk - 1) / ((double)k * gk * gk);
      tail += gsl_cdf_fdist_Q(c, (double)k, gk - 1);
    }
    if (tail <= alpha) return K;
  }
  return kmax + 1;
}

/* REPS series with a transient: 100 observations at level 10, then 900 at 0, all plus
 * N(0, 1) noise. Every truncation equals the reference and is >= 100. "Not much more":
 * a truncation of 100 + 5 K or more (K = mser_excess_bound(180 groups, 80, alpha =
 * 0.01)) has probability <= alpha per series, so the number of such series is at most
 * Binomial(REPS, alpha): allowed up to REPS alpha + 5 sqrt(REPS alpha (1 - alpha)).
 * (At a 5-sigma level per series the bound is vacuous: MSER-5 on 180 noisy groups does
 * sometimes truncate far.) Stationary N(0, 1) series: truncation >= 5 K' (200 groups,
 * d <= 100) in at most as many series. */
static void test_mser5(void)
{
  const size_t m = 1000;
  const int REPS = 200;
  const double alpha = 0.01, allowed = REPS * alpha + UT_Z * sqrt(REPS * alpha * (1 - alpha));
  const size_t K = mser_excess_bound(180, 80, alpha), K0 = mser_excess_bound(200, 100, alpha);
  double y[1003];
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  long far = 0, far0 = 0, wrong = 0, below = 0;
  CU_ASSERT_FATAL(r != NULL);
  CU_ASSERT(K < 40 && K0 < 40); /* the bounds say something */
  gsl_rng_set(r, 12345);
  for (int rep = 0; rep < REPS; rep++) {
    size_t d;
    for (size_t i = 0; i < m; i++) y[i] = (i < 100 ? 10 : 0) + gsl_ran_gaussian(r, 1.0);
    d = lbmc_mser5(y, m);
    wrong += d != mser5_reference(y, m);
    below += d < 100;
    far += d >= 100 + 5 * K;
    /* a trailing partial group is ignored */
    y[1000] = y[1001] = y[1002] = 1e6;
    wrong += lbmc_mser5(y, 1003) != d;

    for (size_t i = 0; i < m; i++) y[i] = gsl_ran_gaussian(r, 1.0);
    d = lbmc_mser5(y, m);
    wrong += d != mser5_reference(y, m);
    far0 += d >= 5 * K0;
  }
  UT_CHECK(wrong == 0, "mser5 differs from the definition in %ld series", wrong);
  UT_CHECK(below == 0, "%ld transients truncated before their end (100)", below);
  UT_CHECK(far <= allowed, "%ld of %d transients truncated at >= %zu (allowed %.1f)", far, REPS,
           100 + 5 * K, allowed);
  UT_CHECK(far0 <= allowed, "%ld of %d stationary series truncated at >= %zu (allowed %.1f)", far0,
           REPS, 5 * K0, allowed);
  /* a transient over 40% of the run (group 80 of 200, within MSER's d <= b/2 = 100) is
   * found exactly when noise-free; MSER never deletes more than half */
  for (size_t i = 0; i < m; i++) y[i] = i < 400 ? 10 : 0;
  CU_ASSERT_EQUAL(lbmc_mser5(y, m), 400);
  for (size_t i = 0; i < m; i++) y[i] = i < 600 ? 10 + 0.1 * (double)i : 0;
  UT_CHECK(lbmc_mser5(y, m) <= 500, "truncation %zu beyond half of 1000", lbmc_mser5(y, m));
  for (size_t i = 0; i < m; i++) y[i] = 3.0;
  CU_ASSERT_EQUAL(lbmc_mser5(y, m), 0); /* ties: the smallest truncation */
  CU_ASSERT_EQUAL(lbmc_mser5(y, 9), 0); /* m < 10 */
  gsl_rng_free(r);
}

static void test_t_quantile(void)
{
  /* table values, printed to 6-7 significant digits: half a unit of the last digit */
  CU_ASSERT_DOUBLE_EQUAL(lbmc_t_quantile(0.95, 1), 12.7062, 0.5e-4);
  CU_ASSERT_DOUBLE_EQUAL(lbmc_t_quantile(0.95, 10), 2.228139, 0.5e-6);
  CU_ASSERT_DOUBLE_EQUAL(lbmc_t_quantile(0.99, 4), 4.604095, 0.5e-6);
  /* large dof: just above the normal quantile 1.959964 (t_{n} - z ~ z(1+z^2)/(4n) = 2.4e-5) */
  CU_ASSERT(lbmc_t_quantile(0.95, 100000) > 1.959964);
  CU_ASSERT_DOUBLE_EQUAL(lbmc_t_quantile(0.95, 100000), 1.959964 + 2.4e-5, 2e-6);
}

static void test_mean_interval(void)
{
  const double x[] = {1, 2, 3, 4, 5};
  const double xs[] = {1, -9, 2, -9, 3, -9, 4, -9, 5, -9}; /* stride 2 */
  const double xn[] = {1, NAN, 3};
  double mean, se, hw;
  /* mean 3, sample variance 10/4 = 2.5, se = sqrt(2.5 / 5) = sqrt(0.5), t_{4,0.975} */
  lbmc_mean_interval(x, 5, 1, 0.95, &mean, &se, &hw);
  CU_ASSERT_DOUBLE_EQUAL(mean, 3.0, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(se, sqrt(0.5), 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(hw, 2.776445 * sqrt(0.5), 0.5e-6 * sqrt(0.5));
  lbmc_mean_interval(xs, 5, 2, 0.95, &mean, &se, &hw);
  CU_ASSERT_DOUBLE_EQUAL(mean, 3.0, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(se, sqrt(0.5), 1e-15);
  lbmc_mean_interval(xn, 3, 1, 0.95, &mean, &se, &hw);
  CU_ASSERT(isnan(mean) && isnan(se) && isnan(hw));
  lbmc_mean_interval(x, 1, 1, 0.95, &mean, &se, &hw);
  CU_ASSERT_DOUBLE_EQUAL(mean, 1.0, 0);
  CU_ASSERT(isnan(se) && isnan(hw));
}

static void test_linear_fit(void)
{
  double y[50], b, s;
  for (int i = 0; i < 50; i++) y[i] = 2 + 0.5 * i;
  lbmc_linear_fit(y, 50, &b, &s);
  CU_ASSERT_DOUBLE_EQUAL(b, 0.5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(s, 0, 1e-12);
  /* y = (0, 2, 1): slope sum (i-1)(y-1) / sum (i-1)^2 = 1/2, intercept 1/2,
   * residuals (-1/2, 1, -1/2), s = sqrt(1.5 / (3 - 2)) */
  lbmc_linear_fit((const double[]){0, 2, 1}, 3, &b, &s);
  CU_ASSERT_DOUBLE_EQUAL(b, 0.5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(s, sqrt(1.5), 1e-15);
}

int ut_register_stats(void)
{
  static const ut_test tests[] = {{"mser5: transient, stationary, reference", test_mser5},
                                  {"t quantiles", test_t_quantile},
                                  {"mean interval by hand", test_mean_interval},
                                  {"linear fit", test_linear_fit},
                                  {NULL, NULL}};
  return ut_add_suite("stats", tests);
}
