/* Quantiles of sojourn and waiting times with intervals across independent units:
 * Woodruff's interval (a confidence band for the CDF at the pooled quantile, mapped back
 * through the pooled quantile function), for pooled histograms (dhist.c) and for
 * mixtures of Erlang laws (the occupancy engine's class counts). See dhist.h. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <math.h>

#include "dhist.h"

/* A pooled distribution: its quantile function (flags as lbmc_dhist_quantile). */
typedef struct {
  unsigned (*quantile)(const void *ctx, double p, double *x);
  const void *ctx;
  double total; /* observations pooled */
  int trials;   /* the units' counts are of indicators (lbmc_proportion_interval) */
} lbmc_pooled;

/* The lower end of the interval from the band's lower level pl. */
static void lbmc_woodruff_lower(const lbmc_pooled *d, double pl, lbmc_interval *out)
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
static void lbmc_woodruff_upper(const lbmc_pooled *d, double ph, lbmc_interval *out)
{
  double x;
  if ((1 - ph) * d->total < 1 || (d->quantile(d->ctx, ph, &x) & LBMC_IV_ABOVE_RANGE)) {
    out->upper = NAN;
    out->flags |= LBMC_IV_UPPER_OPEN;
    return;
  }
  out->upper = x;
}

/* Too few effective observations for the band to be trusted (NCHS data presentation
 * standard for proportions: an effective sample size below 30, or an interval of the
 * smaller tail, min(p, 1 - p), wider than 130% of it): then no interval is honest, since
 * the replicas' tails come in rare large excursions the band cannot see. Source: J. D.
 * Parker et al., Vital Health Stat 2(175), National Center for Health Statistics 2017. */
static int lbmc_band_unreliable(const lbmc_interval *band, double p)
{
  double v = band->std_err * band->std_err, neff = v > 0 ? p * (1 - p) / v : INFINITY;
  return neff < 30 || band->upper - band->lower > 1.3 * fmin(p, 1 - p);
}

/* Woodruff's interval for the p-quantile q (already flagged in qflags) of d, from the
 * units' Y (observations <= q) and X (observations). */
static void lbmc_woodruff(const lbmc_pooled *d, double q, unsigned qflags, double *Y, double *X,
                          size_t n, double p, double level, const lbmc_batch_rule *rule, double *wy,
                          double *wx, lbmc_interval *out)
{
  lbmc_interval band;
  unsigned bflags = 0;
  if (rule) {
    n = lbmc_batch_merge(Y, X, n, 1, rule, wy, wx, &bflags);
    Y = wy;
    X = wx;
  }
  lbmc_proportion_interval(Y, X, n, 1, level, d->trials, &band); /* the band for F(q) */
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
  if (lbmc_band_unreliable(&band, p)) {
    out->flags |= LBMC_IV_UNRELIABLE;
    return;
  }
  lbmc_woodruff_lower(d, band.lower, out);
  lbmc_woodruff_upper(d, band.upper, out);
  if (!isnan(out->upper)) {
    out->half_width = fmax(q - out->lower, out->upper - q);
    if (!(out->flags & LBMC_IV_LOWER_OPEN))
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
  lbmc_pooled d = {lbmc_dhist_q, pooled, (double)lbmc_dhist_total(pooled), 1};
  double q, *Y = work, *X = work + nunits;
  unsigned qflags = lbmc_dhist_quantile(pooled, p, &q);
  for (size_t i = 0; i < nunits; i++) {
    Y[i] = qflags ? 0 : lbmc_dhist_count_le(units[i], q);
    X[i] = (double)lbmc_dhist_total(units[i]);
  }
  lbmc_woodruff(&d, q, qflags, Y, X, nunits, p, level, rule, work + 2 * nunits, work + 3 * nunits,
                out);
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
  lbmc_pooled d = {lbmc_mix_q, &ctx, 0, 0};
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
  lbmc_woodruff(&d, q, qflags, Y, X, nunits, p, level, rule, X + nunits, X + 2 * nunits, out);
}
