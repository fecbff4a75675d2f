/* The lean engine, the workload metric and the per-server mean-field start against
 * exact values and against the other engines. Fixed seeds; every family judged at the
 * Bonferroni level (family error alpha = 0.01) on its Student-t intervals:
 *
 *   equivalence  the lean engine against the general one on a grid of small systems:
 *                every policy (lwl(d) in the lean engine's workload form), every law,
 *                one to three pools, finite and unlimited buffers, one law per pool
 *                where they differ; every metric, differences within the combined
 *                intervals (quantiles: both sides' histogram binning, 1.1% each).
 *   equivalence-control  the same with the lean side at a 3% higher lambda: must fail
 *                (registered WILL_FAIL), showing the comparison's power.
 *   workload     mean_workload (units of requirement, mean 1) on every engine that
 *                applies: M/M/1 rho = 0.7 (occupancy, servers, lean, general):
 *                rho / (1 - rho); M/G/1 (lean, general; Pollaczek-Khinchine, the
 *                time-average work at unit speed E[V] = lambda E[S^2] / (2 (1 - rho)),
 *                so in units of requirement at speed mu: rho E[S^2] / (2 (1 - rho)),
 *                E[S^2] = 1 + scv): deterministic (M/D/1) and lognormal scv 2; the loss
 *                system M/G/10/10 (jsq, buffer 1: Erlang-B, insensitive), each busy
 *                server's residual the equilibrium one (Takacs): utilization (1 + scv)
 *                / 2 per server; and JSQ(2), n = 20, every engine against the
 *                occupancy one (no closed form).
 *   erlang-b     the loss system M/G/20/20 (jsq, buffer 1), lambda 0.8 per server, on
 *                the lean engine with deterministic, lognormal scv 4 and Lomax shape 2.5
 *                requirements: p_block = Erlang-B(20, 16) (insensitivity).
 *   start        the mean-field start where it is exact: random routing makes every
 *                server an M/G/1/B queue of its own. M/M/1 (n = 100, lambda = 0.8): the
 *                fixed point is the geometric law, so from it, with no warm-up, the
 *                mean queue over a short run (time 5) is rho / (1 - rho) (servers,
 *                lean, general, occupancy); M/G/1/1 (n = 200, lambda = 0.8, lognormal
 *                scv 4; buffer 1): the fixed point's busy fraction lambda / (1 + lambda)
 *                is insensitive and a busy server's residual is the equilibrium one, so
 *                utilization and mean_workload = utilization (1 + scv) / 2 hold from
 *                time 0 (lean, general; the residual law end to end).
 *   start-control the start test from an empty start: must fail (WILL_FAIL).
 *   quantiles    the lean engine's tagged subsample: n = 2^15 independent M/M/1 queues
 *                (random routing, lambda = 0.7, mean-field start: stationary; the
 *                customers present at the start are not tagged, so those still there
 *                after the warm-up are missing from the record: a warm-up of 50 makes
 *                their share P(S > 50) = e^-15 negligible next to the 0.001 tail (25
 *                left 1.7e-4 out and moved the 0.999 quantile by 2.5%), every second admitted
 * customer tagged: sojourn and wait quantiles against -ln(1 - p) / (mu - lambda) and ln(rho / (1 -
 * p)) / (mu - lambda) (the histograms' 1.1% binning allowed), mean sojourn and wait (conditional
 *                expectations at admission) against 1 / (mu - lambda) and rho / (mu -
 *                lambda).
 *
 * usage: lbmc-lean-values TEST
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/engines.h"
#include "lbmc/stats.h"
#include "occ_harness.h"

#define LV_ALPHA      0.01
#define LV_SEED       19019L
#define LV_HIST_REL   0.011 /* histogram quantiles: within a bin, 1.1% (docs/model.md) */
#define LV_TAIL_MIN   50.0  /* tail levels compared where expected visits reach this */
#define LV_TAIL_UNITS 20    /* quantiles at 0.99 and beyond get intervals from 20 units on */

