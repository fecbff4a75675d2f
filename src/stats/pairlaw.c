/* The joint law of two servers and its deviation from independence from independent
 * units: pooled estimates, the correction of the product of the marginals, linear
 * functionals with delta-method intervals, and the total-variation distance by
 * cross-fitting (pairlaw.h; docs/model.md, "Pair statistics"). */
#include "pairlaw.h"

#include <math.h>
#include <string.h>

void lbmc_pair_fit_units(const lbmc_pair_data *d, lbmc_pair_fit *f)
{
  const size_t C = d->C, CC = C * C, m = f->to - f->from;
  double Lsum = 0;
  for (size_t u = f->from; u < f->to; u++) Lsum += d->L[u];
  f->Lsum = Lsum;
  f->Lbar = m ? Lsum / (double)m : NAN;
  memset(f->P, 0, sizeof *f->P * CC);
  memset(f->p, 0, sizeof *f->p * C);
  memset(f->q, 0, sizeof *f->q * C);
  for (size_t u = f->from; u < f->to; u++) {
    for (size_t e = 0; e < CC; e++) f->P[e] += d->Y[u * CC + e];
    for (size_t a = 0; a < C; a++) f->p[a] += d->F[u * C + a], f->q[a] += d->H[u * C + a];
  }
  for (size_t e = 0; e < CC; e++)
    f->P[e] = Lsum > 0 && d->pairs > 0 ? f->P[e] / (d->pairs * Lsum) : NAN;
  for (size_t a = 0; a < C; a++) {
    f->p[a] = Lsum > 0 ? f->p[a] / (d->N1 * Lsum) : NAN;
    f->q[a] = Lsum > 0 ? f->q[a] / (d->N2 * Lsum) : NAN;
  }
  if (m < 2 || !(Lsum > 0) || !(d->pairs > 0)) {
    for (size_t e = 0; e < CC; e++) f->D[e] = NAN;
    return;
  }
  /* D = P - p q + m/(m-1) sum_u (F_u/N1 - p L_u)(H_u/N2 - q L_u) / Lsum^2 */
  for (size_t a = 0; a < C; a++)
    for (size_t b = 0; b < C; b++) f->D[a * C + b] = f->P[a * C + b] - f->p[a] * f->q[b];
  for (size_t u = f->from; u < f->to; u++) {
    const double *F = d->F + u * C, *H = d->H + u * C, L = d->L[u];
    const double k = (double)m / (double)(m - 1) / (Lsum * Lsum);
    for (size_t a = 0; a < C; a++) {
      const double ep = k * (F[a] / d->N1 - f->p[a] * L);
      for (size_t b = 0; b < C; b++) f->D[a * C + b] += ep * (H[b] / d->N2 - f->q[b] * L);
    }
  }
}

/* The checks of a functional over f's units: 1 (and out filled) if it has no interval. */
static int lbmc_pair_none(const lbmc_pair_data *d, const lbmc_pair_fit *f, lbmc_interval *out)
{
  const size_t m = f->to - f->from;
  if (!(f->Lsum > 0) || !(d->pairs > 0)) {
    lbmc_iv_point(out, NAN, (long)m, LBMC_IV_EMPTY);
    return 1;
  }
  if (m < 2) {
    lbmc_iv_point(out, NAN, (long)m, LBMC_IV_NO_INTERVAL);
    return 1;
  }
  return 0;
}

