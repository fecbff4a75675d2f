/* lbmc-pace-fit: the pace model of lbmc run's ETA (src/run/pace.h) on synthetic batch
 * timings, no clock. Timings a k + b x exactly (a few large units, then many tiny ones,
 * as the costliest-first schedule finishes them): the fit finds a and b, and the ETA is
 * the time of the work left, where the proportional model (a = 0) says almost nothing is
 * left. Controls: units of one size (a and b not separable), a spread of large units
 * with no fixed cost under +-10% noise (a not told from 0), a negative slope, units of no work, no
 * data. */
#include <math.h>
#include <stdio.h>

#include "../job/expect.h"
#include "run/pace.h"

static int near(double x, double want, double rel) { return fabs(x - want) <= rel * fabs(want); }

/* Units of 1.2e6 work (3 of them, one at a time), then batches of 4 tiny units of 200
 * work each: 2 ms a unit plus 1e-7 s a unit of work. */
static void fixed_cost(void)
{
  const double a0 = 2e-3, b0 = 1e-7, big = 1.2e6, tiny = 200;
  lbmc_pace_fit f = {0};
  double a, b, el = 0, eta, prop, left_units = 4000, left_work = 4000 * tiny, truth;
  for (int i = 0; i < 3; i++) {
    lbmc_pace_fit_add(&f, 1, big * (1 + 0.5 * i), a0 + b0 * big * (1 + 0.5 * i));
    el += a0 + b0 * big * (1 + 0.5 * i);
  }
  for (int i = 0; i < 25; i++) {
    lbmc_pace_fit_add(&f, 4, 4 * tiny, 4 * a0 + b0 * 4 * tiny);
    el += 4 * a0 + b0 * 4 * tiny;
  }
  EXPECT(lbmc_pace_fit_solve(&f, &a, &b) == 1);
  EXPECT(near(a, a0, 1e-6));
  EXPECT(near(b, b0, 1e-6));
  /* one rank: the elapsed time is the batches' */
  truth = a0 * left_units + b0 * left_work;
  eta = lbmc_pace_eta(a, b, el, left_units, left_work, 3 + 100, 4.5 * big + 100 * tiny);
  prop = lbmc_pace_eta(0, b, el, left_units, left_work, 3 + 100, 4.5 * big + 100 * tiny);
  EXPECT(near(eta, truth, 1e-6));
  EXPECT(prop < 0.1 * truth); /* the model without the fixed cost: over 10 times short */
  fprintf(stderr, "fixed cost: a %.6g b %.6g; ETA %.4g s (true %.4g s, proportional %.4g s)\n", a,
          b, eta, truth, prop);
}

/* Every unit of one size: a and b cannot be told apart, the proportional model. */
static void one_size(void)
{
  lbmc_pace_fit f = {0};
  double a, b;
  for (int i = 0; i < 10; i++) lbmc_pace_fit_add(&f, 1, 1e5, 0.01 + 1e-3 * (i % 3));
  EXPECT(lbmc_pace_fit_solve(&f, &a, &b) == 1);
  EXPECT(a == 0);
  EXPECT(near(b, (0.01 + 1e-3) / 1e5, 0.05));
  EXPECT(lbmc_pace_eta(a, b, 10, 5, 5e5, 10, 1e6) == 10 * 5e5 / 1e6);
}

/* Large units of spread sizes, no fixed cost, +-10% noise: the intercept the least
 * squares find is within its noise, and a stays 0. */
static void noise_only(void)
{
  lbmc_pace_fit f = {0};
  double a, b;
  const double noise[] = {1.1, 0.9, 1.05, 0.92, 1.08, 0.95};
  for (int i = 0; i < 6; i++) {
    const double x = 1e6 * (1 + i);
    lbmc_pace_fit_add(&f, 1, x, 1e-6 * x * noise[i]);
  }
  EXPECT(lbmc_pace_fit_solve(&f, &a, &b) == 1);
  EXPECT(a == 0);
  EXPECT(near(b, 1e-6, 0.1));
}

/* More work took less time: the fit keeps a >= 0 and b >= 0. Units with no work (a
 * point with nothing to simulate): the time per unit. */
static void no_slope(void)
{
  lbmc_pace_fit f = {0}, g = {0};
  double a, b;
  for (int i = 0; i < 4; i++) lbmc_pace_fit_add(&f, 1, 1 + i, 3 - 0.8 * i);
  EXPECT(lbmc_pace_fit_solve(&f, &a, &b) == 1);
  EXPECT(a >= 0 && b >= 0);
  for (int i = 0; i < 3; i++) lbmc_pace_fit_add(&g, 2, 0, 0.02);
  EXPECT(lbmc_pace_fit_solve(&g, &a, &b) == 1);
  EXPECT(b == 0 && near(a, 0.01, 1e-12));
}

/* Nothing finished: no model, no ETA. */
static void empty(void)
{
  lbmc_pace_fit f = {0};
  double a = 1, b = 1;
  EXPECT(lbmc_pace_fit_solve(&f, &a, &b) == 0);
  EXPECT(a == 0 && b == 0);
  EXPECT(isnan(lbmc_pace_eta(a, b, 5, 10, 100, 0, 0)));
}

int main(void)
{
  fixed_cost();
  one_size();
  noise_only();
  no_slope();
  empty();
  if (failures) fprintf(stderr, "%d failures\n", failures);
  return failures != 0;
}
