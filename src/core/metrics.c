/* The metric table (include/lbmc/metrics.h: LBMC_METRIC_LIST, the one list of what
 * lbmc measures) and the metrics of a union of ticks: every metric a ratio of the
 * ticks' summed raw counts, sums and integrals (src/core/ticks.h; docs/model.md,
 * "Metrics"). */
#include "lbmc/metrics.h"

#include <math.h>
#include <string.h>

#include "ticks.h"

static const lbmc_metric_info lbmc_metric_table[] = {
#define LBMC_X_METRIC_INFO(id, name, shape, units, desc) {name, shape, units, desc},
    LBMC_METRIC_LIST(LBMC_X_METRIC_INFO)
#undef LBMC_X_METRIC_INFO
};

const lbmc_metric_info *lbmc_metric_get(int i)
{
  return (i >= 0 && i < LBMC_METRICS) ? &lbmc_metric_table[i] : NULL;
}

int lbmc_metric_find(const char *name)
{
  for (int i = 0; i < LBMC_METRICS; i++)
    if (strcmp(lbmc_metric_table[i].name, name) == 0) return i;
  return -1;
}

double lbmc_quantile_level(int i)
{
  static const double levels[LBMC_QUANTILES] = LBMC_QUANTILE_LEVELS;
  return (i >= 0 && i < LBMC_QUANTILES) ? levels[i] : NAN;
}

size_t lbmc_metric_size(int i, int J, int K)
{
  switch (lbmc_metric_table[i].shape) {
  case LBMC_SHAPE_QUANTILE: return LBMC_QUANTILES;
  case LBMC_SHAPE_POOL: return (size_t)J;
  case LBMC_SHAPE_POOL_K: return (size_t)J * (size_t)K;
  default: return 1;
  }
}

size_t lbmc_metric_offset(int i, int J, int K)
{
  size_t off = 0;
  for (int m = 0; m < i; m++) off += lbmc_metric_size(m, J, K);
  return off;
}

size_t lbmc_metric_total(int J, int K) { return lbmc_metric_offset(LBMC_METRICS, J, K); }

lbmc_term_kind lbmc_metric_terms(int i, size_t e, const double *S, int J, int K, const long *N,
                                 long n, double *y, double *x)
{
  const int j = (int)(e / (size_t)(i == LBMC_M_TAIL ? K : 1)), k = (int)(e % (size_t)K) + 1;
  double admitted = 0;
  *y = *x = 0;
  switch (i) {
  case LBMC_M_P_WAIT: *y = S[LBMC_TK_WAITED], *x = S[LBMC_TK_ARRIVALS]; return LBMC_TERM_TRIALS;
  case LBMC_M_P_BLOCK: *y = S[LBMC_TK_BLOCKED], *x = S[LBMC_TK_ARRIVALS]; return LBMC_TERM_TRIALS;
  case LBMC_M_P_WAIT_OR_BLOCK:
    *y = S[LBMC_TK_WAITED] + S[LBMC_TK_BLOCKED], *x = S[LBMC_TK_ARRIVALS];
    return LBMC_TERM_TRIALS;
  case LBMC_M_MEAN_SOJOURN:
    *y = S[LBMC_TK_SUM_SOJOURN], *x = S[LBMC_TK_SOJOURNS];
    return LBMC_TERM_RATIO;
  case LBMC_M_MEAN_WAIT: *y = S[LBMC_TK_SUM_WAIT], *x = S[LBMC_TK_WAITS]; return LBMC_TERM_RATIO;
  case LBMC_M_MEAN_QUEUE:
    *y = S[lbmc_tk_area_q(J, K, j)], *x = S[LBMC_TK_LEN] * (double)N[j];
    return LBMC_TERM_RATIO;
  case LBMC_M_UTILIZATION:
    *y = S[lbmc_tk_area_tail(J, K, j, 1)], *x = S[LBMC_TK_LEN] * (double)N[j];
    return LBMC_TERM_TIME_FRACTION;
  case LBMC_M_TAIL:
    *y = S[lbmc_tk_area_tail(J, K, j, k)], *x = S[LBMC_TK_LEN] * (double)N[j];
    return LBMC_TERM_TIME_FRACTION;
  case LBMC_M_MESSAGES_PER_ARRIVAL:
    *y = S[LBMC_TK_MESSAGES], *x = S[LBMC_TK_ARRIVALS];
    return LBMC_TERM_RATIO;
  case LBMC_M_WITHDRAWALS_PER_ARRIVAL:
    *y = S[LBMC_TK_WITHDRAWALS], *x = S[LBMC_TK_ARRIVALS];
    return LBMC_TERM_RATIO;
  case LBMC_M_ADMITTED_SHARE:
  case LBMC_M_THROUGHPUT:
    for (int p = 0; p < J; p++) admitted += S[lbmc_tk_admitted(J, K, p)];
    if (i == LBMC_M_THROUGHPUT) {
      *y = admitted, *x = S[LBMC_TK_LEN] * (double)n;
      return LBMC_TERM_RATIO;
    }
    *y = S[lbmc_tk_admitted(J, K, j)], *x = admitted;
    return LBMC_TERM_TRIALS;
  default: return LBMC_TERM_QUANTILE; /* from histograms or class counts, not from sums */
  }
}

void lbmc_metrics_from_sums(const double *S, int J, int K, const long *N, long n, double *out,
                            double *weights)
{
  for (int i = 0; i < LBMC_METRICS; i++) {
    const size_t off = lbmc_metric_offset(i, J, K), len = lbmc_metric_size(i, J, K);
    for (size_t e = 0; e < len; e++) {
      double y, x;
      const lbmc_term_kind kind = lbmc_metric_terms(i, e, S, J, K, N, n, &y, &x);
      out[off + e] = x > 0 ? y / x : NAN; /* quantiles (x = 0): filled from the histograms */
      if (weights) weights[off + e] = kind == LBMC_TERM_QUANTILE ? NAN : x;
    }
  }
}
