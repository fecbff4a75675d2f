/* Service-requirement distributions (include/lbmc/service.h, src/core/service.c):
 * parsing and its errors, and the samplers' moments and distributions.
 *
 * Moments. A requirement S has mean 1 and scv C = Var[S]. From a fixed-seed sample
 * X_1..X_N:
 *   - the sample mean has standard error sqrt(C / N);
 *   - the sample variance about the known mean, V = (1/N) sum (X_i - 1)^2, is unbiased
 *     for C with Var[V] = (mu4 - C^2) / N, where mu4 = E[(S - 1)^4] is the 4th central
 *     moment; from the raw moments m_r = E[S^r] and m_1 = 1:
 *         mu4 = m4 - 4 m3 + 6 m2 - 3.
 * Both must lie within UT_Z = 5 standard errors. The raw moments of each distribution
 * are computed here from its stated parameters (formulas by each case), independently
 * of the parameterisation in service.c, and m2 - 1 is checked against the stated scv.
 * For heavy tails (lognormal scv 4) V is far from normal at N = 10^6 (its summands
 * have a huge skewness); Chebyshev still bounds P(|V - C| > 5 sd) by 1/25, and the
 * seed is fixed, so a pass is reproducible, but the check is weaker than "5 sigma"
 * suggests there. Lomax with shape 3 has no 4th moment (Var[V] is infinite): only its
 * mean is checked (its variance 3 is finite, so sqrt(3/N) is a valid standard error).
 *
 * Distributions. Beyond moments, each continuous distribution is checked through the
 * probability integral transform: U = F(X) is uniform on (0, 1) when X has the CDF F,
 * so the counts of U in 100 equal cells must pass UT_CHECK_COUNTS (every cell within 5
 * binomial sigma, Pearson's chi-square below its quantile of tail UT_TAIL). F comes from
 * GSL's CDFs (gsl_cdf_*) or closed forms, with parameters derived here.
 *
 * Phase-type laws (alpha, T): m_r = r! alpha (-T)^-r 1 (solved here with GSL's LU, not
 * service.c's elimination), and the survival function alpha exp(T x) 1 by
 * uniformisation (q = max |t_ii|, P = I + T/q: sum_k Poisson(k; q x) alpha P^k 1),
 * tested on 100 cells of a grid in x (UT_CHECK_COUNTS with the cells' probabilities).
 * Several cases are known laws in another form (a Coxian equal in law to Exp(1), a
 * 16-phase dense ph whose every phase exits at rate 1, a ph Erlang-3 and a ph H2), so
 * the phase walk is also checked against independent CDFs. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sampler.h"
#include "core/stream.h"
#include "lbmc/service.h"
#include "unit.h"

#define NSAMPLE 1000000L
#define NCELLS  100

/* ---- parsing ---- */

static lbmc_service parse_ok(const char *text)
{
  lbmc_service s;
  lbmc_err err = lbmc_service_parse("test", text, &s);
  UT_CHECK(err == LBMC_SUCCESS, "'%s' must parse (error %d)", text, (int)err);
  return s;
}

/* Parse with the error handler in store mode: the call must fail with LBMC_ERR_ARG and
 * its message (lbmc_error_message) must hold every fragment (NULL-terminated list). */
static void parse_bad(const char *text, const char *const *frags)
{
  const lbmc_error_mode was = lbmc_error_set_mode(LBMC_ERRORS_STORE);
  const char *msg;
  lbmc_service s;
  lbmc_err err;
  lbmc_error_clear();
  err = lbmc_service_parse("--service", text, &s);
  lbmc_error_set_mode(was);
  msg = lbmc_error_message();
  UT_CHECK(err == LBMC_ERR_ARG && lbmc_error_last() == LBMC_ERR_ARG,
           "'%s' must be rejected with LBMC_ERR_ARG (got %d)", text ? text : "(null)", (int)err);
  UT_CHECK(strstr(msg, "--service: ") == msg, "'%s': message '%s' must name --service",
           text ? text : "(null)", msg);
  for (; *frags; frags++)
    UT_CHECK(strstr(msg, *frags) != NULL, "'%s': message '%s' lacks '%s'", text ? text : "(null)",
             msg, *frags);
}

#define BAD(text, ...) parse_bad((text), (const char *const[]){__VA_ARGS__, NULL})

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(1, fabs(b)); }

