/* Private: the results of a run (or shard, or merge) in memory, and their HDF5 file
 * (layout: docs/results-format.md). Rank 0 owns one; nothing here is collective. */
#ifndef LBMC_RESULTS_H
#define LBMC_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

#include "lbmc/error.h"
#include "lbmc/job.h"
#include "lbmc/model.h"
#include "lbmc/point.h"
#include "lbmc/sim.h"

#include "../sim/rep_store.h"

#define LBMC_LAYOUT_VERSION 2

/** One point: its parameters (the /points row) and its verdict (lbmc/point.h, as the
 *  point gave it: replicas, status, reason, evidence, doubling, ..., the other /points
 *  columns). */
typedef struct {
  long index;    /* index in the job's full grid */
  long scenario; /* the grid cell without its routing axes: numbers the random streams */
  long n, d, routers, batches;
  double lambda, rho, time, warmup; /* warmup NaN = auto */
  char policy[64], policy_name[32], sampling[32], stale[16];
  char engine[16]; /* the engine that simulates it: occupancy, servers or general */
  char init[16];   /* how its replicas start: empty or meanfield */
  double beta[LBMC_MAX_POOLS], mu[LBMC_MAX_POOLS];
  long buffer[LBMC_MAX_POOLS], pool_servers[LBMC_MAX_POOLS];
  lbmc_verdict v;      /* v.replicas: the replicas behind the estimates (0 before) */
  int surely_unstable; /* rho >= 1 with unlimited buffers: not simulated */
  int done;            /* all its replicas are in */
} lbmc_point_info;

/** The job's grid as the /grid group stores it (results_grid.c; docs/results-format.md):
 *  A axes in grid order, each with its name, its values as written and its dimension;
 *  D dimensions (linked axes share one). Every string is owned by the grid. */
typedef struct {
  int A, D;
  long V;            /* values of all axes: the sum of axis_length */
  char **axis_name;  /* A: "n", "pools[2].beta", "run.time" */
  long *axis_length; /* A */
  long *axis_dim;    /* A: non-decreasing from 0 to D - 1 */
  long *axis_first;  /* A: index of the axis' first value in axis_value */
  char **axis_value; /* V: the values as written, axis after axis */
  char **dim_name;   /* D: a linked group's name, a single axis' name, or "" */
  long *dim_length;  /* D */
} lbmc_grid;

/** Parts of a transient estimate, in the order of /transient/M (results_transient.c). */
#define LBMC_TRANS_PARTS 5

/** The estimates of a transient run (run.transient; results_transient.c): T observation
 *  times, shared by the job's points, and per point the parts (mean, lower, upper,
 *  band_lower, band_upper) of the V values of each time in the layout of lbmc_transient
 *  (lbmc/point.h: lbmc_transient_index). */
typedef struct {
  long T;
  size_t V;
  double *time;                   /* T */
  double *part[LBMC_TRANS_PARTS]; /* P x T x V each (one block), NaN where missing */
  int64_t *replicas, *unstable;   /* P: replicas pooled, left out at the cap; -1 missing */
} lbmc_results_transient;

