/* lbmc_sim alone: a program that links the simulator library and nothing of liblbmc
 * (no MPI, HDF5, YAML), with every object of the archive forced in, and runs replicas
 * of an M/M/1 queue (n = 1, lambda = 0.5, mu = 1): the probability of waiting must be
 * rho = 0.5 within five standard errors (fixed seed: deterministic). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lbmc/metrics.h"
#include "lbmc/point.h"
#include "lbmc/sim.h"

int main(void)
{
  const double beta = 1, mu = 1;
  const long buffer = LBMC_BUFFER_INF, R = 8;
  lbmc_model *m = NULL;
  lbmc_run_options o;
  lbmc_replica *rep = NULL;
  lbmc_point *p = NULL;
  size_t at = lbmc_metric_offset(LBMC_M_P_WAIT, 1, 10);
  int bad = lbmc_model_create(&m) || lbmc_model_set_n(m, 1) || lbmc_model_set_lambda(m, 0.5) ||
            lbmc_model_set_pools(m, 1, &beta, &mu, &buffer) || lbmc_model_setup(m);
  lbmc_run_options_default(&o);
  o.time = 20000;
  bad = bad || lbmc_replica_create(m, &o, &rep) || lbmc_point_create(m, &o, R, &p);
  for (long r = 0; r < R && !bad; r++) {
    lbmc_unit u = {0, 0, r, R, 11, 0, 0};
    const void *rec;
    size_t size;
    int used;
    bad = lbmc_replica_record(rep, &u, &rec, &size) || lbmc_point_add(p, rec, size, &used);
  }
  bad = bad || lbmc_point_reduce(p, R) || lbmc_point_verdict(p)->status != LBMC_STATUS_OK;
  if (!bad) {
    const lbmc_estimates *e = lbmc_point_estimates(p);
    printf("p_wait = %.5f, std err %.5f (exact 0.5)\n", e->estimate[at], e->std_err[at]);
    bad = !(fabs(e->estimate[at] - 0.5) <= 5 * e->std_err[at]);
  }
  lbmc_point_destroy(&p);
  lbmc_replica_destroy(&rep);
  lbmc_model_destroy(&m);
  if (bad) fprintf(stderr, "FAIL: lbmc_sim alone\n");
  return bad;
}
