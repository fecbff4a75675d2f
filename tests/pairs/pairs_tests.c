/* The pair statistics (run.pairs; docs/model.md, "Pair statistics") against what is known:
 *   identity  the observer's integrals are exact bookkeeping: within a pool of N servers
 *             sum_b Y(a, b) = (N - 1) F(a) and sum_{a,b} Y(a, b) = N (N - 1) L, across
 *             pools i, j sum_b Y(a, b) = N_j F_i(a), to round-off, on every engine and
 *             every segment of a replica (J = 2 pools, finite and infinite buffers, a
 * non-exponential service on the general engine); exact     n = 2 (one pool, buffer 6, exponential
 * service, K = 4): the joint law of the two servers P(a, b), its deviation from the product of its
 * marginals, c[k][k] and tv against the stationary law of the two servers' CTMC (solved here), for
 * jsq(2) and random, on every engine that applies, each within its Bonferroni-corrected interval
 * (alpha 0.01 over all of them); and random with Erlang-2 service (general engine): independent
 * servers, c and tv 0. With --swap jsq(2) is judged against random's law and must fail (the
 * control); zero      random routing makes the servers independent at every n (a split Poisson
 *             stream is independent Poisson streams): c[k][k] and the bias-corrected tv
 *             are 0 within their Bonferroni-corrected intervals for n = 2 .. NMAX (the
 *             occupancy engine, mean-field start), and two pools at n = 100 have every
 *             deviation within and across pools 0; the control that can fail: jsq(2) at
 *             n = 10 has c[1][1] > 0 (its interval above 0).
 * Usage: lbmc-pairs-tests identity | exact [--swap] | zero NMAX. Exit 0 if all pass. */
#include <gsl/gsl_linalg.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ticks.h"
#include "engine/engine.h"
#include "harness.h"
#include "lbmc/engines.h"
#include "lbmc/point.h"
#include "lbmc/rng.h"
#include "lbmc/stats.h"
#include "observers/observers.h"
#include "observers/pairs.h"
#include "sim/record.h"

#define PT_K     4 /* levels 0 .. 3 and ">= 4" */
#define PT_C     (PT_K + 1)
#define PT_B     6 /* the buffer of the exact cases */
#define PT_ALPHA 0.01

/* ---- a family of comparisons (the harness's, from intervals rather than results) ---- */

static void pt_add(th_family *f, double est, double se, long dof, double exact, const char *fmt,
                   ...)
{
  struct th_item *it;
  va_list ap;
  if (f->m == f->cap) {
    f->cap = f->cap ? 2 * f->cap : 64;
    f->items = realloc(f->items, sizeof *f->items * (size_t)f->cap);
  }
  it = &f->items[f->m++];
  va_start(ap, fmt);
  vsnprintf(it->label, sizeof it->label, fmt, ap);
  va_end(ap);
  it->est = est, it->se = se, it->ub = NAN, it->exact = exact, it->allowance = 0, it->dof = dof;
}

/* ---- a point of R replicas through the replica driver and the point ---- */

typedef struct {
  lbmc_point *p;
  const lbmc_estimates *e;
  const lbmc_pair_estimates *pe;
  long R;
} pt_run;

static int pt_simulate(const lbmc_model *m, const lbmc_run_options *o, long point, long R,
                       pt_run *run)
{
  lbmc_replica *rep = NULL;
  int rc = 1;
  memset(run, 0, sizeof *run);
  if (lbmc_replica_create(m, o, &rep) || lbmc_point_create(m, o, R, &run->p)) goto done;
  for (long r = 0; r < R; r++) {
    lbmc_unit u = {point, point, r, R, 4242, 0, R == 1};
    const void *rec;
    size_t size;
    int used;
    if (lbmc_replica_record(rep, &u, &rec, &size) || lbmc_point_add(run->p, rec, size, &used))
      goto done;
  }
  if (lbmc_point_reduce(run->p, R)) goto done;
  run->e = lbmc_point_estimates(run->p);
  run->pe = lbmc_point_pairs(run->p);
  run->R = R;
  rc = !run->pe;
done:
  lbmc_replica_destroy(&rep);
  if (rc) fprintf(stderr, "pairs: the simulation of point %ld failed\n", point);
  return rc;
}

