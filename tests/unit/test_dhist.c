/* Histograms without a fixed range and quantile intervals (src/stats/dhist.h): bins and
 * the documented bin error, point masses, time-unit scaling, under- and overflow, the
 * byte form, Erlang mixtures against M/M/1's exact quantiles, and the coverage of
 * Woodruff intervals across units and across batches. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <math.h>
#include <stdlib.h>

#include "stats/dhist.h"
#include "unit.h"

static const double levels[] = {0.5, 0.9, 0.99, 0.999};

/* Same contents: counts, extremes, and the one value of every single-valued bin (the
 * first value of a mixed bin means nothing). */
static int same_hist(const lbmc_dhist *a, const lbmc_dhist *b)
{
  if (a->scale != b->scale || a->min != b->min || a->max != b->max || a->zero != b->zero ||
      a->under != b->under || a->over != b->over)
    return 0;
  if (memcmp(a->counts, b->counts, sizeof a->counts) || memcmp(a->mixed, b->mixed, sizeof a->mixed))
    return 0;
  for (int k = 0; k < LBMC_DHIST_BINS; k++)
    if (a->counts[k] && !(a->mixed[k / 64] & (1ULL << (k % 64))) && a->first[k] != b->first[k])
      return 0;
  return 1;
}

static lbmc_dhist *new_hist(double scale)
{
  lbmc_dhist *h = malloc(sizeof *h);
  CU_ASSERT_FATAL(h != NULL);
  lbmc_dhist_init(h, scale);
  return h;
}

/* Values at bin edges land in their bin; the edges are scale * 2^e (1 + j/64). */
static void test_dhist_bins(void)
{
  lbmc_dhist *h = new_hist(0.25);
  double x = 0.25 * ldexp(1 + 5.0 / 64, 3); /* octave 3 + 32, sub-bin 5 */
  uint32_t b = (3 - LBMC_DHIST_EMIN) * LBMC_DHIST_SUB + 5;
  lbmc_dhist_add(h, x);
  CU_ASSERT_EQUAL(h->counts[b], 1);
  CU_ASSERT_EQUAL(lbmc_dhist_edge(h, b), x);
  lbmc_dhist_add(h, nextafter(x, 0)); /* just below: the previous bin */
  CU_ASSERT_EQUAL(h->counts[b - 1], 1);
  lbmc_dhist_add(h, 0.0);
  CU_ASSERT_EQUAL(h->zero, 1);
  CU_ASSERT_EQUAL(lbmc_dhist_total(h), 3);
  CU_ASSERT_EQUAL(lbmc_dhist_edge(h, 0), 0.25 * ldexp(1, LBMC_DHIST_EMIN));
  CU_ASSERT_EQUAL(lbmc_dhist_edge(h, LBMC_DHIST_BINS),
                  0.25 * ldexp(1, LBMC_DHIST_EMIN + LBMC_DHIST_OCTAVES));
  free(h);
}

/* Every customer with the same time: every quantile is that time, not above it. */
static void test_dhist_point_mass(void)
{
  lbmc_dhist *h = new_hist(1.0);
  double q;
  for (int i = 0; i < 1000; i++) lbmc_dhist_add(h, 3.7);
  for (int i = 0; i < 4; i++) {
    CU_ASSERT_EQUAL(lbmc_dhist_quantile(h, levels[i], &q), 0);
    CU_ASSERT_EQUAL(q, 3.7);
  }
  CU_ASSERT_EQUAL(lbmc_dhist_count_le(h, 3.7), 1000);
  CU_ASSERT_EQUAL(lbmc_dhist_count_le(h, 3.6999), 0);
  /* atoms among other values (deterministic service, some waits): each atom's bin keeps
   * its value exactly; the median (among 1.25's customers) is 1.25, not interpolated */
  for (int i = 0; i < 3000; i++) lbmc_dhist_add(h, 1.25);
  for (int i = 0; i < 1000; i++) lbmc_dhist_add(h, 2.0 + 0.001 * i);
  CU_ASSERT_EQUAL(lbmc_dhist_quantile(h, 0.5, &q), 0);
  CU_ASSERT_EQUAL(q, 1.25);
  CU_ASSERT_EQUAL(lbmc_dhist_quantile(h, 0.7, &q), 0); /* rank 3500 of 5000: 2.5 */
  UT_CHECK(fabs(q - 2.5) <= 2.5 / 64, "q0.7 = %.9g", q);
  CU_ASSERT_EQUAL(lbmc_dhist_quantile(h, 0.9, &q), 0);
  CU_ASSERT_EQUAL(q, 3.7);
  free(h);
}

