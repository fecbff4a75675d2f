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

/* Replicas a block of rows holds when a point's rows are copied or read in pieces. */
#define LBMC_ROWS_BLOCK 256

void lbmc_results_rows_restart(lbmc_results *res, long i)
{
  if (res->rep_count[i] > 0 &&
      res->rep_first[i] + res->rep_count[i] == lbmc_rep_store_rows(res->reps))
    lbmc_rep_store_truncate(res->reps, res->rep_first[i]);
  res->rep_first[i] = lbmc_rep_store_rows(res->reps);
  res->rep_count[i] = 0;
}

lbmc_err lbmc_results_replica_rows(const lbmc_results *res, long p, long r0, long n, void *out)
{
  const size_t row = lbmc_replica_row_bytes(res);
  const long have = res->rep_count[p] > r0 ? res->rep_count[p] - r0 : 0, in = have < n ? have : n;
  if (in > 0) LBMC_CALL(lbmc_rep_store_read(res->reps, res->rep_first[p] + r0, in, out));
  for (long r = in; r < n; r++)
    lbmc_replica_row_missing(res, (unsigned char *)out + (size_t)r * row);
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

lbmc_err lbmc_results_create(long P, int J, int K, int pairs, lbmc_results **out)
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
  if (!err && (!(r->rep_first = calloc((size_t)P + 1, sizeof *r->rep_first)) ||
               !(r->rep_count = calloc((size_t)P + 1, sizeof *r->rep_count))))
    err = LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory for %ld points", P);
  if (!err) err = lbmc_rep_store_create(lbmc_replica_row_bytes(r), &r->reps);
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
  lbmc_rep_store_destroy(&(*r)->reps);
  free((*r)->rep_first);
  free((*r)->rep_count);
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

/* Replica r of acc as a row (lbmc_replica_row_bytes): its values and weights as the
 * point keeps them, the point's warm-up, its CPU seconds, growth, events and whether it
 * hit the customer cap; a missing row if the point has not kept it. */
static lbmc_err lbmc_results_replica_row(const lbmc_results *res, long r, const lbmc_point *acc,
                                         double warmup, unsigned char *row)
{
  lbmc_point_replica_info info;
  lbmc_replica_row_missing(res, row);
  LBMC_CALL(lbmc_point_replica(acc, r, &info));
  if (!info.present) return LBMC_SUCCESS;
  for (int k = 0; k < lbmc_replica_columns(); k++) {
    unsigned char *at = row + lbmc_replica_column_offset(res, k);
    const int8_t unstable = (int8_t)info.unstable;
    const int64_t ev = info.events;
    switch (k) { /* the columns in the order of lbmc_replica_column_get */
    case 0: memcpy(at, info.values, sizeof(double) * res->total); break;
    case 1: memcpy(at, info.weights, sizeof(double) * res->total); break;
    case 2: memcpy(at, &warmup, sizeof warmup); break;
    case 3: memcpy(at, &ev, sizeof ev); break;
    case 4: memcpy(at, &info.cpu_seconds, sizeof info.cpu_seconds); break;
    case 5: memcpy(at, &info.growth, sizeof info.growth); break;
    default: memcpy(at, &unstable, sizeof unstable); break;
    }
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_results_store(lbmc_results *res, long p, const lbmc_point *acc)
{
  const lbmc_verdict *v = lbmc_point_verdict(acc);
  const size_t bytes = lbmc_replica_row_bytes(res);
  unsigned char *rows = malloc(bytes * LBMC_ROWS_BLOCK);
  lbmc_err err = LBMC_SUCCESS;
  if (!rows) return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory");
  res->pt[p].v = *v;
  lbmc_estimates_copy(&res->est, (size_t)p * res->total, lbmc_point_estimates(acc), 0, res->total);
  lbmc_results_rows_restart(res, p);
  for (long r0 = 0; !err && r0 < v->replicas; r0 += LBMC_ROWS_BLOCK) {
    const long n = v->replicas - r0 < LBMC_ROWS_BLOCK ? v->replicas - r0 : LBMC_ROWS_BLOCK;
    for (long r = 0; !err && r < n; r++)
      err = lbmc_results_replica_row(res, r0 + r, acc, v->warmup_used, rows + (size_t)r * bytes);
    if (!err) err = lbmc_rep_store_append(res->reps, rows, n);
    if (!err) res->rep_count[p] += n;
  }
  free(rows);
  LBMC_CALL(err);
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
    memset(&t, 0, sizeof t);
    LBMC_CALL(lbmc_point_transient(acc, v->replicas, &t));
    err = lbmc_results_transient_store(res, p, &t);
    lbmc_transient_free(&t);
    LBMC_CALL(err);
  }
  return LBMC_SUCCESS;
}

/* The spans of memory that hold the reduction of point i in res but its replicas (what
 * lbmc_results_store writes): its verdict, its estimates, its pair tables; at most
 * LBMC_POINT_SPANS, into at[] and bytes[]; returns how many. */
#define LBMC_POINT_SPANS (1 + LBMC_ESTIMATE_ARRAYS + 1 + LBMC_PAIR_TABLES * LBMC_PAIR_PARTS)
static int lbmc_results_point_spans(const lbmc_results *res, long i,
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
  for (int k = 0; res->pairs && k < LBMC_PAIR_TABLES; k++) {
    const size_t size = lbmc_pair_table_size(k, res->J, res->K + 1);
    for (int part = 0; part < LBMC_PAIR_PARTS; part++)
      at[n] = (unsigned char *)(res->pair[k][part] + (size_t)i * size),
      bytes[n++] = sizeof(double) * size;
  }
  return n;
}

lbmc_err lbmc_results_pack_point(const lbmc_results *res, long i, void *buf, size_t cap,
                                 size_t *need)
{
  unsigned char *at[LBMC_POINT_SPANS], *out = buf;
  size_t bytes[LBMC_POINT_SPANS];
  const long R = res->pt[i].v.replicas;
  const int n = lbmc_results_point_spans(res, i, at, bytes);
  *need = 0;
  if (res->trans) return LBMC_SUCCESS;
  for (int k = 0; k < n; k++) *need += bytes[k];
  *need += (size_t)R * lbmc_replica_row_bytes(res);
  if (*need > cap) return LBMC_SUCCESS;
  for (int k = 0; k < n; k++) {
    memcpy(out, at[k], bytes[k]);
    out += bytes[k];
  }
  return lbmc_results_replica_rows(res, i, 0, R, out);
}

lbmc_err lbmc_results_unpack_point(lbmc_results *res, long i, const void *buf, size_t len)
{
  unsigned char *at[LBMC_POINT_SPANS];
  const unsigned char *in = buf;
  const size_t row = lbmc_replica_row_bytes(res);
  size_t bytes[LBMC_POINT_SPANS], need = 0;
  lbmc_verdict v;
  int n;
  if (res->trans || len < sizeof v)
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "results: a reduced point of %zu bytes does not fit", len);
  memcpy(&v, buf, sizeof v);
  if (v.replicas < 0 || v.replicas > (long)(len / row))
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "results: a reduced point with %ld replicas", v.replicas);
  n = lbmc_results_point_spans(res, i, at, bytes);
  for (int k = 0; k < n; k++) need += bytes[k];
  need += (size_t)v.replicas * row;
  if (need != len)
    return LBMC_ERROR(LBMC_ERR_INTERNAL,
                      "results: a reduced point of %zu bytes, where %zu were expected", len, need);
  for (int k = 0; k < n; k++) {
    memcpy(at[k], in, bytes[k]);
    in += bytes[k];
  }
  lbmc_results_rows_restart(res, i);
  LBMC_CALL(lbmc_rep_store_append(res->reps, in, v.replicas));
  res->rep_count[i] = v.replicas;
  return LBMC_SUCCESS;
}

