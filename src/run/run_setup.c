/* Run set-up and tear-down, shards, dry run, recording results, the final file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../sim/record.h"
#include "lbmc/engines.h"
#include "lbmc/log.h"
#include "lbmc/metrics.h"
#include "runner_impl.h"

/* Cost of one replica of grid point p: n x simulated time. */
/* "1.2 GiB", "35 MiB", "small": the memory a replica of the job's point p takes at its start
 * (lbmc_run_memory), into buf[len]. */
static const char *lbmc_point_memory(const lbmc_job *job, long p, char *buf, size_t len)
{
  lbmc_run_options o;
  lbmc_model *m = NULL;
  double b = 0;
  lbmc_job_point_options(job, p, &o);
  if (lbmc_job_point_model(job, p, &m) == LBMC_SUCCESS) b = lbmc_run_memory(m, &o, NULL);
  lbmc_model_destroy(&m);
  if (b <= 0)
    snprintf(buf, len, "small");
  else if (b >= 1073741824.0)
    snprintf(buf, len, "%.3g GiB", b / 1073741824.0);
  else if (b >= 1048576.0)
    snprintf(buf, len, "%.3g MiB", b / 1048576.0);
  else
    snprintf(buf, len, "%.3g KiB", b / 1024.0);
  return buf;
}

static double lbmc_point_cost(const lbmc_job *job, long p)
{
  lbmc_run_options o;
  lbmc_model *m = NULL;
  double cost = 0;
  lbmc_job_point_options(job, p, &o);
  if (lbmc_job_point_model(job, p, &m) == LBMC_SUCCESS)
    cost = (double)lbmc_model_n(m) * (o.transient[2] > 0 ? o.transient[1] /* from 0 to T1 */
                                                         : o.time + (o.warmup_auto ? 0 : o.warmup));
  lbmc_model_destroy(&m);
  return cost;
}

lbmc_err lbmc_job_shard_points(const lbmc_job *job, long i, long k, long **points, long *count)
{
  long P = lbmc_job_points(job), n = 0;
  double *cost, *load;
  long *order, *owner;
  if (k < 1 || i < 1 || i > k)
    return LBMC_ERROR(LBMC_ERR_ARG, "--shard: %ld/%ld is not allowed; write i/k with 1 <= i <= k",
                      i, k);
  cost = malloc(sizeof *cost * (size_t)P);
  order = malloc(sizeof *order * (size_t)P);
  owner = malloc(sizeof *owner * (size_t)P);
  load = calloc((size_t)k, sizeof *load);
  *points = malloc(sizeof **points * (size_t)P);
  if (!cost || !order || !owner || !load || !*points) {
    free(cost), free(order), free(owner), free(load), free(*points);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "shards: out of memory");
  }
  for (long p = 0; p < P; p++) cost[p] = lbmc_point_cost(job, p);
  if (lbmc_schedule_order(cost, P, order)) {
    free(cost), free(order), free(owner), free(load), free(*points);
    *points = NULL;
    return LBMC_ERR_MEMORY;
  }
  for (long q = 0; q < P; q++) { /* longest processing time first, to the least loaded */
    long best = 0;
    for (long s = 1; s < k; s++)
      if (load[s] < load[best]) best = s;
    owner[order[q]] = best;
    load[best] += cost[order[q]];
  }
  for (long p = 0; p < P; p++)
    if (owner[p] == i - 1) (*points)[n++] = p;
  *count = n;
  free(cost), free(order), free(owner), free(load);
  return LBMC_SUCCESS;
}

