/* A transient run's estimates (lbmc_point_transient) as JSON ("transient": time the first
 * axis, then pools, then levels) and as a table. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static json_t *lbmc_tr_num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* One field (an array of times x values, row-major) of metric `name` as nested arrays:
 * [time], [time][pool] or [time][pool][level]. */
static json_t *lbmc_tr_field(const lbmc_transient *t, const double *a, const char *name)
{
  json_t *times = json_array();
  const int pools = strcmp(name, "mean_queue") == 0 || strcmp(name, "tail") == 0;
  const int levels = strcmp(name, "tail") == 0;
  for (long i = 0; i < t->times; i++) {
    const double *row = a + (size_t)i * t->values;
    json_t *per;
    if (!pools) {
      json_array_append_new(times, lbmc_tr_num(row[lbmc_transient_index(t->J, t->K, name, 0, 1)]));
      continue;
    }
    per = json_array();
    for (int j = 0; j < t->J; j++) {
      json_t *lv;
      if (!levels) {
        json_array_append_new(per, lbmc_tr_num(row[lbmc_transient_index(t->J, t->K, name, j, 1)]));
        continue;
      }
      lv = json_array();
      for (int k = 1; k <= t->K; k++)
        json_array_append_new(lv, lbmc_tr_num(row[lbmc_transient_index(t->J, t->K, name, j, k)]));
      json_array_append_new(per, lv);
    }
    json_array_append_new(times, per);
  }
  return times;
}

json_t *lbmc_cli_json_transient(const lbmc_transient *t)
{
  json_t *root = json_object(), *time = json_array(), *est = json_object();
  for (long i = 0; i < t->times; i++) json_array_append_new(time, json_real(t->time[i]));
  json_object_set_new(root, "time", time);
  json_object_set_new(root, "replicas", json_integer(t->replicas));
  if (t->unstable) json_object_set_new(root, "unstable_replicas", json_integer(t->unstable));
  json_object_set_new(root, "band", json_string("bonferroni"));
  for (int m = 0; lbmc_transient_metric_names[m]; m++) {
    const char *name = lbmc_transient_metric_names[m];
    json_t *one = json_object();
    json_object_set_new(one, "mean", lbmc_tr_field(t, t->mean, name));
    json_object_set_new(one, "lower", lbmc_tr_field(t, t->lower, name));
    json_object_set_new(one, "upper", lbmc_tr_field(t, t->upper, name));
    json_object_set_new(one, "band_lower", lbmc_tr_field(t, t->band_lower, name));
    json_object_set_new(one, "band_upper", lbmc_tr_field(t, t->band_upper, name));
    json_object_set_new(est, name, one);
  }
  json_object_set_new(root, "estimates", est);
  return root;
}

/* Row i of the table. */
static void lbmc_tr_row(FILE *f, const lbmc_transient *t, long i)
{
  const size_t at = (size_t)i * t->values;
  const long c = lbmc_transient_index(t->J, t->K, "customers", 0, 1);
  const long pw = lbmc_transient_index(t->J, t->K, "p_wait", 0, 1);
  const long th = lbmc_transient_index(t->J, t->K, "throughput", 0, 1);
  const double *m = t->mean + at;
  char cust[96];
  snprintf(cust, sizeof cust, "%.6g [%.6g, %.6g] [%.6g, %.6g]", m[c], t->lower[at + (size_t)c],
           t->upper[at + (size_t)c], t->band_lower[at + (size_t)c], t->band_upper[at + (size_t)c]);
  fprintf(f, "%10.6g  %-44s", t->time[i], cust);
  for (int j = 0; j < t->J; j++) fprintf(f, "  %13.6g", m[j]);
  fprintf(f, "  %10.6g  %10.6g\n", m[pw], m[th]);
}

void lbmc_cli_print_transient(FILE *f, const lbmc_transient *t, double confidence)
{
  const long step = t->times > 41 ? (t->times + 39) / 40 : 1;
  long i;
  char lv[32];
  fprintf(f,
          "transient (%ld replica%s; %s pointwise intervals, then the band simultaneous over the "
          "%ld times, Bonferroni; p_wait and throughput over the interval ending at the time):\n",
          t->replicas, t->replicas == 1 ? "" : "s", lbmc_cli_level(confidence, lv, sizeof lv),
          t->times);
  fprintf(f, "%10s  %-44s", "time", "customers [pointwise] [band]");
  for (int j = 0; j < t->J; j++) fprintf(f, "  mean_queue[%d]", j + 1); /* pools from 1 */
  fprintf(f, "  %10s  %10s\n", "p_wait", "throughput");
  for (i = 0; i < t->times; i += step) lbmc_tr_row(f, t, i);
  if (i - step != t->times - 1) lbmc_tr_row(f, t, t->times - 1);
  if (t->unstable) fprintf(f, "(%ld replicas hit the runaway cap and are left out)\n", t->unstable);
}
