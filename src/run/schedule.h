/* Private: which work unit (point, replica) to run next, and when a point is finished.
 * Pure bookkeeping on rank 0, no MPI.
 *
 * Units are issued costliest point first (cost ~ n x simulated time). A point is run
 * in rounds: first `replicas` replicas; in sequential (precision) mode, when a round
 * is complete and the relative half-width of the target metric is above the target,
 * a new round raises the number of replicas to about what the current half-width
 * says is needed (R (hw_rel/target)^2, at least R + 1, at most max_replicas). A round
 * is always completed, even after an unstable replica, and every decision depends
 * only on the replicas of complete rounds: so the replicas run for a point, and their
 * values, do not depend on the number of ranks or on the timing. */
#ifndef LBMC_SCHEDULE_H
#define LBMC_SCHEDULE_H

#include <stdint.h>

#include "../io/results.h"
#include "lbmc/job.h"

typedef struct {
  long P, Rmax;
  double *cost;   /* P: cost of one replica */
  long *order;    /* P: points by decreasing cost (ties: lower index first) */
  long cursor;    /* position in order before which no point has pending units */
  int8_t *state;  /* P x Rmax: 0 pending, 1 issued, 2 done */
  long *target;   /* P: replicas of the current round's end */
  long *done;     /* P: replicas done */
  long *inflight; /* P: replicas issued and not done */
  int *finished;  /* P */
  long points_finished;
  double cost_done, cost_planned;
  double cost_live;  /* cost of the units run by this run (not replayed): the pace */
  lbmc_precision precision;
  long replicas;
} lbmc_schedule;

/** For P points with per-replica costs, `replicas` per round one, up to Rmax. */
lbmc_err lbmc_schedule_create(long P, const double *cost, long replicas, long Rmax,
                              const lbmc_precision *precision, lbmc_schedule **s);
void lbmc_schedule_destroy(lbmc_schedule **s);
/** Run no replica of the point (it is unstable for certain); settle it next. */
void lbmc_schedule_skip(lbmc_schedule *s, long point);
/** Next unit to run; returns 0 when none is available now (all issued, or waiting for
 *  rounds to complete). */
int lbmc_schedule_next(lbmc_schedule *s, long *point, long *replica);
/** Record that (point, replica) is done (issued = 1 when it was issued by this run,
 *  0 when loaded from a checkpoint). */
void lbmc_schedule_done(lbmc_schedule *s, long point, long replica, int issued);
/** If the point's round is complete: reduce its estimates in res, decide whether it is
 *  finished (setting pt[point].status / .replicas / .done) or gets another round.
 *  batch_values: the batch means of its replica 0 when the job has one replica.
 *  Returns 1 if the point is now finished. */
int lbmc_schedule_settle(lbmc_schedule *s, lbmc_results *res, long point,
                         const double *batch_values);
/** 1 when every point is finished. */
int lbmc_schedule_all_finished(const lbmc_schedule *s);

#endif