/* Set the law of pool j (-1: every pool) from its text and set the model up. */
static void lv_service(lbmc_model *m, int j, const char *text)
{
  lbmc_service svc;
  if (lbmc_service_parse("test", text, &svc) || lbmc_model_set_service(m, j, &svc) ||
      lbmc_model_setup(m)) {
    fprintf(stderr, "bad service %s\n", text);
    exit(2);
  }
}

/* ---- equivalence ---- */

typedef struct {
  long n;
  double lambda;
  const char *pools, *policy;
  long routers;
  const char *service, *service2; /* service2: pool 2's law, NULL: the same */
} lv_system;

static int lv_equivalence(int control)
{
  static const lv_system grid[] = {
      {20, 0.9, "1:1:inf", "jsq(2)", 1, "lognormal:scv=4", NULL},
      {30, 0.8, "0.5:1:4,0.5:2:4", "random", 1, "deterministic", NULL},
      {40, 0.85, "1:1:inf", "lwl(2)", 1, "lognormal:scv=4", NULL},
      {25, 0.9, "0.5:1:inf,0.5:1.5:inf", "lwl(3)", 1, "weibull:shape=0.5", NULL},
      {10, 0.7, "1:1:2", "lwl(2)", 1, "deterministic", NULL},
      {30, 0.9, "1:1:3", "pull", 1, "lomax:shape=4.5", NULL},
      {20, 0.8, "0.5:1:inf,0.5:2:inf", "jsq", 1, "erlang:k=4", NULL},
      {40, 1.2, "0.5:1:5,0.5:2:5", "balanced(2)", 1, "hyperexponential:scv=5", NULL},
      {50, 0.9, "1:1:inf", "jiq", 2, "lognormal:scv=1", NULL},
      {30, 0.9, "0.3:1:inf,0.3:0.5:inf,0.4:2:inf", "jsq(2)", 1, "coxian:scv=3", NULL},
      {20, 0.8, "0.5:1:inf,0.5:1:inf", "jsq(2)", 1, "lognormal:scv=4", "deterministic"},
      {20, 0.8, "0.5:1:inf,0.5:1:inf", "lwl(2)", 1, "deterministic", "lognormal:scv=2"}};
  const int G = (int)(sizeof grid / sizeof grid[0]);
  th_family f = {0};
  for (int g = 0; g < G; g++) {
    lbmc_model *m =
        th_model(grid[g].n, grid[g].lambda, grid[g].pools, grid[g].policy, grid[g].routers);
    th_result a, b;
    oh_conf c;
    char tag[160];
    lv_service(m, -1, grid[g].service);
    if (grid[g].service2) lv_service(m, 1, grid[g].service2);
    oh_conf_default(&c);
    c.time = 2.5e4 / (grid[g].lambda * (double)grid[g].n);
    c.warmup = fmax(50, 0.05 * c.time);
    c.point = g;
    c.seed = LV_SEED;
    c.K = 5;
    c.replicas = LV_TAIL_UNITS;
    c.engine = LBMC_ENGINE_LEAN;
    if (control) /* the lean side simulates a load 3% higher */
      if (lbmc_model_set_lambda(m, 1.03 * grid[g].lambda) || lbmc_model_setup(m)) return 1;
    if (oh_simulate(m, &c, &a, NULL, 0)) return 1;
    if (control)
      if (lbmc_model_set_lambda(m, grid[g].lambda) || lbmc_model_setup(m)) return 1;
    c.engine = LBMC_ENGINE_GENERAL;
    if (oh_simulate(m, &c, &b, NULL, 0)) return 1;
    snprintf(tag, sizeof tag, "#%d n=%ld %s %s R=%ld %s%s%s", g, grid[g].n, grid[g].pools,
             lbmc_model_policy(m), grid[g].routers, grid[g].service, grid[g].service2 ? "/" : "",
             grid[g].service2 ? grid[g].service2 : "");
    th_family_compare(&f, &a, &b, tag, LV_TAIL_MIN, LV_HIST_REL);
    th_result_free(&a);
    th_result_free(&b);
    lbmc_model_destroy(&m);
  }
  return th_family_verdict(&f, LV_ALPHA);
}

