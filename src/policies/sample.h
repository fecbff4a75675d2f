/* Private: sampling helpers shared by policies. */
#ifndef LBMC_SAMPLE_H
#define LBMC_SAMPLE_H

#include "../system/state.h"

/** Draw the r-th (0-based) element of {0 .. } that is not in sorted[0 .. m), where r
 *  is uniform on {0 .. size-m-1}, and insert it into sorted. O(m). Returns the value.
 *  Together, m = 0, 1, ... draws give an ordered sample without replacement whose
 *  order is uniformly random. */
static inline uint32_t lbmc_draw_distinct(lbmc_stream *s, uint32_t size, uint32_t *sorted,
                                          uint32_t m)
{
  uint32_t v = lbmc_uint(s, size - m), i = 0;
  while (i < m && sorted[i] <= v) {
    v++;
    i++;
  }
  for (uint32_t k = m; k > i; k--) sorted[k] = sorted[k - 1];
  sorted[i] = v;
  return v;
}

#endif
