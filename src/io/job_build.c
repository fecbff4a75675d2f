/* A job of one point given setting by setting (job_build.h): lbmc sim's flags. The job
 * is the one of job files (job.c), without a grid: P = 1, no axes. */
#include "job_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_impl.h"

lbmc_err lbmc_job_build(const char *name, int J, lbmc_job **out)
{
  lbmc_job *job;
  *out = NULL;
  if (J < 1 || J > LBMC_MAX_POOLS)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: %d pools; allowed: 1 to %d", name, J, LBMC_MAX_POOLS);
  LBMC_CALL(lbmc_job_create("", name, &job));
  job->built = 1;
  job->J = J;
  job->P = 1;
  for (int id = 0; id < LBMC_INPUTS; id++) /* named by their flags */
    if (lbmc_inputs[id].key && lbmc_inputs[id].flag)
      snprintf(job->set[id].key, sizeof job->set[id].key, "--%s", lbmc_inputs[id].flag);
  *out = job;
  return LBMC_SUCCESS;
}

/* v copied into the setting's one value (NULL pointers stay NULL). */
static int lbmc_job_copy_value(lbmc_input_value *to, const lbmc_input_value *v)
{
  *to = *v;
  to->text = v->text ? strdup(v->text) : NULL;
  to->vec = v->vec ? malloc(sizeof *to->vec * (size_t)v->vec_len) : NULL;
  to->svc = v->svc ? malloc(sizeof *to->svc) : NULL;
  if ((v->text && !to->text) || (v->vec && !to->vec) || (v->svc && !to->svc)) return -1;
  if (v->vec) memcpy(to->vec, v->vec, sizeof *to->vec * (size_t)v->vec_len);
  if (v->svc) *to->svc = *v->svc;
  return 0;
}

lbmc_err lbmc_job_give(lbmc_job *job, int id, int j, const char *where, const lbmc_input_value *v)
{
  lbmc_job_setting *s = lbmc_job_setting_of(job, id, j);
  if (where) snprintf(s->key, sizeof s->key, "%s", where);
  if (!s->v) {
    s->v = calloc(1, sizeof *s->v); /* freed with the job */
    if (!s->v) return LBMC_ERROR(LBMC_ERR_MEMORY, "%s: %s: out of memory", job->name, s->key);
    s->count = 1;
  } else { /* given again: the last value holds */
    free(s->v[0].text);
    free(s->v[0].vec);
    free(s->v[0].svc);
  }
  s->given = 1;
  if (lbmc_job_copy_value(&s->v[0], v))
    return LBMC_ERROR(LBMC_ERR_MEMORY, "%s: %s: out of memory", job->name, s->key);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_job_build_finish(lbmc_job *job) { return lbmc_job_resolve_precision(job); }
