/* Reading a results file back (lbmc info, lbmc merge, tests): the root attributes,
 * /points as a loop over the column table (results_columns.c), then the metrics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "h5seal.h"
#include "h5util.h"
#include "lbmc/metrics.h"
#include "results.h"

static lbmc_err lbmc_read_fail(const char *path, const char *what)
{
  return LBMC_ERROR(LBMC_ERR_ARG, "%s: not a readable lbmc results file: %s", path, what);
}

/* A text attribute into buf; "unknown" when the file has none (written before it existed). */
static void lbmc_read_text_attr(hid_t f, const char *name, char *buf, size_t len)
{
  char *s = NULL;
  snprintf(buf, len, "%s", lbmc_h5_read_attr_str(f, name, &s) == 0 ? s : "unknown");
  free(s);
}

static int lbmc_read_root(hid_t f, lbmc_results *res)
{
  int64_t seed, ranks, complete = 1;
  char *s = NULL;
  int rc = lbmc_h5_read_attr_str(f, "job", &res->job_text) ||
           lbmc_h5_read_attr_i64(f, "seed", &seed) ||
           lbmc_h5_read_attr_i64(f, "mpi_ranks", &ranks) ||
           lbmc_h5_read_attr_f64(f, "wall_seconds", &res->wall_seconds) ||
           lbmc_h5_read_attr_f64(f, "confidence", &res->confidence);
  lbmc_h5_read_attr_i64(f, "complete", &complete);
  res->seed = seed;
  res->mpi_ranks = ranks;
  res->complete = (int)complete;
  if (!rc && lbmc_h5_read_attr_str(f, "created", &s) == 0)
    snprintf(res->created, sizeof res->created, "%s", s);
  free(s);
  s = NULL;
  if (!rc && lbmc_h5_read_attr_str(f, "lbmc_version", &s) == 0)
    snprintf(res->lbmc_version, sizeof res->lbmc_version, "%s", s);
  free(s);
  s = NULL;
  if (!rc && lbmc_h5_read_attr_str(f, "shard", &s) == 0)
    snprintf(res->shard, sizeof res->shard, "%s", s);
  free(s);
  lbmc_read_text_attr(f, "source_revision", res->revision, sizeof res->revision);
  lbmc_read_text_attr(f, "build_type", res->build_type, sizeof res->build_type);
  return rc;
}

/* Entries per point of column c in the file (L from /points/mu_k), or 0 if its
 * dimensions are not P, P x J or P x J x L (1 <= L <= LBMC_MAX_RATES). */
static size_t lbmc_column_width(hid_t f, const char *path, const lbmc_point_column *c,
                                const lbmc_results *res, int *L)
{
  hsize_t dims[4];
  const int rank = lbmc_h5_dims(f, path, dims);
  const int want = c->shape == LBMC_COL_POINT ? 1 : c->shape == LBMC_COL_POOL ? 2 : 3;
  if (rank != want || dims[0] != (hsize_t)res->P || (rank > 1 && dims[1] != (hsize_t)res->J))
    return 0;
  if (rank < 3) return rank == 1 ? 1 : (size_t)res->J;
  if (dims[2] < 1 || dims[2] > LBMC_MAX_RATES) return 0;
  *L = (int)dims[2];
  return (size_t)res->J * (size_t)dims[2];
}