/* ---- workload ---- */

static const lbmc_engine_kind lv_engines[] = {LBMC_ENGINE_OCCUPANCY, LBMC_ENGINE_SERVERS,
                                              LBMC_ENGINE_LEAN, LBMC_ENGINE_GENERAL};
#define LV_ENGINES 4

/* Simulate m on every engine that applies; exact >= 0: mean_workload[1] (and
 * utilization[1] if util >= 0) against it; else every engine against the first. */
static int lv_all_engines(th_family *f, lbmc_model *m, oh_conf *c, double exact, double util,
                          const char *tag)
{
  th_result first;
  int have_first = 0;
  for (int e = 0; e < LV_ENGINES; e++) {
    lbmc_run_options o;
    th_result r;
    char label[200];
    lbmc_run_options_default(&o);
    o.engine = lv_engines[e];
    if (!lbmc_run_engine(m, &o, NULL, 0)) continue;
    c->engine = lv_engines[e];
    if (oh_simulate(m, c, &r, NULL, 0)) return 1;
    snprintf(label, sizeof label, "%s %s mean_workload", tag, lbmc_engine_kind_name(lv_engines[e]));
    if (exact >= 0) {
      th_family_add(f, &r, th_index(&r, "mean_workload", 0, 0), exact, 0, label);
      if (util >= 0) {
        snprintf(label, sizeof label, "%s %s utilization", tag,
                 lbmc_engine_kind_name(lv_engines[e]));
        th_family_add(f, &r, th_index(&r, "utilization", 0, 0), util, 0, label);
      }
      th_result_free(&r);
    } else if (!have_first) {
      first = r;
      have_first = 1;
    } else {
      snprintf(label, sizeof label, "%s %s vs %s", tag, lbmc_engine_kind_name(lv_engines[e]),
               lbmc_engine_kind_name(lv_engines[0]));
      th_family_compare(f, &r, &first, label, LV_TAIL_MIN, LV_HIST_REL);
      th_result_free(&r);
    }
  }
  if (have_first) th_result_free(&first);
  return 0;
}

/* Erlang-B(c, a) by the recursion B_k = a B_{k-1} / (k + a B_{k-1}). */
static double lv_erlang_b(int servers, double a)
{
  double B = 1;
  for (int k = 1; k <= servers; k++) B = a * B / (k + a * B);
  return B;
}

static int lv_workload(void)
{
  th_family f = {0};
  oh_conf c;
  const double lam = 0.7;
  oh_conf_default(&c);
  c.seed = LV_SEED;
  c.replicas = 20;
  { /* M/M/1 on every engine */
    lbmc_model *m = th_model(1, lam, "1:1:inf", "random", 1);
    c.point = 0;
    c.time = 5e4;
    c.warmup = 200;
    if (lv_all_engines(&f, m, &c, lam / (1 - lam), lam, "M/M/1")) return 1;
    lbmc_model_destroy(&m);
  }
  { /* M/G/1: Pollaczek-Khinchine */
    const char *laws[] = {"deterministic", "lognormal:scv=2"};
    const double scv[] = {0, 2};
    for (int i = 0; i < 2; i++) {
      lbmc_model *m = th_model(1, lam, "1:1:inf", "random", 1);
      char tag[64];
      lv_service(m, -1, laws[i]);
      c.point = 1 + i;
      c.time = i ? 2e5 : 5e4;
      snprintf(tag, sizeof tag, "M/G/1 %s", laws[i]);
      if (lv_all_engines(&f, m, &c, lam * (1 + scv[i]) / (2 * (1 - lam)), lam, tag)) return 1;
      lbmc_model_destroy(&m);
    }
  }
  { /* M/G/10/10 (full jsq, buffer 1): utilization (1 - B) a / c, work util (1 + scv) / 2 */
    const char *laws[] = {"exponential", "deterministic", "lognormal:scv=4"};
    const double scv[] = {1, 0, 4}, a = 8;
    for (int i = 0; i < 3; i++) {
      lbmc_model *m = th_model(10, a / 10, "1:1:1", "jsq", 1);
      double util = (1 - lv_erlang_b(10, a)) * a / 10;
      char tag[64];
      lv_service(m, -1, laws[i]);
      c.point = 3 + i;
      c.time = 1e4;
      c.warmup = 50;
      snprintf(tag, sizeof tag, "M/G/10/10 %s", laws[i]);
      if (lv_all_engines(&f, m, &c, util * (1 + scv[i]) / 2, util, tag)) return 1;
      lbmc_model_destroy(&m);
    }
  }
  { /* JSQ(2), n = 20: every engine against the occupancy engine */
    lbmc_model *m = th_model(20, 0.9, "1:1:inf", "jsq(2)", 1);
    c.point = 6;
    c.time = 5000;
    c.warmup = 100;
    c.K = 5;
    if (lv_all_engines(&f, m, &c, -1, -1, "JSQ(2) n=20")) return 1;
    lbmc_model_destroy(&m);
  }
  return th_family_verdict(&f, LV_ALPHA);
}