/* Point from's replica rows of src appended to dst as point to's. */
static lbmc_err lbmc_results_copy_rows(lbmc_results *dst, long to, const lbmc_results *src,
                                       long from)
{
  const size_t row = lbmc_replica_row_bytes(src);
  const long R = src->rep_count[from];
  unsigned char *rows = malloc(row * LBMC_ROWS_BLOCK);
  lbmc_err err = LBMC_SUCCESS;
  if (!rows) return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory");
  lbmc_results_rows_restart(dst, to);
  for (long r0 = 0; !err && r0 < R; r0 += LBMC_ROWS_BLOCK) {
    const long n = R - r0 < LBMC_ROWS_BLOCK ? R - r0 : LBMC_ROWS_BLOCK;
    err = lbmc_results_replica_rows(src, from, r0, n, rows);
    if (!err) err = lbmc_rep_store_append(dst->reps, rows, n);
    if (!err) dst->rep_count[to] += n;
  }
  free(rows);
  return err;
}

lbmc_err lbmc_results_copy_point(lbmc_results *dst, long to, const lbmc_results *src, long from)
{
  const size_t t = src->total, J = (size_t)src->J;
  dst->pt[to] = src->pt[from];
  LBMC_CALL(lbmc_results_copy_rows(dst, to, src, from));
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
  LBMC_CALL(lbmc_results_create(n, res->J, res->K, res->pairs, &r));
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
