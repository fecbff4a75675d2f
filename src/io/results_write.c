/* Writing a results file (docs/results-format.md), atomically: a temporary file in the
 * same directory, renamed over the output once complete. /points is a loop over the
 * column table (results_columns.c), /estimates and /replicas loops over the metrics. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../policies/registry.h"
#include "h5file.h"
#include "h5util.h"
#include "lbmc/metrics.h"
#include "results.h"

/* The policy families of the registry (src/policies/registry.c), each once, in its
 * order: names[] and their messages_per_arrival[] (at most cap), their count, and in desc
 * the policy_name description that lists them. */
static int lbmc_policy_families(const char **names, const char **messages, int cap, char *desc,
                                size_t len)
{
  int n = 0;
  size_t used = (size_t)snprintf(desc, len, "policy family, one of the attribute allowed: ");
  for (int i = 0; i < lbmc_policy_count(); i++) {
    const char *name = lbmc_policy_get(i)->name;
    int seen = 0;
    for (int k = 0; k < n && !seen; k++) seen = strcmp(names[k], name) == 0;
    if (seen || n == cap) continue;
    names[n] = name;
    messages[n] = lbmc_policy_get(i)->messages_per_arrival;
    if (used < len) used += (size_t)snprintf(desc + used, len - used, "%s%s", n ? ", " : "", name);
    n++;
  }
  return n;
}

/* L: the longest speed list of any point and pool (the third dimension of mu_k). */
static int lbmc_rates_width(const lbmc_results *res)
{
  int L = 1;
  for (size_t i = 0; i < (size_t)res->P * (size_t)res->J; i++)
    if (res->slots[i] > L) L = res->slots[i];
  return L;
}

/* Gather column c of every point into scratch (int64, double or string pointers; the
 * names of evidence bits written into text, LBMC_EVIDENCE_TEXT bytes per value). */
static void lbmc_gather_column(const lbmc_results *res, const lbmc_point_column *c, int L,
                               size_t per, void *scratch, char *text)
{
  int64_t *I = scratch;
  double *F = scratch;
  const char **S = scratch;
  for (long i = 0; i < res->P; i++)
    for (size_t e = 0; e < per; e++) {
      const int j = c->shape == LBMC_COL_POOL_RATES ? (int)(e / (size_t)L) : (int)e;
      const int k = c->shape == LBMC_COL_POOL_RATES ? (int)(e % (size_t)L) : 0;
      const void *v = lbmc_point_field(c, res, i, j, k);
      const size_t at = (size_t)i * per + e;
      switch (c->kind) {
      case LBMC_FIELD_LONG: I[at] = *(const long *)v; break;
      case LBMC_FIELD_INT: I[at] = *(const int *)v; break;
      case LBMC_FIELD_DOUBLE: F[at] = *(const double *)v; break;
      case LBMC_FIELD_CHARS: S[at] = v; break;
      case LBMC_FIELD_TEXT: S[at] = lbmc_results_service(res, i, j); break; /* service only */
      case LBMC_FIELD_STATUS: S[at] = lbmc_status_name(*(const lbmc_status *)v); break;
      case LBMC_FIELD_EVIDENCE:
        S[at] = lbmc_evidence_names(*(const unsigned *)v, text + at * LBMC_EVIDENCE_TEXT,
                                    LBMC_EVIDENCE_TEXT);
        break;
      }
    }
}

static int lbmc_write_column(hid_t g, const lbmc_results *res, const lbmc_point_column *c, int L,
                             const char *desc, void *scratch)
{
  hsize_t dims[3] = {(hsize_t)res->P, (hsize_t)res->J, (hsize_t)L};
  const int rank = c->shape == LBMC_COL_POINT ? 1 : c->shape == LBMC_COL_POOL ? 2 : 3;
  const size_t per = rank == 1 ? 1 : rank == 2 ? (size_t)res->J : (size_t)res->J * (size_t)L;
  char *text = NULL;
  int rc;
  if (c->kind == LBMC_FIELD_EVIDENCE &&
      !(text = malloc((size_t)res->P * per * LBMC_EVIDENCE_TEXT + 1)))
    return -1;
  lbmc_gather_column(res, c, L, per, scratch, text);
  switch (c->type) {
  case LBMC_COL_I64: rc = lbmc_h5_write_i64(g, c->name, rank, dims, scratch, c->units, desc); break;
  case LBMC_COL_F64: rc = lbmc_h5_write_f64(g, c->name, rank, dims, scratch, c->units, desc); break;
  default: rc = lbmc_h5_write_strs(g, c->name, rank, dims, scratch, c->units, desc); break;
  }
  free(text);
  return rc;
}

