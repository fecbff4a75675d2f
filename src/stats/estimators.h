/* Private: steady-state estimators and their confidence intervals (docs/model.md,
 * "Estimation"). Pure functions on caller-owned arrays, or on accumulators fed one unit at
 * a time (the same formulas, below): no engine, no MPI, no I/O; none is collective, none
 * allocates (workspaces are the caller's).
 *
 * The data of every estimator is a set of independent "units" (the replicas of a
 * point, or the batches of one replica after the independence check), each holding
 * a numerator y_i and a denominator x_i: raw sums, never per-unit ratios. Unit i's
 * values sit at y[i * stride] and x[i * stride], so rows of a record (one unit per
 * row) can be read in place. A customer average (p_wait, mean_sojourn, ...) is the
 * ratio of the sums, sum y / sum x; a time average is the same with x the measured
 * time (times servers). A unit without observations (x_i = 0) contributes 0/0:
 * nothing to the estimate and nothing to the variance; it never makes a result NaN.
 *
 * Every interval is returned in an lbmc_interval, whose flags say when the data
 * cannot give an interval (and why), so that no caller prints "0 +/- 0".
 */
#ifndef LBMC_ESTIMATORS_H
#define LBMC_ESTIMATORS_H

#include <stddef.h>

#include "lbmc/error.h"

/* X(enum suffix, bit, name, meaning): the flags of an interval, defined once. */
#define LBMC_IV_FLAG_LIST(X)                                                                       \
  X(EMPTY, 0, "empty", "no observations at all (every denominator is 0): no estimate")             \
  X(NONE_OBSERVED, 1, "none_observed",                                                             \
    "the event was never observed: the estimate is 0 and upper_bound a one-sided bound")           \
  X(ALL_OBSERVED, 2, "all_observed", "every opportunity had the event: the estimate is 1")         \
  X(NO_INTERVAL, 3, "no_interval",                                                                 \
    "fewer than two units with observations: no interval can be computed")                         \
  X(CORRELATED, 4, "correlated",                                                                   \
    "the batch means failed the independence test even after merging: the interval is too "        \
    "narrow; run longer")                                                                          \
  X(BELOW_RANGE, 5, "below_range",                                                                 \
    "the quantile lies below the histogram's range: its value is unknown (upper is a bound)")      \
  X(ABOVE_RANGE, 6, "above_range",                                                                 \
    "the quantile lies above the histogram's range: its value is unknown (lower is a bound)")      \
  X(UPPER_OPEN, 7, "upper_open",                                                                   \
    "the interval's upper end lies beyond the data (too few observations in the tail)")            \
  X(LOWER_OPEN, 8, "lower_open", "the interval's lower end lies below the data")                   \
  X(UNRELIABLE, 9, "unreliable",                                                                   \
    "too few replicas (or batches) for this quantile level, or too few customers beyond the "      \
    "quantile, for an honest interval: more replicas or a longer run give one")                    \
  X(INFINITE, 10, "infinite",                                                                      \
    "the metric is infinite (a moment of the service law that it needs does not exist): "          \
    "reported as inf, without an interval")                                                        \
  X(HEAVY_TAIL, 11, "heavy_tail",                                                                  \
    "the estimator's variance is infinite (a heavy-tailed service law): no interval from the "     \
    "spread of replicas or batches is reliable, at any run length")                                \
  X(START_BIAS, 12, "start_bias_unbounded",                                                        \
    "the point is ok by the mean-field start's rule, which bounds the start bias of the metrics "  \
    "that are functions of the mean-field state only: this one's (a quantile, a pair statistic, "  \
    "messages) is not bounded; a run with a warm-up decides it")                                   \
  X(START_BIAS_WIDENED, 13, "start_bias_widened",                                                  \
    "the point is ok by the mean-field start's rule, which bounds this entry's start bias by "     \
    "more than 0.05 of its standard error: the estimate stands, the interval is widened by the "   \
    "bound on each side")                                                                          \
  X(FEW_EVENTS, 14, "few_events",                                                                  \
    "a rare tail level: fewer than 20 entries into it (arrivals to servers one below it) behind "  \
    "the estimate, too few to tell its spread: the interval is withheld, the estimate kept; more " \
    "replicas or a longer run give one")

enum {
#define LBMC_X_IV_FLAG(id, bit, name, meaning) LBMC_IV_##id = 1u << (bit),
  LBMC_IV_FLAG_LIST(LBMC_X_IV_FLAG)
#undef LBMC_X_IV_FLAG
};

