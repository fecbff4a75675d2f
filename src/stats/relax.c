/* The relaxation time of a stationary series and the checks of a run against it: the
 * integrated autocorrelation time from batch means of growing size (self-consistent
 * window), its upper confidence bound, and the bound on the transient an empty (or any)
 * start leaves after a warm-up. See estimators.h for the rules and their sources. */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <string.h>

#include "estimators.h"

/* Within-unit variance of the batch means of b consecutive parts (k = m / b batches per
 * unit, the trailing m % b parts dropped), pooled over the units: sum of squares and its
 * degrees of freedom. Part means are area / len. */
static void lbmc_relax_batches(const double *area, const double *len, size_t units, size_t m,
                               size_t b, double *ss, double *dof)
{
  const size_t k = m / b;
  *ss = *dof = 0;
  for (size_t u = 0; u < units; u++) {
    const double *a = area + u * m, *l = len + u * m;
    double mean = 0, sum2 = 0, cnt = 0;
    for (size_t j = 0; j < k; j++) {
      double y = 0, x = 0;
      for (size_t i = j * b; i < (j + 1) * b; i++) y += a[i], x += l[i];
      if (!(x > 0)) continue;
      /* Welford's update of the batch means' mean and sum of squares */
      cnt += 1;
      {
        const double v = y / x, delta = v - mean;
        mean += delta / cnt;
        sum2 += delta * (v - mean);
      }
    }
    if (cnt >= 2) *ss += sum2, *dof += cnt - 1;
  }
}

/* f(x) = V(x tau) / V(inf): l Var(mean over l) against its limit, at l = x tau, for the
 * queue length of M/M/1 at rho = 0.95 (exact, from the spectral decomposition of the
 * birth-death generator; tau = 780, tau_1 = int t C / int C = 1.25 tau), at
 * x = 0.0625 x 2^(k/2), k = 0 .. 22. Reflected Brownian motion, the heavy-traffic limit,
 * approaches its limit as slowly; a many-server queue (Ornstein-Uhlenbeck,
 * f = 1 - (1 - e^{-x}) / x) faster, so correcting a reading with this curve errs on the
 * long side. Beyond the table f = 1 - 1.25 / x. */
static const double lbmc_relax_f[] = {0.030167, 0.042102, 0.058485, 0.080743, 0.110576, 0.149864,
                                      0.200432, 0.263636, 0.339737, 0.427168, 0.521966, 0.617840,
                                      0.707339, 0.784025, 0.844622, 0.889615, 0.921890, 0.944765,
                                      0.960943, 0.972382, 0.980471, 0.986191, 0.990236};
#define LBMC_RELAX_F_N ((int)(sizeof lbmc_relax_f / sizeof *lbmc_relax_f))
#define LBMC_RELAX_X0  0.0625

double lbmc_relax_length_factor(double x)
{
  double k;
  int i;
  if (!(x >= 0)) return NAN;
  if (x == INFINITY) return 1;
  if (x <= LBMC_RELAX_X0) /* below the table: f = x g, g from 1/2 at 0 to its first value */
    return x * (0.5 - (0.5 - lbmc_relax_f[0] / LBMC_RELAX_X0) * x / LBMC_RELAX_X0);
  k = 2 * log2(x / LBMC_RELAX_X0);
  if (k >= LBMC_RELAX_F_N - 1) return fmax(lbmc_relax_f[LBMC_RELAX_F_N - 1], 1 - 1.25 / x);
  i = (int)k; /* log-linear in x between table points */
  return lbmc_relax_f[i] + (k - i) * (lbmc_relax_f[i + 1] - lbmc_relax_f[i]);
}

/* g(x) = f(x) / x, decreasing from 1/2 (x -> 0) to 0, at table point k. */
static double lbmc_relax_g_at(int k) { return lbmc_relax_f[k] / (LBMC_RELAX_X0 * pow(2, 0.5 * k)); }

/* x with g(x) = r (the reading tau(l) / l): log-linear in x between table points; 0 when
 * r is at or above the short-batch limit 1/2 (l far below tau: no reading). */
