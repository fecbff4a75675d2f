/* The streaming accumulators of src/stats (estimators.h, "streaming"): fed one unit at a
 * time in two passes they give the array functions' intervals bit for bit (memcmp of the
 * lbmc_interval), and the values computed by hand (numpy and scipy) on a small data set. */
#include <math.h>
#include <string.h>

#include "stats/dhist.h"
#include "stats/estimators.h"
#include "unit.h"

#define UT_ACC_TOL 1e-12

/* The data sets: units of (y, x) pairs and a second side (yb, xb) for the paired
 * comparisons; odd cases first. */
typedef struct {
  const char *name;
  size_t units;
  double v[64][4]; /* y, x, yb, xb */
} ut_acc_data;

/* A skewed data set of n units (a deterministic lognormal-like spread, some x = 0). */
static void ut_acc_skewed(ut_acc_data *d, size_t n, int zeros)
{
  d->name = zeros ? "skewed, x = 0 units" : "skewed";
  d->units = n;
  for (size_t i = 0; i < n; i++) {
    const double u = (double)((i * 37 + 11) % 97) / 97.0;
    d->v[i][1] = zeros && i % 5 == 2 ? 0 : 10 + (double)(i % 7);
    d->v[i][0] = d->v[i][1] > 0 ? exp(3 * u) * d->v[i][1] / 10 : 0;
    d->v[i][3] = 5 + (double)(i % 3);
    d->v[i][2] = d->v[i][0] * 0.5 + u;
  }
}

/* Every accumulator fed from rows of 4 doubles one unit at a time, both passes, against the
 * array functions with stride 4: the same bits. */
static void ut_acc_compare(const ut_acc_data *d)
{
  const double *v = &d->v[0][0];
  const double level = 0.95;
  lbmc_ratio_acc a;
  lbmc_paired_acc pd, pr;
  lbmc_interval s[6], t[6];
  memset(s, 0, sizeof s);
  memset(t, 0, sizeof t);
  lbmc_ratio_acc_init(&a);
  lbmc_paired_acc_init(&pd, 0);
  lbmc_paired_acc_init(&pr, 1);
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < d->units; i++) {
      const double *r = d->v[i];
      if (pass) {
        lbmc_ratio_acc_add2(&a, r[0], r[1]);
        lbmc_paired_acc_add2(&pd, r[0], r[1], r[2], r[3]);
        lbmc_paired_acc_add2(&pr, r[0], r[1], r[2], r[3]);
      } else {
        lbmc_ratio_acc_add1(&a, r[0], r[1]);
        lbmc_paired_acc_add1(&pd, r[0], r[1], r[2], r[3]);
        lbmc_paired_acc_add1(&pr, r[0], r[1], r[2], r[3]);
      }
    }
    if (!pass) {
      lbmc_ratio_acc_turn(&a);
      lbmc_paired_acc_turn(&pd);
      lbmc_paired_acc_turn(&pr);
    }
  }
  lbmc_ratio_acc_interval(&a, level, &s[0]);
  lbmc_ratio_acc_interval_skew(&a, level, &s[1]);
  lbmc_ratio_acc_proportion(&a, level, 0, &s[2]);
  lbmc_ratio_acc_proportion(&a, level, 1, &s[3]);
  lbmc_paired_acc_interval(&pd, level, &s[4]);
  lbmc_paired_acc_interval(&pr, level, &s[5]);
  lbmc_ratio_interval(v, v + 1, d->units, 4, level, &t[0]);
  lbmc_ratio_interval_skew(v, v + 1, d->units, 4, level, &t[1]);
  lbmc_proportion_interval(v, v + 1, d->units, 4, level, 0, &t[2]);
  lbmc_proportion_interval(v, v + 1, d->units, 4, level, 1, &t[3]);
  lbmc_ratio_paired_difference(v, v + 1, v + 2, v + 3, d->units, 4, level, &t[4]);
  lbmc_ratio_paired_ratio(v, v + 1, v + 2, v + 3, d->units, 4, level, &t[5]);
  for (int k = 0; k < 6; k++)
    UT_CHECK(ut_same_interval(&s[k], &t[k]),
             "%s, estimator %d: accumulator %.17g [%.17g, %.17g] flags %u, arrays %.17g [%.17g, "
             "%.17g] flags %u",
             d->name, k, s[k].estimate, s[k].lower, s[k].upper, s[k].flags, t[k].estimate,
             t[k].lower, t[k].upper, t[k].flags);
}

