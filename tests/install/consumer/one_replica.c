/* One replica through the installed lbmc_sim (lbmc::sim): ten servers, random routing,
 * lambda = 0.5, so each server is an M/M/1 queue with rho = 0.5; prints P(wait), the
 * point's estimate from the replica's record. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lbmc/metrics.h"
#include "lbmc/point.h"
#include "lbmc/sim.h"
#include "lbmc/version.h"

int main(void)
{
  const double beta = 1, mu = 1;
  const long buffer = LBMC_BUFFER_INF;
  lbmc_model *m = NULL;
  lbmc_replica *rep = NULL;
  lbmc_point *p = NULL;
  lbmc_run_options o;
  lbmc_unit u = {0, 0, 0, 1, 1, 0, 1};
  const void *rec;
  size_t size;
  int used;
  double p_wait;
  int bad = lbmc_model_create(&m) || lbmc_model_set_n(m, 10) || lbmc_model_set_lambda(m, 0.5) ||
            lbmc_model_set_pools(m, 1, &beta, &mu, &buffer) || lbmc_model_set_policy(m, "random") ||
            lbmc_model_setup(m);
  lbmc_run_options_default(&o);
  bad = bad || lbmc_replica_create(m, &o, &rep) || lbmc_point_create(m, &o, 1, &p);
  bad = bad || lbmc_replica_record(rep, &u, &rec, &size) || lbmc_point_add(p, rec, size, &used) ||
        lbmc_point_reduce(p, 1);
  p_wait = bad ? NAN : lbmc_point_estimates(p)->estimate[lbmc_metric_offset(LBMC_M_P_WAIT, 1, 10)];
  printf("lbmc %s (%s): one replica, p_wait = %.4f\n", LBMC_VERSION, lbmc_revision(), p_wait);
  lbmc_point_destroy(&p);
  lbmc_replica_destroy(&rep);
  lbmc_model_destroy(&m);
  return bad || !(p_wait > 0.3 && p_wait < 0.7);
}
