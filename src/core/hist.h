/* Private: log-spaced histograms of sojourn and waiting times, HdrHistogram-like:
 * a value x > 0 falls in the bin of its binary exponent e (2^e <= x < 2^(e+1)) and of
 * the top LBMC_HIST_SUB_BITS bits of its mantissa, so bins are 1/64 of an octave wide
 * (relative width at most 1.6%); bin 0 holds the zeros (customers that did not wait).
 * Adding a value is a few bit operations; histograms merge by adding counts. */
#ifndef LBMC_HIST_H
#define LBMC_HIST_H

#include <stdint.h>
#include <string.h>

#define LBMC_HIST_SUB_BITS 6
#define LBMC_HIST_SUB      (1 << LBMC_HIST_SUB_BITS)
#define LBMC_HIST_EMIN     (-30) /* 2^-30 ~ 1e-9 time units: smaller values count as zero */
#define LBMC_HIST_EMAX     30    /* 2^31 ~ 2e9: larger values go to the last bin */
#define LBMC_HIST_BINS     (1 + (LBMC_HIST_EMAX - LBMC_HIST_EMIN + 1) * LBMC_HIST_SUB)

/** Bin of a time x >= 0. */
static inline uint32_t lbmc_hist_bin(double x)
{
  uint64_t u;
  int e;
  memcpy(&u, &x, sizeof u);
  e = (int)((u >> 52) & 0x7ff) - 1023;
  if (x <= 0 || e < LBMC_HIST_EMIN) return 0;
  if (e > LBMC_HIST_EMAX) return LBMC_HIST_BINS - 1;
  return 1 + (uint32_t)(e - LBMC_HIST_EMIN) * LBMC_HIST_SUB +
         (uint32_t)((u >> (52 - LBMC_HIST_SUB_BITS)) & (LBMC_HIST_SUB - 1));
}

/** Lower edge of bin b >= 1. */
static inline double lbmc_hist_lower(uint32_t b)
{
  uint32_t i = b - 1;
  int e = (int)(i / LBMC_HIST_SUB) + LBMC_HIST_EMIN;
  double frac = 1.0 + (double)(i % LBMC_HIST_SUB) / LBMC_HIST_SUB;
  return frac * ((e >= 0) ? (double)(1ULL << e) : 1.0 / (double)(1ULL << -e));
}

/** The q-quantile (0 < q < 1) of counts[LBMC_HIST_BINS], interpolating linearly
 *  within a bin; NaN when the histogram is empty. */
double lbmc_hist_quantile(const uint64_t *counts, double q);

#endif
