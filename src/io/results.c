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

/* Bytes of one slot of per-replica array c. */
static size_t lbmc_rep_row(const lbmc_results *res, const lbmc_replica_column *c)
{
  return lbmc_col_bytes(c->type) * (c->per_metric ? res->total : 1);
}

/* Fill count values of type t at p with "no replica": NaN, or -1 for the integers. */
static void lbmc_rep_fill(void *p, lbmc_col_type t, size_t count)
{
  for (size_t i = 0; i < count; i++) {
    if (t == LBMC_COL_F64) ((double *)p)[i] = NAN;
    if (t == LBMC_COL_I64) ((int64_t *)p)[i] = -1;
    if (t == LBMC_COL_I8) ((int8_t *)p)[i] = -1;
  }
}

/* Per-replica array c laid out again for R slots per point (from res->Rmax). */
static int lbmc_rep_relayout(const lbmc_results *res, const lbmc_replica_column *c, long R)
{
  const size_t P = (size_t)res->P, row = lbmc_rep_row(res, c);
  const size_t old = (size_t)res->Rmax, keep = old < (size_t)R ? old : (size_t)R;
  void **arr = lbmc_replica_array(c, res);
  unsigned char *fresh = malloc(row * P * (size_t)R + 1), *prev = *arr;
  if (!fresh) return -1;
  lbmc_rep_fill(fresh, c->type, row / lbmc_col_bytes(c->type) * P * (size_t)R);
  for (size_t i = 0; prev && i < P; i++)
    memcpy(fresh + i * (size_t)R * row, prev + i * old * row, keep * row);
  free(prev);
  *arr = fresh;
  return 0;
}

lbmc_err lbmc_results_reserve(lbmc_results *res, long R)
{
  long slots = res->values ? 2 * res->Rmax : 1; /* the first time exactly R, then doubling */
  if (R <= res->Rmax && res->values) return LBMC_SUCCESS;
  if (slots < R) slots = R;
  for (int k = 0; k < lbmc_replica_columns(); k++)
    if (lbmc_rep_relayout(res, lbmc_replica_column_get(k), slots))
      return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory for %ld points x %ld replicas",
                        res->P, slots);
  res->Rmax = slots;
  return LBMC_SUCCESS;
}

long lbmc_results_replicas(const lbmc_results *res)
{
  long R = 1;
  for (long i = 0; i < res->P; i++)
    if (res->pt[i].v.replicas > R) R = res->pt[i].v.replicas;
  return R;
}

/* The pair tables of r (r->pairs): one block of P x their sizes, NaN. 0, or -1. */
static int lbmc_results_pairs(lbmc_results *r)
{
  size_t total = 0, at = 0;
  double *block;
  for (int t = 0; t < LBMC_PAIR_TABLES; t++)
    total += (size_t)r->P * lbmc_pair_table_size(t, r->J, r->K + 1) * LBMC_PAIR_PARTS;
  if (!r->pairs) return 0;
  if (!(block = malloc(sizeof *block * (total + 1)))) return -1;
  for (size_t i = 0; i < total; i++) block[i] = NAN;
  for (int t = 0; t < LBMC_PAIR_TABLES; t++)
    for (int k = 0; k < LBMC_PAIR_PARTS; k++) {
      r->pair[t][k] = block + at;
      at += (size_t)r->P * lbmc_pair_table_size(t, r->J, r->K + 1);
    }
  return 0;
}

/* The per-point arrays of r (P points, J pools), every value missing (exponential
 * service, NaN speeds and verdict numbers): 0, or -1 when out of memory. */
static int lbmc_results_points(lbmc_results *r)
{
  const size_t P = (size_t)r->P, J = (size_t)r->J;
  r->pt = calloc(P ? P : 1, sizeof *r->pt);
  r->service = calloc(P * J + 1, sizeof *r->service); /* NULL: exponential */
  r->slots = malloc(sizeof *r->slots * (P * J + 1));
  r->mu_k = malloc(sizeof *r->mu_k * (P * J * LBMC_MAX_RATES + 1));
  if (!r->pt || !r->service || !r->slots || !r->mu_k) return -1;
  for (size_t i = 0; i < P * J; i++) r->slots[i] = 1;
  for (size_t i = 0; i < P * J * LBMC_MAX_RATES; i++) r->mu_k[i] = NAN;
  for (size_t i = 0; i < P; i++) {
    lbmc_verdict *v = &r->pt[i].v;
    v->time = v->warmup_used = v->time_used = v->suggested_time = NAN;
    v->halves_p = v->short_p = v->growth = v->growth_lower = v->decel_lower = NAN;
    v->relaxation_time = v->relaxation_upper = v->transient_bound = v->overload = NAN;
  }
  return 0;
}

