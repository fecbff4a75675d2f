/* The names of the statuses of a point's verdict (lbmc/stats.h); the verdict itself is
 * src/sim/point_reduce.c's. */
#include "lbmc/stats.h"

const char *lbmc_status_name(lbmc_status s)
{
  switch (s) {
  case LBMC_STATUS_OK: return "ok";
  case LBMC_STATUS_UNSTABLE: return "unstable";
  case LBMC_STATUS_PRECISION_NOT_MET: return "precision_not_met";
  case LBMC_STATUS_NOT_STATIONARY: return "not_stationary";
  }
  return "unknown";
}
