/* The results of a run in memory (results.h): creation with every value missing
 * (NaN, -1), replica slots grown on demand (so a file's replica axis is the replicas
 * run, not the budget), a point's parameters from its model, the reduction of a point
 * (lbmc/point.h) stored with its replicas, copies between results objects. */
#include "results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/metrics.h"
#include "lbmc/version.h"

/* The per-replica arrays of res: their place, element size, elements per slot and fill. */
typedef struct {
  void **arr;
  size_t elem, width;
  int kind; /* 0: double NaN, 1: int64 -1, 2: int8 -1 */
} lbmc_rep_array;

static int lbmc_rep_arrays(lbmc_results *r, lbmc_rep_array *a)
{
  int n = 0;
  a[n++] = (lbmc_rep_array){(void **)&r->values, sizeof(double), r->total, 0};
  a[n++] = (lbmc_rep_array){(void **)&r->weights, sizeof(double), r->total, 0};
  a[n++] = (lbmc_rep_array){(void **)&r->rep_warmup, sizeof(double), 1, 0};
  a[n++] = (lbmc_rep_array){(void **)&r->rep_cpu, sizeof(double), 1, 0};
  a[n++] = (lbmc_rep_array){(void **)&r->rep_growth, sizeof(double), 1, 0};
  a[n++] = (lbmc_rep_array){(void **)&r->rep_events, sizeof(int64_t), 1, 1};
  a[n++] = (lbmc_rep_array){(void **)&r->rep_unstable, sizeof(int8_t), 1, 2};
  return n;
}

/* Fill count elements of kind at p with "no replica". */
static void lbmc_rep_fill(void *p, int kind, size_t count)
{
  for (size_t i = 0; i < count; i++) {
    if (kind == 0) ((double *)p)[i] = NAN;
    if (kind == 1) ((int64_t *)p)[i] = -1;
    if (kind == 2) ((int8_t *)p)[i] = -1;
  }
}

/* One per-replica array laid out again for R slots per point (from res->Rmax). */
static int lbmc_rep_relayout(const lbmc_results *res, const lbmc_rep_array *a, long R)
{
  const size_t P = (size_t)res->P, row = a->elem * a->width;
  const size_t old = (size_t)res->Rmax, keep = old < (size_t)R ? old : (size_t)R;
  unsigned char *fresh = malloc(row * P * (size_t)R + 1), *prev = *a->arr;
  if (!fresh) return -1;
  lbmc_rep_fill(fresh, a->kind, a->width * P * (size_t)R);
  for (size_t i = 0; prev && i < P; i++)
    memcpy(fresh + i * (size_t)R * row, prev + i * old * row, keep * row);
  free(prev);
  *a->arr = fresh;
  return 0;
}

lbmc_err lbmc_results_reserve(lbmc_results *res, long R)
{
  lbmc_rep_array a[8];
  int n = lbmc_rep_arrays(res, a);
  long slots = res->values ? 2 * res->Rmax : 1; /* the first time exactly R, then doubling */
  if (R <= res->Rmax && res->values) return LBMC_SUCCESS;
  if (slots < R) slots = R;
  for (int k = 0; k < n; k++)
    if (lbmc_rep_relayout(res, &a[k], slots))
      return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory for %ld points x %ld replicas",
                        res->P, slots);
  res->Rmax = slots;
  return LBMC_SUCCESS;
}

long lbmc_results_replicas(const lbmc_results *res)
{
  long R = 1;
  for (long i = 0; i < res->P; i++)
    if (res->pt[i].replicas > R) R = res->pt[i].replicas;
  return R;
}