/** Name of the lowest flag set in `flags` ("empty", ...), "" when none. */
const char *lbmc_iv_flag_name(unsigned flags);
/** One sentence saying what the lowest flag set in `flags` means, "" when none. */
const char *lbmc_iv_flag_meaning(unsigned flags);

/** An estimate with its two-sided interval at a level. Ends that do not exist are NaN
 *  (half_width is then NaN too); `flags` say why. */
typedef struct {
  double estimate;    /* point estimate; NaN only with LBMC_IV_EMPTY */
  double std_err;     /* standard error of the estimate; NaN if unknown */
  double lower;       /* lower end of the interval */
  double upper;       /* upper end of the interval */
  double half_width;  /* max(estimate - lower, upper - estimate): the symmetric reading */
  double upper_bound; /* one-sided upper bound at the level (LBMC_IV_NONE_OBSERVED), else NaN */
  double dof;         /* degrees of freedom of the t quantile, NaN if none */
  long units;         /* units (replicas, batches) the interval rests on */
  unsigned flags;     /* LBMC_IV_* */
} lbmc_interval;

/* ---- ratio estimators (ratio.c) ---------------------------------------------------- */

/** An interval without ends into out: estimate r, the rest unknown (NaN), `units` and
 *  `flags` as given. */
void lbmc_iv_point(lbmc_interval *out, double r, long units, unsigned flags);
/** The symmetric t interval estimate +/- t_dof se at the two-sided level into out (its
 *  estimate already set): std_err, dof, lower, upper, half_width. */
void lbmc_iv_t(lbmc_interval *out, double se, double dof, double level);

/** Ratio of sums over units with the delta-method (Taylor) interval.
 *  y, x: numerators and denominators of `units` units, unit i at [i * stride]
 *  (x_i >= 0, y_i >= 0). Estimate r = sum y / sum x. With residuals e_i = y_i - r x_i, the
 *  m units with x_i > 0 and xbar = sum x / m: se^2 = sum e_i^2 / (m (m - 1) xbar^2), and
 *  the interval r +/- t_{m-1} se at the two-sided `level` (0 < level < 1). Units with
 *  x_i = 0 count for nothing. sum x = 0 gives LBMC_IV_EMPTY (estimate NaN); every y_i = 0
 *  gives LBMC_IV_NONE_OBSERVED (estimate 0, no interval: never "0 +/- 0"; proportions get
 *  a bound from lbmc_proportion_interval); m < 2 gives LBMC_IV_NO_INTERVAL. With equal x_i (time
 * averages over equal periods) this is exactly the Student-t interval of the per-unit means.
 *  Source: W. G. Cochran, Sampling Techniques, 3rd ed., Wiley 1977, section 6.4 (the
 *  ratio estimator and its variance); for simulation, e.g. A. M. Law, Simulation
 *  Modeling and Analysis, 5th ed., section 9.5.2 (estimating ratios of expectations). */
void lbmc_ratio_interval(const double *y, const double *x, size_t units, size_t stride,
                         double level, lbmc_interval *out);

/** lbmc_ratio_interval with Hall's skewness-removing transformation of the studentised
 *  ratio: with g the sample skewness of the m linearised units y_i - r x_i,
 *  a = g / (3 sqrt m), b = g / (6 sqrt m), the monotone map
 *  G(T) = T + a T^2 + a^2 T^3 / 3 + b of T = (r - mu) / se is about Student's t_{m-1}, so the
 *  interval is [r - se G^-1(t), r - se G^-1(-t)]: longer on the side of the skew. Why: the
 *  time averages of a queue near saturation are right-skewed, and the symmetric interval's
 *  misses fall almost all below (M/M/1 at rho 0.95, 10 replicas of 10^5: 10 of 12 misses).
 *  With m < 6 the interval keeps that length but is centred on r: a sample skewness of
 *  3 to 5 units places it worse than no placing (M/M/1 means at 4 replicas: 91.7% placed,
 *  94.1% centred; at 4 replicas of lwl(2) one side was 13 standard errors), and from 6 on
 *  Hall's placing is as good (docs/model.md, "Ratios"). Needs m >= 3 (else as
 *  lbmc_ratio_interval); std_err is the delta method's, half_width the longer side.
 *  Source: P. Hall, "On the removal of skewness by transformation", J. R. Statist. Soc. B
 *  54 (1992) 221-228. */
void lbmc_ratio_interval_skew(const double *y, const double *x, size_t units, size_t stride,
                              double level, lbmc_interval *out);

