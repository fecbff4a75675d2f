/* The lean engine's event list (ladder.h): Bottom, a calendar window of array buckets,
 * Top. Invariants: every event of Bottom is earlier than or as early as every event of
 * the unconsumed buckets, every event of bucket b earlier than or as early as every event
 * of bucket b + 1, every event of a bucket earlier than end, every event of Top at or
 * after it. An event's tier follows from one formula monotone in its time (Top if
 * t >= end, else the bucket floor((t - start) / width) clamped to [0, nb - 1], Bottom
 * when that bucket is consumed), so the tiers can never disagree with the order. */
#include "ladder.h"

#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "grow.h"

lbmc_err lbmc_ladder_create(lbmc_ladder *q)
{
  memset(q, 0, sizeof *q);
  q->bot_cap = 4 * LBMC_LADDER_PER_BUCKET;
  q->bot = malloc(sizeof *q->bot * q->bot_cap);
  q->cnt_cap = 4 * LBMC_LADDER_PER_BUCKET + 1;
  q->cnt = malloc(sizeof *q->cnt * q->cnt_cap);
  q->top_cap = 1024;
  q->top = malloc(sizeof *q->top * q->top_cap);
  q->chunk_cap = 1024;
  q->ent = malloc(sizeof *q->ent * LBMC_LADDER_CHUNK * q->chunk_cap);
  q->cnext = malloc(sizeof *q->cnext * q->chunk_cap);
  if (!q->bot || !q->cnt || !q->top || !q->ent || !q->cnext)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "event list: out of memory");
  lbmc_ladder_clear(q);
  return LBMC_SUCCESS;
}

void lbmc_ladder_free(lbmc_ladder *q)
{
  free(q->bk);
  free(q->ent);
  free(q->cnext);
  free(q->top);
  free(q->bot);
  free(q->cnt);
  memset(q, 0, sizeof *q);
}

void lbmc_ladder_clear(lbmc_ladder *q)
{
  q->start = q->end = -INFINITY;
  q->width = q->inv_width = 0;
  q->nb = q->cur = q->taken = 0;
  q->rate_hint = 0;
  q->chunk_used = 0;
  q->chunk_free = LBMC_LADDER_NIL;
  q->ntop = 0;
  q->nbot = q->bot_ins = 0;
  q->size = 0;
}

size_t lbmc_ladder_bytes(const lbmc_ladder *q)
{
  return sizeof *q->bk * q->bk_cap +
         (sizeof *q->ent * LBMC_LADDER_CHUNK + sizeof *q->cnext) * q->chunk_cap +
         sizeof *q->top * q->top_cap + sizeof *q->bot * q->bot_cap + sizeof *q->cnt * q->cnt_cap;
}

/* Room for `more` chunks beyond those ever used; -1 when the chunks cannot grow. */
static int lbmc_ladder_chunk_room(lbmc_ladder *q, uint64_t more)
{
  uint64_t cap = q->chunk_cap;
  lbmc_ladder_entry *e;
  uint32_t *nx;
  if (q->chunk_used + more <= cap) return 0;
  while (cap < q->chunk_used + more) cap += cap / 2;
  if (cap >= LBMC_LADDER_NIL) return -1;
  e = realloc(q->ent, sizeof *e * LBMC_LADDER_CHUNK * cap);
  if (!e) return -1;
  q->ent = e;
  lbmc_advise_huge(e, sizeof *e * LBMC_LADDER_CHUNK * cap);
  nx = realloc(q->cnext, sizeof *nx * cap);
  if (!nx) return -1;
  q->cnext = nx;
  q->chunk_cap = (uint32_t)cap;
  return 0;
}

/* A free chunk, or NIL when the chunks cannot grow. */
static uint32_t lbmc_ladder_chunk(lbmc_ladder *q)
{
  uint32_t c = q->chunk_free;
  if (c != LBMC_LADDER_NIL) {
    q->chunk_free = q->cnext[c];
    return c;
  }
  if (lbmc_ladder_chunk_room(q, 1) != 0) return LBMC_LADDER_NIL;
  return q->chunk_used++;
}

