/* Service-requirement distributions: parsing, parameters with mean 1, sampling with
 * GSL driven by an lbmc_stream (see include/lbmc/service.h). */
#include "lbmc/service.h"

#include <ctype.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/check.h"
#include "sampler.h"

/* Mean-1 hyperexponential weights must match within this (issue #6: "explicit
 * probabilities and rates"). */
#define LBMC_HYPER_MEAN_TOL 1e-9
/* Largest hyperexponential scv: the short-phase probability 1/(2 (C + 1)) must stay far
 * above the 2^-53 resolution of the uniforms (else the sampled mean drifts to 1/2). */
#define LBMC_HYPER_SCV_MAX 1e12
/* Largest Erlang k (Gamma(k, 1/k) sampling works for any k; this keeps k an exact,
 * printable integer). */
#define LBMC_ERLANG_K_MAX 1e6
/* Smallest Weibull shape: scv(0.1) = Gamma(21)/Gamma(11)^2 - 1 = 184755; at shape 0.01
 * the scale is 1/Gamma(101) ~ 1e-158 and a few percent of the requirements underflow
 * to 0. */
#define LBMC_WEIBULL_SHAPE_MIN 0.1
/* Most parameters in the text form. */
#define LBMC_SVC_MAX_PARAMS 8

void lbmc_service_exponential(lbmc_service *s)
{
  memset(s, 0, sizeof *s);
  s->kind = LBMC_SERVICE_EXPONENTIAL;
  s->scv = 1;
  snprintf(s->text, sizeof s->text, "exponential");
}

const char *lbmc_service_warning(const lbmc_service *s)
{
  if (!isfinite(s->scv))
    return "infinite variance: where customers can wait, mean waiting and sojourn times are "
           "infinite (Pollaczek-Khinchine; reported as inf), and no estimator has a finite "
           "variance (the verdict says heavy_tail); quantiles remain meaningful";
  if (s->scv > LBMC_SCV_WARN)
    return "very large scv: rare huge requirements dominate the means, which converge very "
           "slowly; check them with longer runs or several seeds";
  return NULL;
}

double lbmc_service_tail_index(const lbmc_service *s)
{
  return s->kind == LBMC_SERVICE_LOMAX ? s->p[0] : INFINITY;
}

int lbmc_service_is_exponential(const lbmc_service *s)
{
  return s->kind == LBMC_SERVICE_EXPONENTIAL;
}

/* Value of parameter `key` among n names, or NAN if absent (a given NaN is rejected
 * earlier, by lbmc_svc_names, so NAN here always means "not given"). */
static double lbmc_svc_param(int n, const char *const *names, const double *values, const char *key)
{
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], key) == 0) return values[i];
  return NAN;
}

/* Every given parameter name must be one of the allowed (NULL-terminated), given once,
 * with a value that is a number (not NaN). */
static lbmc_err lbmc_svc_names(const char *where, const char *dist, int n, const char *const *names,
                               const double *values, const char *const *allowed, const char *usage)
{
  for (int i = 0; i < n; i++) {
    int ok = 0;
    for (int k = 0; allowed[k]; k++) ok |= strcmp(names[i], allowed[k]) == 0;
    if (!ok)
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not a parameter of %s; write %s", where,
                        names[i], dist, usage);
    for (int k = 0; k < i; k++)
      if (strcmp(names[i], names[k]) == 0)
        return LBMC_ERROR(LBMC_ERR_ARG,
                          "%s: %s: '%s' is given twice; give each parameter once, as in %s", where,
                          dist, names[i], usage);
    if (isnan(values[i]))
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: %s = nan is not allowed; write %s", where, names[i],
                        usage);
  }
  return LBMC_SUCCESS;
}

/* x in the shortest "%.*g" form that reads back as x (at most `digits` significant
 * digits, 17 being always exact); integers below 10^7 in plain digits. */
static void lbmc_svc_number(char *buf, size_t len, double x, int digits)
{
  if (x == floor(x) && fabs(x) < 1e7) { /* integers as such: "10", not "1e+01" */
    snprintf(buf, len, "%.0f", x);
    return;
  }
  for (int d = 1; d <= digits; d++) {
    snprintf(buf, len, "%.*g", d, x);
    if (strtod(buf, NULL) == x) return;
  }
}

/* Canonical text "dist:k1=v1,k2=v2,..." of n parameters, exact when it fits in
 * sizeof s->text; otherwise each value gets fewer digits (down to 6, which always fits). */