/* Entry e of metric `name` of a run into the family, against `exact`. */
static void pt_metric(th_family *f, const pt_run *run, const lbmc_model *m, const char *name,
                      size_t e, double exact, const char *tag)
{
  const int i = lbmc_metric_find(name);
  const size_t k = lbmc_metric_offset(i, lbmc_model_pools(m), PT_K) + e;
  char entry[64];
  lbmc_metric_entry_name(i, (long)e, lbmc_model_pools(m), PT_K, entry, sizeof entry);
  pt_add(f, run->e->estimate[k], run->e->std_err[k], run->R - 1, exact, "%s %s", tag, entry);
}

/* Entry idx of pair table t of a run into the family. */
static void pt_table(th_family *f, const pt_run *run, int t, size_t idx, double exact,
                     const char *tag)
{
  pt_add(f, run->pe->v[t][LBMC_PP_MEAN][idx], run->pe->v[t][LBMC_PP_STD_ERR][idx], run->R - 1,
         exact, "%s %s[%zu]", tag, lbmc_pair_table_name(t), idx);
}

static lbmc_model *pt_model(long n, double lambda, const char *pools, const char *policy,
                            const char *service)
{
  lbmc_model *m = th_model(n, lambda, pools, policy, 1);
  if (service) {
    lbmc_service s;
    if (lbmc_service_parse("test", service, &s) || lbmc_model_set_service(m, -1, &s) ||
        lbmc_model_setup(m))
      exit(2);
  }
  return m;
}

static void pt_options(lbmc_run_options *o, int engine, double time, double warmup)
{
  lbmc_run_options_default(o);
  o->engine = engine, o->time = time, o->warmup = warmup, o->tail_k = PT_K, o->pairs = 1;
  o->batches = 10;
}

/* ---- identity ---- */

/* The block's sums of one record of a J-pool model, per segment. */
static int pt_identity_check(const lbmc_model *m, const lbmc_run_options *o, const double *seg,
                             size_t S, size_t W, const char *what)
{
  const int J = lbmc_model_pools(m), K = (int)o->tail_k, C = K + 1;
  const size_t at = lbmc_tick_width(J, K) + lbmc_observers_offset(m, o, &lbmc_observer_pairs);
  int bad = 0;
  for (size_t s = 0; s < S; s++) {
    const double *row = seg + s * W, *blk = row + at, L = row[LBMC_TK_LEN];
    double F[LBMC_MAX_POOLS][PT_C + 1];
    for (int j = 0; j < J; j++) {
      double above = L * (double)lbmc_model_pool_servers(m, j);
      for (int a = 0; a < K; a++) {
        const double next = row[lbmc_tk_area_tail(J, K, j, a + 1)];
        F[j][a] = above - next;
        above = next;
      }
      F[j][K] = above;
    }
    for (int j = 0; j < J; j++) {
      const double N = (double)lbmc_model_pool_servers(m, j);
      double all = 0;
      for (int a = 0; a < C; a++) {
        double rowsum = 0;
        for (int b = 0; b < C; b++) rowsum += blk[lbmc_pairs_within(K, j, a, b)];
        all += rowsum;
        bad += fabs(rowsum - (N - 1) * F[j][a]) > 1e-9 * (N * N * L + 1);
        for (int i = 0; i < J; i++) {
          double across = 0;
          if (i == j) continue;
          for (int b = 0; b < C; b++) across += blk[lbmc_pairs_across(J, K, j, i, a, b)];
          bad += fabs(across - (double)lbmc_model_pool_servers(m, i) * F[j][a]) >
                 1e-9 * (N * N * L + 1);
        }
      }
      bad += fabs(all - N * (N - 1) * L) > 1e-9 * (N * N * L + 1);
    }
  }
  printf("identity: %-44s %zu segments: %s\n", what, S, bad ? "FAIL" : "ok");
  return bad != 0;
}