/* Exponential times (mean 10, n = 200000) with 30% zeros: each quantile is within one
 * bin (1/64 relative) of the exact empirical quantile (the ceil(p n)-th smallest value)
 * and within [min, max]; count_le inverts the quantile. */
static void test_dhist_bin_error(void)
{
  enum { N = 200000 };
  lbmc_dhist *h = new_hist(1.0);
  double *v = malloc(sizeof *v * N), q;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(v && r);
  gsl_rng_set(r, 11);
  for (int i = 0; i < N; i++) {
    v[i] = gsl_rng_uniform(r) < 0.3 ? 0 : gsl_ran_exponential(r, 10);
    lbmc_dhist_add(h, v[i]);
  }
  gsl_sort(v, 1, N);
  for (int i = 0; i < 4; i++) {
    double exact = v[(size_t)ceil(levels[i] * N) - 1];
    CU_ASSERT_EQUAL(lbmc_dhist_quantile(h, levels[i], &q), 0);
    UT_CHECK(fabs(q - exact) <= exact / 64, "q%.3f = %.9g, exact %.9g", levels[i], q, exact);
    UT_CHECK(fabs(lbmc_dhist_count_le(h, q) - levels[i] * N) < 1e-6 * N, "count_le(q%.3f) = %.3f",
             levels[i], lbmc_dhist_count_le(h, q));
  }
  CU_ASSERT_EQUAL(lbmc_dhist_quantile(h, 0.2, &q), 0);
  CU_ASSERT_EQUAL(q, 0); /* among the zeros */
  CU_ASSERT_EQUAL(lbmc_dhist_quantile(h, 1 - 1e-9, &q), 0);
  CU_ASSERT(q <= v[N - 1] && q >= v[N - 2]);
  free(v), free(h), gsl_rng_free(r);
}

/* The same times in units 1e-9, 1 and 1e9 (scale scaled alike) give the same quantiles in
 * those units; the 1e-9-rate model (times ~ 1e9) is far inside the range. */
static void test_dhist_scaling(void)
{
  const double units[] = {1e-9, 1, 1e9};
  lbmc_dhist *h[3];
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  double q[3];
  CU_ASSERT_FATAL(r != NULL);
  for (int u = 0; u < 3; u++) h[u] = new_hist(2.0 * units[u]);
  gsl_rng_set(r, 12);
  for (int i = 0; i < 50000; i++) {
    double x = gsl_ran_exponential(r, 7.0);
    for (int u = 0; u < 3; u++) lbmc_dhist_add(h[u], x * units[u]);
  }
  for (int i = 0; i < 4; i++) {
    for (int u = 0; u < 3; u++) CU_ASSERT_EQUAL(lbmc_dhist_quantile(h[u], levels[i], &q[u]), 0);
    UT_CHECK(fabs(q[0] / units[0] - q[1]) <= 1e-12 * q[1] &&
                 fabs(q[2] / units[2] - q[1]) <= 1e-12 * q[1],
             "q%.3f: %.17g, %.17g, %.17g", levels[i], q[0] / units[0], q[1], q[2] / units[2]);
  }
  for (int u = 0; u < 3; u++) CU_ASSERT_EQUAL(h[u]->under + h[u]->over, 0);
  for (int u = 0; u < 3; u++) free(h[u]);
  gsl_rng_free(r);
}

