/* The replica driver (include/lbmc/sim.h): one replica of one model from its streams to
 * its record. It numbers the streams of (scenario, replica, purpose), runs the engine
 * (src/engine/engine.h) through the warm-up in at most about 1000 steps, then through the
 * measured period segment by segment (each the sum of LBMC_TICKS_PER_SEGMENT tick
 * records), with the customers' sojourn and waiting times going to the histograms of the
 * segment's quantile group (or, for an engine with Erlang mixtures, the occupancy engine,
 * the arrival classes to the group's mixture); and packs the record (src/sim/record.h). Everything
 * that depends on more than one replica (the warm-up with warmup auto, the estimates, the verdict)
 * is the point's (src/sim/point.c). Above the engines; below the runner and the command line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ticks.h"
#include "../engine/engine.h"
#include "../observers/observers.h"
#include "../stats/mixture.h"
#include "lbmc/rng.h"
#include "lbmc/sim.h"
#include "record.h"

/** Steps of a fixed warm-up (at least one tick each): the monitor is asked after each,
 *  so a long warm-up with a short measured time costs no more than the simulation. */
#define LBMC_WARMUP_STEPS 1000

struct lbmc_replica_ {
  const lbmc_model *m;
  const lbmc_run_options *o;
  lbmc_engine *e;
  lbmc_observers *obs; /* the observers the settings ask for, or NULL */
  int J, K;
  size_t W;           /* doubles of a tick record */
  size_t S;           /* segments */
  double tau;         /* the histograms' time scale */
  double *seg;        /* S x W */
  double *tick;       /* W: the tick being closed (zeroed: every field is written) */
  size_t G;           /* quantile groups of the current run */
  int64_t *start;     /* LBMC_MAX_QUANTILE_GROUPS + 1: their first segments */
  lbmc_dhist *h;      /* 2 x hcap: sojourn and wait histograms of each group */
  size_t hcap;        /* groups the histograms are allocated for */
  int mixtures;       /* 1: the engine gives Erlang mixtures (occupancy), not histograms */
  lbmc_mixture **mix; /* mcap: the mixture of each group */
  size_t mcap;
  char init_note[256]; /* how replicas start, if not as asked (lbmc_engine_set_init) */
  unsigned char *rec;  /* the last record, rec_cap bytes allocated */
  size_t rec_cap;
  uint64_t cap; /* the runaway cap */
  int (*monitor)(void *ctx);
  void *monitor_ctx;
  double t_end; /* the time the current replica runs to (lbmc_replica_fraction) */
};

long lbmc_run_segments(const lbmc_run_options *o)
{
  if (o->transient[2] > 0) return lbmc_transient_times(o); /* one tick per time */
  long S = LBMC_SEGMENTS_PER_BATCH * o->batches;
  return S < LBMC_MAX_SEGMENTS ? S : LBMC_MAX_SEGMENTS;
}

double lbmc_model_time_scale(const lbmc_model *m)
{
  double capacity = 0;
  for (int j = 0; j < lbmc_model_pools(m); j++) {
    const double *rates;
    int L = lbmc_model_rates(m, j, &rates);
    capacity += lbmc_model_beta(m, j) * rates[L - 1];
  }
  return capacity > 0 ? 1 / capacity : 1;
}

size_t lbmc_run_segment_width(const lbmc_model *m, const lbmc_run_options *o)
{
  return lbmc_tick_width(lbmc_model_pools(m), (int)o->tail_k) + lbmc_observers_width(m, o);
}

void lbmc_replica_set_monitor(lbmc_replica *r, int (*monitor)(void *ctx), void *ctx)
{
  r->monitor = monitor;
  r->monitor_ctx = ctx;
  lbmc_engine_set_stop(r->e, monitor, ctx); /* polled inside the engine's event loop */
}

double lbmc_replica_fraction(const lbmc_replica *r)
{
  const double f = r->t_end > 0 ? lbmc_engine_time(r->e) / r->t_end : 0;
  return f < 0 ? 0 : f > 1 ? 1 : f;
}

int lbmc_replica_meanfield_applies(lbmc_replica *r) { return lbmc_engine_meanfield_start(r->e); }

const char *lbmc_replica_engine(const lbmc_replica *r) { return lbmc_engine_name(r->e); }
const char *lbmc_replica_init_note(const lbmc_replica *r) { return r->init_note; }