/** The same estimate with the delete-one jackknife standard error instead of the delta
 *  method: r_(i) = (sum y - y_i) / (sum x - x_i) over the m units with x_i > 0,
 *  se^2 = (m - 1) / m sum (r_(i) - mean r_(.))^2; t_{m-1} interval around r. Needs
 *  m >= 2 and every r_(i) defined (else LBMC_IV_NO_INTERVAL).
 *  Source: B. Efron, The Jackknife, the Bootstrap and Other Resampling Plans, SIAM 1982,
 *  chapter 3. */
void lbmc_ratio_jackknife(const double *y, const double *x, size_t units, size_t stride,
                          double level, lbmc_interval *out);

/** Paired difference of two ratio estimators measured on the same units (common random
 *  numbers: unit i of A and of B share their random streams): estimate r_A - r_B with
 *  the delta method on d_i = e_Ai / xbar_A - e_Bi / xbar_B (xbar = sum x / units),
 *  se^2 = sum d_i^2 / (units (units - 1)), t_{units-1}. Every unit counts (a unit empty in
 *  both contributes d_i = 0). Either side empty: LBMC_IV_EMPTY. Source: Law (above),
 *  section 10.2.1 (paired-t) with the delta method of Cochran section 6.4. */
void lbmc_ratio_paired_difference(const double *ya, const double *xa, const double *yb,
                                  const double *xb, size_t units, size_t stride, double level,
                                  lbmc_interval *out);

/** Paired ratio r_A / r_B of two ratio estimators on the same units: the delta method on
 *  the log, d_i = e_Ai / (xbar_A r_A) - e_Bi / (xbar_B r_B), interval
 *  exp(log(r_A / r_B) +/- t se) (so it stays positive); std_err is that of the log.
 *  Needs r_A > 0 and r_B > 0, else LBMC_IV_NO_INTERVAL (or LBMC_IV_EMPTY). */
void lbmc_ratio_paired_ratio(const double *ya, const double *xa, const double *yb, const double *xb,
                             size_t units, size_t stride, double level, lbmc_interval *out);

/** Difference r_A - r_B of ratio estimators on independent sets of units (na units of A,
 *  nb of B): se^2 = se_A^2 + se_B^2 (each by lbmc_ratio_interval), Welch-Satterthwaite
 *  degrees of freedom. Source: B. L. Welch, Biometrika 34 (1947) 28-35. */
void lbmc_ratio_difference(const double *ya, const double *xa, size_t na, size_t stride_a,
                           const double *yb, const double *xb, size_t nb, size_t stride_b,
                           double level, lbmc_interval *out);

/** Two-sided p-value of the t test of "the quantity equals `null`" from an interval's
 *  estimate, std_err and dof; NaN when they do not exist. */
double lbmc_interval_p_value(const lbmc_interval *iv, double null);

/* ---- proportions (proportion.c) ---------------------------------------------------- */

/** One-sided upper confidence bound at `level` for a probability of which no event was
 *  seen in n independent opportunities: 1 - (1 - level)^(1/n) (the Clopper-Pearson bound
 *  for 0 events; about 3/n at 95%, the "rule of three"). n <= 0 gives 1.
 *  Source: C. J. Clopper and E. S. Pearson, Biometrika 26 (1934) 404-413;
 *  J. A. Hanley and A. Lippman-Hand, JAMA 249 (1983) 1743-1745. */
double lbmc_zero_event_bound(double n, double level);

/** Clopper-Pearson ("exact") two-sided interval for x events in n trials, 0 <= x <= n
 *  (real x and n allowed: effective sample sizes), through beta quantiles (GSL). */
void lbmc_clopper_pearson(double x, double n, double level, double *lower, double *upper);

/** Wilson score interval for x events in n trials (n > 0). Source: E. B. Wilson, JASA 22
 *  (1927) 209-212. */
void lbmc_wilson(double x, double n, double level, double *lower, double *upper);

/** A proportion as a ratio of sums over correlated units, with an interval inside [0, 1]:
 *  the Korn-Graubard interval, Clopper-Pearson at the effective sample size
 *  n* = p (1 - p) / se^2 (se from lbmc_ratio_interval) scaled by (z / t_{m-1})^2 for the
 *  units' degrees of freedom.
 *  trials = 1: x_i counts independent opportunities (arrivals; p_wait, p_block, shares):
 *    n* is capped at N = sum x; no event seen gives LBMC_IV_NONE_OBSERVED with the
 *    one-sided bound lbmc_zero_event_bound(N, level) in upper_bound (and upper), every
 *    opportunity an event gives LBMC_IV_ALL_OBSERVED with the mirror bound in lower.
 *    (The bound treats the N opportunities as independent; events that come in clusters
 *    of mean size c need a bound c times larger: docs/model.md.)
 *  trials = 0: a time fraction (utilization, tail): no cap; 0 observed gives
 *    LBMC_IV_NONE_OBSERVED without a bound (upper_bound NaN).
 *  Source: E. L. Korn and B. I. Graubard, Survey Methodology 24 (1998) 193-201. */