/* Every form in service.h's comment, with its parameters and canonical text. */
static void test_parse_forms(void)
{
  lbmc_service s = parse_ok("exponential");
  double sigma2;
  CU_ASSERT_EQUAL(s.kind, LBMC_SERVICE_EXPONENTIAL);
  CU_ASSERT_EQUAL(s.scv, 1);
  CU_ASSERT_STRING_EQUAL(s.text, "exponential");
  CU_ASSERT_TRUE(lbmc_service_is_exponential(&s));
  lbmc_service_exponential(&s);
  CU_ASSERT_EQUAL(s.kind, LBMC_SERVICE_EXPONENTIAL);
  CU_ASSERT_STRING_EQUAL(s.text, "exponential");

  s = parse_ok("deterministic");
  CU_ASSERT_EQUAL(s.kind, LBMC_SERVICE_DETERMINISTIC);
  CU_ASSERT_EQUAL(s.scv, 0);
  CU_ASSERT_STRING_EQUAL(s.text, "deterministic");
  CU_ASSERT_FALSE(lbmc_service_is_exponential(&s));

  s = parse_ok("erlang:k=3");
  CU_ASSERT_EQUAL(s.kind, LBMC_SERVICE_ERLANG);
  CU_ASSERT_EQUAL(s.p[0], 3);
  CU_ASSERT_TRUE(near(s.scv, 1.0 / 3));
  CU_ASSERT_STRING_EQUAL(s.text, "erlang:k=3");
  s = parse_ok("erlang:k=1e1"); /* an integral real is an integer */
  CU_ASSERT_STRING_EQUAL(s.text, "erlang:k=10");

  /* balanced means: p/r1 = (1-p)/r2 = 1/2 */
  s = parse_ok("hyperexponential:scv=4");
  CU_ASSERT_EQUAL(s.kind, LBMC_SERVICE_HYPEREXPONENTIAL);
  CU_ASSERT_TRUE(near(s.p[0] / s.p[1], 0.5));
  CU_ASSERT_TRUE(near((1 - s.p[0]) / s.p[2], 0.5));
  CU_ASSERT_TRUE(near(s.p[0], 0.5 * (1 + sqrt(3.0 / 5))));
  CU_ASSERT_EQUAL(s.scv, 4);
  CU_ASSERT_STRING_EQUAL(s.text, "hyperexponential:scv=4");
  s = parse_ok("hyperexponential:scv=1"); /* the exponential, as two equal phases */
  CU_ASSERT_TRUE(near(s.p[0], 0.5) && near(s.p[1], 1) && near(s.p[2], 1));

  s = parse_ok("hyperexponential:p=0.25,r1=0.5,r2=1.5");
  CU_ASSERT_EQUAL(s.kind, LBMC_SERVICE_HYPEREXPONENTIAL);
  CU_ASSERT_TRUE(s.p[0] == 0.25 && s.p[1] == 0.5 && s.p[2] == 1.5);
  CU_ASSERT_TRUE(near(s.scv, 5.0 / 3)); /* 2 (0.25/0.25 + 0.75/2.25) - 1 */
  CU_ASSERT_STRING_EQUAL(s.text, "hyperexponential:p=0.25,r1=0.5,r2=1.5");
  s = parse_ok("hyperexponential:r2=1.5,p=1/4,r1=1/2"); /* any order, fractions */
  CU_ASSERT_STRING_EQUAL(s.text, "hyperexponential:p=0.25,r1=0.5,r2=1.5");

  s = parse_ok("lognormal:scv=4");
  sigma2 = log(5.0);
  CU_ASSERT_EQUAL(s.kind, LBMC_SERVICE_LOGNORMAL);
  CU_ASSERT_TRUE(near(s.p[1] * s.p[1], sigma2));
  CU_ASSERT_TRUE(near(s.p[0], -sigma2 / 2));
  CU_ASSERT_EQUAL(s.scv, 4);
  CU_ASSERT_STRING_EQUAL(s.text, "lognormal:scv=4");

  s = parse_ok("weibull:shape=0.5");
  CU_ASSERT_EQUAL(s.kind, LBMC_SERVICE_WEIBULL);
  CU_ASSERT_EQUAL(s.p[0], 0.5);
  CU_ASSERT_TRUE(near(s.p[1], 0.5)); /* 1/Gamma(3) */
  CU_ASSERT_TRUE(near(s.scv, 5));    /* Gamma(5)/Gamma(3)^2 - 1 */
  CU_ASSERT_STRING_EQUAL(s.text, "weibull:shape=0.5");
  s = parse_ok("weibull:shape=1"); /* the exponential */
  CU_ASSERT_TRUE(near(s.p[1], 1) && near(s.scv, 1));

  s = parse_ok("lomax:shape=5");
  CU_ASSERT_EQUAL(s.kind, LBMC_SERVICE_LOMAX);
  CU_ASSERT_EQUAL(s.p[0], 5);
  CU_ASSERT_EQUAL(s.p[1], 4);
  CU_ASSERT_TRUE(near(s.scv, 5.0 / 3));
  CU_ASSERT_STRING_EQUAL(s.text, "lomax:shape=5");
  s = parse_ok("lomax:shape=1.5"); /* finite mean, infinite variance */
  CU_ASSERT_TRUE(isinf(s.scv));
}

/* Canonical text: short, exact (parses back to the same distribution), blanks ignored,
 * and the same through lbmc_service_make. */
static void test_parse_canonical(void)
{
  static const char *const texts[] = {"exponential",
                                      "deterministic",
                                      "erlang:k=10",
                                      "hyperexponential:scv=16",
                                      "hyperexponential:p=0.1,r1=0.2,r2=1.8",
                                      "lognormal:scv=0.5",
                                      "lognormal:scv=0.1234567",
                                      "lognormal:scv=1/3",
                                      "weibull:shape=2",
                                      "lomax:shape=3",
                                      "lomax:shape=1e12",
                                      "hyperexponential:p=1/3,r1=2/3,r2=4/3"};
  lbmc_service a, b, c;
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    a = parse_ok(texts[i]);
    b = parse_ok(a.text);
    UT_CHECK(a.kind == b.kind && strcmp(a.text, b.text) == 0, "'%s' -> '%s' -> '%s'", texts[i],
             a.text, b.text);
    /* exact unless the text had to be shortened to fit (explicit 1/3 ...) */
    if (i + 1 < sizeof texts / sizeof texts[0])
      UT_CHECK(memcmp(a.p, b.p, sizeof a.p) == 0 &&
                   (a.scv == b.scv || (isinf(a.scv) && isinf(b.scv))),
               "'%s' -> '%s' does not round-trip", texts[i], a.text);
    else
      UT_CHECK(near(a.p[0], b.p[0]) || fabs(a.p[0] - b.p[0]) < 1e-9, "'%s' -> '%s'", texts[i],
               a.text);
    UT_CHECK(strlen(a.text) < sizeof a.text, "'%s': text '%s'", texts[i], a.text);
  }
  a = parse_ok("lognormal:scv=0.1234567");
  CU_ASSERT_STRING_EQUAL(a.text, "lognormal:scv=0.1234567");
  a = parse_ok("  lognormal : scv = 4 ");
  CU_ASSERT_STRING_EQUAL(a.text, "lognormal:scv=4");
  {
    const char *names[] = {"r1", "p", "r2"};
    const double values[] = {0.2, 0.1, 1.8};
    CU_ASSERT_EQUAL(lbmc_service_make("test", "hyperexponential", 3, names, values, &c),
                    LBMC_SUCCESS);
    a = parse_ok("hyperexponential:p=0.1,r1=0.2,r2=1.8");
    CU_ASSERT_STRING_EQUAL(c.text, a.text);
    CU_ASSERT_TRUE(memcmp(c.p, a.p, sizeof a.p) == 0);
    CU_ASSERT_EQUAL(lbmc_service_make("test", "exponential", 0, NULL, NULL, &c), LBMC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(c.text, "exponential");
  }
}

