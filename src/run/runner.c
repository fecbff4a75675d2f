/* The run loops: rank 0 schedules between ticks of its own replicas; the other ranks
 * ask rank 0 for work units, sending the result of the previous one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbmc/log.h"
#include "runner_impl.h"

lbmc_err lbmc_runner_simulate(lbmc_runner *run, long point, long replica, int (*monitor)(void *),
                              void *ctx)
{
  lbmc_replica_result rr;
  double *m = run->msg;
  lbmc_err err;
  if (run->cached != point) {
    lbmc_replica_destroy(&run->rep);
    lbmc_model_destroy(&run->model);
    run->cached = -1;
    LBMC_CHECK(lbmc_job_point_model(run->job, run->grid[point], &run->model));
    lbmc_job_point_options(run->job, run->grid[point], &run->opts);
    LBMC_CHECK(lbmc_replica_create(run->model, &run->opts, &run->rep));
    run->cached = point;
  }
  lbmc_replica_set_monitor(run->rep, monitor, ctx);
  rr.values = m + LBMC_MSG_HEAD;
  rr.batch_values = (run->with_batches && replica == 0) ? m + LBMC_MSG_HEAD + run->total : NULL;
  err = lbmc_replica_run(run->rep, run->grid[point], replica, run->Rmax, lbmc_job_seed(run->job),
                         &rr);
  if (err)
    return err == LBMC_ERR_INTERRUPTED ? err : lbmc_error_trace(__FILE__, __LINE__, __func__, err);
  m[LBMC_MSG_POINT] = (double)point;
  m[LBMC_MSG_REPLICA] = (double)replica;
  m[LBMC_MSG_STATUS] = (double)rr.status;
  m[LBMC_MSG_EVENTS] = (double)rr.events;
  m[LBMC_MSG_WARMUP] = rr.warmup;
  m[LBMC_MSG_CPU] = rr.cpu_seconds;
  m[LBMC_MSG_SIMTIME] = rr.sim_time;
  m[LBMC_MSG_GROWTH] = rr.growth;
  m[LBMC_MSG_HAS_BATCH] = rr.batch_values != NULL;
  return LBMC_SUCCESS;
}

/* Rank 0: store the result held in a message buffer. */
static lbmc_err lbmc_runner_record_msg(lbmc_runner *run, const double *m)
{
  lbmc_replica_result rr;
  rr.status = (lbmc_status)m[LBMC_MSG_STATUS];
  rr.events = (int64_t)m[LBMC_MSG_EVENTS];
  rr.warmup = m[LBMC_MSG_WARMUP];
  rr.cpu_seconds = m[LBMC_MSG_CPU];
  rr.sim_time = m[LBMC_MSG_SIMTIME];
  rr.growth = m[LBMC_MSG_GROWTH];
  rr.values = (double *)m + LBMC_MSG_HEAD;
  rr.batch_values = m[LBMC_MSG_HAS_BATCH] != 0 ? (double *)m + LBMC_MSG_HEAD + run->total : NULL;
  run->units_run++;
  return lbmc_runner_record(run, (long)m[LBMC_MSG_POINT], (long)m[LBMC_MSG_REPLICA], &rr);
}

static void lbmc_runner_progress(lbmc_runner *run, int force)
{
  double now = MPI_Wtime(), el = now - run->t0;
  const lbmc_schedule *s = run->sched;
  double left, eta;
  if (run->set->quiet || run->set->dry_run) return;
  if (!force && now - run->t_progress < run->set->progress_seconds) return;
  run->t_progress = now;
  left = s->cost_planned - s->cost_done;
  eta = (s->cost_live > 0 && run->units_run > 0) ? el * left / s->cost_live : NAN;
  lbmc_log(
      run->comm, stderr, "lbmc run: %ld units done, %ld/%ld points, elapsed %.1f s, ETA %s%.0f s\n",
      run->units_run, s->points_finished, s->P, el, isnan(eta) ? "? " : "", isnan(eta) ? 0.0 : eta);
}

/* Rank 0: answer rank `src` with the next unit, or park it, or release it. */
static void lbmc_runner_dispatch(lbmc_runner *run, int src)
{
  long unit[2] = {-1, -1};
  if (!run->stopping && !lbmc_schedule_all_finished(run->sched)) {
    if (!lbmc_schedule_next(run->sched, &unit[0], &unit[1])) {
      run->waiting[run->nwaiting++] = src;
      return;
    }
  } else {
    run->released++;
  }
  MPI_Send(unit, 2, MPI_LONG, src, LBMC_TAG_WORK, run->comm);
}

/* Rank 0: handle every pending message of the workers. */
static lbmc_err lbmc_runner_serve(lbmc_runner *run)
{
  int flag;
  MPI_Status st;
  for (;;) {
    MPI_Iprobe(MPI_ANY_SOURCE, LBMC_TAG_RESULT, run->comm, &flag, &st);
    if (!flag) break;
    MPI_Recv(run->rmsg, (int)run->msg_len, MPI_DOUBLE, st.MPI_SOURCE, LBMC_TAG_RESULT, run->comm,
             &st);
    if (run->rmsg[LBMC_MSG_POINT] >= 0) LBMC_CHECK(lbmc_runner_record_msg(run, run->rmsg));
    if (run->rmsg[LBMC_MSG_POINT] == -2) run->stopping = 1; /* that rank was signalled */
    lbmc_runner_dispatch(run, st.MPI_SOURCE);
  }
  /* results may have opened new rounds or finished the run: serve the parked ranks */
  while (run->nwaiting > 0) {
    int before = run->nwaiting, src = run->waiting[--run->nwaiting];
    lbmc_runner_dispatch(run, src);
    if (run->nwaiting == before) break; /* parked again: nothing to hand out */
  }
  if (run->set->stop && *run->set->stop) run->stopping = 1;
  lbmc_runner_progress(run, 0);
  return LBMC_SUCCESS;
}

