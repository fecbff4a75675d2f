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
#include "engine/occ_meanfield.h"
#include "lbmc/metrics.h"
#include "system/policy.h"
#include "system/system.h"
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
    for (size_t k = 1; k < x.nf; k++) {
      double a = 0, scale = fabs(x.f[k].I0) + fabs(x.f[k].path[0]) * x.slowest;
      for (size_t i = 1; i <= x.steps; i++) a += 0.5 * x.dt * (x.f[k].path[i - 1] + x.f[k].path[i]);
      UT_CHECK(fabs(a - x.f[k].I0) <= 2e-3 * scale + 1e-5,
               "%s: functional %zu: the path's integral %.9g against the closed form %.9g", what, k,
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

/* One metric entry's functional of x (a run of J pools and 10 tail levels): its value at x*
 * and its 1/n coefficient D against references (from the analysis package's
 * refined_stationary, in tail coordinates); returns 1 when both agree. */
#define MFX_RUN_K 10
static int mfx_entry_agrees(const lbmc_mf_expansion *x, int metric, size_t e, double value,
                            double D)
{
  const int k = lbmc_mf_expansion_entry(x, metric, e, (int)x->J, MFX_RUN_K);
  if (k < 0) return 0;
  return fabs(x->f[k].value - value) <= 1e-8 * fmax(1, fabs(value)) &&
         fabs(x->f[k].D - D) <= 1e-6 * fmax(1, fabs(D));
}

static void mfx_entry(const lbmc_mf_expansion *x, int metric, size_t e, double value, double D,
                      const char *what)
{
  const int k = lbmc_mf_expansion_entry(x, metric, e, (int)x->J, MFX_RUN_K);
  char name[64];
  lbmc_metric_entry_name(metric, (long)e, (int)x->J, MFX_RUN_K, name, sizeof name);
  UT_CHECK(k >= 0, "%s: %s has no functional", what, name);
  if (k >= 0)
    UT_CHECK(mfx_entry_agrees(x, metric, e, value, D),
             "%s: %s %.12g + %.10g / n, expected %.12g + %.10g / n", what, name, x->f[k].value,
             x->f[k].D, value, D);
}

static lbmc_model *mfx_compute(const ut_occ_conf *c, lbmc_mf_expansion *x, const char *what)
{
  lbmc_model *m = ut_occ_model(c);
  CU_ASSERT_FATAL(lbmc_mf_expansion_compute(m, x) == LBMC_SUCCESS);
  UT_CHECK(x->ok, "%s: %s", what, x->note);
  return m;
}

/* The functionals of every metric entry that is a function of the state: tails, per-pool
 * queues, utilization, workload, shares, throughput, p_block, p_wait; each against the
 * analysis package's refined mean field (x* and V of refined_stationary in tail
 * coordinates; p_block = x_B^2 and p_wait = x_1^2 - x_B^2 for jsq(2) with replacement, so
 * D = 2 x V + W at those levels), with a control: the two-pool model with its pools' speeds
 * swapped must not match. */
static void test_expansion_functionals(void)
{
  static const double x1[6] = {
      0.9, 0.729, 0.4782969, 0.20589113209464913, 0.03815204244769463, 0.0013100205086376238};
  static const double v1[6] = {0,
                               0.13063786976479605,
                               0.6586071623499418,
                               1.5520316472364604,
                               1.405352341523994,
                               0.237444238739038};
  static const double x2[2][6] = {
      {0.73483609010496, 0.4432753322787717, 0.19088129389034747, 0.045266632337881085,
       0.003602507623164251, 3.730417768607016e-05},
      {0.9303278197900803, 0.7771118435326196, 0.5118443275502477, 0.20576071474168037,
       0.030603822142753076, 0.0006274354422606687}};
  static const double v2[2][6] = {{0.028345365544379962, 0.2230471650931342, 0.5128248460248569,
                                   0.5351215702397304, 0.18316620369733794, 0.009296493128683737},
                                  {-0.05669073109645336, -0.053903909649624486, 0.3595289062821307,
                                   1.2782456216220006, 1.1227041925593317, 0.13735608560830234}};
  const ut_occ_conf one = {
      .n = 1000000, .policy = "jsq(2)", .lambda = 0.9, .sampling = "with_replacement"};
  static const double beta[2] = {0.5, 0.5}, mu[2] = {1.5, 0.75}, swapped[2] = {0.75, 1.5};
  const ut_occ_conf two = {.n = 1000000,
                           .J = 2,
                           .beta = beta,
                           .mu = mu,
                           .policy = "jsq(2)",
                           .lambda = 0.9,
                           .sampling = "with_replacement"};
  ut_occ_conf sw = two;
  static const long buf5[1] = {5};
  const ut_occ_conf blk = {.n = 1000000,
                           .buffer = buf5,
                           .policy = "jsq(2)",
                           .lambda = 0.95,
                           .sampling = "with_replacement"};
  lbmc_mf_expansion x;
  lbmc_model *m = mfx_compute(&one, &x, "jsq(2) 0.9");
  double q = 0, dq = 0;
  if (x.ok) {
    for (int k = 0; k < 6; k++) {
      mfx_entry(&x, LBMC_M_TAIL, (size_t)k, x1[k], v1[k], "jsq(2) 0.9");
      q += x1[k], dq += v1[k];
    }
    mfx_entry(&x, LBMC_M_UTILIZATION, 0, x1[0], v1[0], "jsq(2) 0.9");
    mfx_entry(&x, LBMC_M_MEAN_QUEUE, 0, x.customers, x.D0, "jsq(2) 0.9");
    mfx_entry(&x, LBMC_M_MEAN_WORKLOAD, 0, x.customers, x.D0, "jsq(2) 0.9");
    mfx_entry(&x, LBMC_M_THROUGHPUT, 0, 0.9, 0, "jsq(2) 0.9");
    mfx_entry(&x, LBMC_M_ADMITTED_SHARE, 0, 1, 0, "jsq(2) 0.9");
    mfx_entry(&x, LBMC_M_P_BLOCK, 0, 0, 0, "jsq(2) 0.9");
    mfx_entry(&x, LBMC_M_MEAN_WAIT, 0, x.customers / 0.9 - 1, x.D0 / 0.9, "jsq(2) 0.9");
    for (uint32_t k = 7; k <= x.K; k++) { /* the levels beyond the references */
      const int f = lbmc_mf_expansion_entry(&x, LBMC_M_TAIL, k - 1, 1, MFX_RUN_K);
      if (f >= 0) q += x.f[f].value, dq += x.f[f].D;
    }
    UT_CHECK(
        fabs(q - x.customers) < 1e-9 && fabs(dq - x.D0) < 1e-5,
        "jsq(2) 0.9: the tails' sums %.12g + %.10g / n against the customers' %.12g + %.10g / n", q,
        dq, x.customers, x.D0);
    UT_CHECK(lbmc_mf_expansion_entry(&x, LBMC_M_TAIL, MFX_RUN_K - 1, 1, MFX_RUN_K) == LBMC_MF_NIL,
             "jsq(2) 0.9: tail[1][%d] is beyond the levels kept (%u)", MFX_RUN_K, x.K);
    UT_CHECK(lbmc_mf_expansion_entry(&x, LBMC_M_SOJOURN_QUANTILES, 0, 1, MFX_RUN_K) ==
                     LBMC_MF_NONE &&
                 lbmc_mf_expansion_entry(&x, LBMC_M_MESSAGES_PER_ARRIVAL, 0, 1, MFX_RUN_K) ==
                     LBMC_MF_NONE,
             "jsq(2) 0.9: quantiles and messages have no functional");
  }
  lbmc_mf_expansion_free(&x);
  lbmc_model_destroy(&m);

  m = mfx_compute(&two, &x, "two pools");
  if (x.ok) {
    double cust = 0, dcust = 0;
    for (size_t j = 0; j < 2; j++) {
      double qj = 0, dj = 0;
      for (int k = 0; k < 6; k++) {
        mfx_entry(&x, LBMC_M_TAIL, j * MFX_RUN_K + (size_t)k, x2[j][k], v2[j][k], "two pools");
        qj += x2[j][k], dj += v2[j][k];
      }
      mfx_entry(&x, LBMC_M_UTILIZATION, j, x2[j][0], v2[j][0], "two pools");
      for (uint32_t k = 7; k <= x.K; k++) { /* the levels beyond the references */
        const int f = lbmc_mf_expansion_entry(&x, LBMC_M_TAIL, j * MFX_RUN_K + k - 1, 2, MFX_RUN_K);
        if (f >= 0) qj += x.f[f].value, dj += x.f[f].D;
      }
      cust += beta[j] * qj, dcust += beta[j] * dj;
      UT_CHECK(fabs(x.f[lbmc_mf_expansion_entry(&x, LBMC_M_MEAN_QUEUE, j, 2, MFX_RUN_K)].D - dj) <
                   1e-5,
               "two pools: mean_queue[%zu]'s D against the tails' sum %.10g", j + 1, dj);
    }
    UT_CHECK(fabs(x.customers - cust) < 1e-7 && fabs(x.D0 - dcust) < 1e-5,
             "two pools: customers %.12g + %.10g / n, expected %.12g + %.10g / n", x.customers,
             x.D0, cust, dcust);
  }
  lbmc_mf_expansion_free(&x);
  lbmc_model_destroy(&m);

  sw.mu = swapped; /* control: the same references must fail with the pools' speeds swapped */
  m = mfx_compute(&sw, &x, "two pools swapped");
  if (x.ok) {
    int agree = 0;
    for (size_t j = 0; j < 2; j++)
      for (int k = 1; k < 5; k++)
        agree += mfx_entry_agrees(&x, LBMC_M_TAIL, j * MFX_RUN_K + (size_t)k, x2[j][k], v2[j][k]);
    UT_CHECK(agree == 0, "two pools, speeds swapped: %d tails still match the references", agree);
  }
  lbmc_mf_expansion_free(&x);
  lbmc_model_destroy(&m);

  m = mfx_compute(&blk, &x, "buffer 5");
  if (x.ok) {
    mfx_entry(&x, LBMC_M_P_BLOCK, 0, 0.01307420343616875, 0.3536746441510024, "buffer 5");
    mfx_entry(&x, LBMC_M_P_WAIT, 0, 0.8659811280144766, -0.9021105056732621, "buffer 5");
    mfx_entry(&x, LBMC_M_MEAN_QUEUE, 0, 2.870436233233309, -4.107884918899768, "buffer 5");
    mfx_entry(&x, LBMC_M_THROUGHPUT, 0, 0.95 * (1 - 0.01307420343616875),
              -0.95 * 0.3536746441510024, "buffer 5");
    mfx_entry(&x, LBMC_M_P_WAIT_OR_BLOCK, 0, 0.8659811280144766 + 0.01307420343616875,
              -0.9021105056732621 + 0.3536746441510024, "buffer 5");
  }
  lbmc_mf_expansion_free(&x);
  lbmc_model_destroy(&m);
}

/* The mean-field point is solved once per set-up model and kept (the engines' start and the
 * verdict's expansion): a second solve is the same bit for bit; a duplicate does not share
 * it, and a model set up again with another lambda solves its own (control: the kept point
 * of lambda 0.9 must not come back). */
static int mfx_same_point(const lbmc_occ_mf_point *a, const lbmc_occ_mf_point *b)
{
  return a->settled == b->settled && a->J == b->J && a->levels == b->levels && a->ph == b->ph &&
         a->s && b->s && memcmp(a->s, b->s, sizeof *a->s * a->J * a->levels) == 0 &&
         memcmp(&a->customers, &b->customers, sizeof a->customers) == 0;
}

static void test_meanfield_kept(void)
{
  const ut_occ_conf c9 = {.n = 10000, .policy = "jsq(2)", .lambda = 0.9};
  const ut_occ_conf c8 = {.n = 10000, .policy = "jsq(2)", .lambda = 0.8};
  lbmc_model *m = ut_occ_model(&c9), *m8 = ut_occ_model(&c8), *dup = NULL;
  lbmc_occ_mf_point a, b, c, d;
  const lbmc_occupancy_ops *ops = m->policy->occupancy;
  CU_ASSERT_FATAL(m->memo != NULL && m->memo->mf_point == NULL);
  CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m, ops, &a) == LBMC_SUCCESS);
  UT_CHECK(m->memo->mf_point != NULL && a.settled, "the solved point is kept with the model");
  CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m, ops, &b) == LBMC_SUCCESS);
  UT_CHECK(mfx_same_point(&a, &b) && a.s != b.s, "the kept point, copied, is the same bit for bit");
  CU_ASSERT_FATAL(lbmc_model_duplicate(m, &dup) == LBMC_SUCCESS);
  UT_CHECK(dup->memo && dup->memo != m->memo && dup->memo->mf_point == NULL,
           "a duplicate does not share the kept point: its own empty memo");
  CU_ASSERT_FATAL(lbmc_model_set_lambda(m, 0.8) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_setup(m) == LBMC_SUCCESS);
  UT_CHECK(m->memo && m->memo->mf_point == NULL, "setting the model up again drops the kept point");
  CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m, ops, &c) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m8, m8->policy->occupancy, &d) == LBMC_SUCCESS);
  UT_CHECK(mfx_same_point(&c, &d) && !mfx_same_point(&a, &c),
           "lambda 0.8 after 0.9: its own point (%.10g customers per server, 0.9's %.10g)",
           c.customers, a.customers);
  lbmc_occ_meanfield_free(&a);
  lbmc_occ_meanfield_free(&b);
  lbmc_occ_meanfield_free(&c);
  lbmc_occ_meanfield_free(&d);
  lbmc_model_destroy(&dup);
  lbmc_model_destroy(&m);
  lbmc_model_destroy(&m8);
}

int ut_register_mf_expansion(void)
{
  static const ut_test tests[] = {
      {"refined mean field: exponential service", test_expansion_exponential},
      {"refined mean field: phase-type service", test_expansion_ph},
      {"refined mean field: every metric's functional", test_expansion_functionals},
      {"mean-field point: solved once per set-up model", test_meanfield_kept},
      {NULL, NULL}};
  return ut_add_suite("mean-field expansion", tests);
}
