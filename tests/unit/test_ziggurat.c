/* The ziggurat exponential sampler (src/core/ziggurat.h) against Exp(1), with the
 * inversion sampler lbmc_exp1 as a reference. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <string.h>

#include "core/sampler.h"
#include "core/stream.h"
#include "core/ziggurat.h"
#include "unit.h"

#define ZIG_R 7.697117470131487    /* right edge of the base layer */
#define ZIG_V 3.949659822581572e-3 /* area of each layer */

/* Layer i's right edge x_i (i = 1..255; x_255 = R), from the tables. */
static double edge(const lbmc_zig_exp *z, int i) { return z->w[i] * 0x1p45; }

/* Deterministic table checks: every layer i >= 1 has area x_i (f(x_{i-1}) - f(x_i)) = V,
 * the base layer R f(R) + tail f(R) = V, and f[i] = exp(-x_i). The recursion in
 * lbmc_zig_exp_init solves exactly these equations, so only rounding remains: allow
 * 1e-12 (relative to V ~ 4e-3; 255 steps of double rounding give ~1e-14). */
static void test_tables(void)
{
  lbmc_zig_exp z;
  lbmc_zig_exp_init(&z);
  CU_ASSERT_DOUBLE_EQUAL(edge(&z, 255), ZIG_R, 1e-14);
  CU_ASSERT_DOUBLE_EQUAL((ZIG_R + 1) * exp(-ZIG_R), ZIG_V, 1e-12 * ZIG_V);
  CU_ASSERT_DOUBLE_EQUAL(z.f[0], 1.0, 0);
  for (int i = 1; i < 256; i++) {
    double x = edge(&z, i);
    UT_CHECK(fabs(x * (z.f[i - 1] - z.f[i]) - ZIG_V) <= 1e-12, "layer %d area %.17g", i,
             x * (z.f[i - 1] - z.f[i]));
    UT_CHECK(fabs(z.f[i] - exp(-x)) <= 1e-15, "f[%d]", i);
    if (i > 1) {
      UT_CHECK(edge(&z, i - 1) < x, "edges increase at %d", i);
      /* k[i] = floor(x_{i-1} / x_i 2^45): the inner rectangle of layer i */
      UT_CHECK(llabs((long long)z.k[i] - (long long)(edge(&z, i - 1) / x * 0x1p45)) <= 1, "k[%d]",
               i);
    }
  }
  CU_ASSERT_EQUAL(z.k[1], 0); /* the top layer has no inner rectangle */
}

/* Bin edges: every layer edge x_1..x_255 and the midpoint of each strip between them
 * (a wrong wedge test or edge shows there), then the tail beyond R in 5 bins. */
static int make_edges(const lbmc_zig_exp *z, double *e)
{
  int k = 0;
  double prev = 0;
  e[k++] = 0;
  for (int i = 1; i < 256; i++) {
    double x = edge(z, i);
    e[k++] = 0.5 * (prev + x);
    e[k++] = x;
    prev = x;
  }
  e[k++] = 8.5, e[k++] = 9.5, e[k++] = 10.5, e[k++] = 12;
  e[k++] = INFINITY;
  return k; /* k edges, k - 1 bins */
}

static int find_bin(const double *e, int k, double x)
{
  int lo = 0, hi = k - 1; /* e[lo] <= x < e[hi] */
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (x < e[mid])
      hi = mid;
    else
      lo = mid;
  }
  return lo;
}

/* P(a <= X < b) for Exp(1), without cancellation. */
static double prob(double a, double b) { return isinf(b) ? exp(-a) : -exp(-a) * expm1(-(b - a)); }

/* 10^7 ziggurat draws. Moments of Exp(1): E X^k = k!, so
 *   mean 1,               se = sqrt(Var X / N) = sqrt(1 / N);
 *   sample variance 1,    se = sqrt((mu4 - sigma^4) / N) = sqrt((9 - 1) / N)
 *                         (central mu4 = 9);
 *   E X^3 = 6,            se = sqrt((E X^6 - (E X^3)^2) / N) = sqrt((720 - 36) / N);
 * each within 5 se. Then a chi-square goodness of fit over 515 bins of the CDF (layer
 * edges, strip midpoints, far tail), critical value at tail UT_TAIL; the smallest
 * expected count is ~ 10^7 * P(X > 12) = 61. */
