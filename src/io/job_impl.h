/* Private: the job struct and the helpers shared by src/io/job*.c.
 *
 *   job.c         the public API (include/lbmc/job.h), the grid and its points
 *   job_yaml.c    libyaml loading, error messages with file:line, mapping walks
 *   job_parse.c   the sections of a job file, walked as the table of inputs (inputs.h) says
 *   job_values.c  settings that may be grid axes, vectors, service distributions, metrics
 *   job_links.c   linked axes (the key together): groups of axes forming one dimension
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

/** Settings that may be grid axes: 11 system/run/policy ones and 5 per pool. */
#define LBMC_JOB_MAX_AXES (11 + 5 * LBMC_MAX_POOLS)

/** A setting: one value, or a list of values forming a grid axis. */
typedef struct {
  char key[48];  /* as in messages: "system.pools[2].mu" */
  char name[32]; /* axis name: "pools[2].mu" */
  int given;     /* present in the file */
  int line;      /* line of the key's value */
  long count;    /* number of values (1 unless an axis) */
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
  int J;
  lbmc_job_setting set[LBMC_INPUTS]; /* every input outside the pools, by lbmc_input_id */
  lbmc_job_setting pool_set[LBMC_MAX_POOLS][LBMC_POOL_INPUTS]; /* the inputs of each pool */
  int pool_line[LBMC_MAX_POOLS];                               /* line of each pool's mapping */
  int naxes;
  lbmc_job_setting *axis[LBMC_JOB_MAX_AXES]; /* in grid order: the order of the file, the
                                                axes of a group next to its first one */
  int dim_of[LBMC_JOB_MAX_AXES];             /* the dimension of each axis (non-decreasing) */
  int ndims;                                 /* dimensions: axes, a group counting once */
  long stride[LBMC_JOB_MAX_AXES];            /* per dimension: points between two values */
  char dim_name[LBMC_JOB_MAX_AXES][32];      /* per dimension: the name its group is given */
  lbmc_job_link link[LBMC_JOB_MAX_AXES];     /* the names under together, as written */
  int nlinks;
  lbmc_job_group group[LBMC_JOB_MAX_AXES];
  int ngroups;
  long P;
  lbmc_precision precision; /* from run.precision, resolved once J and tail_k are known */
};

/** Parse context: the document being walked and the job being filled. */
typedef struct {
  yaml_document_t *doc;
  const char *name; /* file name for messages */
  lbmc_job *job;
  int pool;     /* pool (0-based) whose mapping is being walked */
  int key_line; /* line of the key (or list item) naming the node being read */
} lbmc_jp;

/* ---- job_yaml.c ---- */

/** Load the single YAML document of text[0..len) into *doc (deleted by the caller with
 *  yaml_document_delete on success). Errors: LBMC_ERR_PARSE "<name>:line:col: not
 *  valid YAML: ...", or the file holds no document or more than one; LBMC_ERR_MEMORY. */
lbmc_err lbmc_jp_load(const char *name, const char *text, size_t len, yaml_document_t *doc);
/** 1-based line of a node. */
int lbmc_jp_line(const yaml_node_t *node);
/** Raise an error "<file>[:line]: [key: ]<message>" once; line 0 and key NULL or ""
 *  are left out. Returns code. */