/* Append event (t, id) to bucket b; -1 out of memory. */
static inline int lbmc_ladder_append(lbmc_ladder *q, size_t b, double t, uint32_t id)
{
  lbmc_ladder_bucket *k = &q->bk[b];
  const uint32_t r = k->n % LBMC_LADDER_CHUNK;
  if (r == 0) { /* its last chunk is full, or it has none */
    uint32_t c = lbmc_ladder_chunk(q);
    if (c == LBMC_LADDER_NIL) return -1;
    k = &q->bk[b];
    q->cnext[c] = LBMC_LADDER_NIL;
    if (k->n == 0)
      k->head = c;
    else
      q->cnext[k->tail] = c;
    k->tail = c;
  }
  q->ent[(size_t)k->tail * LBMC_LADDER_CHUNK + r] = (lbmc_ladder_entry){t, id, 0};
  k->n++;
  return 0;
}

/* Room for n entries in Bottom and n + 1 counts; -1 out of memory. */
static int lbmc_ladder_bottom_room(lbmc_ladder *q, size_t n)
{
  lbmc_ladder_entry *b = lbmc_grow(q->bot, &q->bot_cap, n, sizeof *q->bot, SIZE_MAX);
  uint32_t *c;
  if (!b) return -1;
  q->bot = b;
  if (!(c = lbmc_grow(q->cnt, &q->cnt_cap, n + 1, sizeof *q->cnt, SIZE_MAX))) return -1;
  q->cnt = c;
  return 0;
}

/* Lay buckets [0, nb) of width w from t0 (all empty); -1 out of memory. */
static int lbmc_ladder_window(lbmc_ladder *q, double t0, double w, size_t nb)
{
  if (nb > q->bk_cap) {
    lbmc_ladder_bucket *b = lbmc_grow(q->bk, &q->bk_cap, nb, sizeof *b, SIZE_MAX);
    if (!b) return -1;
    lbmc_advise_huge(b, sizeof *b * q->bk_cap);
    q->bk = b;
  }
  memset(q->bk, 0, sizeof *q->bk * nb);
  q->start = t0;
  q->nb = nb;
  q->cur = 0;
  q->taken = 0;
  q->width = w;
  q->end = t0 + (double)nb * w;
  q->inv_width = w > 0 && 1 / w < INFINITY ? 1 / w : 0;
  if (!(q->end > t0) || q->inv_width == 0) { /* no width: the window is the instant t0 */
    q->end = nextafter(t0, INFINITY);
    q->inv_width = 0;
  }
  return 0;
}

/* The events per bucket a window for `size` events aims at: LBMC_LADDER_PER_BUCKET, or
 * LBMC_LADDER_PER_BUCKET_BIG from LBMC_LADDER_BIG events on (fewer buckets: their counts
 * and the last chunks that appends write stay in the cache; in a small queue the window
 * would be so long that most new events fell into Bottom). */
static double lbmc_ladder_per_bucket(size_t size)
{
  return size >= LBMC_LADDER_BIG ? LBMC_LADDER_PER_BUCKET_BIG : LBMC_LADDER_PER_BUCKET;
}

/* The buckets of a window for `size` events. */
static size_t lbmc_ladder_buckets(size_t size)
{
  size_t nb = 2 * (size_t)((double)size / lbmc_ladder_per_bucket(size));
  return nb < LBMC_LADDER_MIN_BUCKETS ? LBMC_LADDER_MIN_BUCKETS : nb;
}

int lbmc_ladder_plan(lbmc_ladder *q, double t0, double rate, size_t size)
{
  if (!(rate > 0) || q->size > 0) return 0;
  q->rate_hint = rate;
  if (lbmc_ladder_chunk_room(q, size / LBMC_LADDER_CHUNK + lbmc_ladder_buckets(size)) != 0)
    return -1; /* reserved, not touched: no growth by copies while the first events come */
  return lbmc_ladder_window(q, t0, lbmc_ladder_per_bucket(size) / rate, lbmc_ladder_buckets(size));
}

/* A new window from Top (every bucket consumed, Bottom empty, Top not): from Top's
 * minimum, its width from the measured rate; Top's events before its end move into it.
 * -1 out of memory (the queue is then as it was, or its moved events are in buckets and
 * the others in Top: every event is still in it). */
