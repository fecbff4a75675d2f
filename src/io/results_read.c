/* Reading a results file back (lbmc info, lbmc merge, tests). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5util.h"
#include "lbmc/metrics.h"
#include "results.h"

static lbmc_err lbmc_read_fail(const char *path, const char *what)
{
  return LBMC_ERROR(LBMC_ERR_ARG, "%s: not a readable lbmc results file: %s", path, what);
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
  return rc;
}

static int lbmc_read_points(hid_t f, lbmc_results *res)
{
  long P = res->P;
  int J = res->J;
  int64_t *I = malloc(sizeof *I * (size_t)(P * J + 1));
  double *F = malloc(sizeof *F * (size_t)(P * J + 1));
  char *S = malloc((size_t)P * 256 + 1);
  int rc = !I || !F || !S;
#define LBMC_RI(name, field)                                                                       \
  if (!rc && !(rc = lbmc_h5_read(f, "points/" name, H5T_NATIVE_INT64, I)))                         \
    for (long i = 0; i < P; i++) res->pt[i].field = I[i];
#define LBMC_RF(name, field)                                                                       \
  if (!rc && !(rc = lbmc_h5_read(f, "points/" name, H5T_NATIVE_DOUBLE, F)))                        \
    for (long i = 0; i < P; i++) res->pt[i].field = F[i];
#define LBMC_RS(name, field)                                                                       \
  if (!rc && !(rc = lbmc_h5_read_str(f, "points/" name, (hsize_t)P, S, 256)))                      \
    for (long i = 0; i < P; i++)                                                                   \
      snprintf(res->pt[i].field, sizeof res->pt[i].field, "%s", S + i * 256);
#define LBMC_RPF(name, field)                                                                      \
  if (!rc && !(rc = lbmc_h5_read(f, "points/" name, H5T_NATIVE_DOUBLE, F)))                        \
    for (long i = 0; i < P; i++)                                                                   \
      for (int j = 0; j < J; j++) res->pt[i].field[j] = F[i * J + j];
#define LBMC_RPI(name, field)                                                                      \
  if (!rc && !(rc = lbmc_h5_read(f, "points/" name, H5T_NATIVE_INT64, I)))                         \
    for (long i = 0; i < P; i++)                                                                   \
      for (int j = 0; j < J; j++) res->pt[i].field[j] = I[i * J + j];
  LBMC_RI("index", index);
  LBMC_RI("n", n);
  LBMC_RF("lambda", lambda);
  LBMC_RF("rho", rho);
  LBMC_RS("policy", policy);
  LBMC_RS("policy_name", policy_name);
  LBMC_RI("d", d);
  LBMC_RS("sampling", sampling);
  LBMC_RI("routers", routers);
  LBMC_RS("stale", stale);
  LBMC_RPF("beta", beta);
  LBMC_RPF("mu", mu);
  LBMC_RPI("buffer", buffer);
  LBMC_RPI("pool_servers", pool_servers);
  LBMC_RF("time", time);
  LBMC_RF("warmup", warmup);
  LBMC_RI("batches", batches);
  LBMC_RI("replicas", replicas);
  LBMC_RS("reason", reason);
  if (!rc && !(rc = lbmc_h5_read_str(f, "points/status", (hsize_t)P, S, 256)))
    for (long i = 0; i < P; i++) {
      const char *st = S + i * 256;
      res->pt[i].status = strcmp(st, "unstable") == 0            ? LBMC_STATUS_UNSTABLE
                          : strcmp(st, "precision_not_met") == 0 ? LBMC_STATUS_PRECISION_NOT_MET
                                                                 : LBMC_STATUS_OK;
      res->pt[i].done = 1;
    }
#undef LBMC_RI
#undef LBMC_RF
#undef LBMC_RS
#undef LBMC_RPF
#undef LBMC_RPI
  free(I);
  free(F);
  free(S);
  return rc;
}

/* /points/service, slots, mu_k; files written before they existed hold exponential
 * service at constant speeds (the defaults of lbmc_results_create, with mu_k = mu). */
static int lbmc_read_service(hid_t f, lbmc_results *res)
{
  const size_t PJ = (size_t)res->P * (size_t)res->J;
  hsize_t dims[4];
  int64_t *I;
  double *F;
  int rc;
  if (!lbmc_h5_exists(f, "points/service")) {
    for (size_t i = 0; i < PJ; i++)
      res->mu_k[i * LBMC_MAX_RATES] = res->pt[i / (size_t)res->J].mu[i % (size_t)res->J];
    return 0;
  }
  if (lbmc_h5_dims(f, "points/mu_k", dims) != 3 || dims[0] != (hsize_t)res->P ||
      dims[1] != (hsize_t)res->J || dims[2] < 1 || dims[2] > LBMC_MAX_RATES)
    return -1;
  I = malloc(sizeof *I * (PJ + 1));
  F = malloc(sizeof *F * (PJ * dims[2] + 1));
  rc = !I || !F ||
       lbmc_h5_read_str(f, "points/service", (hsize_t)PJ, res->service, LBMC_SERVICE_TEXT) ||
       lbmc_h5_read(f, "points/slots", H5T_NATIVE_INT64, I) ||
       lbmc_h5_read(f, "points/mu_k", H5T_NATIVE_DOUBLE, F);
  for (size_t i = 0; !rc && i < PJ; i++) {
    if (I[i] < 1 || I[i] > (int64_t)dims[2]) rc = -1;
    res->slots[i] = (int)I[i];
    for (size_t k = 0; k < dims[2]; k++) res->mu_k[i * LBMC_MAX_RATES + k] = F[i * dims[2] + k];
  }
  free(I);
  free(F);
  return rc;
}

