/* Private: the job struct and the helpers shared by src/io/job*.c, bottom up (each file
 * uses only those above it in this list):
 *
 *   job.c          the job: its settings, the grid and its points, the precision target
 *                  (the getters of include/lbmc/job.h)
 *   job_yaml.c     libyaml loading, error messages with file:line, the walk over a
 *                  mapping's keys (each read by the caller's reader)
 *   job_values.c   settings that may be grid axes, vectors, service distributions
 *   job_links.c    linked axes (the key together): groups of axes forming one dimension
 *   job_parse.c    a job file: the sections, walked as the table of inputs (inputs.h) says
 *   job_build.c    a job of one point given setting by setting (lbmc sim's flags)
 *   job_scenario.c the scenarios of a job, on the public API only
 *
 * Parsing keeps every setting as written (text and line) and converted; the grid is
 * only indices into the settings' values, so a point is materialised on demand.
 */
#ifndef LBMC_JOB_IMPL_H
#define LBMC_JOB_IMPL_H

#include <stddef.h>
#include <yaml.h>

#include "inputs.h"
#include "lbmc/job.h"

/** A setting: one value, or a list of values forming a grid axis. */
typedef struct {
  const lbmc_input *row; /* its input */
  char key[48];          /* as in messages: "system.pools[2].mu" (a built job: "--mu-k") */
  char name[32];         /* axis name: "pools[2].mu" */
  int given;             /* present in the file */
  int line;              /* line of the key's value (0: not from a file) */
  long count;            /* number of values (1 unless an axis) */
  lbmc_input_value *v;
  int axis; /* index of its grid axis, -1 if not an axis */
} lbmc_job_setting;

/** The setting of input ID (an LBMC_IN_ name without its prefix) of a job, and of
 *  pool j for the inputs of a pool. */
#define LBMC_JOB_SET(job, ID)     (&(job)->set[LBMC_IN_##ID])
#define LBMC_JOB_POOL(job, ID, j) (&(job)->pool_set[j][LBMC_IN_##ID - LBMC_IN_POOL_FIRST])

/** A name listed under `together`, as written (resolved once the whole file is read). */
typedef struct {
  char text[48];
  int line;
  int group; /* its group, 0-based in the order of the file */
} lbmc_job_link;

/** A group of `together`: its name (the key in the mapping form, "" in the list form). */
typedef struct {
  char name[32];
  int line;
} lbmc_job_group;

struct lbmc_job_ {
  char *text, *name;
  int built; /* 1: given setting by setting (job_build.c), not read from a file: one
                point, settings named by their flags, the model judged strictly */
  int J;
  lbmc_job_setting set[LBMC_INPUTS]; /* every input outside the pools, by lbmc_input_id */
  lbmc_job_setting pool_set[LBMC_MAX_POOLS][LBMC_POOL_INPUTS]; /* the inputs of each pool */
  int pool_line[LBMC_MAX_POOLS];                               /* line of each pool's mapping */
  int naxes;
  lbmc_job_setting *axis[LBMC_MAX_AXES]; /* in grid order: the order of the file, the axes
                                            of a group next to its first one */
  int dim_of[LBMC_MAX_AXES];             /* the dimension of each axis (non-decreasing) */
  int ndims;                             /* dimensions: axes, a group counting once */
  long stride[LBMC_MAX_AXES];            /* per dimension: points between two values */
  char dim_name[LBMC_MAX_AXES][32];      /* per dimension: the name its group is given */
  lbmc_job_link link[LBMC_MAX_AXES];     /* the names under together, as written */
  int nlinks;
  lbmc_job_group group[LBMC_MAX_AXES];
  int ngroups;
  long P;
  lbmc_precision precision; /* from run.precision, resolved once J and tail_k are known */
};

/* ---- job.c ---- */