static double lbmc_relax_x(double r)
{
  const double g0 = lbmc_relax_g_at(0);
  if (!(r < 0.5)) return 0;
  if (r >= g0) /* below the table: g = 1/2 - (1/2 - g0) x / x0 */
    return LBMC_RELAX_X0 * (0.5 - r) / (0.5 - g0);
  for (int k = 0; k + 1 < LBMC_RELAX_F_N; k++) {
    const double a = lbmc_relax_g_at(k), b = lbmc_relax_g_at(k + 1);
    if (r >= b) {
      const double t = log(a / r) / log(a / b); /* g about geometric between points */
      return LBMC_RELAX_X0 * pow(2, 0.5 * (k + t));
    }
  }
  /* beyond: f = 1 - 1.25 / x, so g = 1/x - 1.25/x^2 = r, the larger root */
  return r > 0 ? (1 + sqrt(fmax(0.0, 1 - 5 * r))) / (2 * r) : INFINITY;
}

/* The chi-square quantile at probability p on dof degrees of freedom. GSL's inverse aborts
 * (its incomplete gamma function fails) beyond about 1.2e6 degrees of freedom, which 64000
 * replicas of 20 fine parts reach; there the Wilson-Hilferty cube of a normal quantile
 * (relative error 5e-11 at 1e6 degrees of freedom, falling as 1 / dof^1.5). */
static double lbmc_relax_chisq_quantile(double p, double dof)
{
  if (dof <= 1e6) return gsl_cdf_chisq_Pinv(p, dof);
  {
    const double a = 2 / (9 * dof), t = 1 - a + gsl_cdf_ugaussian_Pinv(p) * sqrt(a);
    return dof * t * t * t;
  }
}

/* One reading: var_inf at length l with dof into out, corrected for the length. */
static void lbmc_relax_reading(double vinf, double ell, double dof, double var, double window,
                               double level, lbmc_relax *out)
{
  const double r = vinf / (2 * var * ell), x = lbmc_relax_x(r);
  const double ru = r * dof / lbmc_relax_chisq_quantile(1 - level, dof), xu = lbmc_relax_x(ru);
  const double rl = r * dof / lbmc_relax_chisq_quantile(level, dof), xl = lbmc_relax_x(rl);
  out->scale = ell, out->var_inf = vinf, out->dof = dof;
  out->reading = r * ell;
  out->tau = x > 0 ? ell / x : INFINITY;
  out->tau_upper = xu > 0 ? ell / xu : INFINITY;
  out->tau_lower = xl > 0 ? ell / xl : INFINITY;
  out->resolved = x >= window;
}

/* What lbmc_relax_estimate reads of its units, from arrays or from their summaries: the
 * pooled within-unit sum of squares of batches of b parts (lbmc_relax_batches), and unit
 * u's whole sums (y, x: its parts' areas and times added in order). */
typedef struct {
  void (*batches)(const void *ctx, size_t units, size_t m, size_t b, double *ss, double *dof);
  void (*whole)(const void *ctx, size_t u, size_t m, double *y, double *x);
  const void *ctx;
} lbmc_relax_source;

static void lbmc_relax_estimate_from(const lbmc_relax_source *src, size_t units, size_t m,
                                     double part_len, double var_within, double var, double window,
                                     double level, lbmc_relax *out)
{
  memset(out, 0, sizeof *out);
  out->tau = out->tau_upper = out->scale = out->var_inf = out->reading = NAN;
  out->tau_lower = 0;
  out->var = var;
  if (!(var > 0) || !(var_within > 0) || !(part_len > 0) || units < 1 || m < 1) return;
  /* within units: batches of 1, 2, 4, ... parts while at least LBMC_RELAX_MIN_BATCHES; the
   * first that resolves it (the most degrees of freedom), else the longest */
  for (size_t b = 1; m / b >= LBMC_RELAX_MIN_BATCHES; b *= 2) {
    double ss, dof;
    src->batches(src->ctx, units, m, b, &ss, &dof);
    if (!(dof > 0)) continue;
    lbmc_relax_reading(part_len * (double)b * ss / dof, part_len * (double)b, dof, var_within,
                       window, level, out);
    if (out->resolved) return;
  }
  /* across units: the units' whole means, when the batches within did not resolve it. They
   * never resolve it: their spread is the variance of the point's own interval, and
   * accepting a run on it keeps exactly the runs whose intervals are too narrow (of 500
   * runs of JSQ(2) with 10 replicas of 100, the 30 accepted that way covered 60%); a larger
   * reading only raises the lower bound. */
  if (units >= 2) {
    const double T = part_len * (double)m;
    double sum = 0, sum2 = 0, cnt = 0, mean;
    lbmc_relax across;
    for (size_t u = 0; u < units; u++) {
      double y, x;
      src->whole(src->ctx, u, m, &y, &x);
      if (!(x > 0)) continue;
      sum += y / x, sum2 += (y / x) * (y / x), cnt += 1;
    }
    if (cnt < 2) return;
    mean = sum / cnt;
    across = *out;
    lbmc_relax_reading(T * fmax(0.0, sum2 - cnt * mean * mean) / (cnt - 1), T, cnt - 1, var, window,
                       level, &across);
    if (isnan(out->tau) || across.tau > out->tau) {
      *out = across;
      out->tau_upper = INFINITY;
      out->tau_lower = 0; /* the spread the interval rests on proves nothing either way */
    }
    out->resolved = 0;
  }
}

