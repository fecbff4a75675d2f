/* Private: histograms of sojourn and waiting times without a fixed range, and quantiles
 * with intervals from histograms and from Erlang mixtures (docs/model.md, "Quantiles").
 *
 * A value x >= 0 is binned as v = x / scale, where `scale` is the model's own time
 * scale (e.g. the mean service time 1 / sum_j beta_j mu_j): the same model in other time
 * units fills the same bins. A positive v falls in the bin of its binary exponent e
 * (2^e <= v < 2^(e+1)) and of the top LBMC_DHIST_SUB_BITS bits of its mantissa
 * (HdrHistogram-like), for e in [LBMC_DHIST_EMIN, LBMC_DHIST_EMIN + LBMC_DHIST_OCTAVES):
 * 64 octaves, v from 2.3e-10 to 4.3e9 time scales, 64 bins per octave. Exact zeros (a
 * customer served at once), values below the range and values above it are counted
 * apart (zero, under, over), never clamped into a bin; the smallest positive and the
 * largest value are kept. A bin also remembers its first value and whether every later
 * value equalled it: an atom (deterministic service, a point mass) is then known
 * exactly, not spread over its bin.
 *
 * Bin error: a reported quantile lies in the bin of the exact empirical quantile of the
 * values recorded (the ceil(p N)-th smallest): it is that value itself when the bin holds
 * one value only (an atom), else it is interpolated linearly inside the bin between
 * max(bin's lower edge, min) and min(bin's upper edge, max). So it differs from the exact
 * one by less than one bin width, 1/64 = 1.5625% of either value, and never lies above
 * the largest value seen (nor below the smallest). A quantile among the under- or
 * overflow is reported unknown (LBMC_IV_BELOW_RANGE / LBMC_IV_ABOVE_RANGE).
 */
#ifndef LBMC_DHIST_H
#define LBMC_DHIST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "estimators.h"
#include "lbmc/error.h"

#define LBMC_DHIST_SUB_BITS 6
#define LBMC_DHIST_SUB      (1 << LBMC_DHIST_SUB_BITS)
#define LBMC_DHIST_EMIN     (-32) /* lowest binary exponent of v = x / scale in range */
#define LBMC_DHIST_OCTAVES  64
#define LBMC_DHIST_BINS     (LBMC_DHIST_OCTAVES * LBMC_DHIST_SUB)
/** Most bytes lbmc_dhist_pack writes. */
#define LBMC_DHIST_PACK_MAX (3 * 8 + 4 * 10 + (size_t)LBMC_DHIST_BINS * (2 + 10 + 8))

/** A histogram (about 64 KiB). Fields are read-only outside dhist.c and dhist_add. */
typedef struct {
  double scale;     /* time unit of the bins (time), > 0 */
  double inv_scale; /* 1 / scale */
  double min;       /* smallest positive value added (time); +inf when none */
  double max;       /* largest value added (time); 0 when none */
  uint64_t zero;    /* values equal to 0 */
  uint64_t under;   /* 0 < x < scale 2^LBMC_DHIST_EMIN */
  uint64_t over;    /* x >= scale 2^(LBMC_DHIST_EMIN + LBMC_DHIST_OCTAVES), +inf included */
  uint64_t counts[LBMC_DHIST_BINS];
  double first[LBMC_DHIST_BINS];        /* first value added to each bin (time) */
  uint64_t mixed[LBMC_DHIST_BINS / 64]; /* bit b: bin b holds different values */
} lbmc_dhist;

/** An empty histogram with bins in units of `scale` (> 0, finite; time). */
void lbmc_dhist_init(lbmc_dhist *h, double scale);

/** Add a value x >= 0 (time); a few bit operations (the engines' hot path). */
static inline void lbmc_dhist_add(lbmc_dhist *h, double x)
{
  double v = x * h->inv_scale;
  uint64_t u;
  int e;
  if (!(v > 0)) {
    h->zero++;
    return;
  }
  if (x < h->min) h->min = x;
  if (x > h->max) h->max = x;
  memcpy(&u, &v, sizeof u);
  e = (int)((u >> 52) & 0x7ff) - 1023 - LBMC_DHIST_EMIN; /* subnormal v: e < 0 */
  if (e < 0)
    h->under++;
  else if (e >= LBMC_DHIST_OCTAVES)
    h->over++;
  else {
    uint32_t b = (uint32_t)e * LBMC_DHIST_SUB +
                 (uint32_t)((u >> (52 - LBMC_DHIST_SUB_BITS)) & (LBMC_DHIST_SUB - 1));
    if (h->counts[b]++ == 0)
      h->first[b] = x;
    else if (x != h->first[b])
      h->mixed[b / 64] |= 1ULL << (b % 64);
  }
}

