/* A job file's grid through the installed liblbmc (lbmc::lbmc): two linked axes and a
 * policy axis make 2 x 2 = 4 points. */
#include <stdio.h>

#include "lbmc/job.h"

static const char *const text = "system:\n"
                                "  n: [10, 20]\n"
                                "  lambda: [0.5, 0.7]\n"
                                "  pools: [{beta: 1, mu: 1}]\n"
                                "policy: [random, pull]\n"
                                "together: [[n, lambda]]\n";

int main(void)
{
  lbmc_job *job = NULL;
  int bad = lbmc_job_parse_text(text, "consumer.yaml", &job) != LBMC_SUCCESS;
  if (!bad) {
    printf("%ld points in %d dimensions\n", lbmc_job_points(job), lbmc_job_dims(job));
    bad = lbmc_job_points(job) != 4 || lbmc_job_dims(job) != 2;
  }
  lbmc_job_destroy(&job);
  return bad;
}
