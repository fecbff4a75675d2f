/* lbmc_sim alone: a program that links the simulator library and nothing of liblbmc
 * (no MPI, HDF5, YAML), with every object of the archive forced in, and runs replicas
 * of an M/M/1 queue (n = 1, lambda = 0.5, mu = 1): the probability of waiting must be
 * rho = 0.5 within five standard errors (fixed seed: deterministic). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lbmc/metrics.h"
#include "lbmc/sim.h"

int main(void)
{
  const double beta = 1, mu = 1;
  const long buffer = LBMC_BUFFER_INF, R = 8;
  lbmc_model *m = NULL;
  lbmc_run_options o;
  lbmc_replica *rep = NULL;
  lbmc_replica_result res;
  size_t total = lbmc_metric_total(1, 10), at = lbmc_metric_offset(LBMC_M_P_WAIT, 1, 10);
  double *values = malloc(sizeof *values * total * (size_t)R),
         *est = malloc(sizeof *est * total * 3);
  int bad = !values || !est;
  bad = bad || lbmc_model_create(&m) || lbmc_model_set_n(m, 1) || lbmc_model_set_lambda(m, 0.5) ||
        lbmc_model_set_pools(m, 1, &beta, &mu, &buffer) || lbmc_model_setup(m);
  lbmc_run_options_default(&o);
  o.time = 20000;
  bad = bad || lbmc_replica_create(m, &o, &rep);
  for (long r = 0; r < R && !bad; r++) {
    res.values = values + (size_t)r * total;
    res.batch_values = NULL;
    bad = lbmc_replica_run(rep, 0, r, R, 11, &res) || res.status != LBMC_STATUS_OK;
  }
  if (!bad) {
    lbmc_estimate(values, R, NULL, o.batches, total, o.confidence, est, est + total,
                  est + 2 * total);
    printf("p_wait = %.5f, std err %.5f (exact 0.5)\n", est[at], est[2 * total + at]);
    bad = !(fabs(est[at] - 0.5) <= 5 * est[2 * total + at]);
  }
  lbmc_replica_destroy(&rep);
  lbmc_model_destroy(&m);
  free(values);
  free(est);
  if (bad) fprintf(stderr, "FAIL: lbmc_sim alone\n");
  return bad;
}