static int lbmc_ladder_from_top(lbmc_ladder *q)
{
  const double t0 = q->top_min;
  double rate = 0, lo = INFINITY, hi = -INFINITY;
  size_t keep = 0;
  if (q->nb > 0 && q->taken >= 4 * LBMC_LADDER_PER_BUCKET && q->inv_width > 0)
    rate = (double)q->taken / (q->end - q->start);
  else if (q->rate_hint > 0)
    rate = q->rate_hint;
  else if (q->top_max > q->top_min)
    rate = (double)q->ntop / (q->top_max - q->top_min);
  if (lbmc_ladder_window(q, t0, rate > 0 ? lbmc_ladder_per_bucket(q->size) / rate : 0,
                         lbmc_ladder_buckets(q->size)) != 0)
    return -1;
  for (size_t k = 0; k < q->ntop; k++) {
    const lbmc_ladder_entry e = q->top[k];
    if (e.t < q->end) {
      if (lbmc_ladder_append(q, lbmc_ladder_bucket_of(q, e.t), e.t, e.id) == 0) continue;
      memmove(q->top + keep, q->top + k, sizeof *q->top * (q->ntop - k));
      q->ntop = keep + (q->ntop - k);
      return -1;
    }
    q->top[keep++] = e;
    if (e.t < lo) lo = e.t;
    if (e.t > hi) hi = e.t;
  }
  q->ntop = keep;
  q->top_min = lo;
  q->top_max = hi;
  if (q->top_cap > 4 * keep + 4096) { /* give back what a large Top held */
    size_t cap = 2 * keep + 1024;
    lbmc_ladder_entry *t = realloc(q->top, sizeof *t * cap);
    if (t) {
      q->top = t;
      q->top_cap = cap;
    }
  }
  return 0;
}

static int lbmc_ladder_later_first(const void *a, const void *b)
{
  double x = ((const lbmc_ladder_entry *)a)->t, y = ((const lbmc_ladder_entry *)b)->t;
  return (x < y) - (x > y);
}

/* The sub-interval of time t in a bucket from lo, scale sub-intervals per unit time, c
 * of them. */
static inline size_t lbmc_ladder_sub(double t, double lo, double scale, size_t c)
{
  const double x = (t - lo) * scale;
  return x > 0 ? (x < (double)(c - 1) ? (size_t)x : c - 1) : 0;
}

/* Bucket b (not empty) into the empty Bottom, sorted; its chunks are freed. -1 out of
 * memory (nothing moved). */
static int lbmc_ladder_take(lbmc_ladder *q, size_t b)
{
  lbmc_ladder_bucket *k = &q->bk[b];
  const size_t c = k->n;
  const double lo = q->start + (double)b * q->width, scale = (double)c * q->inv_width;
  uint32_t *cnt;
  lbmc_ladder_entry *bot;
  size_t left, moves = 0;
  if (lbmc_ladder_bottom_room(q, c) != 0) return -1;
  cnt = q->cnt;
  bot = q->bot;
  memset(cnt, 0, sizeof *cnt * (c + 1));
  left = c;
  for (uint32_t ch = k->head; left > 0; ch = q->cnext[ch]) { /* counts */
    const lbmc_ladder_entry *e = q->ent + (size_t)ch * LBMC_LADDER_CHUNK;
    const size_t m = left < LBMC_LADDER_CHUNK ? left : LBMC_LADDER_CHUNK;
    if (q->cnext[ch] != LBMC_LADDER_NIL)
      __builtin_prefetch(q->ent + (size_t)q->cnext[ch] * LBMC_LADDER_CHUNK);
    for (size_t i = 0; i < m; i++) cnt[lbmc_ladder_sub(e[i].t, lo, scale, c) + 1]++;
    left -= m;
  }
  for (size_t f = 0; f < c; f++) cnt[f + 1] += cnt[f]; /* cnt[f]: first of sub-interval f */
  left = c;
  for (uint32_t ch = k->head;; ch = q->cnext[ch]) { /* scatter, decreasing */
    const lbmc_ladder_entry *e = q->ent + (size_t)ch * LBMC_LADDER_CHUNK;
    const size_t m = left < LBMC_LADDER_CHUNK ? left : LBMC_LADDER_CHUNK;
    for (size_t i = 0; i < m; i++) bot[c - 1 - cnt[lbmc_ladder_sub(e[i].t, lo, scale, c)]++] = e[i];
    left -= m;
    if (left == 0) { /* the chunks to the free list */
      q->cnext[ch] = q->chunk_free;
      q->chunk_free = k->head;
      break;
    }
  }
  for (size_t i = 1; i < c && moves <= 8 * c; i++) { /* within the sub-intervals */
    const lbmc_ladder_entry e = bot[i];
    size_t j = i;
    while (j > 0 && bot[j - 1].t < e.t) {
      bot[j] = bot[j - 1];
      j--;
    }
    bot[j] = e;
    moves += i - j;
  }
  if (moves > 8 * c) qsort(bot, c, sizeof *bot, lbmc_ladder_later_first); /* clustered */
  k->n = 0;
  q->nbot = c;
  q->bot_ins = 0;
  q->taken += c;
  q->cur = b + 1;
  if (b + 1 < q->nb && q->bk[b + 1].n) /* the next bucket's first chunk */
    __builtin_prefetch(q->ent + (size_t)q->bk[b + 1].head * LBMC_LADDER_CHUNK);
  return 0;
}

