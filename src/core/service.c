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

/* Mean-1 hyperexponential weights given as explicit probabilities and rates must match
 * within this. */
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
/* Longest text form read (a 16-phase ph law written with 17 digits takes about 7000). */
#define LBMC_SVC_TEXT_IN_MAX 65536
/* A ph law's alpha must sum to 1 within this (no atom at zero). */
#define LBMC_PH_ALPHA_TOL 1e-12
/* A row sum of T within this fraction of |t_ii| of 0 is 0 (no exit): rounding in
 * sums such as -0.3 + 0.1 + 0.2. */
#define LBMC_PH_ROW_TOL 1e-12
/* Smallest coxian:scv (p1 = 1/(2C) <= 1, Erlang-2 at 0.5) and the largest (as for the
 * hyperexponential: p1 far above the resolution of the uniforms). */
#define LBMC_COXIAN_SCV_MIN 0.5
#define LBMC_COXIAN_SCV_MAX 1e12

/* The phase-type fields of s from alpha and T (m phases, T row-major with stride m,
 * already validated: a sub-generator from which every phase reaches absorption): exit
 * rates, mean remaining requirements, sampling shortcuts. Returns -1 if (-T) is
 * numerically singular, else 0. */
static int lbmc_ph_fill(lbmc_service *s, int m, const double *alpha, const double *T);

void lbmc_service_exponential(lbmc_service *s)
{
  static const double one = 1, minus_one = -1;
  memset(s, 0, sizeof *s);
  s->kind = LBMC_SERVICE_EXPONENTIAL;
  s->scv = 1;
  lbmc_ph_fill(s, 1, &one, &minus_one);
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
    int w = snprintf(buf, len, "%.*g", d, x);
    if (w > 0 && (size_t)w < len && strtod(buf, NULL) == x) return;
  }
}

/* Canonical text "dist:k1=v1,k2=v2,..." of n parameters, exact when it fits in
 * LBMC_SVC_TEXT_SHORT bytes; otherwise each value gets fewer digits (down to 6, which
 * always fit). The laws of scalar parameters keep the 64 bytes their texts always had,
 * so that the texts in results files stay what they were. */