lbmc_err lbmc_results_create(long P, long R, int J, int K, lbmc_results **out)
{
  lbmc_results *r = calloc(1, sizeof *r);
  const size_t PT = (size_t)P * lbmc_metric_total(J, K);
  if (!r) return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory");
  r->P = P;
  r->J = J;
  r->K = K;
  r->layout = LBMC_LAYOUT_VERSION;
  r->total = lbmc_metric_total(J, K);
  snprintf(r->lbmc_version, sizeof r->lbmc_version, "%s", LBMC_VERSION);
  snprintf(r->revision, sizeof r->revision, "%s", lbmc_revision());
  snprintf(r->build_type, sizeof r->build_type, "%s", lbmc_build_type());
  r->pt = calloc((size_t)P ? (size_t)P : 1, sizeof *r->pt);
  r->mean = malloc(sizeof *r->mean * (PT * 6 + 1));
  r->flags = calloc(PT + 1, sizeof *r->flags);
  r->service = calloc((size_t)P * (size_t)J + 1, sizeof *r->service);
  r->slots = malloc(sizeof *r->slots * ((size_t)P * (size_t)J + 1));
  r->mu_k = malloc(sizeof *r->mu_k * ((size_t)P * (size_t)J * LBMC_MAX_RATES + 1));
  if (!r->pt || !r->mean || !r->flags || !r->service || !r->slots || !r->mu_k ||
      lbmc_results_reserve(r, R < 1 ? 1 : R)) {
    lbmc_results_destroy(&r);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory for %ld points x %ld replicas", P,
                      R);
  }
  r->half_width = r->mean + PT;
  r->std_err = r->half_width + PT;
  r->lower = r->std_err + PT;
  r->upper = r->lower + PT;
  r->upper_bound = r->upper + PT;
  for (size_t i = 0; i < PT * 6; i++) r->mean[i] = NAN;
  for (size_t i = 0; i < (size_t)P * (size_t)J; i++) r->slots[i] = 1;
  for (size_t i = 0; i < (size_t)P * (size_t)J * LBMC_MAX_RATES; i++) r->mu_k[i] = NAN;
  for (long i = 0; i < P; i++) {
    lbmc_point_info *p = &r->pt[i];
    p->time_run = p->warmup_used = p->time_used = p->suggested_time = NAN;
    p->halves_p = p->short_p = p->growth = p->growth_lower = p->decel_lower = NAN;
  }
  *out = r;
  return LBMC_SUCCESS;
}

void lbmc_results_destroy(lbmc_results **r)
{
  lbmc_rep_array a[8];
  int n;
  if (!r || !*r) return;
  n = lbmc_rep_arrays(*r, a);
  for (int k = 0; k < n; k++) free(*a[k].arr);
  free((*r)->job_text);
  lbmc_grid_destroy(&(*r)->grid);
  free((*r)->pt);
  free((*r)->mean);
  free((*r)->flags);
  for (size_t i = 0; (*r)->service && i < (size_t)(*r)->P * (size_t)(*r)->J; i++)
    free((*r)->service[i]);
  free((*r)->service);
  free((*r)->slots);
  free((*r)->mu_k);
  free(*r);
  *r = NULL;
}

const char *lbmc_results_service(const lbmc_results *res, long i, int j)
{
  const char *t = res->service[(size_t)i * (size_t)res->J + (size_t)j];
  return t ? t : "exponential";
}

