/* Replicas through the public API (lbmc/sim.h): bookkeeping identities, loss systems
 * against exact values, determinism. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/metrics.h"
#include "lbmc/sim.h"
#include "unit.h"

#define AT(v, id, J, K) ((v) + lbmc_metric_offset(LBMC_M_##id, (J), (K)))

static lbmc_model *model(long n, int J, const double *beta, const double *mu, const long *buf,
                         double lambda, const char *policy)
{
  lbmc_model *m = NULL;
  CU_ASSERT_FATAL(lbmc_model_create(&m) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_n(m, n) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_lambda(m, lambda) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_pools(m, J, beta, mu, buf) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_policy(m, policy) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_setup(m) == LBMC_SUCCESS);
  return m;
}

/* Arrivals, admitted customers and departures of a replica, from its metrics:
 * admitted = throughput n T, arrivals = admitted / (1 - p_block),
 * departures = events - arrivals. */
static void counts(const double *v, int J, int K, long n, const lbmc_replica_result *res,
                   double *adm, double *arr, double *dep)
{
  *adm = *AT(v, THROUGHPUT, J, K) * (double)n * res->sim_time;
  *arr = *adm / (1 - *AT(v, P_BLOCK, J, K));
  *dep = (double)res->events - *arr;
}

/* jsq(2), two pools (mu 1, 2; buffer 3 each), n = 6, K = 5. Exact identities (up to
 * floating rounding, bounded by 1e-9 relative): utilization = tail k=1 (the same
 * integral); p_wait_or_block = p_wait + p_block; admitted shares sum to 1; mean queue
 * = sum_k tail_k when the buffer <= K; tail_k = 0 for k > buffer; tail non-increasing;
 * 2d = 4 messages per arrival, no withdrawal; admitted and arrivals are integers and
 * |departures - admitted| <= customers a system can hold (n B = 18); time averages of
 * the whole period = mean of the (equal-length) batch values. */
static void test_identities(void)
{
  const double beta[] = {0.5, 0.5}, mu[] = {1, 2};
  const long buf[] = {3, 3};
  const int J = 2, K = 5;
  const long n = 6;
  lbmc_model *m = model(n, J, beta, mu, buf, 1.2, "jsq(2)");
  lbmc_run_options o;
  lbmc_replica *r = NULL;
  lbmc_replica_result res;
  size_t total = lbmc_metric_total(J, K);
  double *v = malloc(sizeof *v * total), *bv = malloc(sizeof *bv * total * 10);
  double adm, arr, dep, shares = 0, eps = 1e-9;
  lbmc_run_options_default(&o);
  o.warmup = 20, o.time = 2000, o.batches = 10, o.tail_k = K;
  CU_ASSERT_FATAL(v && bv && lbmc_replica_create(m, &o, &r) == LBMC_SUCCESS);
  res.values = v, res.batch_values = bv;
  CU_ASSERT_FATAL(lbmc_replica_run(r, 0, 0, 1, 123, &res) == LBMC_SUCCESS);
  CU_ASSERT_EQUAL_FATAL(res.status, LBMC_STATUS_OK);
  CU_ASSERT_DOUBLE_EQUAL(res.warmup, 20, 0);
  CU_ASSERT_DOUBLE_EQUAL(res.sim_time, 2000, 1e-9);

  CU_ASSERT_DOUBLE_EQUAL(*AT(v, P_WAIT_OR_BLOCK, J, K),
                         *AT(v, P_WAIT, J, K) + *AT(v, P_BLOCK, J, K), eps);
  for (int j = 0; j < J; j++) {
    const double *tail = AT(v, TAIL, J, K) + j * K;
    double sum = 0;
    UT_CHECK(AT(v, UTILIZATION, J, K)[j] == tail[0], "pool %d: utilization %.17g, tail_1 %.17g", j,
             AT(v, UTILIZATION, J, K)[j], tail[0]);
    for (int k = 0; k < K; k++) {
      sum += tail[k];
      if (k > 0) CU_ASSERT(tail[k] <= tail[k - 1]);
      if (k + 1 > buf[j]) CU_ASSERT_EQUAL(tail[k], 0.0);
    }
    CU_ASSERT_DOUBLE_EQUAL(AT(v, MEAN_QUEUE, J, K)[j], sum, eps * sum);
    shares += AT(v, ADMITTED_SHARE, J, K)[j];
  }
  CU_ASSERT_DOUBLE_EQUAL(shares, 1.0, eps);
  CU_ASSERT_EQUAL(*AT(v, MESSAGES_PER_ARRIVAL, J, K), 4.0);
  CU_ASSERT_EQUAL(*AT(v, WITHDRAWALS_PER_ARRIVAL, J, K), 0.0);
  counts(v, J, K, n, &res, &adm, &arr, &dep);
  UT_CHECK(fabs(adm - round(adm)) < eps * adm, "admitted %.9f not an integer", adm);
  UT_CHECK(fabs(arr - round(arr)) < eps * arr, "arrivals %.9f not an integer", arr);
  UT_CHECK(fabs(dep - adm) <= (double)(n * 3) + eps * adm,
           "departures %.1f vs admitted %.1f: more than n B apart", dep, adm);
  CU_ASSERT(arr > 10000);
  /* time averages: whole = mean of batches */
  {
    const int ids[] = {LBMC_M_MEAN_QUEUE, LBMC_M_UTILIZATION, LBMC_M_TAIL, LBMC_M_THROUGHPUT};
    for (int i = 0; i < 4; i++) {
      size_t off = lbmc_metric_offset(ids[i], J, K), sz = lbmc_metric_size(ids[i], J, K);
      for (size_t e = off; e < off + sz; e++) {
        double mean = 0;
        for (int b = 0; b < 10; b++) mean += bv[(size_t)b * total + e] / 10;
        UT_CHECK(fabs(mean - v[e]) <= eps * fmax(1e-3, fabs(v[e])),
                 "%s[%zu]: whole %.12g, batch mean %.12g", lbmc_metric_get(ids[i])->name, e - off,
                 v[e], mean);
      }
    }
  }
  lbmc_replica_destroy(&r);
  lbmc_model_destroy(&m);
  free(v), free(bv);
}

