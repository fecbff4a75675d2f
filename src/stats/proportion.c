/* Intervals for proportions that stay inside [0, 1]: Clopper-Pearson, Wilson, the
 * one-sided bound when no event was seen, and the Korn-Graubard interval for a
 * proportion estimated from correlated units (replicas or batches). See estimators.h
 * for the formulas and their sources. */
#include <gsl/gsl_cdf.h>
#include <math.h>

#include "estimators.h"

double lbmc_zero_event_bound(double n, double level)
{
  if (!(n > 0)) return 1.0;
  return -expm1(log1p(-level) / n); /* 1 - (1 - level)^(1/n), accurate for large n */
}

/* Solve I_u(a, b) = P for u in (0, 1) by bisection on log u (I from GSL's regularized
 * incomplete beta, robust for every a, b used here; GSL's own inverse can fail to
 * converge, or loop, for a small and b large). */
static double lbmc_beta_low_quantile(double P, double a, double b)
{
  double lo = -746, hi = 0; /* log u: below exp(-746) = 0 in double */
  for (int it = 0; it < 120 && hi - lo > 1e-15 * fabs(lo + hi); it++) {
    double mid = 0.5 * (lo + hi);
    if (gsl_cdf_beta_P(exp(mid), a, b) < P)
      lo = mid;
    else
      hi = mid;
  }
  return exp(0.5 * (lo + hi));
}

/* Beyond this smaller parameter, Beta quantiles come from the Cornish-Fisher expansion:
 * there GSL's error (about 1e-16 (a + b) of the half-width, below) passes 1e-6 and grows,
 * while the expansion's falls below 1e-10; below it both agree to 1e-6 or better, and the
 * exact computation is kept. */
#define LBMC_BETA_ASYMPTOTIC 1e10

/* The P-quantile of Beta(a, b) for large a and b: the Cornish-Fisher expansion to the
 * skewness term, mean + sd (z + skew (z^2 - 1) / 6); its relative error on the distance
 * from the mean is O(1 / min(a, b)).
 * Source: E. A. Cornish and R. A. Fisher, Rev. Inst. Int. Statist. 5 (1937) 307-320; the
 * moments of the Beta law in N. L. Johnson, S. Kotz and N. Balakrishnan, Continuous
 * Univariate Distributions vol. 2, Wiley 1995, ch. 25. */
static double lbmc_beta_quantile_cf(double P, double a, double b)
{
  const double s = a + b, z = gsl_cdf_ugaussian_Pinv(P);
  const double sd = sqrt(a / s * (b / s) / (s + 1));
  const double skew = 2 * (b - a) * sqrt(s + 1) / ((s + 2) * sqrt(a) * sqrt(b));
  const double d = sd * (z + skew * (z * z - 1) / 6);
  /* the mean a/s or 1 - b/s, whichever keeps its relative precision near its end */
  return fmin(1.0, fmax(0.0, a <= b ? a / s + d : 1 - (b / s - d)));
}

/** The P-quantile of Beta(a, b), 0 < P < 1: through the lower tail of Beta(a, b) when
 *  P <= 1/2, else as 1 - the (1 - P)-quantile of Beta(b, a), so that both ends keep their
 *  relative precision. GSL's incomplete beta forms its prefactor as
 *  exp(a ln u + b ln(1 - u) - ln B(a, b)), terms of size a + b that cancel: its relative
 *  error grows like 1e-16 (a + b) (1e-4 at 1e12 customers; ends on the wrong side of the
 *  estimate from 1e16), so large parameters take the asymptotic expansion, whose error
 *  falls as they grow. */
static double lbmc_beta_quantile(double P, double a, double b)
{
  if (fmin(a, b) >= LBMC_BETA_ASYMPTOTIC) return lbmc_beta_quantile_cf(P, a, b);
  if (P <= 0.5) return lbmc_beta_low_quantile(P, a, b);
  return 1 - lbmc_beta_low_quantile(1 - P, b, a);
}

void lbmc_clopper_pearson(double x, double n, double level, double *lower, double *upper)
{
  double a = 0.5 * (1 - level);
  *lower = x > 0 ? lbmc_beta_quantile(a, x, n - x + 1) : 0.0;
  *upper = x < n ? lbmc_beta_quantile(1 - a, x + 1, n - x) : 1.0;
}

void lbmc_wilson(double x, double n, double level, double *lower, double *upper)
{
  double z = gsl_cdf_ugaussian_Pinv(0.5 + 0.5 * level), z2 = z * z;
  double center = (x + 0.5 * z2) / (n + z2);
  double half = z / (n + z2) * sqrt(x * (n - x) / n + 0.25 * z2);
  *lower = fmax(0.0, center - half);
  *upper = fmin(1.0, center + half);
}

/* No event (or only events) among the opportunities: a one-sided bound. */
static void lbmc_proportion_extreme(lbmc_interval *out, double N, double level, int trials, int all)
{
  double b = trials ? lbmc_zero_event_bound(N, level) : NAN;
  out->std_err = out->half_width = NAN;
  if (all) {
    out->flags |= LBMC_IV_ALL_OBSERVED;
    out->lower = 1 - b;
    out->upper = 1;
  } else {
    out->flags |= LBMC_IV_NONE_OBSERVED;
    out->lower = 0;
    out->upper = b;
    out->upper_bound = b;
  }
}

void lbmc_ratio_acc_proportion(const lbmc_ratio_acc *a, double level, int trials,
                               lbmc_interval *out)
{
  const double N = a->sx, Y = a->sy; /* the opportunities and the events, summed in order */
  double p, v, neff, z, t, lo, hi;
  lbmc_ratio_acc_interval(a, level, out);
  if (out->flags & LBMC_IV_EMPTY) return;
  p = out->estimate;
  if (Y <= 0 || (trials ? Y >= N : p >= 1)) {
    lbmc_proportion_extreme(out, N, level, trials, Y > 0);
    return;
  }
  if (out->flags & LBMC_IV_NO_INTERVAL) return;
  v = out->std_err * out->std_err;
  z = gsl_cdf_ugaussian_Pinv(0.5 + 0.5 * level);
  t = gsl_cdf_tdist_Pinv(0.5 + 0.5 * level, out->dof);
  neff = v > 0 ? p * (1 - p) / v * (z / t) * (z / t) : INFINITY;
  if (trials && neff > N) neff = N;
  if (!(neff > 0) || isinf(neff)) { /* time fractions equal in every unit: no spread to use */
    out->flags |= LBMC_IV_NO_INTERVAL;
    out->lower = out->upper = out->half_width = NAN;
    return;
  }
  lbmc_clopper_pearson(p * neff, neff, level, &lo, &hi);
  /* the exact interval contains p; what rounding of the ends leaves outside is p */
  out->lower = fmin(lo, p);
  out->upper = fmax(hi, p);
  out->half_width = fmax(p - out->lower, out->upper - p);
}

void lbmc_proportion_interval(const double *y, const double *x, size_t units, size_t stride,
                              double level, int trials, lbmc_interval *out)
{
  lbmc_ratio_acc a;
  lbmc_ratio_acc_arrays(&a, y, x, units, stride);
  lbmc_ratio_acc_proportion(&a, level, trials, out);
}