lbmc_err lbmc_replica_create(const lbmc_model *m, const lbmc_run_options *o, lbmc_replica **out)
{
  lbmc_replica *r;
  lbmc_err err;
  LBMC_CALL(lbmc_run_options_check(o, ""));
  LBMC_CALL(lbmc_run_check_size(m, o, "run"));
  LBMC_CALL(lbmc_run_check_pairs(m, o, "run."));
  r = calloc(1, sizeof *r);
  if (!r) return LBMC_ERROR(LBMC_ERR_MEMORY, "replica: out of memory");
  r->m = m;
  r->o = o;
  r->J = lbmc_model_pools(m);
  r->K = (int)o->tail_k;
  r->W = lbmc_run_segment_width(m, o);
  r->S = (size_t)lbmc_run_segments(o);
  r->tau = lbmc_model_time_scale(m);
  r->seg = malloc(sizeof *r->seg * r->S * r->W);
  r->tick = calloc(r->W, sizeof *r->tick);
  r->start = malloc(sizeof *r->start * (LBMC_MAX_QUANTILE_GROUPS + 1));
  if (!r->seg || !r->tick || !r->start) {
    lbmc_replica_destroy(&r);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "replica: out of memory for %zu segments", r->S);
  }
  err = lbmc_engine_create(m, r->K, (uint64_t)o->max_customers, (lbmc_engine_kind)o->engine, &r->e);
  if (!err) err = lbmc_engine_set_init(r->e, o, r->init_note, sizeof r->init_note);
  if (!err) err = lbmc_observers_create(m, o, &r->obs);
  if (!err) {
    lbmc_engine_set_observers(r->e, r->obs);
    r->mixtures = lbmc_engine_uses_mixtures(r->e);
  }
  if (err) {
    lbmc_replica_destroy(&r);
    return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
  }
  r->cap = lbmc_engine_cap(r->e);
  *out = r;
  return LBMC_SUCCESS;
}

void lbmc_replica_destroy(lbmc_replica **r)
{
  if (!r || !*r) return;
  lbmc_engine_destroy(&(*r)->e);
  lbmc_observers_destroy(&(*r)->obs);
  free((*r)->seg);
  free((*r)->tick);
  free((*r)->start);
  free((*r)->h);
  for (size_t g = 0; g < (*r)->mcap; g++) lbmc_mixture_destroy(&(*r)->mix[g]);
  free((*r)->mix);
  free((*r)->rec);
  free(*r);
  *r = NULL;
}

/* An empty mixture for each of the r->G quantile groups. */
static lbmc_err lbmc_replica_group_mixtures(lbmc_replica *r)
{
  if (r->G > r->mcap) {
    lbmc_mixture **mix = realloc(r->mix, sizeof *mix * r->G);
    if (!mix) return LBMC_ERROR(LBMC_ERR_MEMORY, "replica: out of memory for mixtures");
    r->mix = mix;
    for (; r->mcap < r->G; r->mcap++) {
      r->mix[r->mcap] = NULL;
      LBMC_CALL(lbmc_engine_mixture_create(r->e, &r->mix[r->mcap]));
    }
  }
  for (size_t g = 0; g < r->G; g++) lbmc_mixture_clear(r->mix[g]);
  return LBMC_SUCCESS;
}

/* The quantile groups of a run: one for the measured period (a fixed warm-up); with
 * warmup auto, the eighths of the first half (where the point's truncation falls, at
 * most half the run) and the second half; for a one-replica point, min(S, 64) equal
 * groups (the units of its quantile intervals). */
static lbmc_err lbmc_replica_groups(lbmc_replica *r, int one_replica)
{
  const size_t S = r->S;
  if (one_replica) {
    r->G = S < LBMC_MAX_QUANTILE_GROUPS ? S : LBMC_MAX_QUANTILE_GROUPS;
    for (size_t g = 0; g <= r->G; g++) r->start[g] = (int64_t)(S * g / r->G);
  } else if (r->o->warmup_auto) {
    r->G = 5;
    for (size_t g = 0; g < 5; g++) r->start[g] = (int64_t)(S * g / 8);
    r->start[5] = (int64_t)S;
  } else {
    r->G = 1;
    r->start[0] = 0;
    r->start[1] = (int64_t)S;
  }
  if (r->mixtures) return lbmc_replica_group_mixtures(r);
  if (r->G > r->hcap) {
    free(r->h);
    r->h = malloc(sizeof *r->h * 2 * r->G);
    r->hcap = r->h ? r->G : 0;
    if (!r->h) return LBMC_ERROR(LBMC_ERR_MEMORY, "replica: out of memory for histograms");
  }
  for (size_t k = 0; k < 2 * r->G; k++) lbmc_dhist_init(&r->h[k], r->tau);
  return LBMC_SUCCESS;
}

