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

static double lbmc_ratio(double num, double den) { return den > 0 ? num / den : NAN; }

void lbmc_metrics_from_sums(const double *S, int J, int K, const long *N, long n, double *out)
{
  double len = S[LBMC_TK_LEN], arrivals = S[LBMC_TK_ARRIVALS], admitted = 0;
  double *q = out + lbmc_metric_offset(LBMC_M_MEAN_QUEUE, J, K);
  double *u = out + lbmc_metric_offset(LBMC_M_UTILIZATION, J, K);
  double *share = out + lbmc_metric_offset(LBMC_M_ADMITTED_SHARE, J, K);
  double *tail = out + lbmc_metric_offset(LBMC_M_TAIL, J, K);
  for (int j = 0; j < J; j++) admitted += S[lbmc_tk_admitted(J, K, j)];
  out[lbmc_metric_offset(LBMC_M_P_WAIT, J, K)] = lbmc_ratio(S[LBMC_TK_WAITED], arrivals);
  out[lbmc_metric_offset(LBMC_M_P_BLOCK, J, K)] = lbmc_ratio(S[LBMC_TK_BLOCKED], arrivals);
  out[lbmc_metric_offset(LBMC_M_P_WAIT_OR_BLOCK, J, K)] =
      lbmc_ratio(S[LBMC_TK_WAITED] + S[LBMC_TK_BLOCKED], arrivals);
  out[lbmc_metric_offset(LBMC_M_MEAN_SOJOURN, J, K)] =
      lbmc_ratio(S[LBMC_TK_SUM_SOJOURN], S[LBMC_TK_DEPARTURES]);
  out[lbmc_metric_offset(LBMC_M_MEAN_WAIT, J, K)] =
      lbmc_ratio(S[LBMC_TK_SUM_WAIT], S[LBMC_TK_STARTS]);
  for (int j = 0; j < J; j++) {
    double server_time = len * (double)N[j];
    q[j] = lbmc_ratio(S[lbmc_tk_area_q(J, K, j)], server_time);
    u[j] = lbmc_ratio(S[lbmc_tk_area_tail(J, K, j, 1)], server_time);
    share[j] = lbmc_ratio(S[lbmc_tk_admitted(J, K, j)], admitted);
    for (int k = 1; k <= K; k++)
      tail[j * K + k - 1] = lbmc_ratio(S[lbmc_tk_area_tail(J, K, j, k)], server_time);
  }
  out[lbmc_metric_offset(LBMC_M_MESSAGES_PER_ARRIVAL, J, K)] =
      lbmc_ratio(S[LBMC_TK_MESSAGES], arrivals);
  out[lbmc_metric_offset(LBMC_M_WITHDRAWALS_PER_ARRIVAL, J, K)] =
      lbmc_ratio(S[LBMC_TK_WITHDRAWALS], arrivals);
  out[lbmc_metric_offset(LBMC_M_THROUGHPUT, J, K)] = lbmc_ratio(admitted, len * (double)n);
  for (int i = 0; i < LBMC_QUANTILES; i++) { /* filled from the histograms, if any */
    out[lbmc_metric_offset(LBMC_M_SOJOURN_QUANTILES, J, K) + (size_t)i] = NAN;
    out[lbmc_metric_offset(LBMC_M_WAIT_QUANTILES, J, K) + (size_t)i] = NAN;
  }
}
