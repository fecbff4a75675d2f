/* The estimates of a transient run in the results (results.h, lbmc_results_transient) and
 * their HDF5 group /transient (docs/results-format.md): the observation times, and for
 * every transient metric (lbmc_transient_metric_names) a group with the datasets mean,
 * lower, upper, band_lower and band_upper of shape P x T, then the metric's pools and
 * levels. Written and read with the helpers of every other dataset (h5util.h: chunks,
 * Fletcher32; the seal covers them like the rest). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../observers/observers.h"
#include "h5util.h"
#include "results.h"

/* The transient metrics as the file describes them, in the order of
 * lbmc_transient_metric_names (checked where used: lbmc_trans_metric). */
static const struct {
  const char *name, *shape, *units, *description;
} lbmc_trans_metrics[] = {
    {"mean_queue", "pool", "1",
     "customers at a server of pool j at the time (the pool's customers / its servers)"},
    {"tail", "pool_k", "1",
     "fraction of pool j's servers holding at least k customers at the time, k = 1..K"},
    {"customers", "scalar", "1", "customers in the system at the time"},
    {"p_wait", "scalar", "1",
     "admitted arrivals that found their server busy / arrivals, over the interval ending at "
     "the time (a ratio of sums over the replicas; NaN at the first time)"},
    {"p_block", "scalar", "1",
     "blocked arrivals / arrivals over the interval ending at the time (a ratio of sums over "
     "the replicas; NaN at the first time)"},
    {"throughput", "scalar", "1/time",
     "departures in the interval ending at the time / its length (NaN at the first time)"},
    {"messages_per_arrival", "scalar", "1",
     "router-server messages / arrivals over the interval ending at the time (a ratio of sums "
     "over the replicas; NaN at the first time)"}};
#define LBMC_TRANS_METRICS ((int)(sizeof lbmc_trans_metrics / sizeof *lbmc_trans_metrics))

static const char *const lbmc_trans_part_names[LBMC_TRANS_PARTS] = {"mean", "lower", "upper",
                                                                    "band_lower", "band_upper"};
static const char *const lbmc_trans_part_what[LBMC_TRANS_PARTS] = {
    "the mean over the replicas that stayed below the runaway cap (/transient/replicas)",
    "lower end of the pointwise interval at level `confidence` (root attribute; Student t, "
    "replicas - 1 degrees of freedom)",
    "upper end of the pointwise interval at level `confidence`",
    "lower end of the band simultaneous over the T times (Bonferroni: each time's interval at "
    "level 1 - (1 - confidence) / T)",
    "upper end of the band simultaneous over the T times"};

/* Values per time of J pools and K levels: the state, then the interval metrics. */
static size_t lbmc_trans_width(int J, int K)
{
  return lbmc_transient_values(J, K) + LBMC_TRANSIENT_INTERVAL_METRICS;
}

/* Metric m's first value in a time's row and its count (1, J or J x K); -1 if the table
 * above and lbmc_transient_metric_names disagree. */
static long lbmc_trans_metric(const lbmc_results *res, int m, size_t *count)
{
  const char *shape = lbmc_trans_metrics[m].shape;
  if (!lbmc_transient_metric_names[m] ||
      strcmp(lbmc_transient_metric_names[m], lbmc_trans_metrics[m].name) != 0)
    return -1;
  *count = strcmp(shape, "pool") == 0     ? (size_t)res->J
           : strcmp(shape, "pool_k") == 0 ? (size_t)res->J * (size_t)res->K
                                          : 1;
  return lbmc_transient_index(res->J, res->K, lbmc_trans_metrics[m].name, 0, 1);
}

/* The dimensions of metric m's datasets: P x T, then J, then K; returns the rank. */
static int lbmc_trans_dims(const lbmc_results *res, int m, hsize_t *dims)
{
  const char *shape = lbmc_trans_metrics[m].shape;
  int rank = 2;
  dims[0] = (hsize_t)res->P;
  dims[1] = (hsize_t)res->trans->T;
  if (strcmp(shape, "scalar") != 0) dims[rank++] = (hsize_t)res->J;
  if (strcmp(shape, "pool_k") == 0) dims[rank++] = (hsize_t)res->K;
  return rank;
}

