/* Coverage in CI: many independent runs of systems with exact values through
 * the replica driver and the point (lbmc_replica_record, lbmc_point_reduce), counting how
 * often the nominal 95% interval holds the exact value; it must lie in 95 +/- 3% for
 * p_wait (p_block for the loss system), mean_sojourn and the 0.9 sojourn quantile, for
 * replica-based intervals (10 replicas) and batch-means intervals (one replica, 20
 * batches). A none_observed entry counts as covered when its one-sided bound holds the
 * exact value; withheld quantile intervals are counted apart (the rule is
 * data-independent, docs/model.md) and not in the coverage.
 *
 * Systems (exact values: docs/model.md, tests/data/cases.json):
 *   mm1     M/M/1, rho 0.5: p_wait 0.5, mean sojourn 2, q0.9 = ln 10 / 0.5
 *   mm1b    M/M/1/3, rho 0.9 (refs case 1): p_wait, mean sojourn, q0.9 of the Erlang mixture
 *   erlang  M/M/20/20 (pull, buffer 1), lambda 0.8: p_block = Erlang-B, sojourn Exp(1)
 *   jsq     JSQ(2), 4 servers, rho 0.7 (refs case 4): p_wait 0.519, mean sojourn 1.798
 * Each on the per-server engine; mm1 also on the occupancy engine (Erlang mixtures).
 *
 * The number of runs (trials) gives the coverage a binomial standard error of about 1%
 * (500 runs), so 95 +/- 3% is about 3 standard errors: a correct interval passes, one
 * that undercovers by 5% fails. Fixed seeds: deterministic.
 *
 * Negative control (--control, registered as a test that must fail): every system is
 * simulated at a lambda 4% higher than the one its exact values belong to; the figures
 * must then fall outside the band.
 *
 * Usage: lbmc-coverage-ci [--trials N] [--case NAME] [--control]
 * (exit 0 when every figure holds) */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define CC_NOMINAL   0.95
#define CC_TOLERANCE 0.03
#define CC_SEED      20261201

typedef struct {
  const char *name;
  long n;
  double lambda;
  const char *pools, *policy;
  int engine;              /* TH_PER_SERVER or LBMC_ENGINE_OCCUPANCY */
  double warmup, time_rep; /* replica-based: 10 replicas of time_rep */
  double time_one;         /* batch means: one replica of time_one */
  const char *metric[3];   /* the metrics studied */
  double exact[3];         /* their exact values (set by cc_exact) */
} cc_case;

/* The 0.9 sojourn quantile of M/M/1/B (mu = 1, rho): admitted customers find k < B
 * customers with probability proportional to rho^k and stay Erlang(k + 1, 1). */
static double cc_mm1b_quantile(double rho, long B, double p)
{
  double lo = 0, hi = 100, w = 0;
  for (long k = 0; k < B; k++) w += pow(rho, (double)k);
  for (int it = 0; it < 200; it++) {
    double t = 0.5 * (lo + hi), F = 0;
    for (long k = 0; k < B; k++) F += pow(rho, (double)k) / w * gsl_cdf_gamma_P(t, k + 1.0, 1.0);
    if (F < p)
      lo = t;
    else
      hi = t;
  }
  return 0.5 * (lo + hi);
}

static double cc_erlang_b(long n, double a)
{
  double b = 1.0;
  for (long k = 1; k <= n; k++) b = a * b / ((double)k + a * b);
  return b;
}

static cc_case cc_cases[] = {
    {"mm1",
     1,
     0.5,
     "1:1:inf",
     "random",
     TH_PER_SERVER,
     200,
     400,
     40000,
     {"p_wait", "mean_sojourn", "sojourn_quantiles"},
     {0.5, 2.0, 0}},
    {"mm1-occupancy",
     1,
     0.5,
     "1:1:inf",
     "random",
     LBMC_ENGINE_OCCUPANCY,
     200,
     400,
     40000,
     {"p_wait", "mean_sojourn", "sojourn_quantiles"},
     {0.5, 2.0, 0}},
    {"mm1b",
     1,
     0.9,
     "1:1:3",
     "random",
     TH_PER_SERVER,
     100,
     200,
     20000,
     {"p_wait", "mean_sojourn", "sojourn_quantiles"},
     {0.4972, 1.93, 0}},
    {"erlang",
     20,
     0.8,
     "1:1:1",
     "pull",
     TH_PER_SERVER,
     20,
     20,
     2000,
     {"p_block", "mean_sojourn", "sojourn_quantiles"},
     {0, 1.0, 0}},
    {"jsq",
     4,
     0.7,
     "1:1:inf",
     "jsq(2)",
     TH_PER_SERVER,
     50,
     100,
     10000,
     {"p_wait", "mean_sojourn", NULL},
     {0, 0, 0}},
};
#define CC_CASES ((int)(sizeof cc_cases / sizeof cc_cases[0]))

