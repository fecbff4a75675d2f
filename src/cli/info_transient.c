/* lbmc info FILE --transient: the estimates of a transient run (/transient of the results
 * file, docs/results-format.md) as a view of lbmc info (info.h), so in text, CSV and JSON:
 * a row per point, observation time and metric entry, with the pointwise interval and
 * the band simultaneous over the times. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "lbmc/check.h"

#define LBMC_TRANSIENT_TEXT_DEFAULT "customers,mean_queue,p_wait"
/* Times per point that the text form shows at most (about: every step-th, and the last). */
#define LBMC_TRANSIENT_TEXT_TIMES 40

/* A chosen transient metric entry: metric m of lbmc_transient_metric_names, pool j and
 * level k (j < 0: every pool; k < 0: every level). */
typedef struct {
  int m, j, k;
} lbmc_tr_pick;

/* 1: metric m has a pool axis; 2: pools and levels; 0: neither. */
static int lbmc_tr_axes(int m)
{
  const char *name = lbmc_transient_metric_names[m];
  return strcmp(name, "tail") == 0 ? 2 : strcmp(name, "mean_queue") == 0 ? 1 : 0;
}

/* The transient metrics' names, comma-separated, into buf. */
static const char *lbmc_tr_names(char *buf, size_t len)
{
  size_t used = 0;
  buf[0] = '\0';
  for (int m = 0; lbmc_transient_metric_names[m] && used < len; m++) {
    const int w =
        snprintf(buf + used, len - used, "%s%s", m ? ", " : "", lbmc_transient_metric_names[m]);
    used += w > 0 ? (size_t)w : 0;
  }
  return buf;
}

/* One name of --metrics: "customers", "mean_queue[2]", "tail[1][3]" (pools and levels from
 * 1; tail[1]: every level of pool 1), a bare name meaning every entry. */
static lbmc_err lbmc_tr_parse(const lbmc_results *res, const char *tok, lbmc_tr_pick *pick)
{
  const size_t len = strcspn(tok, "[");
  const char *p = tok + len;
  long idx[2] = {-1, -1};
  int count = 0, axes, bad = 0;
  char names[256];
  for (pick->m = 0; lbmc_transient_metric_names[pick->m]; pick->m++)
    if (strlen(lbmc_transient_metric_names[pick->m]) == len &&
        strncmp(lbmc_transient_metric_names[pick->m], tok, len) == 0)
      break;
  if (!lbmc_transient_metric_names[pick->m])
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--metrics: '%s' is not a transient metric; allowed with --transient: %s "
                      "(an entry as mean_queue[2] or tail[1][3])",
                      tok, lbmc_tr_names(names, sizeof names));
  axes = lbmc_tr_axes(pick->m);
  while (*p == '[' && !bad) { /* decimal digits only: "[ 1]", "[+1]" are refused */
    const size_t digits = strspn(p + 1, "0123456789");
    long v = 0;
    bad =
        digits == 0 || p[1 + digits] != ']' || count == axes || !lbmc_scan_long(p + 1, digits, &v);
    if (!bad) idx[count++] = v, p += digits + 2;
  }
  bad = bad || *p || (count >= 1 && (idx[0] < 1 || idx[0] > res->J)) ||
        (count == 2 && (idx[1] < 1 || idx[1] > res->K));
  if (bad)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--metrics: '%s' is not allowed; %.*s takes %s (the file has %d pool%s and "
                      "tail_k %d)",
                      tok, (int)len, tok,
                      axes == 0   ? "no index"
                      : axes == 1 ? "a pool from 1, e.g. mean_queue[1]"
                                  : "a pool and a level from 1, e.g. tail[1][2]",
                      res->J, res->J == 1 ? "" : "s", res->K);
  pick->j = idx[0] > 0 ? (int)idx[0] - 1 : -1;
  pick->k = idx[1] > 0 ? (int)idx[1] : -1;
  return LBMC_SUCCESS;
}

/* The picks of spec (or of every metric with spec NULL) into *picks (*n of them). */
static lbmc_err lbmc_tr_picks(const lbmc_results *res, const char *spec, lbmc_tr_pick **picks,
                              int *n)
{
  char buf[1024], *save = NULL;
  int cap = 0;
  lbmc_err err = LBMC_SUCCESS;
  *n = 0;
  if (!spec) {
    while (lbmc_transient_metric_names[cap]) cap++;
    if (!(*picks = malloc(sizeof **picks * (size_t)cap)))
      return LBMC_ERROR(LBMC_ERR_MEMORY, "info: out of memory");
    for (int m = 0; m < cap; m++) (*picks)[(*n)++] = (lbmc_tr_pick){m, -1, -1};
    return LBMC_SUCCESS;
  }
  snprintf(buf, sizeof buf, "%s", spec);
  cap = (int)strlen(buf) / 2 + 1;
  if (!(*picks = malloc(sizeof **picks * (size_t)cap)))
    return LBMC_ERROR(LBMC_ERR_MEMORY, "info: out of memory");
  for (char *tok = strtok_r(buf, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save))
    err = lbmc_tr_parse(res, tok, &(*picks)[(*n)++]);
  return err;
}

static const char *const lbmc_tr_cols[] = {"time",       "metric",     "entry",   "pool",
                                           "k",          "mean",       "lower",   "upper",
                                           "band_lower", "band_upper", "replicas"};
enum { TC_TIME, TC_METRIC, TC_ENTRY, TC_POOL, TC_K, TC_MEAN, TC_COLS = 11 };

