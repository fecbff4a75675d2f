/* lbmc info FILE --compare A,B: paired comparisons of two policies, a
 * view of lbmc info (info.h) as a table, so in text, CSV and JSON. The policies of a
 * scenario (the grid point without its routing axes) share their random streams replica
 * by replica (docs/model.md, "Random streams"), so replica r under A and replica r under
 * B form a pair. Per scenario and metric entry: the difference A - B and the ratio A / B
 * of the pooled estimates with paired intervals (delta method on the replicas' numerators
 * and denominators, /replicas/M and M_weight; src/stats/ratio.c), and the unpaired
 * (Welch) half-width for comparison. Quantiles are not compared (docs/model.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../stats/estimators.h"
#include "info.h"
#include "lbmc/metrics.h"

#define LBMC_COMPARE_DEFAULT "p_wait_or_block,mean_sojourn,messages_per_arrival"

static const char *const lbmc_compare_cols[] = {"scenario",
                                                "entry",
                                                "A",
                                                "B",
                                                "difference",
                                                "difference_lower",
                                                "difference_upper",
                                                "ratio",
                                                "ratio_lower",
                                                "ratio_upper",
                                                "pairs",
                                                "paired_half_width",
                                                "unpaired_half_width",
                                                "gain",
                                                "note"};
enum {
  C_SCEN,
  C_ENTRY,
  C_A,
  C_B,
  C_D,
  C_DL,
  C_DU,
  C_R,
  C_RL,
  C_RU,
  C_PAIRS,
  C_PHW,
  C_UHW,
  C_GAIN,
  C_NOTE,
  C_COLS
};

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

/* The scenario's label: the grid axes of point `index` but the routing ones. */
static void lbmc_compare_label(const lbmc_grid *g, long index, char *buf, size_t len)
{
  static const char *const routing[] = {"policy", "routers", "stale", "sampling"};
  size_t used = 0;
  buf[0] = '\0';
  for (int a = 0; g && a < g->A && used < len; a++) {
    int skip = 0;
    for (int r = 0; r < 4; r++) skip |= strcmp(g->axis_name[a], routing[r]) == 0;
    if (!skip)
      used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", g->axis_name[a],
                               lbmc_grid_value(g, a, index));
  }
}

/* Whether points a and b pair: the same scenario and routers, and the same stale and
 * sampling settings where both policies have one. */
static int lbmc_compare_pair(const lbmc_point_info *a, const lbmc_point_info *b)
{
  return a->scenario == b->scenario && a->routers == b->routers &&
         (!a->stale[0] || !b->stale[0] || strcmp(a->stale, b->stale) == 0) &&
         (!a->sampling[0] || !b->sampling[0] || strcmp(a->sampling, b->sampling) == 0);
}

/* Numerators and denominators of entry k of point p's first R replicas into y, x (the
 * replicas' values first into y, their weights into x). */
static lbmc_err lbmc_compare_terms(const lbmc_results *res, long p, size_t k, long R, double *y,
                                   double *x)
{
  const size_t at = k * sizeof(double);
  if (R > res->rep_count[p])
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "--compare: point %ld has %ld replicas, not %ld", p,
                      res->rep_count[p], R);
  LBMC_CALL(lbmc_rep_store_read_part(res->reps, res->rep_first[p], R,
                                     lbmc_replica_column_offset(res, 0) + at, sizeof *y, y));
  LBMC_CALL(lbmc_rep_store_read_part(res->reps, res->rep_first[p], R,
                                     lbmc_replica_column_offset(res, 1) + at, sizeof *x, x));
  for (long r = 0; r < R; r++) {
    const double v = y[r], w = x[r];
    x[r] = w > 0 ? w : 0;
    y[r] = w > 0 && !isnan(v) ? v * w : 0;
  }
  return LBMC_SUCCESS;
}

/* The cells of entry k of points pa and pb (the row exists). */
static lbmc_err lbmc_compare_cells(const lbmc_results *res, lbmc_table *t, long pa, long pb,
                                   size_t k, double *work)
{
  const long R = res->pt[pa].v.replicas < res->pt[pb].v.replicas ? res->pt[pa].v.replicas
                                                                 : res->pt[pb].v.replicas;
  double *ya = work, *xa = ya + R, *yb = xa + R, *xb = yb + R;
  lbmc_interval d, q, u;
  if (res->pt[pa].v.status == LBMC_STATUS_UNSTABLE || res->pt[pb].v.status == LBMC_STATUS_UNSTABLE)
    return lbmc_table_text(t, C_NOTE, "unstable: no comparison");
  LBMC_CALL(lbmc_compare_terms(res, pa, k, R, ya, xa));
  LBMC_CALL(lbmc_compare_terms(res, pb, k, R, yb, xb));
  lbmc_ratio_paired_difference(ya, xa, yb, xb, (size_t)R, 1, res->confidence, &d);
  lbmc_ratio_paired_ratio(ya, xa, yb, xb, (size_t)R, 1, res->confidence, &q);
  lbmc_ratio_difference(ya, xa, (size_t)R, 1, yb, xb, (size_t)R, 1, res->confidence, &u);
  lbmc_table_real(t, C_A, res->est.estimate[(size_t)pa * res->total + k]);
  lbmc_table_real(t, C_B, res->est.estimate[(size_t)pb * res->total + k]);
  lbmc_table_real(t, C_D, d.estimate);
  lbmc_table_real(t, C_DL, d.lower);
  lbmc_table_real(t, C_DU, d.upper);
  lbmc_table_real(t, C_R, q.estimate);
  lbmc_table_real(t, C_RL, q.lower);
  lbmc_table_real(t, C_RU, q.upper);
  lbmc_table_int(t, C_PAIRS, R);
  lbmc_table_real(t, C_PHW, d.half_width);
  lbmc_table_real(t, C_UHW, u.half_width);
  if (d.half_width > 0 && isfinite(u.half_width))
    lbmc_table_real(t, C_GAIN, u.half_width / d.half_width);
  if (res->pt[pa].v.status != LBMC_STATUS_OK || res->pt[pb].v.status != LBMC_STATUS_OK)
    return lbmc_table_text(t, C_NOTE, "a point is not ok: see lbmc info");
  return LBMC_SUCCESS;
}

