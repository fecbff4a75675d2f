/* Private: sequential mode's driver: which work unit (point, replica, doubling) to run
 * next, when a point's round is complete, and what then (lbmc_schedule_settle). Pure
 * bookkeeping, no MPI: lbmc run's runner (rank 0) and lbmc sim drive their points
 * through it.
 *
 * Units are issued costliest point first (cost ~ n x simulated time). A point is run in
 * rounds: first `replicas` replicas; when a round is complete the runner reduces the
 * point (lbmc/point.h) and tells the schedule what next (lbmc_point_next): finished, a
 * round of more replicas (lbmc_schedule_more), or, for a point that is not yet
 * stationary, its replicas again from replica 0 with the run doubled (lbmc_schedule_longer,
 * the next doubling); lbmc_schedule_settle does all of it. A round is always completed, even
 * after an unstable replica, and every decision depends only on the replicas of complete
 * rounds: so the replicas run for a point, and their values, do not depend on the number of
 * ranks or on the timing. */
#ifndef LBMC_SCHEDULE_H
#define LBMC_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "lbmc/error.h"
#include "lbmc/point.h"

typedef struct {
  long P, Rmax;
  double *cost;   /* P: cost of one replica at doubling 0 */
  long *order;    /* P: points by decreasing cost (ties: lower index first) */
  long cursor;    /* position in order before which no point has pending units */
  int8_t *state;  /* P x Rmax: 0 pending, 1 issued, 2 done */
  long *target;   /* P: replicas of the current round's end */
  long *done;     /* P: replicas done at the current doubling */
  long *inflight; /* P: replicas issued and not done */
  int *doubling;  /* P: how many times the run was doubled (not stationary) */
  int *finished;  /* P */
  long points_finished;
  double cost_done, cost_planned;
  double cost_live; /* cost of the units run by this run (not replayed): the pace */
  double units_planned, units_done, units_live; /* the same in units */
} lbmc_schedule;

/** order[0..P) = the points 0..P-1 by decreasing cost[p] (finite), ties keeping the lower
 *  index first: the order of a stable sort, in O(P log P). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_schedule_order(const double *cost, long P, long *order);
/** For P points with per-replica costs, `replicas` in the first round, up to Rmax.
 *  Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_schedule_create(long P, const double *cost, long replicas, long Rmax,
                              lbmc_schedule **s);
void lbmc_schedule_destroy(lbmc_schedule **s);
/** Next unit to run; returns 0 when none is available now (all issued, or waiting for
 *  rounds to complete). */
int lbmc_schedule_next(lbmc_schedule *s, long *point, long *replica, int *doubling);
/** Record that (point, replica) of the point's current doubling is done (issued = 1 when it
 *  was issued by this run, 0 when loaded from a checkpoint). */
void lbmc_schedule_done(lbmc_schedule *s, long point, long replica, int issued);
/** A unit issued to a rank presumed lost: (point, replica) of `doubling` back to pending,
 *  for the next lbmc_schedule_next. Returns 1 when it was issued and is pending again, 0
 *  when there is nothing to re-issue (done, finished point, or a doubling it has left). */
int lbmc_schedule_reissue(lbmc_schedule *s, long point, long replica, int doubling);
/** 1 when (point, replica) of `doubling`, the point's current doubling, is already done: a
 *  record of it is a duplicate (a re-issued unit whose first rank answered after all). */
int lbmc_schedule_is_done(const lbmc_schedule *s, long point, long replica, int doubling);
/** The replicas of the point's round when the round is complete (every replica of it
 *  done, none in flight), else 0. A finished point: 0. */
long lbmc_schedule_round(const lbmc_schedule *s, long point);
/** Another round: replicas up to R (> the current target). */
void lbmc_schedule_more(lbmc_schedule *s, long point, long R);
/** The next doubling: the run doubled, replicas 0 .. R - 1 again. */
void lbmc_schedule_longer(lbmc_schedule *s, long point, long R);
/** The point is finished (with no replicas at all: skip its planned cost). */
void lbmc_schedule_finish(lbmc_schedule *s, long point);
/** 1 when every point is finished. */
int lbmc_schedule_all_finished(const lbmc_schedule *s);

/** Sequential mode once point p's round of R replicas is complete (lbmc_schedule_round;
 *  R = 0 for a point with nothing to simulate, rho >= 1 with unlimited buffers): reduce
 *  acc, the point's replicas (lbmc_point_reduce), decide what next under prec
 *  (lbmc_point_next: *what, and why[len] gets one line saying which and why) and
 *  follow the decision: another round (lbmc_schedule_more), the next doubling of the point
 *  and of the schedule (lbmc_point_set_doubling, lbmc_schedule_longer), or finished
 *  (lbmc_schedule_finish; storing the point is the caller's). Errors: those of
 *  lbmc_point_reduce. */
lbmc_err lbmc_schedule_settle(lbmc_schedule *s, long p, long R, lbmc_point *acc,
                              const lbmc_precision *prec, lbmc_next *what, char *why, size_t len);

#endif
