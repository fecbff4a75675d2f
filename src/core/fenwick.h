/* Private: a Fenwick tree (binary indexed tree; Fenwick, "A new data structure for
 * cumulative frequency tables", Software: Practice and Experience 24(3), 1994) of 64-bit
 * counts: add to one count and find the cell holding a given rank, both O(log size).
 * The occupancy form of pull keeps one per pool over the routers (the idle servers
 * whose message each router holds), to find the router of a withdrawn message. */
#ifndef LBMC_FENWICK_H
#define LBMC_FENWICK_H

#include <stdint.h>
#include <stdlib.h>

typedef struct {
  int64_t *t;    /* t[1 .. size] (t[0] unused) */
  uint32_t size; /* cells */
  uint32_t top;  /* largest power of two <= size */
} lbmc_fenwick;

/** Allocate a tree of `size` cells, all 0; 0 on success, -1 out of memory. */
static inline int lbmc_fenwick_init(lbmc_fenwick *f, uint32_t size)
{
  f->t = calloc((size_t)size + 1, sizeof *f->t);
  f->size = size;
  for (f->top = 1; f->top * 2 <= size;) f->top *= 2;
  return f->t ? 0 : -1;
}

static inline void lbmc_fenwick_free(lbmc_fenwick *f)
{
  free(f->t);
  f->t = NULL;
}

/** Set every cell from c[size], O(size). */
static inline void lbmc_fenwick_build(lbmc_fenwick *f, const int64_t *c)
{
  for (uint32_t i = 1; i <= f->size; i++) f->t[i] = c[i - 1];
  for (uint32_t i = 1; i <= f->size; i++) {
    uint32_t parent = i + (i & -i);
    if (parent <= f->size) f->t[parent] += f->t[i];
  }
}

/** Add delta to cell i (0-based). */
static inline void lbmc_fenwick_add(lbmc_fenwick *f, uint32_t i, int64_t delta)
{
  for (uint32_t x = i + 1; x <= f->size; x += x & -x) f->t[x] += delta;
}

/** The cell (0-based) holding rank v: the i with c[0] + .. + c[i-1] <= v < c[0] + .. + c[i]
 *  (0 <= v < total). */
static inline uint32_t lbmc_fenwick_find(const lbmc_fenwick *f, int64_t v)
{
  uint32_t pos = 0;
  for (uint32_t step = f->top; step; step >>= 1)
    if (pos + step <= f->size && f->t[pos + step] <= v) {
      pos += step;
      v -= f->t[pos];
    }
  return pos;
}

#endif
