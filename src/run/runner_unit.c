/* One work unit's simulation, on rank 0 or a worker: the model and workspace of the
 * last point simulated are kept for the next unit of the same point. */
#include "lbmc/engines.h"
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
