/* The ladder queue (ladder.h; Tang, Goh & Thng, ACM TOMACS 15(3), 2005): Top, rungs of
 * buckets, Bottom. Invariants: every event of Bottom is earlier than every event of the
 * lowest rung, every event of rung r + 1 earlier than every unconsumed event of rung r
 * (those at or after its cur_start), every event of rung 0 at or before top_start, every
 * event of Top after it; within a rung the bucket of an event never decreases with its
 * time (one formula, clamped to the unconsumed buckets). Buckets not holding events are
 * NIL, so a rung whose events are gone needs no clearing. */
#include "ladder.h"

#include <stdlib.h>
#include <string.h>

#include "bigmem.h"

lbmc_err lbmc_ladder_create(lbmc_ladder *q, lbmc_ladder_node *node)
{
  memset(q, 0, sizeof *q);
  q->node = node;
  q->bot_cap = 4 * LBMC_LADDER_THRESHOLD;
  q->bot = malloc(sizeof *q->bot * q->bot_cap);
  q->top_cap = 1024;
  q->top = malloc(sizeof *q->top * q->top_cap);
  if (!q->bot || !q->top) return LBMC_ERROR(LBMC_ERR_MEMORY, "event list: out of memory");
  lbmc_ladder_clear(q);
  return LBMC_SUCCESS;
}

void lbmc_ladder_free(lbmc_ladder *q)
{
  for (int k = 0; k < LBMC_LADDER_RUNGS; k++) free(q->rung[k].head);
  free(q->bot);
  free(q->top);
  memset(q, 0, sizeof *q);
}

void lbmc_ladder_clear(lbmc_ladder *q)
{
  for (int k = 0; k < q->nrung; k++) {
    lbmc_ladder_rung *r = &q->rung[k];
    if (r->nb) memset(r->head, 0xFF, sizeof *r->head * r->nb);
    r->nb = r->cur = r->count = 0;
  }
  q->nrung = 0;
  q->ntop = 0;
  q->top_start = -INFINITY;
  q->nbot = 0;
  q->size = 0;
}

size_t lbmc_ladder_bytes(const lbmc_ladder *q)
{
  size_t b = sizeof *q->bot * q->bot_cap + sizeof *q->top * q->top_cap;
  for (int k = 0; k < LBMC_LADDER_RUNGS; k++) b += sizeof *q->rung[k].head * q->rung[k].cap;
  return b;
}

/* Room for nb buckets in rung r (new heads NIL); -1 when out of memory. */
static int lbmc_ladder_room(lbmc_ladder_rung *r, size_t nb)
{
  size_t cap = r->cap ? r->cap : 1024;
  uint32_t *h;
  if (nb <= r->cap) return 0;
  while (cap < nb) cap *= 2;
  h = realloc(r->head, sizeof *h * cap);
  if (!h) return -1;
  lbmc_advise_huge(h, sizeof *h * cap); /* before the memset touches the new pages */
  memset(h + r->cap, 0xFF, sizeof *h * (cap - r->cap));
  r->head = h;
  r->cap = cap;
  return 0;
}

/* The bucket of time t in rung r: monotone in t, clamped to [cur, nb - 1]. */
static inline size_t lbmc_ladder_bucket(const lbmc_ladder_rung *r, double t)
{
  double x = (t - r->start) * r->inv_width;
  size_t b = x > 0 ? (x < (double)(r->nb - 1) ? (size_t)x : r->nb - 1) : 0;
  return b < r->cur ? r->cur : b;
}

/* Rung r spans [start, start + nb width) and will hold c events (put next). */
static void lbmc_ladder_span(lbmc_ladder_rung *r, double start, double width, size_t nb, size_t c)
{
  r->start = r->cur_start = start;
  r->width = width;
  r->inv_width = width > 0 && 1 / width < INFINITY ? 1 / width : 0; /* 0: one bucket */
  r->nb = nb;
  r->cur = 0;
  r->count = c;
}

/* Node i into its bucket of rung r (not counted). */
static inline void lbmc_ladder_put(lbmc_ladder *q, lbmc_ladder_rung *r, uint32_t i)
{
  size_t b = lbmc_ladder_bucket(r, q->node[i].t);
  q->node[i].next = r->head[b];
  r->head[b] = i;
}

/* Rung r over [start, start + nb width) with its events from list L (count c). */
static void lbmc_ladder_fill(lbmc_ladder *q, lbmc_ladder_rung *r, double start, double width,
                             size_t nb, uint32_t L, size_t c)
{
  lbmc_ladder_span(r, start, width, nb, c);
  while (L != LBMC_LADDER_NIL) {
    uint32_t next = q->node[L].next;
    lbmc_ladder_put(q, r, L);
    L = next;
  }
}

