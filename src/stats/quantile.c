/* Quantiles of sojourn and waiting times with intervals across independent units:
 * Woodruff's interval (a confidence band for the CDF at the pooled quantile, mapped back
 * through the pooled quantile function), for pooled histograms (dhist.c) and for
 * mixtures of Erlang laws (the occupancy engine's class counts). See dhist.h. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <math.h>

#include "dhist.h"

/* The lower end of the interval from the band's lower level pl. */
static void lbmc_woodruff_lower(const lbmc_pooled_dist *d, double pl, lbmc_interval *out)
{
  double x;
  if (pl * d->total < 1 || (d->quantile(d->ctx, pl, &x) & LBMC_IV_BELOW_RANGE)) {
    out->lower = 0; /* below the data: only the trivial bound */
    out->flags |= LBMC_IV_LOWER_OPEN;
    return;
  }
  out->lower = x;
}

/* The upper end from ph; NaN when fewer than one observation lies beyond it. */
static void lbmc_woodruff_upper(const lbmc_pooled_dist *d, double ph, lbmc_interval *out)
{
  double x;
  if ((1 - ph) * d->total < 1 || (d->quantile(d->ctx, ph, &x) & LBMC_IV_ABOVE_RANGE)) {
    out->upper = NAN;
    out->flags |= LBMC_IV_UPPER_OPEN;
    return;
  }
  out->upper = x;
}

int lbmc_quantile_withheld(double p, long units, double total)
{
  const double tail = fmin(p, 1 - p);
  if (tail <= 1 - LBMC_Q_TAIL_LEVEL + 1e-12 && units < LBMC_Q_TAIL_UNITS) return 1;
  return tail * total < LBMC_Q_MIN_BEYOND;
}

void lbmc_woodruff(const lbmc_pooled_dist *d, double p, double q, unsigned qflags, double *Y,
                   double *X, size_t n, double level, const lbmc_batch_rule *rule, double *work,
                   lbmc_interval *out)
{
  lbmc_interval band;
  unsigned bflags = 0;
  if (rule) {
    const size_t n0 = n;
    n = lbmc_batch_merge(Y, X, n0, 1, rule, work, work + n0, &bflags);
    Y = work;
    X = work + n0;
  }
  lbmc_proportion_interval(Y, X, n, 1, level, d->trials, &band); /* the band for F(q) */
  lbmc_woodruff_from_band(d, p, q, qflags, &band, bflags, level, out);
}

void lbmc_woodruff_from_band(const lbmc_pooled_dist *d, double p, double q, unsigned qflags,
                             const lbmc_interval *b, unsigned bflags, double level,
                             lbmc_interval *out)
{
  const lbmc_interval band = *b;
  double pl, ph;
  *out = band;
  out->estimate = q;
  out->flags = (band.flags & (LBMC_IV_EMPTY | LBMC_IV_NO_INTERVAL)) | bflags | qflags;
  out->std_err = out->lower = out->upper = out->half_width = out->upper_bound = NAN;
  if (qflags & (LBMC_IV_EMPTY | LBMC_IV_BELOW_RANGE | LBMC_IV_ABOVE_RANGE)) {
    out->estimate = NAN; /* the quantile's value is unknown: q is only a bound */
    if (qflags & LBMC_IV_BELOW_RANGE) out->lower = 0, out->upper = q;
    if (qflags & LBMC_IV_ABOVE_RANGE) out->lower = q;
    return;
  }
  if (band.flags & (LBMC_IV_EMPTY | LBMC_IV_NO_INTERVAL)) return;
  if (lbmc_quantile_withheld(p, isnan(band.dof) ? 0 : (long)band.dof + 1, d->total)) {
    out->flags |= LBMC_IV_UNRELIABLE; /* data-independent: never chosen on the variance */
    return;
  }
  /* The band for F(q) moved to p: F(q) = p for a quantile inside a bin (count_le
   * interpolates as the quantile does), F(q) > p at an atom (a point mass: every unit's
   * F(q) = 1, the band [1 - bound, 1] gives [Q(p - bound), Q(p)]). */
  pl = fmax(0.0, p - (band.estimate - band.lower));
  ph = fmin(1.0, p + (band.upper - band.estimate));
  lbmc_woodruff_lower(d, pl, out);
  lbmc_woodruff_upper(d, ph, out);
  /* Q is monotone and Q(p) = q; a mixture's Q is a root found to a relative 1e-12, so for
   * levels that close to p the ends could fall on the wrong side of q by that much */
  if (!(out->flags & LBMC_IV_LOWER_OPEN)) out->lower = fmin(out->lower, q);
  if (!isnan(out->upper)) out->upper = fmax(out->upper, q);
  if (!isnan(out->upper)) {
    out->half_width = fmax(q - out->lower, out->upper - q);
    if (!(out->flags & LBMC_IV_LOWER_OPEN) && band.dof > 0)
      out->std_err =
          (out->upper - out->lower) / (2 * gsl_cdf_tdist_Pinv(0.5 + 0.5 * level, band.dof));
  }
}

/* ---- histograms ---- */

static unsigned lbmc_dhist_q(const void *ctx, double p, double *x)
{
  return lbmc_dhist_quantile(ctx, p, x);
}

