/* The estimates and the verdict of one grid point from its replicas (docs/model.md,
 * "Estimation" and "Verdicts").
 *
 * A point collects its replicas' records (the bytes of src/sim/record.h: raw sums per
 * segment of the run and the customers' times per quantile group), in any order; once
 * its first round (replicas 0 .. first_round - 1) is in, it chooses one warm-up for the
 * point (MSER on the replica-averaged series with warmup auto) and keeps of each
 * replica only what the estimators need. lbmc_point_reduce then gives, from replicas
 * 0 .. R - 1:
 *   - every metric as a ratio of sums pooled over the replicas (or over the batches of
 *     one replica), its interval (delta method, Korn-Graubard for proportions, a
 *     one-sided bound when no event was seen), quantiles from pooled histograms with
 *     Woodruff's interval;
 *   - a verdict, ok, unstable or not_stationary, with its evidence.
 * lbmc_point_next says what sequential (precision) mode does next. The result depends
 * only on the records, never on the order they came in: so on the rank counts, shards
 * and resumes. Nothing here is collective.
 */
#ifndef LBMC_POINT_H
#define LBMC_POINT_H

#include <stddef.h>
#include <stdint.h>

#include "lbmc/error.h"
#include "lbmc/model.h"
#include "lbmc/run_options.h"
#include "lbmc/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Precision target of sequential mode: rounds of replicas are added until the relative
 *  half-width of `metric` (entry `index`) is at most `relative`, or max_replicas are
 *  run; a point that is not stationary runs longer instead (its time doubled, up to
 *  max_time). */
typedef struct {
  int enabled;
  int metric;        /* index into LBMC_METRIC_LIST */
  long index;        /* entry within the metric (0 for scalars; the level of a quantile) */
  double relative;   /* target relative half-width, > 0 */
  long max_replicas; /* budget, >= replicas */
  double max_time;   /* longest run time per replica; 0: LBMC_MAX_TIME_FACTOR x the time
                        setting */
} lbmc_precision;

/** The default of lbmc_precision.max_time: this many times the time setting (a point not
 *  yet stationary may have its run doubled four times). */
#define LBMC_MAX_TIME_FACTOR 16

/* X(enum suffix, bit, name, meaning): the evidence of a verdict, defined once. */
#define LBMC_EVIDENCE_LIST(X)                                                                      \
  X(RHO, 0, "rho_at_least_one", "rho >= 1 with unlimited buffers: the servers cannot keep up")     \
  X(CAP, 1, "customer_cap", "a replica exceeded the cap on customers in the system")               \
  X(DRIFT, 2, "drift",                                                                             \
    "the customers in the system grow linearly, without slowing down (drift test)")                \
  X(NEAR_CAP, 3, "warmup_near_cap",                                                                \
    "the warm-up rule truncated near its cap (half the run): the transient lasts about as long "   \
    "as the run")                                                                                  \
  X(HALVES, 4, "halves_differ",                                                                    \
    "the first and second halves of the measured period differ in customers per server")           \
  X(SHORT, 5, "replicas_short",                                                                    \
    "the replicas are short against the system's relaxation time (their eighths are "              \
    "correlated): with few replicas the intervals undercover")                                     \
  X(CORRELATED, 6, "batches_correlated",                                                           \
    "the batch means of the one replica stay correlated after merging")                            \
  X(EMPTY, 7, "no_customers", "no customer arrived (or departed) in the measured period")          \
  X(GROWING, 8, "still_growing",                                                                   \
    "the customers in the system were still growing at the end of the run")                        \
  X(RELAX, 9, "relaxation_short",                                                                  \
    "the measured period is not many relaxation times long (integrated autocorrelation time of "   \
    "the customers in the system): the intervals would undercover")                                \
  X(TRANSIENT, 10, "warmup_short",                                                                 \
    "the warm-up leaves a transient from the start that may exceed a quarter of the standard "     \
    "error")                                                                                       \
  X(OVERLOAD, 11, "pool_overloaded",                                                               \
    "a pool receives more customers per unit time than its servers can serve (flow balance)")      \
  X(HEAVY_TAIL, 12, "heavy_tail",                                                                  \
    "a service law with infinite variance: the estimators' variance is infinite and no interval "  \
    "from the spread of replicas or batches is reliable, at any run length")                       \
  X(INFINITE, 13, "infinite_mean",                                                                 \
    "some metrics are infinite (mean waits with a service law of infinite variance): reported as " \
    "inf, without an interval")

enum {
#define LBMC_X_EV_ENUM(id, bit, name, meaning) LBMC_EV_##id = 1u << (bit),
  LBMC_EVIDENCE_LIST(LBMC_X_EV_ENUM)
#undef LBMC_X_EV_ENUM
};