#define LBMC_SVC_TEXT_SHORT 64
static void lbmc_svc_text(lbmc_service *s, const char *dist, int n, const char *const *keys,
                          const double *v)
{
  for (int digits = 17; digits >= 6; digits--) {
    size_t used = (size_t)snprintf(s->text, LBMC_SVC_TEXT_SHORT, "%s", dist);
    for (int i = 0; i < n && used < LBMC_SVC_TEXT_SHORT; i++) {
      char num[32];
      lbmc_svc_number(num, sizeof num, v[i], digits);
      used += (size_t)snprintf(s->text + used, LBMC_SVC_TEXT_SHORT - used, "%s%s=%s", i ? "," : ":",
                               keys[i], num);
    }
    if (used < LBMC_SVC_TEXT_SHORT) return;
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
  { /* two phases in parallel: phase 1 w.p. p at rate r1, phase 2 at rate r2 */
    const double alpha[2] = {p, 1 - p}, T[4] = {-r1, 0, 0, -r2};
    lbmc_ph_fill(s, 2, alpha, T);
  }
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
    if (v <= LBMC_PH_MAX_PHASES) { /* k phases in series, each at rate k */
      const int k = (int)v;
      double alpha[LBMC_PH_MAX_PHASES] = {1}, T[LBMC_PH_MAX_PHASES * LBMC_PH_MAX_PHASES] = {0};
      for (int i = 0; i < k; i++) {
        T[i * k + i] = -v;
        if (i + 1 < k) T[i * k + i + 1] = v;
      }
      lbmc_ph_fill(s, k, alpha, T);
    }
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

/* ---- phase-type laws: ph, coxian ---- */

/* A parameter as given in the text form: a number (depth 0), a list (depth 1) or a list
 * of lists (depth 2). Entries beyond LBMC_PH_MAX_PHASES in a list, and rows beyond it,
 * are counted (len, rows) but not kept. */
typedef struct {
  const char *name;
  int depth;
  int rows;                                          /* depth 2: the rows given; else 1 */
  int len[LBMC_PH_MAX_PHASES];                       /* entries of each kept row (depth 0: 1) */
  double x[LBMC_PH_MAX_PHASES * LBMC_PH_MAX_PHASES]; /* row i, entry k: x[i * MAX + k] */
} lbmc_svc_arg;

#define LBMC_PH_M2 (LBMC_PH_MAX_PHASES * LBMC_PH_MAX_PHASES)

/* Solve (-T) x = b (m phases, T row-major with stride m) by Gaussian elimination with
 * partial pivoting; -1 if a pivot vanishes or the solution is not finite. */
static int lbmc_ph_solve(int m, const double *T, const double *b, double *x)
{
  double A[LBMC_PH_M2], y[LBMC_PH_MAX_PHASES];
  for (int i = 0; i < m; i++) {
    y[i] = b[i];
    for (int k = 0; k < m; k++) A[i * m + k] = -T[i * m + k];
  }
  for (int c = 0; c < m; c++) {
    int piv = c;
    for (int i = c + 1; i < m; i++)
      if (fabs(A[i * m + c]) > fabs(A[piv * m + c])) piv = i;
    if (!(fabs(A[piv * m + c]) > 0)) return -1;
    if (piv != c) {
      for (int k = 0; k < m; k++) {
        double t = A[c * m + k];
        A[c * m + k] = A[piv * m + k];
        A[piv * m + k] = t;
      }
      {
        double t = y[c];
        y[c] = y[piv];
        y[piv] = t;
      }
    }
    for (int i = c + 1; i < m; i++) {
      double f = A[i * m + c] / A[c * m + c];
      if (f == 0) continue;
      for (int k = c; k < m; k++) A[i * m + k] -= f * A[c * m + k];
      y[i] -= f * y[c];
    }
  }
  for (int i = m - 1; i >= 0; i--) {
    double v = y[i];
    for (int k = i + 1; k < m; k++) v -= A[i * m + k] * x[k];
    x[i] = v / A[i * m + i];
    if (!isfinite(x[i])) return -1;
  }
  return 0;
}

static int lbmc_ph_fill(lbmc_service *s, int m, const double *alpha, const double *T)
{
  int positive = 0;
  s->phases = m;
  memcpy(s->alpha, alpha, sizeof(double) * (size_t)m);
  memcpy(s->T, T, sizeof(double) * (size_t)m * (size_t)m);
  s->start = -1;
  for (int i = 0; i < m; i++)
    if (alpha[i] > 0) {
      s->start = positive++ ? -1 : i;
    }
  for (int i = 0; i < m; i++) {
    double sum = 0;
    int to = -1, outs = 0;
    for (int k = 0; k < m; k++) sum += T[i * m + k];
    s->exit[i] = sum < -LBMC_PH_ROW_TOL * fabs(T[i * m + i]) ? -sum : 0;
    for (int k = 0; k < m; k++)
      if (k != i && T[i * m + k] > 0) {
        to = k;
        outs++;
      }
    s->next[i] = outs == 0 ? m : (outs == 1 && s->exit[i] == 0) ? to : -1;
  }
  {
    double ones[LBMC_PH_MAX_PHASES];
    for (int i = 0; i < m; i++) ones[i] = 1;
    return lbmc_ph_solve(m, T, ones, s->residual);
  }
}

/* Append str to buf (capacity cap) at used, if it fits; the length it would have. */
static size_t lbmc_svc_cat(char *buf, size_t cap, size_t used, const char *str)
{
  size_t len = strlen(str);
  if (used + len < cap) memcpy(buf + used, str, len + 1);
  return used + len;
}

/* Append the list "[x0,x1,...]" (numbers of at most `digits` significant digits). */
static size_t lbmc_svc_cat_list(char *buf, size_t cap, size_t used, const double *x, int count,
                                int digits)
{
  for (int i = 0; i < count; i++) {
    char num[40];
    lbmc_svc_number(num, sizeof num, x[i], digits);
    used = lbmc_svc_cat(buf, cap, used, i ? "," : "[");
    used = lbmc_svc_cat(buf, cap, used, num);
  }
  return lbmc_svc_cat(buf, cap, used, "]");
}

/* Canonical text of a phase-type law: "ph:alpha=[...],T=[[...],...]", or for an
 * explicit coxian (r, p) "coxian:r=[...],p=[...]"; exact when it fits, else with fewer
 * digits (6 always fit: 272 numbers of at most 13 characters). */
static void lbmc_ph_text(lbmc_service *s, const double *r, const double *p)
{
  const int m = s->phases;
  for (int digits = 17; digits >= 6; digits--) {
    size_t used;
    s->text[0] = '\0';
    if (r) {
      used = lbmc_svc_cat(s->text, sizeof s->text, 0, "coxian:r=");
      used = lbmc_svc_cat_list(s->text, sizeof s->text, used, r, m, digits);
      if (m > 1) {
        used = lbmc_svc_cat(s->text, sizeof s->text, used, ",p=");
        used = lbmc_svc_cat_list(s->text, sizeof s->text, used, p, m - 1, digits);
      }
    } else {
      used = lbmc_svc_cat(s->text, sizeof s->text, 0, "ph:alpha=");
      used = lbmc_svc_cat_list(s->text, sizeof s->text, used, s->alpha, m, digits);
      used = lbmc_svc_cat(s->text, sizeof s->text, used, ",T=");
      for (int i = 0; i < m; i++) {
        used = lbmc_svc_cat(s->text, sizeof s->text, used, i ? "," : "[");
        used = lbmc_svc_cat_list(s->text, sizeof s->text, used, s->T + i * m, m, digits);
      }
      used = lbmc_svc_cat(s->text, sizeof s->text, used, "]");
    }
    if (used < sizeof s->text) return;
  }
}

/* The parameter named key among n, or NULL. */
static const lbmc_svc_arg *lbmc_svc_arg_find(int n, const lbmc_svc_arg *args, const char *key)
{
  for (int i = 0; i < n; i++)
    if (strcmp(args[i].name, key) == 0) return &args[i];
  return NULL;
}

/* The entries of list parameter a (a number is a list of one) into v: their number. */
static lbmc_err lbmc_svc_vector(const char *where, const lbmc_svc_arg *a, const char *usage,
                                int *count, double *v)
{
  if (a->depth == 2)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %s is a list of lists; allowed: a list of numbers, as in %s", where,
                      a->name, usage);
  *count = a->depth == 0 ? 1 : a->len[0];
  if (*count > LBMC_PH_MAX_PHASES)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %s has %d entries; allowed: at most %d phases (LBMC_PH_MAX_PHASES)",
                      where, a->name, *count, LBMC_PH_MAX_PHASES);
  memcpy(v, a->x, sizeof(double) * (size_t)*count);
  return LBMC_SUCCESS;
}