/* The arrays' source: area[u m + i], len[u m + i]. */
typedef struct {
  const double *area, *len;
} lbmc_relax_arrays;

static void lbmc_relax_arrays_batches(const void *ctx, size_t units, size_t m, size_t b, double *ss,
                                      double *dof)
{
  const lbmc_relax_arrays *a = ctx;
  lbmc_relax_batches(a->area, a->len, units, m, b, ss, dof);
}

static void lbmc_relax_arrays_whole(const void *ctx, size_t u, size_t m, double *y, double *x)
{
  const lbmc_relax_arrays *a = ctx;
  *y = *x = 0;
  for (size_t i = 0; i < m; i++) *y += a->area[u * m + i], *x += a->len[u * m + i];
}

void lbmc_relax_estimate(const double *area, const double *len, size_t units, size_t m,
                         double part_len, double var_within, double var, double window,
                         double level, lbmc_relax *out)
{
  const lbmc_relax_arrays a = {area, len};
  const lbmc_relax_source src = {lbmc_relax_arrays_batches, lbmc_relax_arrays_whole, &a};
  lbmc_relax_estimate_from(&src, units, m, part_len, var_within, var, window, level, out);
}

void lbmc_relax_unit_of(const double *area, const double *len, size_t m, lbmc_relax_unit *out)
{
  memset(out, 0, sizeof *out);
  out->m = m;
  for (size_t b = 1, k = 0; k < LBMC_RELAX_UNIT_LEVELS && m / b >= LBMC_RELAX_MIN_BATCHES;
       b *= 2, k++) {
    double dof;
    lbmc_relax_batches(area, len, 1, m, b, &out->ss[k], &dof);
    out->dof[k] = dof;
  }
  lbmc_relax_arrays_whole(&(lbmc_relax_arrays){area, len}, 0, m, &out->y, &out->x);
}

/* The summaries' source: unit u is get(ctx, u). */
typedef struct {
  const lbmc_relax_unit *(*get)(const void *ctx, size_t u);
  const void *ctx;
} lbmc_relax_summaries;

static void lbmc_relax_units_batches(const void *ctx, size_t units, size_t m, size_t b, double *ss,
                                     double *dof)
{
  const lbmc_relax_summaries *s = ctx;
  size_t k = 0;
  (void)m;
  while (((size_t)1 << k) < b) k++;
  *ss = *dof = 0;
  for (size_t u = 0; u < units; u++) { /* as lbmc_relax_batches adds a unit: cnt >= 2 */
    const lbmc_relax_unit *r = s->get(s->ctx, u);
    if (r->dof[k] > 0) *ss += r->ss[k], *dof += r->dof[k];
  }
}

static void lbmc_relax_units_whole(const void *ctx, size_t u, size_t m, double *y, double *x)
{
  const lbmc_relax_summaries *s = ctx;
  const lbmc_relax_unit *r = s->get(s->ctx, u);
  (void)m;
  *y = r->y, *x = r->x;
}

lbmc_err lbmc_relax_estimate_units(const lbmc_relax_unit *(*get)(const void *ctx, size_t u),
                                   const void *ctx, size_t units, size_t m, double part_len,
                                   double var_within, double var, double window, double level,
                                   lbmc_relax *out)
{
  const lbmc_relax_summaries s = {get, ctx};
  const lbmc_relax_source src = {lbmc_relax_units_batches, lbmc_relax_units_whole, &s};
  if (m > LBMC_RELAX_UNIT_PARTS)
    return LBMC_ERROR(LBMC_ERR_ARG, "relaxation time: %zu parts per unit, at most %d summarised", m,
                      LBMC_RELAX_UNIT_PARTS);
  for (size_t u = 0; u < units; u++)
    if (get(ctx, u)->m != m)
      return LBMC_ERROR(LBMC_ERR_ARG, "relaxation time: unit %zu summarises %zu parts, not %zu", u,
                        get(ctx, u)->m, m);
  lbmc_relax_estimate_from(&src, units, m, part_len, var_within, var, window, level, out);
  return LBMC_SUCCESS;
}