/** Names of the evidence bits set in `evidence`, comma-separated, into buf (len bytes). */
const char *lbmc_evidence_names(unsigned evidence, char *buf, size_t len);
/** The evidence bits of comma-separated names (as lbmc_evidence_names writes them);
 *  names it does not know are left out. */
unsigned lbmc_evidence_bits(const char *names);

/* The levels and limits of the verdict's tests (docs/model.md, "Verdicts"), named once:
 * the tests (src/sim/point_reduce.c) and the descriptions of a results file's columns
 * read them. */
/** Level of the halves test and of the eighths' correlation test ("run longer"). */
#define LBMC_STATIONARITY_ALPHA 0.01
/** The eighths' correlation test is made with fewer replicas than this; with more, the
 *  replica means are close to normal even when short (measured: docs/model.md). */
#define LBMC_SHORT_MAX_REPLICAS 30
/** Level of the drift test for `unstable` (its false-alarm rate on stable systems). */
#define LBMC_DRIFT_ALPHA 1e-3
/** Deceleration constant of the drift test (lbmc_growth_test: sqrt(t) filling gives 0.82). */
#define LBMC_DRIFT_DECEL 0.85

/** The verdict of a point and its evidence. Times are in the model's unit. Evidence bits
 *  other than infinite_mean make the status unstable or not_stationary. */
typedef struct {
  lbmc_status status;      /* ok, unstable, not_stationary (precision_not_met: lbmc_point_next) */
  char reason[768];        /* why the status is not ok, with the numbers (and which metrics are
                              infinite, status ok or not); "" for ok without infinite metrics */
  unsigned evidence;       /* LBMC_EV_* bits behind the status */
  long replicas;           /* replicas behind the estimates */
  int doubling;            /* sequential mode's doublings of the run (not stationary) */
  double time;             /* the `time` setting x 2^doubling: the run per replica (auto) or
                              its measured period (fixed warm-up) */
  double warmup_used;      /* warm-up discarded per replica */
  double time_used;        /* measured time per replica, after the warm-up */
  double suggested_time;   /* not_stationary: a `time` setting to try; NaN otherwise */
  int warmup_near_cap;     /* MSER truncated in the last fifth before its cap */
  double halves_p;         /* p-value of the halves test (NaN: not made) */
  double short_p;          /* p-value of the eighths' correlation test (NaN: not made) */
  double growth;           /* drift test: customers accumulated per arrival in the last
                              quarter, pooled over replicas (NaN: not made) */
  double growth_lower;     /* its one-sided lower confidence bound */
  double decel_lower;      /* lower bound of Delta4 - c Delta3 (> 0: growth not slowing) */
  double relaxation_time;  /* integrated autocorrelation time of the customers in the system
                              (time; NaN: not estimated) */
  double relaxation_upper; /* its one-sided upper bound at 90%, what the rules use */
  double transient_bound;  /* bound on the bias the start leaves after the warm-up, over the
                              standard error of the mean customers in the system (NaN: none) */
  double overload;         /* flow balance: the largest lower bound (level 1 - 1e-3) of a pool's
                              inflow over its capacity (above 1: overloaded; NaN: no pool with
                              unlimited buffers) */
  long suggested_replicas; /* not_stationary or unproven growth: replicas that would decide
                              (0: more replicas would not help) */
} lbmc_verdict;

/** A block of estimates: seven arrays of `total` entries. A point's (lbmc_point_estimates,
 *  owned by the point) has lbmc_metric_run_total(J, K, pairs) entries in the metric order
 *  of lbmc/metrics.h; a results file's holds its points' one after another. Ends that do
 *  not exist are NaN; `flags` are the LBMC_IV_* bits of src/stats/estimators.h (names:
 *  lbmc_interval_flag_names). */
typedef struct {
  size_t total; /* entries of each array */
  double *estimate, *half_width, *std_err, *lower, *upper, *upper_bound;
  unsigned *flags;
} lbmc_estimates;

/** The double arrays of lbmc_estimates, estimate .. upper_bound: a point keeps them, and
 *  a results object its per-point copies (mean .. upper_bound), in this order in one
 *  block of LBMC_ESTIMATE_ARRAYS arrays. */
#define LBMC_ESTIMATE_ARRAYS 6
/** A block of `total` estimates into *e (its seven arrays in one allocation): values
 *  NaN, flags 0. The point holds one (lbmc_point_estimates) and a results file one for
 *  all its points (P x total). Free with lbmc_estimates_free. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_estimates_alloc(lbmc_estimates *e, size_t total);
/** Free the arrays of e (from lbmc_estimates_alloc) and zero it; nothing for a zeroed e. */
void lbmc_estimates_free(lbmc_estimates *e);
/** Copy entries from .. from + n - 1 of every array of src to entries to .. to + n - 1
 *  of dst (both large enough). */