static void test_zig_distribution(void)
{
  const long N = 10000000;
  lbmc_zig_exp z;
  lbmc_stream s = {0};
  double e[600], p[600], s1 = 0, s2 = 0, s3 = 0, mean, var, m3;
  long *c = calloc(600, sizeof *c), negative = 0;
  int k;
  CU_ASSERT_FATAL(c != NULL);
  lbmc_zig_exp_init(&z);
  k = make_edges(&z, e);
  CU_ASSERT_FATAL(lbmc_stream_init(&s, 17, 20240601) == LBMC_SUCCESS);
  for (long i = 0; i < N; i++) {
    double x = lbmc_exp_zig(&s, &z), d = x - 1;
    if (x < 0) negative++;
    s1 += d, s2 += d * d, s3 += x * x * x;
    c[find_bin(e, k, x)]++;
  }
  CU_ASSERT_EQUAL(negative, 0);
  mean = 1 + s1 / (double)N;
  var = (s2 - s1 * s1 / (double)N) / (double)(N - 1);
  m3 = s3 / (double)N;
  UT_CHECK_NORMAL("zig mean", mean, 1.0, sqrt(1.0 / (double)N));
  UT_CHECK_NORMAL("zig variance", var, 1.0, sqrt(8.0 / (double)N));
  UT_CHECK_NORMAL("zig E X^3", m3, 6.0, sqrt(684.0 / (double)N));
  for (int i = 0; i + 1 < k; i++) p[i] = prob(e[i], e[i + 1]);
  UT_CHECK_COUNTS("zig CDF bins", c, p, k - 1, N);
  /* the base-layer tail (x > R) alone: P = exp(-R) */
  {
    long tail = 0;
    for (int i = find_bin(e, k, ZIG_R); i + 1 < k; i++) tail += c[i];
    UT_CHECK_BINOMIAL("zig tail x > R", tail, N, exp(-ZIG_R));
  }
  lbmc_stream_free(&s);
  free(c);
}

/* Reference: lbmc_exp1 (inversion) on the same bins with 10^6 draws must fit too (this
 * validates the bin probabilities), and a two-sample chi-square between the two
 * histograms, sum (c1/N1 - c2/N2)^2 / (phat (1/N1 + 1/N2)) over the bins with pooled
 * phat, is below the chi-square quantile (bins - 1 dof) at tail UT_TAIL. */
static void test_against_inversion(void)
{
  const long N1 = 2000000, N2 = 1000000;
  lbmc_zig_exp z;
  lbmc_stream s = {0};
  double e[600], p[600], chi2 = 0;
  long *c1 = calloc(600, sizeof *c1), *c2 = calloc(600, sizeof *c2);
  int k;
  CU_ASSERT_FATAL(c1 && c2);
  lbmc_zig_exp_init(&z);
  k = make_edges(&z, e);
  CU_ASSERT_FATAL(lbmc_stream_init(&s, 18, 777) == LBMC_SUCCESS);
  for (long i = 0; i < N1; i++) c1[find_bin(e, k, lbmc_exp_zig(&s, &z))]++;
  for (long i = 0; i < N2; i++) c2[find_bin(e, k, lbmc_exp1(&s))]++;
  for (int i = 0; i + 1 < k; i++) {
    double ph = (double)(c1[i] + c2[i]) / (double)(N1 + N2);
    double d = (double)c1[i] / (double)N1 - (double)c2[i] / (double)N2;
    p[i] = prob(e[i], e[i + 1]);
    if (ph > 0) chi2 += d * d / (ph * (1.0 / (double)N1 + 1.0 / (double)N2));
  }
  UT_CHECK_COUNTS("inversion CDF bins", c2, p, k - 1, N2);
  UT_CHECK(chi2 <= ut_chisq_crit(k - 2), "two-sample chi-square %.1f > %.1f", chi2,
           ut_chisq_crit(k - 2));
  lbmc_stream_free(&s);
  free(c1);
  free(c2);
}