/* Scatter the values read (int64, double, or strings of `cap` bytes) into column c. */
static void lbmc_scatter_column(lbmc_results *res, const lbmc_point_column *c, int L, size_t per,
                                const void *buf, size_t cap)
{
  for (long i = 0; i < res->P; i++)
    for (size_t e = 0; e < per; e++) {
      const int j = c->shape == LBMC_COL_POOL_RATES ? (int)(e / (size_t)L) : (int)e;
      const int k = c->shape == LBMC_COL_POOL_RATES ? (int)(e % (size_t)L) : 0;
      const size_t at = (size_t)i * per + e;
      void *v = lbmc_point_field(c, res, i, j, k);
      const char *text = (const char *)buf + at * cap;
      switch (c->kind) {
      case LBMC_FIELD_LONG: *(long *)v = (long)((const int64_t *)buf)[at]; break;
      case LBMC_FIELD_INT: *(int *)v = (int)((const int64_t *)buf)[at]; break;
      case LBMC_FIELD_DOUBLE: *(double *)v = ((const double *)buf)[at]; break;
      case LBMC_FIELD_CHARS: snprintf(v, c->size, "%s", text); break;
      case LBMC_FIELD_TEXT: break; /* read whole by lbmc_read_texts */
      case LBMC_FIELD_STATUS: {
        lbmc_status st = LBMC_STATUS_OK; /* an unknown name reads as ok */
        for (int s = LBMC_STATUS_OK; s < LBMC_STATUSES; s++)
          if (strcmp(text, lbmc_status_name((lbmc_status)s)) == 0) st = (lbmc_status)s;
        *(lbmc_status *)v = st;
        break;
      }
      case LBMC_FIELD_EVIDENCE: *(unsigned *)v = lbmc_evidence_bits(text); break;
      }
    }
}

/* A column of texts of any length (the service): each stored by
 * lbmc_results_set_service. */
static int lbmc_read_texts(hid_t f, const char *path, lbmc_results *res, size_t per)
{
  const size_t n = (size_t)res->P * per;
  char **texts = calloc(n + 1, sizeof *texts);
  int rc = texts ? lbmc_h5_read_strs(f, path, (hsize_t)n, texts) : -1;
  for (size_t at = 0; at < n; at++) {
    if (!rc && lbmc_results_set_service(res, (long)(at / per), (int)(at % per), texts[at])) rc = -1;
    if (texts) free(texts[at]);
  }
  free(texts);
  return rc;
}

/* Column c of /points; an optional column missing from the file keeps its defaults
 * (*found = 0). */
static int lbmc_read_column(hid_t f, lbmc_results *res, const lbmc_point_column *c, int *found)
{
  char path[96];
  int L = 1, rc;
  /* strings, statuses and evidence are read as text (longer than a status' enum) */
  size_t per, n, cap = c->type == LBMC_COL_STR ? lbmc_point_column_text(c) : 8;
  void *buf;
  snprintf(path, sizeof path, "points/%s", c->name);
  *found = lbmc_h5_exists(f, path);
  if (!*found) return c->optional ? 0 : -1;
  per = lbmc_column_width(f, path, c, res, &L);
  if (per == 0) return -1;
  if (c->kind == LBMC_FIELD_TEXT) return lbmc_read_texts(f, path, res, per);
  n = (size_t)res->P * per;
  buf = malloc(n * cap + 1);
  if (!buf) return -1;
  if (c->type == LBMC_COL_STR)
    rc = lbmc_h5_read_str(f, path, (hsize_t)n, buf, cap);
  else
    rc = lbmc_h5_read(f, path, c->type == LBMC_COL_I64 ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, buf);
  if (!rc) lbmc_scatter_column(res, c, L, per, buf, cap);
  if (!rc && c->store == LBMC_STORE_SLOTS) /* checked against mu_k below */
    for (size_t i = 0; i < n; i++)
      if (res->slots[i] < 1 || res->slots[i] > LBMC_MAX_RATES) rc = -1;
  free(buf);
  return rc;
}

/* Every /points column. Files written before per-pool service and speeds existed hold
 * exponential service at constant speeds (the defaults of lbmc_results_create, with
 * mu_k = mu). */
static int lbmc_read_points(hid_t f, lbmc_results *res)
{
  const size_t PJ = (size_t)res->P * (size_t)res->J;
  int rc = 0, found, have_mu_k = 0;
  for (int i = 0; !rc && i < lbmc_point_columns(); i++) {
    const lbmc_point_column *c = lbmc_point_column_get(i);
    rc = lbmc_read_column(f, res, c, &found);
    if (c->store == LBMC_STORE_MU_K) have_mu_k = found;
  }
  for (size_t i = 0; !rc && i < PJ; i++) {
    if (!have_mu_k)
      res->mu_k[i * LBMC_MAX_RATES] = res->pt[i / (size_t)res->J].mu[i % (size_t)res->J];
    if (isnan(res->mu_k[i * LBMC_MAX_RATES + (size_t)res->slots[i] - 1])) rc = -1; /* slots > L */
  }
  for (long i = 0; i < res->P; i++) res->pt[i].done = 1;
  return rc;
}

