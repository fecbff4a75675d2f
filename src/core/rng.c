/* How lbmc numbers its random streams (include/lbmc/rng.h): one stream per grid
 * point, replica and purpose, never per MPI rank, and the check that a job's
 * streams fit in SPRNG's stream numbers (docs/model.md, "Random streams"). */
#include "lbmc/rng.h"

lbmc_err lbmc_stream_number(long point, long replica, long replicas_max, lbmc_purpose purpose,
                            int *gennum)
{
  long long g;
  if (point < 0 || replicas_max < 1 || replica < 0 || replica >= replicas_max || purpose < 0 ||
      purpose >= LBMC_PURPOSES)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "stream number: point %ld, replica %ld of %ld, purpose %d out of range",
                      point, replica, replicas_max, (int)purpose);
  if (point > LBMC_STREAM_MAX / replicas_max ||
      (g = ((long long)point * replicas_max + replica) * LBMC_PURPOSES + purpose) > LBMC_STREAM_MAX)
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "random streams exhausted: point %ld x replicas %ld x %d purposes exceeds "
                      "SPRNG's %ld stream numbers",
                      point, replicas_max, (int)LBMC_PURPOSES, LBMC_STREAM_MAX);
  *gennum = (int)g;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_stream_check_capacity(long points, long replicas_max)
{
  if (points < 1 || replicas_max < 1) return LBMC_SUCCESS;
  if ((long double)points * replicas_max * LBMC_PURPOSES > (long double)LBMC_STREAM_MAX + 1)
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "the job needs %ld points x %ld replicas x %d streams, more than SPRNG's "
                      "%ld stream numbers; allowed: points x replicas <= %ld (reduce the grid or "
                      "the replicas/max_replicas)",
                      points, replicas_max, (int)LBMC_PURPOSES, LBMC_STREAM_MAX + 1,
                      (LBMC_STREAM_MAX + 1) / LBMC_PURPOSES);
  return LBMC_SUCCESS;
}