/* Matrix parameter a, m x m, into T (row-major, stride m). */
static lbmc_err lbmc_svc_matrix(const char *where, const lbmc_svc_arg *a, int m, const char *usage,
                                double *T)
{
  if (a->depth == 0 && m == 1) {
    T[0] = a->x[0];
    return LBMC_SUCCESS;
  }
  if (a->depth != 2)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %s must be a list of %d rows of %d numbers (alpha has %d entries), as "
                      "in %s",
                      where, a->name, m, m, m, usage);
  if (a->rows != m)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %s has %d rows; allowed: %d rows of %d, one per phase (alpha has %d "
                      "entries)",
                      where, a->name, a->rows, m, m, m);
  for (int i = 0; i < m; i++) {
    if (a->len[i] != m)
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: row %d of %s has %d entries; allowed: %d, one per phase (alpha has "
                        "%d entries)",
                        where, i + 1, a->name, a->len[i], m, m);
    memcpy(T + i * m, a->x + i * LBMC_PH_MAX_PHASES, sizeof(double) * (size_t)m);
  }
  return LBMC_SUCCESS;
}

/* alpha a probability vector; T a sub-generator from every phase of which absorption
 * is reached. */
static lbmc_err lbmc_ph_check(const char *where, int m, const double *alpha, const double *T)
{
  double sum = 0;
  int reach[LBMC_PH_MAX_PHASES], changed = 1;
  for (int i = 0; i < m; i++) {
    if (!(alpha[i] >= 0) || !isfinite(alpha[i]))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: alpha[%d] = %g is not allowed; alpha holds the probabilities of "
                        "the start phases, each >= 0",
                        where, i + 1, alpha[i]);
    sum += alpha[i];
  }
  if (fabs(sum - 1) > LBMC_PH_ALPHA_TOL)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: alpha sums to %.17g; allowed: a probability vector summing to 1 "
                      "(within %g): the requirement has no atom at zero",
                      where, sum, LBMC_PH_ALPHA_TOL);
  for (int i = 0; i < m; i++) {
    double row = 0, d = T[i * m + i];
    for (int k = 0; k < m; k++) {
      double t = T[i * m + k];
      if (!isfinite(t))
        return LBMC_ERROR(LBMC_ERR_ARG, "%s: T[%d][%d] = %g is not allowed; T holds finite rates",
                          where, i + 1, k + 1, t);
      if (k != i && !(t >= 0))
        return LBMC_ERROR(LBMC_ERR_ARG,
                          "%s: T[%d][%d] = %g is not allowed; off the diagonal T holds the rates "
                          "from phase to phase, >= 0",
                          where, i + 1, k + 1, t);
      row += t;
    }
    if (!(d < 0))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: T[%d][%d] = %g is not allowed; a diagonal entry of T is minus the "
                        "total rate out of its phase, < 0",
                        where, i + 1, i + 1, d);
    if (row > LBMC_PH_ROW_TOL * fabs(d))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: row %d of T sums to %g; allowed: row sums <= 0 (minus the rate of "
                        "absorption from the phase): T must be a sub-generator",
                        where, i + 1, row);
    reach[i] = row < -LBMC_PH_ROW_TOL * fabs(d);
  }
  while (changed) { /* phases from which an absorbing phase can be reached */
    changed = 0;
    for (int i = 0; i < m; i++)
      for (int k = 0; k < m && !reach[i]; k++)
        if (k != i && T[i * m + k] > 0 && reach[k]) reach[i] = changed = 1;
  }
  for (int i = 0; i < m; i++)
    if (!reach[i])
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: from phase %d of T absorption is never reached (no path to a row "
                        "summing to < 0); allowed: every phase leads to absorption, so that T "
                        "is nonsingular and requirements are finite",
                        where, i + 1);
  return LBMC_SUCCESS;
}

