/* The run loops: rank 0 schedules between ticks of its own replicas; the other ranks
 * ask rank 0 for work units (small ones in batches), sending the records of the previous
 * ones. */
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

/* ---- liveness of the workers (rank 0) ---- */

/* Cost of a unit: n x simulated time, doubled per doubling (the schedule's measure). */
static double lbmc_unit_cost(const lbmc_runner *run, long p, int doubling)
{
  return ldexp(run->cost[p], doubling);
}

/* Wall time of a unit at the engine's nominal speed (about 2 lambda n events per unit of
 * time), seconds: what sizes batches (the pace of the units finished so far
 * includes the waits of the messages, which would shrink batches as they grow). */
static double lbmc_unit_nominal(const lbmc_runner *run, long p, int doubling)
{
  const lbmc_point_info *pt = &run->res->pt[p];
  return 2 * pt->lambda * lbmc_unit_cost(run, p, doubling) / lbmc_engine_speed(pt->engine);
}

/* Expected wall time of a unit, seconds: its cost at the slower of the pace of the units
 * finished so far (their wall seconds per unit of cost, from hand-out to result, on every
 * rank) and the engine's nominal speed (about 2 lambda n events per unit of time). */
static double lbmc_unit_expected(const lbmc_runner *run, long p, int doubling)
{
  const double c = lbmc_unit_cost(run, p, doubling);
  return fmax(lbmc_unit_nominal(run, p, doubling),
              run->paced_cost > 0 ? c * run->paced_seconds / run->paced_cost : 0);
}

/* A finished unit of `seconds` wall time: the pace. */
static void lbmc_runner_pace(lbmc_runner *run, long p, int doubling, double seconds)
{
  run->paced_seconds += seconds;
  run->paced_cost += lbmc_unit_cost(run, p, doubling);
}

/* Rank 0: a message from worker src (a result when result = 1): it is alive and holds
 * nothing now. */
static void lbmc_runner_heard(lbmc_runner *run, int src, int result)
{
  lbmc_worker *w = &run->workers[src];
  const double now = MPI_Wtime();
  if (w->lost) {
    w->lost = 0;
    run->nlost--;
    lbmc_log(MPI_COMM_NULL, stderr,
             "lbmc run: rank %d (host %s, pid %ld) answers again after %.0f s; its unit was "
             "given to another rank, and whichever result comes second is ignored\n",
             src, w->host, w->pid, now - w->t_issued);
  } else if (result && w->nunits > 0) {
    double cost = 0;
    for (int u = 0; u < w->nunits; u++)
      cost += lbmc_unit_cost(run, w->unit[u][0], (int)w->unit[u][2]);
    run->paced_seconds += now - w->t_issued;
    run->paced_cost += cost;
  }
  w->nunits = 0;
  w->asked = 1;
  w->t_heard = now;
}

/* Expected wall time of the units worker w holds. */
static double lbmc_batch_expected(const lbmc_runner *run, const lbmc_worker *w)
{
  double t = 0;
  for (int u = 0; u < w->nunits; u++)
    t += lbmc_unit_expected(run, w->unit[u][0], (int)w->unit[u][2]);
  return t;
}

/* Rank 0: the n units unit[LBMC_UNIT_LONGS n] sent to worker dst. */
static void lbmc_runner_issued(lbmc_runner *run, int dst, const long *unit, int n)
{
  lbmc_worker *w = &run->workers[dst];
  for (int u = 0; u < n; u++)
    memcpy(w->unit[u], unit + LBMC_UNIT_LONGS * u, sizeof(long) * LBMC_UNIT_LONGS);
  w->nunits = n;
  w->t_issued = MPI_Wtime();
  w->asked = 0;
}

/* Rank 0: a worker that holds units and has sent nothing for longer than the larger of
 * --stall and LBMC_STALL_FACTOR times their expected time is presumed frozen (stopped,
 * swapped out, a hung node): a warning naming it, and its units back to the schedule for
 * the next rank that asks (or rank 0 itself). Units are deterministic by
 * their stream numbers, so the re-run gives the same record; if the frozen rank answers
 * after all, the second result of the unit is ignored. */