/* Scatter metric i of a dataset (rows x len) into the flat vectors (stride total). */
static int lbmc_read_metric(hid_t f, const char *name, lbmc_results *res, int i, size_t rows,
                            double *dst, double *buf)
{
  size_t off = lbmc_metric_offset(i, res->J, res->K), len = lbmc_metric_size(i, res->J, res->K);
  if (lbmc_h5_read(f, name, H5T_NATIVE_DOUBLE, buf)) return -1;
  for (size_t r = 0; r < rows; r++)
    memcpy(dst + r * res->total + off, buf + r * len, sizeof *buf * len);
  return 0;
}

static int lbmc_read_data(hid_t f, lbmc_results *res)
{
  size_t rows = (size_t)res->P * (size_t)res->Rmax;
  double *buf = malloc(sizeof *buf * (rows * res->total + 1));
  char name[160];
  int rc = !buf;
  for (int i = 0; !rc && i < LBMC_METRICS; i++) {
    const char *m = lbmc_metric_get(i)->name;
    snprintf(name, sizeof name, "estimates/%s", m);
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) continue; /* a metric added later: stays NaN */
    snprintf(name, sizeof name, "estimates/%s/mean", m);
    rc = lbmc_read_metric(f, name, res, i, (size_t)res->P, res->mean, buf);
    snprintf(name, sizeof name, "estimates/%s/half_width", m);
    if (!rc) rc = lbmc_read_metric(f, name, res, i, (size_t)res->P, res->half_width, buf);
    snprintf(name, sizeof name, "estimates/%s/std_err", m);
    if (!rc) rc = lbmc_read_metric(f, name, res, i, (size_t)res->P, res->std_err, buf);
    snprintf(name, sizeof name, "replicas/%s", m);
    if (!rc) rc = lbmc_read_metric(f, name, res, i, rows, res->values, buf);
  }
  if (!rc) rc = lbmc_h5_read(f, "replicas/warmup", H5T_NATIVE_DOUBLE, res->rep_warmup);
  if (!rc) rc = lbmc_h5_read(f, "replicas/cpu_seconds", H5T_NATIVE_DOUBLE, res->rep_cpu);
  if (!rc) rc = lbmc_h5_read(f, "replicas/growth", H5T_NATIVE_DOUBLE, res->rep_growth);
  if (!rc) rc = lbmc_h5_read(f, "replicas/events", H5T_NATIVE_INT64, res->rep_events);
  if (!rc) rc = lbmc_h5_read(f, "replicas/unstable", H5T_NATIVE_INT8, res->rep_unstable);
  free(buf);
  return rc;
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
  if (access(path, R_OK) != 0)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: no such file, or not readable", path);
  H5Eget_auto2(H5E_DEFAULT, &func, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* our messages instead of HDF5's stack dumps */
  *out = NULL;
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) {
    H5Eset_auto2(H5E_DEFAULT, func, data);
    return lbmc_read_fail(path, "cannot open it as an HDF5 file");
  }
  if (lbmc_h5_read_attr_i64(f, "layout_version", &layout)) {
    err = lbmc_read_fail(path, "it has no layout_version attribute (not written by lbmc run)");
  } else if (layout != LBMC_LAYOUT_VERSION) {
    char why[96];
    snprintf(why, sizeof why, "layout_version %lld, this program reads %d", (long long)layout,
             LBMC_LAYOUT_VERSION);
    err = lbmc_read_fail(path, why);
  } else if (lbmc_h5_read_attr_i64(f, "tail_k", &K) || lbmc_h5_dims(f, "points/beta", dims) != 2 ||
             lbmc_h5_dims(f, "replicas/warmup", pr) != 2) {
    err = lbmc_read_fail(path, "tail_k, /points/beta or /replicas/warmup is missing");
  } else if ((err = lbmc_results_create((long)dims[0], (long)pr[1], (int)dims[1], (int)K, &res)) ==
             LBMC_SUCCESS) {
    if (lbmc_read_root(f, res) || lbmc_read_points(f, res) || lbmc_read_service(f, res) ||
        lbmc_read_data(f, res)) {
      err = lbmc_read_fail(path, "a dataset of the layout is missing or malformed");
      lbmc_results_destroy(&res);
    }
  }
  H5Fclose(f);
  H5Eset_auto2(H5E_DEFAULT, func, data);
  *out = res;
  return err;
}
