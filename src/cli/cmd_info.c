/* lbmc info: a results file as a table; lbmc merge: combine parts of one job. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../io/results.h"
#include "cli.h"
#include "lbmc/check.h"
#include "lbmc/job.h"
#include "lbmc/metrics.h"
#include "lbmc/runner.h"

#define LBMC_INFO_DEFAULT_METRICS "p_wait_or_block,mean_sojourn,messages_per_arrival"

static void lbmc_info_usage(FILE *f)
{
  fputs("usage: lbmc info FILE.h5 [--metrics M1,M2,...]\n"
        "\n"
        "Print a results file: its run, then one row per grid point with its parameters,\n"
        "status, replicas and the chosen metrics as mean +/- half-width. Per-pool metrics\n"
        "may be written with a 1-based pool, e.g. utilization[2]; a per-pool metric without\n"
        "one shows pool 1. Default metrics: " LBMC_INFO_DEFAULT_METRICS ".\n",
        f);
}

typedef struct {
  int metric;
  long entry;
  char label[48];
} lbmc_info_col;

static lbmc_err lbmc_info_columns(const char *spec, const lbmc_results *res, lbmc_info_col *cols,
                                  int *n)
{
  char buf[1024], *save = NULL;
  *n = 0;
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *tok = strtok_r(buf, ",", &save); tok && *n < 16; tok = strtok_r(NULL, ",", &save)) {
    char name[64];
    long pool = 1;
    char *br = strchr(tok, '[');
    snprintf(name, sizeof name, "%.*s", br ? (int)(br - tok) : (int)strlen(tok), tok);
    cols[*n].metric = lbmc_metric_find(name);
    {
      int quant =
          cols[*n].metric >= 0 && lbmc_metric_get(cols[*n].metric)->shape == LBMC_SHAPE_QUANTILE;
      long top = quant ? LBMC_QUANTILES : res->J;
      size_t len = br ? strlen(br) : 0;
      if (br && (len < 3 || br[len - 1] != ']' || !lbmc_scan_long(br + 1, len - 2, &pool) ||
                 pool < 1 || pool > top))
        return LBMC_ERROR(LBMC_ERR_ARG, "--metrics: '%s': the %s must be 1..%ld", tok,
                          quant ? "quantile index" : "pool", top);
    }
    if (cols[*n].metric < 0 || lbmc_metric_get(cols[*n].metric)->shape == LBMC_SHAPE_POOL_K)
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "--metrics: '%s' is not allowed; use scalar or per-pool metrics, e.g. "
                        "p_wait, mean_sojourn, utilization[2]",
                        tok);
    cols[*n].entry = lbmc_metric_get(cols[*n].metric)->shape == LBMC_SHAPE_SCALAR ? 0 : pool - 1;
    snprintf(cols[*n].label, sizeof cols[*n].label, "%s", tok);
    (*n)++;
  }
  return LBMC_SUCCESS;
}

static void lbmc_info_print(const char *path, const lbmc_results *res, const lbmc_info_col *cols,
                            int nc, const lbmc_job *job)
{
  printf("%s: lbmc %s, created %s, %ld MPI rank%s, %.1f s wall, seed %ld, %.0f%% intervals%s%s%s\n",
         path, res->lbmc_version, res->created, res->mpi_ranks, res->mpi_ranks == 1 ? "" : "s",
         res->wall_seconds, res->seed, 100 * res->confidence, res->shard[0] ? ", shard " : "",
         res->shard, res->complete ? "" : ", INCOMPLETE (interrupted: resume the run)");
  printf("%5s %8s %8s %7s %-12s %3s %-8s %4s %-17s", "point", "n", "lambda", "rho", "policy", "R",
         "stale", "reps", "status");
  for (int c = 0; c < nc; c++) printf(" %24s", cols[c].label);
  printf("  %s\n", job ? "grid axes" : "");
  for (long i = 0; i < res->P; i++) {
    const lbmc_point_info *p = &res->pt[i];
    printf("%5ld %8ld %8.4g %7.4g %-12s %3ld %-8s %4ld %-17s", p->index, p->n, p->lambda, p->rho,
           p->policy, p->routers, p->stale[0] ? p->stale : "-", p->replicas,
           lbmc_status_name(p->status));
    for (int c = 0; c < nc; c++) {
      size_t k = (size_t)i * res->total + lbmc_metric_offset(cols[c].metric, res->J, res->K) +
                 (size_t)cols[c].entry;
      char cell[64];
      if (isnan(res->mean[k]))
        snprintf(cell, sizeof cell, "nan");
      else if (isnan(res->half_width[k]))
        snprintf(cell, sizeof cell, "%.5g", res->mean[k]);
      else
        snprintf(cell, sizeof cell, "%.5g +/- %.2g", res->mean[k], res->half_width[k]);
      printf(" %24s", cell);
    }
    if (job) {
      char axes[512];
      lbmc_job_point_label(job, p->index, axes, sizeof axes);
      printf("  %s", axes);
    }
    putchar('\n');
  }
  for (long i = 0; i < res->P; i++)
    if (res->pt[i].status == LBMC_STATUS_UNSTABLE)
      printf("point %ld unstable: %s\n", res->pt[i].index, res->pt[i].reason);
}

int lbmc_cmd_info(int argc, char **argv)
{
  static const struct option opts[] = {
      {"metrics", required_argument, 0, 'm'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  const char *metrics = LBMC_INFO_DEFAULT_METRICS;
  lbmc_results *res = NULL;
  lbmc_info_col cols[16];
  int c, nc;
  lbmc_err err;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":m:h", opts, NULL)) != -1) {
    if (c == 'm')
      metrics = optarg;
    else if (c == 'h') {
      lbmc_info_usage(stdout);
      return 0;
    } else {
      LBMC_ERROR(LBMC_ERR_ARG, "'%s' is not an option of lbmc info (see lbmc info --help)",
                 argv[optind - 1]);
      return 2;
    }
  }
  if (optind != argc - 1) {
    LBMC_ERROR(LBMC_ERR_ARG, "lbmc info takes one results file (see lbmc info --help)");
    return 2;
  }
  err = lbmc_results_read(argv[optind], &res);
  if (!err) err = lbmc_info_columns(metrics, res, cols, &nc);
  if (!err) {
    lbmc_job *job = NULL; /* the job the file came from, for the axis values of each point */
    if (res->job_text && *res->job_text && lbmc_job_parse_text(res->job_text, argv[optind], &job))
      job = NULL;
    lbmc_info_print(argv[optind], res, cols, nc, job);
    lbmc_job_destroy(&job);
  }
  lbmc_results_destroy(&res);
  return lbmc_exit_status(err);
}

