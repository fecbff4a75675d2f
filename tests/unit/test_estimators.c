/* Estimators from pooled sums (src/stats/estimators.h): ratio intervals (delta method,
 * jackknife), paired and unpaired comparisons, proportions (Clopper-Pearson, Wilson,
 * Korn-Graubard, the bound when nothing was seen), self-checking batch means and MSER.
 * Hand values were computed with scipy 1.10 (scipy.stats.t / beta / norm); statistical
 * checks use fixed seeds and the 5-sigma rule of unit.h. */
#include <float.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/stats.h"
#include "stats/estimators.h"
#include "unit.h"

#define UT_ABS(what, x, ref, tol)                                                                  \
  UT_CHECK(fabs((x) - (ref)) <= (tol), "%s: %.12g, expected %.12g (tolerance %g)", (what),         \
           (double)(x), (double)(ref), (double)(tol))

/* y/x = 0.7333 over the 4 units with x > 0 (the fourth is empty and counts for nothing):
 * se = sqrt(sum e^2 / (m (m-1))) / xbar = 0.0607226712, t_3 se = 0.1932466406; the
 * jackknife se is 0.0667791549. */
static void test_ratio_by_hand(void)
{
  const double y[] = {1, 2, 3, 0, 5}, x[] = {2, 3, 4, 0, 6};
  lbmc_interval iv;
  lbmc_ratio_interval(y, x, 5, 1, 0.95, &iv);
  UT_ABS("estimate", iv.estimate, 11.0 / 15.0, 1e-15);
  UT_ABS("std_err", iv.std_err, 0.06072267120568653, 1e-13);
  UT_ABS("half_width", iv.half_width, 0.19324664062552818, 1e-12);
  UT_ABS("lower", iv.lower, 11.0 / 15.0 - 0.19324664062552818, 1e-12);
  CU_ASSERT_EQUAL(iv.dof, 3);
  CU_ASSERT_EQUAL(iv.units, 5);
  CU_ASSERT_EQUAL(iv.flags, 0);
  CU_ASSERT(isnan(iv.upper_bound));
  lbmc_ratio_jackknife(y, x, 5, 1, 0.95, &iv);
  UT_ABS("jackknife estimate", iv.estimate, 11.0 / 15.0, 1e-15);
  UT_ABS("jackknife std_err", iv.std_err, 0.06677915494915329, 1e-13);
  /* stride: the same units as rows of a 3-wide record (y in column 0, x in column 2) */
  {
    double rec[15];
    for (int i = 0; i < 5; i++) rec[3 * i] = y[i], rec[3 * i + 1] = -7, rec[3 * i + 2] = x[i];
    lbmc_ratio_interval(rec, rec + 2, 5, 3, 0.95, &iv);
    UT_ABS("strided std_err", iv.std_err, 0.06072267120568653, 1e-13);
  }
}

/* Hall's skewness-removing transformation: by hand (Python, the formulas of the doc
 * comment), unchanged for symmetric units, and on exponential means of 10 (skewness 2) it
 * brings the coverage from about 90% (the symmetric t interval, measured 89.8% in 2e4
 * trials, misses 10% below) to about 93.5%. Below 6 units its length centred on the
 * estimate: 4 units {1, 1, 1, 6} gave [-0.39, 15.0] around 2.25 (2.1 and 10.2 standard
 * errors), lopsided by a sample skewness that 4 units cannot estimate. */
