/* lbmc-job-check FILE: parse a job file and print its grid, one line per point.
 * Exit status: lbmc_exit_status of the parse (2 for bad input). Used by the job tests
 * (good_jobs.sh compares the output with good/NAME.expected; bad_jobs.sh checks the
 * messages). */
#include <stdio.h>

#include "lbmc/job.h"
#include "lbmc/metrics.h"

static void print_header(const lbmc_job *job)
{
  const lbmc_precision *pr = lbmc_job_precision(job);
  lbmc_run_options o;
  lbmc_job_point_options(job, 0, &o);
  printf("job: %s\n", lbmc_job_name(job));
  printf("points: %ld\n", lbmc_job_points(job));
  printf("pools: %d\n", lbmc_job_pools(job));
  printf("run: replicas %ld (max %ld), seed %ld, batches %ld, confidence %g, tail_k %ld, "
         "max_customers %lld\n",
         lbmc_job_replicas(job), lbmc_job_replicas_max(job), lbmc_job_seed(job), o.batches,
         o.confidence, o.tail_k, o.max_customers);
  if (pr->enabled)
    printf("precision: %s entry %ld, relative %g, max_replicas %ld\n",
           lbmc_metric_get(pr->metric)->name, pr->index, pr->relative, pr->max_replicas);
  else
    printf("precision: off\n");
  printf("output: %s\n", lbmc_job_output(job) ? lbmc_job_output(job) : "(none)");
  printf("axes: %d\n", lbmc_job_axes(job));
  for (int a = 0; a < lbmc_job_axes(job); a++) {
    printf("axis %d: %s (%ld):", a, lbmc_job_axis_name(job, a), lbmc_job_axis_length(job, a));
    for (long v = 0; v < lbmc_job_axis_length(job, a); v++)
      printf("%s%s", v ? " | " : " ", lbmc_job_axis_value(job, a, v));
    putchar('\n');
  }
  if (lbmc_job_dims(job) != lbmc_job_axes(job)) /* linked axes: which share a dimension */
    for (int d = 0; d < lbmc_job_dims(job); d++) {
      printf("dimension %d '%s':", d, lbmc_job_dim_name(job, d));
      for (int a = 0; a < lbmc_job_axes(job); a++)
        if (lbmc_job_axis_dim(job, a) == d) printf(" %s", lbmc_job_axis_name(job, a));
      putchar('\n');
    }
}

static void print_list_real(const char *name, const lbmc_model *m,
                            double (*get)(const lbmc_model *, int))
{
  printf(" %s=", name);
  for (int j = 0; j < lbmc_model_pools(m); j++) printf("%s%.6g", j ? "," : "", get(m, j));
}

static void print_point(const lbmc_job *job, long p, const lbmc_model *m)
{
  lbmc_run_options o;
  lbmc_job_point_options(job, p, &o);
  printf("point %ld: n=%ld lambda=%.6g rho=%.6g policy=%s routers=%ld stale=%s sampling=%s", p,
         lbmc_model_n(m), lbmc_model_lambda(m), lbmc_model_rho(m), lbmc_model_policy(m),
         lbmc_model_routers(m), *lbmc_model_stale(m) ? lbmc_model_stale(m) : "-",
         *lbmc_model_sampling(m) ? lbmc_model_sampling(m) : "-");
  print_list_real("beta", m, lbmc_model_beta);
  print_list_real("mu", m, lbmc_model_mu);
  printf(" buffer=");
  for (int j = 0; j < lbmc_model_pools(m); j++) {
    long b = lbmc_model_buffer(m, j);
    if (b == LBMC_BUFFER_INF)
      printf("%sinf", j ? "," : "");
    else
      printf("%s%ld", j ? "," : "", b);
  }
  /* service distributions and speed lists, pools separated by ';' */
  printf(" service=");
  for (int j = 0; j < lbmc_model_pools(m); j++)
    printf("%s%s", j ? ";" : "", lbmc_model_service(m, j)->text);
  printf(" mu_k=");
  for (int j = 0; j < lbmc_model_pools(m); j++) {
    const double *rates;
    int L = lbmc_model_rates(m, j, &rates);
    for (int k = 0; k < L; k++) printf("%s%.6g", k ? "," : j ? ";" : "", rates[k]);
  }
  printf(" servers=");
  for (int j = 0; j < lbmc_model_pools(m); j++)
    printf("%s%ld", j ? "," : "", lbmc_model_pool_servers(m, j));
  printf(" time=%.6g warmup=", o.time);
  if (o.warmup_auto)
    printf("auto\n");
  else
    printf("%.6g\n", o.warmup);
}

int main(int argc, char **argv)
{
  lbmc_job *job = NULL;
  lbmc_err err;
  if (argc != 2) {
    fprintf(stderr, "usage: lbmc-job-check FILE\n");
    return 2;
  }
  err = lbmc_job_parse_file(argv[1], &job);
  if (err) return lbmc_exit_status(err);
  print_header(job);
  for (long p = 0; p < lbmc_job_points(job) && !err; p++) {
    lbmc_model *m = NULL;
    err = lbmc_job_point_model(job, p, &m);
    if (!err) print_point(job, p, m);
    lbmc_model_destroy(&m);
  }
  lbmc_job_destroy(&job);
  return lbmc_exit_status(err);
}