/* Awkward data: the accumulators and the array functions agree bit for bit. */
static void test_acc_same_bits(void)
{
  static ut_acc_data d[8];
  d[0] = (ut_acc_data){"one unit", 1, {{3, 2, 1, 1}}};
  d[1] = (ut_acc_data){"no units", 0, {{0}}};
  d[2] = (ut_acc_data){"all y = 0", 4, {{0, 2, 0, 1}, {0, 3, 1, 1}, {0, 1, 0, 2}, {0, 4, 2, 2}}};
  d[3] = (ut_acc_data){"every x = 0", 3, {{0, 0, 1, 1}, {0, 0, 1, 2}, {0, 0, 2, 1}}};
  d[4] = (ut_acc_data){"x = 0 units, zeros",
                       5,
                       {{3, 2, 1, 1}, {0, 0, 1, 2}, {5, 4, 2, 2}, {2, 1, 0, 1}, {7.5, 3, 3, 2}}};
  d[5] = (ut_acc_data){"every y = x", 3, {{2, 2, 1, 1}, {3, 3, 1, 2}, {1, 1, 2, 2}}};
  ut_acc_skewed(&d[6], 64, 0);
  ut_acc_skewed(&d[7], 40, 1);
  for (size_t k = 0; k < sizeof d / sizeof *d; k++) ut_acc_compare(&d[k]);
}

/* By hand (numpy, scipy) on y = 3 0 5 2 7.5, x = 2 0 4 1 3: r = 1.75 over m = 4 units with
 * x > 0, se = sqrt(9.375 / 12) / 2.5; the skewness g = 0.229 from 4 units (< 6): Hall's
 * length, centred. Paired against yb = 1 1 2 0 3, xb = 1 2 2 1 2 over all 5 units. */
