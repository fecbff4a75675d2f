/* The results of a run in memory (results.h): creation with every value missing
 * (NaN, -1), a point's parameters from its model, replicas, the reduction of a point
 * to its estimates, copies between results objects. */
#include "results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/metrics.h"
#include "lbmc/version.h"

lbmc_err lbmc_results_create(long P, long Rmax, int J, int K, lbmc_results **out)
{
  lbmc_results *r = calloc(1, sizeof *r);
  size_t slots = (size_t)P * (size_t)Rmax;
  if (!r) return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory");
  r->P = P;
  r->Rmax = Rmax;
  r->J = J;
  r->K = K;
  r->total = lbmc_metric_total(J, K);
  snprintf(r->lbmc_version, sizeof r->lbmc_version, "%s", LBMC_VERSION);
  snprintf(r->revision, sizeof r->revision, "%s", lbmc_revision());
  snprintf(r->build_type, sizeof r->build_type, "%s", lbmc_build_type());
  r->pt = calloc((size_t)P ? (size_t)P : 1, sizeof *r->pt);
  r->values = malloc(sizeof *r->values * (slots * r->total + 1));
  r->rep_warmup = malloc(sizeof *r->rep_warmup * (slots + 1));
  r->rep_cpu = malloc(sizeof *r->rep_cpu * (slots + 1));
  r->rep_growth = malloc(sizeof *r->rep_growth * (slots + 1));
  r->rep_events = malloc(sizeof *r->rep_events * (slots + 1));
  r->rep_unstable = malloc(sizeof *r->rep_unstable * (slots + 1));
  r->mean = malloc(sizeof *r->mean * ((size_t)P * r->total * 3 + 1));
  r->service = calloc((size_t)P * (size_t)J * LBMC_SERVICE_TEXT + 1, 1);
  r->slots = malloc(sizeof *r->slots * ((size_t)P * (size_t)J + 1));
  r->mu_k = malloc(sizeof *r->mu_k * ((size_t)P * (size_t)J * LBMC_MAX_RATES + 1));
  if (!r->pt || !r->values || !r->rep_warmup || !r->rep_cpu || !r->rep_growth || !r->rep_events ||
      !r->rep_unstable || !r->mean || !r->service || !r->slots || !r->mu_k) {
    lbmc_results_destroy(&r);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory for %ld points x %ld replicas", P,
                      Rmax);
  }
  r->half_width = r->mean + (size_t)P * r->total;
  r->std_err = r->half_width + (size_t)P * r->total;
  for (size_t i = 0; i < slots * r->total; i++) r->values[i] = NAN;
  for (size_t i = 0; i < slots; i++) {
    r->rep_warmup[i] = r->rep_cpu[i] = r->rep_growth[i] = NAN;
    r->rep_events[i] = -1;
    r->rep_unstable[i] = -1;
  }
  for (size_t i = 0; i < (size_t)P * r->total * 3; i++) r->mean[i] = NAN;
  for (size_t i = 0; i < (size_t)P * (size_t)J; i++) {
    snprintf(r->service + i * LBMC_SERVICE_TEXT, LBMC_SERVICE_TEXT, "exponential");
    r->slots[i] = 1;
  }
  for (size_t i = 0; i < (size_t)P * (size_t)J * LBMC_MAX_RATES; i++) r->mu_k[i] = NAN;
  *out = r;
  return LBMC_SUCCESS;
}

void lbmc_results_destroy(lbmc_results **r)
{
  if (!r || !*r) return;
  free((*r)->job_text);
  lbmc_grid_destroy(&(*r)->grid);
  free((*r)->pt);
  free((*r)->values);
  free((*r)->rep_warmup);
  free((*r)->rep_cpu);
  free((*r)->rep_growth);
  free((*r)->rep_events);
  free((*r)->rep_unstable);
  free((*r)->mean);
  free((*r)->service);
  free((*r)->slots);
  free((*r)->mu_k);
  free(*r);
  *r = NULL;
}

void lbmc_results_set_point(lbmc_results *res, long i, long grid_index, const lbmc_model *m,
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
  for (int j = 0; j < res->J; j++) {
    p->beta[j] = lbmc_model_beta(m, j);
    p->mu[j] = lbmc_model_mu(m, j);
    p->buffer[j] = lbmc_model_buffer(m, j);
    p->pool_servers[j] = lbmc_model_pool_servers(m, j);
    {
      const double *rates;
      int L = lbmc_model_rates(m, j, &rates);
      double *mu_k = LBMC_RES_MU_K(res, i, j);
      snprintf(LBMC_RES_SERVICE(res, i, j), LBMC_SERVICE_TEXT, "%s",
               lbmc_model_service(m, j)->text);
      res->slots[(size_t)i * res->J + j] = L;
      for (int k = 0; k < LBMC_MAX_RATES; k++) mu_k[k] = k < L ? rates[k] : NAN;
    }
  }
  p->status = LBMC_STATUS_OK;
  p->reason[0] = '\0';
  p->surely_unstable = lbmc_model_surely_unstable(m);
  p->runaway_fraction = o->runaway_fraction;
}