/* Attribute `name` of loc: the n strings name_of(i), i = 0 .. n - 1 (at most 64). */
static int lbmc_attr_names(hid_t loc, const char *name, int n, const char *(*name_of)(int))
{
  const char *names[64];
  if (n > 64) return -1;
  for (int i = 0; i < n; i++) names[i] = name_of(i);
  return lbmc_h5_attr_strs(loc, name, n, names);
}

static const char *lbmc_point_column_name(int i) { return lbmc_point_column_get(i)->name; }

static const char *lbmc_point_column_shape(int i)
{
  static const char *const shapes[] = {"P", "P x J", "P x J x L"};
  return shapes[lbmc_point_column_get(i)->shape];
}

static int lbmc_write_points(hid_t file, const lbmc_results *res, void *scratch)
{
  hid_t g = lbmc_h5_group(file, "points");
  const int L = lbmc_rates_width(res);
  const char *families[64], *messages[64];
  char desc[512];
  const int nfamilies = lbmc_policy_families(families, messages, 64, desc, sizeof desc);
  char built[512];
  /* the table itself, for readers (lbmc_analysis): the columns in order, their shapes */
  int rc = g < 0 || lbmc_attr_names(g, "columns", lbmc_point_columns(), lbmc_point_column_name) ||
           lbmc_attr_names(g, "shapes", lbmc_point_columns(), lbmc_point_column_shape);
  for (int i = 0; !rc && i < lbmc_point_columns(); i++) {
    const lbmc_point_column *c = lbmc_point_column_get(i);
    const char *text = lbmc_point_column_description(c, built, sizeof built);
    rc = lbmc_write_column(g, res, c, L, text ? text : desc, scratch);
    if (!rc && !text) { /* policy_name: the known families and their messages */
      hid_t d = H5Dopen2(g, c->name, H5P_DEFAULT);
      rc = d < 0 || lbmc_h5_attr_strs(d, "allowed", nfamilies, families) ||
           lbmc_h5_attr_strs(d, "messages_per_arrival", nfamilies, messages);
      if (d >= 0) H5Dclose(d);
    }
  }
  if (g >= 0) H5Gclose(g);
  return rc;
}

/* dims of metric i after a leading block of `lead` dims. */
static int lbmc_metric_dims(const lbmc_results *res, int i, int lead, const hsize_t *first,
                            hsize_t *dims)
{
  int rank = lead;
  for (int k = 0; k < lead; k++) dims[k] = first[k];
  switch (lbmc_metric_get(i)->shape) {
  case LBMC_SHAPE_QUANTILE: dims[rank++] = LBMC_QUANTILES; break;
  case LBMC_SHAPE_POOL: dims[rank++] = (hsize_t)res->J; break;
  case LBMC_SHAPE_POOL_K:
    dims[rank++] = (hsize_t)res->J;
    dims[rank++] = (hsize_t)res->K;
    break;
  default: break;
  }
  return rank;
}

/* Copy metric i of every row (stride total) into out. */
static void lbmc_metric_slice(const lbmc_results *res, const double *src, size_t rows, int i,
                              double *out)
{
  size_t off = lbmc_metric_offset(i, res->J, res->K), len = lbmc_metric_size(i, res->J, res->K);
  for (size_t r = 0; r < rows; r++)
    memcpy(out + r * len, src + r * res->total + off, sizeof *out * len);
}

