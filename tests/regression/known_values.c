/* Known-value regression tests (fixed seeds; tolerances from the confidence
 * intervals, Bonferroni-corrected over each family, family error alpha = 0.01):
 *
 *   erlang-b    pull with buffer 1 in one pool is the M/M/n/n loss system:
 *               p_block = Erlang-B(n, lambda n / mu) (n = 20 and 200)
 *   mm1         one server, random: M/M/1 (p_wait = rho, E[T] = 1/(mu - lambda),
 *               E[W] = rho/(mu - lambda), x_k = rho^k, E[Q] = rho/(1 - rho))
 *   mm1b        one server with buffer B: M/M/1/B, pi_k = rho^k (1-rho)/(1-rho^(B+1)),
 *               also at rho > 1 (finite buffers are always stable)
 *   jsq-meanfield  JSQ(2), mu = 1, lambda = 0.9, n = 10^4: the mean-field limit
 *               x_k = lambda^(2^k - 1) and E[T] = sum_{i>=1} lambda^(2^i - 2) = 2.61406
 *               (Vvedenskaya, Dobrushin & Karpelevich 1996; Mitzenmacher 2001), with a
 *               finite-n allowance: the mean-field error of such systems is O(1/n)
 *               (Gast, "Expected values estimated via mean-field approximation are
 *               1/N-accurate", Proc. ACM Meas. Anal. Comput. Syst. 1(1), 2017), so the
 *               bias at n = 10^4 is bounded by twice one tenth of the bias bound
 *               observed at n = 10^3 (|estimate - limit| + half-width at n = 10^3);
 *               the factor 2 covers the O(1/n^2) remainder.
 *   pull-example  the PULL paper's heterogeneous example (mu = (2, 1/3), beta = (1/2,
 *               1/2), lambda = 1): JSQ(2) and random are reported unstable; PULL is
 *               stable, its p_wait_or_block falls with n (100, 1000, 10^4), and its
 *               pool utilizations approach the fixed point a/(a + mu_j), a = 5 + sqrt(29).
 *
 * --occupancy runs every test with the occupancy engine instead.
 *
 * usage: lbmc-known-values TEST [--occupancy]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lbmc/stats.h"

#define KV_ALPHA 0.01
#define KV_SEED  4242L

static void kv_run(lbmc_model *m, double time, double warmup, long point, long replicas,
                   th_result *r)
{
  th_run(m, time, warmup, point, replicas, KV_SEED, r);
}

static double kv_erlang_b(long n, double a)
{
  double b = 1.0; /* B(0, a) = 1; B(k, a) = a B(k-1) / (k + a B(k-1)) */
  for (long k = 1; k <= n; k++) b = a * b / ((double)k + a * b);
  return b;
}

static int kv_erlang(void)
{
  const long ns[] = {20, 200};
  const double lambdas[] = {0.8, 0.95};
  th_family f = {0};
  for (int c = 0; c < 2; c++) {
    lbmc_model *m = th_model(ns[c], lambdas[c], "1:1:1", "pull", 1);
    th_result r;
    char label[96];
    double pb = kv_erlang_b(ns[c], lambdas[c] * (double)ns[c]);
    kv_run(m, 2e5 / (double)ns[c], 50, c, 20, &r);
    snprintf(label, sizeof label, "n=%ld lambda=%g p_block", ns[c], lambdas[c]);
    th_family_add(&f, &r, th_index(&r, "p_block", 0, 0), pb, 0, label);
    snprintf(label, sizeof label, "n=%ld lambda=%g p_wait", ns[c], lambdas[c]);
    th_family_add(&f, &r, th_index(&r, "p_wait", 0, 0), 0.0, 0, label);
    snprintf(label, sizeof label, "n=%ld lambda=%g utilization", ns[c], lambdas[c]);
    th_family_add(&f, &r, th_index(&r, "utilization", 0, 0), lambdas[c] * (1 - pb), 0, label);
    snprintf(label, sizeof label, "n=%ld lambda=%g mean_sojourn", ns[c], lambdas[c]);
    th_family_add(&f, &r, th_index(&r, "mean_sojourn", 0, 0), 1.0, 0, label);
    /* every departure leaves its server idle and sends one pull-message */
    snprintf(label, sizeof label, "n=%ld lambda=%g messages_per_arrival", ns[c], lambdas[c]);
    th_family_add(&f, &r, th_index(&r, "messages_per_arrival", 0, 0), 1 - pb, 0, label);
    th_result_free(&r);
    lbmc_model_destroy(&m);
  }
  return th_family_verdict(&f, KV_ALPHA);
}