typedef struct {
  lbmc_runner *run;
  lbmc_err err;
} lbmc_serve_ctx;

static int lbmc_runner_root_monitor(void *ctx)
{
  lbmc_serve_ctx *c = ctx;
  c->err = lbmc_runner_serve(c->run);
  return c->err != LBMC_SUCCESS || c->run->stopping;
}

static void lbmc_nap(void)
{
  struct timespec ts = {0, 1000000}; /* 1 ms: rank 0 idles without spinning */
  nanosleep(&ts, NULL);
}

/* Rank 0: the scheduling loop, simulating whenever there is a unit for it. */
static lbmc_err lbmc_runner_root(lbmc_runner *run)
{
  lbmc_serve_ctx ctx = {run, LBMC_SUCCESS};
  long p, r;
  int aborted = 0;
  while (!lbmc_schedule_all_finished(run->sched) && !run->stopping) {
    LBMC_CHECK(lbmc_runner_serve(run));
    if (run->stopping || lbmc_schedule_all_finished(run->sched)) break;
    if (lbmc_schedule_next(run->sched, &p, &r)) {
      lbmc_err err = lbmc_runner_simulate(run, p, r, lbmc_runner_root_monitor, &ctx);
      if (ctx.err) return ctx.err;
      if (err == LBMC_ERR_INTERRUPTED) break;
      LBMC_CHECK(err);
      LBMC_CHECK(lbmc_runner_record_msg(run, run->msg));
    } else {
      lbmc_nap();
    }
  }
  if (run->stopping)
    for (int k = 1; k < run->size; k++)
      MPI_Send(&aborted, 1, MPI_INT, k, LBMC_TAG_ABORT, run->comm);
  run->stopping = 1; /* from here on every request is answered with "stop" */
  while (run->released < run->size - 1) {
    LBMC_CHECK(lbmc_runner_serve(run));
    lbmc_nap();
  }
  lbmc_runner_progress(run, 1);
  return LBMC_SUCCESS;
}

static int lbmc_runner_worker_monitor(void *ctx)
{
  lbmc_runner *run = ctx;
  int flag;
  if (run->set->stop && *run->set->stop) return 1;
  MPI_Iprobe(0, LBMC_TAG_ABORT, run->comm, &flag, MPI_STATUS_IGNORE);
  return flag;
}

/* A worker: request, simulate, send back, until told to stop. */
static lbmc_err lbmc_runner_worker(lbmc_runner *run)
{
  long unit[2];
  int flag, dummy;
  run->msg[LBMC_MSG_POINT] = -1;
  for (;;) {
    if (run->set->stop && *run->set->stop && run->msg[LBMC_MSG_POINT] == -1)
      run->msg[LBMC_MSG_POINT] = -2;
    MPI_Send(run->msg, (int)run->msg_len, MPI_DOUBLE, 0, LBMC_TAG_RESULT, run->comm);
    MPI_Recv(unit, 2, MPI_LONG, 0, LBMC_TAG_WORK, run->comm, MPI_STATUS_IGNORE);
    if (unit[0] < 0) break;
    {
      lbmc_err err = lbmc_runner_simulate(run, unit[0], unit[1], lbmc_runner_worker_monitor, run);
      if (err == LBMC_ERR_INTERRUPTED)
        run->msg[LBMC_MSG_POINT] = (run->set->stop && *run->set->stop) ? -2 : -1;
      else if (err)
        return err;
    }
  }
  for (;;) { /* drain an abort notice that crossed the stop reply */
    MPI_Iprobe(0, LBMC_TAG_ABORT, run->comm, &flag, MPI_STATUS_IGNORE);
    if (!flag) break;
    MPI_Recv(&dummy, 1, MPI_INT, 0, LBMC_TAG_ABORT, run->comm, MPI_STATUS_IGNORE);
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_run_job(const lbmc_job *job, const lbmc_run_settings *settings, MPI_Comm comm)
{
  lbmc_runner run;
  int code;
  lbmc_err err;
  memset(&run, 0, sizeof run);
  run.comm = comm;
  run.job = job;
  run.set = settings;
  MPI_Comm_rank(comm, &run.rank);
  MPI_Comm_size(comm, &run.size);
  run.t0 = run.t_progress = MPI_Wtime();
  err = lbmc_runner_setup(&run);
  code = (int)err;
  MPI_Allreduce(MPI_IN_PLACE, &code, 1, MPI_INT, MPI_MAX, comm); /* any failed set-up stops all */
  if (code == LBMC_SUCCESS && settings->dry_run) {
    if (run.rank == 0) lbmc_runner_dry_run(&run);
  } else if (code == LBMC_SUCCESS) {
    err = run.rank == 0 ? lbmc_runner_root(&run) : lbmc_runner_worker(&run);
    if (err) MPI_Abort(comm, lbmc_exit_status(err)); /* a failed rank cannot be recovered */
    if (run.rank == 0) {
      int complete = lbmc_schedule_all_finished(run.sched);
      err = lbmc_runner_finish(&run, complete);
      if (!err && !complete) {
        lbmc_log(MPI_COMM_NULL, stderr,
                 "lbmc run: stopped; %ld of %ld points finished and written to %s; finished "
                 "replicas are in %s.ckpt: continue with --resume\n",
                 run.sched->points_finished, run.P, settings->output, settings->output);
        err = LBMC_ERR_INTERRUPTED;
      }
    }
    code = (int)err;
    MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  }
  lbmc_runner_teardown(&run);
  return (lbmc_err)code;
}