/* Attribute `levels` (the quantile levels) on a group or dataset. */
static int lbmc_write_levels(hid_t loc)
{
  double levels[LBMC_QUANTILES];
  hsize_t q = LBMC_QUANTILES;
  hid_t space = H5Screate_simple(1, &q, NULL), a;
  int rc = -1;
  for (int i = 0; i < LBMC_QUANTILES; i++) levels[i] = lbmc_quantile_level(i);
  a = H5Acreate2(loc, "levels", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) {
    rc = H5Awrite(a, H5T_NATIVE_DOUBLE, levels) < 0 ? -1 : 0;
    H5Aclose(a);
  }
  H5Sclose(space);
  return rc;
}

/* The parts of /estimates/M: name, what, and where they are (P x total doubles). */
static int lbmc_write_estimate_parts(hid_t m, const lbmc_results *res, int i, int rank,
                                     const hsize_t *dims, double *scratch)
{
  const lbmc_metric_info *info = lbmc_metric_get(i);
  const struct {
    const char *name, *what;
    const double *data;
  } parts[] = {
      {"mean",
       "the estimate, pooled over the replicas (a ratio of sums; quantiles of the pooled "
       "histogram)",
       res->est.estimate},
      {"half_width", "max(mean - lower, upper - mean): the interval read symmetrically",
       res->est.half_width},
      {"std_err", "standard error of the estimate", res->est.std_err},
      {"lower", "lower end of the two-sided interval at level `confidence` (root attribute)",
       res->est.lower},
      {"upper", "upper end of the two-sided interval at level `confidence`", res->est.upper},
      {"upper_bound",
       "one-sided upper bound at level `confidence` where the event was never observed "
       "(flag none_observed; the estimate is 0), NaN elsewhere",
       res->est.upper_bound},
  };
  int rc = 0;
  char desc[512];
  for (size_t k = 0; !rc && k < sizeof parts / sizeof *parts; k++) {
    lbmc_metric_slice(res, parts[k].data, (size_t)res->P, i, scratch);
    snprintf(desc, sizeof desc, "%s: %s (NaN where it does not exist; see flags)", info->name,
             parts[k].what);
    rc = lbmc_h5_write_f64(m, parts[k].name, rank, dims, scratch, info->units, desc);
  }
  return rc;
}

/* /estimates/M/flags: the interval flags as int64 bits, their names and meanings as
 * attributes (bit b = names[b]). */
static int lbmc_write_flags(hid_t m, const lbmc_results *res, int i, int rank, const hsize_t *dims,
                            void *scratch)
{
  const size_t off = lbmc_metric_offset(i, res->J, res->K),
               len = lbmc_metric_size(i, res->J, res->K);
  const char *names[32], *meanings[32];
  int64_t *F = scratch;
  int nf = lbmc_interval_flags(), rc;
  hid_t d;
  for (long p = 0; p < res->P; p++)
    for (size_t e = 0; e < len; e++)
      F[(size_t)p * len + e] = res->est.flags[(size_t)p * res->total + off + e];
  rc = lbmc_h5_write_i64(m, "flags", rank, dims, F, "1",
                         "bits saying when the interval does not exist or is special: bit b "
                         "means names[b] (attributes names and meanings)");
  for (int b = 0; b < nf && b < 32; b++)
    names[b] = lbmc_interval_flag_name(b), meanings[b] = lbmc_interval_flag_meaning(b);
  if (rc || (d = H5Dopen2(m, "flags", H5P_DEFAULT)) < 0) return -1;
  rc = lbmc_h5_attr_strs(d, "names", nf, names) || lbmc_h5_attr_strs(d, "meanings", nf, meanings);
  H5Dclose(d);
  return rc;
}

static const char *lbmc_metric_name(int i) { return lbmc_metric_get(i)->name; }

static const char *lbmc_metric_shape(int i)
{
  static const char *const shapes[] = {"scalar", "pool", "pool_k", "quantile"};
  return shapes[lbmc_metric_get(i)->shape];
}

