/* Model set-up and input checks: pool sizes by largest remainder, errors, policy text,
 * and the value parsers of lbmc/check.h. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lbmc/check.h"
#include "lbmc/model.h"
#include "unit.h"

/* A model with J pools (mu 1, unlimited buffers); returns setup's code. */
static lbmc_err make(lbmc_model **m, long n, int J, const double *beta, const char *policy)
{
  double mu[LBMC_MAX_POOLS];
  long buf[LBMC_MAX_POOLS];
  lbmc_err e;
  for (int j = 0; j < J; j++) mu[j] = 1, buf[j] = LBMC_BUFFER_INF;
  CU_ASSERT_FATAL(lbmc_model_create(m) == LBMC_SUCCESS);
  if ((e = lbmc_model_set_n(*m, n)) || (e = lbmc_model_set_lambda(*m, 0.5)) ||
      (e = lbmc_model_set_pools(*m, J, beta, mu, buf)) || (e = lbmc_model_set_policy(*m, policy)))
    return e;
  return lbmc_model_setup(*m);
}

static void check_sizes(long n, int J, const double *beta, const long *want)
{
  lbmc_model *m = NULL;
  UT_CHECK(make(&m, n, J, beta, "random") == LBMC_SUCCESS, "setup n = %ld", n);
  for (int j = 0; j < J; j++)
    UT_CHECK(lbmc_model_pool_servers(m, j) == want[j], "n = %ld pool %d: %ld servers, want %ld", n,
             j, lbmc_model_pool_servers(m, j), want[j]);
  lbmc_model_destroy(&m);
}

static void test_pool_sizes_examples(void)
{
  const double thirds[] = {1.0 / 3, 1.0 / 3, 1.0 / 3}, halves[] = {0.5, 0.5};
  const double mixed[] = {0.25, 0.6, 0.15};
  check_sizes(10, 3, thirds, (const long[]){4, 3, 3});
  check_sizes(7, 2, halves, (const long[]){4, 3});
  /* 0.25*13 = 3.25, 0.6*13 = 7.8, 0.15*13 = 1.95: floors 3,7,1 (11), remainders .25,.8,.95 */
  check_sizes(13, 3, mixed, (const long[]){3, 8, 2});
}

/* Over many n and fraction vectors: the sizes sum to n, each is floor or ceil of beta n,
 * and a pool rounded up never has a smaller remainder than a pool rounded down. */
static void test_pool_sizes_property(void)
{
  const double sets[][4] = {{0.2, 0.3, 0.5, 0},
                            {0.1, 0.1, 0.1, 0.7},
                            {1.0 / 7, 2.0 / 7, 4.0 / 7, 0},
                            {0.999, 0.001, 0, 0}};
  const int Js[] = {3, 4, 3, 2};
  for (int k = 0; k < 4; k++)
    for (long n = 1; n <= 2000; n += (n < 100 ? 1 : 37)) {
      lbmc_model *m = NULL;
      long sum = 0;
      int ok = 1;
      double min_up = INFINITY, max_down = -INFINITY;
      if (make(&m, n, Js[k], sets[k], "random") != LBMC_SUCCESS) {
        /* only allowed when some pool may get no server: floor(beta n) = 0 */
        for (int j = 0; j < Js[k]; j++) ok = ok && sets[k][j] * (double)n >= 1;
        UT_CHECK(!ok, "set %d n = %ld refused although every beta n >= 1", k, n);
        lbmc_model_destroy(&m);
        continue;
      }
      for (int j = 0; j < Js[k]; j++) {
        double x = sets[k][j] * (double)n, rem = x - floor(x);
        long N = lbmc_model_pool_servers(m, j);
        sum += N;
        ok = ok && (N == (long)floor(x) || N == (long)floor(x) + 1);
        if (N == (long)floor(x) + 1)
          min_up = fmin(min_up, rem);
        else
          max_down = fmax(max_down, rem);
      }
      UT_CHECK(sum == n, "set %d n = %ld: sizes sum to %ld", k, n, sum);
      UT_CHECK(ok, "set %d n = %ld: a size is neither floor nor ceil of beta n", k, n);
      UT_CHECK(min_up >= max_down, "set %d n = %ld: rounded up a smaller remainder", k, n);
      lbmc_model_destroy(&m);
    }
}