/* The phase-type fields, mean and scv of s from (alpha, T), checked to have mean 1;
 * `mean_what` names the mean's formula in the message. */
static lbmc_err lbmc_ph_finish(const char *where, const char *dist, const char *mean_what, int m,
                               const double *alpha, const double *T, lbmc_service *s)
{
  double mean = 0, m2 = 0, g[LBMC_PH_MAX_PHASES];
  if (lbmc_ph_fill(s, m, alpha, T) || lbmc_ph_solve(m, T, s->residual, g))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %s: T is numerically singular; allowed: a sub-generator whose phases "
                      "all lead to absorption at rates far above the rounding of its entries",
                      where, dist);
  for (int i = 0; i < m; i++) {
    mean += alpha[i] * s->residual[i];
    m2 += 2 * alpha[i] * g[i]; /* E[S^2] = 2 alpha (-T)^-2 1 */
  }
  if (!(fabs(mean - 1) <= LBMC_HYPER_MEAN_TOL))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: %s: the mean %s = %.12g; allowed: the mean must be 1 (within %g), "
                      "because mu sets the mean service time (divide the rates by %.12g)",
                      where, dist, mean_what, mean, LBMC_HYPER_MEAN_TOL, 1 / mean);
  s->scv = fmax(0.0, m2 / (mean * mean) - 1);
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_svc_ph(const char *where, int n, const lbmc_svc_arg *args, lbmc_service *s)
{
  static const char *usage = "ph:alpha=[0.5,0.5],T=[[-2,1],[0,-1]]";
  const lbmc_svc_arg *a = lbmc_svc_arg_find(n, args, "alpha"), *t = lbmc_svc_arg_find(n, args, "T");
  double alpha[LBMC_PH_MAX_PHASES], T[LBMC_PH_M2];
  int m = 0;
  if (!a || !t)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: ph needs the parameters alpha and T; write %s", where,
                      usage);
  LBMC_CALL(lbmc_svc_vector(where, a, usage, &m, alpha));
  LBMC_CALL(lbmc_svc_matrix(where, t, m, usage, T));
  LBMC_CALL(lbmc_ph_check(where, m, alpha, T));
  s->kind = LBMC_SERVICE_PH;
  LBMC_CALL(lbmc_ph_finish(where, "ph", "alpha (-T)^-1 1", m, alpha, T, s));
  lbmc_ph_text(s, NULL, NULL);
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_svc_coxian(const char *where, int n, const lbmc_svc_arg *args, lbmc_service *s)
{
  static const char *usage = "coxian:scv=C (0.5 <= C <= 1e12) or coxian:r=[R1,...,Rm],p=[P1,...,"
                             "P(m-1)] (e.g. coxian:r=[2,1],p=[0.5])";
  const lbmc_svc_arg *sa = lbmc_svc_arg_find(n, args, "scv"), *ra = lbmc_svc_arg_find(n, args, "r"),
                     *pa = lbmc_svc_arg_find(n, args, "p");
  double r[LBMC_PH_MAX_PHASES], p[LBMC_PH_MAX_PHASES] = {0}, alpha[LBMC_PH_MAX_PHASES] = {1},
                                T[LBMC_PH_M2] = {0};
  int m = 0, np = 0;
  s->kind = LBMC_SERVICE_COXIAN;
  if (sa) {
    double C;
    if (ra || pa)
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: coxian: give either scv or r and p, not both; write %s",
                        where, usage);
    if (sa->depth != 0)
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: coxian: scv must be a number, not a list; write %s",
                        where, usage);
    C = sa->x[0];
    if (!(C >= LBMC_COXIAN_SCV_MIN && C <= LBMC_COXIAN_SCV_MAX))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: scv = %g is not allowed; coxian:scv=C needs %g <= C <= %g (a "
                        "two-phase Coxian has scv >= 0.5); write %s",
                        where, C, LBMC_COXIAN_SCV_MIN, LBMC_COXIAN_SCV_MAX, usage);
    /* the two-moment fit: r1 = 2, p1 = 1/(2C), r2 = 1/C: mean 1/2 + p1/r2 = 1,
     * E[S^2] = 2/r1^2 + p1 (2/r2^2 + 2/(r1 r2)) = 1 + C */
    T[0] = -2;
    T[1] = 1 / C;  /* 2 p1 */
    T[3] = -1 / C; /* -r2 */
    LBMC_CALL(lbmc_ph_finish(where, "coxian", "1/r1 + p1/r2", 2, alpha, T, s));
    s->p[0] = C;
    s->scv = C;
    lbmc_svc_text(s, "coxian", 1, (const char *const[]){"scv"}, &C);
    return LBMC_SUCCESS;
  }
  if (!ra)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: coxian needs scv, or r (and p with 2 phases or more); "
                      "write %s",
                      where, usage);
  LBMC_CALL(lbmc_svc_vector(where, ra, usage, &m, r));
  if (pa) LBMC_CALL(lbmc_svc_vector(where, pa, usage, &np, p));
  if (np != m - 1)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: coxian: p has %d entries and r %d; allowed: m - 1 continuation "
                      "probabilities p for m rates r (p from phase 1 to 2, ..., m-1 to m)",
                      where, np, m);
  for (int i = 0; i < m; i++)
    if (!(r[i] > 0) || !isfinite(r[i]))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: r[%d] = %g is not allowed; coxian rates are finite and > 0", where,
                        i + 1, r[i]);
  for (int i = 0; i + 1 < m; i++)
    if (!(p[i] > 0 && p[i] <= 1))
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: p[%d] = %g is not allowed; a continuation probability is in (0, 1] "
                        "(0 would leave the later phases unused: drop them)",
                        where, i + 1, p[i]);
  for (int i = 0; i < m; i++) {
    T[i * m + i] = -r[i];
    if (i + 1 < m) T[i * m + i + 1] = p[i] * r[i];
  }
  LBMC_CALL(lbmc_ph_finish(where, "coxian", "sum_i p1...p(i-1) / r_i", m, alpha, T, s));
  lbmc_ph_text(s, r, p);
  return LBMC_SUCCESS;
}