static int lbmc_write_estimates(hid_t file, const lbmc_results *res, double *scratch)
{
  hid_t g = lbmc_h5_group(file, "estimates");
  hsize_t P = (hsize_t)res->P, dims[4];
  /* the metric table, for readers: the metrics in order (those the run recorded), their
   * shapes, the flags' names */
  const int nm = lbmc_metric_count(res->pairs);
  int rc = g < 0 || lbmc_attr_names(g, "metrics", nm, lbmc_metric_name) ||
           lbmc_attr_names(g, "shapes", nm, lbmc_metric_shape) ||
           lbmc_attr_names(g, "flag_names", lbmc_interval_flags(), lbmc_interval_flag_name);
  for (int i = 0; !rc && i < nm; i++) {
    const lbmc_metric_info *info = lbmc_metric_get(i);
    hid_t m = lbmc_h5_group(g, info->name);
    int rank = lbmc_metric_dims(res, i, 1, &P, dims);
    rc = m < 0 || lbmc_h5_attr_str(m, "units", info->units) ||
         lbmc_h5_attr_str(m, "description", info->description);
    if (!rc && info->shape == LBMC_SHAPE_QUANTILE) rc = lbmc_write_levels(m);
    if (!rc) rc = lbmc_write_estimate_parts(m, res, i, rank, dims, scratch);
    if (!rc) rc = lbmc_write_flags(m, res, i, rank, dims, scratch);
    if (m >= 0) H5Gclose(m);
  }
  if (!rc) {
    int64_t *I = (int64_t *)scratch;
    for (long i = 0; i < res->P; i++) I[i] = res->pt[i].v.replicas;
    rc = lbmc_h5_write_i64(
        g, "replicas", 1, &P, I, "1",
        "replicas behind each estimate (one replica: the interval comes from its batch means)");
  }
  if (g >= 0) H5Gclose(g);
  return rc;
}

/* Replicas a block of a /replicas dataset holds at most (the writer's work space: a row
 * and an entry of a metric per replica, whatever the number of replicas). */
#define LBMC_WRITE_ROWS 4096

/* The writer's work space for /replicas: rows of LBMC_WRITE_ROWS replicas, and their
 * entries of one dataset. */
typedef struct {
  unsigned char *rows, *out;
} lbmc_replica_work;

/* A /replicas dataset of rank dims (P x R x the shape of one replica's entries) from
 * entries off .. off + len - 1 (elem bytes each, from the start of each replica's row) of
 * every point's replicas 0 .. R - 1 (missing beyond the point's: NaN, -1), written in
 * blocks of whole points or, past LBMC_WRITE_ROWS replicas, of part of one point.
 * 0, or -1. */
static int lbmc_write_replica_entries(hid_t g, const char *name, hid_t type, hid_t memtype,
                                      int rank, const hsize_t *dims, const lbmc_results *res,
                                      long R, size_t off, size_t len, size_t elem,
                                      lbmc_replica_work *w, const char *units, const char *desc)
{
  const size_t row = lbmc_replica_row_bytes(res);
  const long per = R <= LBMC_WRITE_ROWS ? LBMC_WRITE_ROWS / R : 1; /* points a block */
  const long nr = R < LBMC_WRITE_ROWS ? R : LBMC_WRITE_ROWS;       /* replicas a block */
  hid_t d = lbmc_h5_begin_dataset(g, name, type, rank, dims);
  int rc = d < 0 ? -1 : 0;
  for (long p0 = 0; !rc && p0 < res->P; p0 += per)
    for (long r0 = 0; !rc && r0 < R; r0 += nr) {
      const long np = res->P - p0 < per ? res->P - p0 : per, n = R - r0 < nr ? R - r0 : nr;
      hsize_t start[4] = {(hsize_t)p0, (hsize_t)r0, 0, 0}, count[4];
      for (int k = 0; k < rank; k++)
        count[k] = k == 0 ? (hsize_t)np : k == 1 ? (hsize_t)n : dims[k];
      for (long p = 0; !rc && p < np; p++) {
        rc = lbmc_results_replica_rows(res, p0 + p, r0, n, w->rows) ? -1 : 0;
        for (long r = 0; !rc && r < n; r++)
          memcpy(w->out + ((size_t)p * (size_t)n + (size_t)r) * len * elem,
                 w->rows + (size_t)r * row + off, len * elem);
      }
      if (!rc) rc = lbmc_h5_write_block(d, memtype, rank, start, count, w->out);
    }
  return lbmc_h5_end_dataset(d, rc, units, desc);
}