/* The streams of (scenario, replica, purpose) and an empty system. */
static lbmc_err lbmc_replica_start(lbmc_replica *r, const lbmc_unit *u)
{
  int gennum[LBMC_PURPOSES];
  for (int p = 0; p < LBMC_PURPOSES; p++)
    LBMC_CALL(
        lbmc_stream_number(u->scenario, u->replica, u->replicas_max, (lbmc_purpose)p, &gennum[p]));
  return lbmc_engine_reset(r->e, gennum, u->seed);
}

/* A fixed warm-up t_start in at most LBMC_WARMUP_STEPS steps of at least a tick h.
 * Errors: the engine's, LBMC_ERR_INTERRUPTED. */
static lbmc_err lbmc_replica_warmup(lbmc_replica *r, double t_start, double h)
{
  const double step = fmax(h, t_start / LBMC_WARMUP_STEPS);
  for (double t = step; t_start > 0; t += step) {
    LBMC_CALL(lbmc_engine_advance(r->e, t < t_start ? t : t_start, NULL));
    if (r->monitor && r->monitor(r->monitor_ctx)) return LBMC_ERR_INTERRUPTED;
    if (t >= t_start || lbmc_engine_overflowed(r->e)) break;
  }
  return LBMC_SUCCESS;
}

/* The engine records no more customers' times. */
static void lbmc_replica_detach(lbmc_replica *r)
{
  lbmc_engine_set_histograms(r->e, NULL, NULL);
  lbmc_engine_set_mixture(r->e, NULL);
}

/* The central moments of a segment's customers at its ticks' ends (x[0..k)) into its
 * record: sums of squared and cubed deviations from their mean. */
static void lbmc_replica_moments(const double *x, int k, double *seg)
{
  double mean = 0, m2 = 0, m3 = 0;
  for (int i = 0; i < k; i++) mean += x[i] / k;
  for (int i = 0; i < k; i++) {
    const double d = x[i] - mean;
    m2 += d * d;
    m3 += d * d * d;
  }
  seg[LBMC_TK_N_M2] = m2;
  seg[LBMC_TK_N_M3] = m3;
}

/* The measured period from t_start: segment s is the sum of its ticks of length h, its
 * customers go to the histograms of its group. Stops early at the runaway cap. Errors:
 * the engine's, LBMC_ERR_INTERRUPTED. */
static lbmc_err lbmc_replica_segments(lbmc_replica *r, double t_start, double h)
{
  size_t g = 0;
  memset(r->seg, 0, sizeof *r->seg * r->S * r->W);
  lbmc_engine_cpu(r->e); /* the warm-up's CPU time is not the measured period's */
  for (size_t s = 0; s < r->S && !lbmc_engine_overflowed(r->e); s++) {
    double *seg = r->seg + s * r->W;
    while (g + 1 < r->G && (size_t)r->start[g + 1] <= s) g++;
    if (r->mixtures)
      lbmc_engine_set_mixture(r->e, r->mix[g]);
    else
      lbmc_engine_set_histograms(r->e, &r->h[2 * g], &r->h[2 * g + 1]);
    double n_end[LBMC_TICKS_PER_SEGMENT];
    int ticks = 0;
    for (int k = 0; k < LBMC_TICKS_PER_SEGMENT; k++) {
      const size_t i = s * LBMC_TICKS_PER_SEGMENT + (size_t)k;
      LBMC_CALL(lbmc_engine_advance(r->e, t_start + (double)(i + 1) * h, r->tick));
      r->tick[LBMC_TK_N_M2] = r->tick[LBMC_TK_N_M3] = 0;
      for (size_t w = 0; w < r->W; w++) seg[w] += r->tick[w];
      n_end[ticks++] = r->tick[LBMC_TK_N_END];
      if (r->monitor && r->monitor(r->monitor_ctx)) return LBMC_ERR_INTERRUPTED;
      if (lbmc_engine_overflowed(r->e)) break;
    }
    lbmc_replica_moments(n_end, ticks, seg);
    seg[LBMC_TK_CPU] = lbmc_engine_cpu(r->e);
  }
  lbmc_replica_detach(r);
  return LBMC_SUCCESS;
}

/* Observation times between two readings of the CPU clock and calls of the monitor. */
#define LBMC_OBSERVE_POLL 64

/* A transient run's observation (--transient T0:T1:DT): segment i is the one tick that
 * ends at time T0 + i DT (segment 0 the empty tick at T0, so that its block shows the state
 * at T0), the observers' blocks showing the state then. The engine is only advanced to
 * the times: observing draws no random numbers. Errors: the engine's,
 * LBMC_ERR_INTERRUPTED. */
