/* Regression-test harness (harness.h): replicas of a model through the public API,
 * estimates compared with known values, coverage tallies and Bonferroni families. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/point.h"
#include "lbmc/rng.h"
#include "lbmc/stats.h"

static int th_engine = TH_PER_SERVER; /* th_use_engine */

void th_use_engine(int kind) { th_engine = kind; }

/* The engine for o->engine = auto under th_engine. */
static int th_engine_for(const lbmc_model *m, const lbmc_run_options *o)
{
  lbmc_run_options s = *o;
  if (o->engine != LBMC_ENGINE_AUTO) return o->engine;
  if (th_engine != TH_PER_SERVER) return th_engine;
  s.engine = LBMC_ENGINE_SERVERS;
  return lbmc_run_engine(m, &s, NULL, 0) ? LBMC_ENGINE_SERVERS : LBMC_ENGINE_GENERAL;
}

int th_simulate(const lbmc_model *m, const lbmc_run_options *o, long point, long replicas,
                long seed, th_result *res)
{
  return th_simulate_noted(m, o, point, replicas, seed, res, NULL, 0);
}

int th_simulate_noted(const lbmc_model *m, const lbmc_run_options *given, long point, long replicas,
                      long seed, th_result *res, char *note, size_t len)
{
  lbmc_replica *rep = NULL;
  lbmc_point *p = NULL;
  const lbmc_estimates *e;
  lbmc_run_options ro = *given;
  const lbmc_run_options *o = &ro;
  int rc = 1;
  ro.engine = th_engine_for(m, given);
  memset(res, 0, sizeof *res);
  res->J = lbmc_model_pools(m);
  res->K = (int)o->tail_k;
  res->total = lbmc_metric_run_total(res->J, res->K, o->pairs);
  res->replicas = replicas;
  res->mean = malloc(sizeof *res->mean * res->total * 6);
  if (!res->mean) return 1;
  res->hw = res->mean + res->total;
  res->se = res->hw + res->total;
  res->ub = res->se + res->total;
  res->lo = res->ub + res->total;
  res->hi = res->lo + res->total;
  if (lbmc_replica_create(m, o, &rep) || lbmc_point_create(m, o, replicas, &p)) {
    fprintf(stderr, "th_simulate: the replicas cannot be set up\n");
    goto done;
  }
  if (note) snprintf(note, len, "%s", lbmc_replica_init_note(rep));
  for (long r = 0; r < replicas; r++) {
    lbmc_unit u = {point, point, r, replicas, seed, 0, replicas == 1};
    const void *rec;
    size_t size;
    int used;
    if (lbmc_replica_record(rep, &u, &rec, &size) || lbmc_point_add(p, rec, size, &used)) goto done;
  }
  if (lbmc_point_reduce(p, replicas)) goto done;
  e = lbmc_point_estimates(p);
  res->status = lbmc_point_verdict(p)->status;
  res->arrivals = lbmc_model_lambda(m) * (double)lbmc_model_n(m) * lbmc_point_verdict(p)->time_used;
  memcpy(res->mean, e->estimate, sizeof *res->mean * res->total);
  memcpy(res->hw, e->half_width, sizeof *res->mean * res->total);
  memcpy(res->se, e->std_err, sizeof *res->mean * res->total);
  memcpy(res->ub, e->upper_bound, sizeof *res->mean * res->total);
  memcpy(res->lo, e->lower, sizeof *res->mean * res->total);
  memcpy(res->hi, e->upper, sizeof *res->mean * res->total);
  rc = 0;
done:
  lbmc_point_destroy(&p);
  lbmc_replica_destroy(&rep);
  return rc;
}

lbmc_model *th_model(long n, double lambda, const char *pools, const char *policy, long routers)
{
  double beta[LBMC_MAX_POOLS], mu[LBMC_MAX_POOLS];
  long buffer[LBMC_MAX_POOLS];
  int J = 0;
  lbmc_model *m = NULL;
  char buf[256], *save = NULL;
  snprintf(buf, sizeof buf, "%s", pools);
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), J++) {
    char *b = strrchr(tok, ':');
    beta[J] = atof(tok);
    mu[J] = atof(strchr(tok, ':') + 1);
    buffer[J] = strcmp(b + 1, "inf") == 0 ? LBMC_BUFFER_INF : atol(b + 1);
  }
  if (lbmc_model_create(&m) || lbmc_model_set_n(m, n) || lbmc_model_set_lambda(m, lambda) ||
      lbmc_model_set_pools(m, J, beta, mu, buffer) || lbmc_model_set_policy(m, policy) ||
      lbmc_model_set_routers(m, routers) || lbmc_model_setup(m)) {
    fprintf(stderr, "bad test model\n");
    exit(2);
  }
  return m;
}

void th_run(lbmc_model *m, double time, double warmup, long point, long replicas, long seed,
            th_result *r)
{
  lbmc_run_options o;
  lbmc_run_options_default(&o);
  o.time = time;
  o.warmup = warmup;
  if (th_simulate(m, &o, point, replicas, seed, r)) {
    fprintf(stderr, "simulation failed\n");
    exit(1);
  }
}

void th_result_free(th_result *res)
{
  free(res->mean);
  res->mean = res->hw = res->se = res->ub = res->lo = res->hi = NULL;
}

size_t th_index(const th_result *r, const char *name, int j, int k)
{
  int i = lbmc_metric_find(name);
  size_t off = lbmc_metric_offset(i, r->J, r->K);
  const lbmc_metric_info *info = lbmc_metric_get(i);
  if (info->shape == LBMC_SHAPE_POOL) return off + (size_t)j;
  if (info->shape == LBMC_SHAPE_POOL_K) return off + (size_t)j * r->K + (size_t)(k - 1);
  return off;
}