lbmc_err lbmc_jp_fail(const lbmc_jp *c, lbmc_err code, int line, const char *key, const char *fmt,
                      ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/** "<file>:<line>: <key>" into buf, for the lbmc_check_* validators. */
const char *lbmc_jp_where(const lbmc_jp *c, int line, const char *key, char *buf, size_t len);
/** Describes a node that is not the scalar it should be: "a mapping", "a list", "a
 *  boolean (true)", "an empty value"; NULL for a usable scalar. */
const char *lbmc_jp_not_scalar(const yaml_node_t *node);
/** What a node is, for messages: "a mapping", "a list", "an empty list", "a boolean
 *  (true)", "an empty value" or "a single value". */
const char *lbmc_jp_describe(const yaml_node_t *node);
/** The node's scalar text; fails with "<key>: <kind> is not allowed here; <what> is
 *  required" when it is not a usable scalar. */
lbmc_err lbmc_jp_scalar(const lbmc_jp *c, const yaml_node_t *node, const char *key,
                        const char *what, const char **text);

/** A key of a mapping: its word ("mu") and its input. */
typedef struct {
  const char *key;
  const lbmc_input *row;
} lbmc_jp_key;

/** The keys directly under `parent` in the table of inputs ("" for the top level,
 *  "system", "system.pools[j]", "run", "run.precision"), in table order; at most cap.
 *  Returns their number. */
int lbmc_jp_keys(const char *parent, lbmc_jp_key *keys, int cap);

/** Walk a mapping node at `path` ("" for the top level, "system", "system.pools[2]",
 *  "run.precision") whose keys are keys[0..nkeys): reject a non-mapping, keys that are
 *  not names, unknown keys (suggesting the closest one, or through hint() writing into
 *  buf a key of another section) and duplicates; read each key (lbmc_jp_read) in file
 *  order; then report missing required keys. */
lbmc_err lbmc_jp_walk(lbmc_jp *c, yaml_node_t *map, const char *path, const lbmc_jp_key *keys,
                      int nkeys, const char *(*hint)(const char *key, char *buf, size_t len));

/* ---- job_values.c ---- */

/** Name a setting: key for messages, axis name. */
void lbmc_jv_init(lbmc_job_setting *s, const char *key, const char *name);
/** Read a setting of input `row`: a scalar is one value; for an axis input a list is a
 *  grid axis (registered in file order; an empty list empties the grid, which is an
 *  error). Each value is converted and checked as lbmc_input_parse, lbmc_input_check
 *  and, for run options, lbmc_run_options_check say. */
lbmc_err lbmc_jv_read(lbmc_jp *c, yaml_node_t *node, const lbmc_input *row, lbmc_job_setting *s);
/** Read a vector setting: one vector or a list of vectors (an axis). row is
 *  system.beta (LBMC_IT_BETAS: [b1, ..., bJ], 'rest' at most once) or
 *  system.pools[j].mu_k (LBMC_IT_SPEEDS: [mu(1), ..., mu(L)], 1 <= L <= LBMC_MAX_RATES). */
lbmc_err lbmc_jv_read_vectors(lbmc_jp *c, yaml_node_t *node, const lbmc_input *row,
                              lbmc_job_setting *s);
/** Read a service setting (system.service, system.pools[j].service): one distribution,
 *  as text "lognormal:scv=4" or as a mapping {dist: lognormal, scv: 4}, or a list of
 *  them (an axis). A mapping's text is "dist:key=value,..." with the values as
 *  written. */
lbmc_err lbmc_jv_read_service(lbmc_jp *c, yaml_node_t *node, lbmc_job_setting *s);
/** Check run options in which only one setting, read at `line`, differs from the
 *  defaults: lbmc_run_options_check with the prefix "<file>:<line>: run.". */
lbmc_err lbmc_jv_run_check(const lbmc_jp *c, int line, const lbmc_run_options *o);
/** Resolve run.precision.metric ("p_wait", "utilization[2]", "tail[2][3]", pools
 *  1-based) into precision.metric and precision.index, once J and tail_k are known. */
lbmc_err lbmc_jv_metric(const lbmc_jp *c);
/** Free a setting's values. */
void lbmc_jv_free(lbmc_job_setting *s);

/* ---- job_links.c ---- */

/** Read the top-level key together: a list of groups (each a list of at least two axis
 *  names, "pools[2].buffer" or "system.pools[2].buffer"), a mapping of named groups
 *  ({load: [n, lambda]}), or one group as a flat list ([n, lambda]). */
lbmc_err lbmc_jl_read(lbmc_jp *c, yaml_node_t *node);
/** Once the whole file is read: resolve the names of together into axes (each a list of
 *  this job, in at most one group, the lists of a group equally long) and order the
 *  axes into dimensions (job->axis, dim_of, ndims, dim_name); every job gets its
 *  dimensions here, one per axis without together. */
lbmc_err lbmc_jl_resolve(lbmc_jp *c);

/* ---- job.c ---- */

/** The run options given by settings that are not grid axes (the others at their
 *  defaults). */
void lbmc_job_shared_options(const lbmc_job *job, lbmc_run_options *o);

/* ---- job_parse.c ---- */

/** Fill the job from the loaded document: every section, then the checks that span
 *  sections (beta given once per pool, vector lengths, 'rest', precision). */
lbmc_err lbmc_jp_job(lbmc_jp *c);
/** Read the value of input `row` (a key of the mapping being walked; of pool c->pool
 *  for the inputs of a pool) into its setting. */
lbmc_err lbmc_jp_read(lbmc_jp *c, const lbmc_input *row, yaml_node_t *value);

#endif
