/* Fuzz target: the job-file reader (YAML, every key and value check, the grid) on
 * arbitrary text, then the model of each grid point, as lbmc run and lbmc-job-check
 * build them. A valid job or a clean error (lbmc_err) are both fine; a crash, an
 * accepted point that is no system (trap), a sanitizer finding or a leak is a bug. Built with
 * libFuzzer by tests/fuzz/run.sh, and with tests/fuzz/replay.c as a plain program that the test
 * suite runs on the saved inputs of tests/fuzz/inputs/job/. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/job.h"
#include "lbmc/model.h"

/* Points whose models are built: the first and last few of large grids. */
enum { FUZZ_POINTS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An accepted grid point is a system with valid run options. */
static int fuzz_point_ok(const lbmc_model *m, const lbmc_run_options *o)
{
  return lbmc_model_n(m) >= 1 && lbmc_model_pools(m) >= 1 && isfinite(lbmc_model_lambda(m)) &&
         lbmc_model_lambda(m) > 0 && isfinite(o->time) && o->time > 0 && o->warmup >= 0 &&
         o->batches >= 2 && o->confidence > 0 && o->confidence < 1 && o->tail_k >= 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = malloc(size + 1);
  lbmc_job *job = NULL;
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  if (lbmc_job_parse_text(text, "fuzz.yaml", &job) == LBMC_SUCCESS) {
    long P = lbmc_job_points(job);
    for (long p = 0; p < P; p++) {
      lbmc_model *m = NULL;
      lbmc_run_options o;
      if (p == FUZZ_POINTS && P > 2 * FUZZ_POINTS) p = P - FUZZ_POINTS; /* the last few */
      lbmc_job_point_options(job, p, &o);
      if (lbmc_job_point_model(job, p, &m) == LBMC_SUCCESS && !fuzz_point_ok(m, &o))
        __builtin_trap();
      lbmc_model_destroy(&m);
    }
    lbmc_job_destroy(&job);
  }
  free(text);
  return 0;
}