static void lbmc_runner_watch(lbmc_runner *run)
{
  const double now = MPI_Wtime();
  for (int k = 1; k < run->size; k++) {
    lbmc_worker *w = &run->workers[k];
    double expected, limit;
    int again = 0;
    if (w->lost || w->released || w->asked) continue;
    if (w->nunits == 0) { /* never asked for work since the run started */
      if (now - w->t_heard <= run->set->stall_seconds) continue;
      w->lost = 1;
      run->nlost++;
      lbmc_log(MPI_COMM_NULL, stderr,
               "lbmc run: warning: rank %d (host %s, pid %ld) has not asked for work in the "
               "%.0f s since the run started (--stall %g s): presumed frozen\n",
               k, w->host, w->pid, now - w->t_heard, run->set->stall_seconds);
      continue;
    }
    expected = lbmc_batch_expected(run, w);
    limit = fmax(run->set->stall_seconds, LBMC_STALL_FACTOR * expected);
    if (now - w->t_issued <= limit) continue;
    w->lost = 1;
    run->nlost++;
    for (int u = 0; u < w->nunits; u++)
      again += lbmc_schedule_reissue(run->sched, w->unit[u][0], w->unit[u][1], (int)w->unit[u][2]);
    lbmc_log(MPI_COMM_NULL, stderr,
             "lbmc run: warning: rank %d (host %s, pid %ld) has sent nothing for %.0f s while "
             "running point %ld replica %ld%s, expected to take about %.3g s (the limit is the "
             "larger of --stall %g s and %g times that): presumed frozen; %s\n",
             k, w->host, w->pid, now - w->t_issued, run->grid[w->unit[0][0]], w->unit[0][1],
             w->nunits > 1 ? " and other units" : "", expected, run->set->stall_seconds,
             LBMC_STALL_FACTOR,
             again ? "its units go to another rank" : "its units are no longer needed");
  }
}

/* Rank 0: the worker unit in flight the longest (not presumed frozen), or -1. */
static int lbmc_runner_oldest(const lbmc_runner *run)
{
  int oldest = -1;
  for (int k = 1; k < run->size; k++) {
    const lbmc_worker *w = &run->workers[k];
    if (w->nunits > 0 && !w->lost && (oldest < 0 || w->t_issued < run->workers[oldest].t_issued))
      oldest = k;
  }
  return oldest;
}

/* The ETA from the pace of the work done, never "0 s" while units are still out: when
 * the pace says nothing is left, what the run waits for (the unit out the longest). */
static void lbmc_runner_progress(lbmc_runner *run, int force)
{
  double now = MPI_Wtime(), el = now - run->t0;
  const lbmc_schedule *s = run->sched;
  double left, eta;
  char eta_text[256], lost[96] = "", whole[64] = "";
  if (run->set->quiet || run->set->dry_run) return;
  if (!force && now - run->t_progress < run->set->progress_seconds) return;
  run->t_progress = now;
  left = s->cost_planned - s->cost_done;
  eta = (s->cost_live > 0 && run->units_run > 0) ? el * left / s->cost_live : NAN;
  if (run->nlost > 0)
    snprintf(lost, sizeof lost, "; %d rank%s presumed frozen", run->nlost,
             run->nlost > 1 ? "s" : "");
  if (!isnan(eta) && eta >= 0.5) {
    snprintf(eta_text, sizeof eta_text, "ETA %.0f s%s", eta, lost);
  } else if (!lbmc_schedule_all_finished(s) && lbmc_runner_oldest(run) > 0) {
    const int k = lbmc_runner_oldest(run);
    const lbmc_worker *w = &run->workers[k];
    snprintf(eta_text, sizeof eta_text,
             "ETA ? s: waiting for rank %d (host %s): point %ld replica %ld, out for %.0f s, "
             "expected about %.3g s%s",
             k, w->host, run->grid[w->unit[0][0]], w->unit[0][1], now - w->t_issued,
             lbmc_batch_expected(run, w), lost);
  } else {
    snprintf(eta_text, sizeof eta_text, "ETA ? s%s", lost);
  }
  if (run->reduced > 0) /* points the workers reduced whole, rank 0 only stored */
    snprintf(whole, sizeof whole, " (%ld reduced by workers)", run->reduced);
  lbmc_log(run->comm, stderr, "lbmc run: %ld units done, %ld/%ld points%s, elapsed %.1f s, %s\n",
           run->units_run, s->points_finished, s->P, whole, el, eta_text);
}

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

