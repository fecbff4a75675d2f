/* Private: a job of one grid point given setting by setting instead of read from a
 * file: lbmc sim's flags, turned into settings through the table of inputs
 * (src/cli/cmd_sim.c). Its model and run options then come from lbmc_job_point_model
 * and lbmc_job_point_options, its precision target from the same reading as a job
 * file's, so that both doors build a point the same way. Nothing here is
 * collective. */
#ifndef LBMC_JOB_BUILD_H
#define LBMC_JOB_BUILD_H

#include "inputs.h"
#include "lbmc/job.h"

/** A job of J pools (1 to LBMC_MAX_POOLS) and one point with no setting given yet;
 *  `name` stands for the file in messages and is the model's origin ("command line").
 *  Each setting is named in messages by its input's flag ("--max-replicas"), or by its
 *  key where the input has no flag, until lbmc_job_give names it otherwise. Unlike a
 *  job file's, its model is judged strictly: stale reaches the model whatever the
 *  policy (the model rejects one that contradicts jiq's), and the sum of the pool
 *  fractions is judged by lbmc_model_setup. *job is caller-owned (lbmc_job_destroy).
 *  Errors: LBMC_ERR_ARG (J out of range), LBMC_ERR_MEMORY. */
lbmc_err lbmc_job_build(const char *name, int J, lbmc_job **job);

/** Give the setting of input id (a row of lbmc_inputs with a job-file key; of pool j,
 *  0-based, for the inputs of a pool) the one value v, copied (its text, vector and
 *  service distribution). `where` names the setting in messages from now on (NULL: as
 *  before). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_job_give(lbmc_job *job, int id, int j, const char *where, const lbmc_input_value *v);

/** Once every setting is given: the precision target (lbmc_job_precision) from the
 *  settings run.precision.metric, relative, max_replicas and max_time, read as for a
 *  job file (nothing without a metric). Errors: LBMC_ERR_ARG, naming the settings as
 *  given ("--precision: ...", "--max-replicas: ..."). */
lbmc_err lbmc_job_build_finish(lbmc_job *job);

#endif