void lbmc_proportion_interval(const double *y, const double *x, size_t units, size_t stride,
                              double level, int trials, lbmc_interval *out);

/* ---- rare events (rare.c) ----------------------------------------------------------- */

/** Fewest entries into an event's set behind an interval: below it the interval is
 *  withheld (LBMC_IV_FEW_EVENTS). The information of a rare-event estimate is the number of
 *  its excursions, not the run's length: from a handful of them the spread of the units
 *  says nothing of the next one's length, and the Korn-Graubard interval of a deep tail
 *  level missed by far (one short visit in 10 replicas: 185 half-widths). Measured
 *  (docs/model.md, "Rare events"): tail levels of M/M/1, M/M/1/B and JSQ(2) with 1 to 20
 *  expected entries covered 83-95%, their misses nearly all below and far; the intervals
 *  this floor keeps cover 95-100% there and 99.4-99.7% at 20 to 50 entries, where a floor
 *  of 10 kept 92.8% of M/M/1's (whose entries come in clusters of about two). The count
 *  is the tail's, estimated from its time at the level (src/sim/point_reduce.c). */
#define LBMC_FEW_EVENTS_MIN 20.0

/** The rule for rare events: when `events` (the count of entries into the event's set
 *  behind iv, or an estimate of it; NaN: the rule does not apply) is below
 *  LBMC_FEW_EVENTS_MIN and iv has an interval, the interval is withheld: lower, upper,
 *  half_width and std_err become NaN and LBMC_IV_FEW_EVENTS is set; the estimate, dof and
 *  units stay. An interval already absent (nothing observed, empty, no interval) is left
 *  as it is, and so is the zero-event bound of lbmc_proportion_interval. */
void lbmc_few_events(double events, lbmc_interval *iv);

/* ---- batch means (batchmeans.c) ------------------------------------------------------ */

/** Von Neumann's ratio test of lag-1 correlation of e[0], e[stride], ..., (b values):
 *  C = 1 - sum_{i<b-1} (e_{i+1} - e_i)^2 / (2 sum (e_i - mean)^2); under independence
 *  (normal data) C is about N(0, (b - 2) / (b^2 - 1)). Returns C and writes the one-sided
 *  p-value P(C' >= C) (small when the values are positively correlated) to *p_value.
 *  b < 3, or values all equal, give C = 0 and p-value 1 (no evidence).
 *  Sources: J. von Neumann, Ann. Math. Statist. 12 (1941) 367-395; L. C. Young, Ann.
 *  Math. Statist. 12 (1941) 293-300; G. S. Fishman, Discrete-Event Simulation, Springer
 *  2001, section 6.6.4. */
double lbmc_von_neumann(const double *e, size_t b, size_t stride, double *p_value);

/** How batches are merged (LBATCH-style). */
typedef struct {
  size_t max_batches; /* merge adjacent pairs while more than this (default 32: 10..30
                         batches suffice for the t interval, Schmeiser 1982) */
  size_t min_batches; /* never test with fewer batches than this (default 8, Fishman) */
  double beta;        /* level of the von Neumann test (default 0.10, Fishman-Yarberry) */
} lbmc_batch_rule;

/** Defaults: max_batches 32, min_batches 8, beta 0.10. */
void lbmc_batch_rule_default(lbmc_batch_rule *rule);

/** Batch means that check themselves: from b batches (y, x as in lbmc_ratio_interval),
 *  merge adjacent pairs (an odd one out joins the last pair) while more than
 *  rule->max_batches, then test the residuals e_i = y_i - r x_i with lbmc_von_neumann and
 *  merge again while the test rejects at rule->beta and at least 2 * min_batches remain.
 *  Writes the merged batches to wy[0..k), wx[0..k) (stride 1; caller-owned, b doubles
 *  each) and returns k. If the last test rejected, LBMC_IV_CORRELATED is set in *flags
 *  (other bits are kept). Feed wy, wx to lbmc_ratio_interval or lbmc_proportion_interval.
 *  Source: G. S. Fishman and L. S. Yarberry, INFORMS J. Computing 9 (1997) 296-310
 *  (LBATCH); B. Schmeiser, Operations Research 30 (1982) 556-568. */
