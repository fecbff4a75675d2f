/* A worker's loop: it asks rank 0 for units, simulates them and sends their records in one
 * result message, with the reduction of a point it ran whole. */
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

/* A worker in its units: a heartbeat to rank 0 when LBMC_BEAT_SECONDS (at most a quarter of
 * --stall) have passed since its units came or its last heartbeat, unless that one is
 * still on its way. */
static void lbmc_runner_beat(lbmc_runner *run)
{
  const double now = MPI_Wtime();
  int done = 1;
  if (now - run->beat_last < run->beat_every) return;
  MPI_Test(&run->beat_req, &done, MPI_STATUS_IGNORE);
  if (!done) return;
  run->beat_last = now;
  run->beat_msg = run->batches;
  MPI_Isend(&run->beat_msg, 1, MPI_LONG, 0, LBMC_TAG_BEAT, run->comm, &run->beat_req);
}

/* A worker's monitor of its units (polled by the engine every few thousand events and
 * between ticks): stop on a signal or rank 0's abort; a heartbeat when one is due. */
static int lbmc_runner_worker_monitor(void *ctx)
{
  lbmc_runner *run = ctx;
  int flag;
  if (run->set->stop && *run->set->stop) return 1;
  lbmc_runner_beat(run);
  MPI_Iprobe(0, LBMC_TAG_ABORT, run->comm, &flag, MPI_STATUS_IGNORE);
  return flag;
}

/* A worker: the record just simulated (run->msg) appended to its result message. */
static lbmc_err lbmc_runner_pack(lbmc_runner *run)
{
  return lbmc_msg_append(&run->out, &run->out_size, &run->out_cap, 0, run->msg, run->msg_size, NULL,
                         0);
}

/* A worker: reduce local point `point` from the R records of its first round, the last R
 * of its result message (run->model is its model: the last simulated), as rank 0 would
 * (lbmc_point_reduce, lbmc_point_next, lbmc_results_store); when sequential mode finishes
 * it, the reduction goes after them in the message, and rank 0 only stores it. Otherwise
 * nothing is added: rank 0 reduces the point from its records. */
static lbmc_err lbmc_runner_reduce_whole(lbmc_runner *run, long point, long R)
{
  const unsigned char *rec[LBMC_BATCH_MAX];
  size_t size[LBMC_BATCH_MAX], at = 0, bytes;
  lbmc_point *pt = NULL;
  lbmc_whole_head head;
  lbmc_msg_entry e;
  lbmc_next what;
  long next, n = 0;
  int used = 1;
  lbmc_err err = LBMC_SUCCESS;
  /* the records of the message; its last R are the point's */
  while (lbmc_msg_next(run->out, run->out_size, &at, &e) > 0)
    if (!e.reduced && n < LBMC_BATCH_MAX) rec[n] = e.data, size[n++] = e.bytes;
  if (R > n) return LBMC_ERROR(LBMC_ERR_INTERNAL, "runner: a whole point without its records");
  for (long k = 0; k < R; k++) { /* replicas 0 .. R - 1 of the point at doubling 0, in order */
    lbmc_record r;
    if (lbmc_record_view(rec[n - R + k], size[n - R + k], &r) != 0 ||
        r.h.point != run->grid[point] || r.h.replica != k || r.h.doubling != 0)
      return LBMC_ERROR(LBMC_ERR_INTERNAL, "runner: a whole point without its records");
  }
  if (!run->wres)
    LBMC_CALL(lbmc_results_create(1, lbmc_job_pools(run->job), (int)run->opts.tail_k,
                                  run->opts.pairs, &run->wres));
  LBMC_CALL(lbmc_point_create(run->model, &run->opts, run->first_round, &pt));
  lbmc_point_set_target(pt, lbmc_job_precision(run->job));
  for (long k = n - R; k < n && !err && used; k++) err = lbmc_point_add(pt, rec[k], size[k], &used);
  if (!err && used) err = lbmc_point_reduce(pt, R);
  if (!err && used) {
    memset(&head, 0, sizeof head);
    head.point = run->grid[point];
    head.replicas = R;
    what = lbmc_point_next(pt, lbmc_job_precision(run->job), &next, head.why, sizeof head.why);
    if (what == LBMC_NEXT_DONE) err = lbmc_results_store(run->wres, 0, pt);
    bytes = 0;
    if (what == LBMC_NEXT_DONE && !err)
      err = lbmc_results_pack_point(run->wres, 0, NULL, 0, &bytes);
    if (bytes > 0 && bytes + sizeof head > run->wbuf_cap) {
      free(run->wbuf);
      run->wbuf_cap = bytes + sizeof head;
      if (!(run->wbuf = malloc(run->wbuf_cap))) {
        run->wbuf_cap = 0;
        err = LBMC_ERROR(LBMC_ERR_MEMORY, "runner: out of memory for a reduced point");
      }
    }
    if (bytes > 0 && !err) {
      err = lbmc_results_pack_point(run->wres, 0, run->wbuf, bytes, &bytes);
      if (!err)
        err = lbmc_msg_append(&run->out, &run->out_size, &run->out_cap, 1, &head, sizeof head,
                              run->wbuf, bytes);
      run->reduced++;
    }
  }
  lbmc_point_destroy(&pt);
  return err;
}