lbmc_err lbmc_results_create(long P, long R, int J, int K, int pairs, lbmc_results **out)
{
  lbmc_results *r = calloc(1, sizeof *r);
  lbmc_err err;
  if (!r) return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory");
  r->P = P;
  r->J = J;
  r->K = K;
  r->layout = LBMC_LAYOUT_VERSION;
  r->pairs = pairs;
  r->total = lbmc_metric_run_total(J, K, pairs);
  snprintf(r->lbmc_version, sizeof r->lbmc_version, "%s", LBMC_VERSION);
  snprintf(r->revision, sizeof r->revision, "%s", lbmc_revision());
  snprintf(r->build_type, sizeof r->build_type, "%s", lbmc_build_type());
  err = lbmc_results_points(r) || lbmc_results_pairs(r)
            ? LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory for %ld points", P)
            : lbmc_estimates_alloc(&r->est, (size_t)P * r->total);
  if (!err) err = lbmc_results_reserve(r, R < 1 ? 1 : R);
  if (err) {
    lbmc_results_destroy(&r);
    return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
  }
  *out = r;
  return LBMC_SUCCESS;
}

void lbmc_results_destroy(lbmc_results **r)
{
  if (!r || !*r) return;
  for (int k = 0; k < lbmc_replica_columns(); k++)
    free(*lbmc_replica_array(lbmc_replica_column_get(k), *r));
  free((*r)->job_text);
  lbmc_grid_destroy(&(*r)->grid);
  free((*r)->pt);
  lbmc_estimates_free(&(*r)->est);
  for (size_t i = 0; (*r)->service && i < (size_t)(*r)->P * (size_t)(*r)->J; i++)
    free((*r)->service[i]);
  free((*r)->service);
  free((*r)->slots);
  free((*r)->mu_k);
  free((*r)->pair[0][0]); /* the one block of the pair tables */
  lbmc_results_transient_free(*r);
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
  lbmc_model_description d;
  const char *engine = lbmc_run_engine(m, o, NULL, 0); /* checked with the job: not NULL */
  lbmc_model_describe(m, &d);
  p->index = grid_index;
  p->n = d.n;
  p->lambda = d.lambda;
  p->rho = d.rho;
  p->d = d.d;
  p->routers = d.routers;
  p->batches = o->batches;
  p->time = o->transient[2] > 0 ? o->transient[1] - o->transient[0] : o->time;
  p->warmup = o->transient[2] > 0 ? o->transient[0] : o->warmup_auto ? NAN : o->warmup;
  snprintf(p->policy, sizeof p->policy, "%s", d.policy);
  snprintf(p->policy_name, sizeof p->policy_name, "%s", d.policy_name);
  snprintf(p->sampling, sizeof p->sampling, "%s", d.sampling);
  snprintf(p->stale, sizeof p->stale, "%s", d.stale);
  snprintf(p->engine, sizeof p->engine, "%s", engine ? engine : "");
  snprintf(p->init, sizeof p->init, "%s", lbmc_init_kind_names[o->init]);
  for (int j = 0; j < res->J; j++) {
    const lbmc_pool_description *pool = &d.pool[j];
    double *mu_k = LBMC_RES_MU_K(res, i, j);
    p->beta[j] = pool->beta;
    p->mu[j] = pool->mu;
    p->buffer[j] = pool->buffer;
    p->pool_servers[j] = pool->servers;
    LBMC_CALL(lbmc_results_set_service(res, i, j, pool->service->text));
    res->slots[(size_t)i * res->J + j] = pool->L;
    for (int k = 0; k < LBMC_MAX_RATES; k++) mu_k[k] = k < pool->L ? pool->mu_k[k] : NAN;
  }
  p->v.status = LBMC_STATUS_OK;
  p->v.reason[0] = '\0';
  p->surely_unstable = d.surely_unstable;
  return LBMC_SUCCESS;
}

/* Replica r of acc into slot r of point p: its values and weights as the point keeps
 * them, and the point's warm-up. */