void lbmc_estimates_copy(lbmc_estimates *dst, size_t to, const lbmc_estimates *src, size_t from,
                         size_t n);

/** Names of the interval flags set in `flags` ("none_observed,upper_open"), into buf. */
const char *lbmc_interval_flag_names(unsigned flags, char *buf, size_t len);
/** Number of interval flags, and the name and meaning of flag bit b (NULL beyond). */
int lbmc_interval_flags(void);
const char *lbmc_interval_flag_name(int b);
const char *lbmc_interval_flag_meaning(int b);

/* X(enum suffix, name, across, description): the tables of the pair statistics of a
 * point with run.pairs (docs/model.md, "Pair statistics"), defined once. C = K + 1
 * levels: a customers for a < K, at least K for a = K. Tables within a pool are J x C x C,
 * entry [j][a][b]; across pools J x J x C x C, entry [i][j][a][b] (a in pool i, b in pool
 * j), NaN for i = j. */
#define LBMC_PAIR_TABLE_LIST(X)                                                                    \
  X(JOINT, "joint", 0,                                                                             \
    "P(Q1 = a, Q2 = b): the joint law of the queue lengths of two distinct servers of pool j "     \
    "chosen uniformly, [j][a][b] (a = K: at least K)")                                             \
  X(DEVIATION, "joint_deviation", 0,                                                               \
    "P(Q1 = a, Q2 = b) - P(Q1 = a) P(Q2 = b) within pool j, [j][a][b], the bias of the product "   \
    "of the estimated marginals removed (docs/model.md, Pair statistics)")                         \
  X(ACROSS, "across", 1,                                                                           \
    "P(Q1 = a, Q2 = b) for a server of pool i and one of pool j chosen uniformly, [i][j][a][b]; "  \
    "NaN for i = j")                                                                               \
  X(ACROSS_DEVIATION, "across_deviation", 1,                                                       \
    "P(Q1 = a, Q2 = b) - P(Q1 = a) P(Q2 = b) for a server of pool i and one of pool j, "           \
    "[i][j][a][b], the bias of the product removed; NaN for i = j")

typedef enum {
#define LBMC_X_PT_ENUM(id, name, across, desc) LBMC_PT_##id,
  LBMC_PAIR_TABLE_LIST(LBMC_X_PT_ENUM)
#undef LBMC_X_PT_ENUM
      LBMC_PAIR_TABLES
} lbmc_pair_table;

/** The parts of each table: the estimate, the ends of its two-sided interval at the
 *  point's confidence (NaN where none) and its standard error. */
typedef enum {
  LBMC_PP_MEAN = 0,
  LBMC_PP_LOWER,
  LBMC_PP_UPPER,
  LBMC_PP_STD_ERR,
  LBMC_PAIR_PARTS
} lbmc_pair_part;

/** The name of part k as results files write it: "mean", "lower", "upper", "std_err". */
const char *lbmc_pair_part_name(int k);
/** The name ("joint"), description, and 1 for the tables across pools, of table t. */
const char *lbmc_pair_table_name(int t);
const char *lbmc_pair_table_description(int t);
int lbmc_pair_table_across(int t);
/** Entries of table t for J pools and C levels: J C^2, or J^2 C^2 across pools. */
size_t lbmc_pair_table_size(int t, int J, int C);

/** The pair statistics of a point: v[t][part] has lbmc_pair_table_size(t, J, C) doubles,
 *  owned by the point. */
typedef struct {
  int J, C;
  double *v[LBMC_PAIR_TABLES][LBMC_PAIR_PARTS];
} lbmc_pair_estimates;

/** What a point keeps of replica i (after the warm-up is decided). */
typedef struct {
  int present;           /* 1 if the replica is in */
  int unstable;          /* 1 if it hit the customer cap */
  int64_t events;        /* arrivals plus departures in its measured period */
  double cpu_seconds;    /* CPU time of its segments */
  double growth;         /* its own last-quarter growth per arrival (evidence only) */
  const double *values;  /* lbmc_metric_run_total entries: its own ratios y / x (NaN when
                            x = 0) and quantiles of its retained customers (the pair
                            statistics, which need several units, NaN) */
  const double *weights; /* lbmc_metric_run_total entries: the denominator x of each ratio
                            (lbmc_metric_terms), NaN for the quantiles and the pair
                            statistics */
  const double *sums;    /* lbmc_run_segment_width raw sums over its measured period */
} lbmc_point_replica_info;