lbmc_err lbmc_results_set_service(lbmc_results *res, long i, int j, const char *text)
{
  char **at = &res->service[(size_t)i * (size_t)res->J + (size_t)j], *copy = NULL;
  if (text && strcmp(text, "exponential") != 0 && !(copy = strdup(text)))
    return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory for a service text");
  free(*at);
  *at = copy;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_results_set_point(lbmc_results *res, long i, long grid_index, const lbmc_model *m,
                                const lbmc_run_options *o)
{
  lbmc_point_info *p = &res->pt[i];
  p->index = grid_index;
  p->n = lbmc_model_n(m);
  p->lambda = lbmc_model_lambda(m);
  p->rho = lbmc_model_rho(m);
  p->d = lbmc_model_policy_param(m);
  p->routers = lbmc_model_routers(m);
  p->batches = o->batches;
  p->time = o->time;
  p->warmup = o->warmup_auto ? NAN : o->warmup;
  snprintf(p->policy, sizeof p->policy, "%s", lbmc_model_policy(m));
  snprintf(p->policy_name, sizeof p->policy_name, "%s", lbmc_model_policy_name(m));
  snprintf(p->sampling, sizeof p->sampling, "%s", lbmc_model_sampling(m));
  snprintf(p->stale, sizeof p->stale, "%s", lbmc_model_stale(m));
  {
    const char *engine = lbmc_run_engine(m, o, NULL, 0); /* checked with the job: not NULL */
    snprintf(p->engine, sizeof p->engine, "%s", engine ? engine : "");
  }
  snprintf(p->init, sizeof p->init, "%s", lbmc_init_kind_names[o->init]);
  for (int j = 0; j < res->J; j++) {
    p->beta[j] = lbmc_model_beta(m, j);
    p->mu[j] = lbmc_model_mu(m, j);
    p->buffer[j] = lbmc_model_buffer(m, j);
    p->pool_servers[j] = lbmc_model_pool_servers(m, j);
    {
      const double *rates;
      int L = lbmc_model_rates(m, j, &rates);
      double *mu_k = LBMC_RES_MU_K(res, i, j);
      LBMC_CALL(lbmc_results_set_service(res, i, j, lbmc_model_service(m, j)->text));
      res->slots[(size_t)i * res->J + j] = L;
      for (int k = 0; k < LBMC_MAX_RATES; k++) mu_k[k] = k < L ? rates[k] : NAN;
    }
  }
  p->status = LBMC_STATUS_OK;
  p->reason[0] = '\0';
  p->surely_unstable = lbmc_model_surely_unstable(m);
  return LBMC_SUCCESS;
}

/* Replica i of acc into slot r of point p. */
static void lbmc_results_put_replica(lbmc_results *res, long p, long r, const lbmc_point *acc,
                                     double warmup)
{
  const size_t slot = (size_t)p * (size_t)res->Rmax + (size_t)r;
  lbmc_point_replica_info info;
  double *w = res->weights + slot * res->total;
  lbmc_point_replica(acc, r, &info);
  if (!info.present) return;
  memcpy(res->values + slot * res->total, info.values, sizeof(double) * res->total);
  for (int i = 0; i < LBMC_METRICS; i++) {
    const size_t off = lbmc_metric_offset(i, res->J, res->K),
                 len = lbmc_metric_size(i, res->J, res->K);
    for (size_t e = 0; e < len; e++) {
      double y, x;
      w[off + e] = lbmc_metric_terms(i, e, info.sums, res->J, res->K, res->pt[p].pool_servers,
                                     res->pt[p].n, &y, &x) == LBMC_TERM_QUANTILE
                       ? NAN
                       : x;
    }
  }
  res->rep_warmup[slot] = warmup;
  res->rep_cpu[slot] = info.cpu_seconds;
  res->rep_growth[slot] = info.growth;
  res->rep_events[slot] = info.events;
  res->rep_unstable[slot] = (int8_t)info.unstable;
}

lbmc_err lbmc_results_store(lbmc_results *res, long p, const lbmc_point *acc)
{
  const lbmc_verdict *v = lbmc_point_verdict(acc);
  const lbmc_estimates *e = lbmc_point_estimates(acc);
  const size_t t = res->total, at = (size_t)p * t;
  lbmc_point_info *pt = &res->pt[p];
  LBMC_CALL(lbmc_results_reserve(res, v->replicas));
  pt->replicas = v->replicas;
  pt->status = v->status;
  snprintf(pt->reason, sizeof pt->reason, "%s", v->reason);
  lbmc_evidence_names(v->evidence, pt->evidence, sizeof pt->evidence);
  pt->level = v->level;
  pt->time_run = v->time;
  pt->warmup_used = v->warmup_used;
  pt->time_used = v->time_used;
  pt->suggested_time = v->suggested_time;
  pt->warmup_near_cap = v->warmup_near_cap;
  pt->halves_p = v->halves_p;
  pt->short_p = v->short_p;
  pt->growth = v->growth;
  pt->growth_lower = v->growth_lower;
  pt->decel_lower = v->decel_lower;
  memcpy(res->mean + at, e->estimate, sizeof(double) * t);
  memcpy(res->half_width + at, e->half_width, sizeof(double) * t);
  memcpy(res->std_err + at, e->std_err, sizeof(double) * t);
  memcpy(res->lower + at, e->lower, sizeof(double) * t);
  memcpy(res->upper + at, e->upper, sizeof(double) * t);
  memcpy(res->upper_bound + at, e->upper_bound, sizeof(double) * t);
  for (size_t k = 0; k < t; k++) res->flags[at + k] = e->flags[k];
  for (long r = 0; r < v->replicas; r++) lbmc_results_put_replica(res, p, r, acc, v->warmup_used);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_results_copy_point(lbmc_results *dst, long to, const lbmc_results *src, long from)
{
  lbmc_rep_array a[8], b[8];
  const size_t t = src->total, J = (size_t)src->J;
  const int n = lbmc_rep_arrays(dst, a);
  LBMC_CALL(lbmc_results_reserve(dst, src->Rmax));
  lbmc_rep_arrays((lbmc_results *)src, b);
  dst->pt[to] = src->pt[from];
  for (int k = 0; k < n; k++) { /* slots 0 .. src->Rmax - 1; the rest stay empty */
    const size_t row = a[k].elem * a[k].width;
    memcpy((unsigned char *)*a[k].arr + (size_t)to * (size_t)dst->Rmax * row,
           (const unsigned char *)*b[k].arr + (size_t)from * (size_t)src->Rmax * row,
           (size_t)src->Rmax * row);
  }
  for (int k = 0; k < 6; k++) /* mean .. upper_bound, P x total apart */
    memcpy(dst->mean + (size_t)k * (size_t)dst->P * t + (size_t)to * t,
           src->mean + (size_t)k * (size_t)src->P * t + (size_t)from * t, sizeof(double) * t);
  memcpy(dst->flags + (size_t)to * t, src->flags + (size_t)from * t, sizeof(int64_t) * t);
  for (size_t j = 0; j < J; j++)
    LBMC_CALL(lbmc_results_set_service(dst, to, (int)j, LBMC_RES_SERVICE(src, from, (int)j)));
  memcpy(dst->slots + (size_t)to * J, src->slots + (size_t)from * J, sizeof(int) * J);
  memcpy(LBMC_RES_MU_K(dst, to, 0), LBMC_RES_MU_K(src, from, 0),
         sizeof(double) * J * LBMC_MAX_RATES);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_results_subset(const lbmc_results *res, long n, lbmc_results **out)
{
  lbmc_results *r;
  long k = 0;
  LBMC_CALL(lbmc_results_create(n, lbmc_results_replicas(res), res->J, res->K, &r));
  r->job_text = strdup(res->job_text ? res->job_text : "");
  if (lbmc_grid_copy(res->grid, &r->grid)) {
    lbmc_results_destroy(&r);
    return LBMC_ERR_MEMORY;
  }
  memcpy(r->lbmc_version, res->lbmc_version, sizeof r->lbmc_version);
  memcpy(r->revision, res->revision, sizeof r->revision);
  memcpy(r->build_type, res->build_type, sizeof r->build_type);
  memcpy(r->created, res->created, sizeof r->created);
  memcpy(r->shard, res->shard, sizeof r->shard);
  r->seed = res->seed;
  r->mpi_ranks = res->mpi_ranks;
  r->wall_seconds = res->wall_seconds;
  r->confidence = res->confidence;
  r->complete = res->complete;
  for (long i = 0; i < res->P && k < n; i++)
    if (res->pt[i].done) {
      lbmc_err err = lbmc_results_copy_point(r, k++, res, i);
      if (err) {
        lbmc_results_destroy(&r);
        return err;
      }
    }
  *out = r;
  return LBMC_SUCCESS;
}