static void lbmc_results_put_replica(lbmc_results *res, long p, long r, const lbmc_point *acc,
                                     double warmup)
{
  const size_t slot = (size_t)p * (size_t)res->Rmax + (size_t)r;
  lbmc_point_replica_info info;
  lbmc_point_replica(acc, r, &info);
  if (!info.present) return;
  memcpy(res->values + slot * res->total, info.values, sizeof(double) * res->total);
  memcpy(res->weights + slot * res->total, info.weights, sizeof(double) * res->total);
  res->rep_warmup[slot] = warmup;
  res->rep_cpu[slot] = info.cpu_seconds;
  res->rep_growth[slot] = info.growth;
  res->rep_events[slot] = info.events;
  res->rep_unstable[slot] = (int8_t)info.unstable;
}

lbmc_err lbmc_results_store(lbmc_results *res, long p, const lbmc_point *acc)
{
  const lbmc_verdict *v = lbmc_point_verdict(acc);
  LBMC_CALL(lbmc_results_reserve(res, v->replicas));
  res->pt[p].v = *v;
  lbmc_estimates_copy(&res->est, (size_t)p * res->total, lbmc_point_estimates(acc), 0, res->total);
  for (long r = 0; r < v->replicas; r++) lbmc_results_put_replica(res, p, r, acc, v->warmup_used);
  if (res->pairs && lbmc_point_pairs(acc)) {
    const lbmc_pair_estimates *pe = lbmc_point_pairs(acc);
    for (int k = 0; k < LBMC_PAIR_TABLES; k++) {
      const size_t size = lbmc_pair_table_size(k, res->J, res->K + 1);
      for (int part = 0; part < LBMC_PAIR_PARTS; part++)
        memcpy(res->pair[k][part] + (size_t)p * size, pe->v[k][part], sizeof(double) * size);
    }
  }
  if (res->trans) { /* a transient run: its estimates from the replicas of the verdict */
    lbmc_transient t;
    lbmc_err err;
    memset(&t, 0, sizeof t);
    LBMC_CALL(lbmc_point_transient(acc, v->replicas, &t));
    err = lbmc_results_transient_store(res, p, &t);
    lbmc_transient_free(&t);
    LBMC_CALL(err);
  }
  return LBMC_SUCCESS;
}

/* The spans of memory that hold the reduction of point i with R replicas in res (what
 * lbmc_results_store writes): its verdict, its estimates, replica slots 0 .. R - 1 of
 * every per-replica array, its pair tables; at most LBMC_POINT_SPANS, into at[] and
 * bytes[]; returns how many. */
#define LBMC_POINT_SPANS (1 + LBMC_ESTIMATE_ARRAYS + 1 + 16 + LBMC_PAIR_TABLES * LBMC_PAIR_PARTS)
static int lbmc_results_point_spans(const lbmc_results *res, long i, long R,
                                    unsigned char *at[LBMC_POINT_SPANS],
                                    size_t bytes[LBMC_POINT_SPANS])
{
  const size_t t = res->total, off = (size_t)i * t;
  double *est[LBMC_ESTIMATE_ARRAYS] = {res->est.estimate, res->est.half_width,
                                       res->est.std_err,  res->est.lower,
                                       res->est.upper,    res->est.upper_bound};
  int n = 0;
  at[n] = (unsigned char *)&res->pt[i].v, bytes[n++] = sizeof res->pt[i].v;
  for (int k = 0; k < LBMC_ESTIMATE_ARRAYS; k++)
    at[n] = (unsigned char *)(est[k] + off), bytes[n++] = sizeof(double) * t;
  at[n] = (unsigned char *)(res->est.flags + off), bytes[n++] = sizeof *res->est.flags * t;
  for (int k = 0; k < lbmc_replica_columns() && n < 1 + LBMC_ESTIMATE_ARRAYS + 1 + 16; k++) {
    const lbmc_replica_column *c = lbmc_replica_column_get(k);
    const size_t row = lbmc_rep_row(res, c);
    at[n] = (unsigned char *)*lbmc_replica_array(c, res) + (size_t)i * (size_t)res->Rmax * row;
    bytes[n++] = (size_t)R * row;
  }
  for (int k = 0; res->pairs && k < LBMC_PAIR_TABLES; k++) {
    const size_t size = lbmc_pair_table_size(k, res->J, res->K + 1);
    for (int part = 0; part < LBMC_PAIR_PARTS; part++)
      at[n] = (unsigned char *)(res->pair[k][part] + (size_t)i * size),
      bytes[n++] = sizeof(double) * size;
  }
  return n;
}