/* Exact values from the sources named at the top (refs: tests/data/cases.json). */
static void cc_exact(void)
{
  cc_cases[0].exact[2] = cc_cases[1].exact[2] = log(10.0) / 0.5;
  /* M/M/1/3 at rho 0.9: p_wait = P(1 <= N < 3), mean sojourn E[N + 1 | N < 3] */
  {
    const double r = 0.9, z = 1 + r + r * r + r * r * r;
    cc_cases[2].exact[0] = (r + r * r) / z;
    cc_cases[2].exact[1] = (1 + 2 * r + 3 * r * r) / (1 + r + r * r);
    cc_cases[2].exact[2] = cc_mm1b_quantile(r, 3, 0.9);
  }
  cc_cases[3].exact[0] = cc_erlang_b(20, 0.8 * 20);
  cc_cases[3].exact[2] = log(10.0);
  cc_cases[4].exact[0] = 0.5189595278676359; /* tests/data/cases.json, case 4: P_wait */
  cc_cases[4].exact[1] = 1.7983579748055913; /* its ET */
}

typedef struct {
  long runs, covered, withheld;
} cc_tally;

/* Tally entry i of r against the exact value x. */
static void cc_count(cc_tally *t, const th_result *r, size_t i, double x)
{
  if (isfinite(r->ub[i])) { /* none observed: the one-sided bound */
    t->runs++;
    t->covered += x <= r->ub[i];
  } else if (isfinite(r->lo[i]) && isfinite(r->hi[i])) {
    t->runs++;
    t->covered += r->lo[i] <= x && x <= r->hi[i];
  } else {
    t->withheld++;
  }
}

/* One case with R replicas (R = 1: batch means) over `trials` runs; prints and returns
 * the number of figures outside the band. */
static int cc_run(const cc_case *c, long R, long trials, double lambda_factor)
{
  lbmc_model *m = th_model(c->n, c->lambda * lambda_factor, c->pools, c->policy, 1);
  lbmc_run_options o;
  cc_tally t[3] = {{0}};
  int bad = 0;
  lbmc_run_options_default(&o);
  o.warmup = c->warmup;
  o.time = R > 1 ? c->time_rep : c->time_one;
  o.batches = 20;
  th_use_engine(c->engine);
  for (long k = 0; k < trials; k++) {
    th_result r;
    if (th_simulate(m, &o, 0, R, CC_SEED + k, &r)) {
      fprintf(stderr, "%s: simulation failed\n", c->name);
      exit(1);
    }
    for (int q = 0; q < 3 && c->metric[q]; q++) {
      size_t i = th_index(&r, c->metric[q], 0, 0);
      if (strcmp(c->metric[q], "sojourn_quantiles") == 0)
        for (int l = 0; l < LBMC_QUANTILES; l++)
          if (fabs(lbmc_quantile_level(l) - 0.9) < 1e-12) i += (size_t)l;
      cc_count(&t[q], &r, i, c->exact[q]);
    }
    th_result_free(&r);
  }
  for (int q = 0; q < 3 && c->metric[q]; q++) {
    const double cov = t[q].runs ? (double)t[q].covered / (double)t[q].runs : 0;
    const double se = sqrt(cov * (1 - cov) / (double)(t[q].runs ? t[q].runs : 1));
    const int ok = t[q].runs > 0 && fabs(cov - CC_NOMINAL) <= CC_TOLERANCE;
    bad += !ok;
    printf("%-14s %-13s %-18s exact %-10.6g coverage %5.1f%% +/- %.1f%% (%ld runs, %ld withheld)  "
           "%s\n",
           c->name, R > 1 ? "10 replicas" : "batch means", c->metric[q], c->exact[q], 100 * cov,
           100 * se, t[q].runs, t[q].withheld, ok ? "ok" : "OUTSIDE 95 +/- 3%");
  }
  lbmc_model_destroy(&m);
  th_use_engine(TH_PER_SERVER);
  return bad;
}

int main(int argc, char **argv)
{
  long trials = 500;
  const char *only = NULL;
  double factor = 1; /* --control: the wrong model */
  int bad = 0;
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--control") == 0)
      factor = 1.04;
    else if (strcmp(argv[a], "--trials") == 0 && a + 1 < argc)
      trials = atol(argv[++a]);
    else if (strcmp(argv[a], "--case") == 0 && a + 1 < argc)
      only = argv[++a];
  }
  cc_exact();
  printf("coverage of nominal %.0f%% intervals, required within %.0f%% of it, %ld runs each\n",
         100 * CC_NOMINAL, 100 * CC_TOLERANCE, trials);
  for (int c = 0; c < CC_CASES; c++) {
    if (only && strcmp(only, cc_cases[c].name) != 0) continue;
    bad += cc_run(&cc_cases[c], 10, trials, factor);
    bad += cc_run(&cc_cases[c], 1, trials, factor);
  }
  printf("%d figure(s) outside the band\n", bad);
  return bad != 0;
}
