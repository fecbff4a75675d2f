/* lbmc sim's run of its one point: the replicas one after another through sequential
 * mode's driver (src/run/schedule.h, shared with lbmc run's runner: rounds of replicas,
 * longer runs), progress and an ETA on a terminal, partial results after Ctrl-C, and the
 * point printed as a table or as JSON. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../run/schedule.h"
#include "cli.h"
#include "lbmc/metrics.h"

/* lbmc sim's point while it runs, and what the run was. */
typedef struct {
  const lbmc_job *job;
  const lbmc_model *m;
  lbmc_run_options o;   /* the point's (the replica keeps a pointer to it) */
  const char *engine;   /* the engine that runs the replicas */
  lbmc_replica *rep;    /* NULL when there is nothing to simulate */
  lbmc_point *acc;      /* the replicas so far */
  lbmc_schedule *sched; /* sequential mode's rounds and doublings, of one point */
  char init_note[256];  /* why the replicas did not start as asked ("" if they did) */
  long done;            /* replicas of the estimates after an interruption */
  int interrupted;
  int64_t events;
  double cpu;
  int tty; /* progress on a terminal */
  double t0, shown;
} lbmc_sim_run;

/* The replica driver's monitor: stop at SIGINT or SIGTERM (ctx: the flag). */
static int lbmc_sim_monitor(void *ctx) { return *(volatile sig_atomic_t *)ctx != 0; }

static double lbmc_sim_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "replica 12 of 40 (a longer run), 3.1 s, ETA 7 s" on a terminal, at most twice a
 * second, before replica `done` of the round; force: clear the line. */
static void lbmc_sim_progress(lbmc_sim_run *s, int force)
{
  const long done = s->sched->done[0], target = s->sched->target[0];
  double now = lbmc_sim_now(), el = now - s->t0;
  if (!s->tty || (!force && now - s->shown < 0.5)) return;
  s->shown = now;
  if (force) {
    fprintf(stderr, "\r%70s\r", "");
    return;
  }
  fprintf(stderr, "\rlbmc sim: replica %ld of %ld%s, %.1f s, ETA %.0f s   ", done + 1, target,
          lbmc_point_doubling(s->acc) ? " (a longer run)" : "", el,
          done > 0 ? el / (double)done * (double)(target - done) : 0.0);
  fflush(stderr);
}

/* A round is complete (R replicas; 0 for a point with nothing to simulate): sequential
 * mode's decision, said on stderr. */
static lbmc_err lbmc_sim_settle(lbmc_sim_run *s, long R)
{
  char why[256];
  lbmc_next what;
  LBMC_CALL(lbmc_schedule_settle(s->sched, 0, R, s->acc, lbmc_job_precision(s->job), &what, why,
                                 sizeof why));
  lbmc_sim_progress(s, 1);
  if (*why) fprintf(stderr, "lbmc sim: %s\n", why);
  return LBMC_SUCCESS;
}

/* Replica r at `doubling` into the point; a signal stops it (s->interrupted). */
static lbmc_err lbmc_sim_replica(lbmc_sim_run *s, long r, int doubling)
{
  const lbmc_unit u = {0,
                       0,
                       r,
                       lbmc_job_replicas_max(s->job),
                       lbmc_job_seed(s->job),
                       doubling,
                       lbmc_job_replicas(s->job) == 1};
  const void *rec;
  size_t size;
  int used;
  lbmc_err err;
  lbmc_sim_progress(s, 0);
  err = lbmc_replica_record(s->rep, &u, &rec, &size);
  if (err == LBMC_ERR_INTERRUPTED) {
    s->interrupted = 1;
    return LBMC_SUCCESS;
  }
  LBMC_CALL(err);
  LBMC_CALL(lbmc_point_add(s->acc, rec, size, &used));
  lbmc_schedule_done(s->sched, 0, r, 1);
  return LBMC_SUCCESS;
}

/* Units until the point is finished (rounds of more replicas, or longer runs) or a
 * signal stops them. */
static lbmc_err lbmc_sim_rounds(lbmc_sim_run *s)
{
  long p, r, R;
  int doubling;
  if (!s->rep) return lbmc_sim_settle(s, 0); /* rho >= 1 with unlimited buffers */
  while (lbmc_schedule_next(s->sched, &p, &r, &doubling)) {
    LBMC_CALL(lbmc_sim_replica(s, r, doubling));
    if (s->interrupted) return LBMC_SUCCESS;
    if ((R = lbmc_schedule_round(s->sched, 0)) > 0) LBMC_CALL(lbmc_sim_settle(s, R));
  }
  return LBMC_SUCCESS;
}

/* After an interruption: the replicas that finished (s->done), if the point can use
 * them. */
static int lbmc_sim_partial(lbmc_sim_run *s)
{
  lbmc_sim_progress(s, 1);
  s->done = s->sched->done[0];
  if (s->done > 0 && lbmc_point_decide_early(s->acc, s->done)) return 0;
  while (s->done > 0 && !lbmc_point_ready(s->acc, s->done)) s->done--;
  if (s->done == 0 || lbmc_point_reduce(s->acc, s->done)) return 0;
  return 1;
}

static void lbmc_sim_totals(lbmc_sim_run *s)
{
  const long R = lbmc_point_verdict(s->acc)->replicas;
  for (long r = 0; r < R; r++) {
    lbmc_point_replica_info info;
    lbmc_point_replica(s->acc, r, &info);
    s->events += info.events;
    s->cpu += info.cpu_seconds;
  }
}

