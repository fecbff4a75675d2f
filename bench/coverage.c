/* lbmc-coverage: empirical coverage of nominal 95% intervals of the estimators in
 * src/stats (run by hand; not a test). Each case simulates many independent "runs" of a
 * system whose values are known exactly, applies the estimators to every run, and
 * counts how often the interval holds the exact value (coverage; its binomial standard
 * error is printed beside it). The old estimators (mean of per-replica ratios, mean of
 * per-replica quantiles, unchecked batch means) are shown for contrast.
 *
 * The systems are M/M/1 and M/M/1/B, simulated here directly (FCFS, one server, each
 * replica started from the stationary distribution, so no warm-up enters the study; per
 * customer, wait and sojourn are attributed to the segment of its arrival, and by PASTA
 * an arrival sees the stationary law). Exact values: p_wait = P(N >= 1, N < B),
 * p_block = P(N = B), mean sojourn = E[(N + 1) / mu | N < B], mean queue = E[N], the
 * sojourn quantile of the Erlang mixture over N (lbmc_mix_quantile). Once the
 * estimators are wired into the replica driver, the same cases run through lbmc itself.
 *
 * Usage: lbmc-coverage [--trials T] [--seed S] [--case NAME]   (cases: see --help) */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/stats.h"
#include "stats/dhist.h"

enum { W_LEN, W_ARR, W_WAITED, W_BLOCKED, W_ADMITTED, W_SUMS, W_SUMW, W_AREA, W_WIDTH };

typedef struct {
  const char *name, *what;
  double lambda, mu;
  long B;          /* buffer (customers at the server), 0 = unlimited */
  double T;        /* measured time per replica */
  long R;          /* replicas per run (1: batch means) */
  long segments;   /* segments per replica (R = 1: the batches) */
  double quantile; /* level of the sojourn quantile studied */
} cov_case;

static const cov_case cov_cases[] = {
    {"short", "M/M/1 rho 0.5, 200 replicas of time 20 (too few replicas, short runs)", 0.5, 1, 0,
     20, 200, 4, 0.9},
    {"few", "M/M/1 lambda 0.05, 100 replicas of time 40: about 2 customers each", 0.05, 1, 0, 40,
     100, 4, 0.9},
    {"heavy", "M/M/1 rho 0.9, 10 replicas of time 2000 (heavy tail: q0.99)", 0.9, 1, 0, 2000, 10, 4,
     0.99},
    {"rare", "M/M/1/6 rho 0.2 (p_block 5.1e-5), 20 replicas of time 500", 0.2, 1, 6, 500, 20, 4,
     0.9},
    {"rare-seen", "M/M/1/6 rho 0.2, 20 replicas of time 20000 (about 2 blocked per replica)", 0.2,
     1, 6, 20000, 20, 4, 0.9},
    {"batches", "M/M/1 rho 0.9, one replica of time 1e5 in 1000 batches (batch means)", 0.9, 1, 0,
     1e5, 1, 1000, 0.9},
    {"batches-mm1b", "M/M/1/10 rho 0.8, one replica of time 2e4 in 200 batches", 0.8, 1, 10, 2e4, 1,
     200, 0.99},
};
#define COV_CASES (sizeof cov_cases / sizeof cov_cases[0])

/* Exact values of a case. */
typedef struct {
  double p_wait, p_block, mean_sojourn, mean_queue, q;
} cov_truth;

static void cov_exact(const cov_case *c, cov_truth *t)
{
  double rho = c->lambda / c->mu, norm = 0, L = 0, S = 0, pb;
  size_t K = c->B > 0 ? (size_t)c->B : 4000;
  double *pi = malloc(sizeof *pi * (K + 1)), *w = malloc(sizeof *w * K);
  double *rate = malloc(sizeof *rate * K);
  int *shape = malloc(sizeof *shape * K);
  lbmc_erlang_mix mix = {K, shape, rate};
  if (!pi || !w || !rate || !shape) {
    fprintf(stderr, "lbmc-coverage: out of memory\n");
    exit(1);
  }
  for (size_t k = 0; k <= K; k++) norm += pi[k] = pow(rho, (double)k);
  for (size_t k = 0; k <= K; k++) pi[k] /= norm, L += (double)k * pi[k];
  pb = c->B ? pi[K] : 0;
  for (size_t k = 0; k < K; k++) {
    S += pi[k] * (double)(k + 1) / c->mu;
    w[k] = pi[k];
    shape[k] = (int)k + 1;
    rate[k] = c->mu;
  }
  t->p_block = pb;
  t->p_wait = 1 - pi[0] - pb;
  t->mean_sojourn = S / (1 - pb);
  t->mean_queue = L;
  lbmc_mix_quantile(&mix, w, c->quantile, &t->q);
  free(pi), free(w), free(rate), free(shape);
}