size_t lbmc_batch_merge(const double *y, const double *x, size_t b, size_t stride,
                        const lbmc_batch_rule *rule, double *wy, double *wx, unsigned *flags);

/* ---- warm-up (warmup.c) -------------------------------------------------------------- */

/** MSER-k truncation of y[0..m): the observations are averaged in consecutive groups of
 *  `batch` (a trailing partial group is dropped), Z_1..Z_g; d* minimises
 *  MSER(d) = sum_{i>d} (Z_i - mean_{i>d} Z)^2 / (g - d)^2 over 0 <= d <= cap_groups
 *  (cap = g / 2 when cap_groups is 0 or larger; ties: the smaller d). Returns the number
 *  of observations to delete, batch * d*. *near_cap (if non-NULL) is 1 when d* lies in
 *  the last fifth of [0, cap] (d* > 0.8 cap, cap >= 1): the statistic was still falling
 *  where the search stops, so the run is too short to place the end of the transient.
 *  g < 2 gives 0. Apply it to the replica-averaged series (one warm-up per point).
 *  Sources: K. P. White, M. J. Cobb and S. C. Spratt, Proc. Winter Simulation Conf. 2000,
 *  755-760; K. P. White and S. Robinson, J. Simulation 4 (2010) 268-272. */
size_t lbmc_mser(const double *y, size_t m, size_t batch, size_t cap_groups, int *near_cap);

/** Evidence of unbounded growth (the drift test of the verdict "unstable", docs/model.md,
 *  "Verdicts"; its constants calibrated on the stable and unstable grids). */
typedef struct {
  double growth;       /* (Nbar_Q4 - Nbar_Q3) / arrivals in Q4: customers accumulated
                          per arrival in the last quarter (pooled over units) */
  double growth_lower; /* its one-sided lower confidence bound at 1 - alpha */
  double decel;        /* mean of Delta4 - c Delta3, Delta_k = Nbar_Qk - Nbar_Q(k-1) */
  double decel_lower;  /* its one-sided lower confidence bound at 1 - alpha */
  int proven;          /* growth_lower > g_min and decel_lower > 0 */
} lbmc_growth;

/** Drift test on the quarters Q1..Q4 of each unit's run: nbar[i * stride + k] is the
 *  time-average number of customers of unit i in quarter k (k = 0..3) and
 *  arrivals[i * stride] its arrivals in the last quarter. Growth is proven when the last
 *  quarter's accumulation per arrival is significantly above g_min (ratio estimator,
 *  one-sided at alpha) and the increments do not decelerate: Delta4 - c Delta3 is
 *  significantly positive (t, one-sided at alpha). A system that is not unstable, started
 *  empty, fills at most like the critically loaded one, whose mean grows like sqrt(t)
 *  (reflected Brownian motion): Delta4 / Delta3 = 0.82 for quarter means of sqrt(t)
 *  (0.84 for its values at the quarters' ends), so c = 0.85 keeps the false-alarm rate at
 *  most alpha for such systems and for stationary ones; linear growth (instability) has
 *  ratio 1. Needs units >= 2 (else
 *  proven = 0, bounds NaN). */
void lbmc_growth_test(const double *nbar, const double *arrivals, size_t units, size_t stride,
                      double alpha, double c, double g_min, lbmc_growth *out);

/* ---- streaming: the same estimators fed unit by unit (ratio.c, proportion.c, warmup.c) -- */

/* The data of a reduction can be too many units to hold as arrays (a point's replicas are
 * read from its store in blocks). Each accumulator below takes the units one at a time, in
 * unit order, in two passes over the same units: pass 1 (add1), then the turn (between the
 * passes: what pass 2 needs of pass 1), then pass 2 (add2) with every unit again, in the
 * same order and with the same values; a finisher then gives the interval. They do the
 * same floating-point operations in the same order as the array functions above, which are
 * themselves thin wrappers over them (one implementation of each formula): the results are
 * the same bits. Memory: a few doubles, whatever the units. */

/** A ratio of sums sum y / sum x over units fed one at a time: the data of
 *  lbmc_ratio_interval, lbmc_ratio_interval_skew and lbmc_proportion_interval.
 *  Pass 1 (lbmc_ratio_acc_add1, in unit order): sy += y, sx += x, m += (x > 0), whether some
 *  y != 0, units. The turn: r = sy / sx. Pass 2 (lbmc_ratio_acc_add2, the same units in the
 *  same order): e = y - r x, ss += e^2 over every unit, and over the units with x > 0 the
 *  skewness sums m2 += e^2, m3 += e^3. (The proportion's N = sum x and Y = sum y are sx and
 *  sy: the same sums in the same order.) */