static int pt_identity(void)
{
  static const struct {
    const char *pools, *policy, *service;
    long n;
  } cases[] = {
      {"0.5:1:inf,0.5:2:3", "jsq(2)", NULL, 12},
      {"0.5:1:inf,0.5:2:3", "random", NULL, 12},
      {"0.3:1:inf,0.7:1.5:inf", "pull", NULL, 10},
      {"1:1:inf", "jsq(2)", "lognormal:scv=4", 20},
      {"0.5:1:5,0.5:1:inf", "lwl(2)", "erlang:k=3", 8},
  };
  int bad = 0;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (int k = 1; k < lbmc_engine_kinds(); k++) {
      lbmc_model *m = pt_model(cases[c].n, 0.8, cases[c].pools, cases[c].policy, cases[c].service);
      lbmc_run_options o;
      lbmc_replica *rep = NULL;
      char what[160];
      pt_options(&o, k, 200, 20);
      o.tail_k = 3; /* levels above 3 lumped: moves beyond K count as no move */
      if (!lbmc_run_engine(m, &o, NULL, 0)) {
        lbmc_model_destroy(&m);
        continue;
      }
      snprintf(what, sizeof what, "%s %s %s on %s", cases[c].policy, cases[c].pools,
               cases[c].service ? cases[c].service : "exponential", lbmc_engine_kind_name(k));
      {
        lbmc_unit u = {(long)c, (long)c, 0, 1, 7, 0, 0};
        const void *bytes;
        size_t size;
        lbmc_record rec;
        if (lbmc_replica_create(m, &o, &rep) || lbmc_replica_record(rep, &u, &bytes, &size) ||
            lbmc_record_view(bytes, size, &rec))
          bad++;
        else
          bad += pt_identity_check(m, &o, rec.seg, (size_t)rec.h.S, (size_t)rec.h.W, what);
      }
      lbmc_replica_destroy(&rep);
      lbmc_model_destroy(&m);
    }
  return bad != 0;
}

/* ---- exact: the CTMC of two servers ---- */

/* The stationary joint law P[(a) (B + 1) + b] of servers 1, 2 (queue lengths a, b <= B),
 * symmetrised, for arrivals at total rate 2 lambda routed by jsq(2) (join the shorter,
 * ties at random) or random, service rate 1, buffer B (arrivals to a full server are
 * blocked). */
static int pt_ctmc(double lambda, int jsq, double *P)
{
  const int B = PT_B, S = (B + 1) * (B + 1);
  gsl_matrix *A = gsl_matrix_calloc((size_t)S, (size_t)S);
  gsl_vector *rhs = gsl_vector_calloc((size_t)S), *pi = gsl_vector_alloc((size_t)S);
  gsl_permutation *perm = gsl_permutation_alloc((size_t)S);
  int sign, rc;
  for (int a = 0; a <= B; a++)
    for (int b = 0; b <= B; b++) {
      const int s = a * (B + 1) + b;
      double to1 = jsq ? (a < b ? 1 : a > b ? 0 : 0.5) : 0.5, out = 0;
      /* A = Q transposed: A[t][s] = rate s -> t; the diagonal holds -out */
      if (a < B) A->data[(size_t)(s + B + 1) * (size_t)S + (size_t)s] += 2 * lambda * to1;
      if (b < B) A->data[(size_t)(s + 1) * (size_t)S + (size_t)s] += 2 * lambda * (1 - to1);
      out += (a < B) * 2 * lambda * to1 + (b < B) * 2 * lambda * (1 - to1);
      if (a > 0) A->data[(size_t)(s - B - 1) * (size_t)S + (size_t)s] += 1, out += 1;
      if (b > 0) A->data[(size_t)(s - 1) * (size_t)S + (size_t)s] += 1, out += 1;
      A->data[(size_t)s * (size_t)S + (size_t)s] -= out;
    }
  for (int s = 0; s < S; s++) A->data[(size_t)s] = 1; /* row 0: sum pi = 1 */
  gsl_vector_set(rhs, 0, 1);
  rc = gsl_linalg_LU_decomp(A, perm, &sign) || gsl_linalg_LU_solve(A, perm, rhs, pi);
  for (int a = 0; a <= B; a++)
    for (int b = 0; b <= B; b++)
      P[a * (B + 1) + b] = 0.5 * (gsl_vector_get(pi, (size_t)(a * (B + 1) + b)) +
                                  gsl_vector_get(pi, (size_t)(b * (B + 1) + a)));
  gsl_matrix_free(A);
  gsl_vector_free(rhs);
  gsl_vector_free(pi);
  gsl_permutation_free(perm);
  return rc;
}

