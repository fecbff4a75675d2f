/* The run loops: rank 0 schedules between ticks of its own replicas; the other ranks
 * ask rank 0 for work units, sending the result of the previous one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbmc/log.h"
#include "runner_impl.h"

lbmc_err lbmc_runner_simulate(lbmc_runner *run, long point, long replica, int doubling,
                              int (*monitor)(void *), void *ctx)
{
  lbmc_unit u;
  lbmc_err err;
  if (run->cached != point) {
    lbmc_replica_destroy(&run->rep);
    lbmc_model_destroy(&run->model);
    run->cached = -1;
    LBMC_CALL(lbmc_job_point_model(run->job, run->grid[point], &run->model));
    lbmc_job_point_options(run->job, run->grid[point], &run->opts);
    LBMC_CALL(lbmc_replica_create(run->model, &run->opts, &run->rep));
    run->cached = point;
  }
  lbmc_replica_set_monitor(run->rep, monitor, ctx);
  u.point = run->grid[point];
  /* streams by the point's scenario: common random numbers across its policies */
  u.scenario = lbmc_job_point_scenario(run->job, run->grid[point]);
  u.replica = replica;
  u.replicas_max = run->Rmax;
  u.seed = lbmc_job_seed(run->job);
  u.doubling = doubling;
  u.one_replica = run->first_round == 1;
  err = lbmc_replica_record(run->rep, &u, &run->msg, &run->msg_size);
  if (err)
    return err == LBMC_ERR_INTERRUPTED ? err : lbmc_error_trace(__FILE__, __LINE__, __func__, err);
  return LBMC_SUCCESS;
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
  long unit[3] = {-1, -1, 0};
  int doubling = 0;
  if (!run->stopping && !lbmc_schedule_all_finished(run->sched)) {
    if (!lbmc_schedule_next(run->sched, &unit[0], &unit[1], &doubling)) {
      run->waiting[run->nwaiting++] = src;
      return;
    }
    unit[2] = doubling;
  } else {
    run->released++;
  }
  MPI_Send(unit, 3, MPI_LONG, src, LBMC_TAG_WORK, run->comm);
}

/* Rank 0: receive the record announced by st into run->rmsg (grown to fit). */
static lbmc_err lbmc_runner_receive(lbmc_runner *run, MPI_Status *st, size_t *size)
{
  int bytes;
  MPI_Get_count(st, MPI_BYTE, &bytes);
  if ((size_t)bytes > run->rmsg_cap) {
    size_t cap = (size_t)bytes + ((size_t)bytes >> 2) + 64;
    free(run->rmsg);
    run->rmsg = malloc(cap);
    run->rmsg_cap = run->rmsg ? cap : 0;
    if (!run->rmsg) return LBMC_ERROR(LBMC_ERR_MEMORY, "runner: out of memory for a record");
  }
  MPI_Recv(run->rmsg, bytes, MPI_BYTE, st->MPI_SOURCE, LBMC_TAG_RESULT, run->comm, st);
  *size = (size_t)bytes;
  return LBMC_SUCCESS;
}

/* Rank 0: handle every pending message of the workers: results, then control codes. */
static lbmc_err lbmc_runner_serve(lbmc_runner *run)
{
  int flag, code;
  size_t size = 0;
  MPI_Status st;
  for (;;) {
    MPI_Iprobe(MPI_ANY_SOURCE, LBMC_TAG_RESULT, run->comm, &flag, &st);
    if (!flag) break;
    LBMC_CALL(lbmc_runner_receive(run, &st, &size));
    run->units_run++;
    LBMC_CALL(lbmc_runner_record(run, run->rmsg, size, 1));
    lbmc_runner_dispatch(run, st.MPI_SOURCE);
  }
  for (;;) {
    MPI_Iprobe(MPI_ANY_SOURCE, LBMC_TAG_CONTROL, run->comm, &flag, &st);
    if (!flag) break;
    MPI_Recv(&code, 1, MPI_INT, st.MPI_SOURCE, LBMC_TAG_CONTROL, run->comm, &st);
    if (code == LBMC_CTL_SIGNALLED) run->stopping = 1;
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
  int aborted = 0, doubling;
  while (!lbmc_schedule_all_finished(run->sched) && !run->stopping) {
    LBMC_CALL(lbmc_runner_serve(run));
    if (run->stopping || lbmc_schedule_all_finished(run->sched)) break;
    if (lbmc_schedule_next(run->sched, &p, &r, &doubling)) {
      lbmc_err err = lbmc_runner_simulate(run, p, r, doubling, lbmc_runner_root_monitor, &ctx);
      if (ctx.err) return ctx.err;
      if (err == LBMC_ERR_INTERRUPTED) break;
      LBMC_CALL(err);
      run->units_run++;
      LBMC_CALL(lbmc_runner_record(run, run->msg, run->msg_size, 1));
    } else {
      lbmc_nap();
    }
  }
  if (run->stopping)
    for (int k = 1; k < run->size; k++)
      MPI_Send(&aborted, 1, MPI_INT, k, LBMC_TAG_ABORT, run->comm);
  run->stopping = 1; /* from here on every request is answered with "stop" */
  while (run->released < run->size - 1) {
    LBMC_CALL(lbmc_runner_serve(run));
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

/* A worker: send its last replica record or a control code (which asks for work),
 * simulate the unit it gets, until told to stop. */
static lbmc_err lbmc_runner_worker(lbmc_runner *run)
{
  long unit[3];
  int flag, dummy, has_result = 0;
  for (;;) {
    const int signalled = run->set->stop && *run->set->stop;
    if (has_result) {
      MPI_Send((void *)run->msg, (int)run->msg_size, MPI_BYTE, 0, LBMC_TAG_RESULT, run->comm);
    } else {
      int code = signalled ? LBMC_CTL_SIGNALLED : LBMC_CTL_READY;
      MPI_Send(&code, 1, MPI_INT, 0, LBMC_TAG_CONTROL, run->comm);
    }
    MPI_Recv(unit, 3, MPI_LONG, 0, LBMC_TAG_WORK, run->comm, MPI_STATUS_IGNORE);
    if (unit[0] < 0) break;
    {
      lbmc_err err = lbmc_runner_simulate(run, unit[0], unit[1], (int)unit[2],
                                          lbmc_runner_worker_monitor, run);
      if (err && err != LBMC_ERR_INTERRUPTED) return err;
      has_result = err == LBMC_SUCCESS;
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