typedef struct lbmc_results_ {
  char *job_text;
  lbmc_grid *grid; /* NULL when unknown (a file written before /grid existed) */
  char lbmc_version[32], created[32], shard[32];
  char revision[64], build_type[32]; /* of the lbmc that wrote the file: root attributes
                                        source_revision and build_type */
  long seed, mpi_ranks;
  double wall_seconds, confidence;
  int J, K, complete;  /* complete: every point of the job (or shard) is in */
  int pairs;           /* 1: the run recorded the pair statistics (run.pairs): the pair
                          metrics and the tables of /pairs */
  int layout;          /* layout version of a file read (LBMC_LAYOUT_VERSION when written) */
  size_t total;        /* entries of the metric vector */
  long P;              /* points held */
  lbmc_point_info *pt; /* P */
  /* Each point's replicas, one row each (lbmc_replica_row_bytes: the per-replica columns
   * side by side, lbmc_replica_column_get), in a replica store (src/sim/rep_store.h: in
   * memory up to a threshold, then in a temporary file): point i's replicas 0 ..
   * rep_count[i] - 1 are rows rep_first[i] .. rep_first[i] + rep_count[i] - 1. A replica
   * beyond rep_count[i] is missing (NaN, -1). */
  lbmc_rep_store *reps;
  long *rep_first, *rep_count; /* P */
  lbmc_estimates est;          /* P x total: point i's entries from i x total */
  /* With pairs: P x lbmc_pair_table_size(t, J, K + 1) each (lbmc/point.h), one block */
  double *pair[LBMC_PAIR_TABLES][LBMC_PAIR_PARTS];
  lbmc_results_transient *trans; /* a transient run's estimates (/transient), or NULL */
  /* Service per point and pool (kept out of lbmc_point_info, whose arrays are sized
   * LBMC_MAX_POOLS): */
  char **service; /* P x J: canonical text, "lognormal:scv=4" (malloc'ed; NULL: the
                     default, exponential); of any length (a ph law's is long) */
  int *slots;     /* P x J: L_j, length of the speed list (1 = constant mu_j) */
  double *mu_k;   /* P x J x LBMC_MAX_RATES: mu_j(1..L_j), NaN beyond L_j */
} lbmc_results;

/** The largest number of replicas of any point (at least 1): the R axis of the file. */
long lbmc_results_replicas(const lbmc_results *res);

/** Service text of point i, pool j ("exponential" unless set). */
const char *lbmc_results_service(const lbmc_results *res, long i, int j);
#define LBMC_RES_SERVICE(res, i, j) lbmc_results_service((res), (i), (j))
/** Set the service text of point i, pool j (a copy). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_results_set_service(lbmc_results *res, long i, int j, const char *text);
/** Speed list of point i, pool j (LBMC_MAX_RATES entries). */
#define LBMC_RES_MU_K(res, i, j) ((res)->mu_k + ((size_t)(i) * (res)->J + (j)) * LBMC_MAX_RATES)

/* ---- the /points columns (results_columns.c) ---- */

/** Type of a column in the file (LBMC_COL_I8: /replicas only). */
typedef enum { LBMC_COL_I64, LBMC_COL_F64, LBMC_COL_STR, LBMC_COL_I8 } lbmc_col_type;
/** Shape of a column: P, P x J, or P x J x L (L: the longest speed list, see slots). */
typedef enum { LBMC_COL_POINT, LBMC_COL_POOL, LBMC_COL_POOL_RATES } lbmc_col_shape;
/** C type of the values in memory; a status is written as its name, evidence bits as
 *  their names (lbmc_evidence_names). */
typedef enum {
  LBMC_FIELD_LONG,
  LBMC_FIELD_INT,
  LBMC_FIELD_DOUBLE,
  LBMC_FIELD_CHARS,
  LBMC_FIELD_STATUS,
  LBMC_FIELD_EVIDENCE,
  LBMC_FIELD_TEXT /* a malloc'ed string (char *) of any length; NULL: the column's default */
} lbmc_field_kind;

/** Bytes of the text of an evidence column (all names of LBMC_EVIDENCE_LIST fit). */
#define LBMC_EVIDENCE_TEXT 320
/** Where the values live: a field of lbmc_point_info, or an lbmc_results array. */
typedef enum {
  LBMC_STORE_POINT,
  LBMC_STORE_SERVICE,
  LBMC_STORE_SLOTS,
  LBMC_STORE_MU_K
} lbmc_field_store;

/** One dataset of /points. */
typedef struct {
  const char *name;
  lbmc_col_type type;
  lbmc_col_shape shape;
  lbmc_field_kind kind;
  lbmc_field_store store;
  size_t offset;           /* LBMC_STORE_POINT: offset of the field in lbmc_point_info */
  size_t size;             /* bytes of one value (a string's capacity) */
  int optional;            /* absent from files written before it existed */
  const char *units;       /* "1", "time", "1/time" */
  const char *description; /* NULL: built (lbmc_point_column_description) */
} lbmc_point_column;