/* Bottom can hold n entries; -1 when out of memory. */
static int lbmc_ladder_bottom_room(lbmc_ladder *q, size_t n)
{
  size_t cap = q->bot_cap;
  lbmc_ladder_entry *b;
  if (n <= cap) return 0;
  while (cap < n) cap *= 2;
  b = realloc(q->bot, sizeof *b * cap);
  if (!b) return -1;
  q->bot = b;
  q->bot_cap = cap;
  return 0;
}

static int lbmc_ladder_later_first(const void *a, const void *b)
{
  double x = ((const lbmc_ladder_entry *)a)->t, y = ((const lbmc_ladder_entry *)b)->t;
  return (x < y) - (x > y);
}

/* The events of list L (count c) into the empty Bottom, sorted; -1 when out of memory. */
static int lbmc_ladder_to_bottom(lbmc_ladder *q, uint32_t L, size_t c)
{
  lbmc_ladder_entry *b;
  size_t n = 0;
  if (lbmc_ladder_bottom_room(q, c) != 0) return -1;
  b = q->bot;
  for (; L != LBMC_LADDER_NIL; L = q->node[L].next) {
    lbmc_ladder_entry e = {q->node[L].t, L};
    size_t k = n++;
    if (c > 32) { /* sorted below */
      b[k] = e;
      continue;
    }
    while (k > 0 && b[k - 1].t < e.t) { /* insertion: decreasing times */
      b[k] = b[k - 1];
      k--;
    }
    b[k] = e;
  }
  if (c > 32) qsort(b, n, sizeof *b, lbmc_ladder_later_first);
  q->nbot = n;
  return 0;
}

/* Prefetch the events of the buckets after k of rung r, whose lists are read soon: when
 * bucket k is taken (the previous take left cur = from), the first event of each bucket
 * up to k + AHEAD not reached by an earlier take, and the second event of the buckets up
 * to k + AHEAD / 2 (their first, prefetched AHEAD / 2 buckets ago, is in the cache by
 * now, so that reading its link does not wait): the cache misses of a list's walk
 * overlap the events before it instead of following each other. */
static inline void lbmc_ladder_ahead(const lbmc_ladder *q, const lbmc_ladder_rung *r, size_t from,
                                     size_t k)
{
  const size_t half = LBMC_LADDER_AHEAD / 2;
  for (size_t a = from ? from + LBMC_LADDER_AHEAD : 1; a <= k + LBMC_LADDER_AHEAD && a < r->nb; a++)
    if (r->head[a] != LBMC_LADDER_NIL) __builtin_prefetch(&q->node[r->head[a]], 0);
  for (size_t a = from ? from + half : 1; a <= k + half && a < r->nb; a++)
    if (r->head[a] != LBMC_LADDER_NIL) {
      const uint32_t i = q->node[r->head[a]].next;
      if (i != LBMC_LADDER_NIL) __builtin_prefetch(&q->node[i], 0);
    }
}

/* Detach the next non-empty bucket of the lowest rung r (r->count > 0): its list, its
 * index *b and count *c; the rung's unconsumed part starts after it. */
static uint32_t lbmc_ladder_take(lbmc_ladder *q, lbmc_ladder_rung *r, size_t *b, size_t *c)
{
  size_t k = r->cur, n = 0;
  uint32_t L;
  while (r->head[k] == LBMC_LADDER_NIL) k++;
  L = r->head[k];
  r->head[k] = LBMC_LADDER_NIL;
  lbmc_ladder_ahead(q, r, r->cur, k);
  for (uint32_t i = L; i != LBMC_LADDER_NIL; i = q->node[i].next) n++;
  r->cur = k + 1;
  r->cur_start = r->start + (double)(k + 1) * r->width;
  r->count -= n;
  *b = k;
  *c = n;
  return L;
}

/* Top becomes rung 0 (no rung left); -1 when out of memory (Top is then kept). */
static int lbmc_ladder_from_top(lbmc_ladder *q)
{
  lbmc_ladder_rung *r = &q->rung[0];
  size_t nb = q->ntop / LBMC_LADDER_PER_BUCKET;
  if (nb < 1) nb = 1;
  if (lbmc_ladder_room(r, nb) != 0) return -1;
  q->top_start = q->top_max;
  lbmc_ladder_span(r, q->top_min, (q->top_max - q->top_min) / (double)nb, nb, q->ntop);
  for (size_t k = q->ntop; k-- > 0;) { /* latest first, as a list pushed at its head */
    if (k >= LBMC_LADDER_TOP_AHEAD) __builtin_prefetch(&q->node[q->top[k - LBMC_LADDER_TOP_AHEAD]]);
    lbmc_ladder_put(q, r, q->top[k]);
  }
  q->nrung = 1;
  q->ntop = 0;
  return 0;
}