/* The most entries of one metric (the /replicas datasets' work space per replica). */
static size_t lbmc_metric_size_max(const lbmc_results *res)
{
  size_t most = 1;
  for (int i = 0; i < lbmc_metric_count(res->pairs); i++) {
    const size_t len = lbmc_metric_size(i, res->J, res->K);
    most = len > most ? len : most;
  }
  return most;
}

/* /replicas/M (and M_weight for the metrics that are ratios of sums). */
static int lbmc_write_replica_metric(hid_t g, const lbmc_results *res, int i, long R,
                                     lbmc_replica_work *w)
{
  const lbmc_metric_info *info = lbmc_metric_get(i);
  const size_t off = lbmc_metric_offset(i, res->J, res->K) * sizeof(double),
               len = lbmc_metric_size(i, res->J, res->K);
  hsize_t PR[2] = {(hsize_t)res->P, (hsize_t)R}, dims[4];
  int rank = lbmc_metric_dims(res, i, 2, PR, dims), rc;
  char desc[512], name[96];
  snprintf(desc, sizeof desc,
           "per-replica values (NaN where a point has fewer replicas, or where the replica had "
           "no observations%s) of: %s",
           i >= LBMC_M_PAIRS_FIRST ? "; NaN for every replica: a pair statistic needs several "
                                     "independent units"
                                   : "",
           info->description);
  rc = lbmc_write_replica_entries(g, info->name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, rank, dims, res,
                                  R, lbmc_replica_column_offset(res, 0) + off, len, sizeof(double),
                                  w, info->units, desc);
  if (!rc && info->shape == LBMC_SHAPE_QUANTILE) {
    hid_t d = H5Dopen2(g, info->name, H5P_DEFAULT);
    rc = d < 0 || lbmc_write_levels(d);
    if (d >= 0) H5Dclose(d);
  }
  if (rc || info->shape == LBMC_SHAPE_QUANTILE || i >= LBMC_M_PAIRS_FIRST) return rc;
  snprintf(name, sizeof name, "%s_weight", info->name);
  snprintf(desc, sizeof desc,
           "the denominator of each replica's %s (arrivals, departures, time x servers, ...): its "
           "value x weight is its numerator, and the point's estimate is sum(value x weight) / "
           "sum(weight) over its replicas",
           info->name);
  return lbmc_write_replica_entries(g, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, rank, dims, res, R,
                                    lbmc_replica_column_offset(res, 1) + off, len, sizeof(double),
                                    w, "1", desc);
}

/* /replicas/<name> of per-replica column k (not a metric): replicas 0 .. R - 1. */
static int lbmc_write_replica_column(hid_t g, const lbmc_results *res, int k, long R,
                                     lbmc_replica_work *w)
{
  const lbmc_replica_column *c = lbmc_replica_column_get(k);
  hsize_t PR[2] = {(hsize_t)res->P, (hsize_t)R};
  const hid_t type = c->type == LBMC_COL_I64  ? H5T_STD_I64LE
                     : c->type == LBMC_COL_I8 ? H5T_STD_I8LE
                                              : H5T_IEEE_F64LE;
  const hid_t memtype = c->type == LBMC_COL_I64  ? H5T_NATIVE_INT64
                        : c->type == LBMC_COL_I8 ? H5T_NATIVE_INT8
                                                 : H5T_NATIVE_DOUBLE;
  return lbmc_write_replica_entries(g, c->name, type, memtype, 2, PR, res, R,
                                    lbmc_replica_column_offset(res, k), 1, lbmc_col_bytes(c->type),
                                    w, c->units, c->description);
}

/* The names of the /replicas datasets that are not metrics, in the table's order. */
static int lbmc_replica_extras(const char **names)
{
  int n = 0;
  for (int k = 0; k < lbmc_replica_columns(); k++)
    if (lbmc_replica_column_get(k)->name) names[n++] = lbmc_replica_column_get(k)->name;
  return n;
}