/* ---- the simulator: FCFS single server, buffer B, stationary start ---- */

typedef struct {
  double *arr; /* arrival times of the customers in the system, FCFS ring; < 0: at start */
  size_t cap, head, n;
} cov_queue;

static void cov_push(cov_queue *q, double t)
{
  if (q->n == q->cap) { /* grow the ring, unrolled into the new array */
    size_t cap = q->cap ? 2 * q->cap : 64;
    double *a = malloc(sizeof *a * cap);
    for (size_t i = 0; i < q->n; i++) a[i] = q->arr[(q->head + i) % q->cap];
    free(q->arr);
    q->arr = a;
    q->cap = cap;
    q->head = 0;
  }
  q->arr[(q->head + q->n++) % q->cap] = t;
}

static double cov_pop(cov_queue *q)
{
  double t = q->arr[q->head];
  q->head = (q->head + 1) % q->cap;
  q->n--;
  return t;
}

/* Add the integral of N over [t0, t1) (clipped to [0, T)) to the segments' areas. */
static void cov_area(double *seg, long S, double T, double t0, double t1, double N)
{
  double h = T / (double)S;
  if (t1 > T) t1 = T;
  while (t0 < t1) {
    long s = (long)(t0 / h);
    double end;
    if (s >= S) s = S - 1;
    end = fmin(t1, (double)(s + 1) * h);
    seg[s * W_WIDTH + W_AREA] += N * (end - t0);
    t0 = end;
  }
}

/* Stationary number in system: P(N = k) proportional to rho^k, k <= B. */
static size_t cov_initial(const cov_case *c, gsl_rng *r)
{
  double rho = c->lambda / c->mu, u = gsl_rng_uniform(r), norm = 0, acc = 0;
  long K = c->B ? c->B : 100000;
  if (!c->B) return gsl_ran_geometric(r, 1 - rho) - 1;
  for (long k = 0; k <= K; k++) norm += pow(rho, (double)k);
  for (long k = 0; k <= K; k++) {
    acc += pow(rho, (double)k) / norm;
    if (u < acc) return (size_t)k;
  }
  return (size_t)K;
}

/* A customer who arrived at `a` (>= 0) ends: its sojourn (and wait) to its segment. */
static void cov_record(double *seg, lbmc_dhist *hist, long S, double T, double a, double value,
                       int field)
{
  long s = (long)(a / (T / (double)S));
  if (s >= S) s = S - 1;
  seg[s * W_WIDTH + field] += value;
  if (hist) lbmc_dhist_add(&hist[s], value);
}

/* One replica: segments seg[S x W_WIDTH] and per-segment sojourn histograms hist[S]. */
static void cov_replica(const cov_case *c, gsl_rng *r, cov_queue *q, double *seg, lbmc_dhist *hist)
{
  long S = c->segments;
  double T = c->T, t = 0, next_arr = gsl_ran_exponential(r, 1 / c->lambda), next_dep = INFINITY;
  size_t window = 0; /* customers in the system that arrived in [0, T) */
  memset(seg, 0, sizeof *seg * (size_t)S * W_WIDTH);
  for (long s = 0; s < S; s++)
    seg[s * W_WIDTH + W_LEN] = T / (double)S, lbmc_dhist_init(&hist[s], 1 / c->mu);
  q->head = q->n = 0;
  for (size_t k = cov_initial(c, r); k > 0; k--) cov_push(q, -1);
  if (q->n) next_dep = gsl_ran_exponential(r, 1 / c->mu);
  while (next_arr < T || window > 0) {
    if (next_arr < T && next_arr < next_dep) {
      long s = (long)(next_arr / (T / (double)S));
      cov_area(seg, S, T, t, next_arr, (double)q->n);
      t = next_arr;
      next_arr = t + gsl_ran_exponential(r, 1 / c->lambda);
      seg[s * W_WIDTH + W_ARR]++;
      if (c->B && (long)q->n >= c->B) {
        seg[s * W_WIDTH + W_BLOCKED]++;
        continue;
      }
      seg[s * W_WIDTH + W_ADMITTED]++;
      seg[s * W_WIDTH + W_WAITED] += q->n > 0;
      if (q->n == 0) next_dep = t + gsl_ran_exponential(r, 1 / c->mu);
      cov_push(q, t);
      window++;
    } else {
      double a;
      cov_area(seg, S, T, t, next_dep, (double)q->n);
      t = next_dep;
      a = cov_pop(q);
      if (a >= 0) cov_record(seg, hist, S, T, a, t - a, W_SUMS), window--;
      next_dep = q->n ? t + gsl_ran_exponential(r, 1 / c->mu) : INFINITY;
      if (q->n && q->arr[q->head] >= 0)
        cov_record(seg, NULL, S, T, q->arr[q->head], t - q->arr[q->head], W_SUMW);
    }
  }
  cov_area(seg, S, T, t, T, (double)q->n);
}

