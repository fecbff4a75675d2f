/* Scenarios of a job (include/lbmc/job.h): the grid without its routing axes (policy,
 * routers, stale, sampling). The random streams of a replica are numbered by its
 * scenario, not by its grid point, so that every policy of a scenario sees the same
 * arrivals and, where the engine draws them, the same service requirements in each
 * replica: common random numbers, for paired comparisons (docs/model.md, "Random
 * streams"). Built on the job's public axis functions only. */
#include <string.h>

#include "lbmc/job.h"

/* The axes that change only how customers are routed. */
static const char *const lbmc_routing_axes[] = {"policy", "routers", "stale", "sampling"};

int lbmc_job_axis_routing(const lbmc_job *job, int a)
{
  const char *name = lbmc_job_axis_name(job, a);
  for (size_t i = 0; name && i < sizeof lbmc_routing_axes / sizeof *lbmc_routing_axes; i++)
    if (strcmp(name, lbmc_routing_axes[i]) == 0) return 1;
  return 0;
}

long lbmc_job_scenarios(const lbmc_job *job)
{
  long s = 1;
  for (int a = 0; a < lbmc_job_axes(job); a++)
    if (!lbmc_job_axis_routing(job, a)) s *= lbmc_job_axis_length(job, a);
  return s;
}

long lbmc_job_point_scenario(const lbmc_job *job, long p)
{
  long scenario = 0, rest = p, stride = lbmc_job_points(job);
  /* grid point p in mixed radix, first axis slowest; the scenario keeps the digits of
   * the other axes, in the same order */
  for (int a = 0; a < lbmc_job_axes(job); a++) {
    const long len = lbmc_job_axis_length(job, a), digit = (rest / (stride / len)) % len;
    stride /= len;
    if (!lbmc_job_axis_routing(job, a)) scenario = scenario * len + digit;
  }
  return scenario;
}
