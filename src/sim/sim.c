/* The replica driver (include/lbmc/sim.h): one replica of one model from its streams
 * to its estimates. It numbers the streams of (point, replica, purpose), runs the
 * engine (src/engine/engine.h) through the warm-up and the measured period tick by
 * tick, chooses the warm-up (MSER-5 with warmup auto), and turns the summed tick
 * records into the metrics, the batch means and the quantiles (docs/model.md,
 * "Simulation" and "Estimation"). Above the engines; below the runner and the
 * command line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/hist.h"
#include "../core/ticks.h"
#include "../engine/engine.h"
#include "lbmc/check.h"
#include "lbmc/metrics.h"
#include "lbmc/rng.h"
#include "lbmc/sim.h"
#include "lbmc/stats.h"

struct lbmc_replica_ {
  const lbmc_model *m;
  const lbmc_run_options *o;
  lbmc_engine *e;
  int J, K;
  size_t width;   /* tick record width */
  size_t nticks;  /* batches x LBMC_TICKS_PER_BATCH */
  double *ticks;  /* nticks x width */
  double *sums;   /* width */
  double *series; /* nticks */
  uint64_t *hist; /* batches groups of LBMC_TICKS_PER_BATCH ticks, each 2 histograms
                     (sojourn, wait) of LBMC_HIST_BINS counts */
  uint64_t *hsum; /* 2 x LBMC_HIST_BINS: their sum over the retained groups */
  int (*monitor)(void *ctx);
  void *monitor_ctx;
};

void lbmc_replica_set_monitor(lbmc_replica *r, int (*monitor)(void *ctx), void *ctx)
{
  r->monitor = monitor;
  r->monitor_ctx = ctx;
}

static uint64_t lbmc_default_cap(const lbmc_model *m, const lbmc_run_options *o)
{
  uint64_t cap = 1000 * (uint64_t)lbmc_model_n(m) + 100000, hard = 1ULL << 26;
  if (o->max_customers > 0) return (uint64_t)o->max_customers;
  return cap < hard ? cap : hard;
}

lbmc_err lbmc_replica_create(const lbmc_model *m, const lbmc_run_options *o, lbmc_replica **out)
{
  lbmc_replica *r;
  lbmc_err err;
  LBMC_CHECK(lbmc_run_options_check(o, ""));
  LBMC_CHECK(lbmc_run_check_size(m, o, "run"));
  r = calloc(1, sizeof *r);
  if (!r) return LBMC_ERROR(LBMC_ERR_MEMORY, "replica: out of memory");
  r->m = m;
  r->o = o;
  r->J = lbmc_model_pools(m);
  r->K = (int)o->tail_k;
  r->width = lbmc_tick_width(r->J, r->K);
  r->nticks = (size_t)o->batches * LBMC_TICKS_PER_BATCH;
  r->ticks = malloc(sizeof *r->ticks * r->nticks * r->width);
  r->sums = malloc(sizeof *r->sums * r->width);
  r->series = malloc(sizeof *r->series * r->nticks);
  r->hist = malloc(sizeof *r->hist * (size_t)o->batches * 2 * LBMC_HIST_BINS);
  r->hsum = malloc(sizeof *r->hsum * 2 * LBMC_HIST_BINS);
  if (!r->ticks || !r->sums || !r->series || !r->hist || !r->hsum) {
    lbmc_replica_destroy(&r);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "replica: out of memory for %zu ticks", (size_t)o->batches);
  }
  err = lbmc_engine_create(m, r->K, lbmc_default_cap(m, o),
                           o->general_engine ? LBMC_ENGINE_GENERAL : LBMC_ENGINE_AUTO, &r->e);
  if (err) {
    lbmc_replica_destroy(&r);
    return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
  }
  *out = r;
  return LBMC_SUCCESS;
}

void lbmc_replica_destroy(lbmc_replica **r)
{
  if (!r || !*r) return;
  lbmc_engine_destroy(&(*r)->e);
  free((*r)->ticks);
  free((*r)->sums);
  free((*r)->series);
  free((*r)->hist);
  free((*r)->hsum);
  free(*r);
  *r = NULL;
}

/* Element-wise sum of tick records [from, to) into r->sums. */
static void lbmc_replica_sum(lbmc_replica *r, size_t from, size_t to)
{
  memset(r->sums, 0, sizeof *r->sums * r->width);
  for (size_t i = from; i < to; i++) {
    const double *rec = r->ticks + i * r->width;
    for (size_t w = 0; w < r->width; w++) r->sums[w] += rec[w];
  }
}

/* Growth of the customers in the system over the retained ticks [from, to): the
 * smallest of the three increases of the quarter-by-quarter time-average customers,
 * each per customer admitted in the later quarter (lbmc_replica_result.growth). */