typedef struct {
  double sy, sx;   /* pass 1: sums of y and x, in unit order */
  size_t units, m; /* pass 1: units fed; those with x > 0 */
  int observed;    /* pass 1: some y != 0 */
  double r;        /* the turn: sy / sx */
  double ss;       /* pass 2: sum of e^2 over every unit, e = y - r x */
  double m2, m3;   /* pass 2: sums of e^2 and e^3 over the units with x > 0 */
} lbmc_ratio_acc;

/** An empty accumulator (before pass 1). */
void lbmc_ratio_acc_init(lbmc_ratio_acc *a);
/** Pass 1: one unit's numerator y and denominator x. */
void lbmc_ratio_acc_add1(lbmc_ratio_acc *a, double y, double x);
/** Between the passes: r = sy / sx. */
void lbmc_ratio_acc_turn(lbmc_ratio_acc *a);
/** Pass 2: the same unit's y and x as in pass 1, in the same order. */
void lbmc_ratio_acc_add2(lbmc_ratio_acc *a, double y, double x);
/** Both passes over arrays (unit i at y[i * stride], x[i * stride]) into a fresh *a. */
void lbmc_ratio_acc_arrays(lbmc_ratio_acc *a, const double *y, const double *x, size_t units,
                           size_t stride);
/** lbmc_ratio_interval of the units fed (after pass 2). */
void lbmc_ratio_acc_interval(const lbmc_ratio_acc *a, double level, lbmc_interval *out);
/** lbmc_ratio_interval_skew of the units fed (after pass 2). */
void lbmc_ratio_acc_interval_skew(const lbmc_ratio_acc *a, double level, lbmc_interval *out);
/** lbmc_proportion_interval of the units fed (after pass 2; `trials` as there). */
void lbmc_ratio_acc_proportion(const lbmc_ratio_acc *a, double level, int trials,
                               lbmc_interval *out);

/** Two ratios measured on the same units, for lbmc_ratio_paired_difference and
 *  lbmc_ratio_paired_ratio. Pass 1 (add1): each side's pass 1 of lbmc_ratio_acc (sums over
 *  every unit). The turn: each side's r, n = the units fed and xbar = sx / n. Pass 2
 *  (add2): a = (y_A - r_A x_A) / xbar_A, b likewise, d = a - b (difference) or
 *  a / r_A - b / r_B (ratio), ss += d^2. */
typedef struct {
  lbmc_ratio_acc a, b; /* each side's pass 1 (and r) */
  int log_ratio;       /* 0: difference, 1: ratio (on the log scale) */
  double n, xa, xb;    /* the turn: units, xbar_A, xbar_B */
  double ss;           /* pass 2 */
} lbmc_paired_acc;

/** An empty paired accumulator: log_ratio 0 for the difference, 1 for the ratio. */
void lbmc_paired_acc_init(lbmc_paired_acc *a, int log_ratio);
/** Pass 1: unit i's y_A, x_A, y_B, x_B. */
void lbmc_paired_acc_add1(lbmc_paired_acc *a, double ya, double xa, double yb, double xb);
/** Between the passes. */
void lbmc_paired_acc_turn(lbmc_paired_acc *a);
/** Pass 2: the same unit's values as in pass 1, in the same order. */
void lbmc_paired_acc_add2(lbmc_paired_acc *a, double ya, double xa, double yb, double xb);
/** lbmc_ratio_paired_difference (or, as initialised, lbmc_ratio_paired_ratio) of the units
 *  fed (after pass 2). */
void lbmc_paired_acc_interval(const lbmc_paired_acc *a, double level, lbmc_interval *out);

/** The drift test's data (lbmc_growth_test) fed one unit at a time. The number of units n
 *  and the deceleration factor c are given at the start (pass 1's mean of the increments
 *  divides by n): exactly n units must be fed in each pass. Pass 1 (add1, a unit's four
 *  quarter means q[0..3] and its last quarter's arrivals): sy += q3 - q2, sx += arrivals,
 *  dbar += ((q3 - q2) - c (q2 - q1)) / n. The turn: r = sy / sx. Pass 2 (add2):
 *  e = (q3 - q2) - r arrivals, d = (q3 - q2) - c (q2 - q1), ssr += e^2,
 *  ssd += (d - dbar)^2. One accumulation can be finished at several alpha and g_min. */