void th_compare(th_tally *t, const th_result *r, size_t i, double exact, const char *label,
                int verbose)
{
  double est = r->mean[i], hw = r->hw[i], diff = fabs(est - exact), z;
  int covered;
  if (!(hw > 0)) { /* no variation across replicas: a structural constant */
    covered = diff <= 1e-12 * fmax(1.0, fabs(exact));
    z = covered ? 0 : INFINITY;
  } else {
    z = diff / hw;
    covered = z <= 1.0;
  }
  t->compared++;
  t->covered += covered;
  t->beyond += z > t->max_hw;
  if (z > t->worst_z || t->compared == 1) {
    t->worst_z = z;
    snprintf(t->worst, sizeof t->worst, "%s: estimate %.6g +/- %.3g, exact %.6g", label, est, hw,
             exact);
  }
  if (verbose || z > t->max_hw)
    printf("  %-58s est %12.6g +/- %-10.3g exact %12.6g  |d|/hw %6.2f%s\n", label, est, hw, exact,
           z, covered ? "" : (z > t->max_hw ? "  <-- BEYOND THE LIMIT" : "  (not covered)"));
}

int th_verdict(const th_tally *t, double min_coverage)
{
  double cov = t->compared ? (double)t->covered / (double)t->compared : 0;
  printf("compared %ld values: %ld covered (%.2f%%, required >= %.1f%%), %ld beyond %.0f "
         "half-widths (required 0)\n",
         t->compared, t->covered, 100 * cov, 100 * min_coverage, t->beyond, t->max_hw);
  printf("worst: %s (|d|/hw = %.2f)\n", t->worst, t->worst_z);
  return (cov >= min_coverage && t->beyond == 0 && t->compared > 0) ? 0 : 1;
}

void th_family_add(th_family *f, const th_result *r, size_t i, double exact, double allowance,
                   const char *label)
{
  struct th_item *it;
  if (f->m == f->cap) {
    f->cap = f->cap ? 2 * f->cap : 32;
    f->items = realloc(f->items, sizeof *f->items * (size_t)f->cap);
  }
  it = &f->items[f->m++];
  snprintf(it->label, sizeof it->label, "%s", label);
  it->est = r->mean[i];
  it->se = r->se[i];
  it->ub = r->ub[i];
  it->exact = exact;
  it->allowance = allowance;
  it->dof = r->replicas - 1;
}

void th_family_compare(th_family *f, const th_result *a, const th_result *b, const char *tag,
                       double tail_min_visits, double hist_rel)
{
  th_result d = *a;
  double *mean = malloc(sizeof *mean * a->total * 2);
  if (!mean) exit(2);
  d.mean = mean;
  d.se = mean + a->total;
  for (int mi = 0; mi < lbmc_metric_count_in(a->total, a->J, a->K); mi++) {
    const lbmc_metric_info *info = lbmc_metric_get(mi);
    size_t off = lbmc_metric_offset(mi, a->J, a->K), size = lbmc_metric_size(mi, a->J, a->K);
    for (size_t e = 0; e < size; e++) {
      size_t i = off + e;
      double allowance = 0;
      char label[sizeof f->items->label];
      if (isnan(a->mean[i]) && isnan(b->mean[i])) continue;
      if (info->shape == LBMC_SHAPE_POOL_K &&
          fmin(a->mean[i], b->mean[i]) * a->arrivals < tail_min_visits)
        continue;
      if (info->shape == LBMC_SHAPE_QUANTILE)
        allowance = hist_rel * (fabs(a->mean[i]) + fabs(b->mean[i]));
      d.mean[i] = a->mean[i] - b->mean[i];
      d.se[i] = sqrt(a->se[i] * a->se[i] + b->se[i] * b->se[i]);
      snprintf(label, sizeof label, "%s %s[%zu]", tag, info->name, e);
      th_family_add(f, &d, i, 0.0, allowance, label);
    }
  }
  free(mean);
}

int th_family_verdict(th_family *f, double alpha)
{
  double level = 1.0 - alpha / (double)f->m;
  int bad = 0;
  printf("%d comparisons, each at level 1 - %.3g/%d (Bonferroni; family error <= %.3g)\n", f->m,
         alpha, f->m, alpha);
  for (int k = 0; k < f->m; k++) {
    struct th_item *it = &f->items[k];
    double hw = lbmc_t_quantile(level, it->dof) * it->se, d = fabs(it->est - it->exact);
    /* none observed: the exact value must lie below the one-sided bound; no spread (se 0,
     * or NaN when every unit saw none or all of the events): a structural constant,
     * which must match to round-off */
    const int none = isfinite(it->ub);
    int ok = none ? it->est == 0 && it->exact >= 0 && it->exact <= it->ub
                  : isfinite(it->est) && (d <= hw + it->allowance || (!(it->se > 0) && d <= 1e-12));
    bad += !ok;
    if (none)
      printf("  %-44s none observed, < %-10.3g exact %12.6g  %s\n", it->label, it->ub, it->exact,
             ok ? "ok" : "FAIL");
    else
      printf("  %-44s est %12.6g +/- %-10.3g%s exact %12.6g  %s\n", it->label, it->est, hw,
             it->allowance > 0 ? " (+allowance)" : "", it->exact, ok ? "ok" : "FAIL");
  }
  free(f->items);
  f->items = NULL;
  f->m = f->cap = 0;
  return bad != 0;
}
