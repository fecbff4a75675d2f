/* Rank 0's loop: it hands out units in batches, receives the workers' result messages and
 * settles their records (run_setup.c: lbmc_runner_record, _record_whole), and simulates
 * its own units between ticks of which it serves the workers. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../sim/record.h"
#include "lbmc/engines.h"
#include "lbmc/log.h"
#include "runner_impl.h"

/* Rank 0: 1 when units u0 .. n - 1 of unit[] hold every replica of point p's first round
 * at doubling 0, of which no record has come: a worker can reduce the point alone. */
static int lbmc_runner_whole(const lbmc_runner *run, const long *unit, int u0, int n, long p)
{
  const lbmc_schedule *s = run->sched;
  long have = 0;
  if (s->doubling[p] != 0 || s->target[p] != run->first_round || s->done[p] != 0 || run->acc[p] ||
      run->res->trans)
    return 0;
  for (int u = u0; u < n; u++)
    have += unit[LBMC_UNIT_LONGS * u] == p && unit[LBMC_UNIT_LONGS * u + 2] == 0;
  return have == s->target[p];
}

/* Rank 0: the next units into unit[] (point, replica, doubling, whole each; see the tags'
 * comment in runner_impl.h): as many as are expected to take LBMC_BATCH_SECONDS, at most
 * LBMC_BATCH_UNITS, and then the rest of a first round the batch began (up to
 * LBMC_BATCH_MAX), so that small points travel whole. Returns how many (0: none now). */
static int lbmc_runner_take(lbmc_runner *run, long *unit)
{
  double expected = 0;
  int n = 0, doubling = 0, start = 0; /* start: the first unit of the last point */
  for (;;) {
    long *u = unit + LBMC_UNIT_LONGS * n;
    if (n >= LBMC_BATCH_MAX) break;
    if (n >= LBMC_BATCH_UNITS || expected >= LBMC_BATCH_SECONDS) {
      /* go on only to finish the first round of the last point, begun in this batch */
      const long p = u[-LBMC_UNIT_LONGS], r = u[-LBMC_UNIT_LONGS + 1];
      const long left = run->sched->target[p] - (r + 1);
      if (u[-LBMC_UNIT_LONGS + 2] != 0 || unit[LBMC_UNIT_LONGS * start + 1] != 0 || left <= 0 ||
          run->sched->target[p] != run->first_round || left > LBMC_BATCH_MAX - n ||
          expected + (double)left * lbmc_unit_nominal(run, p, 0) > 2 * LBMC_BATCH_SECONDS)
        break;
    }
    if (!lbmc_schedule_next(run->sched, &u[0], &u[1], &doubling)) break;
    u[2] = doubling;
    u[3] = 0;
    if (n > 0 && u[0] != u[-LBMC_UNIT_LONGS]) start = n;
    expected += lbmc_unit_nominal(run, u[0], doubling);
    n++;
    if (n - start == run->first_round && lbmc_runner_whole(run, unit, start, n, u[0]))
      u[3] = run->first_round;
  }
  return n;
}

/* Rank 0: answer rank `src` with the next units (lbmc_runner_take), or park it, or
 * release it. */