/* "lognormal:" (a colon and no parameter) names the missing parameter. */
static void test_parse_errors(void)
{
  BAD("gamma:k=2", "'gamma' is not a service distribution",
      "allowed: exponential, deterministic, "
      "erlang, hyperexponential, lognormal, weibull, lomax");
  BAD("Lognormal:scv=4", "'Lognormal' is not a service distribution");
  BAD("lognormal:cv=4", "'cv' is not a parameter of lognormal", "write lognormal:scv=VALUE");
  BAD("exponential:scv=1", "'scv' is not a parameter of exponential");
  BAD("deterministic:k=1", "'k' is not a parameter of deterministic");
  BAD("lognormal", "lognormal needs the parameter scv", "write lognormal:scv=VALUE");
  BAD("lognormal:", "lognormal needs the parameter scv");
  BAD("weibull", "weibull needs the parameter shape");
  BAD("erlang", "erlang needs the parameter k");
  BAD("hyperexponential", "hyperexponential needs scv, or all of p, r1 and r2");
  BAD("hyperexponential:p=0.5,r1=1", "needs scv, or all of p, r1 and r2");
  BAD("erlang:k=2.5", "k = 2.5 is not allowed; erlang needs an integer k from 1 to 1000000");
  BAD("erlang:k=0", "k = 0 is not allowed");
  BAD("lognormal:scv=0", "scv = 0 is not allowed; lognormal needs a finite scv > 0");
  BAD("lognormal:scv=-1", "scv = -1 is not allowed");
  BAD("lognormal:scv=inf", "scv: 'inf' is not a number"); /* nan and inf are not numbers here */
  BAD("lognormal:scv=nan", "scv: 'nan' is not a number");
  BAD("lomax:shape=1", "shape = 1 is not allowed; lomax needs a finite shape > 1");
  BAD("weibull:shape=0", "shape = 0 is not allowed; weibull needs a finite shape >= 0.1");
  BAD("weibull:shape=0.001", "shape = 0.001 is not allowed"); /* used to abort in GSL */
  BAD("hyperexponential:scv=0.5", "scv = 0.5 is not allowed; a hyperexponential has scv >= 1");
  BAD("hyperexponential:scv=1e13", "scv = 1e+13 is not allowed");
  BAD("hyperexponential:p=0.5,r1=1,r2=2", "p/r1 + (1-p)/r2 = 0.75",
      "allowed: the mean must be 1 (within 1e-09)");
  BAD("hyperexponential:p=1.5,r1=1,r2=2", "p = 1.5, r1 = 1, r2 = 2 are not allowed; 0 < p < 1");
  BAD("hyperexponential:p=0.5,r1=0,r2=2", "are not allowed");
  BAD("lognormal:scv", "'lognormal:scv' is not allowed; write NAME[:KEY=VALUE[,KEY=VALUE...]]");
  BAD("lognormal:4", "'lognormal:4' is not allowed; write NAME[:KEY=VALUE");
  BAD("hyperexponential:scv=4,p=0.5", "give either scv or p, r1, r2, not both");
  BAD("hyperexponential:scv=4,p=0.5,r1=1,r2=1", "give either scv or p, r1, r2, not both");
  BAD("lognormal:scv=1,scv=4", "'scv' is given twice");
  BAD("lognormal:scv=four", "--service: scv: 'four' is not a number");
  BAD("lognormal:scv=", "--service: scv: an empty value is not a number");
  BAD("", "'' is not allowed; a service distribution such as exponential or lognormal:scv=4 is "
          "required");
  BAD(NULL, "a service distribution such as exponential or lognormal:scv=4 is required");
  BAD(":scv=4", "'' is not a service distribution");
}

/* ---- phase type ---- */

static int near_rel(double a, double b, double tol)
{
  return fabs(a - b) <= tol * fmax(1, fabs(b));
}

/* "ph:alpha=[1/16,...],T=[[-c,(c-1)/15,...],...]": 16 dense phases, each left at rate c
 * (an irrational-looking number, so the 17-digit text does not fit and is shortened),
 * absorbed at rate 1 from every phase: Exp(1) in law. */