/* The probability that the slow path accepts the abscissa jz of layer iz (1..255) with
 * its one uniform: the implementation's own wedge test, read by bisection on the uniform
 * it is fed (the test accepts the uniforms below a threshold; 60 halvings reach the
 * 2^-52 grid of the stream's numbers). */
static double wedge_accept(const lbmc_zig_exp *z, uint32_t iz, double x)
{
  lbmc_stream s = {0};
  double lo = 0, hi = 1;
  const uint64_t jz = (uint64_t)(x / z->w[iz]);
  for (int it = 0; it < 60; it++) {
    double u = 0.5 * (lo + hi);
    s.pos = LBMC_STREAM_BUF - 1; /* the next lbmc_u01 returns u, no refill */
    s.buf[LBMC_STREAM_BUF - 1] = u;
    if (lbmc_zig_exp_slow(&s, z, iz, jz) >= 0)
      lo = u;
    else
      hi = u;
  }
  return lo;
}

/* The exact law of lbmc_exp_zig's output, from its tables and its slow path, without
 * sampling: a draw picks layer i with probability 1/256 and an abscissa x uniform on
 * [0, x_i); it is accepted at once inside the inner rectangle [0, k_i w_i), in the wedge
 * with the slow path's probability (integrated by Simpson's rule on 64 cells, error
 * ~1e-15), and the base layer's draws beyond R are R + Exp(1). Rejected draws are
 * redrawn, so the law is the accepted mass normalised: its mean and second moment. (The
 * 2^-44 grid of the abscissa shifts the mean by ~1e-13: not modelled.) */
static void zig_exact_moments(const lbmc_zig_exp *z, double *accept, double *m1, double *m2)
{
  long double mass = 0, s1 = 0, s2 = 0;
  for (uint32_t i = 0; i < 256; i++) {
    const double xr = z->w[i] * 0x1p45, xin = fmin((double)z->k[i] * z->w[i], xr);
    mass += xin / xr, s1 += xin * xin / 2 / xr, s2 += xin * xin * xin / 3 / xr;
    if (i == 0) { /* the tail R + Exp(1): E = R + 1, E X^2 = R^2 + 2R + 2 */
      const double p = (xr - xin) / xr;
      mass += p, s1 += p * (xin + 1), s2 += p * (xin * xin + 2 * xin + 2);
      continue;
    }
    if (xr > xin) {
      const int N = 64;
      const double h = (xr - xin) / N;
      for (int j = 0; j < N; j++) {
        const double a = xin + h * j, c = a + h / 2, b = a + h;
        const double fa = wedge_accept(z, i, a), fc = wedge_accept(z, i, c),
                     fb = wedge_accept(z, i, b);
        mass += h / 6 * (fa + 4 * fc + fb) / xr;
        s1 += h / 6 * (a * fa + 4 * c * fc + b * fb) / xr;
        s2 += h / 6 * (a * a * fa + 4 * c * c * fc + b * b * fb) / xr;
      }
    }
  }
  *accept = (double)(mass / 256), *m1 = (double)(s1 / mass), *m2 = (double)(s2 / mass);
}

/* The sampler's exact mean and second moment (no sampling): 1 and 2 within 1e-11 and
 * 1e-10 (measured: 3e-14 and 2e-13, the quadrature's and the tables' rounding). A
 * relative error e in the mean of the exponential times moves a queue's mean by about
 * e / (1 - rho) when it touches only the arrivals or only the services (e = 1e-4 is 1% at
 * rho 0.99), below what 10^7 draws can see (se 3e-4), or 10^10 (se 1e-5). (Arrivals
 * and services share the sampler, so a common error only rescales time; separate uses
 * are not guaranteed to stay common.) Controls: a layer whose inner rectangle covers its
 * wedge (k = 2^45: the mean 5.6e-6 high), and a layer's abscissa scale 1e-6 too wide
 * (1.7e-9 low), must each fail. */