/* Scatter metric i of a dataset (rows x len of `elem`-byte values of memory type t) into
 * the flat vectors dst (stride total). A missing optional dataset keeps dst as it is. */
static int lbmc_read_metric(hid_t f, const char *name, const lbmc_results *res, int i, size_t rows,
                            void *dst, size_t elem, hid_t t, int optional, void *buf)
{
  size_t off = lbmc_metric_offset(i, res->J, res->K), len = lbmc_metric_size(i, res->J, res->K);
  if (optional && !lbmc_h5_exists(f, name)) return 0;
  if (lbmc_h5_read(f, name, t, buf)) return -1;
  for (size_t r = 0; r < rows; r++)
    memcpy((unsigned char *)dst + (r * res->total + off) * elem,
           (unsigned char *)buf + r * len * elem, elem * len);
  return 0;
}

/* /estimates/M: the parts of layout 1 (mean, half_width, std_err) and of layout 2. */
static int lbmc_read_estimates(hid_t f, lbmc_results *res, int i, void *buf)
{
  const char *m = lbmc_metric_get(i)->name;
  const struct {
    const char *part;
    void *dst;
    int optional;
  } parts[] = {{"mean", res->est.estimate, 0},   {"half_width", res->est.half_width, 0},
               {"std_err", res->est.std_err, 0}, {"lower", res->est.lower, 1},
               {"upper", res->est.upper, 1},     {"upper_bound", res->est.upper_bound, 1}};
  char name[160];
  int rc = 0;
  for (size_t k = 0; !rc && k < sizeof parts / sizeof *parts; k++) {
    snprintf(name, sizeof name, "estimates/%s/%s", m, parts[k].part);
    rc = lbmc_read_metric(f, name, res, i, (size_t)res->P, parts[k].dst, sizeof(double),
                          H5T_NATIVE_DOUBLE, parts[k].optional, buf);
  }
  snprintf(name, sizeof name, "estimates/%s/flags", m);
  if (!rc)
    rc = lbmc_read_metric(f, name, res, i, (size_t)res->P, res->est.flags, sizeof(unsigned),
                          H5T_NATIVE_UINT, 1, buf);
  return rc;
}

/* Replicas a block of the /replicas datasets holds at most when read (the reader's work
 * space: a row and one dataset's entries per replica, whatever the number of replicas). */
#define LBMC_READ_ROWS 4096

/* The block being read: the rows of points p0 .. p0 + np - 1, replicas r0 .. r0 + n - 1. */
typedef struct {
  long p0, np, r0, n;
  unsigned char *rows, *buf; /* np x n rows; np x n x len entries */
} lbmc_read_block;

/* One /replicas dataset, opened once for every block: it gives the rows' entries at off
 * (len entries of elem bytes, memory type t). r.d < 0: a missing optional dataset, or
 * one of a metric the file does not have (the rows keep their missing values). */
typedef struct {
  lbmc_h5_reader r;
  size_t off, len, elem;
  hid_t t;
} lbmc_read_source;

/* Open dataset `name` into s; it must be P x R x entries of len in all. Its chunk cache
 * holds the bytes of one block of `block` replicas (points x replicas), no more: every
 * dataset is open at once, and HDF5's default of 1 MiB each (a whole chunk, lbmc_h5_dcpl)
 * held 37 chunks, 18 MB at 64000 replicas, for a chunk read again per block costing no
 * measurable time (the page cache's, and the checksum). A missing optional dataset opens
 * as none (s->r.d < 0). 0, or -1 (s->r closed). */