typedef struct lbmc_point_ lbmc_point;

/** The metrics of a transient run (--transient), in the order of lbmc_transient's
 *  values: the state at each time (mean_queue: J, tail: J x K, customers: 1) and the
 *  interval quantities over (t_{i-1}, t_i] (NaN at i = 0): p_wait, p_block (ratios of
 *  sums over replicas, delta-method intervals), throughput (departures / DT) and
 *  messages_per_arrival. */
#define LBMC_TRANSIENT_INTERVAL_METRICS 4

/** Estimates of a transient run: for each of `times` observation times and each of
 *  `values` values (layout above: lbmc_transient_index), the mean over the replicas
 *  that stayed below the runaway cap, a pointwise interval at the run's confidence c
 *  (Student t, replicas - 1 degrees of freedom) and a simultaneous band over the grid:
 *  Bonferroni, each time's interval at level 1 - (1 - c) / times, so that all the times
 *  of one value are covered together with probability >= c. Arrays are times x values,
 *  row-major; owned (lbmc_transient_free). */
typedef struct {
  long times;
  size_t values;
  int J, K;
  long replicas; /* pooled (below the cap) */
  long unstable; /* left out: they hit the runaway cap */
  double *time;  /* times */
  double *mean, *lower, *upper, *band_lower, *band_upper;
} lbmc_transient;

/** Index in a row of lbmc_transient of metric `name` ("mean_queue", "tail", "customers",
 *  "p_wait", "p_block", "throughput", "messages_per_arrival") at pool j and level k (1..K;
 *  ignored where the metric has no such axis); -1 for an unknown name. */
long lbmc_transient_index(int J, int K, const char *name, int j, int k);
/** The transient metrics' names, NULL-terminated. */
extern const char *const lbmc_transient_metric_names[];

/** The transient estimates of a transient point (p's run options have transient DT > 0)
 *  from the replicas folded so far, 0 .. R - 1 once replicas 0 .. R - 1 are in (the point
 *  folds each in order as it arrives and keeps only running moments), into *out (freed
 *  first).
 *  Errors: LBMC_ERR_MEMORY, LBMC_ERR_ARG (not a transient run). Not collective. */
lbmc_err lbmc_point_transient(const lbmc_point *p, long R, lbmc_transient *out);
void lbmc_transient_free(lbmc_transient *t);

/** A point of model m (set up; it must outlive the point) under run options o (copied),
 *  whose first round has first_round >= 1 replicas. one_replica: the point's interval
 *  comes from the batch means of replica 0 when it has one replica (the point keeps that
 *  replica's whole record). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_create(const lbmc_model *m, const lbmc_run_options *o, long first_round,
                           lbmc_point **p);
void lbmc_point_destroy(lbmc_point **p);

/** Add a replica record (size bytes). A record of another doubling than the point's is
 *  ignored (*used = 0; else 1). Errors: LBMC_ERR_ARG (not a valid record of this point's
 *  model), LBMC_ERR_MEMORY, LBMC_ERR_FILE (malformed histograms). */
lbmc_err lbmc_point_add(lbmc_point *p, const void *record, size_t size, int *used);

/** The point's doubling: how many times sequential mode doubled its run because it was
 *  not stationary (0 at creation). lbmc_point_set_doubling forgets every replica and
 *  starts doubling k (the run time x 2^k). */
int lbmc_point_doubling(const lbmc_point *p);
void lbmc_point_set_doubling(lbmc_point *p, int doubling);

/** Decide the point's warm-up now from replicas 0 .. R - 1 (all in), before its first
 *  round is complete: for partial results of an interrupted first round (with a fixed
 *  warm-up the point decides at its first record; otherwise at the end of the first
 *  round, with R = the first round). Nothing if already decided. Errors: LBMC_ERR_ARG
 *  (a replica below R is missing), LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_decide_early(lbmc_point *p, long R);

/** 1 when replicas 0 .. R - 1 are all in (and the warm-up is decided); for R = 1, also
 *  when replica 0's whole record is still kept for its batch means (it is until another
 *  replica is summarised, so a run stopped after its first replica can still reduce). */
int lbmc_point_ready(const lbmc_point *p, long R);

/** Estimates and verdict from replicas 0 .. R - 1 (lbmc_point_ready). work buffers are
 *  the point's. Errors: LBMC_ERR_ARG (not ready), LBMC_ERR_MEMORY, LBMC_ERR_FILE. */
