/* Job files (YAML): one system description, the grid of points to simulate, the run
 * settings and the output path. The format is documented in docs/job-files.md.
 *
 * A job is parsed once (lbmc_job_parse_*), then each grid point is materialised as a
 * model and run options (lbmc_job_point). Every setting given as a list is an axis;
 * the grid is the Cartesian product of its dimensions, in the order the keys appear in
 * the file, the first varying slowest; point indices are 0-based in that order (mixed
 * radix over the dimensions). A dimension is one axis, or a group of axes the job
 * links with the key together (varied together: their i-th values go together).
 *
 * None of these functions is collective; under MPI, rank 0 parses the file and the
 * other ranks parse the broadcast text (lbmc_job_parse_text), so every rank holds the
 * same job.
 */
#ifndef LBMC_JOB_H
#define LBMC_JOB_H

#include <stddef.h>

#include "lbmc/error.h"
#include "lbmc/model.h"
#include "lbmc/point.h"
#include "lbmc/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lbmc_job_ lbmc_job;

/** The largest job file (bytes) lbmc reads: job files are short texts; this keeps
 *  `lbmc run /dev/zero` or a wrong file from eating the memory. */
#define LBMC_JOB_MAX_BYTES (16 << 20)

/** Parse the job file at `path` (read whole, kept as the job's text). Errors name the
 *  file, the line, the key, the value and what is allowed: LBMC_ERR_FILE (unreadable),
 *  LBMC_ERR_LIMIT (larger than LBMC_JOB_MAX_BYTES),
 *  LBMC_ERR_PARSE (not YAML, or not a mapping at the top), LBMC_ERR_ARG (unknown key,
 *  wrong type, impossible value, empty grid, a grid point whose model is invalid),
 *  LBMC_ERR_LIMIT (more random streams than SPRNG has). *job is caller-owned. */
lbmc_err lbmc_job_parse_file(const char *path, lbmc_job **job);
/** The same from text; `name` stands for the file name in messages. */
lbmc_err lbmc_job_parse_text(const char *text, const char *name, lbmc_job **job);
void lbmc_job_destroy(lbmc_job **job);

/** The job file's full text (owned by the job). */
const char *lbmc_job_text(const lbmc_job *job);
/** Name used in messages (the path). */
const char *lbmc_job_name(const lbmc_job *job);
/** Number of grid points P >= 1. */
long lbmc_job_points(const lbmc_job *job);
/** Number of pools J (the same at every point). */
int lbmc_job_pools(const lbmc_job *job);
/** Grid axes: their number, and the name of axis a (e.g. "n", "lambda", "policy",
 *  "pools[2].beta", "run.time") and its length. Axes are in grid order: that of the
 *  file, with the axes of a linked group next to the first of them. */
int lbmc_job_axes(const lbmc_job *job);
const char *lbmc_job_axis_name(const lbmc_job *job, int a);
long lbmc_job_axis_length(const lbmc_job *job, int a);
/** Grid dimensions: their number D (at most the number of axes), the dimension of
 *  axis a (0 <= d < D, non-decreasing in a; -1 for no such axis), and the name of
 *  dimension d: the name the job gives its group (together as a mapping), else the
 *  axis name of a single axis, else "" (an unnamed group). Owned by the job. */
int lbmc_job_dims(const lbmc_job *job);
int lbmc_job_axis_dim(const lbmc_job *job, int a);
const char *lbmc_job_dim_name(const lbmc_job *job, int d);
/** Text of value v of axis a as written in the file (owned by the job). */
const char *lbmc_job_axis_value(const lbmc_job *job, int a, long v);

/** The axis values of grid point p as "name=value name=value ..." (as written in the
 *  file), cut to fit buf (len bytes); "" for a job without axes. */
void lbmc_job_point_label(const lbmc_job *job, long p, char *buf, size_t len);

/** Scenarios: the grid without its routing axes (policy, routers, stale, sampling).
 *  The random streams of a replica are numbered by its scenario (lbmc/rng.h), so the
 *  policies of one scenario see common random numbers. lbmc_job_scenarios: their number
 *  (1 for a job without other axes); lbmc_job_point_scenario: the scenario of grid point
 *  p, 0-based in grid order (mixed radix over the other axes, first axis slowest);
 *  lbmc_job_axis_routing: 1 if axis a is a routing axis. */
long lbmc_job_scenarios(const lbmc_job *job);
long lbmc_job_point_scenario(const lbmc_job *job, long p);
int lbmc_job_axis_routing(const lbmc_job *job, int a);

/** Model of grid point p (0 <= p < P), set up (lbmc_model_setup done); caller-owned.
 *  Errors: LBMC_ERR_ARG, LBMC_ERR_MEMORY. */
lbmc_err lbmc_job_point_model(const lbmc_job *job, long p, lbmc_model **m);
/** Run options of grid point p (copied into *o). */
void lbmc_job_point_options(const lbmc_job *job, long p, lbmc_run_options *o);

/** Run settings shared by all points. */
long lbmc_job_replicas(const lbmc_job *job);     /* initial replicas per point */
long lbmc_job_replicas_max(const lbmc_job *job); /* most replicas any point may get */
long lbmc_job_seed(const lbmc_job *job);
const lbmc_precision *lbmc_job_precision(const lbmc_job *job);
/** Output path from the file (may be NULL when the file has none). */
const char *lbmc_job_output(const lbmc_job *job);

/** The first difference lbmc_job_compare finds: the key ("run.time", "system.pools[2].mu",
 *  or the grid's axes) and its values in each job as written ("400", "[10, 20]", "not
 *  given"), cut to fit. */
typedef struct {
  char key[96];
  char a[256], b[256];
} lbmc_job_difference;

/** 0 if jobs a and b define the same runs: every setting has the same parsed value
 *  (0.8, 4/5 and 8e-1 are one value; a setting left out equals its default where it has
 *  one; comments and layout do not count; the output path is not compared), the same
 *  number of pools, and the grid's axes come in the same order and groups, so that
 *  their points are numbered alike. 1 if not, with the first difference in *d. Used
 *  by lbmc run --resume (the checkpoint's job, a complete output's) and lbmc merge. */
int lbmc_job_compare(const lbmc_job *a, const lbmc_job *b, lbmc_job_difference *d);

#ifdef __cplusplus
}
#endif
#endif