double lbmc_ladder_refill(lbmc_ladder *q)
{
  for (;;) {
    lbmc_ladder_rung *r;
    size_t b, c;
    uint32_t L;
    while (q->nrung > 0 && q->rung[q->nrung - 1].count == 0) { /* consumed: its heads are NIL */
      q->rung[q->nrung - 1].nb = q->rung[q->nrung - 1].cur = 0;
      q->nrung--;
    }
    if (q->nrung == 0) {
      if (q->ntop == 0) return INFINITY;
      if (lbmc_ladder_from_top(q) != 0) return INFINITY; /* out of memory: the caller asks */
      continue;
    }
    r = &q->rung[q->nrung - 1];
    L = lbmc_ladder_take(q, r, &b, &c);
    if (c > LBMC_LADDER_THRESHOLD && q->nrung < LBMC_LADDER_RUNGS && r->inv_width > 0) {
      lbmc_ladder_rung *child = &q->rung[q->nrung];
      size_t nb = c / LBMC_LADDER_PER_BUCKET;
      double start = r->start + (double)b * r->width, width = r->width / (double)nb;
      if (start + width > start && lbmc_ladder_room(child, nb) == 0) { /* else: sort it */
        lbmc_ladder_fill(q, child, start, width, nb, L, c);
        q->nrung++;
        continue;
      }
    }
    if (lbmc_ladder_to_bottom(q, L, c) != 0) { /* out of memory: put the bucket back */
      r->head[b] = L;
      r->count += c;
      r->cur = b;
      r->cur_start = r->start + (double)b * r->width;
      return INFINITY;
    }
    return q->bot[q->nbot - 1].t;
  }
}

/* Bottom became long (events fell below the lowest rung, or below top_start with no
 * rung): its events become a new lowest rung over [min(bottom, t), the lowest rung's
 * cur_start or top_start), so that insertions stay O(1). 0 on success; -1 when there is
 * no room or no width (Bottom is then kept). */
static int lbmc_ladder_from_bottom(lbmc_ladder *q, double t)
{
  lbmc_ladder_rung *r = &q->rung[q->nrung];
  const double lo = fmin(q->bot[q->nbot - 1].t, t);
  const double hi = q->nrung ? q->rung[q->nrung - 1].cur_start : q->top_start;
  size_t nb = q->nbot / LBMC_LADDER_PER_BUCKET;
  uint32_t L = LBMC_LADDER_NIL;
  if (!(hi > lo) || lbmc_ladder_room(r, nb) != 0) return -1;
  for (size_t k = 0; k < q->nbot; k++) { /* the list, any order */
    q->node[q->bot[k].i].next = L;
    L = q->bot[k].i;
  }
  lbmc_ladder_fill(q, r, lo, (hi - lo) / (double)nb, nb, L, q->nbot);
  q->nrung++;
  q->nbot = 0;
  return 0;
}

int lbmc_ladder_push(lbmc_ladder *q, uint32_t i)
{
  lbmc_ladder_node *e = &q->node[i];
  const double t = e->t;
  size_t lo, hi;
  if (t > q->top_start) {
    if (q->ntop == q->top_cap) {
      uint32_t *top = realloc(q->top, sizeof *top * 2 * q->top_cap);
      if (!top) return -1;
      lbmc_advise_huge(top, sizeof *top * 2 * q->top_cap);
      q->top = top;
      q->top_cap *= 2;
    }
    q->top[q->ntop] = i;
    if (q->ntop++ == 0) {
      q->top_min = q->top_max = t;
    } else {
      if (t < q->top_min) q->top_min = t;
      if (t > q->top_max) q->top_max = t;
    }
    q->size++;
    return 0;
  }
  for (int k = 0; k < q->nrung; k++) {
    lbmc_ladder_rung *r = &q->rung[k];
    if (t >= r->cur_start && r->cur < r->nb) {
      size_t b = lbmc_ladder_bucket(r, t);
      e->next = r->head[b];
      r->head[b] = i;
      r->count++;
      q->size++;
      return 0;
    }
  }
  if (q->nbot >= LBMC_LADDER_BOTTOM_MAX && q->nrung < LBMC_LADDER_RUNGS &&
      lbmc_ladder_from_bottom(q, t) == 0)
    return lbmc_ladder_push(q, i); /* into the new rung */
  if (lbmc_ladder_bottom_room(q, q->nbot + 1) != 0) return -1;
  lo = 0, hi = q->nbot; /* the first entry earlier than t: entries decrease */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (q->bot[mid].t >= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  memmove(q->bot + lo + 1, q->bot + lo, sizeof *q->bot * (q->nbot - lo));
  q->bot[lo] = (lbmc_ladder_entry){t, i};
  q->nbot++;
  q->size++;
  return 0;
}