/* ---- the study ---- */

typedef struct {
  const char *metric, *estimator;
  long covered, flagged, no_interval, runs;
  long above;    /* misses with the whole interval above the exact value */
  double rel_hw; /* sum of half-width / exact value over runs with an interval */
  double rel_w;  /* sum of (upper - lower) / exact value */
} cov_tally;

static void cov_count(cov_tally *tl, const lbmc_interval *iv, double truth)
{
  tl->runs++;
  if (iv->flags &
      (LBMC_IV_CORRELATED | LBMC_IV_NONE_OBSERVED | LBMC_IV_UPPER_OPEN | LBMC_IV_UNRELIABLE))
    tl->flagged++;
  if (iv->flags & LBMC_IV_NONE_OBSERVED) {
    tl->covered += truth <= iv->upper_bound;
    return;
  }
  if (iv->flags & (LBMC_IV_EMPTY | LBMC_IV_NO_INTERVAL | LBMC_IV_UNRELIABLE) || isnan(iv->lower)) {
    tl->no_interval++;
    return;
  }
  tl->covered += iv->lower <= truth && (isnan(iv->upper) || truth <= iv->upper);
  tl->above += iv->lower > truth;
  if (!isnan(iv->half_width)) tl->rel_hw += iv->half_width / truth;
  if (!isnan(iv->upper)) tl->rel_w += (iv->upper - iv->lower) / truth;
}

/* The old estimator: Student-t over per-unit values (NaN values make it NaN). */
static void cov_old_mean(const double *v, size_t n, lbmc_interval *iv)
{
  double m, se, hw;
  lbmc_mean_interval(v, n, 1, 0.95, &m, &se, &hw);
  iv->estimate = m;
  iv->lower = m - hw;
  iv->upper = m + hw;
  iv->half_width = hw;
  iv->upper_bound = NAN;
  iv->flags = isnan(hw) ? LBMC_IV_NO_INTERVAL : 0;
}

/* Coverage among the runs that gave an interval (or a bound), with its binomial
 * standard error at 95%; runs without an interval are counted apart. */
static void cov_print(const cov_tally *tl, size_t k)
{
  printf("  %-14s %-22s %8s %6s %10s %8s %12s %11s %9s\n", "metric", "estimator", "coverage", "+-",
         "rel. hw", "flagged", "no interval", "miss above", "rel. w");
  for (size_t i = 0; i < k; i++) {
    long with = tl[i].runs - tl[i].no_interval;
    double n = (double)with;
    printf("  %-14s %-22s %7.1f%% %6.1f %10.3g %8ld %12ld %11ld %9.3g\n", tl[i].metric,
           tl[i].estimator, with ? 100 * (double)tl[i].covered / n : NAN,
           with ? 100 * sqrt(0.95 * 0.05 / n) : NAN, with ? tl[i].rel_hw / n : NAN, tl[i].flagged,
           tl[i].no_interval, tl[i].above, with ? tl[i].rel_w / n : NAN);
  }
}

/* Units of one run: replicas (R >= 2, each the sum of its segments) or the batches of
 * one replica; rows[U x W_WIDTH], hists[G] of the units (G = U, or 64 batch groups). */
/* Overrides from the command line (0: the case's own value) and the batch rule. */
typedef struct {
  long R, segments;
  double T;
  lbmc_batch_rule rule;
} cov_options;

typedef struct {
  size_t U, G;
  const lbmc_batch_rule *rule;
  double *rows, *ratios, *wy, *wx, *work;
  lbmc_dhist *hists, *pooled;
  const lbmc_dhist **hp;
} cov_units;

enum { T_PWAIT, T_PBLOCK, T_SOJOURN, T_QUEUE, T_QUANT, T_METRICS };

