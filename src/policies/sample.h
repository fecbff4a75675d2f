/* Private: what the policies that sample servers share (jsq(d), lwl(d), balanced(c),
 * and the occupancy forms of jsq(d) and balanced(c)): the draw of distinct servers and
 * the workspace that holds them. */
#ifndef LBMC_SAMPLE_H
#define LBMC_SAMPLE_H

#include <stdlib.h>

#include "../system/occ_state.h"
#include "../system/policy.h"
#include "../system/state.h"

/** lbmc_draw_distinct's value and insertion, for the draw v uniform on {0 .. size-m-1}. */
static inline uint32_t lbmc_distinct_insert(uint32_t v, uint32_t *sorted, uint32_t m)
{
  uint32_t i = 0;
  while (i < m && sorted[i] <= v) {
    v++;
    i++;
  }
  for (uint32_t k = m; k > i; k--) sorted[k] = sorted[k - 1];
  sorted[i] = v;
  return v;
}

/** Draw the r-th (0-based) element of {0 .. } that is not in sorted[0 .. m), where r
 *  is uniform on {0 .. size-m-1}, and insert it into sorted. O(m). Returns the value.
 *  Together, m = 0, 1, ... draws give an ordered sample without replacement whose
 *  order is uniformly random. */
static inline uint32_t lbmc_draw_distinct(lbmc_stream *s, uint32_t size, uint32_t *sorted,
                                          uint32_t m)
{
  return lbmc_distinct_insert(lbmc_uint(s, size - m), sorted, m);
}

/** Most samples lbmc_sample_prefetch looks ahead at. */
#define LBMC_SAMPLE_PREFETCH_MAX 8

/* lbmc_sample_prefetch for any d and sampling (not inlined: the d = 2 path stays short). */
static __attribute__((noinline, unused)) void lbmc_sample_prefetch_any(const lbmc_state *st)
{
  const uint32_t d = (uint32_t)st->m->param, n = st->n, skip = st->R > 1;
  const int distinct = st->m->sampling == LBMC_SAMPLING_DISTINCT;
  const lbmc_stream *s = st->s_route;
  uint32_t sorted[LBMC_SAMPLE_PREFETCH_MAX];
  if (d > LBMC_SAMPLE_PREFETCH_MAX || lbmc_stream_buffered(s) < (int)(d + skip)) return;
  for (uint32_t m = 0; m < d; m++) {
    const double u = s->buf[s->pos + (int)(skip + m)];
    const uint32_t v =
        distinct ? lbmc_distinct_insert(lbmc_uint_of(u, n - m), sorted, m) : lbmc_uint_of(u, n);
    __builtin_prefetch(&st->q[(size_t)v << st->q_shift], 0);
    if (st->drain) __builtin_prefetch(&st->drain[v], 0);
  }
}

/** The policy table's prefetch for the policies that sample d = st->m->param servers
 *  with lbmc_draw_distinct (distinct) or lbmc_uint (with replacement), after the router's
 *  number when R > 1: the d servers the next route will read, from the numbers buffered
 *  in the route stream (none consumed); nothing when they are not all buffered or d >
 *  LBMC_SAMPLE_PREFETCH_MAX. Reads the counts (st->q) and drain times (st->drain). */
static inline void lbmc_sample_prefetch(const lbmc_state *st, const void *ws)
{
  const lbmc_stream *s = st->s_route;
  const int skip = st->R > 1;
  (void)ws;
  if (st->m->param == 2 && st->m->sampling == LBMC_SAMPLING_DISTINCT &&
      lbmc_stream_buffered(s) >= 2 + skip) { /* the common case (lbmc_draw_distinct's values) */
    const uint32_t a = lbmc_uint_of(s->buf[s->pos + skip], st->n);
    uint32_t b = lbmc_uint_of(s->buf[s->pos + skip + 1], st->n - 1);
    b += b >= a;
    __builtin_prefetch(&st->q[(size_t)a << st->q_shift], 0);
    __builtin_prefetch(&st->q[(size_t)b << st->q_shift], 0);
    if (st->drain) {
      __builtin_prefetch(&st->drain[a], 0);
      __builtin_prefetch(&st->drain[b], 0);
    }
    return;
  }
  lbmc_sample_prefetch_any(st);
}

/** The same for the occupancy forms (src/system/occ_state.h): positions among up to
 *  10^12 servers, 64-bit, drawn exactly from 52 random bits (lbmc_occ_uint). The m-th
 *  call (m = 0, 1, ...) returns a position uniform among those of {0 .. size-1} not in
 *  sorted[0 .. m) and inserts it there (ascending). O(m). (Kept apart from the 32-bit
 *  form: the per-server policies draw with lbmc_uint, and their streams must not
 *  change.) */
static inline uint64_t lbmc_occ_draw_distinct(lbmc_stream *s, uint64_t size, uint64_t *sorted,
                                              uint32_t m)
{
  uint64_t v = lbmc_occ_uint(s, size - m);
  uint32_t i = 0;
  while (i < m && sorted[i] <= v) {
    v++;
    i++;
  }
  for (uint32_t k = m; k > i; k--) sorted[k] = sorted[k - 1];
  sorted[i] = v;
  return v;
}

/** The workspace of a policy that samples d = st->m->param servers: the array of the
 *  drawn servers (d entries), itself. */
static inline lbmc_err lbmc_sample_create(const lbmc_state *st, void **ws)
{
  uint32_t *sorted = malloc(sizeof *sorted * (size_t)st->m->param);
  if (!sorted)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "%s(%s): out of memory", st->pol->name, st->pol->param_name);
  *ws = sorted;
  return LBMC_SUCCESS;
}

static inline void lbmc_sample_destroy(void **ws)
{
  free(*ws);
  *ws = NULL;
}

#endif