/** A job with every setting named from the table of inputs and none given; text and
 *  name are copied. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_job_create(const char *text, const char *name, lbmc_job **job);
/** The setting of input id (a row of lbmc_inputs), of pool j for the inputs of a pool. */
lbmc_job_setting *lbmc_job_setting_of(lbmc_job *job, int id, int j);
/** Where a value of setting s stands, for messages and the lbmc_check_* validators:
 *  "<file>:<line>: <key>" in a file, the key alone ("--max-replicas") in a built job. */
const char *lbmc_job_where(const lbmc_job *job, const lbmc_job_setting *s, int line, char *buf,
                           size_t len);
/** P, the strides of the dimensions, and the random-stream capacity (LBMC_ERR_LIMIT). */
lbmc_err lbmc_job_grid(lbmc_job *job);
/** Build and set up every point's model once, and check its size and engine, so that an
 *  impossible combination is reported before anything runs. Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_job_check_points(const lbmc_job *job);
/** Refuse a grid that would run one point twice: a dimension (one axis, or the axes of
 *  a `together` group) listing the same value, or the same combination, twice, compared
 *  as parsed values (0.5 and 1/2 are one). Per dimension, not per axis: a group's
 *  settings may repeat values while their combinations differ. (job_compare.c) Errors:
 *  LBMC_ERR_ARG naming the file, line, keys and the repeated values; LBMC_ERR_MEMORY. */
lbmc_err lbmc_job_check_repeats(const lbmc_job *job);
/** The run options given by settings that are not grid axes (the others at their
 *  defaults). */
void lbmc_job_shared_options(const lbmc_job *job, lbmc_run_options *o);
/** The precision target (lbmc_job_precision) from the settings run.precision.metric,
 *  relative, max_replicas and max_time, once J and tail_k are known: nothing without a
 *  metric; the metric's name resolved ("p_wait", "tail[2][3]", pools 1-based); the
 *  budget at least the replicas. The one reading of a precision target, for job files
 *  and built jobs. Errors: LBMC_ERR_ARG, worded where the settings stand ("<file>:<line>:
 *  run.precision.metric", "--precision"). */
lbmc_err lbmc_job_resolve_precision(lbmc_job *job);

/* ---- job_yaml.c ---- */

/** Parse context: the document being walked and the job being filled. */
typedef struct {
  yaml_document_t *doc;
  const char *name; /* file name for messages */
  lbmc_job *job;
  int pool;     /* pool (0-based) whose mapping is being walked */
  int key_line; /* line of the key (or list item) naming the node being read */
} lbmc_job_reader;

/** Load the single YAML document of text[0..len) into *doc (deleted by the caller with
 *  yaml_document_delete on success). Errors: LBMC_ERR_PARSE "<name>:line:col: not
 *  valid YAML: ...", or the file holds no document or more than one; LBMC_ERR_MEMORY. */
lbmc_err lbmc_job_yaml_load(const char *name, const char *text, size_t len, yaml_document_t *doc);
/** 1-based line of a node. */
int lbmc_job_yaml_line(const yaml_node_t *node);
/** Raise an error "<file>[:line]: [key: ]<message>" once; line 0 and key NULL or ""
 *  are left out. Returns code. */