/** Number of /points columns and column i, in the order they are written. */
int lbmc_point_columns(void);
const lbmc_point_column *lbmc_point_column_get(int i);
/** The description of column c: its text, or one built into buf (len bytes) from the
 *  constants of the code it names (the verdict's levels, lbmc/point.h); NULL for
 *  policy_name, whose writer lists the policy families of the registry. */
const char *lbmc_point_column_description(const lbmc_point_column *c, char *buf, size_t len);
/** The value of column c at point i, pool j (0 for LBMC_COL_POINT), speed k (0 unless
 *  LBMC_COL_POOL_RATES): a pointer to its C type (lbmc_field_kind). */
void *lbmc_point_field(const lbmc_point_column *c, const lbmc_results *res, long i, int j, int k);
/** Bytes a column's text takes when read (strings, statuses and evidence as names). */
size_t lbmc_point_column_text(const lbmc_point_column *c);

/* ---- the per-replica arrays and the other /replicas datasets (results_columns.c) ---- */

/** One per-replica column of lbmc_results (a part of each replica's row in res->reps):
 *  `total` entries (per_metric) or one. A missing replica holds NaN (LBMC_COL_F64) or -1
 *  (the integers). */
typedef struct {
  const char *name;        /* its /replicas dataset; NULL for the values and weights,
                              written per metric as /replicas/M and /replicas/M_weight */
  lbmc_col_type type;      /* LBMC_COL_F64, LBMC_COL_I64 or LBMC_COL_I8 */
  int per_metric;          /* 1: `total` entries per slot; 0: one */
  const char *units;       /* "1", "time", "s" */
  const char *description; /* of the dataset (NULL for the values and weights) */
} lbmc_replica_column;

/** Number of per-replica arrays and array i (the datasets in the order they are
 *  written). */
int lbmc_replica_columns(void);
const lbmc_replica_column *lbmc_replica_column_get(int i);
/** Bytes of column c in a replica's row, and the offset of column k in the row (the
 *  columns in order, unaligned: read and write them with memcpy). */
size_t lbmc_replica_column_bytes(const lbmc_results *res, const lbmc_replica_column *c);
size_t lbmc_replica_column_offset(const lbmc_results *res, int k);
/** Bytes of a replica's row: every column. */
size_t lbmc_replica_row_bytes(const lbmc_results *res);
/** A missing replica's row (NaN, -1) into row (lbmc_replica_row_bytes). */
void lbmc_replica_row_missing(const lbmc_results *res, void *row);
/** Rows of replicas r0 .. r0 + n - 1 of point p into out (n x lbmc_replica_row_bytes),
 *  a missing row for a replica beyond rep_count[p]. Errors: LBMC_ERR_FILE (the store's
 *  file), LBMC_ERR_INTERNAL. */
lbmc_err lbmc_results_replica_rows(const lbmc_results *res, long p, long r0, long n, void *out);
/** Bytes of one value of a numeric column type. */
size_t lbmc_col_bytes(lbmc_col_type t);

/* ---- the /grid group (results_grid.c) ---- */

/** The grid of a parsed job. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_grid_from_job(const lbmc_job *job, lbmc_grid **grid);
/** A copy of src (NULL for NULL). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_grid_copy(const lbmc_grid *src, lbmc_grid **grid);
void lbmc_grid_destroy(lbmc_grid **grid);
/** Cells of the grid: the product of the dimension lengths. */
long lbmc_grid_cells(const lbmc_grid *g);
/** Index (0-based) of the value of axis a at grid cell `index`, and its text as
 *  written (NULL if a or index is out of range). */
