/* lbmc sim's run of its one point: the replicas one after another through sequential
 * mode's driver (src/run/schedule.h, shared with lbmc run's runner: rounds of replicas,
 * longer runs), progress and an ETA on a terminal, partial results after Ctrl-C, and the
 * point printed as a table or as JSON. */
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../io/results.h"
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
  int meanfield_advice; /* not stationary from empty, and a mean-field start applies */
  long done;            /* replicas of the estimates after an interruption */
  int interrupted;
  int shorter;          /* interrupted in a longer run before a replica of it finished: the
                           estimates are the last round's, of the shorter run */
  int64_t round_events; /* events and CPU seconds of the last round reduced (a longer run */
  double round_cpu;     /* frees its replicas' records) */
  int64_t events;
  double cpu;
  long finished, rounds; /* replicas finished and rounds reduced, for LBMC_TEST_STOP */
  int progress;          /* LBMC_SIM_PROGRESS_* */
  double every;          /* seconds between two progress lines off a terminal */
  int tty;               /* progress on a terminal: one live line */
  volatile sig_atomic_t *stop;
  double t0, shown;
  /* --limit: the limits in the estimates' layout, their sources, the answer holding them;
   * with --limit refined the same of the refined mean field x* + V/n */
  int limit; /* LBMC_LIMIT_* */
  double *limit_values, *refined_values;
  const char *limit_sources[LBMC_METRICS], *refined_sources[LBMC_METRICS];
  json_t *limit_answer, *refined_answer;
  lbmc_err limit_err;
  lbmc_transient trans; /* a transient run's estimates (times 0: none) */
  json_t *trans_json;   /* and as JSON (--json; with --limit refined its curves) */
} lbmc_sim_run;

/* Seconds between two progress lines when stderr is not a terminal, unless --progress
 * gives them. */
#define LBMC_SIM_LOG_EVERY 5.0

static double lbmc_sim_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A test's Ctrl-C at a known moment, not after a sleep: LBMC_TEST_STOP=replicas=N raises
 * SIGINT once N replicas have finished (0: before the first starts), reduction=N during
 * the reduction of round N (from 1), as the real signal would arrive. */
static void lbmc_sim_test_stop(const char *when, long count)
{
  const char *spec = getenv("LBMC_TEST_STOP");
  const size_t len = strlen(when);
  if (spec && strncmp(spec, when, len) == 0 && spec[len] == '=' &&
      strtol(spec + len + 1, NULL, 10) == count)
    raise(SIGINT);
}

/* "replica 12 of 40 (30%, a longer run), 3.1 s, ETA 7 s": on a terminal one live line,
 * at most twice a second (force: clear it); otherwise a line every s->every seconds, the first once
 * the run has lasted that long (--progress always: at once). The ETA is the round's, from the
 * replicas done and the running one's simulated time. */
static void lbmc_sim_progress(lbmc_sim_run *s, int force)
{
  const long done = s->sched->done[0], target = s->sched->target[0];
  const double now = lbmc_sim_now(), el = now - s->t0;
  const double f = s->rep && done < target ? lbmc_replica_fraction(s->rep) : 0, got = done + f;
  char eta[32] = "ETA unknown";
  if (s->progress == LBMC_SIM_PROGRESS_NEVER || (!s->tty && force)) return;
  if (now - s->shown < (s->tty ? 0.5 : s->every) && !force) return;
  s->shown = now;
  if (force) {
    fprintf(stderr, "\r%78s\r", "");
    return;
  }
  if (got > 0.01) snprintf(eta, sizeof eta, "ETA %.0f s", el / got * ((double)target - got));
  fprintf(stderr, "%slbmc sim: replica %ld of %ld (%.0f%%%s), %.1f s, %s%s", s->tty ? "\r" : "",
          done < target ? done + 1 : target, target, 100 * f,
          lbmc_point_doubling(s->acc) ? ", a longer run" : "", el, eta, s->tty ? "   " : "\n");
  fflush(stderr);
}

/* The replica driver's monitor, polled inside the engine: progress, and stop at SIGINT
 * or SIGTERM. */
static int lbmc_sim_monitor(void *ctx)
{
  lbmc_sim_run *s = ctx;
  lbmc_sim_progress(s, 0);
  return *s->stop != 0;
}

/* The calibration's monitor: stop at SIGINT or SIGTERM. */
static int lbmc_sim_stopped(void *ctx)
{
  const lbmc_sim_run *s = ctx;
  return *s->stop != 0;
}

/* Nominal events of the first round below which no estimate is printed (a few seconds
 * at most: the calibration would be a fair part of the run). */