static double lbmc_replica_growth(const lbmc_replica *r, size_t from, size_t to)
{
  size_t q = (to - from) / 4;
  double prev = 0, growth = INFINITY;
  if (q < 1) return 0;
  for (int k = 0; k < 4; k++) {
    double area = 0, len = 0, admitted = 0, avg;
    for (size_t i = from + (size_t)k * q; i < from + (size_t)(k + 1) * q; i++) {
      const double *rec = r->ticks + i * r->width;
      area += rec[LBMC_TK_AREA_N];
      len += rec[LBMC_TK_LEN];
      for (int j = 0; j < r->J; j++) admitted += rec[lbmc_tk_admitted(r->J, r->K, j)];
    }
    avg = area / len;
    if (k > 0) {
      double g = admitted > 0 ? (avg - prev) / admitted : 0;
      if (g < growth) growth = g;
    }
    prev = avg;
  }
  return growth;
}

static void lbmc_replica_unstable(lbmc_replica *r, lbmc_replica_result *res)
{
  size_t total = lbmc_metric_total(r->J, r->K);
  res->status = LBMC_STATUS_UNSTABLE;
  for (size_t i = 0; i < total; i++) res->values[i] = NAN;
  if (res->batch_values)
    for (size_t i = 0; i < total * (size_t)r->o->batches; i++) res->batch_values[i] = NAN;
}

/* Warm-up (auto: MSER-5 on the per-server customer count of each tick) and the first
 * retained tick, aligned so that the retained ticks split into equal batches. */
static size_t lbmc_replica_truncate(lbmc_replica *r)
{
  size_t d = 0, keep;
  if (r->o->warmup_auto) {
    double n = (double)lbmc_model_n(r->m);
    for (size_t i = 0; i < r->nticks; i++) {
      const double *rec = r->ticks + i * r->width;
      r->series[i] = rec[LBMC_TK_AREA_N] / (rec[LBMC_TK_LEN] * n);
    }
    d = lbmc_mser5(r->series, r->nticks);
  }
  keep = (r->nticks - d) / (size_t)r->o->batches * (size_t)r->o->batches;
  return r->nticks - keep;
}

/* Sojourn and wait quantiles of histograms h (2 x LBMC_HIST_BINS) into values. */
static void lbmc_replica_put_quantiles(const lbmc_replica *r, const uint64_t *h, double *values)
{
  double *qs = values + lbmc_metric_offset(LBMC_M_SOJOURN_QUANTILES, r->J, r->K);
  double *qw = values + lbmc_metric_offset(LBMC_M_WAIT_QUANTILES, r->J, r->K);
  for (int i = 0; i < LBMC_QUANTILES; i++) {
    qs[i] = lbmc_hist_quantile(h, lbmc_quantile_level(i));
    qw[i] = lbmc_hist_quantile(h + LBMC_HIST_BINS, lbmc_quantile_level(i));
  }
}

/* Quantiles over the groups of ticks that lie wholly in the retained ticks [first,
 * nticks) (with warmup auto up to LBMC_TICKS_PER_BATCH - 1 retained ticks are left
 * out of the quantiles). */
static void lbmc_replica_quantiles(lbmc_replica *r, size_t first, double *values)
{
  size_t g0 = (first + LBMC_TICKS_PER_BATCH - 1) / LBMC_TICKS_PER_BATCH;
  memset(r->hsum, 0, sizeof *r->hsum * 2 * LBMC_HIST_BINS);
  for (size_t g = g0; g < (size_t)r->o->batches; g++) {
    const uint64_t *h = r->hist + g * 2 * LBMC_HIST_BINS;
    for (size_t b = 0; b < 2 * LBMC_HIST_BINS; b++) r->hsum[b] += h[b];
  }
  lbmc_replica_put_quantiles(r, r->hsum, values);
}

/* Quantiles of batch b: those of one group of ticks. With a fixed warm-up, group b is
 * exactly batch b; with warmup auto the batches take the retained groups spread
 * evenly (an approximation used only for one-replica intervals). */
static void lbmc_replica_group_quantiles(lbmc_replica *r, size_t first, size_t b, double *values)
{
  size_t ng = (size_t)r->o->batches, g0 = (first + LBMC_TICKS_PER_BATCH - 1) / LBMC_TICKS_PER_BATCH;
  size_t g = g0 < ng ? g0 + b * (ng - g0) / ng : ng - 1;
  lbmc_replica_put_quantiles(r, r->hist + g * 2 * LBMC_HIST_BINS, values);
}

/* The streams of (point, replica, purpose) and an empty system; res cleared. */
static lbmc_err lbmc_replica_start(lbmc_replica *r, long point, long replica, long replicas_max,
                                   long seed, double t_start, lbmc_replica_result *res)
{
  int gennum[LBMC_PURPOSES];
  for (int p = 0; p < LBMC_PURPOSES; p++)
    LBMC_CHECK(lbmc_stream_number(point, replica, replicas_max, (lbmc_purpose)p, &gennum[p]));
  LBMC_CHECK(lbmc_engine_reset(r->e, gennum, seed));
  res->status = LBMC_STATUS_OK;
  res->reason[0] = '\0';
  res->events = 0;
  res->cpu_seconds = 0;
  res->warmup = t_start;
  res->sim_time = 0;
  res->growth = 0;
  return LBMC_SUCCESS;
}

