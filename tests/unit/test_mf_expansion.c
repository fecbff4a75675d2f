/* The refined mean field around the mean-field start (src/engine/mf_expansion.c) against the
 * analysis package's refined_mf.refined_stationary (the same quantities in tail
 * coordinates, computed with the complex step and scipy's Lyapunov solver; the values below
 * from analysis/lbmc_analysis/limits, with-replacement sampling), and against exact values:
 * random routing keeps the queues independent M/M/1 queues, whose drift is linear (no
 * Hessian term: D0 = 0 exactly), with n Var = rho / (1 - rho)^2 and integrated
 * autocorrelation time (1 + rho) / (1 - rho)^2. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/mf_expansion.h"
#include "unit.h"

#define REL 1e-6

/* D0 < -1e299: no reference value for D0 (checked by Little and the path only). */
static void mfx_case(const ut_occ_conf *c, double D0, double W, double tau, const char *what)
{
  lbmc_model *m = ut_occ_model(c);
  lbmc_mf_expansion x;
  double area = 0;
  CU_ASSERT_FATAL(lbmc_mf_expansion_compute(m, &x) == LBMC_SUCCESS);
  UT_CHECK(x.ok, "%s: %s", what, x.note);
  if (x.ok) {
    UT_CHECK(D0 < -1e299 || fabs(x.D0 - D0) <= REL * fmax(fabs(D0), 1),
             "%s: D0 %.12g, expected %.12g", what, x.D0, D0);
    UT_CHECK(fabs(x.W - W) <= REL * W, "%s: g'Wg %.12g, expected %.12g", what, x.W, W);
    UT_CHECK(fabs(x.tau - tau) <= REL * tau, "%s: tau_N %.12g, expected %.12g", what, x.tau, tau);
    UT_CHECK(x.lyap_resid < 1e-10, "%s: Lyapunov residual %.3g", what, x.lyap_resid);
    UT_CHECK(fabs(x.ge[0] + x.D0) <= 1e-9 * fmax(1, fabs(x.D0)), "%s: the path starts at -D0",
             what);
    for (size_t i = 1; i <= x.steps; i++) area += 0.5 * x.dt * (x.ge[i - 1] + x.ge[i]);
    UT_CHECK(fabs(area - x.I0) <= 1e-3 * fmax(fabs(x.I0), fabs(x.D0) * x.slowest) + 1e-5,
             "%s: the path's integral %.9g against the closed form %.9g", what, area, x.I0);
    /* Little's law at both orders: E[sojourn] = E[customers per server] / lambda */
    UT_CHECK(fabs(x.f[LBMC_MF_SOJOURN].value - x.customers / c->lambda) < 1e-7 * x.customers &&
                 fabs(x.f[LBMC_MF_SOJOURN].D - x.D0 / c->lambda) <= 1e-5 * fmax(1, fabs(x.D0)),
             "%s: sojourn %.12g + %.10g / n against Little's %.12g + %.10g / n", what,
             x.f[LBMC_MF_SOJOURN].value, x.f[LBMC_MF_SOJOURN].D, x.customers / c->lambda,
             x.D0 / c->lambda);
    for (int k = 1; k < LBMC_MF_FUNCTIONALS; k++) {
      double a = 0, scale = fabs(x.f[k].I0) + fabs(x.f[k].path[0]) * x.slowest;
      for (size_t i = 1; i <= x.steps; i++) a += 0.5 * x.dt * (x.f[k].path[i - 1] + x.f[k].path[i]);
      UT_CHECK(fabs(a - x.f[k].I0) <= 2e-3 * scale + 1e-5,
               "%s: functional %d: the path's integral %.9g against the closed form %.9g", what, k,
               a, x.f[k].I0);
    }
    fprintf(stderr,
            "%s: d %u D0 %.10g W %.10g tau %.10g I0 %.6g path %.6g slow %.4g steps %zu; sojourn "
            "%.8g + %.8g/n (ratio %.4g, I0 %.5g), p_wait %.8g + %.8g/n (ratio %.4g, I0 %.5g)\n",
            what, x.d, x.D0, x.W, x.tau, x.I0, area, x.slowest, x.steps, x.f[1].value, x.f[1].D,
            x.f[1].ratio, x.f[1].I0, x.f[2].value, x.f[2].D, x.f[2].ratio, x.f[2].I0);
  }
  lbmc_mf_expansion_free(&x);
  lbmc_model_destroy(&m);
}

static void test_expansion_exponential(void)
{
  const ut_occ_conf jsq9 = {
      .n = 1000000, .policy = "jsq(2)", .lambda = 0.9, .sampling = "with_replacement"};
  const ut_occ_conf jsq7 = {
      .n = 1000000, .policy = "jsq(2)", .lambda = 0.7, .sampling = "with_replacement"};
  const ut_occ_conf jsq3 = {
      .n = 1000000, .policy = "jsq(3)", .lambda = 0.95, .sampling = "with_replacement"};
  const ut_occ_conf rnd = {.n = 1000, .policy = "random", .lambda = 0.8};
  mfx_case(&jsq9, 3.9864269872, 10.3751779294, 13.0778386542, "jsq(2) 0.9");
  mfx_case(&jsq7, 0.849065537696, 2.25693402487, 3.87331515042, "jsq(2) 0.7");
  mfx_case(&jsq3, 9.00588623723, 15.6993562242, 18.0359299972, "jsq(3) 0.95");
  mfx_case(&rnd, 0, 0.8 / 0.04, 1.8 / 0.04, "random 0.8 (M/M/1)");
}

/* Phase-type service: the exponential law written with two phases (the phase-type layout,
 * levels x phases, and its phase changes, completions and joins) gives the exponential
 * values; H2 scv 5 runs (its values are the table's in docs/occupancy.md). */
static void test_expansion_ph(void)
{
  const ut_occ_conf two = {.n = 1000000,
                           .policy = "jsq(2)",
                           .lambda = 0.9,
                           .sampling = "with_replacement",
                           .service = "ph:alpha=[0.5,0.5],T=[[-1.5,0.5],[0.5,-1.5]]"};
  /* W and tau_N of the counts by level and phase from analysis/lbmc_analysis/limits/pairs.py
   * (_PhaseChain at the cavity solution, n -> inf: with-replacement sampling here) */
  const ut_occ_conf h2 = {.n = 1000000000,
                          .policy = "jsq(2)",
                          .lambda = 0.9,
                          .sampling = "with_replacement",
                          .service = "hyperexponential:scv=5"};
  mfx_case(&two, 3.9864269872, 10.3751779294, 13.0778386542, "jsq(2) 0.9, exponential as PH");
  mfx_case(&h2, -1e300, 62.51908207, 35.05994566, "jsq(2) 0.9, H2 scv 5");
}

int ut_register_mf_expansion(void)
{
  static const ut_test tests[] = {
      {"refined mean field: exponential service", test_expansion_exponential},
      {"refined mean field: phase-type service", test_expansion_ph},
      {NULL, NULL}};
  return ut_add_suite("mean-field expansion", tests);
}