static void test_ratio_skew(void)
{
  const double y[] = {1, 1, 1, 1, 1, 7}, one[] = {1, 1, 1, 1, 1, 1}, sym[] = {1, 2, 3, 4, 5};
  const double y4[] = {1, 1, 1, 6};
  lbmc_interval iv, plain;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  long covered = 0, covered_t = 0, below = 0, below_t = 0;
  const long trials = 4000;
  CU_ASSERT_FATAL(r != NULL);
  lbmc_ratio_interval_skew(y, one, 6, 1, 0.95, &iv);
  lbmc_ratio_interval(y, one, 6, 1, 0.95, &plain);
  UT_ABS("estimate", iv.estimate, 2.0, 1e-15);
  UT_ABS("std_err as the delta method's", iv.std_err, plain.std_err, 1e-15);
  UT_ABS("lower", iv.lower, 0.32598009127915195, 1e-8); /* GSL vs scipy t quantile */
  UT_ABS("upper", iv.upper, 10.168991318937042, 1e-8);
  UT_ABS("half_width: the longer side", iv.half_width, 10.168991318937042 - 2, 1e-8);
  lbmc_ratio_interval_skew(y4, one, 4, 1, 0.95, &iv); /* 4 units: Hall's length, centred */
  UT_ABS("4 units: lower", iv.lower, 2.25 - (14.99979153961355 + 0.3896743074886033) / 2, 1e-11);
  UT_ABS("4 units: upper", iv.upper, 2.25 + (14.99979153961355 + 0.3896743074886033) / 2, 1e-11);
  UT_ABS("4 units: half_width", iv.half_width, (14.99979153961355 + 0.3896743074886033) / 2, 1e-11);
  lbmc_ratio_interval_skew(sym, one, 5, 1, 0.95, &iv);
  lbmc_ratio_interval(sym, one, 5, 1, 0.95, &plain);
  UT_ABS("symmetric: lower", iv.lower, plain.lower, 1e-14);
  UT_ABS("symmetric: upper", iv.upper, plain.upper, 1e-14);
  lbmc_ratio_interval_skew(y, one, 2, 1, 0.95, &iv); /* two units: the plain interval */
  lbmc_ratio_interval(y, one, 2, 1, 0.95, &plain);
  CU_ASSERT(iv.lower == plain.lower && iv.upper == plain.upper);
  gsl_rng_set(r, 1992);
  for (long k = 0; k < trials; k++) {
    double v[10];
    for (int i = 0; i < 10; i++) v[i] = gsl_ran_exponential(r, 1.0);
    lbmc_ratio_interval_skew(v, (const double[]){1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 10, 1, 0.95, &iv);
    lbmc_ratio_interval(v, (const double[]){1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 10, 1, 0.95, &plain);
    covered += iv.lower <= 1 && 1 <= iv.upper, below += iv.upper < 1;
    covered_t += plain.lower <= 1 && 1 <= plain.upper, below_t += plain.upper < 1;
  }
  UT_CHECK(covered >= 0.92 * trials && covered <= 0.965 * trials,
           "exponential means of 10: skew-corrected coverage %ld of %ld", covered, trials);
  UT_CHECK(covered_t < 0.915 * trials && below_t > 0.07 * trials && below < 0.7 * below_t,
           "control: the symmetric interval covers %ld, %ld below (skew-corrected: %ld below)",
           covered_t, below_t, below);
  gsl_rng_free(r);
}

/* Empty units contribute 0/0: never a NaN estimate while any unit has data. */
static void test_ratio_empty(void)
{
  const double zero[] = {0, 0, 0}, y1[] = {0, 4, 0}, x1[] = {0, 8, 0};
  lbmc_interval iv;
  lbmc_ratio_interval(zero, zero, 3, 1, 0.95, &iv);
  CU_ASSERT(iv.flags & LBMC_IV_EMPTY);
  CU_ASSERT(isnan(iv.estimate) && isnan(iv.half_width));
  lbmc_ratio_interval(y1, x1, 3, 1, 0.95, &iv);
  CU_ASSERT_EQUAL(iv.flags, LBMC_IV_NO_INTERVAL);
  CU_ASSERT_EQUAL(iv.estimate, 0.5);
  CU_ASSERT(isnan(iv.half_width) && isnan(iv.std_err));
  lbmc_ratio_jackknife(y1, x1, 3, 1, 0.95, &iv);
  CU_ASSERT(iv.flags & LBMC_IV_NO_INTERVAL);
  lbmc_ratio_interval(y1, x1, 0, 1, 0.95, &iv); /* no units at all */
  CU_ASSERT(iv.flags & LBMC_IV_EMPTY);
  lbmc_ratio_interval(zero, (const double[]){3, 1, 2}, 3, 1, 0.95, &iv); /* nobody waited */
  CU_ASSERT_EQUAL(iv.flags, LBMC_IV_NONE_OBSERVED);
  CU_ASSERT(iv.estimate == 0 && isnan(iv.half_width) && isnan(iv.std_err));
  lbmc_ratio_jackknife(zero, (const double[]){3, 1, 2}, 3, 1, 0.95, &iv);
  CU_ASSERT_EQUAL(iv.flags, LBMC_IV_NONE_OBSERVED);
  CU_ASSERT_STRING_EQUAL(lbmc_iv_flag_name(LBMC_IV_EMPTY | LBMC_IV_CORRELATED), "empty");
  CU_ASSERT_STRING_EQUAL(lbmc_iv_flag_name(LBMC_IV_CORRELATED), "correlated");
  CU_ASSERT_STRING_EQUAL(lbmc_iv_flag_name(0), "");
  CU_ASSERT(lbmc_iv_flag_meaning(LBMC_IV_NONE_OBSERVED)[0] != '\0');
}

/* Equal denominators (a time average over equal periods): exactly the Student-t interval
 * of the per-unit means (lbmc_mean_interval). */
static void test_ratio_equal_x(void)
{
  const double y[] = {3.5, 4.25, 2.0, 5.5, 4.0, 3.75}, x[] = {2, 2, 2, 2, 2, 2};
  double means[6], mean, se, hw;
  lbmc_interval iv;
  for (int i = 0; i < 6; i++) means[i] = y[i] / x[i];
  lbmc_mean_interval(means, 6, 1, 0.9, &mean, &se, &hw);
  lbmc_ratio_interval(y, x, 6, 1, 0.9, &iv);
  UT_ABS("estimate", iv.estimate, mean, 1e-15);
  UT_ABS("std_err", iv.std_err, se, 1e-15);
  UT_ABS("half_width", iv.half_width, hw, 1e-14);
}

/* The bias of a mean of per-replica ratios, and its absence from the pooled ratio.
 * Units: x ~ Poisson(2) customers, each with a time of mean 1 + x/2 (busy replicas have
 * long sojourns, as in a queue). The customer average is E[sum y] / E[x] =
 * E[x (1 + x/2)] / E[x] = 1 + (Var x + E[x]^2) / (2 E[x]) = 2.5; the mean of the ratios
 * over non-empty units is 1 + E[x | x > 0] / 2 = 2.1565. R = 20000 units: the pooled
 * interval covers 2.5 (5 sigma: 5 std_err), and excludes the mean of ratios. */
static void test_ratio_short_replicas(void)
{
  enum { R = 20000 };
  double *y = malloc(sizeof *y * R), *x = malloc(sizeof *x * R), mor = 0;
  long nonempty = 0;
  lbmc_interval iv;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(y && x && r);
  gsl_rng_set(r, 4242);
  for (int i = 0; i < R; i++) {
    unsigned k = gsl_ran_poisson(r, 2.0);
    x[i] = k;
    y[i] = 0;
    for (unsigned c = 0; c < k; c++) y[i] += gsl_ran_exponential(r, 1 + 0.5 * k);
    if (k) mor += y[i] / x[i], nonempty++;
  }
  mor /= (double)nonempty;
  lbmc_ratio_interval(y, x, R, 1, 0.95, &iv);
  UT_CHECK_NORMAL("pooled ratio", iv.estimate, 2.5, iv.std_err);
  UT_CHECK(fabs(mor - 2.5) > 10 * iv.std_err, "mean of ratios %.4f is not biased?", mor);
  UT_CHECK_NORMAL("mean of ratios", mor, 1 + 1 / (1 - exp(-2.0)), 5 * iv.std_err);
  free(y), free(x), gsl_rng_free(r);
}

/* Coverage of the delta-method and jackknife intervals: T = 4000 sets of R = 20 units,
 * x ~ Poisson(50), y = sum of x Exp(mean 2) times: the ratio is 2. Both intervals are
 * asymptotic; at this size their coverage is within 5 binomial sigmas of 0.95. */
static void test_ratio_coverage(void)
{
  enum { T = 4000, R = 20 };
  double y[R], x[R];
  long cover = 0, cover_j = 0;
  lbmc_interval iv;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(r != NULL);
  gsl_rng_set(r, 99);
  for (int t = 0; t < T; t++) {
    for (int i = 0; i < R; i++) {
      unsigned k = gsl_ran_poisson(r, 50);
      x[i] = k;
      y[i] = gsl_ran_gamma(r, k > 0 ? k : 1, 2.0) * (k > 0);
    }
    lbmc_ratio_interval(y, x, R, 1, 0.95, &iv);
    cover += fabs(iv.estimate - 2) <= iv.half_width;
    lbmc_ratio_jackknife(y, x, R, 1, 0.95, &iv);
    cover_j += fabs(iv.estimate - 2) <= iv.half_width;
  }
  UT_CHECK_BINOMIAL("delta-method coverage", cover, T, 0.95);
  UT_CHECK_BINOMIAL("jackknife coverage", cover_j, T, 0.95);
  gsl_rng_free(r);
}

/* Paired comparisons (scipy values) and the unpaired Welch difference. */
static void test_ratio_compare(void)
{
  const double ya[] = {1, 2, 3, 4}, xa[] = {2, 2, 3, 3}, yb[] = {1.5, 2, 2.5, 5},
               xb[] = {2, 3, 3, 4};
  lbmc_interval iv;
  lbmc_ratio_paired_difference(ya, xa, yb, xb, 4, 1, 0.95, &iv);
  UT_ABS("paired difference", iv.estimate, 1.0 / 12.0, 1e-15);
  UT_ABS("paired difference se", iv.std_err, 0.1136062436700688, 1e-13);
  UT_ABS("paired difference hw", iv.half_width, 0.3615457704250341, 1e-12);
  lbmc_ratio_paired_ratio(ya, xa, yb, xb, 4, 1, 0.95, &iv);
  UT_ABS("paired ratio", iv.estimate, 12.0 / 11.0, 1e-15);
  UT_ABS("paired ratio log se", iv.std_err, 0.11816886745927842, 1e-13);
  UT_ABS("paired ratio lower", iv.lower, 0.7489712365623541, 1e-12);
  UT_ABS("paired ratio upper", iv.upper, 1.5889564065108412, 1e-12);
  lbmc_ratio_difference(ya, xa, 4, 1, yb, xb, 4, 1, 0.95, &iv);
  UT_ABS("welch se", iv.std_err, 0.2234802354523999, 1e-13);
  UT_ABS("welch dof", iv.dof, 5.972484534730169, 1e-10);
  UT_ABS("welch hw", iv.half_width, 0.5474477010529324, 1e-8); /* t at 5.97 dof: GSL vs scipy */
  /* p-value of the t statistic: at the interval's end it is 1 - level */
  iv.estimate = iv.half_width;
  UT_ABS("p-value at the end of the interval", lbmc_interval_p_value(&iv, 0), 0.05, 1e-10);
  /* a zero ratio cannot enter a log ratio */
  lbmc_ratio_paired_ratio((const double[]){0, 0}, xa, yb, xb, 2, 1, 0.95, &iv);
  CU_ASSERT(iv.flags & LBMC_IV_NO_INTERVAL);
}

/* Common random numbers: A and B share a unit-level effect u_i (the replica's arrivals)
 * plus small own noise; the paired interval is far narrower than the unpaired one and
 * covers the true difference (0.1) at its nominal rate. */
static void test_ratio_paired_coverage(void)
{
  enum { T = 3000, R = 10 };
  double ya[R], xa[R], yb[R], xb[R], hw_p = 0, hw_u = 0;
  long cover = 0;
  lbmc_interval iv;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(r != NULL);
  gsl_rng_set(r, 2024);
  for (int t = 0; t < T; t++) {
    for (int i = 0; i < R; i++) {
      double u = gsl_ran_gaussian(r, 1.0);
      xa[i] = xb[i] = 100;
      ya[i] = 100 * (2.1 + u + gsl_ran_gaussian(r, 0.1));
      yb[i] = 100 * (2.0 + u + gsl_ran_gaussian(r, 0.1));
    }
    lbmc_ratio_paired_difference(ya, xa, yb, xb, R, 1, 0.95, &iv);
    cover += fabs(iv.estimate - 0.1) <= iv.half_width;
    hw_p += iv.half_width;
    lbmc_ratio_difference(ya, xa, R, 1, yb, xb, R, 1, 0.95, &iv);
    hw_u += iv.half_width;
  }
  UT_CHECK_BINOMIAL("paired coverage", cover, T, 0.95);
  UT_CHECK(hw_u > 5 * hw_p, "paired half-width %.4g not much below unpaired %.4g", hw_p / T,
           hw_u / T);
  gsl_rng_free(r);
}

/* Clopper-Pearson and Wilson for 3 of 20, the bound for 0 of n, Korn-Graubard by hand. */
static void test_proportion_by_hand(void)
{
  const double yk[] = {3, 1, 0, 4, 2, 0}, xk[] = {50, 40, 45, 60, 55, 50};
  double lo, hi;
  lbmc_interval iv;
  lbmc_clopper_pearson(3, 20, 0.95, &lo, &hi);
  UT_ABS("CP lower", lo, 0.0320709371854637, 1e-12);
  UT_ABS("CP upper", hi, 0.37892682654531396, 1e-12);
  lbmc_wilson(3, 20, 0.95, &lo, &hi);
  UT_ABS("Wilson lower", lo, 0.05236874589621662, 1e-12);
  UT_ABS("Wilson upper", hi, 0.3604188647407569, 1e-12);
  UT_ABS("bound n = 1000", lbmc_zero_event_bound(1000, 0.95), 0.0029912495450953314, 1e-15);
  UT_ABS("bound n = 1e9", lbmc_zero_event_bound(1e9, 0.95) / 2.995732269066785e-09, 1, 1e-12);
  CU_ASSERT_EQUAL(lbmc_zero_event_bound(0, 0.95), 1.0);
  lbmc_proportion_interval(yk, xk, 6, 1, 0.95, 1, &iv);
  UT_ABS("KG estimate", iv.estimate, 1.0 / 30.0, 1e-15);
  UT_ABS("KG std_err", iv.std_err, 0.012079980377712787, 1e-13);
  UT_ABS("KG lower", iv.lower, 0.009685674453601113, 1e-10);
  UT_ABS("KG upper", iv.upper, 0.0808785528475798, 1e-10);
  CU_ASSERT_EQUAL(iv.flags, 0);
}

/* None observed: estimate 0 with a one-sided bound from the opportunities (trials), or
 * no bound (time fractions); all observed: the mirror bound; never a NaN estimate. */
static void test_proportion_extremes(void)
{
  const double y0[] = {0, 0, 0, 0}, x[] = {300, 200, 0, 500}, tx[] = {10, 10, 10, 10};
  lbmc_interval iv;
  lbmc_proportion_interval(y0, x, 4, 1, 0.95, 1, &iv);
  CU_ASSERT(iv.flags & LBMC_IV_NONE_OBSERVED);
  CU_ASSERT_EQUAL(iv.estimate, 0);
  UT_ABS("bound", iv.upper_bound, 0.0029912495450953314, 1e-15);
  CU_ASSERT_EQUAL(iv.upper, iv.upper_bound);
  CU_ASSERT_EQUAL(iv.lower, 0);
  CU_ASSERT(isnan(iv.half_width) && isnan(iv.std_err)); /* never "0 +/- 0" */
  lbmc_proportion_interval(y0, tx, 4, 1, 0.95, 0, &iv);
  CU_ASSERT(iv.flags & LBMC_IV_NONE_OBSERVED);
  CU_ASSERT(isnan(iv.upper_bound) && isnan(iv.half_width));
  lbmc_proportion_interval(x, x, 4, 1, 0.95, 1, &iv);
  CU_ASSERT(iv.flags & LBMC_IV_ALL_OBSERVED);
  CU_ASSERT_EQUAL(iv.estimate, 1);
  UT_ABS("mirror bound", iv.lower, 1 - 0.0029912495450953314, 1e-15);
  lbmc_proportion_interval(y0, y0, 4, 1, 0.95, 1, &iv);
  CU_ASSERT(iv.flags & LBMC_IV_EMPTY);
}

/* The bound is exact: with p equal to the bound for N = 1000 opportunities, no event is
 * seen in 1 - level = 5% of the runs (Binomial check over T runs). And a rare clustered
 * event (R = 20 units of 500 opportunities, events in pairs, p = 0.002): the KG interval
 * stays in [0, 1] and covers p at least at the nominal rate minus 5 sigma. */
static void test_proportion_rare(void)
{
  enum { T = 4000, R = 20 };
  const double pb = lbmc_zero_event_bound(1000, 0.95);
  double y[R], x[R];
  long none = 0, cover = 0, outside = 0;
  lbmc_interval iv;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(r != NULL);
  gsl_rng_set(r, 31337);
  for (int t = 0; t < T; t++) none += gsl_ran_binomial(r, pb, 1000) == 0;
  UT_CHECK_BINOMIAL("no event at p = bound", none, T, 0.05);
  for (int t = 0; t < T; t++) {
    for (int i = 0; i < R; i++) {
      x[i] = 500;
      y[i] = 2.0 * gsl_ran_binomial(r, 0.001, 500); /* pairs of events */
    }
    lbmc_proportion_interval(y, x, R, 1, 0.95, 1, &iv);
    if (iv.flags & LBMC_IV_NONE_OBSERVED)
      cover += iv.upper_bound >= 0.002;
    else
      cover += iv.lower <= 0.002 && 0.002 <= iv.upper;
    outside += iv.lower < 0 || iv.upper > 1;
  }
  CU_ASSERT_EQUAL(outside, 0);
  UT_CHECK(cover >= 0.95 * T - UT_Z * sqrt(T * 0.95 * 0.05), "KG coverage %ld of %d", cover, T);
  gsl_rng_free(r);
}

/* The rule for rare events: an interval resting on fewer than LBMC_FEW_EVENTS_MIN entries is
 * withheld (estimate kept, flag few_events); at the floor, without a count (NaN), or with no
 * interval to withhold (none observed: its bound stays), the interval is left as it is. */
static void test_few_events(void)
{
  const double y[4] = {0, 0, 3e-3, 0}, x[4] = {1e6, 1e6, 1e6, 1e6};
  lbmc_interval iv, kept;
  lbmc_proportion_interval(y, x, 4, 1, 0.95, 0, &kept);
  CU_ASSERT_FATAL(!isnan(kept.lower) && !isnan(kept.upper));
  iv = kept;
  lbmc_few_events(LBMC_FEW_EVENTS_MIN - 1, &iv);
  CU_ASSERT(iv.flags & LBMC_IV_FEW_EVENTS);
  CU_ASSERT(isnan(iv.lower) && isnan(iv.upper) && isnan(iv.half_width) && isnan(iv.std_err));
  CU_ASSERT_EQUAL(iv.estimate, kept.estimate);
  CU_ASSERT_STRING_EQUAL(lbmc_iv_flag_name(LBMC_IV_FEW_EVENTS), "few_events");
  iv = kept;
  lbmc_few_events(LBMC_FEW_EVENTS_MIN, &iv);
  CU_ASSERT(ut_same_interval(&iv, &kept));
  lbmc_few_events(NAN, &iv);
  CU_ASSERT(ut_same_interval(&iv, &kept));
  {
    const double y0[2] = {0, 0}, x0[2] = {100, 100};
    lbmc_proportion_interval(y0, x0, 2, 1, 0.95, 1, &kept);
    iv = kept;
    lbmc_few_events(0, &iv);
    CU_ASSERT(ut_same_interval(&iv, &kept));
    CU_ASSERT(iv.flags & LBMC_IV_NONE_OBSERVED && iv.upper_bound > 0);
  }
}

/* Clopper-Pearson at large effective sizes (Korn-Graubard on units that agree closely,
 * 10^12 customers): the ends stay on either side of p and approach the normal ones,
 * p -/+ z sqrt(p (1 - p) / n), up to the skewness (relative O(1 / sqrt(n min(p, 1 - p))))
 * and the rounding of ends near p (a few ulps of p against the half-width).
 * GSL's incomplete beta alone put both ends on the wrong side of p from n = 1e16 and was
 * off by 1e-4 of the half-width at 1e12. */
static void test_proportion_huge(void)
{
  const double ps[] = {0.5, 0.9, 0.999, 1e-4}, z = 1.959963984540054;
  for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
    for (double n = 1e4; n <= 1e22; n *= 10) {
      const double p = ps[i], sd = sqrt(p * (1 - p) / n);
      const double tol = 3 / sqrt(n * fmin(p, 1 - p)) + 8 * DBL_EPSILON / (z * sd);
      double lo, hi;
      lbmc_clopper_pearson(p * n, n, 0.95, &lo, &hi);
      UT_CHECK(lo < p && p < hi, "p = %g, n = %g: [%.17g, %.17g]", p, n, lo, hi);
      UT_CHECK(fabs((p - lo) / (z * sd) - 1) <= tol && fabs((hi - p) / (z * sd) - 1) <= tol,
               "p = %g, n = %g: half-widths %.9g, %.9g vs normal %.9g (tolerance %.2g)", p, n,
               p - lo, hi - p, z * sd, tol);
    }
}

/* Von Neumann's statistic by hand (scipy); merging leaves independent batches alone
 * (up to max_batches) and merges correlated ones, flagging when it cannot fix them. */
static void test_batch_merge(void)
{
  const double e[] = {1, 3, 2, 5, 4, 6, 5, 8, 7, 9};
  double p, y[1024], x[1024], wy[1024], wx[1024];
  lbmc_batch_rule rule;
  unsigned flags = 0;
  size_t k;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(r != NULL);
  gsl_rng_set(r, 5);
  UT_ABS("C", lbmc_von_neumann(e, 10, 1, &p), 0.7166666666666667, 1e-15);
  UT_ABS("p-value", p, 0.005849455419509078, 1e-12);
  lbmc_batch_rule_default(&rule);
  /* 20 independent batches: kept */
  for (int i = 0; i < 20; i++) y[i] = 5 + gsl_ran_gaussian(r, 1), x[i] = 1;
  k = lbmc_batch_merge(y, x, 20, 1, &rule, wy, wx, &flags);
  CU_ASSERT_EQUAL(k, 20);
  CU_ASSERT_EQUAL(flags, 0);
  /* 1000 independent batches: merged to 31 (1000 -> 500 -> 250 -> 125 -> 62 -> 31), the
   * sums preserved */
  for (int i = 0; i < 1000; i++) y[i] = 5 + gsl_ran_gaussian(r, 1), x[i] = 1 + (i % 3);
  k = lbmc_batch_merge(y, x, 1000, 1, &rule, wy, wx, &flags);
  CU_ASSERT_EQUAL(k, 31);
  {
    double sy = 0, sx = 0, swy = 0, swx = 0;
    for (int i = 0; i < 1000; i++) sy += y[i], sx += x[i];
    for (size_t i = 0; i < k; i++) swy += wy[i], swx += wx[i];
    UT_ABS("sum y kept", swy, sy, 1e-9);
    UT_ABS("sum x kept", swx, sx, 0);
  }
  /* a random walk (maximal correlation): merged down and flagged */
  flags = 0;
  y[0] = 0;
  for (int i = 0; i < 64; i++) y[i] = (i ? y[i - 1] : 0) + gsl_ran_gaussian(r, 1), x[i] = 1;
  k = lbmc_batch_merge(y, x, 64, 1, &rule, wy, wx, &flags);
  CU_ASSERT(flags & LBMC_IV_CORRELATED);
  CU_ASSERT(k >= rule.min_batches && k < 2 * rule.min_batches);
  gsl_rng_free(r);
}

/* Coverage with one long correlated run: an AR(1) series (phi = 0.9, mean 0) of 4096
 * observations cut into 1024 batches of 4. Taken as they are, the batch means give a
 * t interval that covers about a third of the time; merged by lbmc_batch_merge it must
 * cover at least 0.85 (the residual correlation of 32-batch means costs a few percent;
 * the long study is bench/coverage.c). */
static void test_batch_coverage(void)
{
  enum { T = 1000, N = 4096, B = 1024 };
  double *s = malloc(sizeof *s * N), y[B], x[B], wy[B], wx[B];
  long cover_raw = 0, cover = 0;
  lbmc_batch_rule rule;
  lbmc_interval iv;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(s && r);
  gsl_rng_set(r, 77);
  lbmc_batch_rule_default(&rule);
  for (int t = 0; t < T; t++) {
    unsigned flags = 0;
    size_t k;
    s[0] = gsl_ran_gaussian(r, 1 / sqrt(1 - 0.81));
    for (int i = 1; i < N; i++) s[i] = 0.9 * s[i - 1] + gsl_ran_gaussian(r, 1);
    for (int b = 0; b < B; b++)
      y[b] = s[4 * b] + s[4 * b + 1] + s[4 * b + 2] + s[4 * b + 3], x[b] = 4;
    lbmc_ratio_interval(y, x, B, 1, 0.95, &iv);
    cover_raw += fabs(iv.estimate) <= iv.half_width;
    k = lbmc_batch_merge(y, x, B, 1, &rule, wy, wx, &flags);
    lbmc_ratio_interval(wy, wx, k, 1, 0.95, &iv);
    cover += fabs(iv.estimate) <= iv.half_width;
  }
  UT_CHECK(cover_raw < 0.6 * T, "raw batch means covered %ld of %d", cover_raw, T);
  UT_CHECK(cover >= 0.85 * T, "merged batch means covered %ld of %d", cover, T);
  free(s), gsl_rng_free(r);
}

/* MSER with groups of 5 and the default cap is lbmc_mser5; a ramp over the whole run
 * truncates near the cap (too short); a transient in the first fifth does not. */
static void test_mser(void)
{
  double y[1000];
  int near;
  long differ = 0;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(r != NULL);
  gsl_rng_set(r, 8);
  for (int rep = 0; rep < 100; rep++) {
    for (int i = 0; i < 1000; i++) y[i] = (i < 150 ? 5 : 0) + gsl_ran_gaussian(r, 1);
    differ += lbmc_mser(y, 1000, 5, 0, &near) != lbmc_mser5(y, 1000);
    differ += near;
  }
  CU_ASSERT_EQUAL(differ, 0);
  for (int i = 0; i < 1000; i++) y[i] = 0.01 * i + gsl_ran_gaussian(r, 0.1);
  lbmc_mser(y, 1000, 5, 0, &near);
  CU_ASSERT_EQUAL(near, 1);
  for (int i = 0; i < 200; i++) y[i] = 1.0 + 1e6; /* large level, tiny steps: no cancellation */
  for (int i = 200; i < 1000; i++) y[i] = 1e6 + 1e-6 * (i % 2);
  CU_ASSERT_EQUAL(lbmc_mser(y, 1000, 5, 0, &near), 200);
  CU_ASSERT_EQUAL(lbmc_mser(y, 1000, 1, 10, &near), 10); /* the cap in groups */
  CU_ASSERT_EQUAL(near, 1);
  CU_ASSERT_EQUAL(lbmc_mser(y, 9, 5, 0, NULL), 0);
  gsl_rng_free(r);
}

/* A unit's row: the quarter means of customers following m(t) on [0, 4] plus N(0, sd^2)
 * noise on each quarter's mean, then its arrivals in the last quarter (1000). */
static void growth_unit(gsl_rng *r, double (*m)(double), double sd, double *row)
{
  for (int k = 0; k < 4; k++) {
    double avg = 0;
    for (int s = 0; s < 100; s++) avg += m(k + (s + 0.5) / 100) / 100;
    row[k] = avg + gsl_ran_gaussian(r, sd);
  }
  row[4] = 1000;
}
static double linear(double t) { return 40 * t; }           /* 4% of arrivals accumulate */
static double sqrt_fill(double t) { return 150 * sqrt(t); } /* a critically loaded fill-up */
static double flat(double t) { return 20 + 0 * t; }         /* stationary */

/* The drift test (8 units, noise sd 1 on each quarter's mean): linear growth of 40 per
 * quarter is proven (in about 95% of the trials at alpha = 1e-3: the deceleration's
 * lower bound is the limiting one);
 * a sqrt(t) fill-up (quarter means 100, 182.8, 236.8, 280.9: faster growth than the
 * linear one, but decelerating, Delta4 / Delta3 = 0.82) and stationary noise are not, in
 * at most alpha of the trials each. */
static void test_growth(void)
{
  enum { T = 2000, R = 8 };
  const double alpha = 1e-3;
  double q[R * 5];
  long lin = 0, sq = 0, fl = 0;
  lbmc_growth g;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(r != NULL);
  gsl_rng_set(r, 21);
  for (int t = 0; t < T; t++) {
    for (int i = 0; i < R; i++) growth_unit(r, linear, 1, q + 5 * i);
    lbmc_growth_test(q, q + 4, R, 5, alpha, 0.85, 0.01, &g);
    lin += g.proven;
    for (int i = 0; i < R; i++) growth_unit(r, sqrt_fill, 1, q + 5 * i);
    lbmc_growth_test(q, q + 4, R, 5, alpha, 0.85, 0.01, &g);
    sq += g.proven;
    for (int i = 0; i < R; i++) growth_unit(r, flat, 1, q + 5 * i);
    lbmc_growth_test(q, q + 4, R, 5, alpha, 0.85, 0.01, &g);
    fl += g.proven;
  }
  UT_CHECK(lin >= 0.9 * T, "linear growth proven in %ld of %d", lin, T); /* power ~95% */
  UT_CHECK(sq <= T * alpha + UT_Z * sqrt(T * alpha), "sqrt fill-up called unstable %ld times", sq);
  UT_CHECK(fl <= T * alpha + UT_Z * sqrt(T * alpha), "stationary called unstable %ld times", fl);
  lbmc_growth_test(q, q + 4, 1, 5, alpha, 0.85, 0.01, &g); /* one unit: no proof */
  CU_ASSERT(!g.proven && isnan(g.growth_lower));
  gsl_rng_free(r);
}

/* The relaxation time of an Ornstein-Uhlenbeck series (exact AR(1) sampling at spacing 1,
 * tau = 20): read from batch means of growing length with the M/M/1 correction, which errs
 * long for OU (docs/model.md); a run far shorter than tau is not resolved. */
static void test_relax(void)
{
  enum { U = 4, M = 4096 };
  const double tau = 20, phi = exp(-1 / tau);
  double *area = malloc(sizeof *area * U * M), *len = malloc(sizeof *len * U * M);
  double var_within = 0, n = 0, within[U] = {0};
  lbmc_relax rx;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(area && len && r);
  gsl_rng_set(r, 91);
  for (int u = 0; u < U; u++) {
    double x = gsl_ran_gaussian(r, 1), mean = 0;
    for (int i = 0; i < M; i++) {
      x = phi * x + gsl_ran_gaussian(r, sqrt(1 - phi * phi));
      area[u * M + i] = 10 + x, len[u * M + i] = 1;
      mean += (10 + x) / M;
    }
    for (int i = 0; i < M; i++) within[u] += (area[u * M + i] - mean) * (area[u * M + i] - mean);
    var_within += within[u], n += M;
  }
  var_within /= n;
  lbmc_relax_estimate(area, len, U, M, 1, var_within, var_within, 2, 0.9, &rx);
  UT_CHECK(rx.resolved && rx.tau > 0.9 * tau && rx.tau < 1.6 * tau && rx.tau_upper >= rx.tau &&
               rx.tau_lower <= rx.tau && rx.tau_lower > 0.5 * tau,
           "OU, tau 20: tau %g [%g, %g] (read at %g, resolved %d)", rx.tau, rx.tau_lower,
           rx.tau_upper, rx.scale, rx.resolved);
  /* 64 parts of the same series: 3 relaxation times, too short to resolve */
  lbmc_relax_estimate(area, len, 1, 64, 1, var_within, var_within, 2, 0.9, &rx);
  UT_CHECK(!rx.resolved || rx.tau_upper > 64.0 / 6, "a run of 3.2 tau: tau %g upper %g resolved %d",
           rx.tau, rx.tau_upper, rx.resolved);
  /* no variance: no estimate */
  lbmc_relax_estimate(area, len, U, M, 1, 0, 0, 2, 0.9, &rx);
  CU_ASSERT(isnan(rx.tau));
  free(area), free(len), gsl_rng_free(r);
}

/* The units' summaries for lbmc_relax_estimate_units: unit u of an array of them. */
static const lbmc_relax_unit *test_relax_unit_at(const void *ctx, size_t u)
{
  return (const lbmc_relax_unit *)ctx + u;
}

/* One summary for every unit (many units without their memory). */
static const lbmc_relax_unit *test_relax_unit_same(const void *ctx, size_t u)
{
  (void)u;
  return ctx;
}

/* The relaxation time from the units' 88-byte summaries is the same, bit for bit, as from
 * their parts (what a point keeps of each replica instead of its 64 fine parts), resolved
 * or not, with empty parts and units; more parts than a summary holds is refused; and
 * millions of degrees of freedom (150000 replicas of 20 parts; GSL's chi-square inverse
 * aborts beyond about 1.2e6, which 64000 replicas reached) give a reading. */
static void test_relax_units(void)
{
  enum { U = 300 };
  const size_t ms[] = {64, 20, 9, 3};
  double *area = malloc(sizeof *area * U * 64), *len = malloc(sizeof *len * U * 64);
  lbmc_relax_unit *sum = malloc(sizeof *sum * U);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(area && len && sum && r);
  gsl_rng_set(r, 17);
  for (size_t t = 0; t < sizeof ms / sizeof *ms; t++)
    for (int c = 0; c < 2; c++) {
      const size_t m = ms[t];
      const double tau = c ? 2 : 40, phi = exp(-1 / tau);
      lbmc_relax a, b;
      for (size_t u = 0; u < U; u++) {
        double x = gsl_ran_gaussian(r, 1);
        for (size_t i = 0; i < m; i++) {
          x = phi * x + gsl_ran_gaussian(r, sqrt(1 - phi * phi));
          area[u * m + i] = 10 + x, len[u * m + i] = 1;
        }
        if (u % 7 == 3) area[u * m + m / 2] = len[u * m + m / 2] = 0; /* an empty part */
        if (u == 5)
          for (size_t i = 0; i < m; i++) area[u * m + i] = len[u * m + i] = 0; /* empty unit */
        lbmc_relax_unit_of(area + u * m, len + u * m, m, &sum[u]);
      }
      lbmc_relax_estimate(area, len, U, m, 0.5, 0.9, 1.0, 2, 0.9, &a);
      CU_ASSERT_EQUAL(
          lbmc_relax_estimate_units(test_relax_unit_at, sum, U, m, 0.5, 0.9, 1.0, 2, 0.9, &b),
          LBMC_SUCCESS);
      UT_CHECK(ut_same_relax(&a, &b),
               "m %zu tau %g: from parts tau %.17g upper %.17g, from summaries %.17g %.17g", m, tau,
               a.tau, a.tau_upper, b.tau, b.tau_upper);
    }
  {
    const lbmc_error_mode was = lbmc_error_set_mode(LBMC_ERRORS_STORE);
    lbmc_relax x;
    sum[0].m = 65;
    CU_ASSERT_EQUAL(lbmc_relax_estimate_units(test_relax_unit_at, sum, 1, 65, 1, 1, 1, 2, 0.9, &x),
                    LBMC_ERR_ARG);
    lbmc_error_set_mode(was);
  }
  {
    lbmc_relax x;
    for (size_t i = 0; i < 20; i++) area[i] = 10 + gsl_ran_gaussian(r, 1), len[i] = 1;
    lbmc_relax_unit_of(area, len, 20, &sum[0]);
    CU_ASSERT_EQUAL(
        lbmc_relax_estimate_units(test_relax_unit_same, sum, 150000, 20, 1, 1, 1, 2, 0.9, &x),
        LBMC_SUCCESS);
    UT_CHECK(x.dof >= 150000.0 * 9 && isfinite(x.tau_upper) && x.tau_lower > 0,
             "150000 units of 20 parts: dof %g, tau %g [%g, %g]", x.dof, x.tau, x.tau_lower,
             x.tau_upper);
  }
  free(area), free(len), free(sum), gsl_rng_free(r);
}

/* f(x), the share of the long-run variance a batch of x relaxation times holds: the table's
 * ends, continuous across them, increasing, its limit 1 - 1.25 / x, and the edge values. */
static void test_relax_length_factor(void)
{
  double prev = 0;
  UT_ABS("f(0)", lbmc_relax_length_factor(0), 0, 0);
  UT_ABS("f(x0)", lbmc_relax_length_factor(0.0625), 0.030167, 1e-12);
  UT_ABS("f(x0 2^11), the table's end", lbmc_relax_length_factor(128), 0.990236, 1e-12);
  UT_ABS("f(1000)", lbmc_relax_length_factor(1000), 1 - 1.25 / 1000, 1e-15);
  UT_ABS("f small: x / 2", lbmc_relax_length_factor(1e-6) / 1e-6, 0.5, 1e-5);
  CU_ASSERT(lbmc_relax_length_factor(INFINITY) == 1);
  CU_ASSERT(isnan(lbmc_relax_length_factor(-1)) && isnan(lbmc_relax_length_factor(NAN)));
  for (double x = 0.01; x < 2000; x *= 1.05) {
    const double f = lbmc_relax_length_factor(x);
    UT_CHECK(f > prev && f < 1, "f(%g) = %g after %g", x, f, prev);
    prev = f;
  }
  UT_ABS("f(10), as 1 - 1.25/x within the table", lbmc_relax_length_factor(10), 1 - 1.25 / 10,
         0.02);
}

/* The transient's envelope: reflected Brownian motion's integrated deficit from 0 (G(0) =
 * 1/2, G(2) = 0.0721, G(5) = 0.00845) with a tenth added, decreasing; the warm-up that
 * brings the bound to a target is the smallest that does. */
static void test_transient(void)
{
  double prev = INFINITY, w;
  CU_ASSERT_DOUBLE_EQUAL(lbmc_transient_envelope(0), 1.1 * 0.5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(lbmc_transient_envelope(2), 1.1 * 0.07211402, 1e-8);
  CU_ASSERT_DOUBLE_EQUAL(lbmc_transient_envelope(5), 1.1 * 0.008445059, 1e-9);
  for (double x = 0; x < 40; x += 0.37) {
    const double g = lbmc_transient_envelope(x);
    UT_CHECK(g < prev && g > 0, "envelope at %g: %g after %g", x, g, prev);
    prev = g;
  }
  /* M/M/1 at 0.95 from empty: L = 19, tau = 780, 10 x 20000: bound at most 0.1 */
  w = lbmc_transient_warmup(19, 780, 20000, 0.1);
  CU_ASSERT(lbmc_transient_bound(19, 780, w, 20000) <= 0.1 + 1e-12);
  CU_ASSERT(lbmc_transient_bound(19, 780, 0.99 * w, 20000) > 0.1);
  CU_ASSERT_EQUAL(lbmc_transient_warmup(19, 780, 20000, 1e3), 0);
  CU_ASSERT(isnan(lbmc_transient_bound(19, NAN, 100, 20000)));
}

/* Moments of a union from those of its parts (Chan et al.): as computed directly. */
static void test_moments(void)
{
  double x[50], mean = 0, m2 = 0, m3 = 0;
  lbmc_moments a = {0, 0, 0, 0};
  for (int i = 0; i < 50; i++) x[i] = i * i % 17 + 0.25 * i;
  for (int i = 0; i < 50; i++) mean += x[i] / 50;
  for (int i = 0; i < 50; i++) m2 += pow(x[i] - mean, 2), m3 += pow(x[i] - mean, 3);
  for (int part = 0; part < 50; part += 7) { /* parts of 7 (the last of 1) */
    lbmc_moments b = {0, 0, 0, 0};
    const int end = part + 7 < 50 ? part + 7 : 50;
    for (int i = part; i < end; i++) b.mean += x[i] / (end - part);
    for (int i = part; i < end; i++) b.m2 += pow(x[i] - b.mean, 2), b.m3 += pow(x[i] - b.mean, 3);
    b.n = end - part;
    lbmc_moments_add(&a, &b);
  }
  CU_ASSERT_DOUBLE_EQUAL(a.n, 50, 0);
  CU_ASSERT_DOUBLE_EQUAL(a.mean, mean, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(a.m2, m2, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(a.m3, m3, 1e-8);
}

int ut_register_estimators(void)
{
  static const ut_test tests[] = {
      {"ratio: delta method and jackknife by hand", test_ratio_by_hand},
      {"ratio: skew-corrected interval (Hall 1992)", test_ratio_skew},
      {"ratio: empty units, no NaN", test_ratio_empty},
      {"ratio: equal denominators = t interval", test_ratio_equal_x},
      {"ratio: pooled vs mean of ratios (short replicas)", test_ratio_short_replicas},
      {"ratio: coverage", test_ratio_coverage},
      {"ratio: paired and unpaired comparisons", test_ratio_compare},
      {"ratio: paired coverage on common random numbers", test_ratio_paired_coverage},
      {"proportion: CP, Wilson, KG by hand", test_proportion_by_hand},
      {"proportion: none / all observed", test_proportion_extremes},
      {"proportion: rare events and the zero-event bound", test_proportion_rare},
      {"proportion: Clopper-Pearson at 1e4 to 1e22 trials", test_proportion_huge},
      {"rare events: few entries withhold the interval", test_few_events},
      {"batch means: von Neumann and merging", test_batch_merge},
      {"batch means: coverage on a correlated run", test_batch_coverage},
      {"mser: groups, cap, near the cap", test_mser},
      {"growth: drift test", test_growth},
      {"relaxation time: OU, short runs", test_relax},
      {"relaxation time: the batch length factor", test_relax_length_factor},
      {"relaxation time: from the units' summaries, the same bits", test_relax_units},
      {"transient envelope and warm-up", test_transient},
      {"moments of a union", test_moments},
      {NULL, NULL}};
  return ut_add_suite("estimators", tests);
}
