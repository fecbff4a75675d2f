/* Random streams: the stream numbering of lbmc/rng.h and the SPRNG streams behind it. */
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sprng/sprng.h>

#include "core/stream.h"
#include "lbmc/rng.h"
#include "unit.h"

#define NDRAW 100000

static void test_number_formula(void)
{
  int g = -1;
  CU_ASSERT_EQUAL(lbmc_stream_number(3, 5, 10, LBMC_PURPOSE_ROUTING, &g), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(g, (3 * 10 + 5) * 4 + 2);
  CU_ASSERT_EQUAL(lbmc_stream_number(0, 0, 1, LBMC_PURPOSE_ARRIVALS, &g), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(g, 0);
  /* consecutive (point, replica, purpose) give consecutive numbers: no gaps, no reuse */
  for (long pt = 0, expect = 0; pt < 3; pt++)
    for (long r = 0; r < 7; r++)
      for (int p = 0; p < LBMC_PURPOSES; p++, expect++) {
        CU_ASSERT_EQUAL(lbmc_stream_number(pt, r, 7, (lbmc_purpose)p, &g), LBMC_SUCCESS);
        CU_ASSERT_EQUAL(g, expect);
      }
  CU_ASSERT_EQUAL(lbmc_stream_number(0, 7, 7, 0, &g), LBMC_ERR_ARG);  /* replica >= max */
  CU_ASSERT_EQUAL(lbmc_stream_number(-1, 0, 7, 0, &g), LBMC_ERR_ARG); /* point < 0 */
  CU_ASSERT_EQUAL(lbmc_stream_number(0, 0, 0, 0, &g), LBMC_ERR_ARG);  /* replicas_max < 1 */
  CU_ASSERT_EQUAL(lbmc_stream_number(0, 0, 1, LBMC_PURPOSES, &g), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_stream_number(1L << 40, 0, 1000, 0, &g), LBMC_ERR_LIMIT);
}

/* The boundary of lbmc_stream_number and lbmc_stream_check_capacity agree: a job of
 * P points x rmax replicas fits iff 4 P rmax - 1 <= LBMC_STREAM_MAX, i.e.
 * P rmax <= (LBMC_STREAM_MAX + 1) / 4, and then its last stream number is valid. */
static void test_capacity(void)
{
  const long cap = (LBMC_STREAM_MAX + 1) / LBMC_PURPOSES, rmaxs[] = {1, 3, 1000, 999983, cap};
  int g;
  for (size_t i = 0; i < sizeof rmaxs / sizeof rmaxs[0]; i++) {
    long rmax = rmaxs[i], P = cap / rmax;
    UT_CHECK(lbmc_stream_check_capacity(P, rmax) == LBMC_SUCCESS, "capacity %ld x %ld", P, rmax);
    UT_CHECK(lbmc_stream_check_capacity(P + 1, rmax) == LBMC_ERR_LIMIT, "capacity %ld x %ld", P + 1,
             rmax);
    UT_CHECK(lbmc_stream_number(P - 1, rmax - 1, rmax, LBMC_PURPOSES - 1, &g) == LBMC_SUCCESS,
             "last stream of %ld x %ld", P, rmax);
    UT_CHECK(g <= LBMC_STREAM_MAX && g >= 0, "stream %d", g);
    UT_CHECK(lbmc_stream_number(P, rmax - 1, rmax, LBMC_PURPOSES - 1, &g) == LBMC_ERR_LIMIT,
             "stream beyond %ld x %ld", P, rmax);
  }
  /* the SPEC's example: 200 points x 1000 replicas x 3 purposes fits */
  CU_ASSERT_EQUAL(lbmc_stream_check_capacity(200, 1000), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(lbmc_stream_check_capacity(LONG_MAX / 2, 4), LBMC_ERR_LIMIT);
}

static void draw(int gennum, long seed, double *x, size_t n)
{
  lbmc_stream s = {0};
  CU_ASSERT_FATAL(lbmc_stream_init(&s, gennum, seed) == LBMC_SUCCESS);
  for (size_t i = 0; i < n; i++) x[i] = lbmc_u01(&s);
  lbmc_stream_free(&s);
}

/* Pearson correlation of x and y. */
static double corr(const double *x, const double *y, size_t n)
{
  double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; i++) mx += x[i], my += y[i];
  mx /= (double)n, my /= (double)n;
  for (size_t i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / sqrt(sxx * syy);
}

/* Independent streams: the sample correlation of N pairs has standard error
 * 1/sqrt(N - 1) (exact variance of r under independence, normal theory), so it must lie
 * within 5/sqrt(N - 1) of 0. Lag-1 correlation within a stream: same bound. */
static void test_independence(void)
{
  double *a = malloc(sizeof *a * NDRAW), *b = malloc(sizeof *b * NDRAW);
  const double se = 1 / sqrt(NDRAW - 1.0);
  const struct {
    int g1;
    long s1;
    int g2;
    long s2;
  } pairs[] = {{0, 42, 1, 42}, {7, 42, 7, 43}, {5, 1, 9, 2}, {2, 0, (int)LBMC_STREAM_MAX, 0}};
  CU_ASSERT_FATAL(a && b);
  for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
    double r;
    draw(pairs[k].g1, pairs[k].s1, a, NDRAW);
    draw(pairs[k].g2, pairs[k].s2, b, NDRAW);
    UT_CHECK(memcmp(a, b, sizeof *a * 1000) != 0, "streams (%d,%ld) and (%d,%ld) are identical",
             pairs[k].g1, pairs[k].s1, pairs[k].g2, pairs[k].s2);
    r = corr(a, b, NDRAW);
    UT_CHECK_NORMAL("correlation of two streams", r, 0.0, se);
    r = corr(a, a + 1, NDRAW - 1);
    UT_CHECK_NORMAL("lag-1 correlation", r, 0.0, 1 / sqrt(NDRAW - 2.0));
  }
  free(a);
  free(b);
}

/* Stream numbers far apart (beyond the 2^19 of SPRNG's LCG, up to LBMC_STREAM_MAX)
 * initialise and are all different: no wrap-around reuses a stream. */
static void test_far_streams(void)
{
  const int g[] = {
      0, 1, 1 << 19, (1 << 19) + 1, 1 << 24, (int)LBMC_STREAM_MAX - 1, (int)LBMC_STREAM_MAX};
  double first[7][4];
  for (int i = 0; i < 7; i++) draw(g[i], 2024, first[i], 4);
  for (int i = 0; i < 7; i++)
    for (int j = i + 1; j < 7; j++)
      UT_CHECK(memcmp(first[i], first[j], sizeof first[i]) != 0, "streams %d and %d coincide", g[i],
               g[j]);
}

static void test_reinit(void)
{
  lbmc_stream s = {0};
  double x[1000], y[1000];
  CU_ASSERT_FATAL(lbmc_stream_init(&s, 11, 99) == LBMC_SUCCESS);
  for (int i = 0; i < 1000; i++) x[i] = lbmc_u01(&s);
  /* re-initialising an initialised stream (buffer half used) restarts the sequence */
  CU_ASSERT_FATAL(lbmc_stream_init(&s, 11, 99) == LBMC_SUCCESS);
  for (int i = 0; i < 1000; i++) y[i] = lbmc_u01(&s);
  CU_ASSERT(memcmp(x, y, sizeof x) == 0);
  lbmc_stream_free(&s);
  lbmc_stream_free(&s); /* safe twice */
  CU_ASSERT_EQUAL(lbmc_stream_init(&s, 0, -1), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_stream_init(&s, 0, LBMC_SEED_MAX + 1), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_stream_init(&s, 0, LBMC_SEED_MAX), LBMC_SUCCESS);
  lbmc_stream_free(&s);
}

/* U(0,1): mean 1/2 with standard error sqrt(1/12 / N); sample variance 1/12 with
 * standard error sqrt((mu4 - sigma^4) / N) = sqrt((1/80 - 1/144) / N) = sqrt(1/(180 N));
 * 100 equal bins by chi-square; lbmc_uint(7) uniform on 0..6 by chi-square. */
static void test_uniform(void)
{
  const long N = 1000000;
  lbmc_stream s = {0};
  double sum = 0, sum2 = 0, mean, var;
  long bins[100] = {0}, ints[7] = {0}, outside = 0;
  double p100[100], p7[7];
  CU_ASSERT_FATAL(lbmc_stream_init(&s, 3, 31337) == LBMC_SUCCESS);
  for (long i = 0; i < N; i++) {
    double u = lbmc_u01(&s);
    if (!(u >= 0 && u < 1)) outside++;
    sum += u - 0.5;
    sum2 += (u - 0.5) * (u - 0.5);
    bins[(int)(u * 100)]++;
  }
  CU_ASSERT_EQUAL(outside, 0);
  mean = 0.5 + sum / (double)N;
  var = (sum2 - sum * sum / (double)N) / (double)(N - 1);
  UT_CHECK_NORMAL("uniform mean", mean, 0.5, sqrt(1.0 / 12 / (double)N));
  UT_CHECK_NORMAL("uniform variance", var, 1.0 / 12, sqrt(1.0 / 180 / (double)N));
  for (int i = 0; i < 100; i++) p100[i] = 0.01;
  UT_CHECK_COUNTS("uniform bins", bins, p100, 100, N);
  for (long i = 0; i < 700000; i++) {
    uint32_t k = lbmc_uint(&s, 7);
    if (k >= 7)
      outside++;
    else
      ints[k]++;
  }
  CU_ASSERT_EQUAL(outside, 0);
  for (int i = 0; i < 7; i++) p7[i] = 1.0 / 7;
  UT_CHECK_COUNTS("lbmc_uint(7)", ints, p7, 7, 700000);
  lbmc_stream_free(&s);
}

/* The stream's numbers are SPRNG's own, bit for bit: lbmc's refill (stream.c) against
 * get_rn_dbl on a generator made alike by init_rng, over several refills and for
 * streams far apart. Control: a stream of another seed differs. */
static void test_sprng_identity(void)
{
  static const int gens[] = {0, 1, 7, 123457, 4000000};
  for (size_t g = 0; g < sizeof gens / sizeof *gens; g++) {
    lbmc_stream s = {0}, other = {0};
    int *ref = init_rng(SPRNG_MLFG, gens[g], INT_MAX, 9876, 0);
    long differ = 0, same_other = 0;
    CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
    CU_ASSERT_EQUAL_FATAL(lbmc_stream_init(&s, gens[g], 9876), LBMC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(lbmc_stream_init(&other, gens[g], 9877), LBMC_SUCCESS);
    for (int i = 0; i < 10 * LBMC_STREAM_BUF + 17; i++) {
      double u = lbmc_u01(&s), r = get_rn_dbl(ref);
      differ += memcmp(&u, &r, sizeof u) != 0;
      same_other += lbmc_u01(&other) == r;
    }
    CU_ASSERT_EQUAL(differ, 0);
    CU_ASSERT(same_other < 3); /* control: the comparison can see a different sequence */
    free_rng(ref);
    lbmc_stream_free(&s);
    lbmc_stream_free(&other);
  }
}

/* lbmc's start of a stream is init_rng's: every one of the first 300 numbers of
 * streams over the range of stream numbers and seeds, among them the start whose shift
 * register would be 0 (gennum = seed xor 0x372f05ac, replaced by that constant), the
 * largest stream number and seed; and one stream in 4096 is also checked at run time
 * (stream 0 here) and initialises. */
static void test_sprng_start(void)
{
  static const int gens[] = {0, 1, 2, 3, 16, 4095, 4097, 65536, 8388607, 99999999, 0x7ffffffe};
  static const int seeds[] = {0, 1, 5, 11, 9876, 20240601, 0x7fffffff};
  long differ = 0, n = 0;
  for (size_t g = 0; g < sizeof gens / sizeof *gens; g++)
    for (size_t k = 0; k < sizeof seeds / sizeof *seeds; k++) {
      lbmc_stream s = {0};
      int *ref = init_rng(SPRNG_MLFG, gens[g], INT_MAX, seeds[k], 0);
      CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
      CU_ASSERT_EQUAL_FATAL(lbmc_stream_init(&s, gens[g], seeds[k]), LBMC_SUCCESS);
      for (int i = 0; i < 300; i++, n++) {
        double u = lbmc_u01(&s), r = get_rn_dbl(ref);
        differ += memcmp(&u, &r, sizeof u) != 0;
      }
      free_rng(ref);
    }
  for (int k = 0; k < 3; k++) { /* the register's zero case */
    const int seed = (int[]){5, 0, 0x12345}[k], gen = (int)(0x372f05acu ^ (unsigned)seed);
    lbmc_stream s = {0};
    int *ref = init_rng(SPRNG_MLFG, gen, INT_MAX, seed, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
    CU_ASSERT_EQUAL_FATAL(lbmc_stream_init(&s, gen, seed), LBMC_SUCCESS);
    for (int i = 0; i < 300; i++, n++) {
      double u = lbmc_u01(&s), r = get_rn_dbl(ref);
      differ += memcmp(&u, &r, sizeof u) != 0;
    }
    free_rng(ref);
  }
  UT_CHECK(differ == 0, "%ld of %ld numbers differ from init_rng's streams", differ, n);
  lbmc_stream s = {0};
  CU_ASSERT_EQUAL(lbmc_stream_init(&s, -1, 1), LBMC_ERR_RNG);
  CU_ASSERT_EQUAL(lbmc_stream_init(&s, INT_MAX, 1), LBMC_ERR_RNG);
  CU_ASSERT_EQUAL(lbmc_stream_init(&s, 0, -1), LBMC_ERR_ARG);
}

/* A stream costs nothing once freed: lbmc makes SPRNG's start itself (stream.c), so
 * the 128-byte start vector that SPRNG's init_rng never frees (a 144-byte heap chunk a
 * stream, 432 when lbmc checked its loop on two more streams made by init_rng) is not
 * left behind. Counted by the heap's own bytes in use (glibc's mallinfo2; a sanitizer's
 * allocator reports nothing there, and LeakSanitizer checks that build instead). The
 * streams 6000 .. 7999 include none of the one-in-4096 checked against init_rng. */
static void test_stream_leak(void)
{
  enum { N = 2000 };
  lbmc_stream s;
  memset(&s, 0, sizeof s);
  for (int i = 0; i < 8; i++) { /* the heap's first growth, out of the count */
    CU_ASSERT_EQUAL_FATAL(lbmc_stream_init(&s, 5000 + i, 11), LBMC_SUCCESS);
    lbmc_stream_free(&s);
  }
  const size_t before = mallinfo2().uordblks;
  for (int i = 0; i < N; i++) {
    CU_ASSERT_EQUAL_FATAL(lbmc_stream_init(&s, 6000 + i, 11), LBMC_SUCCESS);
    lbmc_stream_free(&s);
  }
  const size_t after = mallinfo2().uordblks;
  const double per = after > before ? (double)(after - before) / N : 0;
  UT_CHECK(per < 1, "a freed stream leaves %.1f bytes (init_rng's start vector: 144)", per);
}

int ut_register_streams(void)
{
  static const ut_test tests[] = {{"stream number formula and errors", test_number_formula},
                                  {"capacity agrees with numbering", test_capacity},
                                  {"independent streams (corr within 5 se)", test_independence},
                                  {"far stream numbers distinct", test_far_streams},
                                  {"re-initialise reproduces", test_reinit},
                                  {"uniforms in [0,1): mean, variance, bins", test_uniform},
                                  {"numbers are SPRNG's bit for bit", test_sprng_identity},
                                  {"the start is init_rng's, bit for bit", test_sprng_start},
                                  {"a freed stream leaves nothing", test_stream_leak},
                                  {NULL, NULL}};
  return ut_add_suite("streams", tests);
}