static int lv_erlang_b_test(void)
{
  const char *laws[] = {"deterministic", "lognormal:scv=4", "lomax:shape=2.5"};
  const double a = 16;
  th_family f = {0};
  oh_conf c;
  oh_conf_default(&c);
  c.seed = LV_SEED;
  c.engine = LBMC_ENGINE_LEAN;
  c.time = 5000;
  c.warmup = 50;
  for (int i = 0; i < 3; i++) {
    lbmc_model *m = th_model(20, a / 20, "1:1:1", "jsq", 1);
    th_result r;
    char label[96];
    lv_service(m, -1, laws[i]);
    c.point = 10 + i;
    if (oh_simulate(m, &c, &r, NULL, 0)) return 1;
    snprintf(label, sizeof label, "M/G/20/20 %s p_block", laws[i]);
    th_family_add(&f, &r, th_index(&r, "p_block", 0, 0), lv_erlang_b(20, a), 0, label);
    th_result_free(&r);
    lbmc_model_destroy(&m);
  }
  return th_family_verdict(&f, LV_ALPHA);
}

/* ---- the mean-field start ---- */

static int lv_start(int control)
{
  th_family f = {0};
  oh_conf c;
  char note[256];
  oh_conf_default(&c);
  c.seed = LV_SEED;
  c.replicas = 40;
  c.warmup = 0;
  c.init = control ? LBMC_INIT_EMPTY : LBMC_INIT_MEANFIELD;
  { /* M/M/1 queues: the mean queue from time 0 */
    const lbmc_engine_kind kinds[] = {LBMC_ENGINE_SERVERS, LBMC_ENGINE_LEAN, LBMC_ENGINE_GENERAL,
                                      LBMC_ENGINE_OCCUPANCY};
    const double lam = 0.8;
    lbmc_model *m = th_model(100, lam, "1:1:inf", "random", 1);
    for (int e = 0; e < 4; e++) {
      th_result r;
      char label[96];
      c.engine = kinds[e];
      c.point = 20 + e;
      c.time = 5;
      if (oh_simulate(m, &c, &r, note, sizeof note)) return 1;
      if (!control && *note) {
        fprintf(stderr, "%s started empty: %s\n", lbmc_engine_kind_name(kinds[e]), note);
        return 1;
      }
      snprintf(label, sizeof label, "M/M/1 x 100 %s mean_queue", lbmc_engine_kind_name(kinds[e]));
      th_family_add(&f, &r, th_index(&r, "mean_queue", 0, 0), lam / (1 - lam), 0, label);
      th_result_free(&r);
    }
    lbmc_model_destroy(&m);
  }
  { /* M/G/1/1 queues, lognormal scv 4: busy fraction and work from time 0 */
    const lbmc_engine_kind kinds[] = {LBMC_ENGINE_LEAN, LBMC_ENGINE_GENERAL};
    const double lam = 0.8, util = lam / (1 + lam);
    lbmc_model *m = th_model(200, lam, "1:1:1", "random", 1);
    lv_service(m, -1, "lognormal:scv=4");
    for (int e = 0; e < 2; e++) {
      th_result r;
      char label[96];
      c.engine = kinds[e];
      c.point = 30 + e;
      c.time = 2;
      if (oh_simulate(m, &c, &r, note, sizeof note)) return 1;
      snprintf(label, sizeof label, "M/G/1/1 x 200 %s utilization",
               lbmc_engine_kind_name(kinds[e]));
      th_family_add(&f, &r, th_index(&r, "utilization", 0, 0), util, 0, label);
      snprintf(label, sizeof label, "M/G/1/1 x 200 %s mean_workload",
               lbmc_engine_kind_name(kinds[e]));
      th_family_add(&f, &r, th_index(&r, "mean_workload", 0, 0), util * 2.5, 0, label);
      th_result_free(&r);
    }
    lbmc_model_destroy(&m);
  }
  return th_family_verdict(&f, LV_ALPHA);
}