/* Interval of a ratio (kind 0; kind 2: with Hall's skewness correction, as lbmc reports
 * ratios) or a proportion of arrivals (kind 1) over the units,
 * merged first by the batch rule when the units are batches. */
static void cov_ratio(const cov_units *u, int field_y, int field_x, int kind, int batches,
                      lbmc_interval *iv)
{
  const double *y = u->rows + field_y, *x = u->rows + field_x;
  size_t n = u->U, stride = W_WIDTH;
  unsigned flags = 0;
  if (batches) {
    n = lbmc_batch_merge(y, x, u->U, W_WIDTH, u->rule, u->wy, u->wx, &flags);
    y = u->wy, x = u->wx, stride = 1;
  }
  if (kind == 2)
    lbmc_ratio_interval_skew(y, x, n, stride, 0.95, iv);
  else if (kind)
    lbmc_proportion_interval(y, x, n, stride, 0.95, 1, iv);
  else
    lbmc_ratio_interval(y, x, n, stride, 0.95, iv);
  iv->flags |= flags;
}

/* The interval iv made symmetric around its estimate, of the same length: against Hall's
 * interval, what placing the length by the sample skewness buys. */
static void cov_symmetric(lbmc_interval *iv)
{
  double h = (iv->upper - iv->lower) / 2;
  if (isnan(h)) return;
  iv->lower = iv->estimate - h, iv->upper = iv->estimate + h, iv->half_width = h;
}

/* The old estimator of a ratio: the t interval of the per-unit ratios. */
static void cov_ratio_old(const cov_units *u, int field_y, int field_x, lbmc_interval *iv)
{
  for (size_t i = 0; i < u->U; i++) {
    double x = u->rows[i * W_WIDTH + field_x];
    u->ratios[i] = x > 0 ? u->rows[i * W_WIDTH + field_y] / x : NAN;
  }
  cov_old_mean(u->ratios, u->U, iv);
}

/* Sectioning (Asmussen & Glynn, Stochastic Simulation, Springer 2007, III.5): the pooled
 * quantile q with the spread of the units' own quantiles v[0..n) around it (NaN: none). */
static void cov_sectioning(const lbmc_dhist *pooled, const double *v, size_t n, double p,
                           lbmc_interval *iv)
{
  double q, ss = 0;
  size_t m = 0;
  iv->flags = LBMC_IV_NO_INTERVAL;
  iv->lower = iv->upper = iv->half_width = NAN;
  if (lbmc_dhist_quantile(pooled, p, &q)) return;
  for (size_t g = 0; g < n; g++)
    if (!isnan(v[g])) ss += (v[g] - q) * (v[g] - q), m++;
  if (m < 2) return;
  iv->flags = 0;
  iv->estimate = q;
  iv->half_width = lbmc_t_quantile(0.95, (long)m - 1) * sqrt(ss / (double)(m - 1) / (double)m);
  iv->lower = q - iv->half_width;
  iv->upper = q + iv->half_width;
}

/* The sojourn quantile: pooled with Woodruff's interval; the old mean of the units'
 * quantiles; sectioning. */
static void cov_quantiles(const cov_case *c, const cov_units *u, const cov_truth *t, int batches,
                          cov_tally *tl)
{
  lbmc_interval iv;
  lbmc_dhist_init(u->pooled, 1 / c->mu);
  for (size_t g = 0; g < u->G; g++) lbmc_dhist_merge(u->pooled, &u->hists[g]);
  lbmc_dhist_quantile_interval(u->hp, u->G, u->pooled, c->quantile, 0.95, batches ? u->rule : NULL,
                               u->work, &iv);
  cov_count(&tl[0], &iv, t->q);
  for (size_t g = 0; g < u->G; g++)
    if (lbmc_dhist_quantile(&u->hists[g], c->quantile, &u->ratios[g])) u->ratios[g] = NAN;
  cov_old_mean(u->ratios, u->G, &iv);
  cov_count(&tl[1], &iv, t->q);
  cov_sectioning(u->pooled, u->ratios, u->G, c->quantile, &iv);
  cov_count(&tl[2], &iv, t->q);
}