void lbmc_results_transient_free(lbmc_results *res)
{
  if (!res->trans) return;
  free(res->trans->time);
  free(res->trans->part[0]); /* the one block */
  free(res->trans->replicas);
  free(res->trans);
  res->trans = NULL;
}

lbmc_err lbmc_results_transient_create(lbmc_results *res, long T, const double *time)
{
  lbmc_results_transient *t;
  size_t n;
  lbmc_results_transient_free(res);
  if (T < 1) return LBMC_ERROR(LBMC_ERR_ARG, "results: a transient run of %ld times", T);
  t = res->trans = calloc(1, sizeof *t);
  if (!t) return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory for /transient");
  t->T = T;
  t->V = lbmc_trans_width(res->J, res->K);
  n = (size_t)res->P * (size_t)T * t->V;
  t->time = malloc(sizeof *t->time * (size_t)T);
  t->part[0] = malloc(sizeof *t->part[0] * (LBMC_TRANS_PARTS * n + 1));
  t->replicas = malloc(sizeof *t->replicas * (2 * (size_t)res->P + 1));
  if (!t->time || !t->part[0] || !t->replicas) {
    lbmc_results_transient_free(res);
    return LBMC_ERROR(LBMC_ERR_MEMORY,
                      "results: out of memory for /transient (%ld points x %ld "
                      "times)",
                      res->P, T);
  }
  memcpy(t->time, time, sizeof *t->time * (size_t)T);
  for (int k = 1; k < LBMC_TRANS_PARTS; k++) t->part[k] = t->part[k - 1] + n;
  for (size_t i = 0; i < LBMC_TRANS_PARTS * n; i++) t->part[0][i] = NAN;
  t->unstable = t->replicas + res->P;
  for (long i = 0; i < 2 * res->P; i++) t->replicas[i] = -1;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_results_transient_of(lbmc_results *res, const lbmc_run_options *o)
{
  const long T = lbmc_transient_times(o);
  double *time = malloc(sizeof *time * (size_t)(T > 0 ? T : 1));
  lbmc_err err;
  if (!time) return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory for /transient");
  for (long i = 0; i < T; i++) time[i] = lbmc_transient_time(o, i);
  err = lbmc_results_transient_create(res, T, time);
  free(time);
  return err;
}

/* Point p's block of part k. */
static double *lbmc_trans_at(const lbmc_results_transient *t, int k, long p)
{
  return t->part[k] + (size_t)p * (size_t)t->T * t->V;
}

lbmc_err lbmc_results_transient_store(lbmc_results *res, long p, const lbmc_transient *e)
{
  lbmc_results_transient *t = res->trans;
  const double *from[LBMC_TRANS_PARTS] = {e->mean, e->lower, e->upper, e->band_lower,
                                          e->band_upper};
  if (!t || e->times != t->T || e->values != t->V || e->J != res->J || e->K != res->K ||
      memcmp(e->time, t->time, sizeof *t->time * (size_t)t->T) != 0)
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "results: point %ld's transient estimates (%ld times) do not fit the run's "
                      "time axis (%ld times)",
                      p, e->times, t ? t->T : 0);
  for (int k = 0; k < LBMC_TRANS_PARTS; k++)
    memcpy(lbmc_trans_at(t, k, p), from[k], sizeof(double) * (size_t)t->T * t->V);
  t->replicas[p] = e->replicas;
  t->unstable[p] = e->unstable;
  return LBMC_SUCCESS;
}

void lbmc_results_transient_view(const lbmc_results *res, long p, lbmc_transient *e)
{
  const lbmc_results_transient *t = res->trans;
  memset(e, 0, sizeof *e);
  e->times = t->T;
  e->values = t->V;
  e->J = res->J;
  e->K = res->K;
  e->replicas = t->replicas[p] < 0 ? 0 : (long)t->replicas[p];
  e->unstable = t->unstable[p] < 0 ? 0 : (long)t->unstable[p];
  e->time = t->time;
  e->mean = lbmc_trans_at(t, 0, p);
  e->lower = lbmc_trans_at(t, 1, p);
  e->upper = lbmc_trans_at(t, 2, p);
  e->band_lower = lbmc_trans_at(t, 3, p);
  e->band_upper = lbmc_trans_at(t, 4, p);
}