static int lbmc_write_replicas(hid_t file, const lbmc_results *res)
{
  hid_t g = lbmc_h5_group(file, "replicas");
  const long R = lbmc_results_replicas(res);
  const char *extras[16];
  lbmc_replica_work w = {malloc(lbmc_replica_row_bytes(res) * LBMC_WRITE_ROWS),
                         malloc(sizeof(double) * lbmc_metric_size_max(res) * LBMC_WRITE_ROWS)};
  int rc = g < 0 || !w.rows || !w.out ||
           lbmc_h5_attr_strs(g, "extras", lbmc_replica_extras(extras), extras);
  for (int i = 0; !rc && i < lbmc_metric_count(res->pairs); i++)
    rc = lbmc_write_replica_metric(g, res, i, R, &w);
  for (int k = 0; !rc && k < lbmc_replica_columns(); k++)
    if (lbmc_replica_column_get(k)->name) rc = lbmc_write_replica_column(g, res, k, R, &w);
  free(w.rows);
  free(w.out);
  if (g >= 0) H5Gclose(g);
  return rc;
}

/* /pairs (runs with run.pairs): a group per table of the pair statistics (lbmc/point.h),
 * each with mean, lower, upper and std_err of shape P x J x C x C (within a pool) or
 * P x J x J x C x C (across pools), C = K + 1 levels (attribute levels). */
static int lbmc_write_pairs(hid_t file, const lbmc_results *res)
{
  static const char *const what[LBMC_PAIR_PARTS] = {
      "the estimate, pooled over the replicas (or the batches of one replica)",
      "lower end of the two-sided interval at level `confidence` (root attribute)",
      "upper end of the two-sided interval at level `confidence`",
      "standard error of the estimate"};
  const hsize_t C = (hsize_t)res->K + 1, J = (hsize_t)res->J;
  char desc[768], levels[64];
  hid_t g;
  int rc;
  if (!res->pairs) return 0;
  g = lbmc_h5_group(file, "pairs");
  snprintf(levels, sizeof levels, "0 .. %d customers, then at least %d", res->K - 1, res->K);
  rc = g < 0 || lbmc_h5_attr_str(g, "levels", levels);
  for (int t = 0; !rc && t < LBMC_PAIR_TABLES; t++) {
    const int across = lbmc_pair_table_across(t);
    hsize_t dims[5] = {(hsize_t)res->P, J, across ? J : C, C, C};
    hid_t m = lbmc_h5_group(g, lbmc_pair_table_name(t));
    rc = m < 0 || lbmc_h5_attr_str(m, "units", "1") ||
         lbmc_h5_attr_str(m, "description", lbmc_pair_table_description(t));
    for (int k = 0; !rc && k < LBMC_PAIR_PARTS; k++) {
      snprintf(desc, sizeof desc, "%s: %s (NaN where it does not exist)", what[k],
               lbmc_pair_table_description(t));
      rc = lbmc_h5_write_f64(m, lbmc_pair_part_name(k), across ? 5 : 4, dims, res->pair[t][k], "1",
                             desc);
    }
    if (m >= 0) H5Gclose(m);
  }
  if (g >= 0) H5Gclose(g);
  return rc;
}

static int lbmc_write_root(hid_t file, const lbmc_results *res)
{
  return lbmc_h5_attr_str(file, "lbmc_version", res->lbmc_version) ||
         lbmc_h5_attr_str(file, "source_revision", res->revision) ||
         lbmc_h5_attr_str(file, "build_type", res->build_type) ||
         lbmc_h5_attr_i64(file, "layout_version", LBMC_LAYOUT_VERSION) ||
         lbmc_h5_attr_str(file, "created", res->created) ||
         lbmc_h5_attr_str(file, "job", res->job_text ? res->job_text : "") ||
         lbmc_h5_attr_i64(file, "seed", res->seed) ||
         lbmc_h5_attr_i64(file, "mpi_ranks", res->mpi_ranks) ||
         lbmc_h5_attr_f64(file, "wall_seconds", res->wall_seconds) ||
         lbmc_h5_attr_f64(file, "confidence", res->confidence) ||
         lbmc_h5_attr_i64(file, "tail_k", res->K) || lbmc_h5_attr_str(file, "shard", res->shard) ||
         lbmc_h5_attr_i64(file, "complete", res->complete) ||
         lbmc_h5_attr_i64(file, "common_random_numbers", 1);
}