/* Index among the m weights w (skipping `skip`) whose cumulative sum first exceeds
 * target; `rest` if none does (rounding, or the remainder: absorption). */
static int lbmc_ph_pick(const double *w, int m, int skip, double target, int rest)
{
  double acc = 0;
  int last = rest;
  for (int k = 0; k < m; k++) {
    if (k == skip || !(w[k] > 0)) continue;
    acc += w[k];
    if (target < acc) return k;
    last = k;
  }
  return rest < m ? last : rest;
}

/* The absorption time of the phase process from phase i (m: absorbed), walked phase by
 * phase; lbmc_ph_sample starts it from alpha: a phase-type requirement. Random numbers (all from
 * the service stream through the gsl_rng adapter): one gsl_rng_uniform for the start phase unless
 * alpha is a point mass; per phase visited one gsl_ran_exponential(r, 1/rate) for the sojourn
 * (-log1p(-u)/rate, one uniform) and one gsl_rng_uniform for the next phase unless it is certain.
 */
static double lbmc_ph_walk(const lbmc_service *s, gsl_rng *r, int i)
{
  const int m = s->phases;
  double x = 0;
  while (i < m) {
    const double *row = s->T + i * m, rate = -row[i];
    x += gsl_ran_exponential(r, 1.0 / rate);
    if (s->next[i] >= 0)
      i = s->next[i];
    else
      i = lbmc_ph_pick(row, m, i, gsl_rng_uniform(r) * rate, s->exit[i] > 0 ? m : m - 1);
  }
  return x;
}

static double lbmc_ph_sample(const lbmc_service *s, gsl_rng *r)
{
  int i = s->start;
  if (i < 0) i = lbmc_ph_pick(s->alpha, s->phases, -1, gsl_rng_uniform(r), s->phases - 1);
  return lbmc_ph_walk(s, r, i);
}

/* Names of the distributions, as listed in messages. */
#define LBMC_SVC_DISTS                                                                             \
  "exponential, deterministic, erlang, hyperexponential, lognormal, weibull, lomax, ph, coxian"

static int lbmc_svc_is_ph_form(const char *dist)
{
  return strcmp(dist, "ph") == 0 || strcmp(dist, "coxian") == 0;
}

/* ph and coxian from their parameters (names already checked by lbmc_svc_names). */
static lbmc_err lbmc_svc_ph_form(const char *where, const char *dist, int n,
                                 const lbmc_svc_arg *args, lbmc_service *s)
{
  if (strcmp(dist, "ph") == 0) return lbmc_svc_ph(where, n, args, s);
  return lbmc_svc_coxian(where, n, args, s);
}