/* Erlang's loss formula B(n, a), a = offered load. */
static double erlang_b(int n, double a)
{
  double b = 1;
  for (int k = 1; k <= n; k++) b = a * b / (k + a * b);
  return b;
}

typedef struct {
  double mean, se;
} est;

/* Mean and standard error over R replicas of metric entry e. */
static est across(const double *vals, int R, size_t total, size_t e)
{
  double s = 0, ss = 0;
  for (int i = 0; i < R; i++) s += vals[(size_t)i * total + e];
  s /= R;
  for (int i = 0; i < R; i++)
    ss += (vals[(size_t)i * total + e] - s) * (vals[(size_t)i * total + e] - s);
  return (est){s, sqrt(ss / (R - 1) / R)};
}

/* Loss systems (buffer 1), lambda = 0.8, 40 replicas of 2000 time units each.
 * Exactly, for every replica: p_wait = 0, mean_wait = 0, mean_queue = utilization,
 * tail_2 = 0. jsq and pull with one router (n = 4, mu = 1) send a customer to an idle
 * server whenever there is one: the M/M/4/4 queue, p_block = B(4, 3.2), utilization =
 * throughput = (1 - p_block) lambda. Random routing splits the arrivals into
 * independent M/M/1/1 queues: server j is busy w.p. u_j = lambda / (lambda + mu_j),
 * p_block = mean of u_j, throughput = lambda mean(1 - u_j); with two pools (mu 1, 3)
 * this checks which server completes. The sojourn is the service time: mean
 * sum_j (1 - u_j) / mu_j / sum_j (1 - u_j) over the servers.
 * Tolerance: the t quantile (39 dof, two-sided tail UT_TAIL) times the standard error
 * across replicas; for the sojourn add the boundary bias of the ratio estimator: at
 * most n customers straddle each end of the period, with an excess mean of at most
 * 1/min(mu) each: 2n / (min(mu) D), D = departures of the replica. pull: every departure
 * leaves a server idle and sends one message, so messages = departures, and messages
 * per arrival differs from 1 - p_block by at most n / arrivals. */
typedef struct {
  const char *policy;
  int J;
  double mu[2];
  int erlang; /* 1: M/M/n/n; 0: independent M/M/1/1 */
} loss_case;