static void test_zig_exact_law(void)
{
  lbmc_zig_exp z, bad;
  double acc, m1, m2;
  lbmc_zig_exp_init(&z);
  zig_exact_moments(&z, &acc, &m1, &m2);
  UT_CHECK(fabs(m1 - 1) <= 1e-11 && fabs(m2 - 2) <= 1e-10, "exact law: mean %.15g, E X^2 %.15g", m1,
           m2);
  /* the ziggurat's area is 256 V, the density's 1 */
  UT_CHECK(fabs(acc - 1 / (256 * ZIG_V)) <= 1e-11, "acceptance %.15g", acc);
  bad = z;
  bad.k[100] = 1ULL << 45; /* the wedge accepted without its test */
  zig_exact_moments(&bad, &acc, &m1, &m2);
  UT_CHECK(fabs(m1 - 1) > 1e-6, "control (k): mean %.15g should be off", m1);
  bad = z;
  bad.w[200] *= 1 + 1e-6; /* the layer 1e-6 too wide */
  zig_exact_moments(&bad, &acc, &m1, &m2);
  UT_CHECK(fabs(m1 - 1) > 1e-10, "control (w): mean %.15g should be off", m1);
}

/* The inline normal ziggurat (lbmc_normal_zig, the lognormal requirements of the
 * per-server engines) against GSL's gsl_ran_gaussian_ziggurat on a sampler of a stream
 * with the same seed: 3 x 10^6 draws equal bit for bit, the two streams at the same
 * place afterwards (the same uniforms taken), and both slow paths taken (wedges; the
 * tail beyond R = 3.444, about 1700 draws): copied tables that differ from the
 * library's, or a slow path that takes its uniforms in another order, fail here. */
static void test_normal_as_gsl(void)
{
  const long N = 3000000;
  lbmc_stream a = {0}, b = {0};
  gsl_rng *r = NULL;
  long differ = 0, tail = 0, first = -1;
  CU_ASSERT_FATAL(lbmc_stream_init(&a, 19, 4242) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_stream_init(&b, 19, 4242) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_sampler_create(&a, &r) == LBMC_SUCCESS);
  for (long i = 0; i < N; i++) {
    const double x = gsl_ran_gaussian_ziggurat(r, 1.0), y = lbmc_normal_zig(&b);
    if (memcmp(&x, &y, sizeof x) != 0 && differ++ == 0) first = i;
    tail += fabs(y) > 3.44428647676;
  }
  UT_CHECK(differ == 0, "%ld of %ld draws differ from GSL's, the first at %ld", differ, N, first);
  UT_CHECK(tail > 1000, "only %ld draws in the tail", tail);
  UT_CHECK(lbmc_u01(&a) == lbmc_u01(&b), "the streams are no longer in step");
  lbmc_sampler_destroy(&r);
  lbmc_stream_free(&a);
  lbmc_stream_free(&b);
}

/* Uniforms script[0 .. n) then fill (one that GSL's and lbmc's loop accept at once) into
 * both streams' buffers, so that the next draws read them. */
static void zig_script(lbmc_stream *a, lbmc_stream *b, const double *script, int n, double fill)
{
  for (int i = 0; i < LBMC_STREAM_BUF; i++) a->buf[i] = b->buf[i] = i < n ? script[i] : fill;
  a->pos = b->pos = 0;
}

/* The uniform u whose k = floor(u 2^32) is the given 32 bits. */
static double zig_u_of(uint32_t k) { return ((double)k + 0.5) * 0x1p-32; }

/* One draw of both from the script: equal bit for bit, the same uniforms taken. */
static int zig_same(lbmc_stream *a, lbmc_stream *b, gsl_rng *r, const double *script, int n,
                    double fill)
{
  double x, y;
  zig_script(a, b, script, n, fill);
  x = gsl_ran_gaussian_ziggurat(r, 1.0);
  y = lbmc_normal_zig(b);
  return memcmp(&x, &y, sizeof x) == 0 && a->pos == b->pos;
}