/* The parameter names a phase-type form allows, and its usage. */
static void lbmc_svc_ph_names(const char *dist, const char *const **allowed, const char **usage)
{
  static const char *const ph[] = {"alpha", "T", NULL}, *const cox[] = {"scv", "r", "p", NULL};
  *allowed = strcmp(dist, "ph") == 0 ? ph : cox;
  *usage = strcmp(dist, "ph") == 0 ? "ph:alpha=[A1,...,Am],T=[[T11,...,T1m],...,[Tm1,...,Tmm]]"
                                   : "coxian:scv=C or coxian:r=[R1,...,Rm],p=[P1,...,P(m-1)]";
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
  if (lbmc_svc_is_ph_form(dist)) { /* numbers only: one phase, or coxian:scv */
    const char *const *allowed, *usage;
    lbmc_svc_arg *args = calloc((size_t)(n ? n : 1), sizeof *args);
    lbmc_err err;
    lbmc_svc_ph_names(dist, &allowed, &usage);
    err = lbmc_svc_names(where, dist, n, names, values, allowed, usage);
    for (int i = 0; !err && i < n; i++) {
      if (!args) return LBMC_ERROR(LBMC_ERR_MEMORY, "%s: out of memory", where);
      args[i].name = names[i];
      args[i].rows = args[i].len[0] = 1;
      args[i].x[0] = values[i];
    }
    if (!err) err = lbmc_svc_ph_form(where, dist, n, args, s);
    free(args);
    return err;
  }
  return LBMC_ERROR(LBMC_ERR_ARG,
                    "%s: '%s' is not a service distribution; allowed: " LBMC_SVC_DISTS, where,
                    dist);
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

/* One number of a list, text [start, end) (cut out in place), into *x. */
static lbmc_err lbmc_svc_entry(const char *where, const char *key, char *start, char *end,
                               double *x)
{
  char k[512];
  *end = '\0';
  snprintf(k, sizeof k, "%s: %s", where, key);
  return lbmc_parse_real(k, lbmc_svc_trim(start), x);
}

/* The list at *pos (just past its '['), up to its ']': numbers into row `row` of a
 * (counting entries beyond the kept ones); *pos moves past the ']'. */
static lbmc_err lbmc_svc_row(const char *where, const char *text, char **pos, lbmc_svc_arg *a,
                             int row)
{
  char *p = *pos;
  int count = 0;
  for (;;) {
    char *start = p, c;
    double x;
    while (*p && *p != ',' && *p != ']' && *p != '[') p++;
    c = *p;
    if (c == '\0' || c == '[')
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: %s: '%s' is not allowed; write a number, a list [X1,X2,...] or a "
                        "list of lists [[X11,X12],[X21,X22]]",
                        where, a->name, text);
    if (c == ']' && count == 0 && lbmc_svc_trim(start) == p) {
      *p = ']';
      if (!strcmp(a->name, "p")) /* the one list that may have no entries: leave it out */
        return LBMC_ERROR(LBMC_ERR_ARG,
                          "%s: p: an empty list is not allowed; a Coxian of one phase has no p: "
                          "leave it out (coxian:r=[1])",
                          where);
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: %s: an empty list is not allowed; write e.g. %s=%s",
                        where, a->name, a->name, strcmp(a->name, "T") ? "[1]" : "[[-1]]");
    }
    LBMC_CALL(lbmc_svc_entry(where, a->name, start, p, &x));
    if (row < LBMC_PH_MAX_PHASES && count < LBMC_PH_MAX_PHASES)
      a->x[row * LBMC_PH_MAX_PHASES + count] = x;
    count++;
    p++;
    if (c == ']') break;
  }
  if (row < LBMC_PH_MAX_PHASES) a->len[row] = count;
  *pos = p;
  return LBMC_SUCCESS;
}

/* The value of parameter a (text trimmed): a number, [X,...] or [[X,...],...]. */
static lbmc_err lbmc_svc_value(const char *where, char *text, lbmc_svc_arg *a)
{
  char *p, *copy;
  lbmc_err err = LBMC_SUCCESS;
  a->rows = 1;
  if (text[0] != '[') {
    a->depth = 0;
    a->len[0] = 1;
    return lbmc_svc_entry(where, a->name, text, text + strlen(text), &a->x[0]);
  }
  copy = strdup(text); /* the value as written, for messages */
  if (!copy) return LBMC_ERROR(LBMC_ERR_MEMORY, "%s: out of memory", where);
  p = text + 1;
  while (isspace((unsigned char)*p)) p++;
  if (*p != '[') {
    a->depth = 1;
    err = lbmc_svc_row(where, copy, &p, a, 0);
  } else {
    a->depth = 2;
    a->rows = 0;
    for (;;) {
      while (isspace((unsigned char)*p)) p++;
      if (*p != '[') {
        err = LBMC_ERROR(LBMC_ERR_ARG,
                         "%s: %s: '%s' is not allowed; a list of lists holds lists only, as in "
                         "[[X11,X12],[X21,X22]]",
                         where, a->name, copy);
        break;
      }
      p++;
      if ((err = lbmc_svc_row(where, copy, &p, a, a->rows))) break;
      a->rows++;
      while (isspace((unsigned char)*p)) p++;
      if (*p == ']') {
        p++;
        break;
      }
      if (*p != ',') {
        err = LBMC_ERROR(LBMC_ERR_ARG,
                         "%s: %s: '%s' is not allowed; rows are separated by commas and the "
                         "list closed by ']', as in [[X11,X12],[X21,X22]]",
                         where, a->name, copy);
        break;
      }
      p++;
    }
  }
  while (!err && isspace((unsigned char)*p)) p++;
  if (!err && *p)
    err = LBMC_ERROR(LBMC_ERR_ARG, "%s: %s: '%s' is not allowed; nothing may follow the list's ']'",
                     where, a->name, copy);
  free(copy);
  return err;
}