lbmc_err lbmc_results_transient_copy(lbmc_results *dst, long to, const lbmc_results *src, long from)
{
  lbmc_transient e;
  if (!dst->trans && !src->trans) return LBMC_SUCCESS;
  if (!src->trans)
    return LBMC_ERROR(LBMC_ERR_MISMATCH,
                      "results: a steady-state point among the points of a transient run");
  if (!dst->trans) LBMC_CALL(lbmc_results_transient_create(dst, src->trans->T, src->trans->time));
  lbmc_results_transient_view(src, from, &e);
  LBMC_CALL(lbmc_results_transient_store(dst, to, &e));
  dst->trans->replicas[to] = src->trans->replicas[from];
  dst->trans->unstable[to] = src->trans->unstable[from];
  return LBMC_SUCCESS;
}

static const char *lbmc_trans_name(int m) { return lbmc_trans_metrics[m].name; }
static const char *lbmc_trans_shape(int m) { return lbmc_trans_metrics[m].shape; }

/* The 1-D attribute `name` of n strings from f(0 .. n - 1). */
static int lbmc_trans_attr_names(hid_t g, const char *name, int n, const char *(*f)(int))
{
  const char *v[16];
  for (int i = 0; i < n; i++) v[i] = f(i);
  return lbmc_h5_attr_strs(g, name, n, v);
}

/* Gather metric m (values off .. off + count - 1 of each row) of part k into buf. */
static void lbmc_trans_gather(const lbmc_results *res, int k, long off, size_t count, double *buf)
{
  const lbmc_results_transient *t = res->trans;
  const size_t rows = (size_t)res->P * (size_t)t->T;
  for (size_t r = 0; r < rows; r++)
    memcpy(buf + r * count, t->part[k] + r * t->V + (size_t)off, sizeof *buf * count);
}

/* One metric's group /transient/M with its five parts. */
static int lbmc_trans_write_metric(hid_t g, const lbmc_results *res, int m, double *buf)
{
  hsize_t dims[4];
  size_t count;
  const long off = lbmc_trans_metric(res, m, &count);
  const int rank = lbmc_trans_dims(res, m, dims);
  hid_t mg = off < 0 ? -1 : lbmc_h5_group(g, lbmc_trans_metrics[m].name);
  char desc[768];
  int rc = mg < 0 || lbmc_h5_attr_str(mg, "units", lbmc_trans_metrics[m].units) ||
           lbmc_h5_attr_str(mg, "description", lbmc_trans_metrics[m].description);
  for (int k = 0; !rc && k < LBMC_TRANS_PARTS; k++) {
    snprintf(desc, sizeof desc, "%s, of: %s (NaN where there is none)", lbmc_trans_part_what[k],
             lbmc_trans_metrics[m].description);
    lbmc_trans_gather(res, k, off, count, buf);
    rc = lbmc_h5_write_f64(mg, lbmc_trans_part_names[k], rank, dims, buf,
                           lbmc_trans_metrics[m].units, desc);
  }
  if (mg >= 0) H5Gclose(mg);
  return rc;
}