long lbmc_grid_position(const lbmc_grid *g, int a, long index);
const char *lbmc_grid_value(const lbmc_grid *g, int a, long index);
/** "name=value name=value ..." of grid cell `index` ("" for no axes or g NULL). */
void lbmc_grid_label(const lbmc_grid *g, long index, char *buf, size_t len);
/** The grid in words, e.g. "grid: n (2) x pools[1].buffer + pools[2].buffer (3 values,
 *  varied together) x policy (2) = 12 points", cut to fit buf (len bytes). */
void lbmc_grid_text(const lbmc_grid *g, char *buf, size_t len);
/** Write g as the group /grid of an open file (nothing for g NULL); read it back into
 *  *g (NULL when the file has no /grid). 0 on success, -1 on an HDF5 failure or a
 *  malformed group. */
int lbmc_grid_write(hid_t file, const lbmc_grid *g);
int lbmc_grid_read(hid_t file, lbmc_grid **g);

/** Allocate for P points of J pools and K tail levels, with the pair statistics (pairs =
 *  1, run.pairs) or without; values NaN, no replicas (they come with each point stored).
 *  Errors: LBMC_ERR_MEMORY, LBMC_ERR_ARG (LBMC_REP_STORE_BYTES, rep_store.h). */
lbmc_err lbmc_results_create(long P, int J, int K, int pairs, lbmc_results **res);
void lbmc_results_destroy(lbmc_results **res);
/** Point i's replica rows begin anew (none): its old rows are dropped when they are the
 *  last of the store (a worker storing one point after another), else left unused. */
void lbmc_results_rows_restart(lbmc_results *res, long i);
/** Fill point i's parameters from a set-up model (its description, lbmc_model_describe)
 *  and its run options. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_results_set_point(lbmc_results *res, long i, long grid_index, const lbmc_model *m,
                                const lbmc_run_options *o);
/** Store the reduction of point i (lbmc_point_reduce done; verdict, estimates, and the
 *  replicas 0 .. replicas - 1 it rests on, appended to res->reps). Errors:
 *  LBMC_ERR_MEMORY, LBMC_ERR_FILE (the replica store's file). */
lbmc_err lbmc_results_store(lbmc_results *res, long i, const lbmc_point *acc);

/** The reduction of point i as lbmc_results_store left it (its verdict, estimates, pair
 *  tables, and the rows of replicas 0 .. replicas - 1; not its parameters) as bytes into
 *  buf (cap bytes): *need is the bytes needed, written only when they fit (like
 *  snprintf); 0 for a transient run (not packed). The ranks of one run share the layout:
 *  a worker reduces a whole point and rank 0 stores the bytes with
 *  lbmc_results_unpack_point, as if it had stored the point itself. Errors: LBMC_ERR_FILE,
 *  LBMC_ERR_INTERNAL (reading the replica store). */
lbmc_err lbmc_results_pack_point(const lbmc_results *res, long i, void *buf, size_t cap,
                                 size_t *need);
/** Store the reduction packed by lbmc_results_pack_point (len bytes) as point i's; res has
 *  the same J, K and pairs as the packing results. Errors: LBMC_ERR_INTERNAL (not the size
 *  of a packed point), LBMC_ERR_MEMORY, LBMC_ERR_FILE. */
lbmc_err lbmc_results_unpack_point(lbmc_results *res, long i, const void *buf, size_t len);

/** Copy point `from` of src (parameters, replicas, estimates) to point `to` of dst (its
 *  replicas appended to dst's store); the same J, K. Errors: LBMC_ERR_MEMORY,
 *  LBMC_ERR_FILE. */
lbmc_err lbmc_results_copy_point(lbmc_results *dst, long to, const lbmc_results *src, long from);

/** Merge result files of one job: the same job text and seed, every part complete,
 *  shards (attribute shard "i/k") all present once; points in grid order, none twice.
 *  paths name the parts in messages. The merge is complete if it holds every grid
 *  point of the job. Errors: LBMC_ERR_MISMATCH (with the reason), LBMC_ERR_MEMORY. */
lbmc_err lbmc_results_merge(lbmc_results *const *parts, const char *const *paths, int n,
                            lbmc_results **out);