size_t lbmc_results_pack_point(const lbmc_results *res, long i, void *buf, size_t cap)
{
  unsigned char *at[LBMC_POINT_SPANS], *out = buf;
  size_t bytes[LBMC_POINT_SPANS], need = 0;
  const int n = lbmc_results_point_spans(res, i, res->pt[i].v.replicas, at, bytes);
  if (res->trans) return 0;
  for (int k = 0; k < n; k++) need += bytes[k];
  for (int k = 0; need <= cap && k < n; k++) {
    memcpy(out, at[k], bytes[k]);
    out += bytes[k];
  }
  return need;
}

lbmc_err lbmc_results_unpack_point(lbmc_results *res, long i, const void *buf, size_t len)
{
  unsigned char *at[LBMC_POINT_SPANS];
  const unsigned char *in = buf;
  size_t bytes[LBMC_POINT_SPANS], need = 0;
  lbmc_verdict v;
  int n;
  if (res->trans || len < sizeof v)
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "results: a reduced point of %zu bytes does not fit", len);
  memcpy(&v, buf, sizeof v);
  if (v.replicas < 0 || v.replicas > (long)(len / sizeof(double)))
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "results: a reduced point with %ld replicas", v.replicas);
  LBMC_CALL(lbmc_results_reserve(res, v.replicas));
  n = lbmc_results_point_spans(res, i, v.replicas, at, bytes);
  for (int k = 0; k < n; k++) need += bytes[k];
  if (need != len)
    return LBMC_ERROR(LBMC_ERR_INTERNAL,
                      "results: a reduced point of %zu bytes, where %zu were expected", len, need);
  for (int k = 0; k < n; k++) {
    memcpy(at[k], in, bytes[k]);
    in += bytes[k];
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_results_copy_point(lbmc_results *dst, long to, const lbmc_results *src, long from)
{
  const size_t t = src->total, J = (size_t)src->J;
  LBMC_CALL(lbmc_results_reserve(dst, src->Rmax));
  dst->pt[to] = src->pt[from];
  for (int k = 0; k < lbmc_replica_columns(); k++) { /* slots 0 .. src->Rmax - 1 */
    const lbmc_replica_column *c = lbmc_replica_column_get(k);
    const size_t row = lbmc_rep_row(src, c);
    memcpy((unsigned char *)*lbmc_replica_array(c, dst) + (size_t)to * (size_t)dst->Rmax * row,
           (const unsigned char *)*lbmc_replica_array(c, src) +
               (size_t)from * (size_t)src->Rmax * row,
           (size_t)src->Rmax * row);
  }
  lbmc_estimates_copy(&dst->est, (size_t)to * t, &src->est, (size_t)from * t, t);
  for (size_t j = 0; j < J; j++)
    LBMC_CALL(lbmc_results_set_service(dst, to, (int)j, LBMC_RES_SERVICE(src, from, (int)j)));
  memcpy(dst->slots + (size_t)to * J, src->slots + (size_t)from * J, sizeof(int) * J);
  memcpy(LBMC_RES_MU_K(dst, to, 0), LBMC_RES_MU_K(src, from, 0),
         sizeof(double) * J * LBMC_MAX_RATES);
  for (int k = 0; dst->pairs && src->pairs && k < LBMC_PAIR_TABLES; k++) {
    const size_t size = lbmc_pair_table_size(k, src->J, src->K + 1);
    for (int part = 0; part < LBMC_PAIR_PARTS; part++)
      memcpy(dst->pair[k][part] + (size_t)to * size, src->pair[k][part] + (size_t)from * size,
             sizeof(double) * size);
  }
  return lbmc_results_transient_copy(dst, to, src, from);
}

lbmc_err lbmc_results_subset(const lbmc_results *res, long n, lbmc_results **out)
{
  lbmc_results *r;
  long k = 0;
  lbmc_err err;
  LBMC_CALL(lbmc_results_create(n, lbmc_results_replicas(res), res->J, res->K, res->pairs, &r));
  r->job_text = strdup(res->job_text ? res->job_text : "");
  if (!r->job_text) {
    lbmc_results_destroy(&r);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory for the job text");
  }
  LBMC_CALL_GOTO(err, lbmc_grid_copy(res->grid, &r->grid), fail);
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
  if (res->trans)
    LBMC_CALL_GOTO(err, lbmc_results_transient_create(r, res->trans->T, res->trans->time), fail);
  for (long i = 0; i < res->P && k < n; i++)
    if (res->pt[i].done) LBMC_CALL_GOTO(err, lbmc_results_copy_point(r, k++, res, i), fail);
  *out = r;
  return LBMC_SUCCESS;
fail:
  lbmc_results_destroy(&r);
  return err;
}