static void lbmc_svc_text(lbmc_service *s, const char *dist, int n, const char *const *keys,
                          const double *v)
{
  for (int digits = 17; digits >= 6; digits--) {
    size_t used = (size_t)snprintf(s->text, sizeof s->text, "%s", dist);
    for (int i = 0; i < n && used < sizeof s->text; i++) {
      char num[32];
      lbmc_svc_number(num, sizeof num, v[i], digits);
      used += (size_t)snprintf(s->text + used, sizeof s->text - used, "%s%s=%s", i ? "," : ":",
                               keys[i], num);
    }
    if (used < sizeof s->text) return;
  }
}

static lbmc_err lbmc_svc_need(const char *where, const char *dist, const char *key, double v,
                              const char *usage)
{
  if (isnan(v))
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: %s needs the parameter %s; write %s", where, dist, key,
                      usage);
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_svc_hyper(const char *where, int n, const char *const *names,
                               const double *values, lbmc_service *s)
{
  static const char *const allowed[] = {"scv", "p", "r1", "r2", NULL};
  static const char *const keys[] = {"p", "r1", "r2"};
  const char *usage = "hyperexponential:scv=C (1 <= C <= 1e12) or hyperexponential:p=P,r1=A,r2=B";
  double scv = lbmc_svc_param(n, names, values, "scv"), p = lbmc_svc_param(n, names, values, "p");
  double r1 = lbmc_svc_param(n, names, values, "r1"), r2 = lbmc_svc_param(n, names, values, "r2");
  LBMC_CALL(lbmc_svc_names(where, "hyperexponential", n, names, values, allowed, usage));
  if (!isnan(scv)) {
    double q;
    if (!isnan(p) || !isnan(r1) || !isnan(r2))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: hyperexponential: give either scv or p, r1, r2, not both; write %s",
                        where, usage);
    if (!(scv >= 1 && scv <= LBMC_HYPER_SCV_MAX))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: scv = %g is not allowed; a hyperexponential has scv >= 1 (and here at "
                        "most %g); write %s",
                        where, scv, LBMC_HYPER_SCV_MAX, usage);
    /* balanced means: p/r1 = (1-p)/r2 = 1/2 (Whitt's two-moment fit), so that
     * scv = 1/(2 p (1-p)) - 1, i.e. p = (1 + sqrt((C-1)/(C+1)))/2. The small phase
     * probability q = 1 - p is computed without cancellation:
     * q = (1 - sqrt(x))/2 = (1 - x) / (2 (1 + sqrt(x))) with x = (C-1)/(C+1). */
    q = (2 / (scv + 1)) / (2 * (1 + sqrt((scv - 1) / (scv + 1))));
    p = 1 - q;
    r1 = 2 * p;
    r2 = 2 * q;
    lbmc_svc_text(s, "hyperexponential", 1, allowed, &scv);
  } else {
    double mean, v[3];
    if (isnan(p) || isnan(r1) || isnan(r2))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: hyperexponential needs scv, or all of p, r1 and r2; write %s", where,
                        usage);
    if (!(p > 0 && p < 1) || !(r1 > 0) || !(r2 > 0) || !isfinite(r1) || !isfinite(r2))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: p = %g, r1 = %g, r2 = %g are not allowed; 0 < p < 1 and finite rates "
                        "r1, r2 > 0 are required",
                        where, p, r1, r2);
    mean = p / r1 + (1 - p) / r2;
    if (fabs(mean - 1) > LBMC_HYPER_MEAN_TOL)
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: p/r1 + (1-p)/r2 = %.12g; allowed: the mean must be 1 (within %g), "
                        "because mu sets the mean service time",
                        where, mean, LBMC_HYPER_MEAN_TOL);
    /* E[S^2] = 2 (p/r1^2 + (1-p)/r2^2) and E[S] = 1 */
    scv = 2 * (p / (r1 * r1) + (1 - p) / (r2 * r2)) - 1;
    v[0] = p;
    v[1] = r1;
    v[2] = r2;
    lbmc_svc_text(s, "hyperexponential", 3, keys, v);
  }
  s->kind = LBMC_SERVICE_HYPEREXPONENTIAL;
  s->p[0] = p;
  s->p[1] = r1;
  s->p[2] = r2;
  s->scv = scv;
  return LBMC_SUCCESS;
}