/* The parameter pieces of text (after the colon): split at commas outside brackets,
 * empty pieces skipped (as always: "lognormal:scv=4," reads as "lognormal:scv=4"). */
static lbmc_err lbmc_svc_args(const char *where, const char *text, char *list, lbmc_svc_arg *args,
                              int *n)
{
  char *piece = list;
  int depth = 0;
  for (char *p = list;; p++) {
    if (*p == '[') depth++;
    if (*p == ']' && depth > 0) depth--;
    if (*p && (*p != ',' || depth > 0)) continue;
    {
      const int last = *p == '\0';
      char *eq;
      *p = '\0';
      if (*piece) {
        eq = strchr(piece, '=');
        if (!eq || *n == LBMC_SVC_MAX_PARAMS)
          return LBMC_ERROR(LBMC_ERR_ARG,
                            "%s: '%s' is not allowed; write NAME[:KEY=VALUE[,KEY=VALUE...]], "
                            "e.g. lognormal:scv=4",
                            where, text);
        *eq = '\0';
        memset(&args[*n], 0, sizeof args[*n]);
        args[*n].name = lbmc_svc_trim(piece);
        LBMC_CALL(lbmc_svc_value(where, lbmc_svc_trim(eq + 1), &args[*n]));
        (*n)++;
      }
      if (last) return LBMC_SUCCESS;
      piece = p + 1;
    }
  }
}

lbmc_err lbmc_service_parse(const char *where, const char *text, lbmc_service *s)
{
  char *buf, *colon, *name;
  const char *names[LBMC_SVC_MAX_PARAMS];
  double values[LBMC_SVC_MAX_PARAMS];
  lbmc_svc_arg *args;
  lbmc_err err = LBMC_SUCCESS;
  int n = 0;
  memset(s, 0, sizeof *s);
  if (text && strlen(text) >= LBMC_SVC_TEXT_IN_MAX) /* the text's length, not its words */
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: '%.40s...' (%zu characters) is not allowed; allowed: at most %d "
                      "characters (a phase-type law has at most %d phases)",
                      where, text, strlen(text), LBMC_SVC_TEXT_IN_MAX - 1, LBMC_PH_MAX_PHASES);
  if (!text || !*text)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: '%.40s%s' is not allowed; a service distribution such as exponential or "
                      "lognormal:scv=4 is required",
                      where, text ? text : "", text && strlen(text) > 40 ? "..." : "");
  buf = strdup(text);
  args = calloc(LBMC_SVC_MAX_PARAMS, sizeof *args);
  if (!buf || !args) {
    free(buf);
    free(args);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "%s: out of memory", where);
  }
  colon = strchr(buf, ':');
  if (colon) {
    *colon = '\0';
    err = lbmc_svc_args(where, text, colon + 1, args, &n);
  }
  name = lbmc_svc_trim(buf);
  for (int i = 0; !err && i < n; i++) {
    names[i] = args[i].name;
    values[i] = args[i].depth == 0 ? args[i].x[0] : 0;
  }
  if (!err && lbmc_svc_is_ph_form(name)) {
    const char *const *allowed, *usage;
    lbmc_svc_ph_names(name, &allowed, &usage);
    err = lbmc_svc_names(where, name, n, names, values, allowed, usage);
    if (!err) err = lbmc_svc_ph_form(where, name, n, args, s);
  } else if (!err) {
    static const char *const known[] = {
        "exponential", "deterministic", "erlang", "hyperexponential",
        "lognormal",   "weibull",       "lomax"};
    int is_known = 0;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) is_known |= !strcmp(name, known[k]);
    for (int i = 0; is_known && !err && i < n; i++)
      if (args[i].depth > 0)
        err = LBMC_ERROR(LBMC_ERR_ARG,
                         "%s: %s: a list is not allowed for %s; lists are for ph and coxian, the "
                         "other laws take numbers, e.g. lognormal:scv=4",
                         where, args[i].name, name);
    if (!err) err = lbmc_service_make(where, name, n, names, values, s);
  }
  free(args);
  free(buf);
  return err;
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
  case LBMC_SERVICE_PH:
  case LBMC_SERVICE_COXIAN: return lbmc_ph_sample(s, r);
  default: return gsl_ran_exponential(r, 1.0);
  }
}