/* Values beyond the range are counted, never clamped; a quantile there is unknown. */
static void test_dhist_range(void)
{
  lbmc_dhist *h = new_hist(1.0);
  double q, hi_end = lbmc_dhist_edge(h, LBMC_DHIST_BINS);
  for (int i = 0; i < 10; i++) lbmc_dhist_add(h, 1e-12);
  for (int i = 0; i < 80; i++) lbmc_dhist_add(h, 1.0);
  for (int i = 0; i < 10; i++) lbmc_dhist_add(h, 1e12);
  lbmc_dhist_add(h, INFINITY);
  CU_ASSERT_EQUAL(h->under, 10);
  CU_ASSERT_EQUAL(h->over, 11);
  CU_ASSERT_EQUAL(lbmc_dhist_total(h), 101);
  CU_ASSERT_EQUAL(lbmc_dhist_quantile(h, 0.05, &q), LBMC_IV_BELOW_RANGE);
  CU_ASSERT_EQUAL(q, lbmc_dhist_edge(h, 0));
  CU_ASSERT_EQUAL(lbmc_dhist_quantile(h, 0.5, &q), 0);
  CU_ASSERT_EQUAL(q, 1.0); /* an atom */
  CU_ASSERT_EQUAL(lbmc_dhist_quantile(h, 0.95, &q), LBMC_IV_ABOVE_RANGE);
  CU_ASSERT_EQUAL(q, hi_end);
  lbmc_dhist_init(h, 1.0);
  CU_ASSERT_EQUAL(lbmc_dhist_quantile(h, 0.5, &q), LBMC_IV_EMPTY);
  CU_ASSERT(isnan(q));
  free(h);
}

/* Merging equals adding every value to one histogram; the byte form round-trips, is
 * small for sparse data, and a truncated one is refused. */