/* Every estimator on one run's units; tl: the case's tallies, 2 or 3 per metric. */
static void cov_evaluate(const cov_case *c, const cov_units *u, const cov_truth *t, cov_tally *tl)
{
  int b = c->R == 1;
  lbmc_interval iv;
  cov_ratio(u, W_WAITED, W_ARR, 1, b, &iv), cov_count(&tl[0], &iv, t->p_wait);
  cov_ratio_old(u, W_WAITED, W_ARR, &iv), cov_count(&tl[1], &iv, t->p_wait);
  cov_ratio(u, W_BLOCKED, W_ARR, 1, b, &iv), cov_count(&tl[2], &iv, t->p_block);
  cov_ratio_old(u, W_BLOCKED, W_ARR, &iv), cov_count(&tl[3], &iv, t->p_block);
  cov_ratio(u, W_SUMS, W_ADMITTED, 0, b, &iv), cov_count(&tl[4], &iv, t->mean_sojourn);
  cov_ratio(u, W_SUMS, W_ADMITTED, 2, b, &iv), cov_count(&tl[12], &iv, t->mean_sojourn);
  cov_symmetric(&iv), cov_count(&tl[14], &iv, t->mean_sojourn);
  if (b) {
    cov_count(&tl[5], &iv, t->mean_sojourn); /* (no jackknife over batches) */
  } else {
    lbmc_ratio_jackknife(u->rows + W_SUMS, u->rows + W_ADMITTED, u->U, W_WIDTH, 0.95, &iv);
    cov_count(&tl[5], &iv, t->mean_sojourn);
  }
  cov_ratio_old(u, W_SUMS, W_ADMITTED, &iv), cov_count(&tl[6], &iv, t->mean_sojourn);
  cov_ratio(u, W_AREA, W_LEN, 0, b, &iv), cov_count(&tl[7], &iv, t->mean_queue);
  cov_ratio(u, W_AREA, W_LEN, 2, b, &iv), cov_count(&tl[13], &iv, t->mean_queue);
  cov_ratio_old(u, W_AREA, W_LEN, &iv), cov_count(&tl[8], &iv, t->mean_queue);
  cov_quantiles(c, u, t, b, &tl[9]);
}

static int cov_study(const cov_case *case_, const cov_options *opt, long trials, unsigned long seed)
{
  static const char *const names[][2] = {{"p_wait", "pooled KG"},
                                         {"p_wait", "old: mean of ratios"},
                                         {"p_block", "pooled KG"},
                                         {"p_block", "old: mean of ratios"},
                                         {"mean_sojourn", "pooled delta"},
                                         {"mean_sojourn", "pooled jackknife"},
                                         {"mean_sojourn", "old: mean"},
                                         {"mean_queue", "pooled delta"},
                                         {"mean_queue", "old: mean"},
                                         {"quantile", "pooled Woodruff"},
                                         {"quantile", "old: mean of q"},
                                         {"quantile", "sectioning"},
                                         {"mean_sojourn", "pooled delta, Hall"},
                                         {"mean_queue", "pooled delta, Hall"},
                                         {"mean_sojourn", "Hall's length, centred"}};
  enum { K = sizeof names / sizeof names[0] };
  cov_tally tl[K];
  cov_case cc = *case_, *c = &cc;
  long S, R;
  cov_units u = {0};
  cov_queue q = {0};
  cov_truth t;
  double *seg;
  lbmc_dhist *sh;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  if (opt->R) cc.R = opt->R;
  if (opt->T > 0) cc.T = opt->T;
  if (opt->segments) cc.segments = opt->segments;
  S = c->segments, R = c->R;
  u.rule = &opt->rule;
  u.U = R > 1 ? (size_t)R : (size_t)S;
  u.G = R > 1 ? (size_t)R : (size_t)(S < 64 ? S : 64);
  seg = malloc(sizeof *seg * (size_t)S * W_WIDTH);
  u.rows = malloc(sizeof *u.rows * u.U * W_WIDTH);
  u.ratios = malloc(sizeof *u.ratios * u.U);
  u.wy = malloc(sizeof *u.wy * u.U);
  u.wx = malloc(sizeof *u.wx * u.U);
  u.work = malloc(sizeof *u.work * 4 * u.G);
  u.hists = malloc(sizeof *u.hists * u.G);
  u.hp = malloc(sizeof *u.hp * u.G);
  u.pooled = malloc(sizeof *u.pooled);
  sh = malloc(sizeof *sh * (size_t)S);
  if (!seg || !r || !u.rows || !u.ratios || !u.wy || !u.wx || !u.work || !u.hists || !u.hp ||
      !u.pooled || !sh) {
    fprintf(stderr, "lbmc-coverage: out of memory\n");
    return 1;
  }
  for (size_t g = 0; g < u.G; g++) u.hp[g] = &u.hists[g];
  memset(tl, 0, sizeof tl);
  for (int k = 0; k < K; k++) tl[k].metric = names[k][0], tl[k].estimator = names[k][1];
  gsl_rng_set(r, seed);
  cov_exact(c, &t);
  printf("%s: %s\n  R = %ld, T = %g, %ld segments; batch rule: max %zu, min %zu, beta %g\n  exact: "
         "p_wait %.6g, p_block %.6g, mean_sojourn %.6g, mean_queue %.6g, "
         "q%g %.6g; %ld runs\n",
         c->name, c->what, R, c->T, S, u.rule->max_batches, u.rule->min_batches, u.rule->beta,
         t.p_wait, t.p_block, t.mean_sojourn, t.mean_queue, c->quantile, t.q, trials);
  for (long k = 0; k < trials; k++) {
    memset(u.rows, 0, sizeof *u.rows * u.U * W_WIDTH);
    for (size_t g = 0; g < u.G; g++) lbmc_dhist_init(&u.hists[g], 1 / c->mu);
    for (long i = 0; i < R; i++) {
      cov_replica(c, r, &q, seg, sh);
      for (long s = 0; s < S; s++) {
        size_t unit = R > 1 ? (size_t)i : (size_t)s, g = R > 1 ? (size_t)i : (size_t)s * u.G / S;
        for (int w = 0; w < W_WIDTH; w++) u.rows[unit * W_WIDTH + w] += seg[s * W_WIDTH + w];
        lbmc_dhist_merge(&u.hists[g], &sh[s]);
      }
    }
    cov_evaluate(c, &u, &t, tl);
  }
  if (!c->B) memmove(&tl[2], &tl[4], sizeof *tl * (K - 4)); /* no blocking without a buffer */
  cov_print(tl, c->B ? (size_t)K : (size_t)K - 2);
  free(seg), free(sh), free(q.arr), free(u.rows), free(u.ratios), free(u.wy), free(u.wx);
  free(u.work), free(u.hists), free(u.hp), free(u.pooled);
  gsl_rng_free(r);
  return 0;
}

