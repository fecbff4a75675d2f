/* Scenarios of a job (include/lbmc/job.h): the grid without its routing axes (the
 * inputs the table of inputs marks routing: policy, routers, stale, sampling). The
 * random streams of a replica are numbered by its scenario, not by its grid point, so
 * that every policy of a scenario sees the same arrivals and, where the engine draws
 * them, the same service requirements in each replica: common random numbers, for
 * paired comparisons (docs/model.md, "Random streams"). Built on the job's public axis
 * functions only. */
#include "lbmc/job.h"

/* Dimension d (linked axes share one): its length, and whether it is routing (all its
 * axes are; a group linking a routing axis with another changes the scenario). */
static long lbmc_job_dim(const lbmc_job *job, int d, int *routing)
{
  long len = 1;
  *routing = 1;
  for (int a = 0; a < lbmc_job_axes(job); a++)
    if (lbmc_job_axis_dim(job, a) == d) {
      len = lbmc_job_axis_length(job, a);
      *routing = *routing && lbmc_job_axis_routing(job, a);
    }
  return len;
}

long lbmc_job_scenarios(const lbmc_job *job)
{
  long s = 1;
  int routing;
  for (int d = 0; d < lbmc_job_dims(job); d++) {
    const long len = lbmc_job_dim(job, d, &routing);
    if (!routing) s *= len;
  }
  return s;
}

long lbmc_job_point_scenario(const lbmc_job *job, long p)
{
  long scenario = 0, rest = p, stride = lbmc_job_points(job);
  int routing;
  /* grid point p in mixed radix over the dimensions, first slowest; the scenario keeps
   * the digits of the other dimensions, in the same order */
  for (int d = 0; d < lbmc_job_dims(job); d++) {
    const long len = lbmc_job_dim(job, d, &routing), digit = (rest / (stride / len)) % len;
    stride /= len;
    if (!routing) scenario = scenario * len + digit;
  }
  return scenario;
}