int lbmc_cmd_merge(int argc, char **argv)
{
  lbmc_results **parts;
  lbmc_results *merged = NULL;
  int n = argc - 2;
  lbmc_err err = LBMC_SUCCESS;
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs("usage: lbmc merge OUT.h5 PART.h5...\n\n"
          "Combine result files of one job (e.g. the shards of lbmc run --shard I/K) into OUT.h5.\n"
          "All parts must come from the same job text and seed and be complete; shards must all\n"
          "be present, each once. OUT.h5 is written atomically.\n",
          stdout);
    return 0;
  }
  if (n < 1) {
    LBMC_ERROR(LBMC_ERR_ARG, "lbmc merge needs an output file and at least one part (see --help)");
    return 2;
  }
  err = lbmc_check_output_path(argv[1], (const char *const *)(argv + 2), n);
  if (err) return lbmc_exit_status(err);
  parts = calloc((size_t)n, sizeof *parts);
  if (!parts) return lbmc_exit_status(LBMC_ERROR(LBMC_ERR_MEMORY, "merge: out of memory"));
  for (int p = 0; p < n && !err; p++) err = lbmc_results_read(argv[2 + p], &parts[p]);
  if (!err) err = lbmc_results_merge(parts, (const char *const *)(argv + 2), n, &merged);
  if (!err) err = lbmc_results_write(merged, argv[1]);
  if (!err)
    printf("lbmc merge: wrote %s: %ld points from %d parts%s\n", argv[1], merged->P, n,
           merged->complete ? "" : " (the job has more points: this merge is not complete)");
  for (int p = 0; p < n; p++) lbmc_results_destroy(&parts[p]);
  free(parts);
  lbmc_results_destroy(&merged);
  return lbmc_exit_status(err);
}