/* The warm-up up to t_start (discarded, in tick-sized steps h), then the ticks of the
 * measured period into r->ticks, each group of LBMC_TICKS_PER_BATCH ticks with its own
 * histograms; both stop early at the runaway cap. The monitor is asked after every
 * tick. Errors: the engine's, LBMC_ERR_INTERRUPTED. */
static lbmc_err lbmc_replica_simulate(lbmc_replica *r, double t_start, double h)
{
  for (double t = h; t_start > 0; t += h) {
    LBMC_CHECK(lbmc_engine_advance(r->e, t < t_start ? t : t_start, NULL));
    if (r->monitor && r->monitor(r->monitor_ctx)) return LBMC_ERR_INTERRUPTED;
    if (t >= t_start || lbmc_engine_overflowed(r->e)) break;
  }
  memset(r->hist, 0, sizeof *r->hist * (size_t)r->o->batches * 2 * LBMC_HIST_BINS);
  for (size_t i = 0; i < r->nticks && !lbmc_engine_overflowed(r->e); i++) {
    if (i % LBMC_TICKS_PER_BATCH == 0) { /* a new group of ticks: its own histograms */
      uint64_t *g = r->hist + i / LBMC_TICKS_PER_BATCH * 2 * LBMC_HIST_BINS;
      lbmc_engine_set_histograms(r->e, g, g + LBMC_HIST_BINS);
    }
    LBMC_CHECK(lbmc_engine_advance(r->e, t_start + (double)(i + 1) * h, r->ticks + i * r->width));
    if (r->monitor && r->monitor(r->monitor_ctx)) return LBMC_ERR_INTERRUPTED;
  }
  lbmc_engine_set_histograms(r->e, NULL, NULL);
  return LBMC_SUCCESS;
}

/* The estimates of a replica that stayed below the cap: the warm-up truncation, the
 * whole-period metrics and quantiles, and the batch means if asked for. */
static void lbmc_replica_estimates(lbmc_replica *r, double t_start, double h,
                                   lbmc_replica_result *res)
{
  const size_t total = lbmc_metric_total(r->J, r->K);
  const size_t first = lbmc_replica_truncate(r);
  const size_t per_batch = (r->nticks - first) / (size_t)r->o->batches;
  long N[LBMC_MAX_POOLS];
  res->warmup = t_start + (double)first * h;
  res->sim_time = (double)(r->nticks - first) * h;
  for (int j = 0; j < r->J; j++) N[j] = lbmc_model_pool_servers(r->m, j);
  lbmc_replica_sum(r, first, r->nticks);
  res->events = (int64_t)(r->sums[LBMC_TK_ARRIVALS] + r->sums[LBMC_TK_DEPARTURES]);
  res->cpu_seconds = r->sums[LBMC_TK_CPU];
  res->growth = lbmc_replica_growth(r, first, r->nticks);
  lbmc_metrics_from_sums(r->sums, r->J, r->K, N, lbmc_model_n(r->m), res->values);
  lbmc_replica_quantiles(r, first, res->values);
  if (res->batch_values)
    for (long b = 0; b < r->o->batches; b++) {
      size_t from = first + (size_t)b * per_batch;
      double *bv = res->batch_values + (size_t)b * total;
      lbmc_replica_sum(r, from, from + per_batch);
      lbmc_metrics_from_sums(r->sums, r->J, r->K, N, lbmc_model_n(r->m), bv);
      lbmc_replica_group_quantiles(r, first, (size_t)b, bv);
    }
}

lbmc_err lbmc_replica_run(lbmc_replica *r, long point, long replica, long replicas_max, long seed,
                          lbmc_replica_result *res)
{
  const lbmc_run_options *o = r->o;
  double t_start = o->warmup_auto ? 0 : o->warmup, h = o->time / (double)r->nticks;
  lbmc_err err;
  LBMC_CHECK(lbmc_replica_start(r, point, replica, replicas_max, seed, t_start, res));
  err = lbmc_replica_simulate(r, t_start, h);
  if (err == LBMC_ERR_INTERRUPTED) return err; /* quietly, as the monitor asked */
  LBMC_CHECK(err);
  if (lbmc_engine_overflowed(r->e)) {
    snprintf(res->reason, sizeof res->reason,
             "customers in the system exceeded the cap of %llu (max_customers) at time %.6g",
             (unsigned long long)lbmc_default_cap(r->m, o), lbmc_engine_time(r->e));
    lbmc_replica_unstable(r, res);
    return LBMC_SUCCESS;
  }
  lbmc_replica_estimates(r, t_start, h, res);
  return LBMC_SUCCESS;
}