static void lbmc_runner_dispatch(lbmc_runner *run, int src)
{
  long unit[LBMC_UNIT_LONGS * LBMC_BATCH_MAX] = {-1, -1, 0, 0};
  int n = 1;
  if (!run->stopping && !lbmc_schedule_all_finished(run->sched)) {
    n = lbmc_runner_take(run, unit);
    if (n == 0) {
      run->waiting[run->nwaiting++] = src;
      return;
    }
    lbmc_runner_issued(run, src, unit, n);
  } else {
    run->released++;
    run->workers[src].released = 1;
    run->workers[src].asked = 0;
  }
  /* not MPI_Send: a blocking send can wait for the worker to make progress in MPI */
  MPI_Wait(&run->workers[src].sreq, MPI_STATUS_IGNORE); /* done: the worker has answered it */
  memcpy(run->workers[src].sent, unit, sizeof(long) * LBMC_UNIT_LONGS * (size_t)n);
  MPI_Isend(run->workers[src].sent, LBMC_UNIT_LONGS * n, MPI_LONG, src, LBMC_TAG_WORK, run->comm,
            &run->workers[src].sreq);
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

/* Rank 0: the entries of a result message of `size` bytes in run->rmsg, each record to its
 * point; first the points the worker reduced whole, which need none of their records
 * reduced again. */
static lbmc_err lbmc_runner_unpack(lbmc_runner *run, size_t size)
{
  const void *rec[LBMC_BATCH_MAX];
  size_t rec_size[LBMC_BATCH_MAX], at = 0;
  lbmc_msg_entry e;
  int count = 0, taken, got;
  while ((got = lbmc_msg_next(run->rmsg, size, &at, &e)) > 0)
    if (e.reduced) {
      LBMC_CALL(lbmc_runner_record_whole(run, e.data, e.bytes, rec, rec_size, count, &taken));
      run->reduced += taken;
    } else if (count < LBMC_BATCH_MAX) {
      rec[count] = e.data;
      rec_size[count++] = e.bytes;
    }
  if (got < 0)
    return LBMC_ERROR(LBMC_ERR_INTERNAL,
                      "runner: a result message is not a list of replica records");
  for (at = 0; lbmc_msg_next(run->rmsg, size, &at, &e) > 0;)
    if (!e.reduced) {
      run->units_run++;
      LBMC_CALL(lbmc_runner_record(run, e.data, e.bytes, 1));
    }
  return LBMC_SUCCESS;
}

/* Rank 0: the workers' pending heartbeats; one of the units a worker holds now (not of an
 * earlier batch) is the time its silence counts from. */
static void lbmc_runner_beats(lbmc_runner *run)
{
  int flag;
  long batch;
  MPI_Status st;
  for (;;) {
    MPI_Iprobe(MPI_ANY_SOURCE, LBMC_TAG_BEAT, run->comm, &flag, &st);
    if (!flag) break;
    MPI_Recv(&batch, 1, MPI_LONG, st.MPI_SOURCE, LBMC_TAG_BEAT, run->comm, &st);
    if (batch == run->workers[st.MPI_SOURCE].batches && run->workers[st.MPI_SOURCE].nunits > 0)
      run->workers[st.MPI_SOURCE].t_beat = MPI_Wtime();
  }
}

/* Rank 0: handle every pending message of the workers: heartbeats, results, then control
 * codes. */
static lbmc_err lbmc_runner_serve(lbmc_runner *run)
{
  int flag, code;
  size_t size = 0;
  MPI_Status st;
  lbmc_runner_beats(run);
  for (;;) {
    MPI_Iprobe(MPI_ANY_SOURCE, LBMC_TAG_RESULT, run->comm, &flag, &st);
    if (!flag) break;
    LBMC_CALL(lbmc_runner_receive(run, &st, &size));
    lbmc_runner_heard(run, st.MPI_SOURCE, 1);
    /* the worker's next units first: it simulates them while rank 0 reduces these */
    lbmc_runner_dispatch(run, st.MPI_SOURCE);
    LBMC_CALL(lbmc_runner_unpack(run, size));
  }
  for (;;) {
    MPI_Iprobe(MPI_ANY_SOURCE, LBMC_TAG_CONTROL, run->comm, &flag, &st);
    if (!flag) break;
    MPI_Recv(&code, 1, MPI_INT, st.MPI_SOURCE, LBMC_TAG_CONTROL, run->comm, &st);
    lbmc_runner_heard(run, st.MPI_SOURCE, 0);
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
  lbmc_runner_watch(run);
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

/* Rank 0: 1 once every worker has asked for its first units (or is presumed frozen, or
 * released): rank 0 takes units for itself only then, so that the first units go to the
 * workers however late they start (a loaded machine) and a job of small points is not
 * run by rank 0 alone; the wait is the workers' start-up, a frozen one's --stall at most. */
static int lbmc_runner_workers_in(const lbmc_runner *run)
{
  for (int k = 1; k < run->size; k++) {
    const lbmc_worker *w = &run->workers[k];
    if (!w->asked && w->batches == 0 && !w->lost && !w->released) return 0;
  }
  return 1;
}

static void lbmc_nap(void)
{
  struct timespec ts = {0, 1000000}; /* 1 ms: rank 0 idles without spinning */
  nanosleep(&ts, NULL);
}

/* Rank 0: the scheduling loop, simulating whenever there is a unit for it and no
 * message waits (the workers' results come first: their records are rank 0's work). */
lbmc_err lbmc_runner_root(lbmc_runner *run)
{
  lbmc_serve_ctx ctx = {run, LBMC_SUCCESS};
  long unit[LBMC_UNIT_LONGS * LBMC_BATCH_MAX];
  int aborted = 0, n = 0, next = 0, workers_in = 0;
  for (int k = 1; k < run->size; k++) run->workers[k].t_heard = MPI_Wtime();
  while (!lbmc_schedule_all_finished(run->sched) && !run->stopping) {
    LBMC_CALL(lbmc_runner_serve(run));
    if (run->stopping || lbmc_schedule_all_finished(run->sched)) break;
    workers_in = workers_in || lbmc_runner_workers_in(run);
    /* its own units in batches as a worker's, so that small points stay whole on one rank
       (a point split between ranks is reduced by rank 0) */
    if (next == n && workers_in) n = lbmc_runner_take(run, unit), next = 0;
    if (next < n) {
      const long *u = unit + LBMC_UNIT_LONGS * next++;
      const double t = MPI_Wtime();
      lbmc_err err =
          lbmc_runner_simulate(run, u[0], u[1], (int)u[2], lbmc_runner_root_monitor, &ctx);
      if (ctx.err) return ctx.err;
      if (err == LBMC_ERR_INTERRUPTED) break;
      LBMC_CALL(err);
      lbmc_runner_pace(run, u[0], (int)u[2], MPI_Wtime() - t);
      run->units_run++;
      LBMC_CALL(lbmc_runner_record(run, run->msg, run->msg_size, 1));
    } else {
      lbmc_nap();
    }
  }
  if (run->stopping)
    for (int k = 1; k < run->size; k++)
      MPI_Send(&aborted, 1, MPI_INT, k, LBMC_TAG_ABORT, run->comm);
  run->stopping = 1;          /* from here on every request is answered with "stop" */
  for (double grace = -1;;) { /* a frozen rank cannot be released: it gets a grace period */
    if (run->released + run->nlost >= run->size - 1) {
      if (run->nlost == 0) break;
      if (grace < 0)
        grace = MPI_Wtime() + fmax(lbmc_runner_stall(run->set), LBMC_STALL_END_GRACE);
      else if (MPI_Wtime() >= grace)
        break;
    }
    LBMC_CALL(lbmc_runner_serve(run));
    lbmc_nap();
  }
  lbmc_runner_beats(run);             /* sent before the workers' last requests */
  for (int k = 1; k < run->size; k++) /* a frozen rank's stop message is left to MPI */
    if (run->workers[k].lost)
      MPI_Request_free(&run->workers[k].sreq);
    else
      MPI_Wait(&run->workers[k].sreq, MPI_STATUS_IGNORE);
  lbmc_runner_progress(run, 1);
  return LBMC_SUCCESS;
}