void lbmc_results_set_replica(lbmc_results *res, long i, long r, const lbmc_replica_result *rr)
{
  size_t slot = (size_t)i * (size_t)res->Rmax + (size_t)r;
  memcpy(res->values + slot * res->total, rr->values, sizeof *rr->values * res->total);
  res->rep_warmup[slot] = rr->warmup;
  res->rep_cpu[slot] = rr->cpu_seconds;
  res->rep_growth[slot] = rr->growth;
  res->rep_events[slot] = rr->events;
  res->rep_unstable[slot] = rr->status == LBMC_STATUS_UNSTABLE;
}

void lbmc_results_reduce(lbmc_results *res, long i, const double *batch_values)
{
  lbmc_point_info *p = &res->pt[i];
  size_t slot = (size_t)i * (size_t)res->Rmax;
  double *mean = res->mean + (size_t)i * res->total;
  double *hw = res->half_width + (size_t)i * res->total;
  double *se = res->std_err + (size_t)i * res->total;
  lbmc_run_options o;
  lbmc_run_options_default(&o);
  o.runaway_fraction = p->runaway_fraction;
  if (lbmc_point_unstable(&o, p->surely_unstable, p->rho, p->replicas, res->rep_unstable + slot,
                          res->rep_growth + slot, p->reason, sizeof p->reason)) {
    p->status = LBMC_STATUS_UNSTABLE;
    for (size_t k = 0; k < res->total; k++) mean[k] = hw[k] = se[k] = NAN;
    return;
  }
  lbmc_estimate(res->values + slot * res->total, p->replicas,
                p->replicas == 1 ? batch_values : NULL, p->batches, res->total, res->confidence,
                mean, hw, se);
}

void lbmc_results_copy_point(lbmc_results *dst, long to, const lbmc_results *src, long from)
{
  size_t Rs = (size_t)src->Rmax, Rd = (size_t)dst->Rmax, t = src->total;
  dst->pt[to] = src->pt[from];
  memcpy(dst->values + (size_t)to * Rd * t, src->values + (size_t)from * Rs * t,
         sizeof(double) * Rs * t);
  memcpy(dst->rep_warmup + (size_t)to * Rd, src->rep_warmup + (size_t)from * Rs,
         sizeof(double) * Rs);
  memcpy(dst->rep_cpu + (size_t)to * Rd, src->rep_cpu + (size_t)from * Rs, sizeof(double) * Rs);
  memcpy(dst->rep_growth + (size_t)to * Rd, src->rep_growth + (size_t)from * Rs,
         sizeof(double) * Rs);
  memcpy(dst->rep_events + (size_t)to * Rd, src->rep_events + (size_t)from * Rs,
         sizeof(int64_t) * Rs);
  memcpy(dst->rep_unstable + (size_t)to * Rd, src->rep_unstable + (size_t)from * Rs,
         sizeof(int8_t) * Rs);
  memcpy(dst->mean + (size_t)to * t, src->mean + (size_t)from * t, sizeof(double) * t);
  memcpy(dst->half_width + (size_t)to * t, src->half_width + (size_t)from * t, sizeof(double) * t);
  memcpy(dst->std_err + (size_t)to * t, src->std_err + (size_t)from * t, sizeof(double) * t);
  memcpy(LBMC_RES_SERVICE(dst, to, 0), LBMC_RES_SERVICE(src, from, 0),
         (size_t)src->J * LBMC_SERVICE_TEXT);
  memcpy(dst->slots + (size_t)to * dst->J, src->slots + (size_t)from * src->J,
         sizeof(int) * (size_t)src->J);
  memcpy(LBMC_RES_MU_K(dst, to, 0), LBMC_RES_MU_K(src, from, 0),
         sizeof(double) * (size_t)src->J * LBMC_MAX_RATES);
}

lbmc_err lbmc_results_subset(const lbmc_results *res, long n, lbmc_results **out)
{
  lbmc_results *r;
  long k = 0;
  LBMC_CHECK(lbmc_results_create(n, res->Rmax, res->J, res->K, &r));
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
    if (res->pt[i].done) lbmc_results_copy_point(r, k++, res, i);
  *out = r;
  return LBMC_SUCCESS;
}