long lbmc_runner_local(const lbmc_runner *run, long grid_index)
{
  long lo = 0, hi = run->P - 1;
  while (lo <= hi) { /* grid indices are increasing: binary search */
    long mid = (lo + hi) / 2;
    if (run->grid[mid] == grid_index) return mid;
    if (run->grid[mid] < grid_index)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* Replay of a checkpoint record into its point and the schedule. */
static lbmc_err lbmc_runner_replay(const void *record, size_t size, void *ctx)
{
  return lbmc_runner_record(ctx, record, size, 0);
}

/* The service texts warned about so far (a distinct few: looked up linearly). */
typedef struct {
  char **text;
  size_t n, cap;
} lbmc_warned;

static void lbmc_warned_free(lbmc_warned *seen)
{
  for (size_t k = 0; k < seen->n; k++) free(seen->text[k]);
  free(seen->text);
}

/* Warn once per service distribution whose means cannot converge (or hardly): the first
 * time its text appears, in the order of the points and pools. */
static lbmc_err lbmc_runner_warn_service(const lbmc_runner *run, const lbmc_model *m,
                                         lbmc_warned *seen)
{
  for (int j = 0; j < lbmc_model_pools(m); j++) {
    const lbmc_service *svc = lbmc_model_service(m, j);
    const char *w = lbmc_service_warning(svc);
    size_t k = 0;
    while (w && k < seen->n && strcmp(seen->text[k], svc->text) != 0) k++;
    if (!w || k < seen->n) continue;
    if (seen->n == seen->cap) {
      size_t cap = seen->cap ? 2 * seen->cap : 8;
      char **t = realloc(seen->text, cap * sizeof *seen->text);
      if (!t) return LBMC_ERROR(LBMC_ERR_MEMORY, "runner: out of memory");
      seen->text = t;
      seen->cap = cap;
    }
    if (!(seen->text[seen->n] = strdup(svc->text)))
      return LBMC_ERROR(LBMC_ERR_MEMORY, "runner: out of memory");
    seen->n++;
    lbmc_log(run->comm, stderr, "lbmc: warning: service %s: %s\n", svc->text, w);
  }
  return LBMC_SUCCESS;
}

/* Rank 0, set-up of many points: "set-up: i of P points" on stderr at most every
 * --progress seconds, the first after LBMC_SETUP_QUIET seconds. */
#define LBMC_SETUP_QUIET 3.0
static void lbmc_runner_setup_progress(lbmc_runner *run, const char *what, long i)
{
  double now;
  if (run->rank != 0 || run->set->quiet || run->set->no_progress || (i & 1023)) return;
  now = MPI_Wtime();
  if (now - run->t0 < LBMC_SETUP_QUIET ||
      (run->t_progress > run->t0 && now - run->t_progress < run->set->progress_seconds))
    return;
  run->t_progress = now;
  lbmc_log(MPI_COMM_NULL, stderr, "lbmc run: set-up: %s, %ld of %ld points, elapsed %.1f s\n", what,
           i, run->P, now - run->t0);
}

/* Rank 0: the point accumulator of local point i (created with its model when missing). */
static lbmc_err lbmc_runner_acc(lbmc_runner *run, long i)
{
  lbmc_run_options o;
  if (run->acc[i]) return LBMC_SUCCESS;
  LBMC_CALL(lbmc_job_point_model(run->job, run->grid[i], &run->acc_model[i]));
  lbmc_job_point_options(run->job, run->grid[i], &o);
  LBMC_CALL(lbmc_point_create(run->acc_model[i], &o, run->first_round, &run->acc[i]));
  lbmc_point_set_target(run->acc[i], lbmc_job_precision(run->job));
  return LBMC_SUCCESS;
}

/* Rank 0: forget the replicas of a finished point. */
static void lbmc_runner_acc_free(lbmc_runner *run, long i)
{
  lbmc_point_destroy(&run->acc[i]);
  lbmc_model_destroy(&run->acc_model[i]);
}

/* The checkpoint is fsync'ed when a point finishes, at most once in this many seconds (and
 * at its close): a killed process loses nothing written, only a crash of the machine can
 * lose the records of the last second (they are simulated again); thousands of small
 * points would otherwise wait for the disk thousands of times. */
#define LBMC_SYNC_SECONDS 1.0

/* Rank 0: point i is stored, finished: the checkpoint synced (at most once a second). */
static void lbmc_runner_stored(lbmc_runner *run, long i)
{
  run->res->pt[i].done = 1;
  if (run->ck && MPI_Wtime() - run->t_synced >= LBMC_SYNC_SECONDS) {
    lbmc_checkpoint_sync(run->ck);
    run->t_synced = MPI_Wtime();
  }
}

/* Rank 0: a point whose round is complete: sequential mode's decision (the log says
 * which and why, unless quiet), and a finished point stored. */
static lbmc_err lbmc_runner_settle(lbmc_runner *run, long i)
{
  long R = lbmc_schedule_round(run->sched, i);
  char why[256];
  lbmc_next what;
  if (R == 0 && !(run->res->pt[i].surely_unstable && !run->res->pt[i].done)) return LBMC_SUCCESS;
  LBMC_CALL(lbmc_runner_acc(run, i));
  LBMC_CALL(lbmc_schedule_settle(run->sched, i, R, run->acc[i], lbmc_job_precision(run->job), &what,
                                 why, sizeof why));
  if (*why && !run->set->quiet && !run->set->dry_run && run->ck)
    lbmc_log(MPI_COMM_NULL, stderr, "lbmc run: point %ld: %s\n", run->grid[i], why);
  if (what != LBMC_NEXT_DONE) return LBMC_SUCCESS;
  LBMC_CALL(lbmc_results_store(run->res, i, run->acc[i]));
  lbmc_runner_acc_free(run, i);
  lbmc_runner_stored(run, i);
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_runner_setup_root(lbmc_runner *run)
{
  char ckpt[4096];
  lbmc_model *m = NULL;
  lbmc_run_options o;
  lbmc_warned warned = {0};
  lbmc_err err = LBMC_SUCCESS;
  lbmc_runner_setup_progress(run, "allocating the results", 0);
  LBMC_CALL(lbmc_results_create(run->P, lbmc_job_pools(run->job), (int)run->opts.tail_k,
                                run->opts.pairs, &run->res));
  run->res->job_text = strdup(lbmc_job_text(run->job));
  if (run->opts.transient[2] > 0) /* the job's time axis (run.transient is no grid axis) */
    LBMC_CALL(lbmc_results_transient_of(run->res, &run->opts));
  LBMC_CALL(lbmc_grid_from_job(run->job, &run->res->grid)); /* the file's /grid */
  run->res->seed = lbmc_job_seed(run->job);
  run->res->confidence = run->opts.confidence;
  run->res->mpi_ranks = run->size;
  lbmc_run_shard_label(run->set, run->res->shard, sizeof run->res->shard);
  for (long i = 0; i < run->P && !err; i++) {
    lbmc_runner_setup_progress(run, "describing", i);
    LBMC_CALL_GOTO(err, lbmc_job_point_model(run->job, run->grid[i], &m), done);
    lbmc_job_point_options(run->job, run->grid[i], &o);
    err = lbmc_results_set_point(run->res, i, run->grid[i], m, &o);
    run->res->pt[i].scenario = lbmc_job_point_scenario(run->job, run->grid[i]);
    if (!err) err = lbmc_runner_warn_service(run, m, &warned);
    lbmc_model_destroy(&m);
  }
done:
  lbmc_warned_free(&warned);
  LBMC_CALL(err);
  LBMC_CALL(lbmc_schedule_create(run->P, run->cost, run->first_round, run->Rmax, &run->sched));
  run->acc = calloc((size_t)run->P + 1, sizeof *run->acc);
  run->acc_model = calloc((size_t)run->P + 1, sizeof *run->acc_model);
  run->waiting = malloc(sizeof *run->waiting * (size_t)run->size);
  if (!run->acc || !run->acc_model || !run->waiting)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "runner: out of memory");
  for (long i = 0; i < run->P; i++) /* rho >= 1 with unlimited buffers: nothing to simulate */
    if (run->res->pt[i].surely_unstable) LBMC_CALL(lbmc_runner_settle(run, i));
  if (run->set->dry_run) return LBMC_SUCCESS;
  snprintf(ckpt, sizeof ckpt, "%s.ckpt", run->set->output);
  return lbmc_checkpoint_open(ckpt, run->set->resume, run->job, run->total, run->opts.batches,
                              run->set->shard_index, run->set->shard_count, lbmc_runner_replay, run,
                              &run->ck);
}

lbmc_err lbmc_runner_setup(lbmc_runner *run)
{
  const lbmc_run_settings *set = run->set;
  run->cached = -1;
  if (set->shard_count > 0) {
    LBMC_CALL(
        lbmc_job_shard_points(run->job, set->shard_index, set->shard_count, &run->grid, &run->P));
  } else {
    run->P = lbmc_job_points(run->job);
    run->grid = malloc(sizeof *run->grid * (size_t)(run->P ? run->P : 1));
    if (!run->grid) return LBMC_ERROR(LBMC_ERR_MEMORY, "runner: out of memory");
    for (long p = 0; p < run->P; p++) run->grid[p] = p;
  }
  lbmc_job_point_options(run->job, 0, &run->opts);
  run->Rmax = lbmc_job_replicas_max(run->job);
  run->first_round = lbmc_job_replicas(run->job);
  run->total =
      lbmc_metric_run_total(lbmc_job_pools(run->job), (int)run->opts.tail_k, run->opts.pairs);
  run->cost = malloc(sizeof *run->cost * (size_t)(run->P ? run->P : 1));
  if (!run->cost) return LBMC_ERROR(LBMC_ERR_MEMORY, "runner: out of memory");
  for (long i = 0; i < run->P; i++) {
    lbmc_runner_setup_progress(run, "costs", i);
    run->cost[i] = lbmc_point_cost(run->job, run->grid[i]);
  }
  return run->rank == 0 ? lbmc_runner_setup_root(run) : LBMC_SUCCESS;
}

void lbmc_runner_teardown(lbmc_runner *run)
{
  lbmc_checkpoint_close(&run->ck, 0);
  for (long i = 0; run->acc && i < run->P; i++) lbmc_runner_acc_free(run, i);
  free(run->acc);
  free(run->acc_model);
  lbmc_schedule_destroy(&run->sched);
  lbmc_results_destroy(&run->res);
  lbmc_replica_destroy(&run->rep);
  lbmc_model_destroy(&run->model);
  lbmc_results_destroy(&run->wres);
  free(run->wbuf);
  free(run->grid);
  free(run->cost);
  free(run->rmsg);
  free(run->out);
  free(run->waiting);
  free(run->workers);
}

/* Estimated CPU seconds of grid point i's first round from a calibration of its engine
 * (lbmc_run_calibrate): the set-up once per rank that runs it, then each replica; into
 * *cpu, and the calibration's engine events per unit time x time into *events. A
 * calibration that fails leaves both NaN, and the error's message is printed. */
static void lbmc_runner_point_estimate(const lbmc_runner *run, long i, double *cpu, double *events)
{
  const long R = run->sched->target[i];
  const long ranks = run->size < R ? run->size : R;
  lbmc_run_options o;
  lbmc_model *m = NULL;
  lbmc_calibration c;
  *cpu = *events = NAN;
  lbmc_job_point_options(run->job, run->grid[i], &o);
  if (lbmc_job_point_model(run->job, run->grid[i], &m) == LBMC_SUCCESS &&
      lbmc_run_calibrate(m, &o, LBMC_CALIBRATION_EVENTS, lbmc_job_seed(run->job), NULL, NULL, &c) ==
          LBMC_SUCCESS) {
    const double T = lbmc_calibration_replica(&c, &o, 0) - c.start_cpu;
    *cpu = c.engine ? (double)ranks * c.create_cpu + lbmc_calibration_point(&c, &o, R, 0) : 0;
    *events = c.cpu_per_time > 0 ? (double)R * c.events_per_time * T / c.cpu_per_time : 0;
  }
  lbmc_model_destroy(&m);
}

const char *lbmc_run_shard_label(const lbmc_run_settings *set, char *buf, size_t size)
{
  if (set->shard_count > 0)
    snprintf(buf, size, "%ld/%ld", set->shard_index, set->shard_count);
  else if (size > 0)
    buf[0] = '\0';
  return buf;
}

const char *lbmc_runner_resume_flags(const lbmc_run_settings *set, char *buf, size_t size)
{
  char shard[24];
  lbmc_run_shard_label(set, shard, sizeof shard);
  snprintf(buf, size, "--resume%s%s", shard[0] ? " --shard " : "", shard);
  return buf;
}

void lbmc_runner_dry_run(const lbmc_runner *run)
{
  const lbmc_results *res = run->res;
  double events = 0, cpu = 0;
  long units = 0, failed = 0;
  char grid[1024];
  lbmc_grid_text(res->grid, grid, sizeof grid);
  lbmc_log(run->comm, stdout, "%s\n", grid);
  lbmc_log(run->comm, stdout, "%6s %13s %10s %8s %-14s %7s %-8s %-9s %10s %10s %10s %10s  %s\n",
           "point", "n", "lambda", "rho", "policy", "routers", "stale", "engine", "memory", "time",
           "warmup", "CPU s", "grid axes");
  for (long i = 0; i < run->P; i++) {
    const lbmc_point_info *p = &res->pt[i];
    double e, c;
    char w[32], axes[512], mem[32];
    if (isnan(p->warmup))
      snprintf(w, sizeof w, "auto");
    else
      snprintf(w, sizeof w, "%g", p->warmup);
    lbmc_job_point_label(run->job, p->index, axes, sizeof axes);
    lbmc_runner_point_estimate(run, i, &c, &e);
    lbmc_log(run->comm, stdout,
             "%6ld %13ld %10g %8.4g %-14s %7ld %-8s %-9s %10s %10g %10s %10.3g  %s\n", p->index,
             p->n, p->lambda, p->rho, p->policy, p->routers, *p->stale ? p->stale : "-", p->engine,
             lbmc_point_memory(run->job, run->grid[i], mem, sizeof mem), p->time, w, c, axes);
    units += run->res->pt[i].surely_unstable ? 0 : run->sched->target[i];
    if (isnan(c)) {
      failed++;
      continue;
    }
    events += e;
    cpu += c;
  }
  lbmc_log(run->comm, stdout,
           "%ld points, %ld work units (point x replica)%s; about %.3g events, about %.3g CPU "
           "seconds (each point's engine calibrated on a run of %.0f events of that point, from "
           "its mean-field start where the engine has one; the set-up once per rank)%s\n",
           run->P, units, lbmc_job_precision(run->job)->enabled ? " in the first round" : "",
           events, cpu, LBMC_CALIBRATION_EVENTS,
           failed ? "; points whose calibration failed (CPU s nan) are left out" : "");
}

lbmc_err lbmc_runner_record(lbmc_runner *run, const void *record, size_t size, int live)
{
  lbmc_record rec;
  long i;
  int used;
  if (lbmc_record_view(record, size, &rec) != 0 ||
      (i = lbmc_runner_local(run, (long)rec.h.point)) < 0 || rec.h.replica < 0 ||
      rec.h.replica >= run->Rmax) {
    if (live)
      return LBMC_ERROR(LBMC_ERR_INTERNAL, "runner: a result message is not a replica of this run");
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "the checkpoint holds a record (point %lld, replica %lld) that this run "
                      "(shard) does not have; it belongs to another run",
                      (long long)rec.h.point, (long long)rec.h.replica);
  }
  if (run->res->pt[i].done) return LBMC_SUCCESS; /* a finished point: nothing left to do */
  /* the second result of a unit re-issued from a rank presumed frozen: the same record */
  if (live && lbmc_schedule_is_done(run->sched, i, (long)rec.h.replica, (int)rec.h.doubling))
    return LBMC_SUCCESS;
  LBMC_CALL(lbmc_runner_acc(run, i));
  LBMC_CALL(lbmc_point_add(run->acc[i], record, size, &used));
  if (!used) return LBMC_SUCCESS; /* of a doubling the point has left */
  /* live results go to the checkpoint; replayed ones (run->ck not open yet) come from it */
  if (run->ck && live) LBMC_CALL(lbmc_checkpoint_append(run->ck, record, size));
  lbmc_schedule_done(run->sched, i, (long)rec.h.replica, live && run->ck != NULL);
  return lbmc_runner_settle(run, i);
}

lbmc_err lbmc_runner_record_whole(lbmc_runner *run, const void *whole, size_t size,
                                  const void *const *rec, const size_t *rec_size, int count,
                                  int *taken)
{
  lbmc_whole_head head;
  const void *mine[LBMC_BATCH_MAX] = {NULL};
  size_t mine_size[LBMC_BATCH_MAX];
  lbmc_schedule *s = run->sched;
  long i, R, have = 0;
  *taken = 0;
  if (size < sizeof head)
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "runner: a reduced point of %zu bytes", size);
  memcpy(&head, whole, sizeof head);
  head.why[sizeof head.why - 1] = '\0';
  i = lbmc_runner_local(run, (long)head.point);
  R = (long)head.replicas;
  /* the point as the worker found it: nothing of it in (a unit re-issued from a rank
     presumed frozen may have come back first), its first round, doubling 0 */
  if (i < 0 || run->res->pt[i].done || run->acc[i] || s->finished[i] || s->doubling[i] != 0 ||
      s->target[i] != R || s->done[i] != 0 || R > LBMC_BATCH_MAX || run->res->trans || !run->ck)
    return LBMC_SUCCESS;
  for (int k = 0; k < count; k++) { /* its records in the message, by replica */
    lbmc_record r;
    if (lbmc_record_view(rec[k], rec_size[k], &r) != 0 || r.h.point != head.point) continue;
    if (r.h.doubling != 0 || r.h.replica < 0 || r.h.replica >= R || mine[r.h.replica])
      return LBMC_SUCCESS;
    mine[r.h.replica] = rec[k];
    mine_size[r.h.replica] = rec_size[k];
    have++;
  }
  if (have != R) return LBMC_SUCCESS;
  for (long r = 0; r < R; r++) { /* counted in run->units_run with the other records */
    LBMC_CALL(lbmc_checkpoint_append(run->ck, mine[r], mine_size[r]));
    lbmc_schedule_done(s, i, r, 1);
  }
  if (lbmc_schedule_round(s, i) != R)
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "runner: point %ld reduced whole with %ld replicas",
                      head.point, R);
  if (*head.why && !run->set->quiet)
    lbmc_log(MPI_COMM_NULL, stderr, "lbmc run: point %ld: %s\n", run->grid[i], head.why);
  lbmc_schedule_finish(s, i);
  LBMC_CALL(lbmc_results_unpack_point(run->res, i, (const unsigned char *)whole + sizeof head,
                                      size - sizeof head));
  lbmc_runner_stored(run, i);
  *taken = 1;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_runner_finish(lbmc_runner *run, int complete)
{
  lbmc_results *res = run->res, *out = res;
  time_t now = time(NULL);
  struct tm tm;
  lbmc_err err;
  gmtime_r(&now, &tm);
  strftime(res->created, sizeof res->created, "%Y-%m-%dT%H:%M:%SZ", &tm);
  res->wall_seconds = MPI_Wtime() - run->t0;
  res->complete = complete;
  if (!complete) { /* keep the finished points only */
    long n = 0;
    for (long i = 0; i < res->P; i++) n += res->pt[i].done;
    LBMC_CALL(lbmc_results_subset(res, n, &out));
  }
  err = lbmc_results_write(out, run->set->output);
  if (out != res) lbmc_results_destroy(&out);
  if (!err) lbmc_checkpoint_close(&run->ck, complete);
  if (err && run->ck) { /* the checkpoint stays whole: nothing is simulated again */
    char again[64];
    lbmc_log(MPI_COMM_NULL, stderr,
             "lbmc run: the finished replicas are safe in %s.ckpt; once the cause is fixed, "
             "write the results with lbmc run JOB.yaml -o %s %s (nothing is simulated "
             "again)\n",
             run->set->output, run->set->output,
             lbmc_runner_resume_flags(run->set, again, sizeof again));
  }
  return err;
}