/** Add src into dst. Errors: LBMC_ERR_INTERNAL if their scales differ. */
lbmc_err lbmc_dhist_merge(lbmc_dhist *dst, const lbmc_dhist *src);

/** Values recorded (zero + under + bins + over). */
uint64_t lbmc_dhist_total(const lbmc_dhist *h);

/** Lower edge of bin b (0 <= b <= LBMC_DHIST_BINS; b = LBMC_DHIST_BINS gives the upper
 *  end of the range), in time units. */
double lbmc_dhist_edge(const lbmc_dhist *h, uint32_t b);

/** The p-quantile (0 < p < 1) of the values recorded, as described above, into *x.
 *  Returns 0, or LBMC_IV_EMPTY (no values; *x = NaN), LBMC_IV_BELOW_RANGE (*x = the lower
 *  end of the range: the quantile is positive and below it) or LBMC_IV_ABOVE_RANGE
 *  (*x = the upper end of the range: the quantile is at or above it). */
unsigned lbmc_dhist_quantile(const lbmc_dhist *h, double p, double *x);

/** Values recorded that are <= x, interpolated inside x's bin as the quantiles are (so
 *  count_le(quantile(p)) = p total); under- and overflow spread evenly over
 *  [min, range) and [range, max]. */
double lbmc_dhist_count_le(const lbmc_dhist *h, double x);

/** Serialise h into buf (cap bytes): raw doubles (native byte order) scale, min, max,
 *  then LEB128 varints zero, under, over, the number of non-empty bins, and for each
 *  2 * (its index difference from the previous one) + (1 if it holds one value only),
 *  its count, and then that value (a raw double). Returns the bytes needed; writes only
 *  when they fit (like snprintf). Deterministic: equal histograms give equal bytes. */
size_t lbmc_dhist_pack(const lbmc_dhist *h, unsigned char *buf, size_t cap);

/** Read a histogram written by lbmc_dhist_pack from buf (len bytes); *used = bytes read.
 *  Errors: LBMC_ERR_FILE (truncated or malformed data). */
lbmc_err lbmc_dhist_unpack(lbmc_dhist *h, const unsigned char *buf, size_t len, size_t *used);

/** Levels p with min(p, 1 - p) <= 1 - LBMC_Q_TAIL_LEVEL are tail levels (0.99, 0.999). */
#define LBMC_Q_TAIL_LEVEL 0.99
/** Units (replicas, or batches after merging) a tail level needs for an interval. */
#define LBMC_Q_TAIL_UNITS 20
/** Pooled observations beyond the quantile, min(p, 1 - p) N, an interval needs. */
#define LBMC_Q_MIN_BEYOND 10

/** 1 when a quantile interval is withheld (LBMC_IV_UNRELIABLE) whatever the data's spread:
 *  a tail level (above) from fewer than LBMC_Q_TAIL_UNITS units, or fewer than
 *  LBMC_Q_MIN_BEYOND pooled observations beyond the quantile (N = `total`). The rule
 *  never looks at the estimated variance: withholding the intervals whose variance looked
 *  too large kept those whose tail variance was underestimated (measured: the q0.99
 *  intervals kept covered 61%). Coverage under this rule: docs/model.md. */
int lbmc_quantile_withheld(double p, long units, double total);

/** A pooled distribution, as Woodruff's interval needs it: its quantile function (flags
 *  as lbmc_dhist_quantile), the observations pooled, and whether the units' counts are
 *  counts of indicators (trials = 1, histograms: the band is capped by the customers) or
 *  sums of probabilities (0, Erlang mixtures). */
typedef struct {
  unsigned (*quantile)(const void *ctx, double p, double *x);
  const void *ctx;
  double total;
  int trials;
} lbmc_pooled_dist;