static lbmc_err lbmc_replica_observe(lbmc_replica *r)
{
  memset(r->seg, 0, sizeof *r->seg * r->S * r->W);
  lbmc_engine_cpu(r->e);
  if (r->mixtures)
    lbmc_engine_set_mixture(r->e, r->mix[0]);
  else
    lbmc_engine_set_histograms(r->e, &r->h[0], &r->h[1]);
  for (size_t s = 0; s < r->S && !lbmc_engine_overflowed(r->e); s++) {
    const double t = lbmc_transient_time(r->o, (long)s);
    double *seg = r->seg + s * r->W;
    LBMC_CALL(lbmc_engine_advance(r->e, t, seg));
    /* the CPU clock (a system call) and the monitor every LBMC_OBSERVE_POLL times only, and
     * at the last: at 1000 times of a small system they cost more than the simulation
     * (the engine polls the monitor itself inside a long tick) */
    if (s % LBMC_OBSERVE_POLL != LBMC_OBSERVE_POLL - 1 && s + 1 < r->S) continue;
    seg[LBMC_TK_CPU] = lbmc_engine_cpu(r->e); /* since the last reading */
    if (r->monitor && r->monitor(r->monitor_ctx)) return LBMC_ERR_INTERRUPTED;
  }
  lbmc_replica_detach(r);
  return LBMC_SUCCESS;
}

/* Pack the record of the run into r->rec. */
static lbmc_err lbmc_replica_pack(lbmc_replica *r, const lbmc_unit *u, double t_start,
                                  double seg_len, double n_start, size_t *size)
{
  lbmc_record_head head;
  memset(&head, 0, sizeof head);
  head.point = u->point;
  head.replica = u->replica;
  head.doubling = u->doubling;
  head.status = lbmc_engine_overflowed(r->e) ? LBMC_STATUS_UNSTABLE : LBMC_STATUS_OK;
  head.S = (int64_t)r->S;
  head.W = (int64_t)r->W;
  head.G = (int64_t)r->G;
  head.qkind = r->mixtures ? LBMC_QK_MIX : LBMC_QK_HIST;
  head.cap = (int64_t)r->cap;
  head.t_start = t_start;
  head.seg_len = seg_len;
  head.tau = r->tau;
  head.t_stop = head.status == LBMC_STATUS_UNSTABLE ? lbmc_engine_time(r->e) : NAN;
  head.n_start = n_start;
  *size = lbmc_record_pack(r->rec, r->rec_cap, &head, r->start, r->seg, r->h,
                           (const lbmc_mixture *const *)r->mix);
  if (*size > r->rec_cap) {
    free(r->rec);
    r->rec = malloc(*size + *size / 4);
    r->rec_cap = r->rec ? *size + *size / 4 : 0;
    if (!r->rec) return LBMC_ERROR(LBMC_ERR_MEMORY, "replica: out of memory for its record");
    lbmc_record_pack(r->rec, r->rec_cap, &head, r->start, r->seg, r->h,
                     (const lbmc_mixture *const *)r->mix);
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_replica_record(lbmc_replica *r, const lbmc_unit *u, const void **record, size_t *size)
{
  const lbmc_run_options *o = r->o;
  const int transient = o->transient[2] > 0;
  const double t_start = transient ? o->transient[0] : o->warmup_auto ? 0 : o->warmup;
  const double seg_len = transient ? o->transient[2] : ldexp(o->time, u->doubling) / (double)r->S;
  const double h = transient ? seg_len : seg_len / LBMC_TICKS_PER_SEGMENT;
  double n_start;
  lbmc_err err;
  *record = NULL;
  *size = 0;
  LBMC_CALL(lbmc_replica_groups(r, transient ? 0 : u->one_replica));
  LBMC_CALL(lbmc_replica_start(r, u));
  r->t_end = t_start + ldexp(o->time, u->doubling);
  LBMC_CALL(lbmc_engine_advance(r->e, 0, r->tick)); /* a tick of length 0: the start */
  n_start = r->tick[LBMC_TK_N_END];
  err = lbmc_replica_warmup(r, t_start, h);
  if (!err && !lbmc_engine_overflowed(r->e))
    err = transient ? lbmc_replica_observe(r) : lbmc_replica_segments(r, t_start, h);
  if (err == LBMC_ERR_INTERRUPTED) {
    lbmc_replica_detach(r);
    return err; /* quietly, as the monitor asked */
  }
  LBMC_CALL(err);
  if (lbmc_engine_overflowed(r->e)) memset(r->seg, 0, sizeof *r->seg * r->S * r->W);
  LBMC_CALL(lbmc_replica_pack(r, u, t_start, seg_len, n_start, size));
  *record = r->rec;
  return LBMC_SUCCESS;
}