typedef struct {
  double n, c;         /* given: units, deceleration factor */
  size_t units;        /* units n as given */
  double sy, sx, dbar; /* pass 1 */
  double r;            /* the turn */
  double ssr, ssd;     /* pass 2 */
} lbmc_growth_acc;

/** An empty drift accumulator for `units` units and factor c. */
void lbmc_growth_acc_init(lbmc_growth_acc *a, size_t units, double c);
/** Pass 1: a unit's quarter means q[0..3] and its arrivals in the last quarter. */
void lbmc_growth_acc_add1(lbmc_growth_acc *a, const double *q, double arrivals);
/** Between the passes. */
void lbmc_growth_acc_turn(lbmc_growth_acc *a);
/** Pass 2: the same unit's values as in pass 1, in the same order. */
void lbmc_growth_acc_add2(lbmc_growth_acc *a, const double *q, double arrivals);
/** lbmc_growth_test of the units fed (after pass 2) at one-sided level alpha and threshold
 *  g_min. */
void lbmc_growth_acc_test(const lbmc_growth_acc *a, double alpha, double g_min, lbmc_growth *out);

/* ---- relaxation time (relax.c) ------------------------------------------------------- */

/** Fewest batches per unit a scale of lbmc_relax_estimate is read at. */
#define LBMC_RELAX_MIN_BATCHES 8
/** The integrated autocorrelation time of the customers in the system, and how it was
 *  read. */
typedef struct {
  double tau;       /* tau (time), corrected for the batch length; INFINITY when the batches
                       are far shorter than tau (no reading), NaN if it cannot be estimated */
  double tau_upper; /* its one-sided upper confidence bound at `level` */
  double tau_lower; /* its one-sided lower confidence bound at `level` (0 without a reading) */
  double reading;   /* var_inf / (2 var) at `scale`, before the correction (a lower bound) */
  double var;       /* the marginal variance of the series */
  double var_inf;   /* l Var(mean over l) at l = `scale` */
  double scale;     /* the batch length l it was read at (time) */
  double dof;       /* degrees of freedom of var_inf */
  int resolved;     /* scale >= window x tau: the reading is near its limit */
} lbmc_relax;

/** Integrated autocorrelation time tau = int_0^inf Corr(N_0, N_t) dt of a stationary
 *  series N observed on `units` independent units of m equal parts each (part_len of
 *  time): area[u m + i], len[u m + i] the integral of N and the time of part i of unit u.
 *  With var the marginal variance Var(N_t) (from samples), tau = sigma_inf^2 / (2 var),
 *  sigma_inf^2 = lim T Var(Nbar_T). Batch means of growing length l = part_len x 1, 2,
 *  4, ... within the units (at least LBMC_RELAX_MIN_BATCHES per unit) give
 *  V(l) = l x (pooled within-unit variance of the batch means), which approaches
 *  sigma_inf^2 from below like f(l / tau) (about 1 - 1.25 tau / l): each reading is
 *  corrected with the f of M/M/1 in heavy traffic (the slowest approach among the queues
 *  studied; faster ones make the correction err on the long side), and the first with
 *  l >= window x tau is used (a self-consistent window, as Sokal's); if none, tau is not
 *  resolved, and the units' whole means (T times their variance) may raise its lower
 *  bound (never resolve it: their spread is what the interval itself rests on).
 *  tau_upper, tau_lower: the same correction of the reading's chi-square upper and lower
 *  bounds (V dof / sigma^2 about chi-square on dof). Sources: A. D. Sokal, "Monte Carlo
 *  methods in statistical mechanics: foundations and new algorithms", in Functional
 *  Integration, Plenum 1997 (the integrated autocorrelation time and self-consistent
 *  windows); N. Madras and A. D. Sokal, J. Stat. Phys. 50 (1988) 109-186; G. S. Fishman,
 *  Discrete-Event Simulation, Springer 2001, 6.6 (batch means of growing size). var <= 0 or
 *  no data: tau NaN. */
void lbmc_relax_estimate(const double *area, const double *len, size_t units, size_t m,
                         double part_len, double var_within, double var, double window,
                         double level, lbmc_relax *out);

/** Most parts per unit that a unit's summary (lbmc_relax_unit) holds the readings of, and
 *  its batch sizes 1, 2, 4, 8 (those with at least LBMC_RELAX_MIN_BATCHES batches). */
#define LBMC_RELAX_UNIT_PARTS  64
#define LBMC_RELAX_UNIT_LEVELS 4
/** What lbmc_relax_estimate reads of one unit of m <= LBMC_RELAX_UNIT_PARTS parts: per batch
 *  size 2^k, the sum of squares of its batch means about their mean and its degrees of
 *  freedom (0 with fewer than two batches), and the unit's whole sums y (area) and x
 *  (time), each added in part order. 88 bytes instead of the unit's 2 m doubles. */
