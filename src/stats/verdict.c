/* The verdict on a point: the names of the statuses, and whether the replicas show
 * an unstable system (rho >= 1 with unlimited buffers, a replica over the customer
 * cap, or customers growing steadily in most replicas; docs/model.md, "Unstable
 * systems"). Apart from the replica driver, so that the runner and the command line
 * judge a point the same way from the replicas' results alone. */
#include <stdio.h>

#include "lbmc/stats.h"

const char *lbmc_status_name(lbmc_status s)
{
  switch (s) {
  case LBMC_STATUS_OK: return "ok";
  case LBMC_STATUS_UNSTABLE: return "unstable";
  case LBMC_STATUS_PRECISION_NOT_MET: return "precision_not_met";
  }
  return "unknown";
}

int lbmc_point_unstable(const lbmc_run_options *o, int surely, double rho, long R,
                        const int8_t *replica_unstable, const double *growth, char *reason,
                        size_t len)
{
  long rising = 0;
  if (surely) {
    snprintf(reason, len, "rho = %.6g >= 1 with unlimited buffers: the servers cannot keep up",
             rho);
    return 1;
  }
  for (long r = 0; r < R; r++)
    if (replica_unstable[r] == 1) {
      snprintf(reason, len,
               "replica %ld: the customers in the system exceeded the cap "
               "(max_customers)",
               r);
      return 1;
    }
  if (R < 1) return 0;
  for (long r = 0; r < R; r++) rising += growth[r] >= o->runaway_fraction;
  if (2 * rising > R) { /* most replicas: one slow replica does not hide a runaway */
    snprintf(reason, len,
             "the customers in the system keep growing: in %ld of %ld replicas, from each quarter "
             "of the measured period to the next, by at least %.1f%% of the customers admitted",
             rising, R, 100 * o->runaway_fraction);
    return 1;
  }
  return 0;
}