static int lbmc_read_source_open(hid_t f, const char *name, const lbmc_results *res, long R,
                                 long block, int optional, lbmc_read_source *s)
{
  size_t entries = 1;
  s->r.d = s->r.space = -1;
  if (optional && !lbmc_h5_exists(f, name)) return 0;
  if (lbmc_h5_reader_open(f, name, (size_t)block * s->len * s->elem, &s->r)) return -1;
  for (int k = 2; k < s->r.rank; k++) entries *= (size_t)s->r.dims[k];
  if (s->r.rank >= 2 && s->r.dims[0] == (hsize_t)res->P && s->r.dims[1] == (hsize_t)R &&
      entries == s->len)
    return 0;
  lbmc_h5_reader_close(&s->r);
  return -1;
}

/* The block's entries of source s into its rows (row bytes each). 0, or -1. */
static int lbmc_read_source_block(lbmc_read_source *s, size_t row, const lbmc_read_block *b)
{
  hsize_t start[4] = {(hsize_t)b->p0, (hsize_t)b->r0, 0, 0}, count[4];
  if (s->r.d < 0) return 0;
  for (int k = 0; k < s->r.rank; k++)
    count[k] = k == 0 ? (hsize_t)b->np : k == 1 ? (hsize_t)b->n : s->r.dims[k];
  if (lbmc_h5_reader_block(&s->r, s->t, start, count, b->buf)) return -1;
  for (long r = 0; r < b->np * b->n; r++)
    memcpy(b->rows + (size_t)r * row + s->off, b->buf + (size_t)r * s->len * s->elem,
           s->len * s->elem);
  return 0;
}

/* Open every /replicas dataset into src[] (2 per metric: values and weights, then one per
 * other replica column; *ns set as they open, for the caller to close), read in blocks of
 * `block` replicas (points x replicas). 0, or -1. */
static int lbmc_read_sources_open(hid_t f, const lbmc_results *res, long R, long block,
                                  lbmc_read_source *src, int *ns)
{
  char name[160];
  int rc = 0;
  *ns = 0;
  for (int i = 0; !rc && i < lbmc_metric_count(res->pairs); i++) {
    const char *m = lbmc_metric_get(i)->name;
    const size_t off = lbmc_metric_offset(i, res->J, res->K) * sizeof(double),
                 len = lbmc_metric_size(i, res->J, res->K);
    snprintf(name, sizeof name, "estimates/%s", m);
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) continue; /* a metric added later: NaN */
    for (int w = 0; !rc && w < 2; w++) { /* the values, then their (optional) weights */
      lbmc_read_source *s = &src[(*ns)++];
      s->off = lbmc_replica_column_offset(res, w) + off;
      s->len = len;
      s->elem = sizeof(double);
      s->t = H5T_NATIVE_DOUBLE;
      snprintf(name, sizeof name, w ? "replicas/%s_weight" : "replicas/%s", m);
      rc = lbmc_read_source_open(f, name, res, R, block, w, s);
    }
  }
  for (int k = 0; !rc && k < lbmc_replica_columns(); k++) { /* the others */
    const lbmc_replica_column *c = lbmc_replica_column_get(k);
    lbmc_read_source *s = &src[*ns];
    if (!c->name) continue;
    (*ns)++;
    s->off = lbmc_replica_column_offset(res, k);
    s->len = 1;
    s->elem = lbmc_col_bytes(c->type);
    s->t = c->type == LBMC_COL_I64  ? H5T_NATIVE_INT64
           : c->type == LBMC_COL_I8 ? H5T_NATIVE_INT8
                                    : H5T_NATIVE_DOUBLE;
    snprintf(name, sizeof name, "replicas/%s", c->name);
    rc = lbmc_read_source_open(f, name, res, R, block, 0, s);
  }
  return rc;
}

/* Replicas a block of the /replicas datasets holds at most when read (the reader's work
 * space: a row and one dataset's entries per replica, whatever the number of replicas). */
#define LBMC_READ_ROWS 4096

/* Every point's R replicas as the file has them, a block of whole points (or, past
 * LBMC_READ_ROWS replicas, of part of one point) at a time: the block's rows made from
 * every /replicas dataset (each opened once for all blocks), then appended to the store. */
