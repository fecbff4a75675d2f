/* lbmc_service_residual (src/core/sampler.h): the equilibrium residual of every law
 * against its distribution function G_e(x) = int_0^x P(S > u) du (E[S] = 1), in closed
 * form: at five points each, the empirical fraction below x within 5 binomial standard
 * errors, and a chi-square over the six cells; for the phase-type laws, the mean
 * E[S^2] / 2 = (1 + scv) / 2 too. The control: the requirement itself (not its residual)
 * fails the same check for a law where the two differ. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdlib.h>

#include "core/sampler.h"
#include "unit.h"

#define RES_N 200000

/* G_e(x) of law s (not phase-type forms other than hyperexponential: NAN). */
static double res_cdf(const lbmc_service *s, double x)
{
  switch (s->kind) {
  case LBMC_SERVICE_EXPONENTIAL: return 1 - exp(-x);
  case LBMC_SERVICE_DETERMINISTIC: return x < 1 ? x : 1;
  case LBMC_SERVICE_ERLANG: {
    double k = s->p[0], sum = 0;
    for (int i = 1; i <= (int)k; i++) sum += gsl_cdf_gamma_P(x, i, 1 / k);
    return sum / k;
  }
  case LBMC_SERVICE_HYPEREXPONENTIAL: {
    double p = s->p[0], r1 = s->p[1], r2 = s->p[2];
    return p / r1 * (1 - exp(-r1 * x)) + (1 - p) / r2 * (1 - exp(-r2 * x));
  }
  case LBMC_SERVICE_LOGNORMAL: { /* x P(S > x) + E[S; S <= x] */
    double z = s->p[0], sg = s->p[1], l = log(x);
    return x * gsl_cdf_ugaussian_Q((l - z) / sg) + gsl_cdf_ugaussian_P((l - z - sg * sg) / sg);
  }
  case LBMC_SERVICE_WEIBULL: {
    double k = s->p[0], y = pow(x / s->p[1], k);
    return x * exp(-y) + gsl_cdf_gamma_P(y, 1 + 1 / k, 1);
  }
  case LBMC_SERVICE_LOMAX: return 1 - pow(1 + x / s->p[1], -(s->p[0] - 1));
  default: return NAN;
  }
}

/* Check residual samples (or, control, requirement samples) of law `text`; 1 if it passes. */
static int res_check(const char *text, int control, int quiet)
{
  lbmc_service s;
  lbmc_stream st = {.pos = LBMC_STREAM_BUF};
  gsl_rng *r = NULL;
  double *x = malloc(sizeof *x * RES_N), mean = 0, pts[5], p[6];
  long cells[6] = {0};
  int ok = 1;
  if (!x || lbmc_service_parse("test", text, &s) || lbmc_stream_init(&st, 7, 99) ||
      lbmc_sampler_create(&st, &r)) {
    UT_CHECK(0, "%s: set-up", text);
    free(x);
    return 0;
  }
  for (long i = 0; i < RES_N; i++) {
    x[i] = control ? lbmc_service_sample(&s, r) : lbmc_service_residual(&s, r);
    mean += x[i] / RES_N;
  }
  if (isnan(res_cdf(&s, 0.5))) { /* ph, coxian: the mean, (1 + scv) / 2 */
    double sd = 0, want = (1 + s.scv) / 2;
    for (long i = 0; i < RES_N; i++) sd += (x[i] - mean) * (x[i] - mean);
    sd = sqrt(sd / (RES_N - 1) / RES_N);
    ok = fabs(mean - want) <= UT_Z * sd;
    if (!quiet) UT_CHECK(ok, "%s: residual mean %g, want %g (se %g)", text, mean, want, sd);
  } else {
    const double q[5] = {0.1, 0.3, 0.5, 0.7, 0.9};
    double lo = 0, hi = 1, prev = 0, chi = 0;
    for (int k = 0; k < 5; k++) { /* the points: G_e's quantiles by bisection */
      lo = 0, hi = 1;
      while (res_cdf(&s, hi) < q[k]) hi *= 2;
      for (int it = 0; it < 200; it++) {
        double mid = (lo + hi) / 2;
        if (res_cdf(&s, mid) < q[k])
          lo = mid;
        else
          hi = mid;
      }
      pts[k] = hi;
    }
    for (long i = 0; i < RES_N; i++) {
      int c = 0;
      while (c < 5 && x[i] > pts[c]) c++;
      cells[c]++;
    }
    for (int c = 0; c < 6; c++) {
      double P = (c < 5 ? res_cdf(&s, pts[c]) : 1) - prev;
      prev += P;
      p[c] = P;
      chi += pow((double)cells[c] - RES_N * P, 2) / (RES_N * P);
    }
    ok = chi <= ut_chisq_crit(5);
    if (!quiet) UT_CHECK_COUNTS(text, cells, p, 6, RES_N);
  }
  lbmc_sampler_destroy(&r);
  lbmc_stream_free(&st);
  free(x);
  return ok;
}

static void test_residual_laws(void)
{
  const char *laws[] = {"exponential",
                        "deterministic",
                        "erlang:k=3",
                        "erlang:k=40",
                        "hyperexponential:scv=5",
                        "lognormal:scv=4",
                        "lognormal:scv=0.25",
                        "weibull:shape=0.5",
                        "weibull:shape=3",
                        "lomax:shape=2.5",
                        "lomax:shape=1.5",
                        "coxian:scv=8",
                        "ph:alpha=[0.5,0.5],T=[[-1,1],[0,-2]]"};
  for (size_t i = 0; i < sizeof laws / sizeof laws[0]; i++) res_check(laws[i], 0, 0);
  UT_CHECK(!res_check("lognormal:scv=4", 1, 1) && !res_check("coxian:scv=8", 1, 1),
           "the control: requirements instead of residuals must fail");
}

int ut_register_residual(void)
{
  CU_pSuite s = CU_add_suite("residual", NULL, NULL);
  if (!s) return -1;
  return CU_add_test(s, "equilibrium residual of every law", test_residual_laws) ? 0 : -1;
}