/* One-parameter distributions: the parameter's name, its check, and the set-up. */
static lbmc_err lbmc_svc_one(const char *where, const char *dist, int n, const char *const *names,
                             const double *values, lbmc_service *s)
{
  const char *key = strcmp(dist, "erlang") == 0      ? "k"
                    : strcmp(dist, "lognormal") == 0 ? "scv"
                                                     : "shape";
  const char *allowed[] = {key, NULL};
  char usage[64];
  double v = lbmc_svc_param(n, names, values, key);
  snprintf(usage, sizeof usage, "%s:%s=VALUE", dist, key);
  LBMC_CALL(lbmc_svc_names(where, dist, n, names, values, allowed, usage));
  LBMC_CALL(lbmc_svc_need(where, dist, key, v, usage));
  if (strcmp(dist, "erlang") == 0) {
    if (!(v >= 1 && v == floor(v) && v <= LBMC_ERLANG_K_MAX))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: k = %g is not allowed; erlang needs an integer k from 1 to %.0f",
                        where, v, LBMC_ERLANG_K_MAX);
    s->kind = LBMC_SERVICE_ERLANG;
    s->p[0] = v;
    s->scv = 1 / v;
  } else if (strcmp(dist, "lognormal") == 0) {
    if (!(v > 0) || !isfinite(v))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: scv = %g is not allowed; lognormal needs a finite scv > 0", where, v);
    s->kind = LBMC_SERVICE_LOGNORMAL;
    s->p[1] = sqrt(log1p(v));           /* sigma */
    s->p[0] = -0.5 * s->p[1] * s->p[1]; /* zeta: E[S] = exp(zeta + sigma^2/2) = 1 */
    s->scv = v;
  } else if (strcmp(dist, "weibull") == 0) {
    double lg1, lg2;
    if (!(v >= LBMC_WEIBULL_SHAPE_MIN) || !isfinite(v))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: shape = %g is not allowed; weibull needs a finite shape >= %g (where "
                        "the scv is already 184755)",
                        where, v, LBMC_WEIBULL_SHAPE_MIN);
    /* E[S^m] = scale^m Gamma(1 + m/k). gsl_sf_lngamma, not gsl_sf_gamma: no overflow
     * (which would call GSL's aborting error handler). */
    lg1 = gsl_sf_lngamma(1 + 1 / v);
    lg2 = gsl_sf_lngamma(1 + 2 / v);
    s->kind = LBMC_SERVICE_WEIBULL;
    s->p[0] = v;
    s->p[1] = exp(-lg1);                      /* scale: E[S] = scale Gamma(1 + 1/k) = 1 */
    s->scv = fmax(0.0, expm1(lg2 - 2 * lg1)); /* Gamma(1+2/k)/Gamma(1+1/k)^2 - 1 */
  } else {
    if (!(v > 1) || !isfinite(v))
      return LBMC_ERROR(
          LBMC_ERR_ARG,
          "%s: shape = %g is not allowed; lomax needs a finite shape > 1 (a finite mean)", where,
          v);
    s->kind = LBMC_SERVICE_LOMAX;
    s->p[0] = v;
    s->p[1] = v - 1; /* scale: E[S] = scale / (shape - 1) = 1 */
    s->scv = v > 2 ? v / (v - 2) : INFINITY;
  }
  lbmc_svc_text(s, dist, 1, &key, &v);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_service_make(const char *where, const char *dist, int n, const char *const *names,
                           const double *values, lbmc_service *s)
{
  static const char *const none[] = {NULL};
  memset(s, 0, sizeof *s);
  if (!dist) dist = "";
  if (n < 0 || (n > 0 && (!names || !values)))
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "%s: lbmc_service_make: bad parameter list", where);
  if (strcmp(dist, "exponential") == 0 || strcmp(dist, "deterministic") == 0) {
    LBMC_CALL(lbmc_svc_names(where, dist, n, names, values, none, dist));
    if (dist[0] == 'e') {
      lbmc_service_exponential(s);
    } else {
      s->kind = LBMC_SERVICE_DETERMINISTIC;
      s->scv = 0;
      snprintf(s->text, sizeof s->text, "deterministic");
    }
    return LBMC_SUCCESS;
  }
  if (strcmp(dist, "hyperexponential") == 0) return lbmc_svc_hyper(where, n, names, values, s);
  if (strcmp(dist, "erlang") == 0 || strcmp(dist, "lognormal") == 0 ||
      strcmp(dist, "weibull") == 0 || strcmp(dist, "lomax") == 0)
    return lbmc_svc_one(where, dist, n, names, values, s);
  return LBMC_ERROR(LBMC_ERR_ARG,
                    "%s: '%s' is not a service distribution; allowed: exponential, deterministic, "
                    "erlang, hyperexponential, lognormal, weibull, lomax",
                    where, dist);
}

/* s without leading and trailing blanks (in place). */
static char *lbmc_svc_trim(char *s)
{
  char *end;
  while (isspace((unsigned char)*s)) s++;
  end = s + strlen(s);
  while (end > s && isspace((unsigned char)end[-1])) *--end = '\0';
  return s;
}

