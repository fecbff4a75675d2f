/* Cost calibration (include/lbmc/sim.h, lbmc_run_calibrate): a short replica of a point
 * on the engine that will run it, through the replica driver, its segments' CPU seconds
 * and events read from its record, and its reduction as a point of one replica (the
 * quantiles of long queues' mixtures can cost more than the simulation); a short point
 * is run whole. Above the
 * replica driver and the point; below the runner and the command line. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/ticks.h"
#include "lbmc/point.h"
#include "lbmc/sim.h"
#include "record.h"

/* Time units below which a calibration from empty would not reach the steady state's
 * occupancy (and cost). */
#define LBMC_CALIBRATION_FILL 20.0
/* Replicas of at most this many calibrations' events are calibrated whole. */
#define LBMC_CALIBRATION_WHOLE 4.0
/* Segments of a calibration that is not whole (the second half measures). */
#define LBMC_CALIBRATION_BATCHES 16

static double lbmc_calibrate_cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double lbmc_calibration_replica(const lbmc_calibration *c, const lbmc_run_options *o, int doubling)
{
  const double T = o->transient[2] > 0
                       ? o->transient[1]
                       : (o->warmup_auto ? 0 : o->warmup) + ldexp(o->time, doubling);
  return c->start_cpu + c->cpu_per_time * T;
}

double lbmc_calibration_point(const lbmc_calibration *c, const lbmc_run_options *o, long R,
                              int doubling)
{
  return (double)R * lbmc_calibration_replica(c, o, doubling) + c->reduce_cpu;
}

/* The segments s0 .. S-1 of a record: their CPU seconds, events and time into *cpu,
 * *events, *time. */
static void lbmc_calibrate_sums(const lbmc_record *rec, int64_t s0, double *cpu, double *events,
                                double *time)
{
  *cpu = *events = 0;
  for (int64_t s = s0; s < rec->h.S; s++) {
    const double *seg = rec->seg + s * rec->h.W;
    *cpu += seg[LBMC_TK_CPU];
    *events += seg[LBMC_TK_ARRIVALS] + seg[LBMC_TK_DEPARTURES];
  }
  *time = (double)(rec->h.S - s0) * rec->h.seg_len;
}

/* A one-replica point of the record, reduced: its CPU seconds into *cpu. */
static lbmc_err lbmc_calibrate_reduce(const lbmc_model *m, const lbmc_run_options *o,
                                      const void *bytes, size_t size, double *cpu)
{
  lbmc_point *p = NULL;
  int used;
  const double t0 = lbmc_calibrate_cpu();
  lbmc_err err = lbmc_point_create(m, o, 1, &p);
  if (!err) err = lbmc_point_add(p, bytes, size, &used);
  if (!err) err = lbmc_point_reduce(p, 1);
  lbmc_point_destroy(&p);
  *cpu = lbmc_calibrate_cpu() - t0;
  return err;
}

/* The replica of the calibration (options co, whole or not) into c; rate: the steady
 * state's events per unit time (2 lambda n), for a short run from empty that cannot
 * fill. */
