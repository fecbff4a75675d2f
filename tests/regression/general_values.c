/* Known values for general service, workload routing, speed lists and time
 * distributions. Fixed seeds; tolerances from the confidence intervals,
 * Bonferroni-corrected over each family (family error alpha = 0.01):
 *
 *   mg1        one server, random routing: M/G/1. Pollaczek-Khinchine:
 *              E[W] = rho (1 + scv) / (2 mu (1 - rho)), E[T] = E[W] + 1/mu, and by PASTA
 *              p_wait = utilization = rho; for deterministic, Erlang(3),
 *              hyperexponential (scv 4) and lognormal (scv 2) requirements.
 *   lwl-meanfield  lwl(2), exponential service, mu = 1, lambda = 0.9, n = 10^4: the
 *              mean-field sojourn E[T] = lambda^-2 sum_{m>=0} lambda^(2m+1)/(1+m)
 *              = -ln(1 - lambda^2)/lambda^2 = 2.05029 (Bramson, Lu & Prabhakar 2012; the
 *              least-loaded-of-d fixed point), with the finite-n allowance of the
 *              JSQ(d) test (twice a tenth of the bias bound at n = 10^3, O(1/n)).
 *   mu-k       a constant speed list is the plain model, bit for bit; and one server
 *              with slots, speeds mu(k) = (1, 2, 3) (each slot customer served at rate
 *              1): its customer count is the M/M/3 birth-death chain, so tails, the
 *              mean count, the waiting probability (Erlang C) and E[T] = L/lambda
 *              (Little) are exact.
 *   quantiles  M/M/1 (lambda = 0.7, mu = 1): sojourn T ~ Exp(mu - lambda), so its
 *              q-quantile is -ln(1 - q)/(mu - lambda); the wait is 0 with probability
 *              1 - rho, else Exp(mu - lambda): q-quantile -ln((1 - q)/rho)/(mu - lambda)
 *              for q > 1 - rho. Allowance: the histograms' bin width, 1/64 of an octave
 *              (a relative 2^(1/64) - 1 = 1.09% of the value) for the interpolation
 *              within a bin.
 *
 * usage: lbmc-general-values TEST
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lbmc/stats.h"

#define GV_ALPHA 0.01
#define GV_SEED  6006L

static void gv_service(lbmc_model *m, const char *text)
{
  lbmc_service svc;
  if (lbmc_service_parse("test", text, &svc) || lbmc_model_set_service(m, -1, &svc) ||
      lbmc_model_setup(m)) {
    fprintf(stderr, "bad service %s\n", text);
    exit(2);
  }
}

static int gv_mg1(void)
{
  const char *svcs[] = {"deterministic", "erlang:k=3", "hyperexponential:scv=4", "lognormal:scv=2"};
  const double scv[] = {0, 1.0 / 3, 4, 2}, lam = 0.7;
  th_family f = {0};
  for (int c = 0; c < 4; c++) {
    lbmc_model *m = th_model(1, lam, "1:1:inf", "random", 1);
    th_result r;
    char label[96];
    double w = lam * (1 + scv[c]) / (2 * (1 - lam));
    gv_service(m, svcs[c]);
    th_run(m, 2e5 / lam, 2000, c, 20, GV_SEED, &r);
    snprintf(label, sizeof label, "%s mean_wait", svcs[c]);
    th_family_add(&f, &r, th_index(&r, "mean_wait", 0, 0), w, 0, label);
    snprintf(label, sizeof label, "%s mean_sojourn", svcs[c]);
    th_family_add(&f, &r, th_index(&r, "mean_sojourn", 0, 0), w + 1, 0, label);
    snprintf(label, sizeof label, "%s p_wait", svcs[c]);
    th_family_add(&f, &r, th_index(&r, "p_wait", 0, 0), lam, 0, label);
    snprintf(label, sizeof label, "%s utilization", svcs[c]);
    th_family_add(&f, &r, th_index(&r, "utilization", 0, 0), lam, 0, label);
    th_result_free(&r);
    lbmc_model_destroy(&m);
  }
  return th_family_verdict(&f, GV_ALPHA);
}

static int gv_lwl_meanfield(void)
{
  const double lam = 0.9, mf = -log(1 - lam * lam) / (lam * lam);
  lbmc_model *m1 = th_model(1000, lam, "1:1:inf", "lwl(2)", 1);
  lbmc_model *m2 = th_model(10000, lam, "1:1:inf", "lwl(2)", 1);
  th_result small, big;
  th_family f = {0};
  size_t i;
  double t, bias1000;
  char label[96];
  th_run(m1, 2000, 100, 0, 10, GV_SEED, &small);
  th_run(m2, 200, 100, 1, 10, GV_SEED, &big);
  i = th_index(&big, "mean_sojourn", 0, 0);
  t = lbmc_t_quantile(1 - GV_ALPHA, small.replicas - 1);
  bias1000 = fabs(small.mean[i] - mf) + t * small.se[i];
  printf("mean-field E[T] = %.6f (2.05029 expected); n = 1000: %.5f +/- %.2g\n", mf, small.mean[i],
         small.hw[i]);
  snprintf(label, sizeof label, "n=10^4 mean_sojourn (bias bound %.2g)", 2 * bias1000 / 10);
  th_family_add(&f, &big, i, mf, 2 * bias1000 / 10, label);
  th_result_free(&small);
  th_result_free(&big);
  lbmc_model_destroy(&m1);
  lbmc_model_destroy(&m2);
  if (fabs(mf - 2.05029) > 5e-6) return 1;
  return th_family_verdict(&f, GV_ALPHA);
}

/* M/M/c birth-death chain: probabilities pi[0..kmax] for arrival rate lam, c slots of
 * rate 1 each. */
