/* Metric names (docs/model.md, "Metric names"): the one spelling of a metric and of each
 * of its entries, read by lbmc_metric_parse and written by lbmc_metric_entry_name, so
 * that job files (run.precision.metric), lbmc sim's table, lbmc info --metrics and its
 * exports, and the Python package (lbmc_analysis.metrics) name an entry alike:
 * p_wait, utilization[2] (pool, 1-based), tail[2][3] (pool, level k), and
 * sojourn_quantiles[0.99] (the level as "%g" prints it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/check.h"
#include "lbmc/metrics.h"

const char *lbmc_metric_entry_name(int i, long entry, int J, int K, char *buf, size_t len)
{
  const lbmc_metric_info *m = lbmc_metric_get(i);
  (void)J;
  if (!m) {
    snprintf(buf, len, "?");
    return buf;
  }
  if (entry < 0 || m->shape == LBMC_SHAPE_SCALAR)
    snprintf(buf, len, "%s", m->name);
  else if (m->shape == LBMC_SHAPE_POOL)
    snprintf(buf, len, "%s[%ld]", m->name, entry + 1);
  else if (m->shape == LBMC_SHAPE_POOL_K)
    snprintf(buf, len, "%s[%ld][%ld]", m->name, entry / K + 1, entry % K + 1);
  else
    snprintf(buf, len, "%s[%g]", m->name, lbmc_quantile_level((int)entry));
  return buf;
}

/* "p_wait, ..., utilization[j], tail[j][k], sojourn_quantiles[q]" and the names. */
static void lbmc_metric_allowed(const char **names, char *allowed, size_t len)
{
  static const char *const forms[] = {"", "[j]", "[j][k]", "[q]"};
  allowed[0] = '\0';
  for (int i = 0; i < LBMC_METRICS; i++) {
    const lbmc_metric_info *m = lbmc_metric_get(i);
    size_t used = strlen(allowed);
    names[i] = m->name;
    snprintf(allowed + used, len - used, "%s%s%s", i ? ", " : "", m->name, forms[m->shape]);
  }
}

static lbmc_err lbmc_metric_unknown(const char *where, const char *text, const char *name)
{
  const char *names[LBMC_METRICS], *close;
  char allowed[512];
  lbmc_metric_allowed(names, allowed, sizeof allowed);
  close = lbmc_metric_find(name) < 0 ? lbmc_suggest(name, names, LBMC_METRICS) : NULL;
  return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not a metric; allowed: %s%s%s%s", where, text,
                    allowed, close ? " (did you mean '" : "", close ? close : "",
                    close ? "'?)" : "");
}

/* The bracketed indices after the name: up to two texts (without brackets) in idx; the
 * number found, or -1 when the rest is not a sequence of "[...]". */
static int lbmc_metric_brackets(const char *p, char idx[2][32])
{
  int n = 0;
  while (*p == '[') {
    size_t len = strcspn(p + 1, "[]");
    if (p[1 + len] != ']' || len == 0 || len >= 32 || n == 2) return -1;
    memcpy(idx[n], p + 1, len);
    idx[n++][len] = '\0';
    p += len + 2;
  }
  return *p ? -1 : n;
}

/* A 1-based index from 1 to top written in decimal digits only, or 0 (no blank, sign or
 * exponent: "[ 1]", "[+1]" and "[1e0]" are not the names lbmc prints). */
static long lbmc_metric_index(const char *text, long top)
{
  const size_t len = strlen(text);
  long v;
  if (len == 0 || strspn(text, "0123456789") != len) return 0;
  return lbmc_scan_long(text, len, &v) && v >= 1 && v <= top ? v : 0;
}

/* The quantile level as written (its "%g" spelling, or the same number), or -1. */
static int lbmc_metric_level(const char *text)
{
  double x;
  for (int l = 0; l < LBMC_QUANTILES; l++) {
    char printed[32];
    snprintf(printed, sizeof printed, "%g", lbmc_quantile_level(l));
    if (strcmp(text, printed) == 0 ||
        (lbmc_read_real(text, &x) && fabs(x - lbmc_quantile_level(l)) <= 1e-12))
      return l;
  }
  return -1;
}

/* "'<text>' is not allowed; <what the entries of metric m are>". */
static lbmc_err lbmc_metric_wrong_index(const char *where, const char *text,
                                        const lbmc_metric_info *m, int J, int K, int whole)
{
  char levels[96] = "";
  const char *name = m->name, *also = whole ? ", or the bare name for all of them" : "";
  switch (m->shape) {
  case LBMC_SHAPE_SCALAR:
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: '%s' is not allowed; %s is one number per point: write '%s'", where,
                      text, name, name);
  case LBMC_SHAPE_POOL:
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: '%s' is not allowed; %s has one value per pool: write '%s[j]' with 1 "
                      "<= j <= %d%s",
                      where, text, name, name, J, also);
  case LBMC_SHAPE_POOL_K:
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: '%s' is not allowed; %s has one value per pool and level: write "
                      "'%s[j][k]' with 1 <= j <= %d and 1 <= k <= %d (tail_k)%s",
                      where, text, name, name, J, K, also);
  default:
    for (int l = 0; l < LBMC_QUANTILES; l++) {
      size_t used = strlen(levels);
      snprintf(levels + used, sizeof levels - used, "%s%g", l ? ", " : "", lbmc_quantile_level(l));
    }
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: '%s' is not allowed; %s has one value per level: write '%s[q]' with q "
                      "one of %s%s",
                      where, text, name, name, levels, also);
  }
}

lbmc_err lbmc_metric_parse(const char *where, const char *text, int J, int K, int flags,
                           int *metric, long *entry)
{
  char name[64], idx[2][32];
  const size_t len = strcspn(text, "[");
  const lbmc_metric_info *m;
  const int whole = (flags & LBMC_METRIC_WHOLE) != 0;
  int i, n;
  long j = 0, k = 0;
  snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), text);
  i = len < sizeof name ? lbmc_metric_find(name) : -1;
  n = lbmc_metric_brackets(text + len, idx);
  if (i < 0 || n < 0) return lbmc_metric_unknown(where, text, name);
  m = lbmc_metric_get(i);
  if (i >= LBMC_M_PAIRS_FIRST && !(flags & LBMC_METRIC_PAIRS))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: '%s' is recorded only by runs with pair statistics (run.pairs: true "
                      "in a job file, --pairs for lbmc sim)",
                      where, text);
  *metric = i;
  *entry = m->shape == LBMC_SHAPE_SCALAR ? 0 : -1;
  if (n == 0 && (m->shape == LBMC_SHAPE_SCALAR || whole)) return LBMC_SUCCESS;
  switch (m->shape) {
  case LBMC_SHAPE_POOL:
    if (n == 1 && (j = lbmc_metric_index(idx[0], J))) *entry = j - 1;
    break;
  case LBMC_SHAPE_POOL_K:
    if (n == 2 && (j = lbmc_metric_index(idx[0], J)) && (k = lbmc_metric_index(idx[1], K)))
      *entry = (j - 1) * K + (k - 1);
    break;
  case LBMC_SHAPE_QUANTILE:
    if (n == 1) *entry = lbmc_metric_level(idx[0]);
    break;
  default: break;
  }
  if (*entry >= 0 && m->shape != LBMC_SHAPE_SCALAR) return LBMC_SUCCESS;
  return lbmc_metric_wrong_index(where, text, m, J, K, whole);
}