static void run_loss(const loss_case *lc, int point)
{
  const int R = 40, K = 2, J = lc->J;
  const double lambda = 0.8, tcrit = ut_t_crit(R - 1), beta[] = {0.5, 0.5};
  const long buf[] = {1, 1}, n = 4;
  const int pull = strcmp(lc->policy, "pull") == 0 || strcmp(lc->policy, "jiq") == 0;
  size_t total = lbmc_metric_total(J, K);
  double *vals = malloc(sizeof *vals * total * R), pb = 0, thr = 0, soj = 0, w = 0,
         mumin = INFINITY;
  double util[2], dmin = INFINITY;
  lbmc_model *m = model(n, J, J == 1 ? (const double[]){1} : beta, lc->mu, buf, lambda, lc->policy);
  lbmc_run_options o;
  lbmc_replica *r = NULL;
  long exact_bad = 0, msg_bad = 0;
  est e;
  CU_ASSERT_FATAL(vals != NULL);
  for (int j = 0; j < J; j++) {
    double u = lambda / (lambda + lc->mu[j]);
    util[j] = lc->erlang ? (1 - erlang_b(4, n * lambda / lc->mu[j])) * lambda / lc->mu[j] : u;
    pb += (lc->erlang ? erlang_b(4, n * lambda / lc->mu[j]) : u) / J;
    soj += (1 - util[j]) / lc->mu[j], w += 1 - util[j];
    mumin = fmin(mumin, lc->mu[j]);
  }
  thr = (1 - pb) * lambda;
  soj = lc->erlang ? 1 / lc->mu[0] : soj / w;
  lbmc_run_options_default(&o);
  o.warmup = 20, o.time = 2000, o.batches = 4, o.tail_k = K;
  CU_ASSERT_FATAL(lbmc_replica_create(m, &o, &r) == LBMC_SUCCESS);
  for (int i = 0; i < R; i++) {
    lbmc_replica_result res = {.values = vals + (size_t)i * total};
    const double *v = res.values;
    double adm, arr, dep;
    CU_ASSERT_FATAL(lbmc_replica_run(r, point, i, R, 2024, &res) == LBMC_SUCCESS);
    CU_ASSERT_EQUAL(res.status, LBMC_STATUS_OK);
    exact_bad += *AT(v, P_WAIT, J, K) != 0 || *AT(v, MEAN_WAIT, J, K) != 0;
    for (int j = 0; j < J; j++)
      exact_bad += AT(v, MEAN_QUEUE, J, K)[j] != AT(v, UTILIZATION, J, K)[j] ||
                   AT(v, TAIL, J, K)[j * K + 1] != 0;
    counts(v, J, K, n, &res, &adm, &arr, &dep);
    dmin = fmin(dmin, dep);
    if (pull)
      msg_bad += fabs(*AT(v, MESSAGES_PER_ARRIVAL, J, K) - (1 - *AT(v, P_BLOCK, J, K))) >
                 (double)n / arr + 1e-12;
  }
  UT_CHECK(exact_bad == 0, "%s: %ld replicas break a loss-system identity", lc->policy, exact_bad);
  UT_CHECK(msg_bad == 0, "%s: %ld replicas with messages != departures", lc->policy, msg_bad);
  e = across(vals, R, total, lbmc_metric_offset(LBMC_M_P_BLOCK, J, K));
  UT_CHECK(fabs(e.mean - pb) <= tcrit * e.se, "%s J=%d: p_block %.5f vs exact %.5f (tol %.5f)",
           lc->policy, J, e.mean, pb, tcrit * e.se);
  for (int j = 0; j < J; j++) {
    e = across(vals, R, total, lbmc_metric_offset(LBMC_M_UTILIZATION, J, K) + (size_t)j);
    UT_CHECK(fabs(e.mean - util[j]) <= tcrit * e.se,
             "%s J=%d: utilization[%d] %.5f vs exact %.5f (tol %.5f)", lc->policy, J, j, e.mean,
             util[j], tcrit * e.se);
  }
  e = across(vals, R, total, lbmc_metric_offset(LBMC_M_THROUGHPUT, J, K));
  UT_CHECK(fabs(e.mean - thr) <= tcrit * e.se, "%s J=%d: throughput %.5f vs exact %.5f (tol %.5f)",
           lc->policy, J, e.mean, thr, tcrit * e.se);
  e = across(vals, R, total, lbmc_metric_offset(LBMC_M_MEAN_SOJOURN, J, K));
  UT_CHECK(fabs(e.mean - soj) <= tcrit * e.se + 2.0 * (double)n / (mumin * dmin),
           "%s J=%d: mean sojourn %.5f vs exact %.5f (tol %.5f)", lc->policy, J, e.mean, soj,
           tcrit * e.se + 2.0 * (double)n / (mumin * dmin));
  lbmc_replica_destroy(&r);
  lbmc_model_destroy(&m);
  free(vals);
}

static void test_loss_systems(void)
{
  const loss_case cases[] = {{"jsq", 1, {1, 0}, 1},
                             {"pull", 1, {1, 0}, 1},
                             {"jiq", 1, {1, 0}, 1},
                             {"random", 1, {1, 0}, 0},
                             {"random", 2, {1, 3}, 0}};
  for (int i = 0; i < 5; i++) run_loss(&cases[i], i);
}