/* The law lumped at K: joint J[C][C], marginal p[C], D, c[k] (k = 1..K), tv. */
typedef struct {
  double J[PT_C][PT_C], p[PT_C], D[PT_C][PT_C], c[PT_C], tv;
} pt_exact;

static void pt_lump(const double *P, pt_exact *x)
{
  const int B = PT_B;
  memset(x, 0, sizeof *x);
  for (int a = 0; a <= B; a++)
    for (int b = 0; b <= B; b++)
      x->J[a < PT_K ? a : PT_K][b < PT_K ? b : PT_K] += P[a * (B + 1) + b];
  for (int a = 0; a < PT_C; a++)
    for (int b = 0; b < PT_C; b++) x->p[a] += x->J[a][b];
  for (int a = 0; a < PT_C; a++)
    for (int b = 0; b < PT_C; b++) {
      x->D[a][b] = x->J[a][b] - x->p[a] * x->p[b];
      x->tv += 0.5 * fabs(x->D[a][b]);
    }
  for (int k = 1; k <= PT_K; k++)
    for (int a = k; a < PT_C; a++)
      for (int b = k; b < PT_C; b++) x->c[k] += x->D[a][b];
}

/* Every pair estimate of a run of one pool against the exact law x. */
static void pt_against(th_family *f, const pt_run *run, const lbmc_model *m, const pt_exact *x,
                       const char *tag)
{
  for (int a = 0; a < PT_C; a++)
    for (int b = 0; b < PT_C; b++) {
      pt_table(f, run, LBMC_PT_JOINT, (size_t)(a * PT_C + b), x->J[a][b], tag);
      pt_table(f, run, LBMC_PT_DEVIATION, (size_t)(a * PT_C + b), x->D[a][b], tag);
    }
  for (int k = 1; k <= PT_K; k++) pt_metric(f, run, m, "pair_corr", (size_t)(k - 1), x->c[k], tag);
  pt_metric(f, run, m, "pair_tv", 0, x->tv, tag);
}

static int pt_exact_cases(int swap)
{
  static const struct {
    const char *policy;
    double lambda;
  } cases[] = {{"jsq(2)", 0.7}, {"random", 0.6}};
  th_family f = {0};
  char pools[32], tag[96];
  long point = 0;
  snprintf(pools, sizeof pools, "1:1:%d", PT_B);
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    double P[(PT_B + 1) * (PT_B + 1)];
    pt_exact x;
    const int jsq = strncmp(cases[c].policy, "jsq", 3) == 0;
    if (pt_ctmc(cases[c].lambda, swap ? 0 : jsq, P)) return 1;
    pt_lump(P, &x);
    printf("exact: %s lambda %g: tv %.6f, c[1][1] %.6f\n", cases[c].policy, cases[c].lambda, x.tv,
           x.c[1]);
    for (int k = 1; k < lbmc_engine_kinds(); k++) {
      lbmc_model *m = pt_model(2, cases[c].lambda, pools, cases[c].policy, NULL);
      lbmc_run_options o;
      pt_run run;
      pt_options(&o, k, 5000, 100);
      if (lbmc_run_engine(m, &o, NULL, 0)) {
        if (pt_simulate(m, &o, point++, 16, &run)) return 1;
        snprintf(tag, sizeof tag, "%s/%s", cases[c].policy, lbmc_engine_kind_name(k));
        pt_against(&f, &run, m, &x, tag);
        lbmc_point_destroy(&run.p);
      }
      lbmc_model_destroy(&m);
    }
  }
  { /* independent servers with Erlang-2 service: c and tv 0 */
    lbmc_model *m = pt_model(2, 0.6, pools, "random", "erlang:k=2");
    lbmc_run_options o;
    pt_run run;
    pt_options(&o, LBMC_ENGINE_GENERAL, 5000, 100);
    if (pt_simulate(m, &o, point++, 16, &run)) return 1;
    for (int k = 1; k <= PT_K; k++)
      pt_metric(&f, &run, m, "pair_corr", (size_t)(k - 1), 0, "random/erlang:k=2/general");
    pt_metric(&f, &run, m, "pair_tv", 0, 0, "random/erlang:k=2/general");
    lbmc_point_destroy(&run.p);
    lbmc_model_destroy(&m);
  }
  return th_family_verdict(&f, PT_ALPHA);
}

