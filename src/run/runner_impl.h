/* Private: state of a run shared by the rank-0 scheduler loop (runner.c), the worker
 * loop and the set-up (run_setup.c). */
#ifndef LBMC_RUNNER_IMPL_H
#define LBMC_RUNNER_IMPL_H

#include "../io/checkpoint.h"
#include "../io/results.h"
#include "lbmc/runner.h"
#include "schedule.h"

enum { LBMC_TAG_RESULT = 71, LBMC_TAG_WORK = 72, LBMC_TAG_ABORT = 73 };

/* Result message: LBMC_MSG_HEAD doubles, then the values, then the batch means. */
enum {
  LBMC_MSG_POINT = 0, /* local point, -1 = no result, -2 = "I was signalled: stop" */
  LBMC_MSG_REPLICA,
  LBMC_MSG_STATUS,
  LBMC_MSG_EVENTS,
  LBMC_MSG_WARMUP,
  LBMC_MSG_CPU,
  LBMC_MSG_SIMTIME,
  LBMC_MSG_GROWTH,
  LBMC_MSG_HAS_BATCH,
  LBMC_MSG_HEAD
};

typedef struct {
  MPI_Comm comm;
  int rank, size;
  const lbmc_job *job;
  const lbmc_run_settings *set;
  long P;       /* points of this run (the shard) */
  long *grid;   /* P: grid index of each local point, increasing */
  double *cost; /* P: cost of one replica, n x simulated time */
  long Rmax, batches;
  size_t total;
  int with_batches; /* the job has one replica per point: keep batch means of replica 0 */
  size_t msg_len;   /* doubles in a result message */
  double *msg;      /* msg_len: this rank's result */
  double *rmsg;     /* msg_len: rank 0's receive buffer */

  /* worker side: the model and workspace of the last point simulated */
  long cached;
  lbmc_model *model;
  lbmc_run_options opts;
  lbmc_replica *rep;

  /* rank 0 */
  lbmc_results *res;
  lbmc_schedule *sched;
  lbmc_checkpoint *ck;
  double *batch_store; /* P x batches x total when with_batches */
  int *waiting;        /* ranks waiting for work */
  int nwaiting, released, stopping;
  double t0, t_progress;
  long units_run;
} lbmc_runner;

/** Set up: points of the shard, costs, buffers; on rank 0 the results, the schedule
 *  and the checkpoint (replayed with settings->resume). Not collective. */
lbmc_err lbmc_runner_setup(lbmc_runner *run);
/** Free everything. */
void lbmc_runner_teardown(lbmc_runner *run);
/** Rank 0: print the grid, the work units and a cost estimate. */
void lbmc_runner_dry_run(const lbmc_runner *run);
/** Rank 0: store a finished replica (results, checkpoint, schedule) and settle its
 *  point. Errors: LBMC_ERR_FILE (checkpoint). */
lbmc_err lbmc_runner_record(lbmc_runner *run, long point, long replica,
                            const lbmc_replica_result *rr);
/** Rank 0: write the results file (complete or not) and close the checkpoint
 *  (removing it after a complete run). */
lbmc_err lbmc_runner_finish(lbmc_runner *run, int complete);
/** Simulate (point, replica) into run->msg; returns LBMC_ERR_INTERRUPTED when the
 *  monitor stopped it. */
lbmc_err lbmc_runner_simulate(lbmc_runner *run, long point, long replica, int (*monitor)(void *),
                              void *ctx);

#endif
