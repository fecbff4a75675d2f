/* Quantiles of the log-spaced sojourn and waiting-time histograms (hist.h): linear
 * interpolation within the bin where the cumulative count reaches the level. */
#include "hist.h"

#include <math.h>

double lbmc_hist_quantile(const uint64_t *counts, double q)
{
  uint64_t total = 0, cum = 0;
  double rank;
  for (uint32_t b = 0; b < LBMC_HIST_BINS; b++) total += counts[b];
  if (total == 0) return NAN;
  rank = q * (double)total; /* the value below which a fraction q of the customers lies */
  for (uint32_t b = 0; b < LBMC_HIST_BINS; b++) {
    if (counts[b] == 0) continue;
    if ((double)(cum + counts[b]) >= rank) {
      double lo, hi;
      if (b == 0) return 0.0;
      lo = lbmc_hist_lower(b);
      hi = b + 1 < LBMC_HIST_BINS ? lbmc_hist_lower(b + 1) : lo;
      return lo + (hi - lo) * (rank - (double)cum) / (double)counts[b];
    }
    cum += counts[b];
  }
  return lbmc_hist_lower(LBMC_HIST_BINS - 1);
}