/* G(x) = 2 int_x^inf (1/2 - E R(t)) dt for reflected Brownian motion R with drift -1 and
 * variance 1 started at 0 (E R(inf) = 1/2, integrated autocorrelation time 1), at x = 0, 1,
 * ..., 24: E R(t) = E max_{s <= t} (B_s - s), by quadrature of P(max > y) =
 * Q((y + t) / sqrt t) + e^{-2y} Q((y - t) / sqrt t) (Q the normal tail). Its log is convex
 * (the ratios of neighbours grow to e^{-1/2}), so log-linear interpolation lies above it,
 * and beyond 24 it falls faster than e^{-x/2}. */
static const double lbmc_rbm_g[] = {
    5.000000e-01, 1.666309e-01, 7.211402e-02, 3.386970e-02, 1.665663e-02,
    8.445059e-03, 4.377070e-03, 2.307084e-03, 1.232336e-03, 6.654453e-04,
    3.625983e-04, 1.990999e-04, 1.100478e-04, 6.117648e-05, 3.418048e-05,
    1.918287e-05, 1.080895e-05, 6.112403e-06, 3.467769e-06, 1.973193e-06,
    1.125794e-06, 6.439041e-07, 3.691229e-07, 2.120474e-07, 1.220508e-07};
#define LBMC_RBM_G_LAST ((int)(sizeof lbmc_rbm_g / sizeof *lbmc_rbm_g) - 1)
/* M/M/1 at rho = 0.95 from empty has a deficit 1 to 3% above its limit's (exact, from the
 * spectral decomposition): a tenth more covers queues near their limit. */
#define LBMC_RELAX_G_SAFETY 1.1

double lbmc_transient_envelope(double x)
{
  double g;
  if (!(x > 0)) return LBMC_RELAX_G_SAFETY * lbmc_rbm_g[0];
  if (x >= LBMC_RBM_G_LAST) {
    g = lbmc_rbm_g[LBMC_RBM_G_LAST] * exp(-(x - LBMC_RBM_G_LAST) / 2);
  } else {
    const int i = (int)floor(x);
    const double f = x - i;
    g = exp((1 - f) * log(lbmc_rbm_g[i]) + f * log(lbmc_rbm_g[i + 1]));
  }
  return LBMC_RELAX_G_SAFETY * g;
}

double lbmc_transient_bound(double deficit, double tau, double warmup, double measured)
{
  if (!(measured > 0) || !(tau > 0)) return NAN;
  return fabs(deficit) * tau * lbmc_transient_envelope(warmup / tau) / measured;
}

double lbmc_transient_warmup(double deficit, double tau, double measured, double target)
{
  double lo = 0, hi = 1;
  if (!(measured > 0) || !(tau > 0) || isnan(deficit)) return NAN;
  if (lbmc_transient_bound(deficit, tau, 0, measured) <= target) return 0;
  if (!(target > 0)) return NAN;
  while (lbmc_transient_bound(deficit, tau, hi * tau, measured) > target && hi < 1e6) hi *= 2;
  for (int it = 0; it < 60; it++) { /* the envelope decreases: bisection */
    const double mid = 0.5 * (lo + hi);
    if (lbmc_transient_bound(deficit, tau, mid * tau, measured) > target)
      lo = mid;
    else
      hi = mid;
  }
  return hi * tau;
}

void lbmc_moments_add(lbmc_moments *a, const lbmc_moments *b)
{
  const double n = a->n + b->n, d = b->mean - a->mean;
  if (!(b->n > 0)) return;
  if (!(a->n > 0)) {
    *a = *b;
    return;
  }
  a->m3 += b->m3 + d * d * d * a->n * b->n * (a->n - b->n) / (n * n) +
           3 * d * (a->n * b->m2 - b->n * a->m2) / n;
  a->m2 += b->m2 + d * d * a->n * b->n / n;
  a->mean += d * b->n / n;
  a->n = n;
}