static int lbmc_read_replicas(hid_t f, lbmc_results *res, long R)
{
  const size_t row = lbmc_replica_row_bytes(res);
  const long per = R <= LBMC_READ_ROWS ? LBMC_READ_ROWS / R : 1,
             nr = R < LBMC_READ_ROWS ? R : LBMC_READ_ROWS;
  const int most_sources = 2 * lbmc_metric_count(res->pairs) + lbmc_replica_columns();
  size_t most = 1;
  lbmc_read_block b;
  lbmc_read_source *src = malloc(sizeof *src * (size_t)most_sources);
  int rc, ns = 0;
  for (int i = 0; i < lbmc_metric_count(res->pairs); i++)
    if (lbmc_metric_size(i, res->J, res->K) > most) most = lbmc_metric_size(i, res->J, res->K);
  b.rows = malloc(row * LBMC_READ_ROWS);
  b.buf = malloc(sizeof(double) * most * LBMC_READ_ROWS);
  rc = !b.rows || !b.buf || !src || lbmc_read_sources_open(f, res, R, per * nr, src, &ns);
  for (b.p0 = 0; !rc && b.p0 < res->P; b.p0 += per)
    for (b.r0 = 0; !rc && b.r0 < R; b.r0 += nr) {
      b.np = res->P - b.p0 < per ? res->P - b.p0 : per;
      b.n = R - b.r0 < nr ? R - b.r0 : nr;
      for (long r = 0; r < b.np * b.n; r++) lbmc_replica_row_missing(res, b.rows + (size_t)r * row);
      for (int s = 0; !rc && s < ns; s++) rc = lbmc_read_source_block(&src[s], row, &b);
      if (!rc && lbmc_rep_store_append(res->reps, b.rows, b.np * b.n)) rc = -1;
      for (long p = b.p0; !rc && p < b.p0 + b.np; p++) { /* rows in point order */
        if (b.r0 == 0) res->rep_first[p] = lbmc_rep_store_rows(res->reps) - (b.p0 + b.np - p) * b.n;
        res->rep_count[p] = b.r0 + b.n;
      }
    }
  for (int s = 0; s < ns; s++) lbmc_h5_reader_close(&src[s].r);
  free(src);
  free(b.rows);
  free(b.buf);
  return rc;
}

static int lbmc_read_data(hid_t f, lbmc_results *res, long R)
{
  size_t most = 1;
  double *buf;
  char name[160];
  int rc;
  for (int i = 0; i < lbmc_metric_count(res->pairs); i++)
    if (lbmc_metric_size(i, res->J, res->K) > most) most = lbmc_metric_size(i, res->J, res->K);
  /* a dataset of the estimates: P x one metric's entries */
  buf = malloc(sizeof *buf * ((size_t)res->P * most + 1));
  rc = !buf;
  for (int i = 0; !rc && i < lbmc_metric_count(res->pairs); i++) {
    snprintf(name, sizeof name, "estimates/%s", lbmc_metric_get(i)->name);
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) continue; /* a metric added later: stays NaN */
    rc = lbmc_read_estimates(f, res, i, buf);
  }
  if (!rc) rc = lbmc_read_replicas(f, res, R);
  for (int t = 0; !rc && res->pairs && t < LBMC_PAIR_TABLES; t++)
    for (int k = 0; !rc && k < LBMC_PAIR_PARTS; k++) {
      snprintf(name, sizeof name, "pairs/%s/%s", lbmc_pair_table_name(t), lbmc_pair_part_name(k));
      rc = lbmc_h5_read(f, name, H5T_NATIVE_DOUBLE, res->pair[t][k]);
    }
  free(buf);
  return rc;
}

/* 1 if the file starts with HDF5's signature (lbmc writes no user block). */
static int lbmc_results_hdf5_signature(const char *path)
{
  unsigned char head[8] = {0};
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(head, 1, sizeof head, f) : 0;
  if (f) fclose(f);
  return got == 8 && memcmp(head, "\x89HDF\r\n\x1a\n", 8) == 0;
}

