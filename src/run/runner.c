/* A run of a job over MPI ranks (lbmc_run_job): the set-up, every rank's host, the
 * loops (rank 0: runner_root.c, the others: runner_worker.c), the results. */
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
        char again[64];
        lbmc_log(MPI_COMM_NULL, stderr,
                 "lbmc run: stopped; %ld of %ld points finished and written to %s; finished "
                 "replicas are in %s.ckpt: continue with %s\n",
                 run.sched->points_finished, run.P, settings->output, settings->output,
                 lbmc_runner_resume_flags(settings, again, sizeof again));
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