static void test_acc_by_hand(void)
{
  const double y[5] = {3, 0, 5, 2, 7.5}, x[5] = {2, 0, 4, 1, 3};
  const double yb[5] = {1, 1, 2, 0, 3}, xb[5] = {1, 2, 2, 1, 2};
  lbmc_ratio_acc a;
  lbmc_paired_acc pd;
  lbmc_interval iv;
  lbmc_ratio_acc_init(&a);
  lbmc_paired_acc_init(&pd, 0);
  for (int i = 0; i < 5; i++) lbmc_ratio_acc_add1(&a, y[i], x[i]);
  for (int i = 0; i < 5; i++) lbmc_paired_acc_add1(&pd, y[i], x[i], yb[i], xb[i]);
  lbmc_ratio_acc_turn(&a);
  lbmc_paired_acc_turn(&pd);
  for (int i = 0; i < 5; i++) lbmc_ratio_acc_add2(&a, y[i], x[i]);
  for (int i = 0; i < 5; i++) lbmc_paired_acc_add2(&pd, y[i], x[i], yb[i], xb[i]);
  CU_ASSERT(a.units == 5 && a.m == 4 && a.observed);
  CU_ASSERT_DOUBLE_EQUAL(a.sy, 17.5, 0);
  CU_ASSERT_DOUBLE_EQUAL(a.sx, 10, 0);
  CU_ASSERT_DOUBLE_EQUAL(a.ss, 9.375, UT_ACC_TOL);
  CU_ASSERT_DOUBLE_EQUAL(a.m2, 9.375, UT_ACC_TOL);
  CU_ASSERT_DOUBLE_EQUAL(a.m3, 3.28125, UT_ACC_TOL);
  lbmc_ratio_acc_interval(&a, 0.95, &iv);
  CU_ASSERT(iv.flags == 0 && iv.units == 5);
  CU_ASSERT_DOUBLE_EQUAL(iv.estimate, 1.75, 0);
  CU_ASSERT_DOUBLE_EQUAL(iv.std_err, 0.3535533905932738, UT_ACC_TOL);
  CU_ASSERT_DOUBLE_EQUAL(iv.dof, 3, 0);
  CU_ASSERT_DOUBLE_EQUAL(iv.lower, 0.624835318385712, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(iv.upper, 2.875164681614288, 1e-9);
  lbmc_ratio_acc_interval_skew(&a, 0.95, &iv);
  CU_ASSERT_DOUBLE_EQUAL(iv.lower, 0.5934944248781779, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(iv.upper, 2.9065055751218223, 1e-9);
  lbmc_paired_acc_interval(&pd, 0.95, &iv);
  CU_ASSERT(iv.flags == 0 && iv.units == 5);
  CU_ASSERT_DOUBLE_EQUAL(iv.estimate, 0.875, UT_ACC_TOL);
  CU_ASSERT_DOUBLE_EQUAL(iv.std_err, 0.3342070255657412, UT_ACC_TOL);
  CU_ASSERT_DOUBLE_EQUAL(iv.lower, -0.05290746025471782, 1e-9);
  /* all y = 0: none observed, no interval, never "0 +/- 0" */
  lbmc_ratio_acc_init(&a);
  for (int i = 0; i < 3; i++) lbmc_ratio_acc_add1(&a, 0, x[i]);
  lbmc_ratio_acc_turn(&a);
  for (int i = 0; i < 3; i++) lbmc_ratio_acc_add2(&a, 0, x[i]);
  lbmc_ratio_acc_proportion(&a, 0.95, 1, &iv);
  CU_ASSERT(iv.flags == LBMC_IV_NONE_OBSERVED && iv.estimate == 0);
  CU_ASSERT_DOUBLE_EQUAL(iv.upper_bound, lbmc_zero_event_bound(6, 0.95), 0);
}

/* The drift test's accumulator: by hand, the same bits as lbmc_growth_test, one
 * accumulation finished twice. */
static void test_acc_growth(void)
{
  const double q[4][5] = {
      {1, 2, 3, 4.5, 10}, {0.5, 1, 2, 2.5, 8}, {1, 1.5, 2.5, 4, 12}, {0, 1, 1.5, 3, 9}};
  lbmc_growth_acc a;
  lbmc_growth g, h;
  lbmc_growth_acc_init(&a, 4, 0.85);
  for (int i = 0; i < 4; i++) lbmc_growth_acc_add1(&a, q[i], q[i][4]);
  lbmc_growth_acc_turn(&a);
  for (int i = 0; i < 4; i++) lbmc_growth_acc_add2(&a, q[i], q[i][4]);
  lbmc_growth_acc_test(&a, 0.05, 0.01, &g);
  CU_ASSERT_DOUBLE_EQUAL(g.growth, 0.1282051282051282, UT_ACC_TOL);
  CU_ASSERT_DOUBLE_EQUAL(g.growth_lower, 0.08171898776326525, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(g.decel, 0.50625, UT_ACC_TOL);
  CU_ASSERT_DOUBLE_EQUAL(g.decel_lower, -0.20560799675291896, 1e-9);
  CU_ASSERT(!g.proven); /* decelerating */
  for (int t = 0; t < 2; t++) {
    const double alpha = t ? 0.2 : 0.05, g_min = t ? 0 : 0.01;
    lbmc_growth_acc_test(&a, alpha, g_min, &g);
    lbmc_growth_test(&q[0][0], &q[0][4], 4, 5, alpha, 0.85, g_min, &h);
    /* field by field: the struct's padding bytes are unspecified (they differed
     * under the sanitizers) */
    CU_ASSERT(UT_SAME_FIELD(&g, &h, growth));
    CU_ASSERT(UT_SAME_FIELD(&g, &h, growth_lower));
    CU_ASSERT(UT_SAME_FIELD(&g, &h, decel));
    CU_ASSERT(UT_SAME_FIELD(&g, &h, decel_lower));
    CU_ASSERT(g.proven == h.proven);
  }
  /* one unit: no test */
  lbmc_growth_acc_init(&a, 1, 0.85);
  lbmc_growth_acc_add1(&a, q[0], q[0][4]);
  lbmc_growth_acc_turn(&a);
  lbmc_growth_acc_add2(&a, q[0], q[0][4]);
  lbmc_growth_acc_test(&a, 0.05, 0, &g);
  CU_ASSERT(isnan(g.growth) && isnan(g.growth_lower) && !g.proven);
}

/* The uniform law on [0, 1] as a pooled distribution of `total` observations. */
static unsigned ut_acc_uniform_q(const void *ctx, double p, double *x)
{
  (void)ctx;
  *x = p;
  return 0;
}

/* Woodruff's interval from a band fed unit by unit: the same bits as lbmc_woodruff. */
static void test_acc_woodruff(void)
{
  double Y[30], X[30], work[60];
  lbmc_pooled_dist d = {ut_acc_uniform_q, NULL, 0, 1};
  for (int i = 0; i < 30; i++) {
    X[i] = 40 + (double)(i * 7 % 11);
    Y[i] = floor(X[i] * (0.9 + 0.002 * (double)(i % 13)));
    d.total += X[i];
  }
  for (int t = 0; t < 3; t++) {
    const double p = t == 0 ? 0.9 : t == 1 ? 0.5 : 0.99;
    lbmc_ratio_acc a;
    lbmc_interval band, s, w;
    memset(&s, 0, sizeof s);
    memset(&w, 0, sizeof w);
    lbmc_ratio_acc_arrays(&a, Y, X, 30, 1);
    lbmc_ratio_acc_proportion(&a, 0.95, d.trials, &band);
    lbmc_woodruff_from_band(&d, p, p, 0, &band, 0, 0.95, &s);
    lbmc_woodruff(&d, p, p, 0, Y, X, 30, 0.95, NULL, work, &w);
    UT_CHECK(ut_same_interval(&s, &w), "p %g: from the band [%.17g, %.17g], whole [%.17g, %.17g]",
             p, s.lower, s.upper, w.lower, w.upper);
  }
}

int ut_register_accumulators(void)
{
  static const ut_test tests[] = {
      {"accumulators: the array functions' bits on awkward data", test_acc_same_bits},
      {"accumulators: ratio, skewness and paired by hand", test_acc_by_hand},
      {"accumulators: the drift test, two finishes", test_acc_growth},
      {"accumulators: Woodruff from a band", test_acc_woodruff},
      {NULL, NULL}};
  return ut_add_suite("accumulators", tests);
}