static int kv_mm1(void)
{
  const double lambdas[] = {0.3, 0.7, 0.9, 0.5}, mus[] = {1, 1, 1, 2};
  th_family f = {0};
  for (int c = 0; c < 4; c++) {
    char pools[64], label[96];
    double lam = lambdas[c], mu = mus[c], rho = lam / mu;
    lbmc_model *m;
    th_result r;
    snprintf(pools, sizeof pools, "1:%g:inf", mu);
    m = th_model(1, lam, pools, "random", 1);
    kv_run(m, 2e5 / lam, 1000 / (mu - lam), c, 20, &r);
#define KV_ADD(name, j, k, value)                                                                  \
  do {                                                                                             \
    snprintf(label, sizeof label, "lambda=%g mu=%g %s%s", lam, mu, name, k ? "[k]" : "");          \
    if (k) snprintf(label, sizeof label, "lambda=%g mu=%g %s[k=%d]", lam, mu, name, k);            \
    th_family_add(&f, &r, th_index(&r, name, j, k), value, 0, label);                              \
  } while (0)
    KV_ADD("p_wait", 0, 0, rho);
    KV_ADD("mean_sojourn", 0, 0, 1 / (mu - lam));
    KV_ADD("mean_wait", 0, 0, rho / (mu - lam));
    KV_ADD("mean_queue", 0, 0, rho / (1 - rho));
    KV_ADD("throughput", 0, 0, lam);
    for (int k = 1; k <= 5; k++) KV_ADD("tail", 0, k, pow(rho, k));
    th_result_free(&r);
    lbmc_model_destroy(&m);
  }
  return th_family_verdict(&f, KV_ALPHA);
}

static int kv_mm1b(void)
{
  const double lambdas[] = {0.6, 1.3};
  const long Bs[] = {4, 3};
  th_family f = {0};
  for (int c = 0; c < 2; c++) {
    char pools[64], label[96];
    double lam = lambdas[c], rho = lam, norm = 0, L = 0, pi[16];
    long B = Bs[c];
    lbmc_model *m;
    th_result r;
    for (long k = 0; k <= B; k++) norm += pow(rho, (double)k);
    for (long k = 0; k <= B; k++) {
      pi[k] = pow(rho, (double)k) / norm;
      L += (double)k * pi[k];
    }
    snprintf(pools, sizeof pools, "1:1:%ld", B);
    m = th_model(1, lam, pools, "random", 1);
    kv_run(m, 2e5 / lam, 200, 10 + c, 20, &r);
    {
      double thr = lam * (1 - pi[B]), pwait = 1 - pi[0] - pi[B], tail = 1 - pi[0];
      snprintf(label, sizeof label, "B=%ld lambda=%g p_block", B, lam);
      th_family_add(&f, &r, th_index(&r, "p_block", 0, 0), pi[B], 0, label);
      snprintf(label, sizeof label, "B=%ld lambda=%g p_wait", B, lam);
      th_family_add(&f, &r, th_index(&r, "p_wait", 0, 0), pwait, 0, label);
      snprintf(label, sizeof label, "B=%ld lambda=%g mean_sojourn", B, lam);
      th_family_add(&f, &r, th_index(&r, "mean_sojourn", 0, 0), L / thr, 0, label);
      snprintf(label, sizeof label, "B=%ld lambda=%g mean_wait", B, lam);
      th_family_add(&f, &r, th_index(&r, "mean_wait", 0, 0), L / thr - 1, 0, label);
      snprintf(label, sizeof label, "B=%ld lambda=%g throughput", B, lam);
      th_family_add(&f, &r, th_index(&r, "throughput", 0, 0), thr, 0, label);
      for (long k = 1; k <= B; k++) {
        snprintf(label, sizeof label, "B=%ld lambda=%g tail[k=%ld]", B, lam, k);
        th_family_add(&f, &r, th_index(&r, "tail", 0, (int)k), tail, 0, label);
        tail -= pi[k];
      }
      if (r.status != LBMC_STATUS_OK) {
        printf("B=%ld lambda=%g: status %s, expected ok\n", B, lam, lbmc_status_name(r.status));
        return 1;
      }
    }
    th_result_free(&r);
    lbmc_model_destroy(&m);
  }
  return th_family_verdict(&f, KV_ALPHA);
}

