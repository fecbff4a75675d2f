/* Replicas through the engines directly (occ_harness.h). */
#include "occ_harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model_impl.h"
#include "engine/engine.h"
#include "engine/hist.h"
#include "engine/ticks.h"
#include "lbmc/rng.h"

/* Measured ticks per replica: quarters, for the growth test of lbmc_point_unstable. */
#define OH_TICKS 4

void oh_conf_default(oh_conf *c)
{
  memset(c, 0, sizeof *c);
  c->engine = OH_OCCUPANCY;
  c->warmup = 100;
  c->time = 1000;
  c->K = 10;
  c->replicas = 20;
  c->seed = 1;
  c->init = LBMC_INIT_EMPTY;
  c->confidence = 0.95;
  c->runaway_fraction = 0.02;
}

lbmc_model *oh_model(long long n, double lambda, const char *pools, const char *policy,
                     long routers)
{
  lbmc_model *m = th_model(n < 1000 ? (long)n : 1000, lambda, pools, policy, routers);
  m->n = (long)n;
  if (lbmc_model_setup(m)) {
    fprintf(stderr, "bad test model (n = %lld)\n", n);
    exit(2);
  }
  return m;
}

/* One replica's engines: either the occupancy table's workspace or a per-server engine. */
typedef struct {
  const oh_conf *c;
  void *occ;
  lbmc_engine *srv;
  lbmc_stream streams[LBMC_PURPOSES];
  lbmc_mixture *mix;
  uint64_t *hist; /* 2 x LBMC_HIST_BINS */
  double *ticks;  /* OH_TICKS x width */
  double *sums;   /* width */
  size_t width;
} oh_run;

static int oh_advance(oh_run *r, double t, double *rec)
{
  if (r->occ) return lbmc_engine_occupancy.advance(r->occ, t, rec) != LBMC_SUCCESS;
  return lbmc_engine_advance(r->srv, t, rec) != LBMC_SUCCESS;
}

static int oh_overflowed(const oh_run *r)
{
  return r->occ ? lbmc_engine_occupancy.overflowed(r->occ) : lbmc_engine_overflowed(r->srv);
}

/* Start replica i: streams and engine reset. */
static int oh_reset(oh_run *r, const lbmc_model *m, long i)
{
  int gennum[LBMC_PURPOSES];
  (void)m;
  for (int p = 0; p < LBMC_PURPOSES; p++)
    if (lbmc_stream_number(r->c->point, i, r->c->replicas, (lbmc_purpose)p, &gennum[p])) return 1;
  if (r->srv) return lbmc_engine_reset(r->srv, gennum, r->c->seed) != LBMC_SUCCESS;
  for (int p = 0; p < LBMC_PURPOSES; p++)
    if (lbmc_stream_init(&r->streams[p], gennum[p], r->c->seed)) return 1;
  return lbmc_engine_occupancy.reset(r->occ, r->streams) != LBMC_SUCCESS;
}

/* The quarter-by-quarter growth of lbmc_replica_result.growth. */
static double oh_growth(const oh_run *r, int J, int K)
{
  double prev = 0, growth = INFINITY;
  for (int k = 0; k < OH_TICKS; k++) {
    const double *rec = r->ticks + (size_t)k * r->width;
    double admitted = 0, avg = rec[LBMC_TK_AREA_N] / rec[LBMC_TK_LEN];
    for (int j = 0; j < J; j++) admitted += rec[lbmc_tk_admitted(J, K, j)];
    if (k > 0) growth = fmin(growth, admitted > 0 ? (avg - prev) / admitted : 0);
    prev = avg;
  }
  return growth;
}

static void oh_quantiles(const oh_run *r, int J, int K, double *v)
{
  double *qs = v + lbmc_metric_offset(LBMC_M_SOJOURN_QUANTILES, J, K);
  double *qw = v + lbmc_metric_offset(LBMC_M_WAIT_QUANTILES, J, K);
  for (int i = 0; i < LBMC_QUANTILES; i++) {
    double p = lbmc_quantile_level(i);
    qs[i] = r->mix ? lbmc_mixture_quantile(r->mix, LBMC_MIX_SOJOURN, p)
                   : lbmc_hist_quantile(r->hist, p);
    qw[i] = r->mix ? lbmc_mixture_quantile(r->mix, LBMC_MIX_WAIT, p)
                   : lbmc_hist_quantile(r->hist + LBMC_HIST_BINS, p);
  }
}

