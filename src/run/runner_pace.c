/* Rank 0's view of the workers' time: the expected wall time of a unit (from the engine's
 * nominal speed and the pace of the units finished so far), the liveness watch (a worker
 * silent too long is presumed frozen and its units re-issued) and the progress line. */
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

/* Cost of a unit: n x simulated time, doubled per doubling (the schedule's measure). */
static double lbmc_unit_cost(const lbmc_runner *run, long p, int doubling)
{
  return ldexp(run->cost[p], doubling);
}

/* Wall time of a unit at the engine's nominal speed (about 2 lambda n events per unit of
 * time), seconds: what sizes batches (the pace of the units finished so far
 * includes the waits of the messages, which would shrink batches as they grow). */
double lbmc_runner_stall(const lbmc_run_settings *set)
{
  return set->stall_seconds > 0 ? set->stall_seconds : LBMC_STALL_SECONDS;
}

double lbmc_unit_nominal(const lbmc_runner *run, long p, int doubling)
{
  const lbmc_point_info *pt = &run->res->pt[p];
  return 2 * pt->lambda * lbmc_unit_cost(run, p, doubling) / lbmc_engine_speed(pt->engine);
}

/* Expected wall time of a unit, seconds: the larger of the pace model's (a + b x its
 * cost, fitted on the batches finished so far, from hand-out to result, on every rank:
 * pace.h) and its time at the engine's nominal speed (about 2 lambda n events per unit of
 * time). */
static double lbmc_unit_expected(const lbmc_runner *run, long p, int doubling)
{
  double a, b;
  lbmc_pace_fit_solve(&run->pace, &a, &b);
  return fmax(lbmc_unit_nominal(run, p, doubling), a + b * lbmc_unit_cost(run, p, doubling));
}

/* A finished unit of `seconds` wall time: the pace. */
void lbmc_runner_pace(lbmc_runner *run, long p, int doubling, double seconds)
{
  lbmc_pace_fit_add(&run->pace, 1, lbmc_unit_cost(run, p, doubling), seconds);
}

/* Rank 0: a message from worker src (a result when result = 1): it is alive and holds
 * nothing now. */
void lbmc_runner_heard(lbmc_runner *run, int src, int result)
{
  lbmc_worker *w = &run->workers[src];
  const double now = MPI_Wtime();
  if (w->lost) {
    w->lost = 0;
    run->nlost--;
    if (w->nunits > 0)
      lbmc_log(MPI_COMM_NULL, stderr,
               "lbmc run: rank %d (host %s, pid %ld) answers again after %.0f s; its unit was "
               "given to another rank, and whichever result comes second is ignored\n",
               src, w->host, w->pid, now - w->t_issued);
    else /* presumed frozen before its first request: no unit, no t_issued */
      lbmc_log(MPI_COMM_NULL, stderr,
               "lbmc run: rank %d (host %s, pid %ld) answers again, %.0f s after the run "
               "started; it had no unit and takes part from now on\n",
               src, w->host, w->pid, now - w->t_heard);
  } else if (result && w->nunits > 0) {
    double cost = 0;
    for (int u = 0; u < w->nunits; u++)
      cost += lbmc_unit_cost(run, w->unit[u][0], (int)w->unit[u][2]);
    lbmc_pace_fit_add(&run->pace, w->nunits, cost, now - w->t_issued);
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
void lbmc_runner_issued(lbmc_runner *run, int dst, const long *unit, int n)
{
  lbmc_worker *w = &run->workers[dst];
  for (int u = 0; u < n; u++)
    memcpy(w->unit[u], unit + LBMC_UNIT_LONGS * u, sizeof(long) * LBMC_UNIT_LONGS);
  w->nunits = n;
  w->batches++;
  w->t_beat = 0;
  w->t_issued = MPI_Wtime();
  w->asked = 0;
}

/* Rank 0: a worker that holds units and has been silent for longer than --stall since its
 * last heartbeat (a worker sends one every LBMC_BEAT_SECONDS while it simulates, however
 * slowly), or, before its first one, for longer than the larger of --stall and
 * LBMC_STALL_FACTOR times their expected time, is presumed frozen (stopped,
 * swapped out, a hung node): a warning naming it, and its units back to the schedule for
 * the next rank that asks (or rank 0 itself). Units are deterministic by
 * their stream numbers, so the re-run gives the same record; if the frozen rank answers
 * after all, the second result of the unit is ignored. */
void lbmc_runner_watch(lbmc_runner *run)
{
  const double now = MPI_Wtime(), stall = lbmc_runner_stall(run->set);
  for (int k = 1; k < run->size; k++) {
    lbmc_worker *w = &run->workers[k];
    double expected, limit, silent;
    char why[192];
    int again = 0;
    if (w->lost || w->released || w->asked) continue;
    if (w->nunits == 0) { /* never asked for work since the run started */
      if (now - w->t_heard <= stall) continue;
      w->lost = 1;
      run->nlost++;
      lbmc_log(MPI_COMM_NULL, stderr,
               "lbmc run: warning: rank %d (host %s, pid %ld) has not asked for work in the "
               "%.0f s since the run started (--stall %g s): presumed frozen\n",
               k, w->host, w->pid, now - w->t_heard, stall);
      continue;
    }
    expected = lbmc_batch_expected(run, w);
    if (w->t_beat > 0) { /* it simulates: silence since its last heartbeat */
      silent = now - w->t_beat;
      limit = stall;
    } else { /* no heartbeat yet (a first tick that polls late): the unit's expected time */
      silent = now - w->t_issued;
      limit = fmax(stall, LBMC_STALL_FACTOR * expected);
    }
    if (silent <= limit) continue;
    w->lost = 1;
    run->nlost++;
    for (int u = 0; u < w->nunits; u++)
      again += lbmc_schedule_reissue(run->sched, w->unit[u][0], w->unit[u][1], (int)w->unit[u][2]);
    if (w->t_beat > 0)
      snprintf(why, sizeof why, "no heartbeat for %.0f s, --stall %g s", silent, stall);
    else
      snprintf(why, sizeof why,
               "no heartbeat yet; expected to take about %.3g s, the limit is the larger of "
               "--stall %g s and %g times that",
               expected, stall, LBMC_STALL_FACTOR);
    lbmc_log(MPI_COMM_NULL, stderr,
             "lbmc run: warning: rank %d (host %s, pid %ld) has sent nothing for %.0f s while "
             "running point %ld replica %ld%s (%s): presumed frozen; %s\n",
             k, w->host, w->pid, now - w->t_issued, run->grid[w->unit[0][0]], w->unit[0][1],
             w->nunits > 1 ? " and other units" : "", why,
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

/* The ETA from the pace of the work done (the elapsed time scaled by the pace model's
 * time of the units left over that of the units this run finished: a fixed cost per unit
 * counts the many small units that come last), never "0 s" while units are still out:
 * when the pace says nothing is left, what the run waits for (the unit out the longest). */
void lbmc_runner_progress(lbmc_runner *run, int force)
{
  double now = MPI_Wtime(), el = now - run->t0;
  const lbmc_schedule *s = run->sched;
  double eta, a, b;
  char eta_text[256], lost[96] = "", whole[64] = "";
  if (run->set->quiet || run->set->no_progress || run->set->dry_run) return;
  if (!force && now - run->t_progress < run->set->progress_seconds) return;
  run->t_progress = now;
  lbmc_pace_fit_solve(&run->pace, &a, &b);
  eta = run->units_run > 0
            ? lbmc_pace_eta(a, b, el, s->units_planned - s->units_done,
                            s->cost_planned - s->cost_done, s->units_live, s->cost_live)
            : NAN;
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