#define LBMC_SIM_ESTIMATE_EVENTS 2e7

/* The cost estimate up front, to stderr: a calibration of the engine on this point
 * (lbmc_run_calibrate) for a run long enough to need one (--progress always: any run;
 * never: none). A signal during it: s->interrupted. */
static lbmc_err lbmc_sim_estimate(lbmc_sim_run *s)
{
  const long R = s->sched->target[0];
  /* a transient run lasts T1 of T0:T1:DT (its time setting is unused) */
  const double T =
      s->o.transient[2] > 0 ? s->o.transient[1] : (s->o.warmup_auto ? 0 : s->o.warmup) + s->o.time;
  lbmc_calibration c;
  lbmc_err err;
  if (!s->rep || s->progress == LBMC_SIM_PROGRESS_NEVER ||
      (s->progress != LBMC_SIM_PROGRESS_ALWAYS &&
       2 * lbmc_model_lambda(s->m) * (double)lbmc_model_n(s->m) * T * (double)R <
           LBMC_SIM_ESTIMATE_EVENTS))
    return LBMC_SUCCESS;
  err = lbmc_run_calibrate(s->m, &s->o, LBMC_CALIBRATION_EVENTS, lbmc_job_seed(s->job),
                           lbmc_sim_stopped, s, &c);
  if (err == LBMC_ERR_INTERRUPTED) {
    s->interrupted = 1;
    return LBMC_SUCCESS;
  }
  LBMC_CALL(err);
  fprintf(stderr,
          "lbmc sim: estimated %.3g CPU s for %ld replica%s%s (%.3g s each on the %s engine, from "
          "a calibration run of %.3g events of this point)\n",
          lbmc_calibration_point(&c, &s->o, R, 0), R, R == 1 ? "" : "s",
          lbmc_job_precision(s->job)->enabled ? " in the first round" : "",
          lbmc_calibration_replica(&c, &s->o, 0), c.engine, c.events);
  fflush(stderr);
  return LBMC_SUCCESS;
}

/* A round is complete (R replicas; 0 for a point with nothing to simulate): sequential
 * mode's decision, said on stderr. */
static lbmc_err lbmc_sim_settle(lbmc_sim_run *s, long R)
{
  char why[256];
  lbmc_next what;
  lbmc_sim_test_stop("reduction", ++s->rounds);
  s->round_events = 0;
  s->round_cpu = 0;
  for (long r = 0; r < R; r++) {
    lbmc_point_replica_info info;
    LBMC_CALL(lbmc_point_replica(s->acc, r, &info));
    s->round_events += info.events;
    s->round_cpu += info.cpu_seconds;
  }
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
  lbmc_sim_test_stop("replicas", ++s->finished);
  return LBMC_SUCCESS;
}

/* Units until the point is finished (rounds of more replicas, or longer runs) or a
 * signal stops them. */
static lbmc_err lbmc_sim_rounds(lbmc_sim_run *s)
{
  long p, r, R;
  int doubling;
  if (!s->rep) return lbmc_sim_settle(s, 0); /* rho >= 1 with unlimited buffers */
  lbmc_sim_test_stop("replicas", 0);
  while (lbmc_schedule_next(s->sched, &p, &r, &doubling)) {
    LBMC_CALL(lbmc_sim_replica(s, r, doubling));
    if (s->interrupted) return LBMC_SUCCESS;
    if ((R = lbmc_schedule_round(s->sched, 0)) > 0) LBMC_CALL(lbmc_sim_settle(s, R));
  }
  return LBMC_SUCCESS;
}

/* After an interruption: the replicas that finished (s->done), if the point can use
 * them; in a longer run none of whose replicas finished, the last round reduced (of the
 * shorter run, not stationary: s->shorter). */
static int lbmc_sim_partial(lbmc_sim_run *s)
{
  lbmc_sim_progress(s, 1);
  s->done = s->sched->done[0];
  if (s->done > 0 && lbmc_point_decide_early(s->acc, s->done)) return 0;
  while (s->done > 0 && !lbmc_point_ready(s->acc, s->done)) s->done--;
  if (s->done == 0 && lbmc_point_doubling(s->acc) > 0 && s->rounds > 0) {
    s->shorter = 1; /* the point's estimates and verdict are still the last round's */
    s->done = lbmc_point_verdict(s->acc)->replicas;
    return 1;
  }
  if (s->done == 0 || lbmc_point_reduce(s->acc, s->done)) return 0;
  return 1;
}

