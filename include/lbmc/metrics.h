/* The metrics lbmc measures (docs/model.md, "Metrics"), defined once in LBMC_METRIC_LIST.
 *
 * A replica's estimates are one flat vector of doubles: the metrics in list order,
 * each taking lbmc_metric_size(i, J, K) entries (1, J or J*K, the latter pool-major:
 * entry j*K + (k-1) is pool j, level k). NaN marks a ratio without observations.
 */
#ifndef LBMC_METRICS_H
#define LBMC_METRICS_H

#include <stddef.h>

#include "lbmc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  LBMC_SHAPE_SCALAR = 0,
  LBMC_SHAPE_POOL = 1,    /* J entries */
  LBMC_SHAPE_POOL_K = 2,  /* J x K entries */
  LBMC_SHAPE_QUANTILE = 3 /* LBMC_QUANTILES entries, at the levels lbmc_quantile_level */
} lbmc_shape;

/** Quantile levels of the sojourn and waiting-time distributions. */
#define LBMC_QUANTILES 4
#define LBMC_QUANTILE_LEVELS                                                                       \
  {                                                                                                \
    0.5, 0.9, 0.99, 0.999                                                                          \
  }

/* X(enum suffix, name, shape, units, description) */
#define LBMC_METRIC_LIST(X)                                                                        \
  X(P_WAIT, "p_wait", LBMC_SHAPE_SCALAR, "1",                                                      \
    "admitted arrivals that found their server busy / all arrivals")                               \
  X(P_BLOCK, "p_block", LBMC_SHAPE_SCALAR, "1", "blocked arrivals / all arrivals")                 \
  X(P_WAIT_OR_BLOCK, "p_wait_or_block", LBMC_SHAPE_SCALAR, "1",                                    \
    "arrivals that waited or were blocked / all arrivals")                                         \
  X(MEAN_SOJOURN, "mean_sojourn", LBMC_SHAPE_SCALAR, "time",                                       \
    "mean time from arrival to departure of admitted customers")                                   \
  X(MEAN_WAIT, "mean_wait", LBMC_SHAPE_SCALAR, "time",                                             \
    "mean time from arrival to start of service of admitted customers")                            \
  X(MEAN_QUEUE, "mean_queue", LBMC_SHAPE_POOL, "1",                                                \
    "time-average customers at a server of the pool, the one in service included")                 \
  X(UTILIZATION, "utilization", LBMC_SHAPE_POOL, "1",                                              \
    "time-average fraction of busy servers in the pool")                                           \
  X(ADMITTED_SHARE, "admitted_share", LBMC_SHAPE_POOL, "1",                                        \
    "share of admitted customers that went to the pool")                                           \
  X(TAIL, "tail", LBMC_SHAPE_POOL_K, "1",                                                          \
    "time-average fraction of the pool's servers holding at least k customers")                    \
  X(MESSAGES_PER_ARRIVAL, "messages_per_arrival", LBMC_SHAPE_SCALAR, "1",                          \
    "router-server messages counted by the simulator / arrivals")                                  \
  X(WITHDRAWALS_PER_ARRIVAL, "withdrawals_per_arrival", LBMC_SHAPE_SCALAR, "1",                    \
    "pull withdrawal messages / arrivals")                                                         \
  X(THROUGHPUT, "throughput", LBMC_SHAPE_SCALAR, "1/time",                                         \
    "admitted customers per unit time, divided by n")                                              \
  X(SOJOURN_QUANTILES, "sojourn_quantiles", LBMC_SHAPE_QUANTILE, "time",                           \
    "quantiles of the sojourn time of admitted customers, at the levels of attribute levels")      \
  X(WAIT_QUANTILES, "wait_quantiles", LBMC_SHAPE_QUANTILE, "time",                                 \
    "quantiles of the waiting time of admitted customers, at the levels of attribute levels")

typedef enum {
#define LBMC_X_METRIC_ENUM(id, name, shape, units, desc) LBMC_M_##id,
  LBMC_METRIC_LIST(LBMC_X_METRIC_ENUM)
#undef LBMC_X_METRIC_ENUM
      LBMC_METRICS
} lbmc_metric_id;

typedef struct {
  const char *name;
  lbmc_shape shape;
  const char *units;
  const char *description;
} lbmc_metric_info;