/** A new results object holding the first n points with done = 1 (and everything
 *  else of res). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_results_subset(const lbmc_results *res, long n, lbmc_results **out);

/* ---- /transient (results_transient.c) ---- */

/** Give res (P points) the transient estimates of T times `time` (copied), every value
 *  NaN (replaces any). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_results_transient_create(lbmc_results *res, long T, const double *time);
/** The same with the observation times of a transient run's options o (lbmc_transient_time;
 *  o->transient DT > 0). Errors: LBMC_ERR_MEMORY, LBMC_ERR_ARG (not a transient run). */
lbmc_err lbmc_results_transient_of(lbmc_results *res, const lbmc_run_options *o);
void lbmc_results_transient_free(lbmc_results *res);
/** Store the transient estimates of point p (the same times and layout as res->trans).
 *  Errors: LBMC_ERR_MISMATCH (another time axis or layout). */
lbmc_err lbmc_results_transient_store(lbmc_results *res, long p, const lbmc_transient *t);
/** Point p's transient estimates as an lbmc_transient whose arrays point into res (not
 *  owned: do not free). res->trans must exist. */
void lbmc_results_transient_view(const lbmc_results *res, long p, lbmc_transient *t);
/** Copy point `from` of src's transient estimates to point `to` of dst (nothing when
 *  neither has them). Errors: LBMC_ERR_MISMATCH (one has them and the other not, or
 *  their time axes differ), LBMC_ERR_MEMORY. */
lbmc_err lbmc_results_transient_copy(lbmc_results *dst, long to, const lbmc_results *src,
                                     long from);
/** Write res->trans as the group /transient of an open file (nothing without); read it
 *  back (nothing when the file has no /transient). 0, or -1 on an HDF5 failure or a
 *  malformed group. */
int lbmc_results_transient_write(hid_t file, const lbmc_results *res);
int lbmc_results_transient_read(hid_t file, lbmc_results *res);

/** Write the results to `path` atomically and durably (h5file.h): a temporary file in
 *  the same directory (PATH.tmp.PID), numeric datasets with Fletcher32, every object
 *  with its SHA-256 (h5seal.h), fsync, then rename; on failure the temporary is
 *  removed. After the rename, temporaries of `path` left by processes no longer running
 *  on this host are removed (lbmc_results_remove_stale). Errors: LBMC_ERR_HDF5,
 *  LBMC_ERR_FILE (naming the system error, e.g. "No space left on device", and for a
 *  file lock the remedy: lbmc_h5_file_error; or a failed read of the replica store:
 *  that error alone), LBMC_ERR_MEMORY. */
lbmc_err lbmc_results_write(const lbmc_results *res, const char *path);
/** An estimate (bytes, a little low rather than high) of the results file of P points,
 *  R replicas per point, J pools and K tail levels. */
double lbmc_results_bytes(long P, long R, int J, int K);
/** Before computing anything: the file system of `path` has `bytes` free (an estimate,
 *  lbmc_results_bytes; 0: not checked), and HDF5 can create (and lock) a file next to
 *  it (lbmc_h5_probe), so that a full disk or a directory where HDF5 cannot write or
 *  lock files is reported now, not after the run. Errors: LBMC_ERR_FILE. */
lbmc_err lbmc_results_probe(const char *path, double bytes);
/** Remove the temporaries of `path` (PATH.tmp.PID, PATH.probe.PID) whose process PID is
 *  not running on this host (kill(PID, 0) fails with ESRCH), saying so on stderr. A
 *  process of another host sharing the directory cannot be seen: its temporaries are
 *  removed only if its PID is not in use here. */
void lbmc_results_remove_stale(const char *path);
/** Read a results file. Errors: LBMC_ERR_FILE (not an lbmc results file, with the
 *  reason), LBMC_ERR_HDF5. */
lbmc_err lbmc_results_read(const char *path, lbmc_results **res);

#endif