typedef struct {
  double ss[LBMC_RELAX_UNIT_LEVELS], dof[LBMC_RELAX_UNIT_LEVELS];
  double y, x;
  size_t m;
} lbmc_relax_unit;

/** The summary of one unit's parts area[0 .. m - 1], len[0 .. m - 1] (m <=
 *  LBMC_RELAX_UNIT_PARTS; readings of longer units are not kept). */
void lbmc_relax_unit_of(const double *area, const double *len, size_t m, lbmc_relax_unit *out);

/** lbmc_relax_estimate from the units' summaries, read one at a time in unit order
 *  (get(ctx, u), u = 0 .. units - 1, each pointer used before the next call): the same
 *  arithmetic in the same order, so the same bits as lbmc_relax_estimate on the arrays the
 *  summaries were made of, without holding units x m parts. Errors: LBMC_ERR_ARG (m above
 *  LBMC_RELAX_UNIT_PARTS, or a summary of another m). */
lbmc_err lbmc_relax_estimate_units(const lbmc_relax_unit *(*get)(const void *ctx, size_t u),
                                   const void *ctx, size_t units, size_t m, double part_len,
                                   double var_within, double var, double window, double level,
                                   lbmc_relax *out);

/** f(x) = l Var(mean over l) / sigma_inf^2 at l = x tau (tau the integrated autocorrelation
 *  time): how much of the long-run variance a batch of length l holds, for the queue length
 *  of M/M/1 in heavy traffic (the table of lbmc_relax_estimate: exact at rho = 0.95, about
 *  1 - 1.25 / x for x >= 20; the slowest approach of the systems lbmc models, so dividing a
 *  batch-means variance by it errs on the large side). In (0, 1]; 1 for x = inf, NaN for a
 *  NaN or negative x. Source: G. S. Fishman, "Discrete-Event Simulation", Springer 2001,
 *  6.6; the spectral decomposition of the M/M/1 generator. */
double lbmc_relax_length_factor(double x);

/** Count, mean and sums of squared and cubed deviations of a sample. */
typedef struct {
  double n, mean, m2, m3;
} lbmc_moments;

/** Add sample b to sample a (the moments of their union; b with n = 0 changes nothing).
 *  Source: T. F. Chan, G. H. Golub and R. J. LeVeque, "Updating formulae and a pairwise
 *  algorithm for computing sample variances", Stanford CS report 79-773 (1979), and its
 *  third-moment form (P. Pebay, Sandia report SAND2008-6212). */
void lbmc_moments_add(lbmc_moments *a, const lbmc_moments *b);

/** The envelope G(x) of the transient a start leaves, x = time / tau (tau the integrated
 *  autocorrelation time): the integral of the mean deficit beyond time x tau is at most
 *  deficit0 x tau x G(x). G = 1.1 G_RBM, G_RBM that of reflected Brownian motion started
 *  at 0, the heavy-traffic limit of a queue started empty, whose deficit decays like
 *  t^{-3/2} e^{-t/(2 tau)} (G_RBM(0) = 1/2 by the Poisson equation, G_RBM(2) = 0.072,
 *  G_RBM(5) = 0.0084, G_RBM(10) = 3.6e-4; tabulated by quadrature of the law of the
 *  maximum of Brownian motion with drift). M/M/1 at rho = 0.95 from empty is within 3% of
 *  it (exact); a many-server queue (Ornstein-Uhlenbeck: e^{-x}) falls faster beyond
 *  x = 4.7 and up to twice as slowly before, where MSER sees its large transient. Source:
 *  J. Abate and W. Whitt, "Transient behavior of regulated Brownian motion, I: starting at
 *  the origin", Adv. Appl. Probab. 19 (1987) 560-598. */
double lbmc_transient_envelope(double x);

/** Bound on the bias that a start `deficit` away from the stationary mean leaves in the
 *  mean over a measured period of `measured` after `warmup` (both time, from the start):
 *  |deficit| tau G(warmup / tau) / measured (lbmc_transient_envelope). NaN without tau or
 *  time. */
double lbmc_transient_bound(double deficit, double tau, double warmup, double measured);

/** The smallest warm-up with lbmc_transient_bound at most `target` (0 if none is needed;
 *  NaN if it cannot be said). */
double lbmc_transient_warmup(double deficit, double tau, double measured, double target);

#endif