lbmc_err lbmc_job_yaml_fail(const lbmc_job_reader *c, lbmc_err code, int line, const char *key,
                            const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/** "<file>:<line>: <key>" into buf, for the lbmc_check_* validators. */
const char *lbmc_job_yaml_where(const lbmc_job_reader *c, int line, const char *key, char *buf,
                                size_t len);
/** Describes a node that is not the scalar it should be: "a mapping", "a list", "a
 *  boolean (true)", "an empty value"; NULL for a usable scalar. */
const char *lbmc_job_yaml_not_scalar(const yaml_node_t *node);
/** 1 for a plain true (true, True, TRUE), 0 for a plain false, -1 for anything else. */
int lbmc_job_yaml_boolean(const yaml_node_t *node);
/** What a node is, for messages: "a mapping", "a list", "an empty list", "a boolean
 *  (true)", "an empty value" or "a single value". */
const char *lbmc_job_yaml_describe(const yaml_node_t *node);
/** The node's scalar text; fails with "<key>: <kind> is not allowed here; <what> is
 *  required" when it is not a usable scalar. */
lbmc_err lbmc_job_yaml_scalar(const lbmc_job_reader *c, const yaml_node_t *node, const char *key,
                              const char *what, const char **text);

/** A key of a mapping: its word ("mu") and its input. */
typedef struct {
  const char *key;
  const lbmc_input *row;
} lbmc_job_key;

/** Reads the value of a key (its input row) into the job. */
typedef lbmc_err (*lbmc_job_key_reader)(lbmc_job_reader *c, const lbmc_input *row,
                                        yaml_node_t *value);
/** Names where an unknown key belongs instead ("system.beta or system.pools[j].beta"),
 *  written into buf, or NULL. */
typedef const char *(*lbmc_job_key_hint)(const char *key, char *buf, size_t len);

/** Walk a mapping node at `path` ("" for the top level, "system", "system.pools[2]",
 *  "run.precision") whose keys are keys[0..nkeys): reject a non-mapping, keys that are
 *  not names, unknown keys (suggesting the closest one, or through hint a key of another
 *  section) and duplicates; read each key's value with `read`, in file order; then
 *  report missing required keys. */
lbmc_err lbmc_job_yaml_walk(lbmc_job_reader *c, yaml_node_t *map, const char *path,
                            const lbmc_job_key *keys, int nkeys, lbmc_job_key_reader read,
                            lbmc_job_key_hint hint);

/* ---- job_values.c ---- */

/** Read a setting of input `row`: a scalar is one value; for an axis input a list is a
 *  grid axis (registered in file order; an empty list empties the grid, which is an
 *  error). Each value is converted and checked as lbmc_input_parse, lbmc_input_check
 *  and, for run options, lbmc_run_options_check say. */
lbmc_err lbmc_job_value_read(lbmc_job_reader *c, yaml_node_t *node, const lbmc_input *row,
                             lbmc_job_setting *s);
/** Read a vector setting: one vector or a list of vectors (an axis). row is
 *  system.beta (LBMC_IT_BETAS: [b1, ..., bJ], 'rest' at most once) or
 *  system.pools[j].mu_k (LBMC_IT_SPEEDS: [mu(1), ..., mu(L)], 1 <= L <= LBMC_MAX_RATES). */
lbmc_err lbmc_job_value_read_vectors(lbmc_job_reader *c, yaml_node_t *node, const lbmc_input *row,
                                     lbmc_job_setting *s);
/** Read a service setting (system.service, system.pools[j].service): one distribution,
 *  as text "lognormal:scv=4" or as a mapping {dist: lognormal, scv: 4}, or a list of
 *  them (an axis). A mapping's text is "dist:key=value,..." with the values as
 *  written. */
lbmc_err lbmc_job_value_read_service(lbmc_job_reader *c, yaml_node_t *node, lbmc_job_setting *s);

/* ---- job_links.c ---- */

/** Read the top-level key together: a list of groups (each a list of at least two axis
 *  names, "pools[2].buffer" or "system.pools[2].buffer"), a mapping of named groups
 *  ({load: [n, lambda]}), or one group as a flat list ([n, lambda]). */
lbmc_err lbmc_job_links_read(lbmc_job_reader *c, yaml_node_t *node);
/** Once the whole file is read: resolve the names of together into axes (each a list of
 *  this job, in at most one group, the lists of a group equally long) and order the
 *  axes into dimensions (job->axis, dim_of, ndims, dim_name); every job gets its
 *  dimensions here, one per axis without together. */
lbmc_err lbmc_job_links_resolve(lbmc_job_reader *c);

#endif