/* ---- the tagged subsample ---- */

static int lv_quantiles(void)
{
  const double lam = 0.7, d = 1 - lam;
  lbmc_model *m = th_model(1L << 15, lam, "1:1:inf", "random", 1);
  th_family f = {0};
  th_result r;
  oh_conf c;
  oh_conf_default(&c);
  c.seed = LV_SEED;
  c.engine = LBMC_ENGINE_LEAN;
  c.init = LBMC_INIT_MEANFIELD;
  c.warmup = 50; /* the customers present at the start are not tagged: let them go */
  c.time = 10;
  c.replicas = LV_TAIL_UNITS;
  c.confidence = 0.99;
  c.point = 40;
  if (oh_simulate(m, &c, &r, NULL, 0)) return 1;
  for (int q = 0; q < LBMC_QUANTILES; q++) {
    double p = lbmc_quantile_level(q), ws = -log(1 - p) / d;
    double ww = p <= 1 - lam ? 0 : log(lam / (1 - p)) / d;
    char label[96];
    snprintf(label, sizeof label, "sojourn q%g", p);
    th_family_add(&f, &r, th_index(&r, "sojourn_quantiles", 0, 0) + (size_t)q, ws, LV_HIST_REL * ws,
                  label);
    snprintf(label, sizeof label, "wait q%g", p);
    th_family_add(&f, &r, th_index(&r, "wait_quantiles", 0, 0) + (size_t)q, ww, LV_HIST_REL * ww,
                  label);
  }
  th_family_add(&f, &r, th_index(&r, "mean_sojourn", 0, 0), 1 / d, 0, "mean_sojourn");
  th_family_add(&f, &r, th_index(&r, "mean_wait", 0, 0), lam / d, 0, "mean_wait");
  th_result_free(&r);
  lbmc_model_destroy(&m);
  return th_family_verdict(&f, LV_ALPHA);
}

int main(int argc, char **argv)
{
  const char *t = argc > 1 ? argv[1] : "";
  if (strcmp(t, "equivalence") == 0) return lv_equivalence(0);
  if (strcmp(t, "equivalence-control") == 0) return lv_equivalence(1);
  if (strcmp(t, "workload") == 0) return lv_workload();
  if (strcmp(t, "erlang-b") == 0) return lv_erlang_b_test();
  if (strcmp(t, "start") == 0) return lv_start(0);
  if (strcmp(t, "start-control") == 0) return lv_start(1);
  if (strcmp(t, "quantiles") == 0) return lv_quantiles();
  fprintf(stderr,
          "usage: %s equivalence|equivalence-control|workload|erlang-b|start|start-control|"
          "quantiles\n",
          argv[0]);
  return 2;
}