int lbmc_service_equal(const lbmc_service *a, const lbmc_service *b)
{
  const size_t m = (size_t)a->phases;
  if (a->kind != b->kind) return 0;
  if (a->kind == LBMC_SERVICE_EXPONENTIAL) return 1;
  return memcmp(a->p, b->p, sizeof a->p) == 0 && a->phases == b->phases &&
         memcmp(a->alpha, b->alpha, sizeof(double) * m) == 0 &&
         memcmp(a->T, b->T, sizeof(double) * m * m) == 0;
}

/* The exponential law as phase type, for services not built by the parser. */
static const double lbmc_ph_one = 1, lbmc_ph_minus_one = -1;

int lbmc_service_ph(const lbmc_service *s, const double **alpha, const double **T)
{
  const int exp_default = s->kind == LBMC_SERVICE_EXPONENTIAL && s->phases == 0;
  if (!exp_default && (s->phases < 1 || s->phases > LBMC_PH_MAX_PHASES)) return 0;
  if (alpha) *alpha = exp_default ? &lbmc_ph_one : s->alpha;
  if (T) *T = exp_default ? &lbmc_ph_minus_one : s->T;
  return exp_default ? 1 : s->phases;
}

const double *lbmc_service_ph_exit(const lbmc_service *s)
{
  if (s->kind == LBMC_SERVICE_EXPONENTIAL && s->phases == 0) return &lbmc_ph_one;
  return lbmc_service_ph(s, NULL, NULL) ? s->exit : NULL;
}

const double *lbmc_service_ph_residual(const lbmc_service *s)
{
  if (s->kind == LBMC_SERVICE_EXPONENTIAL && s->phases == 0) return &lbmc_ph_one;
  return lbmc_service_ph(s, NULL, NULL) ? s->residual : NULL;
}

/* The equilibrium residual of a phase-type law: the phase process seen at a random time
 * of a busy period is in phase p with probability pi_p, pi = alpha (-T)^-1 / E[S]
 * (E[S] = 1), and runs on from there (Asmussen, Applied Probability and Queues, 2003,
 * III.5; the stationary excess of PH(alpha, T) is PH(pi, T)). -1 if pi cannot be had. */
static int lbmc_ph_residual(const lbmc_service *s, gsl_rng *r, double *x)
{
  const int m = s->phases;
  const double *alpha, *T;
  double Tt[LBMC_PH_M2], pi[LBMC_PH_MAX_PHASES], sum = 0;
  if (lbmc_service_ph(s, &alpha, &T) != m || m < 1) return -1;
  for (int i = 0; i < m; i++) /* pi (-T) = alpha: (-T)^t pi = alpha */
    for (int k = 0; k < m; k++) Tt[i * m + k] = T[k * m + i];
  if (lbmc_ph_solve(m, Tt, alpha, pi) != 0) return -1;
  for (int i = 0; i < m; i++) sum += pi[i] > 0 ? pi[i] : 0;
  *x = lbmc_ph_walk(s, r, lbmc_ph_pick(pi, m, -1, gsl_rng_uniform(r) * sum, m - 1));
  return 0;
}

double lbmc_service_residual(const lbmc_service *s, gsl_rng *r)
{
  double x;
  switch (s->kind) {
  case LBMC_SERVICE_EXPONENTIAL: return gsl_ran_exponential(r, 1.0); /* memoryless */
  case LBMC_SERVICE_DETERMINISTIC: return gsl_rng_uniform(r);        /* G_e uniform on (0, 1) */
  case LBMC_SERVICE_ERLANG: { /* Gamma(K, K): the phases left, uniform on 1..K, at rate K */
    const double k = s->p[0];
    return gsl_ran_gamma(r, 1.0 + floor(gsl_rng_uniform(r) * k), 1.0 / k);
  }
  /* Otherwise U S*, S* the length-biased law (density x f(x) / E[S]), U uniform. */
  case LBMC_SERVICE_LOGNORMAL: /* S* = exp(zeta + sigma^2 + sigma Z) */
    return gsl_rng_uniform_pos(r) *
           exp(s->p[0] + s->p[1] * s->p[1] + s->p[1] * gsl_ran_gaussian_ziggurat(r, 1.0));
  case LBMC_SERVICE_WEIBULL: { /* (S* / scale)^shape ~ Gamma(1 + 1 / shape, 1) */
    const double k = s->p[0];
    return gsl_rng_uniform_pos(r) * s->p[1] * pow(gsl_ran_gamma(r, 1.0 + 1.0 / k, 1.0), 1.0 / k);
  }
  case LBMC_SERVICE_LOMAX: /* G_e(x) = (1 + x/b)^-(a-1): Lomax(a - 1, b) */
    return s->p[1] * expm1(gsl_ran_exponential(r, 1.0) / (s->p[0] - 1.0));
  default: /* hyperexponential, ph, coxian: phase type */
    if (lbmc_ph_residual(s, r, &x) == 0) return x;
    return gsl_ran_exponential(r, 1.0);
  }
}