/** Woodruff's interval for the p-quantile q (0 < p < 1) of the pooled distribution d,
 *  q and its flags qflags from d->quantile, from `n` independent units: Y[i] = unit i's
 *  observations <= q (interpolated as the quantile is), X[i] = its observations. The band
 *  for F(q) is the interval of the proportion sum Y / sum X (lbmc_proportion_interval,
 *  Korn-Graubard: inside [0, 1] and skewed near 0 and 1 as a proportion is), moved to be
 *  centred at p (F(q) = p inside a bin, F(q) > p at an atom); with `rule` non-NULL the
 *  units are batches of one run, first merged by lbmc_batch_merge (Y and X are then
 *  overwritten). The interval is [quantile(pl), quantile(ph)] of d (with histograms the
 *  bin error applies to its ends as to the estimate). No interval is given
 *  (LBMC_IV_UNRELIABLE) when lbmc_quantile_withheld says so. An upper end with less than
 *  one pooled observation beyond it, or beyond the range, is NaN (LBMC_IV_UPPER_OPEN); a
 *  lower end with less than one below it is 0 (LBMC_IV_LOWER_OPEN). std_err =
 *  (upper - lower) / (2 t) when both ends exist (its t-equivalent). work: 2 n doubles,
 *  caller-owned. A quantile outside the range (qflags) has estimate NaN and the range end
 *  as a one-sided bound in lower or upper.
 *  Sources: R. S. Woodruff, JASA 47 (1952) 635-646; C. A. Francisco and W. A. Fuller,
 *  Ann. Statist. 19 (1991) 454-469; R. R. Sitter and C. Wu, Statist. Probab. Lett. 52
 *  (2001) 353-358. */
void lbmc_woodruff(const lbmc_pooled_dist *d, double p, double q, unsigned qflags, double *Y,
                   double *X, size_t n, double level, const lbmc_batch_rule *rule, double *work,
                   lbmc_interval *out);

/** The second half of lbmc_woodruff: its interval from the band for F(q), `band` (the
 *  proportion interval of the units' sum Y / sum X, lbmc_proportion_interval with
 *  trials = d->trials, or lbmc_ratio_acc_proportion of the units fed one at a time) and
 *  the batch rule's flags `bflags` (0 without merging). lbmc_woodruff is the merging (if
 *  any) and the band, then this: the same bits. */
void lbmc_woodruff_from_band(const lbmc_pooled_dist *d, double p, double q, unsigned qflags,
                             const lbmc_interval *band, unsigned bflags, double level,
                             lbmc_interval *out);

/** lbmc_woodruff for the p-quantile of `pooled`, the sum of the histograms units[nunits]
 *  (same scale): Y and X from the units' histograms. work: 4 * nunits doubles. */
void lbmc_dhist_quantile_interval(const lbmc_dhist *const *units, size_t nunits,
                                  const lbmc_dhist *pooled, double p, double level,
                                  const lbmc_batch_rule *rule, double *work, lbmc_interval *out);

/* ---- Erlang mixtures (mixture.c) --------------------------------------------------- */

/** The classes of a mixture of Erlang laws: class c is Erlang(shape[c], rate[c]), the law
 *  of the wait (or sojourn) of a customer who joined a server holding shape[c] (or
 *  shape[c] - 1) customers under FCFS exponential service at rate[c]; shape 0 is the
 *  value 0. Counts of customers per class are kept apart (they add over replicas). */
typedef struct {
  size_t classes;     /* C */
  const int *shape;   /* C: k >= 0 */
  const double *rate; /* C: > 0 (1/time) */
} lbmc_erlang_mix;

/** sum_c counts[c] P(Erlang(shape_c, rate_c) <= x) (GSL's gamma CDF); counts: C. */
double lbmc_mix_count_le(const lbmc_erlang_mix *mix, const double *counts, double x);

/** The p-quantile (0 < p < 1) of the mixture with weights counts[C] (no binning error):
 *  the root of count_le(x) = p sum counts (Brent's method, GSL, relative tolerance
 *  1e-12), bracketed by the classes' own quantiles. Returns 0, or LBMC_IV_EMPTY (*x NaN)
 *  when every count is 0. */
unsigned lbmc_mix_quantile(const lbmc_erlang_mix *mix, const double *counts, double p, double *x);

/** Woodruff interval for the p-quantile of a mixture from `units` units' class counts
 *  (counts[i * C + c], row i = unit i) and their sum pooled[C]; as
 *  lbmc_dhist_quantile_interval (without binning). work: C + 4 * units doubles. */
void lbmc_mix_quantile_interval(const lbmc_erlang_mix *mix, const double *counts, size_t nunits,
                                const double *pooled, double p, double level,
                                const lbmc_batch_rule *rule, double *work, lbmc_interval *out);

#endif