static int kv_jsq_meanfield(void)
{
  const double lam = 0.9;
  double mf_tail[6], mf_sojourn = 0;
  th_result small, big;
  th_family f = {0};
  lbmc_model *m1 = th_model(1000, lam, "1:1:inf", "jsq(2)", 1);
  lbmc_model *m2 = th_model(10000, lam, "1:1:inf", "jsq(2)", 1);
  lbmc_run_options o;
  lbmc_run_options_default(&o);
  for (int k = 1; k <= 5; k++) mf_tail[k] = pow(lam, pow(2, k) - 1);
  for (int i = 1; i < 30; i++) mf_sojourn += pow(lam, pow(2, i) - 2);
  kv_run(m1, 2000, 100, 0, 10, &small);
  kv_run(m2, 200, 100, 1, 10, &big);
  {
    double t = lbmc_t_quantile(1 - KV_ALPHA / 6, small.replicas - 1);
    char label[96];
    for (int k = 1; k <= 5; k++) {
      size_t i = th_index(&big, "tail", 0, k);
      double bias1000 = fabs(small.mean[i] - mf_tail[k]) + t * small.se[i];
      snprintf(label, sizeof label, "n=10^4 tail[k=%d] (bias bound %.2g)", k, 2 * bias1000 / 10);
      th_family_add(&f, &big, i, mf_tail[k], 2 * bias1000 / 10, label);
    }
    {
      size_t i = th_index(&big, "mean_sojourn", 0, 0);
      double bias1000 = fabs(small.mean[i] - mf_sojourn) + t * small.se[i];
      snprintf(label, sizeof label, "n=10^4 mean_sojourn (bias bound %.2g)", 2 * bias1000 / 10);
      th_family_add(&f, &big, i, mf_sojourn, 2 * bias1000 / 10, label);
    }
  }
  printf("mean-field E[T] = %.6f (2.61406 expected)\n", mf_sojourn);
  if (fabs(mf_sojourn - 2.61406) > 5e-6) return 1;
  th_result_free(&small);
  th_result_free(&big);
  lbmc_model_destroy(&m1);
  lbmc_model_destroy(&m2);
  return th_family_verdict(&f, KV_ALPHA);
}

static int kv_status(const char *policy, long n, lbmc_status want, long point)
{
  lbmc_model *m = th_model(n, 1.0, "0.5:2:inf,0.5:0.3333333333333333:inf", policy, 1);
  th_result r;
  int bad;
  kv_run(m, 1000, 100, point, 4, &r);
  bad = r.status != want;
  printf("%-8s n=%-5ld status %-9s (expected %s) %s\n", policy, n, lbmc_status_name(r.status),
         lbmc_status_name(want), bad ? "FAIL" : "ok");
  th_result_free(&r);
  lbmc_model_destroy(&m);
  return bad;
}