static void lbmc_sim_print_json(const lbmc_sim_run *s)
{
  const lbmc_verdict *v = lbmc_point_verdict(s->acc);
  json_t *root = json_object(), *levels = json_array();
  lbmc_model_description d;
  lbmc_model_describe(s->m, &d);
  json_object_set_new(root, "status", json_string(lbmc_status_name(v->status)));
  if (*v->reason) json_object_set_new(root, "reason", json_string(v->reason));
  if (s->interrupted) json_object_set_new(root, "interrupted", json_true());
  json_object_set_new(root, "verdict", lbmc_cli_json_verdict(v));
  json_object_set_new(root, "estimates",
                      lbmc_cli_json_estimates(lbmc_point_estimates(s->acc), d.J, s->o.tail_k));
  json_object_set_new(root, "replicas", json_integer(v->replicas));
  json_object_set_new(root, "events", json_integer(s->events));
  json_object_set_new(root, "cpu_seconds", json_real(s->cpu));
  json_object_set_new(root, "warmup",
                      isfinite(v->warmup_used) ? json_real(v->warmup_used) : json_null());
  json_object_set_new(root, "model", lbmc_cli_json_model(&d));
  json_object_set_new(root, "seed", json_integer(lbmc_job_seed(s->job)));
  json_object_set_new(root, "confidence", json_real(s->o.confidence));
  json_object_set_new(root, "common_random_numbers", json_true());
  json_object_set_new(root, "engine", json_string(s->engine));
  json_object_set_new(root, "init", json_string(lbmc_init_kind_names[s->o.init]));
  if (*s->init_note) json_object_set_new(root, "init_note", json_string(s->init_note));
  for (int i = 0; i < LBMC_QUANTILES; i++)
    json_array_append_new(levels, json_real(lbmc_quantile_level(i)));
  json_object_set_new(root, "quantile_levels", levels);
  json_dumpf(root, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
  fputc('\n', stdout);
  json_decref(root);
}

static void lbmc_sim_print_table(const lbmc_sim_run *s)
{
  const lbmc_verdict *v = lbmc_point_verdict(s->acc);
  lbmc_model_description d;
  char lv[32];
  lbmc_model_describe(s->m, &d);
  lbmc_cli_print_model(stdout, &d);
  printf("run: %ld replica%s, warm-up %s%.6g, measured time %.6g per replica, %ld batches, "
         "seed %ld, engine %s, start %s%s\n",
         v->replicas, v->replicas == 1 ? "" : "s", s->o.warmup_auto ? "auto (MSER), " : "",
         v->warmup_used, v->time_used, s->o.batches, lbmc_job_seed(s->job), s->engine,
         lbmc_init_kind_names[s->o.init], s->interrupted ? " (interrupted: partial results)" : "");
  if (*s->init_note) printf("note: %s\n", s->init_note);
  lbmc_cli_print_verdict(stdout, v);
  if (v->status == LBMC_STATUS_UNSTABLE) return;
  printf("estimates (%s intervals, %s):\n", lbmc_cli_level(s->o.confidence, lv, sizeof lv),
         v->replicas > 1 ? "pooled over the replicas" : "batch means of one replica");
  lbmc_cli_print_point(stdout, s->m, s->o.tail_k, lbmc_point_estimates(s->acc));
  printf("events: %lld after warm-up in %.3f CPU s (%.3g events/s)\n", (long long)s->events, s->cpu,
         s->cpu > 0 ? (double)s->events / s->cpu : 0.0);
}

/* Run the point (rounds, a signal's partial results), then print it. */
static lbmc_err lbmc_sim_point(lbmc_sim_run *s, int json)
{
  volatile sig_atomic_t *stop = lbmc_cli_catch_stop_signals(0);
  if (s->rep) lbmc_replica_set_monitor(s->rep, lbmc_sim_monitor, (void *)stop);
  s->tty = isatty(STDERR_FILENO);
  s->t0 = s->shown = lbmc_sim_now();
  LBMC_CALL(lbmc_sim_rounds(s));
  if (s->interrupted && !lbmc_sim_partial(s)) {
    fprintf(stderr, "lbmc sim: interrupted before a replica finished: nothing to show\n");
    return LBMC_ERR_INTERRUPTED;
  }
  if (s->interrupted)
    fprintf(stderr, "lbmc sim: interrupted: partial results from %ld finished replica%s\n", s->done,
            s->done == 1 ? "" : "s");
  lbmc_sim_totals(s);
  if (json)
    lbmc_sim_print_json(s);
  else
    lbmc_sim_print_table(s);
  return s->interrupted ? LBMC_ERR_INTERRUPTED : LBMC_SUCCESS;
}

lbmc_err lbmc_sim_run_point(const lbmc_job *job, const lbmc_model *m, const lbmc_run_options *o,
                            const char *engine, int json)
{
  const double cost = 1; /* one point: any cost */
  lbmc_sim_run s;
  lbmc_err err;
  memset(&s, 0, sizeof s);
  s.job = job;
  s.m = m;
  s.o = *o;
  s.engine = engine;
  LBMC_CALL_GOTO(err, lbmc_point_create(m, &s.o, lbmc_job_replicas(job), &s.acc), done);
  LBMC_CALL_GOTO(
      err,
      lbmc_schedule_create(1, &cost, lbmc_job_replicas(job), lbmc_job_replicas_max(job), &s.sched),
      done);
  if (!lbmc_model_surely_unstable(m)) { /* else nothing to simulate */
    LBMC_CALL_GOTO(err, lbmc_replica_create(m, &s.o, &s.rep), done);
    snprintf(s.init_note, sizeof s.init_note, "%s", lbmc_replica_init_note(s.rep));
  }
  err = lbmc_sim_point(&s, json);
done:
  lbmc_replica_destroy(&s.rep);
  lbmc_schedule_destroy(&s.sched);
  lbmc_point_destroy(&s.acc);
  return err;
}