/* ---- zero: random routing at any n; the control jsq(2) ---- */

static int pt_zero(long nmax)
{
  th_family f = {0};
  char tag[96];
  long point = 100;
  int bad = 0;
  for (long n = 2; n <= nmax; n = n == 2 ? 10 : 10 * n) {
    lbmc_model *m = pt_model(n, 0.5, "1:1:inf", "random", NULL);
    lbmc_run_options o;
    pt_run run;
    /* the same measured time in relaxation times at every n; a shorter run at large n
     * keeps the test's cost down (the intervals widen, the bias does not grow) */
    pt_options(&o, LBMC_ENGINE_AUTO, n >= 100000 ? 40 : 200, 40);
    o.init = LBMC_INIT_MEANFIELD;
    if (pt_simulate(m, &o, point++, 8, &run)) return 1;
    snprintf(tag, sizeof tag, "random n=%ld", n);
    for (int k = 1; k <= PT_K; k++)
      pt_metric(&f, &run, m, "pair_corr_scaled", (size_t)(k - 1), 0, tag);
    pt_metric(&f, &run, m, "pair_tv_scaled", 0, 0, tag);
    lbmc_point_destroy(&run.p);
    lbmc_model_destroy(&m);
  }
  { /* two pools: every deviation within and across the pools */
    lbmc_model *m = pt_model(100, 0.5, "0.5:1:inf,0.5:2:inf", "random", NULL);
    lbmc_run_options o;
    pt_run run;
    pt_options(&o, LBMC_ENGINE_AUTO, 400, 40);
    if (pt_simulate(m, &o, point++, 8, &run)) return 1;
    for (size_t i = 0; i < lbmc_pair_table_size(LBMC_PT_DEVIATION, 2, PT_C); i++)
      pt_table(&f, &run, LBMC_PT_DEVIATION, i, 0, "random 2 pools n=100");
    for (int i = 0; i < 2; i++)
      for (size_t e = 0; e < (size_t)PT_C * PT_C; e++)
        pt_table(&f, &run, LBMC_PT_ACROSS_DEVIATION,
                 ((size_t)i * 2 + (size_t)(1 - i)) * PT_C * PT_C + e, 0, "random 2 pools n=100");
    for (int j = 0; j < 2; j++) pt_metric(&f, &run, m, "pair_tv", (size_t)j, 0, "random 2 pools");
    lbmc_point_destroy(&run.p);
    lbmc_model_destroy(&m);
  }
  bad += th_family_verdict(&f, PT_ALPHA);
  { /* the control: jsq(2) at n = 10 makes two servers positively correlated */
    lbmc_model *m = pt_model(10, 0.9, "1:1:inf", "jsq(2)", NULL);
    lbmc_run_options o;
    pt_run run;
    const size_t k = lbmc_metric_offset(lbmc_metric_find("pair_corr"), 1, PT_K);
    pt_options(&o, LBMC_ENGINE_AUTO, 1000, 100);
    if (pt_simulate(m, &o, point++, 8, &run)) return 1;
    printf("control: jsq(2) n=10 lambda 0.9: c[1][1] = %.5f [%.5f, %.5f]: %s\n", run.e->estimate[k],
           run.e->lower[k], run.e->upper[k],
           run.e->lower[k] > 0 ? "above 0, ok" : "FAIL (not shown above 0)");
    bad += !(run.e->lower[k] > 0);
    lbmc_point_destroy(&run.p);
    lbmc_model_destroy(&m);
  }
  return bad != 0;
}

int main(int argc, char **argv)
{
  const char *what = argc > 1 ? argv[1] : "";
  if (strcmp(what, "identity") == 0) return pt_identity();
  if (strcmp(what, "exact") == 0) return pt_exact_cases(argc > 2 && strcmp(argv[2], "--swap") == 0);
  if (strcmp(what, "zero") == 0 && argc > 2) return pt_zero(atol(argv[2]));
  fprintf(stderr, "usage: lbmc-pairs-tests identity | exact [--swap] | zero NMAX\n");
  return 2;
}