static void cov_usage(FILE *f)
{
  fprintf(f, "usage: lbmc-coverage [--trials N] [--seed S] [--case NAME] [--replicas R]\n"
             "         [--time T] [--segments S] [--max-batches B] [--min-batches B] [--beta B]\n"
             "Coverage of nominal 95%% intervals on systems with exact values; --replicas,\n"
             "--time and --segments override the cases' values, the others set the batch\n"
             "rule (defaults: lbmc_batch_rule_default). Cases:\n");
  for (size_t i = 0; i < COV_CASES; i++)
    fprintf(f, "  %-13s %s\n", cov_cases[i].name, cov_cases[i].what);
}

int main(int argc, char **argv)
{
  long trials = 200;
  unsigned long seed = 1;
  const char *only = NULL;
  int rc = 0;
  cov_options opt = {0, 0, 0, {0, 0, 0}};
  lbmc_batch_rule_default(&opt.rule);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--trials") == 0 && i + 1 < argc)
      trials = atol(argv[++i]);
    else if (strcmp(argv[i], "--replicas") == 0 && i + 1 < argc)
      opt.R = atol(argv[++i]);
    else if (strcmp(argv[i], "--time") == 0 && i + 1 < argc)
      opt.T = atof(argv[++i]);
    else if (strcmp(argv[i], "--segments") == 0 && i + 1 < argc)
      opt.segments = atol(argv[++i]);
    else if (strcmp(argv[i], "--max-batches") == 0 && i + 1 < argc)
      opt.rule.max_batches = (size_t)atol(argv[++i]);
    else if (strcmp(argv[i], "--min-batches") == 0 && i + 1 < argc)
      opt.rule.min_batches = (size_t)atol(argv[++i]);
    else if (strcmp(argv[i], "--beta") == 0 && i + 1 < argc)
      opt.rule.beta = atof(argv[++i]);
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
      seed = strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
      only = argv[++i];
    else {
      cov_usage(strcmp(argv[i], "--help") == 0 ? stdout : stderr);
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (trials < 1) {
    fprintf(stderr, "lbmc-coverage: --trials: %ld is not allowed; allowed: >= 1\n", trials);
    return 2;
  }
  for (size_t i = 0; i < COV_CASES; i++)
    if (!only || strcmp(only, cov_cases[i].name) == 0)
      rc |= cov_study(&cov_cases[i], &opt, trials, seed + i);
  return rc;
}