void lbmc_pair_linear(const lbmc_pair_data *d, const lbmc_pair_fit *f, const double *W,
                      double level, lbmc_interval *out)
{
  const size_t C = d->C, CC = C * C, m = f->to - f->from;
  double est = 0, z2 = 0, zsum = 0;
  if (lbmc_pair_none(d, f, out)) return;
  for (size_t e = 0; e < CC; e++) est += W[e] ? W[e] * f->D[e] : 0;
  /* one pass over the units: residual z_u, accumulated as a sum and a sum of squares */
  for (size_t u = f->from; u < f->to; u++) {
    const double *Y = d->Y + u * CC, *F = d->F + u * C, *H = d->H + u * C, L = d->L[u];
    double z = 0;
    for (size_t a = 0; a < C; a++) {
      const double ep = F[a] / d->N1 - f->p[a] * L;
      for (size_t b = 0; b < C; b++) {
        const double w = W[a * C + b];
        if (!w) continue;
        z += w * ((Y[a * C + b] / d->pairs - f->P[a * C + b] * L) - f->q[b] * ep -
                  f->p[a] * (H[b] / d->N2 - f->q[b] * L));
      }
    }
    z /= f->Lbar;
    zsum += z;
    z2 += z * z;
  }
  lbmc_iv_point(out, est, (long)m, 0);
  lbmc_iv_t(out, sqrt(fmax(0, z2 - zsum * zsum / (double)m) / ((double)m * (double)(m - 1))),
            (double)(m - 1), level);
}

void lbmc_pair_entry(const lbmc_pair_data *d, const lbmc_pair_fit *f, size_t a, size_t b,
                     double level, lbmc_interval *out)
{
  const size_t C = d->C, CC = C * C, m = f->to - f->from;
  const size_t e = a * C + b;
  double z2 = 0, zsum = 0;
  if (lbmc_pair_none(d, f, out)) return;
  for (size_t u = f->from; u < f->to; u++) {
    const double L = d->L[u];
    const double z = ((d->Y[u * CC + e] / d->pairs - f->P[e] * L) -
                      f->q[b] * (d->F[u * C + a] / d->N1 - f->p[a] * L) -
                      f->p[a] * (d->H[u * C + b] / d->N2 - f->q[b] * L)) /
                     f->Lbar;
    zsum += z;
    z2 += z * z;
  }
  lbmc_iv_point(out, f->D[e], (long)m, 0);
  lbmc_iv_t(out, sqrt(fmax(0, z2 - zsum * zsum / (double)m) / ((double)m * (double)(m - 1))),
            (double)(m - 1), level);
}

void lbmc_pair_joint(const lbmc_pair_data *d, const lbmc_pair_fit *f, size_t a, size_t b,
                     double level, double *work, lbmc_interval *out)
{
  const size_t C = d->C, m = f->to - f->from;
  for (size_t u = 0; u < m; u++) {
    work[2 * u] = d->Y[(f->from + u) * C * C + a * C + b];
    work[2 * u + 1] = d->pairs * d->L[f->from + u];
  }
  lbmc_proportion_interval(work, work + 1, m, 2, level, 0, out);
}

void lbmc_pair_tv(const lbmc_pair_data *d, const lbmc_pair_fit *fa, const lbmc_pair_fit *fb,
                  double level, double *work, lbmc_interval *out)
{
  const size_t CC = d->C * d->C;
  const lbmc_pair_fit *fit[2] = {fa, fb};
  lbmc_interval half[2];
  if (fa->to - fa->from < 2 || fb->to - fb->from < 2) {
    lbmc_iv_point(out, NAN, (long)(fb->to - fa->from), LBMC_IV_NO_INTERVAL);
    return;
  }
  for (int h = 0; h < 2; h++) { /* signs of one half, differences of the other */
    for (size_t e = 0; e < CC; e++) {
      const double s = fit[h]->D[e];
      work[e] = s > 0 ? 0.5 : s < 0 ? -0.5 : 0;
    }
    lbmc_pair_linear(d, fit[1 - h], work, level, &half[h]);
    if (half[h].flags) {
      lbmc_iv_point(out, NAN, (long)(fb->to - fa->from), half[h].flags);
      return;
    }
  }
  lbmc_iv_point(out, (half[0].estimate + half[1].estimate) / 2, (long)(fb->to - fa->from), 0);
  lbmc_iv_t(out, (half[0].std_err + half[1].std_err) / 2, fmin(half[0].dof, half[1].dof), level);
}
