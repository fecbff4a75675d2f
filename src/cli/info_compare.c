/* lbmc info FILE --compare A,B: paired comparisons of two policies (issue 12, item 5).
 * The policies of a scenario (the grid point without its routing axes) share their random
 * streams replica by replica (docs/model.md, "Random streams"), so replica r under A and
 * replica r under B form a pair. Per scenario and metric: the difference A - B and the
 * ratio A / B of the pooled estimates with paired intervals (delta method on the replicas'
 * numerators and denominators, /replicas/M and M_weight; src/stats/ratio.c), and the
 * unpaired (Welch) half-width for comparison. Quantiles are not compared (their per-replica
 * values are biased for short replicas; docs/model.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/results.h"
#include "../stats/estimators.h"
#include "cli.h"
#include "lbmc/metrics.h"

/* Split "A,B" at the comma outside parentheses ("balanced(2),jsq(2)"). */
static lbmc_err lbmc_compare_split(const char *spec, char *a, char *b, size_t len)
{
  int depth = 0;
  for (const char *p = spec; *p; p++) {
    depth += (*p == '(') - (*p == ')');
    if (*p == ',' && depth == 0 && p > spec && p[1]) {
      snprintf(a, len, "%.*s", (int)(p - spec), spec);
      snprintf(b, len, "%s", p + 1);
      return LBMC_SUCCESS;
    }
  }
  return LBMC_ERROR(LBMC_ERR_ARG,
                    "--compare: '%s' is not allowed; write two policies as in /points/policy, "
                    "e.g. --compare 'pull,jsq(2)'",
                    spec);
}

/* The scenario's label: its grid axes but the routing ones, as written in the job. */
static void lbmc_compare_label(const lbmc_job *job, long grid, char *buf, size_t len)
{
  long rest = grid, stride = job ? lbmc_job_points(job) : 1;
  size_t used = 0;
  buf[0] = '\0';
  for (int a = 0; job && a < lbmc_job_axes(job) && used < len; a++) {
    const long n = lbmc_job_axis_length(job, a), v = (rest / (stride / n)) % n;
    stride /= n;
    if (lbmc_job_axis_routing(job, a)) continue;
    used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "",
                             lbmc_job_axis_name(job, a), lbmc_job_axis_value(job, a, v));
  }
  if (!buf[0]) snprintf(buf, len, "(the one scenario)");
}

/* The point of policy `pol` in scenario s with the routers of point `like` (-1: any). */
static long lbmc_compare_find(const lbmc_results *res, long s, const char *pol, long like)
{
  for (long i = 0; i < res->P; i++)
    if (res->pt[i].scenario == s && strcmp(res->pt[i].policy, pol) == 0 &&
        (like < 0 || res->pt[i].routers == res->pt[like].routers))
      return i;
  return -1;
}

/* Numerators and denominators of entry k of point p's first R replicas into y, x. */
static void lbmc_compare_terms(const lbmc_results *res, long p, size_t k, long R, double *y,
                               double *x)
{
  for (long r = 0; r < R; r++) {
    const size_t at = ((size_t)p * (size_t)res->Rmax + (size_t)r) * res->total + k;
    const double v = res->values[at], w = res->weights[at];
    x[r] = w > 0 ? w : 0;
    y[r] = w > 0 && !isnan(v) ? v * w : 0;
  }
}

/* One row: entry k of points pa and pb. */
static void lbmc_compare_row(const lbmc_results *res, long pa, long pb, size_t k,
                             const char *label, const char *metric, double *work)
{
  const long R = res->pt[pa].replicas < res->pt[pb].replicas ? res->pt[pa].replicas
                                                              : res->pt[pb].replicas;
  double *ya = work, *xa = ya + R, *yb = xa + R, *xb = yb + R;
  lbmc_interval d, q, u;
  char cd[96], cq[96], gain[32] = "";
  if (res->pt[pa].status == LBMC_STATUS_UNSTABLE || res->pt[pb].status == LBMC_STATUS_UNSTABLE) {
    printf("%-34s %-22s %s\n", label, metric, "unstable: no comparison");
    return;
  }
  lbmc_compare_terms(res, pa, k, R, ya, xa);
  lbmc_compare_terms(res, pb, k, R, yb, xb);
  lbmc_ratio_paired_difference(ya, xa, yb, xb, (size_t)R, 1, res->confidence, &d);
  lbmc_ratio_paired_ratio(ya, xa, yb, xb, (size_t)R, 1, res->confidence, &q);
  lbmc_ratio_difference(ya, xa, (size_t)R, 1, yb, xb, (size_t)R, 1, res->confidence, &u);
  lbmc_cli_cell(cd, sizeof cd, d.estimate, d.lower, d.upper, NAN, d.flags & LBMC_IV_EMPTY);
  lbmc_cli_cell(cq, sizeof cq, q.estimate, q.lower, q.upper, NAN, q.flags & LBMC_IV_EMPTY);
  if (d.half_width > 0 && isfinite(u.half_width))
    snprintf(gain, sizeof gain, "%.3g", u.half_width / d.half_width);
  printf("%-34s %-22s %12.6g %12.6g  %-36s %-32s %6ld %8s\n", label, metric,
         res->mean[(size_t)pa * res->total + k], res->mean[(size_t)pb * res->total + k], cd, cq,
         R, gain);
}

lbmc_err lbmc_info_compare(const lbmc_results *res, const lbmc_job *job, const char *spec,
                           const int *metric, const long *entry, const char *const *names,
                           int nc)
{
  char a[64], b[64], label[256], lv[32];
  long shown = 0;
  double *work;
  LBMC_CHECK(lbmc_compare_split(spec, a, b, sizeof a));
  if (res->layout < 2)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--compare: this file has layout %d, without the replicas' weights (it was "
                      "written by an older lbmc); paired comparisons need a file of layout 2 or "
                      "later: rerun the job",
                      res->layout);
  work = malloc(sizeof *work * 4 * (size_t)(lbmc_results_replicas(res) + 1));
  if (!work) return LBMC_ERROR(LBMC_ERR_MEMORY, "--compare: out of memory");
  printf("paired comparison %s - %s (%s intervals; replica r of %s paired with replica r of "
         "%s: common random numbers)\n",
         a, b, lbmc_cli_level(res->confidence, lv, sizeof lv), a, b);
  printf("%-34s %-22s %12s %12s  %-36s %-32s %6s %8s\n", "scenario", "metric", a, b,
         "difference [paired interval]", "ratio [paired interval]", "pairs", "gain");
  for (long pa = 0; pa < res->P; pa++) {
    long pb;
    if (strcmp(res->pt[pa].policy, a) != 0) continue;
    pb = lbmc_compare_find(res, res->pt[pa].scenario, b, pa);
    if (pb < 0) continue;
    lbmc_compare_label(job, res->pt[pa].index, label, sizeof label);
    for (int c = 0; c < nc; c++) {
      if (lbmc_metric_get(metric[c])->shape == LBMC_SHAPE_QUANTILE) continue;
      lbmc_compare_row(res, pa, pb,
                       lbmc_metric_offset(metric[c], res->J, res->K) + (size_t)entry[c], label,
                       names[c], work);
    }
    shown++;
  }
  free(work);
  if (!shown)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--compare: no scenario has both policies '%s' and '%s' (/points/policy)",
                      a, b);
  printf("gain: the unpaired (Welch) half-width over the paired one; quantiles are not compared\n");
  return LBMC_SUCCESS;
}