static int kv_pull_example(void)
{
  int bad = 0;
  const double a = 5 + sqrt(29.0), util[2] = {a / (a + 2), a / (a + 1.0 / 3)};
  th_result r100, r1000, r10000;
  lbmc_model *m100 = th_model(100, 1.0, "0.5:2:inf,0.5:0.3333333333333333:inf", "pull", 1);
  lbmc_model *m1000 = th_model(1000, 1.0, "0.5:2:inf,0.5:0.3333333333333333:inf", "pull", 1);
  lbmc_model *m10000 = th_model(10000, 1.0, "0.5:2:inf,0.5:0.3333333333333333:inf", "pull", 1);
  size_t i;
  bad |= kv_status("jsq(2)", 1000, LBMC_STATUS_UNSTABLE, 0);
  bad |= kv_status("random", 1000, LBMC_STATUS_UNSTABLE, 1);
  bad |= kv_status("pull", 1000, LBMC_STATUS_OK, 2);
  kv_run(m100, 2000, 200, 3, 10, &r100);
  kv_run(m1000, 1000, 200, 4, 10, &r1000);
  kv_run(m10000, 200, 100, 5, 10, &r10000);
  i = th_index(&r100, "p_wait_or_block", 0, 0);
  printf("pull p_wait_or_block: n=100 %.4g +/- %.2g, n=1000 %.4g +/- %.2g, n=10^4 %.4g +/- %.2g\n",
         r100.mean[i], r100.hw[i], r1000.mean[i], r1000.hw[i], r10000.mean[i], r10000.hw[i]);
  /* falling with n: from 100 to 1000 the intervals must not overlap; at 10^4 (where
   * waiting is already too rare to measure) no higher than at 1000 */
  if (!(r1000.mean[i] + r1000.hw[i] < r100.mean[i] - r100.hw[i]) ||
      !(r10000.mean[i] <= r1000.mean[i] + r1000.hw[i])) {
    printf("FAIL: p_wait_or_block does not fall with n\n");
    bad = 1;
  }
  /* utilization approaches the fixed point: the distance shrinks with n */
  for (int j = 0; j < 2; j++) {
    size_t u = th_index(&r1000, "utilization", j, 0);
    double d1000 = fabs(r1000.mean[u] - util[j]), d10000 = fabs(r10000.mean[u] - util[j]);
    printf("pool %d utilization: n=1000 %.5f, n=10^4 %.5f, fixed point %.5f\n", j + 1,
           r1000.mean[u], r10000.mean[u], util[j]);
    if (!(d10000 <= d1000 + r10000.hw[u] + r1000.hw[u])) {
      printf("FAIL: pool %d utilization does not approach the fixed point\n", j + 1);
      bad = 1;
    }
  }
  th_result_free(&r100);
  th_result_free(&r1000);
  th_result_free(&r10000);
  lbmc_model_destroy(&m100);
  lbmc_model_destroy(&m1000);
  lbmc_model_destroy(&m10000);
  return bad;
}

int main(int argc, char **argv)
{
  const char *t = argc > 1 ? argv[1] : "";
  if (argc > 2 && strcmp(argv[2], "--occupancy") == 0) th_use_engine(LBMC_ENGINE_OCCUPANCY);
  if (strcmp(t, "erlang-b") == 0) return kv_erlang();
  if (strcmp(t, "mm1") == 0) return kv_mm1();
  if (strcmp(t, "mm1b") == 0) return kv_mm1b();
  if (strcmp(t, "jsq-meanfield") == 0) return kv_jsq_meanfield();
  if (strcmp(t, "pull-example") == 0) return kv_pull_example();
  fprintf(stderr, "usage: %s erlang-b|mm1|mm1b|jsq-meanfield|pull-example [--occupancy]\n",
          argv[0]);
  return 2;
}