/* The normal ziggurat at its edges, against GSL on scripted uniforms (random draws reach
 * them about once in 2^24 per layer): in every layer and for both signs the abscissae 0,
 * 1, k - 1, k (the first outside the inner rectangle: k exact), k + 1 and 2^24 - 1, each
 * followed by wedge uniforms 0, 1/2, 1 - 2^-52 and by the two nearest the wedge's
 * acceptance threshold (exp(-x^2 / 2) - y_{i+1}) / (y_i - y_{i+1}) (a density y that
 * differs from GSL's by a few ulps moves it by tens of steps of 2^-52), and the tail's
 * pairs (U1, U2): a table entry or a branch that differs from GSL's fails here. */
static void test_normal_edges(void)
{
  lbmc_stream a = {0}, b = {0};
  gsl_rng *r = NULL;
  const double top = 1 - 0x1p-52, fill = zig_u_of((1u << 8) | 1u); /* layer 1, j = 1 */
  const double wedge[] = {0, 0.5, top},
               tail[][2] = {{0, 0},     {0, 0.5},   {0.5, 0},   {0.5, 0.5},
                            {0.5, top}, {top, 0.5}, {top, top}, {0.9, 1e-3}};
  long cases = 0, differ = 0;
  char first[128] = "";
  CU_ASSERT_FATAL(lbmc_stream_init(&a, 19, 4242) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_stream_init(&b, 19, 4242) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_sampler_create(&a, &r) == LBMC_SUCCESS);
  for (uint32_t i = 0; i < 128; i++)
    for (uint32_t sign = 0; sign <= 0x80; sign += 0x80) {
      const long k = (long)lbmc_gz_k[i];
      const long js[] = {0, 1, k - 1, k, k + 1, 0xffffff};
      for (int t = 0; t < 6; t++) {
        const long j = js[t];
        double script[4], x, thr;
        if (j < 0 || j > 0xffffff) continue;
        script[0] = zig_u_of(((uint32_t)j << 8) | sign | i);
        x = (double)j * lbmc_gz_w[i];
        thr = i < 127 ? (exp(-0.5 * x * x) - lbmc_gz_y[i + 1]) / (lbmc_gz_y[i] - lbmc_gz_y[i + 1])
                      : NAN;
        for (int c = 0; c < (i < 127 ? 5 : 8); c++) {
          int n = 2;
          if (i < 127 && c < 3) {
            script[1] = wedge[c];
          } else if (i < 127) { /* the grid of 2^-52 next to the threshold, below and above */
            const double g = floor(fmin(fmax(thr, 0), top) * 0x1p52) * 0x1p-52;
            script[1] = c == 3 ? g : fmin(g + 0x1p-52, top);
          } else {
            script[1] = tail[c][0], script[2] = tail[c][1], n = 3;
          }
          cases++;
          if (!zig_same(&a, &b, r, script, n, fill) && differ++ == 0)
            snprintf(first, sizeof first, "layer %u, sign %u, j %ld, case %d", i, sign >> 7, j, c);
        }
      }
    }
  UT_CHECK(differ == 0, "%ld of %ld scripted draws differ from GSL's, the first at %s", differ,
           cases, first);
  UT_CHECK(cases > 128 * 2 * 25, "only %ld cases", cases);
  lbmc_sampler_destroy(&r);
  a.pos = b.pos = LBMC_STREAM_BUF;
  lbmc_stream_free(&a);
  lbmc_stream_free(&b);
}

int ut_register_ziggurat(void)
{
  static const ut_test tests[] = {{"tables: equal layer areas", test_tables},
                                  {"Exp(1): moments and CDF bins (10^7)", test_zig_distribution},
                                  {"agrees with inversion lbmc_exp1", test_against_inversion},
                                  {"Exp(1): the exact law of the tables", test_zig_exact_law},
                                  {"normal: bit for bit GSL's ziggurat", test_normal_as_gsl},
                                  {"normal: GSL's at every layer's edges", test_normal_edges},
                                  {NULL, NULL}};
  return ut_add_suite("ziggurat", tests);
}