/* Rank 0: the records of a result message of `size` bytes in run->rmsg (framed as the
 * tags' comment in runner_impl.h says), each to its point; first the points the worker
 * reduced whole, which need none of their records reduced again. */
static lbmc_err lbmc_runner_unpack(lbmc_runner *run, size_t size)
{
  const void *rec[LBMC_BATCH_MAX];
  size_t rec_size[LBMC_BATCH_MAX], at = 0;
  int count = 0, taken;
  for (int pass = 0; pass < 2; pass++) {
    int seen = 0;
    at = 0;
    while (at < size) {
      int64_t len;
      size_t bytes;
      if (size - at < sizeof len) break;
      memcpy(&len, run->rmsg + at, sizeof len);
      at += sizeof len;
      bytes = (size_t)(len < 0 ? -len : len);
      if (len == 0 || bytes > size - at) break;
      if (len > 0 && pass == 0 && count < LBMC_BATCH_MAX) {
        rec[count] = run->rmsg + at;
        rec_size[count++] = bytes;
      } else if (len < 0 && pass == 0) {
        LBMC_CALL(
            lbmc_runner_record_whole(run, run->rmsg + at, bytes, rec, rec_size, count, &taken));
        run->reduced += taken;
      } else if (len > 0) {
        run->units_run++;
        LBMC_CALL(lbmc_runner_record(run, run->rmsg + at, bytes, 1));
      }
      seen++;
      at += (bytes + 7) & ~(size_t)7;
    }
    if (at != size || seen == 0) break;
  }
  if (at != size)
    return LBMC_ERROR(LBMC_ERR_INTERNAL,
                      "runner: a result message is not a list of replica records");
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

static void lbmc_nap(void)
{
  struct timespec ts = {0, 1000000}; /* 1 ms: rank 0 idles without spinning */
  nanosleep(&ts, NULL);
}

/* Complete *req (status into *st, or MPI_STATUS_IGNORE) without holding a core (MPI's
 * blocking calls busy-poll, which on a machine with no spare core takes the time of the
 * rank it waits for): test for LBMC_WAIT_SPIN seconds, then sleep between tests from
 * 50 us, doubling up to 8 ms, so that an answer rank 0 gives between its own ticks is
 * seen soon and a long wait (a worker parked, or waiting for rank 0's set-up or final
 * write) costs almost no CPU. Workers get their units in batches (LBMC_BATCH_SECONDS),
 * so the sleep's latency is small against the work of a message. */
#define LBMC_WAIT_SPIN 0.0002
static void lbmc_wait_nap(MPI_Request *req, MPI_Status *st)
{
  const double spin_until = MPI_Wtime() + LBMC_WAIT_SPIN;
  long ns = 50000;
  int done = 0;
  MPI_Test(req, &done, st);
  while (!done && MPI_Wtime() < spin_until) MPI_Test(req, &done, st);
  while (!done) {
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    if (ns < 8000000) ns *= 2;
    MPI_Test(req, &done, st);
  }
}

/* Rank 0: the scheduling loop, simulating whenever there is a unit for it and no
 * message waits (the workers' results come first: their records are rank 0's work). */
static lbmc_err lbmc_runner_root(lbmc_runner *run)
{
  lbmc_serve_ctx ctx = {run, LBMC_SUCCESS};
  long unit[LBMC_UNIT_LONGS * LBMC_BATCH_MAX];
  int aborted = 0, n = 0, next = 0;
  for (int k = 1; k < run->size; k++) run->workers[k].t_heard = MPI_Wtime();
  while (!lbmc_schedule_all_finished(run->sched) && !run->stopping) {
    LBMC_CALL(lbmc_runner_serve(run));
    if (run->stopping || lbmc_schedule_all_finished(run->sched)) break;
    /* its own units in batches as a worker's, so that small points stay whole on one rank
       (a point split between ranks is reduced by rank 0) */
    if (next == n) n = lbmc_runner_take(run, unit), next = 0;
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
        grace = MPI_Wtime() + fmax(run->set->stall_seconds, LBMC_STALL_END_GRACE);
      else if (MPI_Wtime() >= grace)
        break;
    }
    LBMC_CALL(lbmc_runner_serve(run));
    lbmc_nap();
  }
  for (int k = 1; k < run->size; k++) /* a frozen rank's stop message is left to MPI */
    if (run->workers[k].lost)
      MPI_Request_free(&run->workers[k].sreq);
    else
      MPI_Wait(&run->workers[k].sreq, MPI_STATUS_IGNORE);
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

/* A worker: one entry appended to its result message (framed as the tags' comment in
 * runner_impl.h says): the size `len` (negative for a reduced point) and the bytes of a
 * (na bytes) and b (nb), padded to a multiple of 8. */
static lbmc_err lbmc_runner_append(lbmc_runner *run, int64_t len, const void *a, size_t na,
                                   const void *b, size_t nb)
{
  const size_t padded = (na + nb + 7) & ~(size_t)7;
  const size_t need = run->out_size + sizeof len + padded;
  unsigned char *at;
  if (need > run->out_cap) {
    size_t cap = need + (need >> 1) + 64;
    unsigned char *out = realloc(run->out, cap);
    if (!out) return LBMC_ERROR(LBMC_ERR_MEMORY, "runner: out of memory for a result message");
    run->out = out;
    run->out_cap = cap;
  }
  at = run->out + run->out_size;
  memcpy(at, &len, sizeof len);
  memcpy(at + sizeof len, a, na);
  if (nb) memcpy(at + sizeof len + na, b, nb);
  memset(at + sizeof len + na + nb, 0, padded - na - nb);
  run->out_size = need;
  return LBMC_SUCCESS;
}

/* A worker: the record just simulated (run->msg) appended to its result message. */
static lbmc_err lbmc_runner_pack(lbmc_runner *run)
{
  return lbmc_runner_append(run, (int64_t)run->msg_size, run->msg, run->msg_size, NULL, 0);
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
  lbmc_next what;
  long next, n = 0;
  int used = 1;
  lbmc_err err = LBMC_SUCCESS;
  while (at < run->out_size) { /* the records of the message; its last R are the point's */
    int64_t len;
    memcpy(&len, run->out + at, sizeof len);
    bytes = (size_t)(len < 0 ? -len : len);
    if (len > 0 && n < LBMC_BATCH_MAX) rec[n] = run->out + at + sizeof len, size[n++] = bytes;
    at += sizeof len + ((bytes + 7) & ~(size_t)7);
  }
  if (R > n) return LBMC_ERROR(LBMC_ERR_INTERNAL, "runner: a whole point without its records");
  for (long k = 0; k < R; k++) { /* replicas 0 .. R - 1 of the point at doubling 0, in order */
    lbmc_record r;
    if (lbmc_record_view(rec[n - R + k], size[n - R + k], &r) != 0 ||
        r.h.point != run->grid[point] || r.h.replica != k || r.h.doubling != 0)
      return LBMC_ERROR(LBMC_ERR_INTERNAL, "runner: a whole point without its records");
  }
  if (!run->wres)
    LBMC_CALL(lbmc_results_create(1, R, lbmc_job_pools(run->job), (int)run->opts.tail_k,
                                  run->opts.pairs, &run->wres));
  LBMC_CALL(lbmc_point_create(run->model, &run->opts, run->first_round, &pt));
  for (long k = n - R; k < n && !err && used; k++) err = lbmc_point_add(pt, rec[k], size[k], &used);
  if (!err && used) err = lbmc_point_reduce(pt, R);
  if (!err && used) {
    memset(&head, 0, sizeof head);
    head.point = run->grid[point];
    head.replicas = R;
    what = lbmc_point_next(pt, lbmc_job_precision(run->job), &next, head.why, sizeof head.why);
    if (what == LBMC_NEXT_DONE) err = lbmc_results_store(run->wres, 0, pt);
    bytes = what == LBMC_NEXT_DONE && !err ? lbmc_results_pack_point(run->wres, 0, NULL, 0) : 0;
    if (bytes > 0 && bytes + sizeof head > run->wbuf_cap) {
      free(run->wbuf);
      run->wbuf_cap = bytes + sizeof head;
      if (!(run->wbuf = malloc(run->wbuf_cap))) {
        run->wbuf_cap = 0;
        err = LBMC_ERROR(LBMC_ERR_MEMORY, "runner: out of memory for a reduced point");
      }
    }
    if (bytes > 0 && !err) {
      lbmc_results_pack_point(run->wres, 0, run->wbuf, bytes);
      err = lbmc_runner_append(run, -(int64_t)(sizeof head + bytes), &head, sizeof head, run->wbuf,
                               bytes);
      run->reduced++;
    }
  }
  lbmc_point_destroy(&pt);
  return err;
}

/* A worker: send the records of its last batch or a control code (which asks for work),
 * simulate the units it gets, until told to stop. A batch interrupted part way sends
 * nothing of it (its units are redone, as an interrupted unit is). */
static lbmc_err lbmc_runner_worker(lbmc_runner *run)
{
  long unit[LBMC_UNIT_LONGS * LBMC_BATCH_MAX];
  int flag, dummy, has_result = 0;
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
  for (;;) { /* drain an abort notice that crossed the stop reply */
    MPI_Iprobe(0, LBMC_TAG_ABORT, run->comm, &flag, MPI_STATUS_IGNORE);
    if (!flag) break;
    MPI_Recv(&dummy, 1, MPI_INT, 0, LBMC_TAG_ABORT, run->comm, MPI_STATUS_IGNORE);
  }
  return LBMC_SUCCESS;
}

/* Rank 0, after the results are written: a rank still frozen cannot take part in the
 * collective end of the job (nor in MPI_Finalize), so the MPI job ends here. */
static void lbmc_runner_abandon(lbmc_runner *run, lbmc_err err, int complete)
{
  int k = 1;
  while (k < run->size && !run->workers[k].lost) k++;
  lbmc_log(MPI_COMM_NULL, stderr,
           "lbmc run: %s %s; %d rank%s still frozen (rank %d on host %s, pid %ld) cannot be "
           "released: ending the MPI job with MPI_Abort (exit status %d)\n",
           err && err != LBMC_ERR_INTERRUPTED ? "could not write the results to"
           : complete                         ? "the results are complete in"
                      : "the finished points are written (the checkpoint is kept) to",
           run->set->output, run->nlost, run->nlost > 1 ? "s" : "", k,
           k < run->size ? run->workers[k].host : "?", k < run->size ? run->workers[k].pid : -1L,
           lbmc_exit_status(err));
  MPI_Abort(run->comm, lbmc_exit_status(err));
}

/* Every rank's host and process id to rank 0's run->workers (collective). */
static lbmc_err lbmc_runner_hosts(lbmc_runner *run)
{
  struct {
    long pid;
    char host[64];
  } me = {(long)getpid(), ""}, *all = NULL;
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0, code = 0;
  MPI_Get_processor_name(name, &len);
  snprintf(me.host, sizeof me.host, "%.*s", len, name);
  if (run->rank == 0) {
    all = calloc((size_t)run->size, sizeof *all);
    run->workers = calloc((size_t)run->size, sizeof *run->workers);
    code = !all || !run->workers;
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, run->comm);
  if (code) {
    free(all);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "runner: out of memory for %d ranks", run->size);
  }
  MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, run->comm);
  for (int k = 0; run->rank == 0 && k < run->size; k++) {
    run->workers[k].pid = all[k].pid;
    run->workers[k].sreq = MPI_REQUEST_NULL;
    snprintf(run->workers[k].host, sizeof run->workers[k].host, "%s", all[k].host);
  }
  free(all);
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
  { /* any failed set-up stops all; the workers wait for rank 0's longer one asleep */
    MPI_Request req;
    MPI_Iallreduce(MPI_IN_PLACE, &code, 1, MPI_INT, MPI_MAX, comm, &req);
    lbmc_wait_nap(&req, MPI_STATUS_IGNORE);
  }
  if (code == LBMC_SUCCESS) code = (int)lbmc_runner_hosts(&run); /* the same on every rank */
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
      if (run.nlost > 0) lbmc_runner_abandon(&run, err, complete);
    }
    code = (int)err;
    { /* the workers wait asleep while rank 0 writes the results */
      MPI_Request req;
      MPI_Ibcast(&code, 1, MPI_INT, 0, comm, &req);
      lbmc_wait_nap(&req, MPI_STATUS_IGNORE);
    }
  }
  lbmc_runner_teardown(&run);
  return (lbmc_err)code;
}