int lbmc_results_transient_write(hid_t file, const lbmc_results *res)
{
  const lbmc_results_transient *t = res->trans;
  hsize_t T, P = (hsize_t)res->P;
  double *buf;
  hid_t g;
  int rc;
  if (!t) return 0;
  T = (hsize_t)t->T;
  buf = malloc(sizeof *buf * ((size_t)res->P * (size_t)t->T * t->V + 1));
  g = buf ? lbmc_h5_group(file, "transient") : -1;
  rc = g < 0 || lbmc_h5_attr_str(g, "band", "bonferroni") ||
       lbmc_h5_attr_str(g, "description",
                        "a transient run (run.transient): replicas from the run.init start "
                        "observed at the times of /transient/time, pooled per time") ||
       lbmc_trans_attr_names(g, "metrics", LBMC_TRANS_METRICS, lbmc_trans_name) ||
       lbmc_trans_attr_names(g, "shapes", LBMC_TRANS_METRICS, lbmc_trans_shape) ||
       lbmc_h5_write_f64(g, "time", 1, &T, t->time, "time",
                         "the observation times T0, T0 + DT, ..., T1 (run.transient T0:T1:DT): "
                         "the second axis of every dataset of the group");
  rc = rc || lbmc_h5_write_i64(g, "replicas", 1, &P, t->replicas, "1",
                               "replicas pooled at each point (those that stayed below the "
                               "runaway cap); -1: not run");
  rc = rc || lbmc_h5_write_i64(g, "unstable_replicas", 1, &P, t->unstable, "1",
                               "replicas left out because they hit the runaway cap; -1: not run");
  for (int m = 0; !rc && m < LBMC_TRANS_METRICS; m++) rc = lbmc_trans_write_metric(g, res, m, buf);
  if (g >= 0) H5Gclose(g);
  free(buf);
  return rc || !buf ? -1 : 0;
}

/* Metric m's group of the file into res->trans (its dimensions checked). */
static int lbmc_trans_read_metric(hid_t g, lbmc_results *res, int m, double *buf)
{
  lbmc_results_transient *t = res->trans;
  hsize_t want[4], dims[4];
  size_t count;
  const long off = lbmc_trans_metric(res, m, &count);
  const int rank = lbmc_trans_dims(res, m, want);
  const size_t rows = (size_t)res->P * (size_t)t->T;
  char name[128];
  for (int k = 0; k < LBMC_TRANS_PARTS; k++) {
    snprintf(name, sizeof name, "%s/%s", lbmc_trans_metrics[m].name, lbmc_trans_part_names[k]);
    if (off < 0 || lbmc_h5_dims(g, name, dims) != rank ||
        memcmp(dims, want, sizeof *dims * (size_t)rank) != 0 ||
        lbmc_h5_read(g, name, H5T_NATIVE_DOUBLE, buf))
      return -1;
    for (size_t r = 0; r < rows; r++)
      memcpy(t->part[k] + r * t->V + (size_t)off, buf + r * count, sizeof *buf * count);
  }
  return 0;
}

int lbmc_results_transient_read(hid_t file, lbmc_results *res)
{
  hsize_t dims[4];
  double *time = NULL, *buf = NULL;
  hid_t g;
  int rc;
  if (!lbmc_h5_exists(file, "transient")) return 0;
  if ((g = H5Gopen2(file, "transient", H5P_DEFAULT)) < 0) return -1;
  rc = lbmc_h5_dims(g, "time", dims) != 1 || dims[0] < 1 ||
       !(time = malloc(sizeof *time * (size_t)dims[0])) ||
       lbmc_h5_read(g, "time", H5T_NATIVE_DOUBLE, time) ||
       lbmc_results_transient_create(res, (long)dims[0], time) != LBMC_SUCCESS;
  if (!rc) buf = malloc(sizeof *buf * ((size_t)res->P * (size_t)dims[0] * res->trans->V + 1));
  rc = rc || !buf || lbmc_h5_dims(g, "replicas", dims) != 1 || dims[0] != (hsize_t)res->P ||
       lbmc_h5_read(g, "replicas", H5T_NATIVE_INT64, res->trans->replicas) ||
       lbmc_h5_dims(g, "unstable_replicas", dims) != 1 || dims[0] != (hsize_t)res->P ||
       lbmc_h5_read(g, "unstable_replicas", H5T_NATIVE_INT64, res->trans->unstable);
  for (int m = 0; !rc && m < LBMC_TRANS_METRICS; m++) rc = lbmc_trans_read_metric(g, res, m, buf);
  H5Gclose(g);
  free(time);
  free(buf);
  return rc ? -1 : 0;
}