/* Random routing to n = 3 servers with unlimited buffers, mu = 1, lambda = 0.5: three
 * independent M/M/1 queues, rho = 0.5. Exactly: p_wait = rho (PASTA), p_block = 0,
 * mean_wait = rho / (mu - lambda) = 1, mean_sojourn = 1 / (mu - lambda) = 2, mean_queue
 * = rho / (1 - rho) = 1, utilization = throughput = 0.5, tail_k = rho^k. 40 replicas of
 * 5000 time units after a warm-up of 100 (the relaxation time of this M/M/1 is
 * 1 / (mu (1 - sqrt(rho))^2) = 11.7, so the start-up bias is negligible); tolerance:
 * t quantile (39 dof, tail UT_TAIL) times the standard error across replicas. */
static void test_mm1_queues(void)
{
  const int R = 40, J = 1, K = 3;
  const double one = 1, rho = 0.5, tcrit = ut_t_crit(R - 1);
  const long inf = LBMC_BUFFER_INF;
  const struct {
    int id;
    int k; /* entry within the metric */
    double exact;
  } want[] = {{LBMC_M_P_WAIT, 0, rho},      {LBMC_M_MEAN_WAIT, 0, 1},
              {LBMC_M_MEAN_SOJOURN, 0, 2},  {LBMC_M_MEAN_QUEUE, 0, 1},
              {LBMC_M_UTILIZATION, 0, rho}, {LBMC_M_THROUGHPUT, 0, rho},
              {LBMC_M_TAIL, 1, rho * rho},  {LBMC_M_TAIL, 2, rho * rho * rho}};
  size_t total = lbmc_metric_total(J, K);
  double *vals = malloc(sizeof *vals * total * R);
  lbmc_model *m = model(3, J, &one, &one, &inf, rho, "random");
  lbmc_run_options o;
  lbmc_replica *r = NULL;
  CU_ASSERT_FATAL(vals != NULL);
  lbmc_run_options_default(&o);
  o.warmup = 100, o.time = 5000, o.batches = 4, o.tail_k = K;
  CU_ASSERT_FATAL(lbmc_replica_create(m, &o, &r) == LBMC_SUCCESS);
  for (int i = 0; i < R; i++) {
    lbmc_replica_result res = {.values = vals + (size_t)i * total};
    CU_ASSERT_FATAL(lbmc_replica_run(r, 0, i, R, 31, &res) == LBMC_SUCCESS);
    CU_ASSERT_EQUAL(res.status, LBMC_STATUS_OK);
    CU_ASSERT_EQUAL(*AT(res.values, P_BLOCK, J, K), 0.0);
  }
  for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
    est e = across(vals, R, total, lbmc_metric_offset(want[w].id, J, K) + (size_t)want[w].k);
    UT_CHECK(fabs(e.mean - want[w].exact) <= tcrit * e.se,
             "M/M/1: %s[%d] %.5f vs exact %.5f (tol %.5f)", lbmc_metric_get(want[w].id)->name,
             want[w].k, e.mean, want[w].exact, tcrit * e.se);
  }
  lbmc_replica_destroy(&r);
  lbmc_model_destroy(&m);
  free(vals);
}

/* The same (point, replica, seed) gives bit-identical values and batch values, also
 * after other replicas ran on the same workspace and on a fresh workspace; another
 * replica, point or seed gives different values. */