/* A worker: send the records of its last batch or a control code (which asks for work),
 * simulate the units it gets, until told to stop. A batch interrupted part way sends
 * nothing of it (its units are redone, as an interrupted unit is). */
lbmc_err lbmc_runner_worker(lbmc_runner *run)
{
  long unit[LBMC_UNIT_LONGS * LBMC_BATCH_MAX];
  int flag, dummy, has_result = 0;
  run->beat_req = MPI_REQUEST_NULL;
  run->beat_every = fmin(LBMC_BEAT_SECONDS, lbmc_runner_stall(run->set) / 4);
  for (;;) {
    const int signalled = run->set->stop && *run->set->stop;
    MPI_Request req[2];
    MPI_Status st;
    int code = signalled ? LBMC_CTL_SIGNALLED : LBMC_CTL_READY, count = 0, n;
    if (has_result)
      MPI_Isend(run->out, (int)run->out_size, MPI_BYTE, 0, LBMC_TAG_RESULT, run->comm, &req[0]);
    else
      MPI_Isend(&code, 1, MPI_INT, 0, LBMC_TAG_CONTROL, run->comm, &req[0]);
    MPI_Irecv(unit, LBMC_UNIT_LONGS * LBMC_BATCH_MAX, MPI_LONG, 0, LBMC_TAG_WORK, run->comm,
              &req[1]);
    lbmc_wait_nap(&req[0], MPI_STATUS_IGNORE); /* large records wait for rank 0's ticks */
    lbmc_wait_nap(&req[1], &st);               /* parked until rank 0 has units */
    MPI_Get_count(&st, MPI_LONG, &count);
    if (count < LBMC_UNIT_LONGS || unit[0] < 0) break;
    run->batches++;
    run->beat_last = MPI_Wtime();
    run->out_size = 0;
    has_result = 0;
    for (n = 0; n < count / LBMC_UNIT_LONGS; n++) {
      const long *u = unit + LBMC_UNIT_LONGS * n;
      lbmc_err err =
          lbmc_runner_simulate(run, u[0], u[1], (int)u[2], lbmc_runner_worker_monitor, run);
      if (err == LBMC_ERR_INTERRUPTED) break;
      LBMC_CALL(err);
      LBMC_CALL(lbmc_runner_pack(run));
      if (u[3] > 0) LBMC_CALL(lbmc_runner_reduce_whole(run, u[0], u[3]));
    }
    has_result = n == count / LBMC_UNIT_LONGS;
  }
  lbmc_wait_nap(&run->beat_req, MPI_STATUS_IGNORE); /* rank 0 drains heartbeats to the end */
  for (;;) { /* drain an abort notice that crossed the stop reply */
    MPI_Iprobe(0, LBMC_TAG_ABORT, run->comm, &flag, MPI_STATUS_IGNORE);
    if (!flag) break;
    MPI_Recv(&dummy, 1, MPI_INT, 0, LBMC_TAG_ABORT, run->comm, MPI_STATUS_IGNORE);
  }
  return LBMC_SUCCESS;
}