/** Flag of lbmc_metric_parse: a metric of several entries may be named without an index
 *  ("utilization", "tail"), meaning all of its entries (*entry = -1). */
#define LBMC_METRIC_WHOLE 1

/** Read a metric name as lbmc writes it everywhere (docs/model.md, "Metric names"):
 *  "p_wait" (a scalar), "utilization[2]" (pool 2 of J, 1-based), "tail[2][3]" (pool 2,
 *  level k = 3 of K, 1-based), "sojourn_quantiles[0.99]" (a level of
 *  LBMC_QUANTILE_LEVELS, as printed by "%g"). On success *metric is the index in
 *  LBMC_METRIC_LIST and *entry the entry within the metric's lbmc_metric_size(J, K)
 *  values (pool-major for tail: (j-1) K + (k-1)), or -1 for a whole metric (only with
 *  LBMC_METRIC_WHOLE in flags; a scalar is always entry 0). `where` prefixes messages.
 *  Errors: LBMC_ERR_ARG "<where>: '<text>' is not a metric; allowed: ..." (with a
 *  "did you mean" hint), or "... is not allowed; <what the metric's entries are>".
 *  Not collective. */
lbmc_err lbmc_metric_parse(const char *where, const char *text, int J, int K, int flags,
                           int *metric, long *entry);
/** The name of entry `entry` of metric i (J pools, K tail levels) as lbmc_metric_parse
 *  reads it ("utilization[2]", "tail[2][3]", "sojourn_quantiles[0.99]"), into buf of len
 *  bytes (48 are enough); entry -1 gives the bare metric name. Returns buf. */
const char *lbmc_metric_entry_name(int i, long entry, int J, int K, char *buf, size_t len);

/** Level of quantile i (0 <= i < LBMC_QUANTILES). */
double lbmc_quantile_level(int i);

/** Description of metric i (0 <= i < LBMC_METRICS); NULL if out of range. */
const lbmc_metric_info *lbmc_metric_get(int i);
/** Metric index by name, -1 if unknown. */
int lbmc_metric_find(const char *name);
/** Entries of metric i for J pools and K tail levels. */
size_t lbmc_metric_size(int i, int J, int K);
/** Offset of metric i in the flat vector. */
size_t lbmc_metric_offset(int i, int J, int K);
/** Length of the flat vector. */
size_t lbmc_metric_total(int J, int K);

/** How an entry of a metric is estimated from raw sums (docs/model.md, "Estimation"). */
typedef enum {
  LBMC_TERM_RATIO = 0,         /* a ratio of sums y / x (delta-method interval) */
  LBMC_TERM_TRIALS = 1,        /* a proportion of x independent opportunities (arrivals,
                                  admitted customers): an interval inside [0, 1], and a
                                  one-sided bound when no event was seen */
  LBMC_TERM_TIME_FRACTION = 2, /* a fraction of time (utilization, tail): inside [0, 1] */
  LBMC_TERM_QUANTILE = 3       /* a quantile: from histograms or class counts, not sums */
} lbmc_term_kind;

/** Entry e of metric i as the ratio y / x of a union of ticks whose records sum to
 *  sums[] (src/core/ticks.h layout; pool_servers[J] = N_j, n = total servers): the one
 *  definition of every metric. Returns the entry's kind; quantiles give y = x = 0.
 *  (Internal use by the replica driver and the point reduction.) */
lbmc_term_kind lbmc_metric_terms(int i, size_t e, const double *sums, int J, int K,
                                 const long *pool_servers, long n, double *y, double *x);

/** The metrics of a union of ticks: sums[] holds the element-wise sum of their tick
 *  records (src/core/ticks.h layout); pool_servers[J] = N_j; n = total servers.
 *  out has lbmc_metric_total(J, K) entries, each y / x of lbmc_metric_terms (NaN when
 *  x = 0, and for the quantiles); weights (NULL: not wanted) as many, each x (NaN for
 *  the quantiles): a value's numerator is value x weight. (Internal use by the point.) */
void lbmc_metrics_from_sums(const double *sums, int J, int K, const long *pool_servers, long n,
                            double *out, double *weights);

#ifdef __cplusplus
}
#endif
#endif