lbmc_err lbmc_results_write(const lbmc_results *res, const char *path)
{
  /* scratch: the /estimates (P x total) and /points columns; /replicas is written in
   * blocks from the replica store (lbmc_write_replicas) */
  const size_t need = (size_t)res->P * res->total + (size_t)res->P * 3 + 64;
  size_t need_mu_k = (size_t)res->P * (size_t)res->J * LBMC_MAX_RATES + 64; /* /points/mu_k */
  void *scratch = malloc(sizeof(double) * (need > need_mu_k ? need : need_mu_k));
  lbmc_h5_out out;
  lbmc_err err;
  int rc;
  if (!scratch) return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory writing %s", path);
  if ((err = lbmc_h5_out_create(&out, path)) != LBMC_SUCCESS) {
    free(scratch);
    return err;
  }
  lbmc_error_clear();
  rc = lbmc_write_root(out.file, res) || lbmc_write_points(out.file, res, scratch) ||
       lbmc_write_estimates(out.file, res, scratch) || lbmc_write_replicas(out.file, res) ||
       lbmc_grid_write(out.file, res->grid) || lbmc_write_pairs(out.file, res) ||
       lbmc_results_transient_write(out.file, res);
  free(scratch);
  if (rc && (err = lbmc_error_last()) != LBMC_SUCCESS) {
    /* one of ours on the way (a failed read of the replica store, memory) said why: the
     * temporary goes without a second, vaguer message about HDF5 */
    const lbmc_error_mode was = lbmc_error_set_mode(LBMC_ERRORS_STORE);
    (void)lbmc_h5_out_commit(&out, rc, "the results");
    lbmc_error_set_mode(was);
    return err;
  }
  LBMC_CALL(lbmc_h5_out_commit(&out, rc, "the results"));
  lbmc_results_remove_stale(path);
  return LBMC_SUCCESS;
}

double lbmc_results_bytes(long P, long R, int J, int K)
{
  /* per replica slot: values and weights of every metric entry, five per-replica
   * numbers; per point: six estimate parts and the flags, the /points row (short texts);
   * HDF5's metadata (about a kilobyte for each of some hundred datasets) */
  const double total = (double)lbmc_metric_total(J, K);
  return (double)P * ((double)R * (16 * total + 33) + 56 * total + 512 + 200.0 * J) + 65536;
}

lbmc_err lbmc_results_probe(const char *path, double bytes) { return lbmc_h5_probe(path, bytes); }

/* The process number of a temporary file of `base` ("OUT.h5.tmp.PID",
 * "OUT.h5.probe.PID"), or 0 if name is not one. */
static long lbmc_temporary_pid(const char *name, const char *base)
{
  static const char *const kinds[] = {".tmp.", ".probe."};
  const size_t len = strlen(base);
  if (strncmp(name, base, len) != 0) return 0;
  for (int k = 0; k < 2; k++) {
    const char *digits = name + len + strlen(kinds[k]);
    char *end;
    long pid;
    if (strncmp(name + len, kinds[k], strlen(kinds[k])) != 0 || !isdigit((unsigned char)*digits))
      continue;
    pid = strtol(digits, &end, 10);
    return *end ? 0 : pid;
  }
  return 0;
}

void lbmc_results_remove_stale(const char *path)
{
  char copy[4096], dir[4096], base[4096], file[8192];
  struct dirent *e;
  DIR *d;
  snprintf(copy, sizeof copy, "%s", path);
  snprintf(dir, sizeof dir, "%s", dirname(copy));
  snprintf(copy, sizeof copy, "%s", path);
  snprintf(base, sizeof base, "%s", basename(copy));
  if (!(d = opendir(dir))) return;
  while ((e = readdir(d))) {
    long pid = lbmc_temporary_pid(e->d_name, base);
    /* kill(pid, 0): ESRCH = no such process here; EPERM = alive, someone else's */
    if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
    if (unlink(file) == 0)
      fprintf(stderr,
              "lbmc: removed %s, a temporary file of %s left by process %ld, which is not "
              "running on this host\n",
              file, path, pid);
  }
  closedir(d);
}