double lbmc_ladder_refill(lbmc_ladder *q)
{
  for (;;) {
    if (q->nbot) return q->bot[q->nbot - 1].t;
    if (q->size == 0) return INFINITY; /* the window stays as it is, for the next pushes */
    while (q->cur < q->nb && q->bk[q->cur].n == 0) q->cur++;
    if (q->cur < q->nb) {
      if (lbmc_ladder_take(q, q->cur) != 0) return INFINITY; /* out of memory */
      continue;
    }
    if (q->ntop == 0) return INFINITY;
    if (lbmc_ladder_from_top(q) != 0) return INFINITY;
  }
}

/* Bottom's events back into their buckets, the unconsumed part of the window starting
 * again at the bucket of the earliest of them and t: many events fell below the buckets
 * (a bucket was taken long before its time, as when the queue held one event far ahead),
 * and insertions into Bottom cost its length. -1 when there is no room for the chunks
 * they may need (nothing moved). */
static int lbmc_ladder_spill(lbmc_ladder *q, double t)
{
  const double lo = q->nbot ? fmin(q->bot[q->nbot - 1].t, t) : t; /* Bottom may be empty */
  if (lbmc_ladder_chunk_room(q, q->nbot + 1) != 0) return -1;     /* at most a chunk each */
  q->cur = lbmc_ladder_bucket_of(q, lo);
  for (size_t k = q->nbot; k-- > 0;) /* earliest first: each bucket stays in order of time */
    (void)lbmc_ladder_append(q, lbmc_ladder_bucket_of(q, q->bot[k].t), q->bot[k].t, q->bot[k].id);
  q->nbot = 0;
  q->bot_ins = 0;
  return 0;
}

int lbmc_ladder_push_any(lbmc_ladder *q, double t, uint32_t id)
{
  size_t b, lo, hi;
  if (t >= q->end) {
    if (q->ntop == q->top_cap) {
      lbmc_ladder_entry *top = lbmc_grow(q->top, &q->top_cap, q->ntop + 1, sizeof *top, SIZE_MAX);
      if (!top) return -1;
      q->top = top;
    }
    q->top[q->ntop] = (lbmc_ladder_entry){t, id, 0};
    if (q->ntop++ == 0) {
      q->top_min = q->top_max = t;
    } else {
      if (t < q->top_min) q->top_min = t;
      if (t > q->top_max) q->top_max = t;
    }
    q->size++;
    return 0;
  }
  b = lbmc_ladder_bucket_of(q, t);
  if (b >= q->cur) {
    if (lbmc_ladder_append(q, b, t, id) != 0) return -1;
    q->size++;
    return 0;
  }
  if (q->bot_ins >= LBMC_LADDER_PER_BUCKET && 4 * q->bot_ins >= q->nbot &&
      lbmc_ladder_spill(q, t) == 0)
    return lbmc_ladder_push_any(q, t, id); /* into its bucket */
  if (lbmc_ladder_bottom_room(q, q->nbot + 1) != 0) return -1;
  q->bot_ins++;
  lo = 0, hi = q->nbot; /* the first entry earlier than t: entries decrease */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (q->bot[mid].t >= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  memmove(q->bot + lo + 1, q->bot + lo, sizeof *q->bot * (q->nbot - lo));
  q->bot[lo] = (lbmc_ladder_entry){t, id, 0};
  q->nbot++;
  q->size++;
  return 0;
}