static void test_dhist_merge_pack(void)
{
  lbmc_dhist *a = new_hist(0.5), *b = new_hist(0.5), *all = new_hist(0.5), *back = new_hist(1);
  unsigned char *buf = malloc(LBMC_DHIST_PACK_MAX);
  size_t n, used;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(buf && r);
  gsl_rng_set(r, 13);
  for (int i = 0; i < 5000; i++) {
    double x = gsl_rng_uniform(r) < 0.2 ? 0 : gsl_ran_lognormal(r, 0, 2);
    lbmc_dhist_add(i % 2 ? a : b, x);
    lbmc_dhist_add(all, x);
  }
  CU_ASSERT_EQUAL(lbmc_dhist_merge(a, b), LBMC_SUCCESS);
  CU_ASSERT(same_hist(a, all));
  n = lbmc_dhist_pack(a, buf, LBMC_DHIST_PACK_MAX);
  CU_ASSERT(n < LBMC_DHIST_PACK_MAX && n < 8 * 1024);
  CU_ASSERT_EQUAL(lbmc_dhist_pack(a, NULL, 0), n); /* size query */
  CU_ASSERT_EQUAL(lbmc_dhist_unpack(back, buf, n, &used), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(used, n);
  CU_ASSERT(same_hist(a, back));
  fprintf(stderr, "  (dhist: %llu values, packed in %zu bytes)\n",
          (unsigned long long)lbmc_dhist_total(a), n);
  CU_ASSERT_NOT_EQUAL(lbmc_dhist_unpack(back, buf, n - 1, &used), LBMC_SUCCESS);
  CU_ASSERT_NOT_EQUAL(lbmc_dhist_unpack(back, buf, 10, &used), LBMC_SUCCESS);
  lbmc_dhist_init(b, 0.25);
  CU_ASSERT_EQUAL(lbmc_dhist_merge(a, b), LBMC_ERR_INTERNAL); /* different scales */
  free(a), free(b), free(all), free(back), free(buf), gsl_rng_free(r);
}

/* M/M/1 (lambda 0.9, mu 1) in Erlang-mixture form: a customer finding k customers waits
 * Erlang(k, mu) and stays Erlang(k + 1, mu); k is geometric(rho). The mixture's
 * quantiles are those of the exact laws: sojourn Exp(mu - lambda), q = -ln(1-p)/(mu -
 * lambda); wait 0 with probability 1 - rho, else q = ln(rho / (1-p)) / (mu - lambda). */
static void test_mix_mm1(void)
{
  enum { K = 700 };
  const double lambda = 0.9, mu = 1, rho = lambda / mu;
  int ks[K], kw[K];
  double rate[K], w[K], q;
  lbmc_erlang_mix soj = {K, ks, rate}, wait = {K, kw, rate};
  for (int k = 0; k < K; k++) {
    ks[k] = k + 1;
    kw[k] = k;
    rate[k] = mu;
    w[k] = 1e9 * (1 - rho) * pow(rho, k); /* counts: the weights of a long run */
  }
  for (int i = 0; i < 4; i++) {
    double p = levels[i];
    CU_ASSERT_EQUAL(lbmc_mix_quantile(&soj, w, p, &q), 0);
    UT_CHECK(fabs(q + log(1 - p) / (mu - lambda)) < 1e-9 * q, "sojourn q%.3f = %.12g", p, q);
    CU_ASSERT_EQUAL(lbmc_mix_quantile(&wait, w, p, &q), 0);
    if (p <= 1 - rho) {
      CU_ASSERT_EQUAL(q, 0);
    } else {
      UT_CHECK(fabs(q - log(rho / (1 - p)) / (mu - lambda)) < 1e-9 * q, "wait q%.3f = %.12g", p, q);
    }
  }
  for (int k = 0; k < K; k++) w[k] = 0;
  CU_ASSERT_EQUAL(lbmc_mix_quantile(&soj, w, 0.5, &q), LBMC_IV_EMPTY);
}

/* Coverage of Woodruff intervals: T sets of R = 20 units of 200 Exp(1) times each (0.9 and
 * 0.99 quantiles, true -ln(1 - p)); the same with one unit of 40 batches (the batch
 * rule); and with Erlang-mixture units (M/M/1 at rho = 0.5: 100 customers per unit with
 * geometric classes; true sojourn quantile -ln(1-p)/(mu - lambda)). Each within 5
 * binomial sigmas of 0.95. */
static void test_quantile_coverage(void)
{
  enum { T = 1000, R = 20, M = 200, B = 40, C = 60 };
  lbmc_dhist *u = malloc(sizeof *u * B), *pooled = new_hist(1.0);
  const lbmc_dhist *up[B];
  double work[4 * B + C], counts[R * C], pc[C], rate[C];
  int shape[C];
  lbmc_erlang_mix mix = {C, shape, rate};
  long cover[2] = {0, 0}, cover_b = 0, cover_m = 0;
  lbmc_batch_rule rule;
  lbmc_interval iv;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  CU_ASSERT_FATAL(u && r);
  gsl_rng_set(r, 14);
  lbmc_batch_rule_default(&rule);
  for (int c = 0; c < C; c++) shape[c] = c + 1, rate[c] = 1.0;
  for (int i = 0; i < B; i++) up[i] = &u[i];
  for (int t = 0; t < T; t++) {
    lbmc_dhist_init(pooled, 1.0);
    for (int i = 0; i < R; i++) {
      lbmc_dhist_init(&u[i], 1.0);
      for (int k = 0; k < M; k++) lbmc_dhist_add(&u[i], gsl_ran_exponential(r, 1));
      lbmc_dhist_merge(pooled, &u[i]);
    }
    for (int j = 0; j < 2; j++) {
      double p = j ? 0.99 : 0.9;
      lbmc_dhist_quantile_interval(up, R, pooled, p, 0.95, NULL, work, &iv);
      cover[j] += iv.lower <= -log(1 - p) && -log(1 - p) <= iv.upper;
    }
    lbmc_dhist_init(pooled, 1.0); /* one run of 40 batches of 100 */
    for (int i = 0; i < B; i++) {
      lbmc_dhist_init(&u[i], 1.0);
      for (int k = 0; k < 100; k++) lbmc_dhist_add(&u[i], gsl_ran_exponential(r, 1));
      lbmc_dhist_merge(pooled, &u[i]);
    }
    lbmc_dhist_quantile_interval(up, B, pooled, 0.9, 0.95, &rule, work, &iv);
    cover_b += iv.lower <= -log(0.1) && -log(0.1) <= iv.upper;
    for (int c = 0; c < C; c++) pc[c] = 0;
    for (int i = 0; i < R; i++) {
      for (int c = 0; c < C; c++) counts[i * C + c] = 0;
      for (int k = 0; k < 100; k++) { /* class of a customer: geometric(0.5) customers found */
        unsigned found = gsl_ran_geometric(r, 0.5) - 1;
        if (found >= C) found = C - 1;
        counts[i * C + found]++;
        pc[found]++;
      }
    }
    lbmc_mix_quantile_interval(&mix, counts, R, pc, 0.9, 0.95, NULL, work, &iv);
    cover_m += iv.lower <= 2 * log(10) && 2 * log(10) <= iv.upper;
  }
  UT_CHECK_BINOMIAL("Woodruff q0.9 coverage, 20 replicas", cover[0], T, 0.95);
  UT_CHECK_BINOMIAL("Woodruff q0.99 coverage, 20 replicas", cover[1], T, 0.95);
  UT_CHECK_BINOMIAL("Woodruff q0.9 coverage, 40 batches", cover_b, T, 0.95);
  UT_CHECK_BINOMIAL("Woodruff q0.9 coverage, Erlang mixture", cover_m, T, 0.95);
  free(u), free(pooled), gsl_rng_free(r);
}

/* Too few customers for a tail quantile: no interval (flagged unreliable); the estimate
 * itself never exceeds the largest value seen. An upper end among the overflow is open:
 * 20 units of 2000 customers, 0.95% of them beyond the range; q0.99 is known, the upper
 * end of its interval (F beyond 0.9905) is not. */
static void test_quantile_few(void)
{
  lbmc_dhist *u = malloc(sizeof *u * 3), *pooled = new_hist(1.0);
  const lbmc_dhist *up[3] = {&u[0], &u[1], &u[2]};
  double work[12];
  lbmc_interval iv;
  for (int i = 0; i < 3; i++) {
    lbmc_dhist_init(&u[i], 1.0);
    for (int k = 1; k <= 5; k++) lbmc_dhist_add(&u[i], k + 0.1 * i);
    lbmc_dhist_merge(pooled, &u[i]);
  }
  lbmc_dhist_quantile_interval(up, 3, pooled, 0.999, 0.95, NULL, work, &iv);
  CU_ASSERT(iv.flags & LBMC_IV_UNRELIABLE);
  CU_ASSERT(isnan(iv.upper) && isnan(iv.lower) && isnan(iv.half_width));
  CU_ASSERT(iv.estimate <= pooled->max && iv.estimate >= 5.0);
  lbmc_dhist_quantile_interval(up, 1, pooled, 0.5, 0.95, NULL, work, &iv); /* one unit */
  CU_ASSERT(iv.flags & LBMC_IV_NO_INTERVAL);
  CU_ASSERT(!isnan(iv.estimate));
  {
    lbmc_dhist *v = malloc(sizeof *v * 20);
    const lbmc_dhist *vp[20];
    double w[80];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    CU_ASSERT_FATAL(v && r);
    gsl_rng_set(r, 15);
    lbmc_dhist_init(pooled, 1.0);
    for (int i = 0; i < 20; i++) {
      vp[i] = &v[i];
      lbmc_dhist_init(&v[i], 1.0);
      for (int k = 0; k < 2000; k++)
        lbmc_dhist_add(&v[i], k < 19 ? 1e12 : gsl_ran_exponential(r, 1));
      lbmc_dhist_merge(pooled, &v[i]);
    }
    lbmc_dhist_quantile_interval(vp, 20, pooled, 0.99, 0.95, NULL, w, &iv);
    CU_ASSERT_EQUAL(iv.flags, LBMC_IV_UPPER_OPEN);
    CU_ASSERT(isnan(iv.upper) && iv.lower < iv.estimate && iv.estimate < 10);
    free(v), gsl_rng_free(r);
  }
  free(u), free(pooled);
}

int ut_register_dhist(void)
{
  static const ut_test tests[] = {{"dhist: bins and edges", test_dhist_bins},
                                  {"dhist: point mass", test_dhist_point_mass},
                                  {"dhist: bin error bound", test_dhist_bin_error},
                                  {"dhist: time units 1e-9, 1, 1e9", test_dhist_scaling},
                                  {"dhist: under- and overflow", test_dhist_range},
                                  {"dhist: merge and byte form", test_dhist_merge_pack},
                                  {"mixture: M/M/1 exact quantiles", test_mix_mm1},
                                  {"quantile: Woodruff coverage", test_quantile_coverage},
                                  {"quantile: too few customers", test_quantile_few},
                                  {NULL, NULL}};
  return ut_add_suite("dhist", tests);
}