lbmc_err lbmc_point_reduce(lbmc_point *p, long R);
const lbmc_verdict *lbmc_point_verdict(const lbmc_point *p);
const lbmc_estimates *lbmc_point_estimates(const lbmc_point *p);
/** Sequential mode's target (prec: NULL or disabled for none; copied): under the mean-field
 *  start's rule its entry holds the verdict with the customers in the system (docs/model.md,
 *  "The mean-field start's rule"). Set it once after lbmc_point_create, before the first
 *  reduction, wherever the point's reductions feed lbmc_point_next with prec. */
void lbmc_point_set_target(lbmc_point *p, const lbmc_precision *prec);
/** The entries the last reduction widened for their start bias (flag start_bias_widened):
 *  2 x total doubles, entry k's bound on the start bias at [k] and its standard error before
 *  the widening at [total + k], in the metric's units; NaN for the other entries. Owned by
 *  the point, valid until its next reduction. */
const double *lbmc_point_start_bias(const lbmc_point *p);
/** The pair statistics of the last reduction (NaN before one); NULL when the point's run
 *  does not record them (run.pairs off). */
const lbmc_pair_estimates *lbmc_point_pairs(const lbmc_point *p);
/** The bytes a point holds, by what they hold (docs/architecture.md, "What rank 0 holds of
 *  a point"): for measurements and for the tests that its memory does not grow with its
 *  replicas (every field but `file` is memory; `work` still grows with them). Replicas whose
 * records are in count in `replicas`. */
typedef struct {
  long replicas;    /* replicas whose records are in */
  long stored;      /* of them, summarised and in the point's store (0 .. stored - 1) */
  size_t slots;     /* in memory: the window of replicas in but not stored (ahead of the
                       first missing one, or before the warm-up is decided): its table and
                       entries */
  size_t records;   /* in memory: whole records (replica 0's while it is the only one
                       summarised), and with warmup auto, until the first round's warm-up is
                       decided, the memory of the store its records wait in (up to
                       LBMC_REP_STORE_BYTES, then a write buffer) and the buffer one is read
                       back into */
  size_t sums;      /* in memory: the rows (sums, parts, admissions, ...) of the window's
                       summarised replicas */
  size_t quantiles; /* in memory: the window's replicas' retained histograms or mixtures */
  size_t parts;     /* in memory: fine parts and transient values not yet folded in replica
                       order */
  size_t work;      /* in memory: the reduction's work space (its largest pass so far) */
  size_t store;     /* in memory: the store's rows while below LBMC_REP_STORE_BYTES, else
                       its write buffers, and the block the passes read through */
  size_t file;      /* in the stores' temporary files (not in memory): rows, quantile data,
                       and records waiting for the warm-up's decision */
} lbmc_point_held;

/** What p holds now, into out. Nothing is allocated. */
void lbmc_point_held_of(const lbmc_point *p, lbmc_point_held *out);

/** Replica i as the point keeps it (present = 0 if it is not in or not summarised yet).
 *  Its values and weights are made from its sums into the point's own space, and its sums
 *  are read from the store through the point's block: valid until the next call on p
 *  (read replicas in order: one store read per block). Errors: LBMC_ERR_FILE (its row
 *  could not be read from the point's store file: info is then not present),
 *  LBMC_ERR_MEMORY. */
lbmc_err lbmc_point_replica(const lbmc_point *p, long i, lbmc_point_replica_info *info);

/** What sequential mode does after a reduction of R replicas. */
typedef enum {
  LBMC_NEXT_DONE = 0, /* the point is finished (its verdict may now be precision_not_met) */
  LBMC_NEXT_MORE,     /* run replicas R .. *next - 1 at the same doubling */
  LBMC_NEXT_LONGER    /* not stationary: rerun from replica 0 at the next doubling (time x 2) */
} lbmc_next;

/** The decision after lbmc_point_reduce of R replicas under the precision target prec
 *  (NULL or disabled: DONE; the verdict stays as it is): unstable: DONE; not_stationary:
 *  LONGER while the doubled time stays within prec->max_time, else DONE; otherwise the
 *  target metric's relative half-width max(est - lower, upper - est) / |est| decides:
 *  DONE when reached, else MORE up to about R (relative / target)^2 replicas (at least
 *  R + 1, at most max_replicas; twice R when there is no interval yet), and at
 *  max_replicas DONE with status precision_not_met and the reason. *next: the replicas of
 *  the next round (MORE), or of the first round at the next doubling (LONGER). why[len]
 *  gets one line saying which and why. */
lbmc_next lbmc_point_next(lbmc_point *p, const lbmc_precision *prec, long *next, char *why,
                          size_t len);

#ifdef __cplusplus
}
#endif
#endif