/* Replica i into values (NaN and *unstable = 1 on overflow); 0 on success. */
static int oh_replica(oh_run *r, const lbmc_model *m, long i, double *values, int8_t *unstable,
                      double *growth)
{
  const int J = m->J, K = (int)r->c->K;
  const double h = r->c->time / OH_TICKS;
  long N[LBMC_MAX_POOLS];
  if (oh_reset(r, m, i) || (r->c->warmup > 0 && oh_advance(r, r->c->warmup, NULL))) return 1;
  if (r->mix) {
    lbmc_mixture_clear(r->mix);
    lbmc_engine_occupancy.set_mixture(r->occ, r->mix);
  } else {
    memset(r->hist, 0, sizeof *r->hist * 2 * LBMC_HIST_BINS);
    lbmc_engine_set_histograms(r->srv, r->hist, r->hist + LBMC_HIST_BINS);
  }
  for (int k = 0; k < OH_TICKS && !oh_overflowed(r); k++)
    if (oh_advance(r, r->c->warmup + (k + 1) * h, r->ticks + (size_t)k * r->width)) return 1;
  *unstable = (int8_t)oh_overflowed(r);
  memset(r->sums, 0, sizeof *r->sums * r->width);
  for (int k = 0; k < OH_TICKS; k++)
    for (size_t w = 0; w < r->width; w++) r->sums[w] += r->ticks[(size_t)k * r->width + w];
  for (int j = 0; j < J; j++) N[j] = m->N[j];
  lbmc_metrics_from_sums(r->sums, J, K, N, m->n, values);
  oh_quantiles(r, J, K, values);
  *growth = oh_growth(r, J, K);
  if (*unstable)
    for (size_t x = 0; x < lbmc_metric_total(J, K); x++) values[x] = NAN;
  return 0;
}

static int oh_open(oh_run *r, const lbmc_model *m, const oh_conf *c, char *note, size_t len)
{
  uint64_t cap = c->cap ? c->cap : 1000 * (uint64_t)m->n + 100000;
  memset(r, 0, sizeof *r);
  r->c = c;
  r->width = lbmc_tick_width(m->J, (int)c->K);
  r->ticks = malloc(sizeof *r->ticks * r->width * OH_TICKS);
  r->sums = malloc(sizeof *r->sums * r->width);
  if (!r->ticks || !r->sums) return 1;
  if (c->engine != OH_OCCUPANCY) {
    r->hist = malloc(sizeof *r->hist * 2 * LBMC_HIST_BINS);
    return !r->hist || lbmc_engine_create(m, (int)c->K, cap, c->engine == OH_GENERAL, &r->srv);
  }
  return lbmc_engine_occupancy.create(m, (int)c->K, cap, &r->occ) ||
         lbmc_engine_occupancy.set_init(r->occ, c->init, note, len) ||
         lbmc_mixture_create_for(m, &r->mix);
}

static void oh_close(oh_run *r)
{
  if (r->occ) lbmc_engine_occupancy.destroy(&r->occ);
  lbmc_engine_destroy(&r->srv);
  for (int p = 0; p < LBMC_PURPOSES; p++) lbmc_stream_free(&r->streams[p]);
  lbmc_mixture_destroy(&r->mix);
  free(r->hist);
  free(r->ticks);
  free(r->sums);
}

int oh_simulate(const lbmc_model *m, const oh_conf *c, th_result *res, char *note, size_t len)
{
  oh_run run;
  lbmc_run_options o;
  char reason[256], dummy[8];
  double *values, *growth;
  int8_t *unstable;
  int bad = 0;
  memset(res, 0, sizeof *res);
  res->J = m->J;
  res->K = (int)c->K;
  res->total = lbmc_metric_total(res->J, res->K);
  res->replicas = c->replicas;
  values = malloc(sizeof *values * res->total * (size_t)c->replicas);
  growth = malloc(sizeof *growth * (size_t)c->replicas);
  unstable = malloc(sizeof *unstable * (size_t)c->replicas);
  res->mean = malloc(sizeof *res->mean * res->total * 3);
  if (!values || !growth || !unstable || !res->mean) return 1;
  res->hw = res->mean + res->total;
  res->se = res->hw + res->total;
  bad = oh_open(&run, m, c, note ? note : dummy, note ? len : sizeof dummy);
  for (long i = 0; !bad && i < c->replicas; i++)
    bad = oh_replica(&run, m, i, values + (size_t)i * res->total, &unstable[i], &growth[i]);
  oh_close(&run);
  if (bad) {
    fprintf(stderr, "oh_simulate: the simulation failed\n");
    return 1;
  }
  res->arrivals = m->lambda * (double)m->n * c->time;
  lbmc_run_options_default(&o);
  o.runaway_fraction = c->runaway_fraction;
  res->status = lbmc_point_unstable(&o, lbmc_model_surely_unstable(m), lbmc_model_rho(m),
                                    c->replicas, unstable, growth, reason, sizeof reason)
                    ? LBMC_STATUS_UNSTABLE
                    : LBMC_STATUS_OK;
  lbmc_estimate(values, c->replicas, NULL, 2, res->total, c->confidence, res->mean, res->hw,
                res->se);
  free(values);
  free(growth);
  free(unstable);
  return 0;
}