static void ph_dense_text(char *buf, size_t len, double c)
{
  size_t used = (size_t)snprintf(buf, len, "ph:alpha=[");
  for (int i = 0; i < 16; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s1/16", i ? "," : "");
  used += (size_t)snprintf(buf + used, len - used, "],T=[");
  for (int i = 0; i < 16; i++) {
    for (int k = 0; k < 16; k++)
      used += (size_t)snprintf(buf + used, len - used, "%s%.17g", k ? "," : (i ? ",[" : "["),
                               k == i ? -c : (c - 1) / 15);
    used += (size_t)snprintf(buf + used, len - used, "]");
  }
  snprintf(buf + used, len - used, "]");
}

/* The 3-phase law with feedback between phases 1 and 2 and jumps to absorption from every
 * phase: T = (73/44) T0, T0 = [[-2, 1, 1/2], [1/2, -1, 0], [1, 0, -4]], alpha = (1/2, 1/2,
 * 0): (-T0)^-1 1 = (17/11, 39/22, 7/11), mean 73/44 before the scaling. */
#define PH_FEEDBACK                                                                                \
  "ph:alpha=[1/2,1/2,0],T=[[-73/22,73/44,73/88],[73/88,-73/44,0],[73/44,0,-73/11]]"

static void test_parse_ph(void)
{
  lbmc_service s, t;
  const double *alpha, *T, *h, *ex;
  char *dense = malloc(16384);
  int m;
  CU_ASSERT_FATAL(dense != NULL);

  s = parse_ok("ph:alpha=[1,0],T=[[-2,2],[0,-2]]"); /* Erlang-2 as ph */
  CU_ASSERT_EQUAL(s.kind, LBMC_SERVICE_PH);
  CU_ASSERT_STRING_EQUAL(s.text, "ph:alpha=[1,0],T=[[-2,2],[0,-2]]");
  CU_ASSERT_TRUE(near(s.scv, 0.5));
  m = lbmc_service_ph(&s, &alpha, &T);
  h = lbmc_service_ph_residual(&s);
  ex = lbmc_service_ph_exit(&s);
  CU_ASSERT_EQUAL_FATAL(m, 2);
  CU_ASSERT_TRUE(alpha[0] == 1 && alpha[1] == 0 && T[0] == -2 && T[1] == 2 && T[2] == 0 &&
                 T[3] == -2);
  CU_ASSERT_TRUE(near(h[0], 1) && near(h[1], 0.5));
  CU_ASSERT_TRUE(ex[0] == 0 && ex[1] == 2);
  CU_ASSERT_FALSE(lbmc_service_is_exponential(&s));

  s = parse_ok(PH_FEEDBACK);
  m = lbmc_service_ph(&s, &alpha, &T);
  h = lbmc_service_ph_residual(&s);
  ex = lbmc_service_ph_exit(&s);
  CU_ASSERT_EQUAL_FATAL(m, 3);
  /* h = (17/11, 39/22, 7/11) x 44/73; exit rates 73/88 (twice) and 73/44 x 3 */
  CU_ASSERT_TRUE(near(h[0], 68.0 / 73) && near(h[1], 78.0 / 73) && near(h[2], 28.0 / 73));
  CU_ASSERT_TRUE(near(ex[0], 73.0 / 88) && near(ex[1], 73.0 / 88) && near(ex[2], 219.0 / 44));
  CU_ASSERT_TRUE(near(s.scv, 5279.0 / 5329)); /* 2 alpha (-T)^-2 1 - 1, exact fractions */
  t = parse_ok(s.text);                       /* the canonical text reads back exactly */
  CU_ASSERT_TRUE(lbmc_service_equal(&s, &t));
  CU_ASSERT_STRING_EQUAL(s.text, t.text);

  s = parse_ok("coxian:scv=4"); /* r1 = 2, p1 = 1/8, r2 = 1/4 */
  CU_ASSERT_EQUAL(s.kind, LBMC_SERVICE_COXIAN);
  CU_ASSERT_STRING_EQUAL(s.text, "coxian:scv=4");
  CU_ASSERT_EQUAL(s.scv, 4);
  m = lbmc_service_ph(&s, &alpha, &T);
  CU_ASSERT_EQUAL_FATAL(m, 2);
  CU_ASSERT_TRUE(alpha[0] == 1 && T[0] == -2 && T[1] == 0.25 && T[2] == 0 && T[3] == -0.25);
  s = parse_ok("coxian:scv=0.5"); /* Erlang-2 */
  CU_ASSERT_TRUE(lbmc_service_ph(&s, NULL, &T) == 2 && T[0] == -2 && T[1] == 2 && T[3] == -2);

  s = parse_ok("coxian : r = [ 2 , 1 ] , p = [ 0.5 ]");
  CU_ASSERT_STRING_EQUAL(s.text, "coxian:r=[2,1],p=[0.5]");
  CU_ASSERT_TRUE(near(s.scv, 1)); /* Exp(1) in law */
  s = parse_ok("coxian:r=[1]");
  CU_ASSERT_STRING_EQUAL(s.text, "coxian:r=[1]");
  CU_ASSERT_EQUAL(lbmc_service_ph(&s, NULL, NULL), 1);
  s = parse_ok("coxian:r=[4,4,4,4],p=[1,1,1]"); /* Erlang-4 */
  CU_ASSERT_TRUE(near(s.scv, 0.25));
  s = parse_ok("ph:alpha=1,T=-1"); /* a number is a list of one, a 1 x 1 matrix */
  CU_ASSERT_STRING_EQUAL(s.text, "ph:alpha=[1],T=[[-1]]");
  s = parse_ok("ph:alpha=[1,0],T=[[-2,2],[0,-2]],");
  CU_ASSERT_EQUAL(lbmc_service_ph(&s, NULL, NULL), 2); /* a trailing comma, as always */

  /* the longest texts: shortened to fit, still mean 1 and the same law within rounding */
  ph_dense_text(dense, 16384, 2.718281828459045);
  CU_ASSERT_TRUE(strlen(dense) >= sizeof s.text);
  s = parse_ok(dense);
  CU_ASSERT_TRUE(strlen(s.text) < sizeof s.text && strncmp(s.text, "ph:alpha=[0.0625,", 17) == 0);
  t = parse_ok(s.text);
  CU_ASSERT_STRING_EQUAL(t.text, s.text);
  CU_ASSERT_EQUAL(lbmc_service_ph(&t, NULL, &T), 16);
  CU_ASSERT_TRUE(near_rel(T[1], (2.718281828459045 - 1) / 15, 1e-12));
  CU_ASSERT_TRUE(near_rel(s.scv, 1, 1e-9));

  /* through lbmc_service_make (a job file's mapping of numbers) */
  {
    const char *names[] = {"alpha", "T"}, *cox[] = {"scv"};
    const double values[] = {1, -1}, c2[] = {2};
    CU_ASSERT_EQUAL(lbmc_service_make("test", "ph", 2, names, values, &s), LBMC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(s.text, "ph:alpha=[1],T=[[-1]]");
    CU_ASSERT_EQUAL(lbmc_service_make("test", "coxian", 1, cox, c2, &s), LBMC_SUCCESS);
    CU_ASSERT_STRING_EQUAL(s.text, "coxian:scv=2");
  }
  free(dense);
}

/* The classic laws as phase type, and lbmc_service_equal. */
static void test_ph_views(void)
{
  lbmc_service s, t, z;
  const double *alpha, *T, *h, *ex;
  s = parse_ok("erlang:k=3");
  CU_ASSERT_EQUAL_FATAL(lbmc_service_ph(&s, &alpha, &T), 3);
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++)
      UT_CHECK(T[i * 3 + k] == (k == i       ? -3
                                : k == i + 1 ? 3
                                             : 0),
               "erlang:k=3: T[%d][%d] = %g", i + 1, k + 1, T[i * 3 + k]);
  CU_ASSERT_TRUE(alpha[0] == 1 && alpha[1] == 0 && alpha[2] == 0);
  h = lbmc_service_ph_residual(&s);
  CU_ASSERT_TRUE(near(h[0], 1) && near(h[1], 2.0 / 3) && near(h[2], 1.0 / 3));
  s = parse_ok("erlang:k=16");
  CU_ASSERT_EQUAL(lbmc_service_ph(&s, NULL, NULL), 16);
  s = parse_ok("erlang:k=17"); /* above LBMC_PH_MAX_PHASES: not phase-type for the engines */
  CU_ASSERT_EQUAL(lbmc_service_ph(&s, &alpha, &T), 0);
  CU_ASSERT_PTR_NULL(lbmc_service_ph_exit(&s));
  s = parse_ok("hyperexponential:p=0.1,r1=0.2,r2=1.8");
  CU_ASSERT_EQUAL_FATAL(lbmc_service_ph(&s, &alpha, &T), 2);
  CU_ASSERT_TRUE(alpha[0] == 0.1 && alpha[1] == 0.9 && T[0] == -0.2 && T[1] == 0 && T[2] == 0 &&
                 T[3] == -1.8);
  ex = lbmc_service_ph_exit(&s);
  CU_ASSERT_TRUE(ex[0] == 0.2 && ex[1] == 1.8);
  s = parse_ok("hyperexponential:scv=4");
  CU_ASSERT_EQUAL_FATAL(lbmc_service_ph(&s, &alpha, &T), 2);
  CU_ASSERT_TRUE(alpha[0] == s.p[0] && T[0] == -s.p[1] && T[3] == -s.p[2]);
  lbmc_service_exponential(&s);
  CU_ASSERT_EQUAL_FATAL(lbmc_service_ph(&s, &alpha, &T), 1);
  CU_ASSERT_TRUE(alpha[0] == 1 && T[0] == -1 && lbmc_service_ph_residual(&s)[0] == 1);
  memset(&z, 0, sizeof z); /* a zeroed struct is the exponential too */
  CU_ASSERT_EQUAL_FATAL(lbmc_service_ph(&z, &alpha, &T), 1);
  CU_ASSERT_TRUE(alpha[0] == 1 && T[0] == -1 && lbmc_service_ph_exit(&z)[0] == 1);
  CU_ASSERT_TRUE(lbmc_service_equal(&s, &z));
  {
    static const char *const not_ph[] = {"deterministic", "lognormal:scv=4", "weibull:shape=2",
                                         "lomax:shape=3"};
    for (size_t i = 0; i < sizeof not_ph / sizeof not_ph[0]; i++) {
      s = parse_ok(not_ph[i]);
      UT_CHECK(lbmc_service_ph(&s, NULL, NULL) == 0 && !lbmc_service_ph_residual(&s),
               "%s is not phase-type", not_ph[i]);
    }
  }
  s = parse_ok("ph:alpha=[1,0],T=[[-2,2],[0,-2]]");
  t = parse_ok("ph:alpha=[1,0],T=[[-2,2],[0,-2]]");
  CU_ASSERT_TRUE(lbmc_service_equal(&s, &t));
  t = parse_ok("ph:alpha=[0,1],T=[[-2,2],[0,-1]]"); /* Exp(1), another law than Erlang-2 */
  CU_ASSERT_FALSE(lbmc_service_equal(&s, &t));
  t = parse_ok("erlang:k=2"); /* equal in law, but another kind: drawn by another sampler */
  CU_ASSERT_FALSE(lbmc_service_equal(&s, &t));
  s = parse_ok("lognormal:scv=4");
  t = parse_ok("lognormal:scv=2");
  CU_ASSERT_FALSE(lbmc_service_equal(&s, &t));
  CU_ASSERT_TRUE(lbmc_service_equal(&s, &s));
}

static void test_parse_ph_errors(void)
{
  BAD("ph", "ph needs the parameters alpha and T", "write ph:alpha=");
  BAD("ph:alpha=[1]", "ph needs the parameters alpha and T");
  BAD("ph:alpha=[1],T=[[-1]],scv=1", "'scv' is not a parameter of ph");
  BAD("ph:alpha=[1],T=[[-1]],alpha=[1]", "'alpha' is given twice");
  BAD("ph:alpha=[0.5,0.6],T=[[-1,0],[0,-1]]", "alpha sums to 1.1000000000000001",
      "a probability vector summing to 1 (within 1e-12): the requirement has no atom at zero");
  BAD("ph:alpha=[0.5,0.49999999999],T=[[-1,0],[0,-1]]", "alpha sums to 0.99999999999");
  BAD("ph:alpha=[1.5,-0.5],T=[[-1,0],[0,-1]]", "alpha[2] = -0.5 is not allowed", "each >= 0");
  BAD("ph:alpha=[1,0],T=[[-1,-1],[0,-1]]", "T[1][2] = -1 is not allowed",
      "off the diagonal T holds the rates from phase to phase, >= 0");
  BAD("ph:alpha=[1,0],T=[[0,0],[0,-1]]", "T[1][1] = 0 is not allowed",
      "a diagonal entry of T is minus the total rate out of its phase, < 0");
  BAD("ph:alpha=[1,0],T=[[-1,2],[0,-1]]", "row 1 of T sums to 1", "row sums <= 0",
      "T must be a sub-generator");
  BAD("ph:alpha=[1,0],T=[[-1,1],[1,-1]]", "from phase 1 of T absorption is never reached",
      "every phase leads to absorption");
  BAD("ph:alpha=[1,0,0],T=[[-1,0,0],[0,-1,1],[0,1,-1]]",
      "from phase 2 of T absorption is never reached"); /* unreachable from alpha: refused too */
  BAD("ph:alpha=[0.5,0.5],T=[[-1,0],[0,-2]]", "ph: the mean alpha (-T)^-1 1 = 0.75",
      "the mean must be 1 (within 1e-09)", "divide the rates by 1.33333333333");
  BAD("ph:alpha=[1],T=[[-1.00001]]", "the mean alpha (-T)^-1 1 = 0.9999900001;");
  BAD("ph:alpha=[1,0],T=[[-1,1],[0,-1],[0,0]]", "T has 3 rows; allowed: 2 rows of 2");
  BAD("ph:alpha=[1,0],T=[[-1,1],[0]]", "row 2 of T has 1 entries; allowed: 2");
  BAD("ph:alpha=[1,0],T=[-1,1]", "T must be a list of 2 rows of 2 numbers");
  BAD("ph:alpha=[1,0],T=-1", "T must be a list of 2 rows of 2 numbers");
  BAD("ph:alpha=[[1]],T=[[-1]]", "alpha is a list of lists; allowed: a list of numbers");
  BAD("ph:alpha=[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],T=[[-1]]", "alpha has 17 entries",
      "at most 16 phases");
  BAD("ph:alpha=[],T=[[-1]]", "alpha: an empty list is not allowed");
  BAD("ph:alpha=[1,],T=[[-1]]", "alpha: an empty value is not a number");
  BAD("ph:alpha=[1],T=[[-1]", "T: '[[-1]' is not allowed");
  BAD("ph:alpha=[1],T=[[-1]]]", "nothing may follow the list's ']'");
  BAD("ph:alpha=[1],T=[[[-1]]]", "T: '[[[-1]]]' is not allowed");
  BAD("ph:alpha=[1],T=[[-1],2]", "a list of lists holds lists only");
  BAD("ph:alpha=[x],T=[[-1]]", "--service: alpha: 'x' is not a number");
  BAD("ph:alpha=[1],T=[[-inf]]", "T: '-inf' is not a number");
  BAD("ph:alpha=[1],T=[[-1e-320]]", "T: '-1e-320'"); /* underflow: refused by the parser */
  BAD("ph:alpha=1,T", "'ph:alpha=1,T' is not allowed; write NAME[:KEY=VALUE");
  BAD("coxian", "coxian needs scv, or r (and p with 2 phases or more)");
  BAD("coxian:scv=0.4", "scv = 0.4 is not allowed; coxian:scv=C needs 0.5 <= C <= 1e+12");
  BAD("coxian:scv=[2]", "coxian: scv must be a number, not a list");
  BAD("coxian:r=[2],p=[]", "a Coxian of one phase has no p: leave it out");
  BAD("ph:alpha=[1],T=[[]]", "T: an empty list is not allowed; write e.g. T=[[-1]]");
  BAD("coxian:scv=2,r=[1]", "give either scv or r and p, not both");
  BAD("coxian:r=[2,1]", "coxian: p has 0 entries and r 2",
      "m - 1 continuation probabilities p for m rates r");
  BAD("coxian:r=[2,1],p=[0.5,0.5]", "p has 2 entries and r 2");
  BAD("coxian:r=[2,0],p=[0.5]", "r[2] = 0 is not allowed; coxian rates are finite and > 0");
  BAD("coxian:r=[2,1],p=[0]", "p[1] = 0 is not allowed; a continuation probability is in (0, 1]");
  BAD("coxian:r=[2,1],p=[1.5]", "p[1] = 1.5 is not allowed");
  BAD("coxian:r=[2,2],p=[0.5]", "coxian: the mean sum_i p1...p(i-1) / r_i = 0.75",
      "the mean must be 1");
  BAD("coxian:r=[1],q=[1]", "'q' is not a parameter of coxian");
  BAD("lognormal:scv=[4]", "scv: a list is not allowed for lognormal",
      "lists are for ph and coxian");
  BAD("gamma:k=[2]", "'gamma' is not a service distribution", "ph, coxian");
}

/* ---- sampling ---- */

/* A distribution under test: its text, raw moments m2..m4 (m4 = INFINITY: no 4th
 * moment, only the mean is checked), its stated scv, and its CDF (NULL: none). */
typedef struct {
  const char *text;
  double m2, m3, m4, scv;
  double (*cdf)(double x, const double *a);
  double a[3]; /* CDF parameters */
} dist_case;

static double cdf_exp(double x, const double *a)
{
  (void)a;
  return -expm1(-x);
}
static double cdf_gamma(double x, const double *a) { return gsl_cdf_gamma_P(x, a[0], a[1]); }
static double cdf_hyper(double x, const double *a)
{
  return 1 - a[0] * exp(-a[1] * x) - (1 - a[0]) * exp(-a[2] * x);
}
static double cdf_lognormal(double x, const double *a)
{
  return gsl_cdf_lognormal_P(x, a[0], a[1]);
}
static double cdf_weibull(double x, const double *a) { return gsl_cdf_weibull_P(x, a[0], a[1]); }
static double cdf_lomax(double x, const double *a) { return -expm1(-a[0] * log1p(x / a[1])); }

/* Erlang k = Gamma(k, scale 1/k): m_r = k (k+1) ... (k+r-1) / k^r. */
static dist_case erlang_case(const char *text, double k)
{
  dist_case d = {text,
                 (k + 1) / k,
                 (k + 1) * (k + 2) / (k * k),
                 (k + 1) * (k + 2) * (k + 3) / (k * k * k),
                 1 / k,
                 cdf_gamma,
                 {k, 1 / k, 0}};
  return d;
}

/* Two phases: w.p. p Exp(r1), else Exp(r2): m_r = r! (p / r1^r + (1-p) / r2^r). */
static dist_case hyper_case(const char *text, double p, double r1, double r2, double scv)
{
  double q = 1 - p;
  dist_case d = {text,
                 2 * (p / pow(r1, 2) + q / pow(r2, 2)),
                 6 * (p / pow(r1, 3) + q / pow(r2, 3)),
                 24 * (p / pow(r1, 4) + q / pow(r2, 4)),
                 scv,
                 cdf_hyper,
                 {p, r1, r2}};
  return d;
}

/* Balanced means with scv C: p/r1 = (1-p)/r2 = 1/2, scv = 1/(2 p (1-p)) - 1, so
 * p = (1 + sqrt((C-1)/(C+1))) / 2, r1 = 2p, r2 = 2(1-p). */
static dist_case hyper_balanced_case(const char *text, double C)
{
  double p = 0.5 * (1 + sqrt((C - 1) / (C + 1)));
  return hyper_case(text, p, 2 * p, 2 * (1 - p), C);
}

/* Lognormal with E = 1 and scv C: sigma^2 = ln(1 + C), zeta = -sigma^2/2, so
 * m_r = exp(r zeta + r^2 sigma^2 / 2) = (1 + C)^(r (r-1) / 2). */
static dist_case lognormal_case(const char *text, double C)
{
  double s2 = log1p(C);
  dist_case d = {text, pow(1 + C, 1), pow(1 + C, 3),         pow(1 + C, 6),
                 C,    cdf_lognormal, {-s2 / 2, sqrt(s2), 0}};
  return d;
}

/* Weibull with shape k and scale 1/Gamma(1 + 1/k): m_r = Gamma(1 + r/k) / Gamma(1 + 1/k)^r. */
static dist_case weibull_case(const char *text, double k)
{
  double g1 = gsl_sf_gamma(1 + 1 / k);
  double m2 = gsl_sf_gamma(1 + 2 / k) / pow(g1, 2);
  dist_case d = {text,
                 m2,
                 gsl_sf_gamma(1 + 3 / k) / pow(g1, 3),
                 gsl_sf_gamma(1 + 4 / k) / pow(g1, 4),
                 m2 - 1,
                 cdf_weibull,
                 {1 / g1, k, 0}};
  return d;
}

/* Lomax with shape a and scale b = a - 1: m_r = r! b^r / ((a-1)(a-2)...(a-r)) for a > r
 * (infinite otherwise); scv = a / (a - 2) for a > 2. */
static dist_case lomax_case(const char *text, double a)
{
  double b = a - 1;
  dist_case d = {text,
                 a > 2 ? 2 * b * b / ((a - 1) * (a - 2)) : INFINITY,
                 a > 3 ? 6 * b * b * b / ((a - 1) * (a - 2) * (a - 3)) : INFINITY,
                 a > 4 ? 24 * b * b * b * b / ((a - 1) * (a - 2) * (a - 3) * (a - 4)) : INFINITY,
                 a / (a - 2),
                 cdf_lomax,
                 {a, b, 0}};
  return d;
}

/* Draw NSAMPLE requirements of d from stream gennum and judge them. */
static void check_distribution(const dist_case *d, int gennum)
{
  lbmc_stream st = {0};
  gsl_rng *r = NULL;
  lbmc_service s = parse_ok(d->text);
  long cells[NCELLS] = {0};
  double p[NCELLS], sum = 0, sum2 = 0, minx = INFINITY;
  char what[128];
  CU_ASSERT_FATAL(lbmc_stream_init(&st, gennum, 12345) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_sampler_create(&st, &r) == LBMC_SUCCESS);
  for (long i = 0; i < NSAMPLE; i++) {
    double x = lbmc_service_sample(&s, r);
    sum += x;
    sum2 += (x - 1) * (x - 1);
    if (x < minx) minx = x;
    if (d->cdf) {
      int c = (int)(d->cdf(x, d->a) * NCELLS);
      cells[c < 0 ? 0 : c >= NCELLS ? NCELLS - 1 : c]++;
    }
  }
  lbmc_sampler_destroy(&r);
  CU_ASSERT_PTR_NULL(r);
  lbmc_stream_free(&st);

  /* the stated scv, the parsed one and the moments agree */
  UT_CHECK(fabs(s.scv - d->scv) <= 1e-9 * d->scv, "%s: parsed scv %.12g, stated %.12g", d->text,
           s.scv, d->scv);
  if (isfinite(d->m2))
    UT_CHECK(fabs(d->m2 - 1 - d->scv) <= 1e-9 * d->scv, "%s: m2 - 1 = %.12g, scv %.12g", d->text,
             d->m2 - 1, d->scv);
  UT_CHECK(minx >= 0, "%s: a negative requirement %g", d->text, minx);

  snprintf(what, sizeof what, "%s: mean", d->text);
  UT_CHECK_NORMAL(what, sum / NSAMPLE, 1.0, sqrt(d->scv / NSAMPLE));
  if (isfinite(d->m4)) {
    double mu4 = d->m4 - 4 * d->m3 + 6 * d->m2 - 3;
    snprintf(what, sizeof what, "%s: variance (scv)", d->text);
    UT_CHECK_NORMAL(what, sum2 / NSAMPLE, d->scv, sqrt((mu4 - d->scv * d->scv) / NSAMPLE));
  }
  if (d->cdf) {
    for (int c = 0; c < NCELLS; c++) p[c] = 1.0 / NCELLS;
    snprintf(what, sizeof what, "%s: F(X) in %d cells", d->text, NCELLS);
    UT_CHECK_COUNTS(what, cells, p, NCELLS, NSAMPLE);
  }
}

static void test_sample_exponential(void)
{
  /* Exp(1): m_r = r! */
  dist_case d = {"exponential", 2, 6, 24, 1, cdf_exp, {0}};
  check_distribution(&d, 101);
}

static void test_sample_deterministic(void)
{
  lbmc_stream st = {0};
  gsl_rng *r = NULL;
  lbmc_service s = parse_ok("deterministic");
  long other = 0;
  CU_ASSERT_FATAL(lbmc_stream_init(&st, 102, 12345) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_sampler_create(&st, &r) == LBMC_SUCCESS);
  for (long i = 0; i < 1000; i++) other += lbmc_service_sample(&s, r) != 1.0;
  CU_ASSERT_EQUAL(other, 0);
  lbmc_sampler_destroy(&r);
  lbmc_stream_free(&st);
}

static void test_sample_erlang(void)
{
  dist_case d1 = erlang_case("erlang:k=1", 1), d3 = erlang_case("erlang:k=3", 3),
            d10 = erlang_case("erlang:k=10", 10);
  check_distribution(&d1, 103);
  check_distribution(&d3, 104);
  check_distribution(&d10, 105);
}

static void test_sample_hyperexponential(void)
{
  dist_case b = hyper_balanced_case("hyperexponential:scv=4", 4);
  /* explicit: 0.25/0.5 + 0.75/1.5 = 1; scv = 2 (0.25/0.25 + 0.75/2.25) - 1 = 5/3 */
  dist_case e = hyper_case("hyperexponential:p=0.25,r1=0.5,r2=1.5", 0.25, 0.5, 1.5, 5.0 / 3);
  check_distribution(&b, 106);
  check_distribution(&e, 107);
}

/* Raw moments m_r = r! alpha (-T)^-r 1 (r = 1..4) of the phase-type law of s, with GSL's
 * LU decomposition. */
static void ph_moments(const lbmc_service *s, double *mom)
{
  const double *alpha, *T;
  const int m = lbmc_service_ph(s, &alpha, &T);
  gsl_matrix *A = gsl_matrix_alloc((size_t)m, (size_t)m);
  gsl_permutation *perm = gsl_permutation_alloc((size_t)m);
  gsl_vector *v = gsl_vector_alloc((size_t)m), *w = gsl_vector_alloc((size_t)m);
  int sign;
  double fact = 1;
  for (int i = 0; i < m; i++) {
    gsl_vector_set(v, (size_t)i, 1);
    for (int k = 0; k < m; k++) gsl_matrix_set(A, (size_t)i, (size_t)k, -T[i * m + k]);
  }
  gsl_linalg_LU_decomp(A, perm, &sign);
  for (int r = 1; r <= 4; r++) {
    double dot = 0;
    gsl_linalg_LU_solve(A, perm, v, w);
    gsl_vector_memcpy(v, w);
    fact *= r;
    for (int i = 0; i < m; i++) dot += alpha[i] * gsl_vector_get(v, (size_t)i);
    mom[r] = fact * dot;
  }
  gsl_vector_free(v);
  gsl_vector_free(w);
  gsl_permutation_free(perm);
  gsl_matrix_free(A);
}

/* P(S > x) = alpha exp(T x) 1 by uniformisation, to about 1e-14. */
static double ph_survival(const lbmc_service *s, double x)
{
  const double *alpha, *T;
  const int m = lbmc_service_ph(s, &alpha, &T);
  double q = 0, v[LBMC_PH_MAX_PHASES], nv[LBMC_PH_MAX_PHASES], sum = 0, mass = 0, term;
  for (int i = 0; i < m; i++) {
    q = fmax(q, -T[i * m + i]);
    v[i] = 1;
  }
  term = exp(-q * x); /* Poisson(0; q x); q x stays below 700 here */
  for (int k = 0; mass < 1 - 1e-15 && k < 100000; k++) {
    double dot = 0;
    for (int i = 0; i < m; i++) dot += alpha[i] * v[i];
    sum += term * dot;
    mass += term;
    for (int i = 0; i < m; i++) { /* v <- (I + T/q) v */
      nv[i] = v[i];
      for (int j = 0; j < m; j++) nv[i] += T[i * m + j] / q * v[j];
    }
    memcpy(v, nv, sizeof(double) * (size_t)m);
    term *= q * x / (k + 1);
  }
  return sum;
}

/* Phase-type law `text`: its moments (m2..m4 from ph_moments, scv from the parser
 * checked against them) through check_distribution, and its law on a grid: NCELLS - 1
 * cells of width 3 E[S] ... up to 6 sd, and the tail beyond, with the probabilities of
 * ph_survival. `known` (optional): a closed-form CDF the law must equal. */
static void check_ph(const char *text, int gennum, double (*known)(double, const double *),
                     const double *a)
{
  lbmc_service s = parse_ok(text);
  double mom[5], edges[NCELLS], p[NCELLS], top;
  long cells[NCELLS] = {0};
  lbmc_stream st = {0};
  gsl_rng *r = NULL;
  char what[256];
  dist_case d = {text, 0, 0, 0, 0, known, {0}};
  ph_moments(&s, mom);
  UT_CHECK(fabs(mom[1] - 1) < 1e-9, "%s: mean %.12g", text, mom[1]);
  d.m2 = mom[2];
  d.m3 = mom[3];
  d.m4 = mom[4];
  d.scv = mom[2] - 1;
  if (a) memcpy(d.a, a, sizeof d.a);
  check_distribution(&d, gennum);
  top = 1 + 6 * sqrt(d.scv);
  for (int c = 0; c < NCELLS; c++) edges[c] = top * (c + 1) / (NCELLS - 1); /* right edges */
  for (int c = 0; c < NCELLS; c++) {
    const double left = c ? ph_survival(&s, edges[c - 1]) : 1;
    p[c] = c < NCELLS - 1 ? left - ph_survival(&s, edges[c]) : left;
    if (known && c < NCELLS - 1)
      UT_CHECK(fabs(1 - ph_survival(&s, edges[c]) - known(edges[c], d.a)) < 1e-10,
               "%s: F(%g) = %.15g by uniformisation, %.15g in closed form", text, edges[c],
               1 - ph_survival(&s, edges[c]), known(edges[c], d.a));
  }
  CU_ASSERT_FATAL(lbmc_stream_init(&st, gennum + 1000, 12345) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_sampler_create(&st, &r) == LBMC_SUCCESS);
  for (long i = 0; i < NSAMPLE; i++) {
    double x = lbmc_service_sample(&s, r);
    int c = (int)(x / top * (NCELLS - 1));
    cells[c < 0 ? 0 : c >= NCELLS ? NCELLS - 1 : c]++;
  }
  lbmc_sampler_destroy(&r);
  lbmc_stream_free(&st);
  snprintf(what, sizeof what, "%.60s: cells of x", text);
  UT_CHECK_COUNTS(what, cells, p, NCELLS, NSAMPLE);
}

/* coxian:scv=4: S = X1 + B X2, X1 ~ Exp(2), B ~ Bernoulli(1/8), X2 ~ Exp(1/4):
 * P(X1 + X2 > x) = (r2 e^{-2x} - 2 e^{-r2 x}) / (r2 - 2). */
static double cdf_coxian4(double x, const double *a)
{
  const double p = 0.125, r2 = 0.25;
  (void)a;
  return (1 - p) * -expm1(-2 * x) + p * (1 - (r2 * exp(-2 * x) - 2 * exp(-r2 * x)) / (r2 - 2));
}

static void test_sample_ph(void)
{
  char *dense = malloc(16384);
  const double erl3[3] = {3, 1.0 / 3, 0}, h2[3] = {0.1, 0.2, 1.8};
  CU_ASSERT_FATAL(dense != NULL);
  check_ph(PH_FEEDBACK, 115, NULL, NULL);
  check_ph("coxian:scv=4", 116, cdf_coxian4, NULL);
  check_ph("coxian:r=[2,1],p=[0.5]", 117, cdf_exp, NULL); /* Exp(1) in law */
  check_ph("ph:alpha=[1,0,0],T=[[-3,3,0],[0,-3,3],[0,0,-3]]", 118, cdf_gamma, erl3);
  check_ph("ph:alpha=[0.1,0.9],T=[[-0.2,0],[0,-1.8]]", 119, cdf_hyper, h2);
  ph_dense_text(dense, 16384, 2.718281828459045);
  check_ph(dense, 120, cdf_exp, NULL); /* every phase absorbs at rate 1: Exp(1) */
  free(dense);
}

static void test_sample_lognormal(void)
{
  dist_case a = lognormal_case("lognormal:scv=0.5", 0.5), b = lognormal_case("lognormal:scv=4", 4);
  check_distribution(&a, 108);
  check_distribution(&b, 109);
}

static void test_sample_weibull(void)
{
  /* shape 0.5: m_r = (2r)! / 2^r: 1, 6, 90, 2520, scv 5; shape 2: scv 4/pi - 1 */
  dist_case a = weibull_case("weibull:shape=0.5", 0.5), b = weibull_case("weibull:shape=2", 2);
  CU_ASSERT_TRUE(near(a.m2, 6) && near(a.m3, 90) && near(a.m4, 2520));
  CU_ASSERT_TRUE(near(b.scv, 4 / acos(-1.0) - 1));
  check_distribution(&a, 110);
  check_distribution(&b, 111);
}

static void test_sample_lomax(void)
{
  /* shape 5 (scale 4): m2 = 8/3, m3 = 16, m4 = 256, scv 5/3; shape 3 (scale 2): scv 3,
   * no 4th moment: mean and CDF only */
  dist_case a = lomax_case("lomax:shape=5", 5), b = lomax_case("lomax:shape=3", 3),
            c = lomax_case("lomax:shape=1e9", 1e9);
  CU_ASSERT_TRUE(near(a.m2, 8.0 / 3) && near(a.m3, 16) && near(a.m4, 256) && near(a.scv, 5.0 / 3));
  CU_ASSERT_TRUE(isinf(b.m4));
  check_distribution(&a, 112);
  check_distribution(&b, 113);
  /* a huge shape is (nearly) Exp(1): sampled without cancellation */
  c.cdf = cdf_exp;
  check_distribution(&c, 114);
}

/* The same stream gives the same requirements; another stream other ones; the GSL
 * adapter hands out the stream's uniforms unchanged. */
static void test_determinism(void)
{
  static const char *const texts[] = {
      "exponential",     "erlang:k=3",        "hyperexponential:scv=4",
      "lognormal:scv=4", "weibull:shape=0.5", "lomax:shape=3",
      PH_FEEDBACK,       "coxian:scv=4"};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    lbmc_service s = parse_ok(texts[i]);
    lbmc_stream a = {0}, b = {0}, c = {0};
    gsl_rng *ra, *rb, *rc;
    long same = 0, diff = 0;
    CU_ASSERT_FATAL(lbmc_stream_init(&a, 7, 99) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_stream_init(&b, 7, 99) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_stream_init(&c, 8, 99) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_sampler_create(&a, &ra) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_sampler_create(&b, &rb) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_sampler_create(&c, &rc) == LBMC_SUCCESS);
    for (int k = 0; k < 10000; k++) {
      double x = lbmc_service_sample(&s, ra);
      same += x == lbmc_service_sample(&s, rb);
      diff += x != lbmc_service_sample(&s, rc);
    }
    UT_CHECK(same == 10000, "%s: same stream, %ld of 10000 requirements equal", texts[i], same);
    UT_CHECK(diff >= 9990, "%s: other stream, only %ld of 10000 requirements differ", texts[i],
             diff);
    lbmc_sampler_destroy(&ra);
    lbmc_sampler_destroy(&rb);
    lbmc_sampler_destroy(&rc);
    lbmc_stream_free(&a);
    lbmc_stream_free(&b);
    lbmc_stream_free(&c);
  }
  {
    lbmc_stream a = {0}, b = {0};
    gsl_rng *r;
    int ok = 1;
    CU_ASSERT_FATAL(lbmc_stream_init(&a, 9, 5) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_stream_init(&b, 9, 5) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_sampler_create(&a, &r) == LBMC_SUCCESS);
    CU_ASSERT_EQUAL(gsl_rng_max(r), 0xffffffffUL);
    CU_ASSERT_EQUAL(gsl_rng_min(r), 0);
    for (int k = 0; k < 1000; k++) {
      double u = lbmc_u01(&b);
      ok &= gsl_rng_uniform(r) == u;
      u = lbmc_u01(&b);
      ok &= gsl_rng_get(r) == (unsigned long)(u * 4294967296.0);
    }
    CU_ASSERT_TRUE(ok);
    lbmc_sampler_destroy(&r);
    lbmc_sampler_destroy(&r); /* twice: harmless */
    lbmc_stream_free(&a);
    lbmc_stream_free(&b);
  }
}

int ut_register_service(void)
{
  static const ut_test tests[] = {{"parse: every form", test_parse_forms},
                                  {"parse: canonical text", test_parse_canonical},
                                  {"parse: errors", test_parse_errors},
                                  {"parse: phase type", test_parse_ph},
                                  {"parse: phase-type errors", test_parse_ph_errors},
                                  {"phase type of every law, equality", test_ph_views},
                                  {"sample: exponential", test_sample_exponential},
                                  {"sample: deterministic", test_sample_deterministic},
                                  {"sample: erlang k = 1, 3, 10", test_sample_erlang},
                                  {"sample: hyperexponential", test_sample_hyperexponential},
                                  {"sample: phase type (ph, coxian)", test_sample_ph},
                                  {"sample: lognormal scv 0.5, 4", test_sample_lognormal},
                                  {"sample: weibull shape 0.5, 2", test_sample_weibull},
                                  {"sample: lomax shape 5, 3, 1e9", test_sample_lomax},
                                  {"sample: determinism", test_determinism},
                                  {NULL, NULL}};
  return ut_add_suite("service", tests);
}