static lbmc_err lbmc_sim_totals(lbmc_sim_run *s)
{
  const long R = lbmc_point_verdict(s->acc)->replicas;
  if (s->shorter) { /* the records of those replicas are gone */
    s->events = s->round_events;
    s->cpu = s->round_cpu;
    return LBMC_SUCCESS;
  }
  for (long r = 0; r < R; r++) {
    lbmc_point_replica_info info;
    LBMC_CALL(lbmc_point_replica(s->acc, r, &info));
    s->events += info.events;
    s->cpu += info.cpu_seconds;
  }
  return LBMC_SUCCESS;
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
  if (s->shorter) /* the longer run that was interrupted */
    json_object_set_new(root, "interrupted_time",
                        json_real(ldexp(s->o.time, lbmc_point_doubling(s->acc))));
  json_object_set_new(root, "verdict", lbmc_cli_json_verdict(v));
  json_object_set_new(
      root, "estimates",
      lbmc_cli_json_estimates(lbmc_point_estimates(s->acc), d.J, s->o.tail_k, s->limit_values,
                              s->limit_sources, s->refined_values, s->refined_sources,
                              s->refined_answer
                                  ? lbmc_limit_reason(json_array_get(s->refined_answer, 0))
                                  : "the refined values could not be computed"));
  if (s->limit) { /* where the limit column comes from, or why it is missing */
    json_t *lim = json_object(),
           *notes = json_object_get(json_array_get(s->limit_answer, 0), "notes");
    json_object_set_new(lim, "source",
                        json_string("lbmc_analysis.limits (python3 -m lbmc_analysis limit; "
                                    "docs/limits.md)"));
    json_object_set_new(lim, "notes", notes ? json_incref(notes) : json_array());
    if (s->limit == LBMC_LIMIT_REFINED) {
      json_t *rn = json_object_get(json_array_get(s->refined_answer, 0), "notes");
      json_object_set_new(lim, "refined_n", json_integer((json_int_t)d.n));
      json_object_set_new(lim, "refined_notes", rn ? json_incref(rn) : json_array());
    }
    json_object_set_new(lim, "error",
                        s->limit_err ? json_string("the limits could not be "
                                                   "computed: see the message "
                                                   "on stderr")
                                     : json_null());
    json_object_set_new(root, "limit", lim);
  }
  if (lbmc_point_pairs(s->acc))
    json_object_set_new(root, "pairs", lbmc_cli_json_pairs(lbmc_point_pairs(s->acc)));
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
  if (s->meanfield_advice) json_object_set_new(root, "suggested_init", json_string("meanfield"));
  for (int i = 0; i < LBMC_QUANTILES; i++)
    json_array_append_new(levels, json_real(lbmc_quantile_level(i)));
  json_object_set_new(root, "quantile_levels", levels);
  if (s->trans.times > 0) json_object_set_new(root, "transient", s->trans_json);
  json_dumpf(root, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
  fputc('\n', stdout);
  json_decref(root);
}

/* The sources of the limit column, one line per distinct source with the metrics it
 * gives (metrics without a limit have no source and are left out). */
static void lbmc_sim_print_sources(const char *const *sources)
{
  for (int m = 0; m < LBMC_METRICS; m++) {
    bool first = true;
    if (!sources[m]) continue;
    for (int e = 0; e < m && first; e++) first = !(sources[e] && !strcmp(sources[e], sources[m]));
    if (!first) continue;
    printf("  %s:", sources[m]);
    for (int e = m; e < LBMC_METRICS; e++)
      if (sources[e] && !strcmp(sources[e], sources[m]))
        printf("%s %s", e == m ? "" : ",", lbmc_metric_get(e)->name);
    printf("\n");
  }
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
  if (s->shorter)
    printf("note: interrupted in the longer run (time %g) before a replica of it finished: "
           "these are the %ld replicas of the shorter run (time %g), which was not stationary\n",
           ldexp(s->o.time, lbmc_point_doubling(s->acc)), v->replicas, v->time_used);
  lbmc_cli_print_verdict(stdout, v);
  if (s->meanfield_advice)
    printf("  or start near the mean-field fixed point: --init meanfield (the %s engine has "
           "it; it removes most of the warm-up)\n",
           s->engine);
  if (v->status == LBMC_STATUS_UNSTABLE) return;
  printf("estimates (%s intervals, %s):\n", lbmc_cli_level(s->o.confidence, lv, sizeof lv),
         v->replicas > 1 ? "pooled over the replicas" : "batch means of one replica");
  lbmc_cli_print_point(stdout, s->m, s->o.tail_k, lbmc_point_estimates(s->acc), s->limit_values,
                       s->refined_values, lbmc_point_start_bias(s->acc));
  if (s->limit_values && !s->limit_err) {
    printf("limit (n -> inf): lbmc_analysis.limits (docs/limits.md); '-' where none is known; "
           "what each value is:\n");
    lbmc_sim_print_sources(s->limit_sources);
  }
  if (s->refined_values && !s->limit_err)
    printf("refined x*+V/n: the refined mean field at n = %lld (Gast & Van Houdt 2017; error "
           "O(1/n^2)); '-' where none is known: %s\n",
           (long long)lbmc_model_n(s->m), lbmc_limit_reason(json_array_get(s->refined_answer, 0)));
  if (s->trans.times > 0) lbmc_cli_print_transient(stdout, &s->trans, s->o.confidence);
  printf("events: %lld after warm-up in %.3f CPU s (%.3g events/s)\n", (long long)s->events, s->cpu,
         s->cpu > 0 ? (double)s->events / s->cpu : 0.0);
}

/* --limit: the point's limits (one call of the Python package) into s; on failure the
 * column stays unknown and s->limit_err says why (the estimates are printed all the
 * same). */
static void lbmc_sim_limits(lbmc_sim_run *s)
{
  const lbmc_estimates *e = lbmc_point_estimates(s->acc);
  lbmc_model_description d;
  json_t *points = json_array();
  lbmc_model_describe(s->m, &d);
  s->limit_values = malloc(sizeof *s->limit_values * (e->total + 1));
  if (!s->limit_values || !points) {
    json_decref(points);
    s->limit_err = LBMC_ERROR(LBMC_ERR_MEMORY, "--limit: out of memory");
    return;
  }
  for (size_t k = 0; k < e->total; k++) s->limit_values[k] = NAN;
  json_array_append_new(points, lbmc_limit_point(&d, s->o.tail_k));
  if (lbmc_point_verdict(s->acc)->status == LBMC_STATUS_UNSTABLE) /* no refined value there */
    json_object_set_new(json_array_get(points, 0), "status", json_string("unstable"));
  s->limit_err = lbmc_limit_answers("--limit", points, NULL, &s->limit_answer);
  if (!s->limit_err)
    lbmc_limit_values(json_array_get(s->limit_answer, 0), d.J, s->o.tail_k, e->total,
                      s->limit_values, s->limit_sources);
  if (!s->limit_err && s->limit == LBMC_LIMIT_REFINED) { /* at the point's own n */
    static const char *const refined[] = {"--refined", "n", NULL};
    s->refined_values = malloc(sizeof *s->refined_values * (e->total + 1));
    if (!s->refined_values) s->limit_err = LBMC_ERROR(LBMC_ERR_MEMORY, "--limit: out of memory");
    for (size_t k = 0; s->refined_values && k < e->total; k++) s->refined_values[k] = NAN;
    if (!s->limit_err)
      s->limit_err = lbmc_limit_answers("--limit refined", points, refined, &s->refined_answer);
    if (!s->limit_err)
      lbmc_limit_values(json_array_get(s->refined_answer, 0), d.J, s->o.tail_k, e->total,
                        s->refined_values, s->refined_sources);
  }
  json_decref(points);
}

/* A transient run's estimates as JSON, with --limit refined the ODE and x(t) + V(t)/n
 * beside them (on failure the message is said and the curves are missing). */
static void lbmc_sim_transient_json(lbmc_sim_run *s)
{
  lbmc_model_description d;
  s->trans_json = lbmc_cli_json_transient(&s->trans);
  if (s->limit != LBMC_LIMIT_REFINED || s->limit_err) return;
  lbmc_model_describe(s->m, &d);
  s->limit_err = lbmc_limit_transient(&d, s->o.tail_k, &s->o, &s->trans, s->trans_json);
}

/* -o FILE: the point as a results file (the layout of lbmc run's, one point; with
 * /transient for a transient run), complete unless the run was interrupted. */
static lbmc_err lbmc_sim_write(const lbmc_sim_run *s, const char *path)
{
  const char *text = lbmc_job_text(s->job);
  lbmc_results *res = NULL;
  lbmc_err err;
  time_t now = time(NULL);
  struct tm tm;
  LBMC_CALL(lbmc_results_create(1, lbmc_model_pools(s->m), (int)s->o.tail_k, s->o.pairs, &res));
  res->job_text = strdup(text ? text : "");
  err = res->job_text ? lbmc_grid_from_job(s->job, &res->grid)
                      : LBMC_ERROR(LBMC_ERR_MEMORY, "-o: out of memory");
  res->seed = lbmc_job_seed(s->job);
  res->confidence = s->o.confidence;
  res->mpi_ranks = 1;
  res->wall_seconds = lbmc_sim_now() - s->t0;
  res->complete = !s->interrupted;
  gmtime_r(&now, &tm);
  strftime(res->created, sizeof res->created, "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!err && s->o.transient[2] > 0) err = lbmc_results_transient_of(res, &s->o);
  if (!err) err = lbmc_results_set_point(res, 0, 0, s->m, &s->o);
  if (!err) err = lbmc_results_store(res, 0, s->acc);
  res->pt[0].done = 1;
  if (!err) err = lbmc_results_write(res, path);
  if (!err) {
    fflush(stdout); /* the table first where both go to one file */
    fprintf(stderr, "lbmc sim: wrote %s\n", path);
  }
  lbmc_results_destroy(&res);
  return err;
}

/* Run the point (rounds, a signal's partial results), then print it. */
static lbmc_err lbmc_sim_point(lbmc_sim_run *s, int json)
{
  s->stop = lbmc_cli_catch_stop_signals(0);
  if (s->rep) lbmc_replica_set_monitor(s->rep, lbmc_sim_monitor, s);
  s->tty = isatty(STDERR_FILENO);
  s->t0 = s->shown = lbmc_sim_now();
  if (s->progress == LBMC_SIM_PROGRESS_ALWAYS && !s->tty) s->shown -= s->every;
  LBMC_CALL(lbmc_sim_estimate(s));
  if (!s->interrupted) LBMC_CALL(lbmc_sim_rounds(s));
  if (s->interrupted && !lbmc_sim_partial(s)) {
    fprintf(stderr, "lbmc sim: interrupted before a replica finished: nothing to show\n");
    return LBMC_ERR_INTERRUPTED;
  }
  if (s->shorter)
    fprintf(stderr,
            "lbmc sim: interrupted before a replica of the longer run (time %g) finished: "
            "partial results from the %ld finished replica%s of the shorter run (time %g, not "
            "stationary)\n",
            ldexp(s->o.time, lbmc_point_doubling(s->acc)), s->done, s->done == 1 ? "" : "s",
            lbmc_point_verdict(s->acc)->time_used);
  else if (s->interrupted)
    fprintf(stderr, "lbmc sim: interrupted: partial results from %ld finished replica%s\n", s->done,
            s->done == 1 ? "" : "s");
  LBMC_CALL(lbmc_sim_totals(s));
  if (s->limit) lbmc_sim_limits(s);
  if (s->o.transient[2] > 0 && s->rep && !s->shorter) {
    LBMC_CALL(lbmc_point_transient(s->acc, lbmc_point_verdict(s->acc)->replicas, &s->trans));
    if (json) lbmc_sim_transient_json(s);
  }
  s->meanfield_advice = lbmc_point_verdict(s->acc)->status == LBMC_STATUS_NOT_STATIONARY &&
                        s->o.init == LBMC_INIT_EMPTY && s->rep &&
                        lbmc_replica_meanfield_applies(s->rep);
  if (json)
    lbmc_sim_print_json(s);
  else
    lbmc_sim_print_table(s);
  if (lbmc_job_output(s->job)) LBMC_CALL(lbmc_sim_write(s, lbmc_job_output(s->job)));
  return s->interrupted ? LBMC_ERR_INTERRUPTED : s->limit_err;
}

lbmc_err lbmc_sim_run_point(const lbmc_job *job, const lbmc_model *m, const lbmc_run_options *o,
                            const char *engine, int json, int limit, int progress, double every)
{
  const double cost = 1; /* one point: any cost */
  size_t threshold;
  lbmc_sim_run s;
  lbmc_err err;
  memset(&s, 0, sizeof s);
  s.job = job;
  s.m = m;
  s.o = *o;
  s.engine = engine;
  s.limit = limit;
  s.progress = progress;
  s.every = isnan(every) ? LBMC_SIM_LOG_EVERY : every;
  LBMC_CALL_GOTO(err, lbmc_rep_store_threshold(&threshold), done); /* before the run, not after */
  LBMC_CALL_GOTO(err, lbmc_point_create(m, &s.o, lbmc_job_replicas(job), &s.acc), done);
  lbmc_point_set_target(s.acc, lbmc_job_precision(job));
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
  free(s.limit_values);
  free(s.refined_values);
  json_decref(s.limit_answer);
  json_decref(s.refined_answer);
  lbmc_transient_free(&s.trans);
  return err;
}
