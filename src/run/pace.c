/* The pace model of lbmc run (pace.h): a fixed cost per unit plus a cost per unit of
 * work, least squares over the finished batches. */
#include "pace.h"

#include <math.h>

void lbmc_pace_fit_add(lbmc_pace_fit *f, double units, double work, double seconds)
{
  f->n += 1;
  f->kk += units * units;
  f->kx += units * work;
  f->xx += work * work;
  f->ky += units * seconds;
  f->xy += work * seconds;
  f->yy += seconds * seconds;
}

/* The fit of y = a k + b x with both terms: 1 and (*a, *b) when k and x are not in
 * proportion over the batches and a is above LBMC_PACE_Z standard errors, b >= 0;
 * else 0. */
static int lbmc_pace_fit_two(const lbmc_pace_fit *f, double *a, double *b)
{
  const double det = f->kk * f->xx - f->kx * f->kx;
  double rss, var_a;
  if (f->n < LBMC_PACE_MIN_BATCHES || !(det > 1e-9 * f->kk * f->xx)) return 0;
  *a = (f->xx * f->ky - f->kx * f->xy) / det;
  *b = (f->kk * f->xy - f->kx * f->ky) / det;
  rss = fmax(0, f->yy - *a * f->ky - *b * f->xy); /* the residual sum of squares */
  var_a = rss / (f->n - 2) * f->xx / det;
  return *a > LBMC_PACE_Z * sqrt(var_a) && *b >= 0;
}

int lbmc_pace_fit_solve(const lbmc_pace_fit *f, double *a, double *b)
{
  *a = *b = 0;
  if (lbmc_pace_fit_two(f, a, b)) return 1;
  *a = 0;
  *b = f->xx > 0 ? f->xy / f->xx : 0;
  if (*b > 0) return 1;
  *b = 0; /* no work, or a negative slope: the time per unit */
  *a = f->kk > 0 ? fmax(0, f->ky / f->kk) : 0;
  return f->kk > 0 || f->xx > 0;
}

double lbmc_pace_eta(double a, double b, double elapsed, double units_left, double work_left,
                     double units_done, double work_done)
{
  const double done = a * units_done + b * work_done;
  if (a == 0) /* the proportional model, exactly as its ratio */
    return work_done > 0 && b > 0 ? elapsed * work_left / work_done : NAN;
  return done > 0 ? elapsed * (a * units_left + b * work_left) / done : NAN;
}
