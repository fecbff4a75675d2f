/* Writing a results file (docs/results-format.md), atomically. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5util.h"
#include "lbmc/metrics.h"
#include "results.h"

/* Gather one field of the P points into a flat array. */
#define LBMC_GATHER(buf, res, expr)                                                                \
  for (long i_ = 0; i_ < (res)->P; i_++) {                                                         \
    const lbmc_point_info *p = &(res)->pt[i_];                                                     \
    (buf)[i_] = (expr);                                                                            \
  }

static int lbmc_write_points(hid_t file, const lbmc_results *res, void *scratch)
{
  hid_t g = H5Gcreate2(file, "points", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t P = (hsize_t)res->P, PJ[2] = {(hsize_t)res->P, (hsize_t)res->J};
  int64_t *I = scratch;
  double *F = scratch;
  const char **S = scratch;
  int rc = g < 0;
#define LBMC_I64(name, expr, units, desc)                                                          \
  if (!rc) {                                                                                       \
    LBMC_GATHER(I, res, expr);                                                                     \
    rc = lbmc_h5_write_i64(g, name, 1, &P, I, units, desc);                                        \
  }
#define LBMC_F64(name, expr, units, desc)                                                          \
  if (!rc) {                                                                                       \
    LBMC_GATHER(F, res, expr);                                                                     \
    rc = lbmc_h5_write_f64(g, name, 1, &P, F, units, desc);                                        \
  }
#define LBMC_STR(name, expr, desc)                                                                 \
  if (!rc) {                                                                                       \
    LBMC_GATHER(S, res, expr);                                                                     \
    rc = lbmc_h5_write_str(g, name, P, S, "1", desc);                                              \
  }
#define LBMC_POOL_F(name, field, units, desc)                                                      \
  if (!rc) {                                                                                       \
    for (long i = 0; i < res->P; i++)                                                              \
      for (int j = 0; j < res->J; j++) F[i * res->J + j] = res->pt[i].field[j];                    \
    rc = lbmc_h5_write_f64(g, name, 2, PJ, F, units, desc);                                        \
  }
#define LBMC_POOL_I(name, field, units, desc)                                                      \
  if (!rc) {                                                                                       \
    for (long i = 0; i < res->P; i++)                                                              \
      for (int j = 0; j < res->J; j++) I[i * res->J + j] = res->pt[i].field[j];                    \
    rc = lbmc_h5_write_i64(g, name, 2, PJ, I, units, desc);                                        \
  }
  LBMC_I64("index", p->index, "1",
           "index of the point in the job's full grid (0-based, first axis slowest)");
  LBMC_I64("n", p->n, "1", "number of servers");
  LBMC_F64("lambda", p->lambda, "1/time", "arrival rate per server (total rate lambda * n)");
  LBMC_F64("rho", p->rho, "1", "load lambda / sum_j beta_j mu_j");
  LBMC_STR("policy", p->policy, "routing policy as written, e.g. jsq(2)");
  LBMC_STR("policy_name", p->policy_name, "policy family: random, jsq, pull, balanced");
  LBMC_I64("d", p->d, "1",
           "policy parameter: d of jsq(d), c of balanced(c), n for full jsq, 0 if none");
  LBMC_STR("sampling", p->sampling,
           "jsq(d) sampling: distinct or with_replacement; empty otherwise");
  LBMC_I64("routers", p->routers, "1", "number of routers R");
  LBMC_STR("stale", p->stale, "pull's stale-message variant: withdraw or keep; empty otherwise");
  LBMC_POOL_F("beta", beta, "1", "fraction of the servers in each pool");
  LBMC_POOL_F("mu", mu, "1/time", "service speed of a server of each pool");
  LBMC_POOL_I("buffer", buffer, "1", "customers a server of each pool holds, -1 = unlimited");
  LBMC_POOL_I("pool_servers", pool_servers, "1",
              "servers per pool (largest-remainder rounding of beta_j n)");
  if (!rc) { /* service distribution per pool: P x J strings */
    for (size_t i = 0; i < (size_t)res->P * (size_t)res->J; i++)
      S[i] = res->service + i * LBMC_SERVICE_TEXT;
    rc = lbmc_h5_write_strs(g, "service", 2, PJ, S, "1",
                            "service requirement distribution (mean 1) of each pool, canonical "
                            "text such as lognormal:scv=4 (docs/job-files.md)");
  }
  if (!rc) { /* queue-length-dependent speeds: P x J lengths, P x J x L speeds */
    int L = 1;
    for (size_t i = 0; i < (size_t)res->P * (size_t)res->J; i++) {
      I[i] = res->slots[i];
      if (res->slots[i] > L) L = res->slots[i];
    }
    rc = lbmc_h5_write_i64(
        g, "slots", 2, PJ, I, "1",
        "L_j: entries of each pool's speed list mu_k (1 = the constant speed mu)");
    if (!rc) {
      hsize_t PJL[3] = {(hsize_t)res->P, (hsize_t)res->J, (hsize_t)L};
      for (size_t i = 0; i < (size_t)res->P * (size_t)res->J; i++)
        for (int k = 0; k < L; k++)
          F[i * (size_t)L + (size_t)k] = res->mu_k[i * LBMC_MAX_RATES + (size_t)k];
      rc = lbmc_h5_write_f64(g, "mu_k", 3, PJL, F, "1/time",
                             "speed of a server of each pool holding k = 1..L customers (the last "
                             "one for more); NaN beyond the pool's slots");
    }
  }
  LBMC_F64("time", p->time, "time", "measured time per replica (with warmup auto: the whole run)");
  LBMC_F64("warmup", p->warmup, "time", "requested warm-up time, NaN for auto (MSER-5)");
  LBMC_I64("batches", p->batches, "1", "batch means per replica");
  LBMC_I64("replicas", p->replicas, "1", "replicas run for the point");
  LBMC_STR("status", lbmc_status_name(p->status), "ok, precision_not_met or unstable");
  LBMC_STR("reason", p->reason, "why the point is unstable; empty otherwise");
#undef LBMC_I64
#undef LBMC_F64
#undef LBMC_STR
#undef LBMC_POOL_F
#undef LBMC_POOL_I
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

static int lbmc_write_estimates(hid_t file, const lbmc_results *res, double *scratch)
{
  hid_t g = H5Gcreate2(file, "estimates", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t P = (hsize_t)res->P, dims[4];
  int rc = g < 0;
  for (int i = 0; !rc && i < LBMC_METRICS; i++) {
    const lbmc_metric_info *info = lbmc_metric_get(i);
    hid_t m = H5Gcreate2(g, info->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rank = lbmc_metric_dims(res, i, 1, &P, dims);
    char desc[256];
    rc = m < 0 || lbmc_h5_attr_str(m, "units", info->units) ||
         lbmc_h5_attr_str(m, "description", info->description);
    if (!rc && info->shape == LBMC_SHAPE_QUANTILE) rc = lbmc_write_levels(m);
    lbmc_metric_slice(res, res->mean, (size_t)res->P, i, scratch);
    snprintf(desc, sizeof desc, "mean over replicas of: %s", info->description);
    if (!rc) rc = lbmc_h5_write_f64(m, "mean", rank, dims, scratch, info->units, desc);
    lbmc_metric_slice(res, res->half_width, (size_t)res->P, i, scratch);
    snprintf(desc, sizeof desc,
             "half-width of the two-sided Student-t interval at level `confidence` (root "
             "attribute) of %s",
             info->name);
    if (!rc) rc = lbmc_h5_write_f64(m, "half_width", rank, dims, scratch, info->units, desc);
    lbmc_metric_slice(res, res->std_err, (size_t)res->P, i, scratch);
    snprintf(desc, sizeof desc, "standard error of the mean of %s", info->name);
    if (!rc) rc = lbmc_h5_write_f64(m, "std_err", rank, dims, scratch, info->units, desc);
    if (m >= 0) H5Gclose(m);
  }
  if (!rc) {
    int64_t *I = (int64_t *)scratch;
    for (long i = 0; i < res->P; i++) I[i] = res->pt[i].replicas;
    rc = lbmc_h5_write_i64(
        g, "replicas", 1, &P, I, "1",
        "replicas behind each estimate (one replica: the interval comes from its batch means)");
  }
  if (g >= 0) H5Gclose(g);
  return rc;
}

static int lbmc_write_replicas(hid_t file, const lbmc_results *res, double *scratch)
{
  hid_t g = H5Gcreate2(file, "replicas", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t PR[2] = {(hsize_t)res->P, (hsize_t)res->Rmax}, dims[4];
  size_t rows = (size_t)res->P * (size_t)res->Rmax;
  int rc = g < 0;
  for (int i = 0; !rc && i < LBMC_METRICS; i++) {
    const lbmc_metric_info *info = lbmc_metric_get(i);
    int rank = lbmc_metric_dims(res, i, 2, PR, dims);
    char desc[256];
    snprintf(desc, sizeof desc, "per-replica values (NaN where a point has fewer replicas) of: %s",
             info->description);
    lbmc_metric_slice(res, res->values, rows, i, scratch);
    rc = lbmc_h5_write_f64(g, info->name, rank, dims, scratch, info->units, desc);
    if (!rc && info->shape == LBMC_SHAPE_QUANTILE) {
      hid_t d = H5Dopen2(g, info->name, H5P_DEFAULT);
      rc = d < 0 || lbmc_write_levels(d);
      if (d >= 0) H5Dclose(d);
    }
  }
  if (!rc)
    rc = lbmc_h5_write_f64(g, "warmup", 2, PR, res->rep_warmup, "time",
                           "warm-up time used by the replica (chosen by MSER-5 with warmup auto); "
                           "NaN where no replica");
  if (!rc)
    rc = lbmc_h5_write_i64(
        g, "events", 2, PR, res->rep_events, "1",
        "arrivals plus departures simulated after the warm-up; -1 where no replica");
  if (!rc)
    rc = lbmc_h5_write_f64(g, "cpu_seconds", 2, PR, res->rep_cpu, "s",
                           "CPU seconds (real time, not model time) of the replica's measured "
                           "period; NaN where no replica");
  if (!rc)
    rc = lbmc_h5_write_f64(
        g, "growth", 2, PR, res->rep_growth, "1",
        "smallest increase of the time-average customers in the system from one quarter of the "
        "measured period to the next, per customer admitted (about 0 in a steady state, > 0 while "
        "the system fills up); NaN where no replica");
  if (!rc)
    rc = lbmc_h5_write_i8(g, "unstable", 2, PR, res->rep_unstable, "1",
                          "1 if the replica hit the cap on customers in the system "
                          "(max_customers), 0 if not, -1 where no replica");
  if (g >= 0) H5Gclose(g);
  return rc;
}

static int lbmc_write_root(hid_t file, const lbmc_results *res)
{
  return lbmc_h5_attr_str(file, "lbmc_version", res->lbmc_version) ||
         lbmc_h5_attr_i64(file, "layout_version", LBMC_LAYOUT_VERSION) ||
         lbmc_h5_attr_str(file, "created", res->created) ||
         lbmc_h5_attr_str(file, "job", res->job_text ? res->job_text : "") ||
         lbmc_h5_attr_i64(file, "seed", res->seed) ||
         lbmc_h5_attr_i64(file, "mpi_ranks", res->mpi_ranks) ||
         lbmc_h5_attr_f64(file, "wall_seconds", res->wall_seconds) ||
         lbmc_h5_attr_f64(file, "confidence", res->confidence) ||
         lbmc_h5_attr_i64(file, "tail_k", res->K) || lbmc_h5_attr_str(file, "shard", res->shard) ||
         lbmc_h5_attr_i64(file, "complete", res->complete);
}

lbmc_err lbmc_results_write(const lbmc_results *res, const char *path)
{
  char tmp[4096];
  size_t need = (size_t)res->P * (size_t)(res->Rmax > 3 ? res->Rmax : 3) * res->total + 64;
  size_t need_mu_k = (size_t)res->P * (size_t)res->J * LBMC_MAX_RATES + 64; /* /points/mu_k */
  void *scratch = malloc(sizeof(double) * (need > need_mu_k ? need : need_mu_k));
  hid_t file;
  int rc;
  if (!scratch) return LBMC_ERROR(LBMC_ERR_MEMORY, "results: out of memory writing %s", path);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* our messages, not HDF5's error stack */
  file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) {
    free(scratch);
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot create %s (is the directory writable?)", tmp);
  }
  rc = lbmc_write_root(file, res) || lbmc_write_points(file, res, scratch) ||
       lbmc_write_estimates(file, res, scratch) || lbmc_write_replicas(file, res, scratch);
  free(scratch);
  if (H5Fclose(file) < 0) rc = 1;
  if (rc) {
    unlink(tmp);
    return LBMC_ERROR(LBMC_ERR_HDF5, "writing the results to %s failed", tmp);
  }
  if (rename(tmp, path) != 0) {
    unlink(tmp);
    return LBMC_ERROR(LBMC_ERR_FILE, "cannot rename %s to %s", tmp, path);
  }
  return LBMC_SUCCESS;
}