/* The rows of the scenario of points pa (policy A) and pb (B). */
static lbmc_err lbmc_compare_scenario(const lbmc_info *info, lbmc_table *t, long pa, long pb,
                                      double *work)
{
  const lbmc_results *res = info->res;
  char label[1024], name[64];
  const lbmc_point_info *A = &res->pt[pa], *B = &res->pt[pb];
  size_t used;
  lbmc_compare_label(info->grid, A->index, label, sizeof label);
  used = strlen(label); /* the pair's routing settings where they say more */
  if (A->routers > 1 && used < sizeof label)
    used += (size_t)snprintf(label + used, sizeof label - used, "%srouters=%ld", used ? " " : "",
                             A->routers);
  if ((A->stale[0] || B->stale[0]) && used < sizeof label)
    used += (size_t)snprintf(label + used, sizeof label - used, "%sstale=%s", used ? " " : "",
                             A->stale[0] ? A->stale : B->stale);
  if ((A->sampling[0] || B->sampling[0]) && used < sizeof label)
    snprintf(label + used, sizeof label - used, "%ssampling=%s", used ? " " : "",
             A->sampling[0] ? A->sampling : B->sampling);
  if (!label[0]) snprintf(label, sizeof label, "-");
  for (int s = 0; s < info->nmetrics; s++) {
    const int m = info->metric[s].metric;
    const long size = (long)lbmc_metric_size(m, res->J, res->K), e = info->metric[s].entry;
    if (lbmc_metric_get(m)->shape == LBMC_SHAPE_QUANTILE) continue;
    for (long x = e < 0 ? 0 : e; x < (e < 0 ? size : e + 1); x++) {
      LBMC_CALL(lbmc_table_add_row(t));
      LBMC_CALL(lbmc_table_text(t, C_SCEN, label));
      LBMC_CALL(lbmc_table_text(t, C_ENTRY,
                                lbmc_metric_entry_name(m, x, res->J, res->K, name, sizeof name)));
      LBMC_CALL(lbmc_compare_cells(res, t, pa, pb,
                                   lbmc_metric_offset(m, res->J, res->K) + (size_t)x, work));
    }
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_info_compare(const lbmc_info *info, const char *spec, lbmc_table **t)
{
  const lbmc_results *res = info->res;
  lbmc_info sel = *info; /* the metrics compared: --metrics, else the default */
  char a[64], b[64];
  const char *names[C_COLS];
  double *work;
  long shown = 0;
  lbmc_err err;
  *t = NULL;
  LBMC_CALL(lbmc_compare_split(spec, a, b, sizeof a));
  if (res->layout < 2)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--compare: this file has layout %d, without the replicas' weights (it was "
                      "written by an older lbmc); paired comparisons need layout 2 or later: "
                      "rerun the job",
                      res->layout);
  if (!sel.nmetrics) LBMC_CALL(lbmc_info_metrics(&sel, LBMC_COMPARE_DEFAULT));
  for (int c = 0; c < C_COLS; c++) names[c] = lbmc_compare_cols[c];
  names[C_A] = a, names[C_B] = b;
  LBMC_CALL(lbmc_table_create(C_COLS, names, t));
  (*t)->col[C_PHW].hidden = (*t)->col[C_UHW].hidden = 1;
  work = malloc(sizeof *work * 4 * (size_t)(lbmc_results_replicas(res) + 1));
  err = work ? LBMC_SUCCESS : LBMC_ERROR(LBMC_ERR_MEMORY, "--compare: out of memory");
  for (long pa = 0; !err && pa < res->P; pa++)
    for (long pb = 0; !err && pb < res->P; pb++) {
      if (!info->keep[pa] || !info->keep[pb] || strcmp(res->pt[pa].policy, a) != 0 ||
          strcmp(res->pt[pb].policy, b) != 0 || !lbmc_compare_pair(&res->pt[pa], &res->pt[pb]))
        continue;
      err = lbmc_compare_scenario(&sel, *t, pa, pb, work);
      shown++;
    }
  free(work);
  if (!err && !shown)
    err =
        LBMC_ERROR(LBMC_ERR_ARG,
                   "--compare: no scenario has both policies '%s' and '%s' (/points/policy)", a, b);
  if (err) lbmc_table_destroy(t);
  return err;
}