/* The table: point, the axes, then lbmc_tr_cols (metric, pool and k hidden in text). */
static lbmc_err lbmc_tr_table(const lbmc_info *info, lbmc_table **t)
{
  const int A = info->grid ? info->grid->A : 0;
  char(*axis)[64] = calloc((size_t)A + 1, sizeof *axis);
  const char **cols = calloc((size_t)A + TC_COLS + 1, sizeof *cols);
  lbmc_err err = axis && cols ? LBMC_SUCCESS : LBMC_ERROR(LBMC_ERR_MEMORY, "info: out of memory");
  cols[0] = "point";
  for (int a = 0; !err && a < A; a++)
    cols[1 + a] = lbmc_info_axis_column(info->grid->axis_name[a], axis[a], 64);
  for (int c = 0; !err && c < TC_COLS; c++) cols[1 + A + c] = lbmc_tr_cols[c];
  if (!err) err = lbmc_table_create(1 + A + TC_COLS, cols, t);
  for (int c = TC_METRIC; !err && c <= TC_K; c++)
    (*t)->col[1 + A + c].hidden = c != TC_ENTRY && info->format == LBMC_FORMAT_TABLE;
  free(axis);
  free(cols);
  return err;
}

/* One row: point i, time s, metric m at pool j (0 without), level k (1 without). */
static lbmc_err lbmc_tr_row(const lbmc_info *info, lbmc_table *t, const int *kinds,
                            const lbmc_transient *e, long i, long s, int m, int j, int k)
{
  const int A = info->grid ? info->grid->A : 0, c = 1 + A, axes = lbmc_tr_axes(m);
  const char *name = lbmc_transient_metric_names[m];
  const size_t at = (size_t)s * e->values + (size_t)lbmc_transient_index(e->J, e->K, name, j, k);
  const double *part[5] = {e->mean, e->lower, e->upper, e->band_lower, e->band_upper};
  char entry[64];
  LBMC_CALL(lbmc_table_add_row(t));
  lbmc_table_int(t, 0, info->res->pt[i].index);
  for (int a = 0; a < A; a++)
    LBMC_CALL(lbmc_info_axis_cell(t, 1 + a, info->grid, a, kinds[a], info->res->pt[i].index));
  lbmc_table_real(t, c + TC_TIME, e->time[s]);
  LBMC_CALL(lbmc_table_text(t, c + TC_METRIC, name));
  if (axes == 0) snprintf(entry, sizeof entry, "%s", name);
  if (axes == 1) snprintf(entry, sizeof entry, "%s[%d]", name, j + 1);
  if (axes == 2) snprintf(entry, sizeof entry, "%s[%d][%d]", name, j + 1, k);
  LBMC_CALL(lbmc_table_text(t, c + TC_ENTRY, entry));
  if (axes >= 1) lbmc_table_int(t, c + TC_POOL, j + 1);
  if (axes == 2) lbmc_table_int(t, c + TC_K, k);
  for (int q = 0; q < 5; q++) lbmc_table_real(t, c + TC_MEAN + q, part[q][at]);
  lbmc_table_int(t, c + TC_COLS - 1, e->replicas);
  return LBMC_SUCCESS;
}

/* The rows of pick p at point i, time s. */
static lbmc_err lbmc_tr_pick_rows(const lbmc_info *info, lbmc_table *t, const int *kinds,
                                  const lbmc_transient *e, long i, long s, const lbmc_tr_pick *p)
{
  const int axes = lbmc_tr_axes(p->m);
  for (int j = axes ? (p->j < 0 ? 0 : p->j) : 0; j < (axes ? (p->j < 0 ? e->J : p->j + 1) : 1); j++)
    for (int k = axes == 2 ? (p->k < 0 ? 1 : p->k) : 1;
         k <= (axes == 2 ? (p->k < 0 ? e->K : p->k) : 1); k++)
      LBMC_CALL(lbmc_tr_row(info, t, kinds, e, i, s, p->m, j, k));
  return LBMC_SUCCESS;
}

lbmc_err lbmc_info_transient(const lbmc_info *info, const char *spec, lbmc_table **t, long *step)
{
  const lbmc_results *res = info->res;
  const int A = info->grid ? info->grid->A : 0;
  int *kinds, n = 0;
  lbmc_tr_pick *picks = NULL;
  lbmc_err err;
  *t = NULL;
  if (!res->trans)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--transient: %s has no /transient group: it is not the results of a "
                      "transient run (run.transient in the job file)",
                      info->path);
  if (!spec && info->format == LBMC_FORMAT_TABLE) spec = LBMC_TRANSIENT_TEXT_DEFAULT;
  *step = info->format == LBMC_FORMAT_TABLE && res->trans->T > LBMC_TRANSIENT_TEXT_TIMES + 1
              ? (res->trans->T + LBMC_TRANSIENT_TEXT_TIMES - 1) / LBMC_TRANSIENT_TEXT_TIMES
              : 1;
  kinds = calloc((size_t)A + 1, sizeof *kinds);
  err = kinds ? lbmc_tr_picks(res, spec, &picks, &n)
              : LBMC_ERROR(LBMC_ERR_MEMORY, "info: out of memory");
  if (!err) err = lbmc_tr_table(info, t);
  for (int a = 0; !err && a < A; a++) kinds[a] = lbmc_info_axis_kind(info->grid, a);
  for (long i = 0; !err && i < res->P; i++) {
    lbmc_transient e;
    if (!info->keep[i]) continue;
    lbmc_results_transient_view(res, i, &e);
    for (long s = 0; !err && s < e.times; s++) {
      if (s % *step != 0 && s != e.times - 1) continue;
      for (int p = 0; !err && p < n; p++)
        err = lbmc_tr_pick_rows(info, *t, kinds, &e, i, s, &picks[p]);
    }
  }
  free(kinds);
  free(picks);
  if (err) lbmc_table_destroy(t);
  return err;
}