static lbmc_err lbmc_calibrate_run(const lbmc_model *m, const lbmc_run_options *o,
                                   const lbmc_run_options *co, long seed, int whole, double rate,
                                   int (*monitor)(void *ctx), void *ctx, lbmc_calibration *c)
{
  const lbmc_unit u = {0, 0, 0, 1, seed, 0, 0};
  lbmc_replica *r = NULL;
  const void *bytes;
  size_t size;
  lbmc_record rec;
  double t0 = lbmc_calibrate_cpu(), run, cpu, events, time, reduce = 0;
  lbmc_err err = lbmc_replica_create(m, co, &r);
  c->create_cpu = co->init == o->init ? lbmc_calibrate_cpu() - t0 : 0;
  if (err) return err;
  c->engine = lbmc_replica_engine(r);
  c->meanfield = co->init == LBMC_INIT_MEANFIELD && !*lbmc_replica_init_note(r);
  lbmc_replica_set_monitor(r, monitor, ctx);
  t0 = lbmc_calibrate_cpu();
  err = lbmc_replica_record(r, &u, &bytes, &size);
  run = lbmc_calibrate_cpu() - t0;
  if (!err && lbmc_record_view(bytes, size, &rec) != 0)
    err = LBMC_ERROR(LBMC_ERR_INTERNAL, "calibration: its replica's record does not read");
  /* its reduction: the quantiles of long queues' mixtures can cost more than the run */
  if (!err) err = lbmc_calibrate_reduce(m, co, bytes, size, &reduce);
  if (!err) {
    const double T = rec.h.t_start + (double)rec.h.S * rec.h.seg_len; /* the replica's time */
    lbmc_calibrate_sums(&rec, whole ? 0 : rec.h.S / 2, &cpu, &events, &time);
    c->events = events;
    c->events_per_time = time > 0 ? events / time : 0;
    if (whole) { /* all of it, a stop at the runaway cap included, over its time; the
                    reduction once per point (mostly fixed: per replica it was 3-5x) */
      c->start_cpu = 0;
      c->cpu_per_time = T > 0 ? run / T : 0;
      c->reduce_cpu = reduce;
    } else { /* the steady state's cost per unit time; the rest, and the reduction's
                share (about one replica's), per replica */
      double all_cpu, all_events, all_time;
      lbmc_calibrate_sums(&rec, 0, &all_cpu, &all_events, &all_time);
      c->events = all_events;
      c->cpu_per_time = time > 0 ? cpu / time : 0;
      c->start_cpu = fmax(0, run - all_cpu) + reduce;
      /* from empty (asked, or no mean-field start on this engine, e.g. lwl(2)), too short
       * to fill (large n):
       * mostly arrivals into idle servers; the cost per event at the steady state's
       * rate (a lower bound: the run's events later meet fuller queues) */
      if (co->init != LBMC_INIT_TAIL && !c->meanfield && co->time < LBMC_CALIBRATION_FILL &&
          c->events_per_time > 0 && rate > c->events_per_time) {
        c->cpu_per_time *= rate / c->events_per_time;
        c->events_per_time = rate;
      }
    }
  }
  lbmc_replica_destroy(&r);
  return err;
}

lbmc_err lbmc_run_calibrate(const lbmc_model *m, const lbmc_run_options *o, double events,
                            long seed, int (*monitor)(void *ctx), void *ctx, lbmc_calibration *c)
{
  const double rate = 2 * lbmc_model_lambda(m) * (double)lbmc_model_n(m);
  const double T =
      o->transient[2] > 0 ? o->transient[1] : (o->warmup_auto ? 0 : o->warmup) + o->time;
  const int whole = rate * T <= LBMC_CALIBRATION_WHOLE * events;
  lbmc_run_options *co;
  lbmc_err err;
  memset(c, 0, sizeof *c);
  if (lbmc_model_surely_unstable(m)) return LBMC_SUCCESS; /* nothing to simulate */
  co = malloc(sizeof *co);                                /* the options are large (a tail start) */
  if (!co) return LBMC_ERROR(LBMC_ERR_MEMORY, "calibration: out of memory");
  *co = *o;
  if (!whole) { /* a short run of `events`, measured in its segments */
    co->transient[0] = co->transient[1] = co->transient[2] = 0;
    co->warmup_auto = 0;
    co->warmup = 0;
    co->time = events / (rate > 0 ? rate : 1);
    co->batches = LBMC_CALIBRATION_BATCHES;
    /* a run from empty fills in about a time unit or more: shorter calibrations (large
     * n) start near the mean-field fixed point, where the engine has one, to measure the
     * steady state's cost (that start's set-up, e.g. its ODE, is not the run's) */
    if (co->init == LBMC_INIT_EMPTY && co->time < LBMC_CALIBRATION_FILL)
      co->init = LBMC_INIT_MEANFIELD;
  }
  err = lbmc_calibrate_run(m, o, co, seed, whole, rate, monitor, ctx, c);
  free(co);
  return err == LBMC_ERR_INTERRUPTED || !err ? err
                                             : lbmc_error_trace(__FILE__, __LINE__, __func__, err);
}