lbmc_err lbmc_service_parse(const char *where, const char *text, lbmc_service *s)
{
  char buf[256], *colon, *save = NULL, *names[LBMC_SVC_MAX_PARAMS], *name;
  double values[LBMC_SVC_MAX_PARAMS];
  int n = 0;
  memset(s, 0, sizeof *s);
  if (!text || !*text || strlen(text) >= sizeof buf)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: '%.40s%s' is not allowed; a service distribution such as exponential or "
                      "lognormal:scv=4 is required",
                      where, text ? text : "", text && strlen(text) > 40 ? "..." : "");
  snprintf(buf, sizeof buf, "%s", text);
  colon = strchr(buf, ':');
  if (colon) {
    *colon = '\0';
    for (char *kv = strtok_r(colon + 1, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
      char *eq = strchr(kv, '='), key[512];
      if (!eq || n == LBMC_SVC_MAX_PARAMS)
        return LBMC_ERROR(LBMC_ERR_ARG,
                          "%s: '%s' is not allowed; write NAME[:KEY=VALUE[,KEY=VALUE...]], e.g. "
                          "lognormal:scv=4",
                          where, text);
      *eq = '\0';
      names[n] = lbmc_svc_trim(kv);
      snprintf(key, sizeof key, "%s: %s", where, names[n]);
      LBMC_CALL(lbmc_parse_real(key, lbmc_svc_trim(eq + 1), &values[n]));
      n++;
    }
  }
  name = lbmc_svc_trim(buf);
  return lbmc_service_make(where, name, n, (const char *const *)names, values, s);
}

/* ---- sampling: a gsl_rng whose uniforms come from an lbmc_stream ---- */

typedef struct {
  lbmc_stream *stream;
} lbmc_gsl_state;

static void lbmc_gsl_set(void *state, unsigned long seed)
{
  (void)state;
  (void)seed; /* seeded through the SPRNG stream */
}

static unsigned long lbmc_gsl_get(void *state)
{
  return (unsigned long)(lbmc_u01(((lbmc_gsl_state *)state)->stream) * 4294967296.0);
}

static double lbmc_gsl_get_double(void *state)
{
  return lbmc_u01(((lbmc_gsl_state *)state)->stream);
}

static const gsl_rng_type lbmc_gsl_type = {"lbmc-sprng",           0xffffffffUL, 0,
                                           sizeof(lbmc_gsl_state), lbmc_gsl_set, lbmc_gsl_get,
                                           lbmc_gsl_get_double};

lbmc_err lbmc_sampler_create(lbmc_stream *stream, gsl_rng **r)
{
  *r = gsl_rng_alloc(&lbmc_gsl_type);
  if (!*r) return LBMC_ERROR(LBMC_ERR_MEMORY, "sampler: out of memory");
  ((lbmc_gsl_state *)(*r)->state)->stream = stream;
  return LBMC_SUCCESS;
}

void lbmc_sampler_destroy(gsl_rng **r)
{
  if (r && *r) gsl_rng_free(*r);
  if (r) *r = NULL;
}

double lbmc_service_sample(const lbmc_service *s, gsl_rng *r)
{
  switch (s->kind) {
  case LBMC_SERVICE_DETERMINISTIC: return 1.0;
  case LBMC_SERVICE_ERLANG: return gsl_ran_gamma(r, s->p[0], 1.0 / s->p[0]);
  case LBMC_SERVICE_HYPEREXPONENTIAL:
    return gsl_ran_exponential(r, gsl_rng_uniform(r) < s->p[0] ? 1.0 / s->p[1] : 1.0 / s->p[2]);
  case LBMC_SERVICE_LOGNORMAL: /* exp of a normal: GSL's ziggurat normal is the fastest it has */
    return exp(s->p[0] + s->p[1] * gsl_ran_gaussian_ziggurat(r, 1.0));
  case LBMC_SERVICE_WEIBULL: return gsl_ran_weibull(r, s->p[1], s->p[0]);
  /* Lomax(a, b) = b (exp(E/a) - 1) with E ~ Exp(1): P(S > x) = P(E > a ln(1 + x/b)) =
   * (1 + x/b)^-a. (gsl_ran_pareto(a, b) - b, the Pareto I shifted, loses the low digits
   * to cancellation: at shape 1e12 it returns multiples of 2^-52 b.) */
  case LBMC_SERVICE_LOMAX: return s->p[1] * expm1(gsl_ran_exponential(r, 1.0) / s->p[0]);
  default: return gsl_ran_exponential(r, 1.0);
  }
}