static void test_determinism(void)
{
  const double beta[] = {0.5, 0.5}, mu[] = {2, 0.5};
  const long buf[] = {LBMC_BUFFER_INF, LBMC_BUFFER_INF};
  lbmc_model *m = model(10, 2, beta, mu, buf, 0.7, "jsq(2)");
  lbmc_run_options o;
  lbmc_replica *r = NULL, *r2 = NULL;
  size_t total;
  double *v[6], *bv[6];
  const long args[6][3] = {{1, 3, 5}, {1, 3, 5}, {1, 4, 5}, {2, 3, 5}, {1, 3, 6}, {1, 3, 5}};
  lbmc_run_options_default(&o);
  o.warmup = 10, o.time = 200, o.batches = 5, o.tail_k = 3;
  total = lbmc_metric_total(2, 3);
  CU_ASSERT_FATAL(lbmc_replica_create(m, &o, &r) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_replica_create(m, &o, &r2) == LBMC_SUCCESS);
  for (int i = 0; i < 6; i++) {
    lbmc_replica_result res;
    v[i] = malloc(sizeof *v[i] * total), bv[i] = malloc(sizeof *bv[i] * total * 5);
    CU_ASSERT_FATAL(v[i] && bv[i]);
    res.values = v[i], res.batch_values = bv[i];
    /* run 1 repeats run 0 after nothing, run 5 after others, on a fresh workspace */
    CU_ASSERT_FATAL(lbmc_replica_run(i == 5 ? r2 : r, args[i][0], args[i][1], 8, args[i][2],
                                     &res) == LBMC_SUCCESS);
  }
  for (int i = 1; i < 6; i++) {
    int same = memcmp(v[i], v[0], sizeof *v[0] * total) == 0 &&
               memcmp(bv[i], bv[0], sizeof *bv[0] * total * 5) == 0;
    int want = i == 1 || i == 5;
    UT_CHECK(same == want, "run %d (point %ld, replica %ld, seed %ld): %s run 0", i, args[i][0],
             args[i][1], args[i][2], same ? "identical to" : "differs from");
  }
  for (int i = 0; i < 6; i++) free(v[i]), free(bv[i]);
  lbmc_replica_destroy(&r);
  lbmc_replica_destroy(&r2);
  lbmc_model_destroy(&m);
}

/* Stream numbers out of range are errors; an overloaded system is not an error: its
 * replica reports the growth, and the point-level judgement calls it unstable (for
 * rho >= 1 with unlimited buffers even without simulation). A replica that hits the
 * customer cap is unstable itself, with NaN values. */
static void test_limits_and_unstable(void)
{
  const double one = 1;
  const long inf = LBMC_BUFFER_INF;
  lbmc_model *m = model(4, 1, &one, &one, &inf, 2.0, "random");
  lbmc_run_options o;
  lbmc_replica *r = NULL;
  size_t total = lbmc_metric_total(1, 2);
  double *v = malloc(sizeof *v * total);
  lbmc_replica_result res = {.values = v};
  long nan_count = 0;
  lbmc_run_options_default(&o);
  o.warmup = 0, o.time = 2000, o.batches = 4, o.tail_k = 2;
  CU_ASSERT_FATAL(v && lbmc_replica_create(m, &o, &r) == LBMC_SUCCESS);
  CU_ASSERT_EQUAL(lbmc_replica_run(r, 0, 5, 5, 1, &res), LBMC_ERR_ARG);
  CU_ASSERT_EQUAL(lbmc_replica_run(r, 1L << 40, 0, 5, 1, &res), LBMC_ERR_LIMIT);
  CU_ASSERT_EQUAL_FATAL(lbmc_replica_run(r, 0, 0, 1, 1, &res), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(res.status, LBMC_STATUS_OK);
  /* arrivals 8 per unit time, capacity 4: half the admitted customers accumulate */
  CU_ASSERT(res.growth > 0.4 && res.growth < 0.6);
  {
    int8_t cap = 0;
    char reason[256] = "";
    CU_ASSERT(lbmc_model_surely_unstable(m));
    CU_ASSERT(lbmc_point_unstable(&o, 1, 2.0, 0, &cap, NULL, reason, sizeof reason));
    CU_ASSERT(lbmc_point_unstable(&o, 0, 2.0, 1, &cap, &res.growth, reason, sizeof reason));
    CU_ASSERT(strstr(reason, "keep growing") != NULL);
  }
  lbmc_replica_destroy(&r);
  /* the cap: a replica stopped with NaN values */
  o.max_customers = 1000;
  CU_ASSERT_FATAL(lbmc_replica_create(m, &o, &r) == LBMC_SUCCESS);
  CU_ASSERT_EQUAL_FATAL(lbmc_replica_run(r, 0, 0, 1, 1, &res), LBMC_SUCCESS);
  CU_ASSERT_EQUAL(res.status, LBMC_STATUS_UNSTABLE);
  CU_ASSERT(res.reason[0] != '\0');
  for (size_t i = 0; i < total; i++) nan_count += isnan(v[i]);
  CU_ASSERT_EQUAL(nan_count, (long)total);
  lbmc_replica_destroy(&r);
  lbmc_model_destroy(&m);
  free(v);
}

int ut_register_replica(void)
{
  static const ut_test tests[] = {{"bookkeeping identities", test_identities},
                                  {"loss systems: exact values", test_loss_systems},
                                  {"M/M/1 queues: exact values", test_mm1_queues},
                                  {"determinism", test_determinism},
                                  {"stream limits, unstable system", test_limits_and_unstable},
                                  {NULL, NULL}};
  return ut_add_suite("replica", tests);
}