void lbmc_dhist_quantile_interval(const lbmc_dhist *const *units, size_t nunits,
                                  const lbmc_dhist *pooled, double p, double level,
                                  const lbmc_batch_rule *rule, double *work, lbmc_interval *out)
{
  lbmc_pooled_dist d = {lbmc_dhist_q, pooled, (double)lbmc_dhist_total(pooled), 1};
  double q, *Y = work, *X = work + nunits;
  unsigned qflags = lbmc_dhist_quantile(pooled, p, &q);
  for (size_t i = 0; i < nunits; i++) {
    Y[i] = qflags ? 0 : lbmc_dhist_count_le(units[i], q);
    X[i] = (double)lbmc_dhist_total(units[i]);
  }
  lbmc_woodruff(&d, p, q, qflags, Y, X, nunits, level, rule, work + 2 * nunits, out);
}

/* ---- Erlang mixtures ---- */

static double lbmc_erlang_cdf(int k, double rate, double x)
{
  if (k <= 0) return x >= 0 ? 1.0 : 0.0;
  return x > 0 ? gsl_cdf_gamma_P(x, (double)k, 1.0 / rate) : 0.0;
}

double lbmc_mix_count_le(const lbmc_erlang_mix *mix, const double *counts, double x)
{
  double c = 0;
  for (size_t i = 0; i < mix->classes; i++)
    if (counts[i] > 0) c += counts[i] * lbmc_erlang_cdf(mix->shape[i], mix->rate[i], x);
  return c;
}

typedef struct {
  const lbmc_erlang_mix *mix;
  const double *counts;
  double target;
} lbmc_mix_root;

static double lbmc_mix_f(double x, void *ctx)
{
  const lbmc_mix_root *r = ctx;
  return lbmc_mix_count_le(r->mix, r->counts, x) - r->target;
}

unsigned lbmc_mix_quantile(const lbmc_erlang_mix *mix, const double *counts, double p, double *x)
{
  double total = 0, atoms = 0, hi = 0, lo = 0;
  lbmc_mix_root r = {mix, counts, 0};
  gsl_function f = {lbmc_mix_f, &r};
  gsl_root_fsolver *s;
  for (size_t i = 0; i < mix->classes; i++) {
    if (!(counts[i] > 0)) continue;
    total += counts[i];
    if (mix->shape[i] <= 0)
      atoms += counts[i];
    else /* the largest class mean, doubled below until the quantile is bracketed */
      hi = fmax(hi, (double)mix->shape[i] / mix->rate[i]);
  }
  *x = total > 0 ? 0 : NAN;
  if (!(total > 0)) return LBMC_IV_EMPTY;
  r.target = p * total;
  if (atoms >= r.target) return 0;
  for (int k = 0; k < 2100 && lbmc_mix_f(hi, &r) < 0; k++) hi *= 2;
  if (!(lbmc_mix_f(hi, &r) > 0)) { /* the root itself (or beyond every double) */
    *x = hi;
    return 0;
  }
  s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  if (!s) return LBMC_IV_EMPTY; /* out of memory: no value */
  gsl_root_fsolver_set(s, &f, 0, hi);
  for (int it = 0; it < 200; it++) {
    gsl_root_fsolver_iterate(s);
    lo = gsl_root_fsolver_x_lower(s);
    hi = gsl_root_fsolver_x_upper(s);
    if (gsl_root_test_interval(lo, hi, 0, 1e-12) == GSL_SUCCESS) break;
  }
  *x = gsl_root_fsolver_root(s);
  gsl_root_fsolver_free(s);
  return 0;
}

typedef struct {
  const lbmc_erlang_mix *mix;
  const double *counts;
} lbmc_mix_ctx;

static unsigned lbmc_mix_q(const void *ctx, double p, double *x)
{
  const lbmc_mix_ctx *c = ctx;
  return lbmc_mix_quantile(c->mix, c->counts, p, x);
}

void lbmc_mix_quantile_interval(const lbmc_erlang_mix *mix, const double *counts, size_t nunits,
                                const double *pooled, double p, double level,
                                const lbmc_batch_rule *rule, double *work, lbmc_interval *out)
{
  size_t C = mix->classes;
  lbmc_mix_ctx ctx = {mix, pooled};
  /* Y_i are sums of probabilities, not of indicators: their spread may be below the
   * binomial one, so the effective sample size is not capped by the customers */
  lbmc_pooled_dist d = {lbmc_mix_q, &ctx, 0, 0};
  double q, *g = work, *Y = work + C, *X = Y + nunits;
  unsigned qflags = lbmc_mix_quantile(mix, pooled, p, &q);
  for (size_t c = 0; c < C; c++) {
    d.total += pooled[c];
    g[c] = qflags ? 0 : lbmc_erlang_cdf(mix->shape[c], mix->rate[c], q);
  }
  for (size_t i = 0; i < nunits; i++) {
    Y[i] = X[i] = 0;
    for (size_t c = 0; c < C; c++) {
      Y[i] += counts[i * C + c] * g[c];
      X[i] += counts[i * C + c];
    }
  }
  lbmc_woodruff(&d, p, q, qflags, Y, X, nunits, level, rule, X + nunits, out);
}