/* The checksums of an open results file (h5seal.h), checked by a child process that
 * read every value before (lbmc_h5_check_file); a file written before lbmc had them is
 * read with a note. */
static lbmc_err lbmc_results_verify(hid_t f, const char *path, int sealed)
{
  if (!sealed && lbmc_h5_exists(f, "points"))
    fprintf(stderr,
            "lbmc: note: %s has no checksums (written by an lbmc before they were added): its "
            "numbers cannot be verified\n",
            path);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_results_read(const char *path, lbmc_results **out)
{
  hid_t f;
  hsize_t dims[4], pr[4];
  int64_t layout, K;
  lbmc_results *res = NULL;
  lbmc_err err;
  H5E_auto2_t func;
  void *data;
  int sealed;
  if (access(path, R_OK) != 0)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: no such file, or not readable", path);
  if (lbmc_checkpoint_is(path))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s is the checkpoint of an unfinished lbmc run, not a results file: finish "
                      "the run with lbmc run JOB.yaml -o OUT.h5 --resume (lbmc info %s says what "
                      "it holds)",
                      path, path);
  if (strlen(path) > 5 && strcmp(path + strlen(path) - 5, ".ckpt") == 0 &&
      !lbmc_results_hdf5_signature(path))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s is not a readable lbmc checkpoint: it does not start with LBMCCKP (its "
                      "first bytes are damaged, or it is another file); it cannot be resumed",
                      path);
  *out = NULL;
  LBMC_CALL(lbmc_h5_check_file(path, &sealed)); /* damage stops here, named */
  H5Eget_auto2(H5E_DEFAULT, &func, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);          /* our messages instead of HDF5's stack dumps */
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT); /* any file format HDF5 reads */
  if (f < 0) {
    err = lbmc_h5_file_error(path, "open", NULL); /* a lock or another system error: exit 1 */
    H5Eset_auto2(H5E_DEFAULT, func, data);
    if (!err && lbmc_results_hdf5_signature(path))
      err = LBMC_ERROR(LBMC_ERR_FILE,
                       "%s is damaged: it starts as an HDF5 file, but HDF5 cannot open it (its "
                       "superblock or root group is unreadable); rerun the job (or shard) that "
                       "made it, or restore the file from a copy",
                       path);
    return err ? err : lbmc_read_fail(path, "cannot open it as an HDF5 file");
  }
  if ((err = lbmc_results_verify(f, path, sealed)) != LBMC_SUCCESS) {
    /* damaged: the message names the dataset */
  } else if (lbmc_h5_read_attr_i64(f, "layout_version", &layout)) {
    err = lbmc_read_fail(path, "it has no layout_version attribute (not written by lbmc run)");
  } else if (layout < 1 || layout > LBMC_LAYOUT_VERSION) {
    char why[96];
    snprintf(why, sizeof why, "layout_version %lld, this program reads 1 to %d", (long long)layout,
             LBMC_LAYOUT_VERSION);
    err = lbmc_read_fail(path, why);
  } else if (lbmc_h5_read_attr_i64(f, "tail_k", &K) || lbmc_h5_dims(f, "points/beta", dims) != 2 ||
             lbmc_h5_dims(f, "replicas/warmup", pr) != 2) {
    err = lbmc_read_fail(path, "tail_k, /points/beta or /replicas/warmup is missing");
  } else if ((err = lbmc_results_create((long)dims[0], (int)dims[1], (int)K,
                                        lbmc_h5_exists(f, "pairs"), &res)) == LBMC_SUCCESS) {
    res->layout = (int)layout;
    if (lbmc_read_root(f, res) || lbmc_read_points(f, res) || lbmc_read_data(f, res, (long)pr[1]) ||
        lbmc_grid_read(f, &res->grid) || lbmc_results_transient_read(f, res)) {
      err = lbmc_read_fail(path, "a dataset of the layout is missing or malformed");
      lbmc_results_destroy(&res);
    }
  }
  H5Fclose(f);
  H5Eset_auto2(H5E_DEFAULT, func, data);
  *out = res;
  return err;
}