static void test_errors(void)
{
  lbmc_model *m = NULL;
  const double bad_sum[] = {0.5, 0.4}, near[] = {0.5, 0.5 + 0.5 * LBMC_BETA_SUM_TOL};
  const double over[] = {0.5, 0.5 + 2 * LBMC_BETA_SUM_TOL}, one = 1, mu = 1;
  const long zero = 0, inf = LBMC_BUFFER_INF;

  CU_ASSERT_EQUAL(make(&m, 10, 2, bad_sum, "random"), LBMC_ERR_ARG);
  lbmc_model_destroy(&m);
  CU_ASSERT_EQUAL(make(&m, 10, 2, near, "random"), LBMC_SUCCESS); /* within the tolerance */
  lbmc_model_destroy(&m);
  CU_ASSERT_EQUAL(make(&m, 10, 2, over, "random"), LBMC_ERR_ARG);
  lbmc_model_destroy(&m);
  CU_ASSERT_EQUAL(make(&m, 2, 1, &one, "jsq(3)"), LBMC_ERR_ARG); /* d > n */
  lbmc_model_destroy(&m);
  CU_ASSERT_EQUAL(make(&m, 3, 1, &one, "jsq(3)"), LBMC_SUCCESS); /* d = n allowed */
  lbmc_model_destroy(&m);
  CU_ASSERT_EQUAL(make(&m, 2, 1, &one, "balanced(3)"), LBMC_ERR_ARG);
  lbmc_model_destroy(&m);
  CU_ASSERT_EQUAL(make(&m, 2, 3, (const double[]){0.4, 0.4, 0.2}, "random"), LBMC_ERR_ARG);
  lbmc_model_destroy(&m); /* n = 2 cannot give 3 pools a server each */

  CU_ASSERT_FATAL(lbmc_model_create(&m) == LBMC_SUCCESS);
  CU_ASSERT_EQUAL(lbmc_model_set_pools(m, 1, &one, &mu, &zero), LBMC_ERR_ARG); /* buffer 0 */
  CU_ASSERT_EQUAL(lbmc_model_set_pools(m, 1, &one, &mu, &inf), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(lbmc_model_set_pools(m, 1, (const double[]){0}, &mu, &inf), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_pools(m, 1, &one, (const double[]){-1}, &inf), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_lambda(m, -0.5), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_lambda(m, 0), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_lambda(m, NAN), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_n(m, 0), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_routers(m, 0), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_policy(m, "shortest"), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_policy(m, "jsq(0)"), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_policy(m, "jsq(-2)"), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_policy(m, "jsq()"), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_policy(m, "jsq(2"), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_policy(m, "jsq(2) x"), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_policy(m, "pull(2)"), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_policy(m, "balanced"), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_policy(m, "jiq(2)"), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_stale(m, "drop"), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_model_set_sampling(m, "both"), LBMC_ERR_ARG);
  lbmc_model_destroy(&m);
}

static void test_policy_text(void)
{
  const double one = 1;
  const struct {
    const char *in, *canon, *family;
    long param;
  } cases[] = {
      {"random", "random", "random", 0}, {"jsq(2)", "jsq(2)", "jsq", 2},
      {" jsq (3) ", "jsq(3)", "jsq", 3}, {"jsq( 2 )", "jsq(2)", "jsq", 2},
      {"jsq", "jsq", "jsq", 10},         {"balanced(4)", "balanced(4)", "balanced", 4},
      {"pull", "pull", "pull", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lbmc_model *m = NULL;
    lbmc_err e = make(&m, 10, 1, &one, cases[i].in);
    UT_CHECK(e == LBMC_SUCCESS, "policy '%s' refused (%d)", cases[i].in, (int)e);
    if (e == LBMC_SUCCESS) {
      UT_CHECK(strcmp(lbmc_model_policy(m), cases[i].canon) == 0, "'%s' -> '%s', want '%s'",
               cases[i].in, lbmc_model_policy(m), cases[i].canon);
      UT_CHECK(strcmp(lbmc_model_policy_name(m), cases[i].family) == 0, "'%s' family '%s'",
               cases[i].in, lbmc_model_policy_name(m));
      UT_CHECK(lbmc_model_policy_param(m) == cases[i].param, "'%s' param %ld, want %ld",
               cases[i].in, lbmc_model_policy_param(m), cases[i].param);
    }
    lbmc_model_destroy(&m);
  }
}

static void test_stale_and_jiq(void)
{
  const double one = 1;
  lbmc_model *m = NULL;
  CU_ASSERT_EQUAL(make(&m, 4, 1, &one, "pull"), LBMC_SUCCESS);
  CU_ASSERT_STRING_EQUAL(lbmc_model_stale(m), "withdraw"); /* default */
  CU_ASSERT_STRING_EQUAL(lbmc_model_sampling(m), "");
  lbmc_model_destroy(&m);

  CU_ASSERT_EQUAL(make(&m, 4, 1, &one, "jiq"), LBMC_SUCCESS);
  CU_ASSERT_STRING_EQUAL(lbmc_model_policy_name(m), "pull");
  CU_ASSERT_STRING_EQUAL(lbmc_model_stale(m), "keep");
  { /* jiq + stale withdraw is refused, by the setter or at setup */
    lbmc_err e = lbmc_model_set_stale(m, "withdraw");
    if (e == LBMC_SUCCESS) e = lbmc_model_setup(m);
    CU_ASSERT_EQUAL(e, LBMC_ERR_ARG);
  }
  CU_ASSERT_EQUAL(lbmc_model_set_stale(m, "keep"), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(lbmc_model_setup(m), LBMC_SUCCESS);
  /* Leaving jiq for pull must not keep jiq's stale: keep (stale was never given). */
  CU_ASSERT_EQUAL(lbmc_model_set_policy(m, "pull"), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(lbmc_model_setup(m), LBMC_SUCCESS);
  lbmc_model_destroy(&m);

  CU_ASSERT_EQUAL(make(&m, 4, 1, &one, "jiq"), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(lbmc_model_set_policy(m, "pull"), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(lbmc_model_setup(m), LBMC_SUCCESS);
  UT_CHECK(strcmp(lbmc_model_stale(m), "withdraw") == 0,
           "policy jiq then pull (stale never set): stale is '%s', want the default 'withdraw'",
           lbmc_model_stale(m));
  lbmc_model_destroy(&m);

  /* The contradiction jiq + stale withdraw is an error in either order. */
  CU_ASSERT_FATAL(lbmc_model_create(&m) == LBMC_SUCCESS);
  CU_ASSERT_EQUAL(lbmc_model_set_stale(m, "withdraw"), LBMC_SUCCESS);
  {
    lbmc_err e = lbmc_model_set_policy(m, "jiq");
    if (e == LBMC_SUCCESS) {
      double mu = 1;
      long inf = LBMC_BUFFER_INF;
      lbmc_model_set_n(m, 4);
      lbmc_model_set_lambda(m, 0.5);
      lbmc_model_set_pools(m, 1, &one, &mu, &inf);
      e = lbmc_model_setup(m);
    }
    UT_CHECK(e == LBMC_ERR_ARG,
             "stale 'withdraw' then policy 'jiq' accepted (stale now '%s'); want LBMC_ERR_ARG",
             lbmc_model_stale(m));
  }
  lbmc_model_destroy(&m);

  CU_ASSERT_EQUAL(make(&m, 4, 1, &one, "jsq(2)"), LBMC_SUCCESS);
  CU_ASSERT_STRING_EQUAL(lbmc_model_sampling(m), "distinct");
  CU_ASSERT_STRING_EQUAL(lbmc_model_stale(m), "");
  CU_ASSERT_EQUAL(lbmc_model_set_sampling(m, "with_replacement"), LBMC_SUCCESS);
  CU_ASSERT_STRING_EQUAL(lbmc_model_sampling(m), "with_replacement");
  lbmc_model_destroy(&m);
}

static void test_rho(void)
{
  lbmc_model *m = NULL;
  const double beta[] = {0.5, 0.5}, mu[] = {2, 1.0 / 3};
  const long buf[] = {LBMC_BUFFER_INF, LBMC_BUFFER_INF};
  CU_ASSERT_FATAL(lbmc_model_create(&m) == LBMC_SUCCESS);
  lbmc_model_set_n(m, 10);
  lbmc_model_set_lambda(m, 1);
  lbmc_model_set_pools(m, 2, beta, mu, buf);
  CU_ASSERT_EQUAL_FATAL(lbmc_model_setup(m), LBMC_SUCCESS);
  /* rho = 1 / (0.5 * 2 + 0.5 / 3) = 6/7; rounding only */
  CU_ASSERT_DOUBLE_EQUAL(lbmc_model_rho(m), 6.0 / 7, 1e-15);
  lbmc_model_destroy(&m);
}

static void test_parse(void)
{
  double v = 0;
  long b = 0;
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "1/3", &v), LBMC_SUCCESS);
  CU_ASSERT_DOUBLE_EQUAL(v, 1.0 / 3, 1e-16);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "2e-3", &v), LBMC_SUCCESS);
  CU_ASSERT_DOUBLE_EQUAL(v, 2e-3, 0);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "-0.25", &v), LBMC_SUCCESS);
  CU_ASSERT_DOUBLE_EQUAL(v, -0.25, 0);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "abc", &v), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "1/0", &v), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "1/", &v), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "0.5x", &v), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "", &v), LBMC_ERR_ARG);

  CU_ASSERT_EQUAL(lbmc_parse_buffer("b", "inf", &b), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(b, LBMC_BUFFER_INF);
  CU_ASSERT_EQUAL(lbmc_parse_buffer("b", "1", &b), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(b, 1);
  CU_ASSERT_EQUAL(lbmc_parse_buffer("b", "25", &b), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(b, 25);
  CU_ASSERT_EQUAL(lbmc_parse_buffer("b", "0", &b), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_buffer("b", "-2", &b), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_buffer("b", "2.5", &b), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_buffer("b", "many", &b), LBMC_ERR_ARG);
  /* -1 is only the internal code of "inf"; as text it is a buffer < 1 */
  b = 0;
  {
    lbmc_err e = lbmc_parse_buffer("b", "-1", &b);
    UT_CHECK(e == LBMC_ERR_ARG,
             "lbmc_parse_buffer(\"-1\") accepted (as %ld = unlimited); want LBMC_ERR_ARG", b);
  }

  CU_ASSERT_EQUAL(lbmc_parse_long("k", "12", &b), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(b, 12);
  CU_ASSERT_EQUAL(lbmc_parse_long("k", "1e3", &b), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(b, 1000);
  CU_ASSERT_EQUAL(lbmc_parse_long("k", "1.5", &b), LBMC_ERR_ARG);
}

/* Every number is read whole, without truncation, overflow or underflow. */
static void test_parse_whole_range(void)
{
  char text[200], num[100];
  double v = 0;
  long b = 0, i = 0, k = 0;
  /* a numerator of 67 characters was cut at 63 ("1.000...0", the e-3 lost): 1/2 */
  snprintf(num, sizeof num, "1.%062de-3", 0);
  snprintf(text, sizeof text, "%s/2", num);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", text, &v), LBMC_SUCCESS);
  UT_CHECK(v == 0.0005, "lbmc_parse_real(\"%s\") = %g; want 0.0005", text, v);
  snprintf(text, sizeof text, "2/%s", num);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", text, &v), LBMC_SUCCESS);
  CU_ASSERT_DOUBLE_EQUAL(v, 2000, 1e-9);
  snprintf(text, sizeof text, "1.%062dx/2", 0); /* junk after the 63rd character */
  CU_ASSERT_EQUAL(lbmc_parse_real("x", text, &v), LBMC_ERR_ARG);
  /* underflow: refused, not read as 0 (or as a subnormal with lost digits) */
  v = 1;
  UT_CHECK(lbmc_parse_real("x", "1e-400", &v) == LBMC_ERR_ARG, "1e-400 accepted as %g", v);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "-1e-400", &v), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "1e-310", &v), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "1e-300/1e300", &v), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "1/1e-400", &v), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "0e-400", &v), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(v, 0);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "0/5", &v), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "2.2250738585072014e-308", &v), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(v, DBL_MIN);
  /* overflow */
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "1e400", &v), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "1e300/1e-300", &v), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_real("x", "1.7976931348623157e308", &v), LBMC_SUCCESS);
  /* integers: out of range is refused (not wrapped or clamped), 1e-400 is no integer */
  CU_ASSERT_EQUAL(lbmc_parse_long("k", "9223372036854775807", &b), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(b, LONG_MAX);
  CU_ASSERT_EQUAL(lbmc_parse_long("k", "9223372036854775808", &b), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_long("k", "-9223372036854775809", &b), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_long("k", "1e19", &b), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_long("k", "9.2e18", &b), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(b, 9200000000000000000L);
  b = 7;
  UT_CHECK(lbmc_parse_long("k", "1e-400", &b) == LBMC_ERR_ARG, "1e-400 accepted as %ld", b);
  CU_ASSERT_EQUAL(lbmc_parse_buffer("b", "1e-400", &b), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_buffer("b", "1e30", &b), LBMC_ERR_ARG);
  /* an integer inside a larger text */
  CU_ASSERT_EQUAL(lbmc_parse_long_n("d", "12)", 2, &b), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(b, 12);
  CU_ASSERT_EQUAL(lbmc_parse_long_n("d", "1x)", 2, &b), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_long_n("d", ")", 0, &b), LBMC_ERR_ARG);
  /* shards I/K: whole text */
  CU_ASSERT_EQUAL(lbmc_parse_shard("--shard", "2/16", &i, &k), LBMC_SUCCESS);
  CU_ASSERT(i == 2 && k == 16);
  CU_ASSERT_EQUAL(lbmc_parse_shard("--shard", "1/2x", &i, &k), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_shard("--shard", "1/99999999999999999999", &i, &k), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_shard("--shard", "3/2", &i, &k), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_parse_shard("--shard", "0/2", &i, &k), LBMC_ERR_ARG);
}

int ut_register_model(void)
{
  static const ut_test tests[] = {
      {"pool sizes: examples (4,3,3), (4,3)", test_pool_sizes_examples},
      {"pool sizes: sum n, largest remainders", test_pool_sizes_property},
      {"input errors", test_errors},
      {"policy text: canonical form", test_policy_text},
      {"stale, jiq and sampling", test_stale_and_jiq},
      {"rho", test_rho},
      {"numbers: whole text, range, underflow", test_parse_whole_range},
      {"parse real / buffer / long", test_parse},
      {NULL, NULL}};
  return ut_add_suite("model", tests);
}