static void gv_mmc(double lam, int c, int kmax, double *pi)
{
  double norm = 0;
  pi[0] = 1;
  for (int k = 1; k <= kmax; k++) pi[k] = pi[k - 1] * lam / (k < c ? k : c);
  for (int k = 0; k <= kmax; k++) norm += pi[k];
  for (int k = 0; k <= kmax; k++) pi[k] /= norm;
}

static int gv_mu_k(void)
{
  const double speeds[3] = {1, 2, 3}, same[3] = {1, 1, 1}, lam = 2.0;
  double pi[400], L = 0, tail = 1, pwait = 0;
  lbmc_model *plain = th_model(4, 0.6, "0.5:1:inf,0.5:1:inf", "pull", 2);
  lbmc_model *flat = th_model(4, 0.6, "0.5:1:inf,0.5:1:inf", "pull", 2);
  lbmc_model *m = th_model(1, lam, "1:1:inf", "random", 1);
  th_result a, b, r;
  th_family f = {0};
  char label[64];
  int same_bits;
  /* (1) a constant speed list is the plain model */
  if (lbmc_model_set_rates(flat, 1, 3, same) || lbmc_model_setup(flat)) return 2;
  th_run(plain, 500, 50, 0, 4, GV_SEED, &a);
  th_run(flat, 500, 50, 0, 4, GV_SEED, &b);
  same_bits = memcmp(a.mean, b.mean, sizeof *a.mean * 3 * a.total) == 0;
  printf("constant speed list vs plain model: %s\n", same_bits ? "bit-identical" : "DIFFERENT");
  /* (2) three slots of rate 1: M/M/3 */
  if (lbmc_model_set_rates(m, 0, 3, speeds) || lbmc_model_setup(m)) return 2;
  th_run(m, 2e5 / lam, 500, 1, 20, GV_SEED, &r);
  gv_mmc(lam, 3, 399, pi);
  for (int k = 0; k < 400; k++) L += k * pi[k];
  for (int k = 3; k < 400; k++) pwait += pi[k]; /* arrivals finding all 3 slots busy */
  th_family_add(&f, &r, th_index(&r, "mean_queue", 0, 0), L, 0, "M/M/3 mean count");
  th_family_add(&f, &r, th_index(&r, "mean_sojourn", 0, 0), L / lam, 0,
                "M/M/3 mean sojourn (Little)");
  th_family_add(&f, &r, th_index(&r, "p_wait", 0, 0), pwait, 0, "M/M/3 p_wait (Erlang C)");
  th_family_add(&f, &r, th_index(&r, "mean_wait", 0, 0), L / lam - 1, 0, "M/M/3 mean wait");
  for (int k = 1; k <= 6; k++) {
    tail -= pi[k - 1];
    snprintf(label, sizeof label, "M/M/3 tail[k=%d]", k);
    th_family_add(&f, &r, th_index(&r, "tail", 0, k), tail, 0, label);
  }
  th_result_free(&a);
  th_result_free(&b);
  th_result_free(&r);
  lbmc_model_destroy(&plain);
  lbmc_model_destroy(&flat);
  lbmc_model_destroy(&m);
  return th_family_verdict(&f, GV_ALPHA) || !same_bits;
}

static int gv_quantiles(void)
{
  const double lam = 0.7, gap = 1 - lam, levels[LBMC_QUANTILES] = LBMC_QUANTILE_LEVELS;
  const double bin = pow(2.0, 1.0 / 64) - 1; /* relative width of a histogram bin */
  th_family f = {0};
  for (int g = 0; g < 2; g++) {
    lbmc_model *m = th_model(1, lam, "1:1:inf", "random", 1);
    th_result r;
    lbmc_run_options o;
    lbmc_run_options_default(&o);
    o.time = 2e5 / lam;
    o.warmup = 1000;
    o.engine = g ? LBMC_ENGINE_GENERAL : LBMC_ENGINE_AUTO;
    if (th_simulate(m, &o, 2 + g, 20, GV_SEED, &r)) return 1;
    for (int i = 0; i < LBMC_QUANTILES; i++) {
      double q = levels[i], soj = -log(1 - q) / gap,
             wait = q > 1 - lam ? -log((1 - q) / lam) / gap : 0;
      char label[96];
      snprintf(label, sizeof label, "%s sojourn_quantiles[%g]", g ? "general" : "exp", q);
      th_family_add(&f, &r, th_index(&r, "sojourn_quantiles", 0, 0) + (size_t)i, soj, bin * soj,
                    label);
      snprintf(label, sizeof label, "%s wait_quantiles[%g]", g ? "general" : "exp", q);
      th_family_add(&f, &r, th_index(&r, "wait_quantiles", 0, 0) + (size_t)i, wait, bin * wait,
                    label);
    }
    th_result_free(&r);
    lbmc_model_destroy(&m);
  }
  return th_family_verdict(&f, GV_ALPHA);
}

int main(int argc, char **argv)
{
  const char *t = argc > 1 ? argv[1] : "";
  if (strcmp(t, "mg1") == 0) return gv_mg1();
  if (strcmp(t, "lwl-meanfield") == 0) return gv_lwl_meanfield();
  if (strcmp(t, "mu-k") == 0) return gv_mu_k();
  if (strcmp(t, "quantiles") == 0) return gv_quantiles();
  fprintf(stderr, "usage: %s mg1|lwl-meanfield|mu-k|quantiles\n", argv[0]);
  return 2;
}
