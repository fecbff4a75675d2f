/* Private: an array that grows by doubling (the event list's tiers, the mixtures' count
 * arrays), so that n appends cost O(n) copies in all. */
#ifndef LBMC_GROW_H
#define LBMC_GROW_H

#include <stddef.h>
#include <stdlib.h>

/** Array p of *cap elements of `size` bytes, grown to hold at least `need` elements: its
 *  capacity doubled (from 16 when it is 0) until it reaches need, and clamped to `max`
 *  elements. Returns the array (p itself when need <= *cap; realloc's, when it grew: *cap
 *  is then the new capacity; the new elements are not initialised), or NULL when need >
 *  max or out of memory (p and *cap are then unchanged and p still valid). */
static inline void *lbmc_grow(void *p, size_t *cap, size_t need, size_t size, size_t max)
{
  size_t c = *cap ? *cap : 16;
  void *q;
  if (need <= *cap) return p;
  if (need > max || need > (size_t)-1 / size) return NULL;
  while (c < need) c = c > max / 2 ? max : 2 * c;
  if (c > max) c = max; /* the first 16 */
  if (c > (size_t)-1 / size) c = need;
  if (!(q = realloc(p, size * c))) return NULL;
  *cap = c;
  return q;
}

#endif
