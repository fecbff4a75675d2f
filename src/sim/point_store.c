/* What a point keeps of its replicas (point_impl.h): the summarised ones as rows of a
 * replica store (rep_store.h) in replica order, their quantile data as a byte stream in a
 * second store, and a window of the replicas that are in but not in the store yet (ahead
 * of the first missing one, or not summarised before the warm-up is decided). The passes
 * of the reduction read the rows by blocks of LBMC_POINT_BLOCK replicas, in order, so
 * that the point's memory does not grow with its replicas. */
#include <stdlib.h>
#include <string.h>

#include "point_impl.h"

double *lbmc_point_row_adm(const lbmc_point *p, const lbmc_point_row *r)
{
  return lbmc_point_row_sums(r) + p->W + 2 * LBMC_QUANTILES;
}

size_t lbmc_point_row_bytes(const lbmc_point *p)
{
  return sizeof(lbmc_point_row) +
         sizeof(double) * (p->W + 2 * LBMC_QUANTILES + (size_t)p->J * LBMC_PARTS);
}

lbmc_err lbmc_point_store_create(lbmc_point *p)
{
  p->row_bytes = lbmc_point_row_bytes(p);
  LBMC_CALL(lbmc_rep_store_create(p->row_bytes, &p->store));
  LBMC_CALL(lbmc_rep_store_create(1, &p->qstore));
  p->cur = calloc(1, sizeof *p->cur);
  if (!p->cur) return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory");
  p->cur->q_cur = -1;
  return LBMC_SUCCESS;
}

void lbmc_point_rep_clear(lbmc_point_rep *r)
{
  const long i = r->i;
  free(r->full);
  free(r->row);
  free(r->qdata);
  free(r->trans);
  free(r->fine);
  memset(r, 0, sizeof *r);
  r->i = i;
}

/* The cursor forgets what it read (the store was truncated, or its memory moved). */
static void lbmc_point_cursor_reset(lbmc_point_cursor *c, int quantiles)
{
  c->count = 0;
  if (!quantiles) return;
  c->q_next = c->q_off = 0;
  c->q_cur = -1;
}

void lbmc_point_store_forget(lbmc_point *p)
{
  for (long k = 0; k < p->win_cap; k++)
    if (p->win[k]) {
      lbmc_point_rep_clear(p->win[k]);
      free(p->win[k]);
      p->win[k] = NULL;
    }
  p->win_count = 0;
  p->appended = 0;
  free(p->full0);
  p->full0 = NULL;
  p->full0_size = 0;
  p->other_kept = 0;
  lbmc_point_full_release(p);
  p->fine_sy = p->fine_sx = 0;
  if (p->store) lbmc_rep_store_truncate(p->store, 0);
  if (p->qstore) lbmc_rep_store_truncate(p->qstore, 0);
  if (p->cur) lbmc_point_cursor_reset(p->cur, 1);
}

void lbmc_point_store_destroy(lbmc_point *p)
{
  lbmc_point_store_forget(p);
  free(p->win);
  p->win = NULL;
  p->win_cap = 0;
  lbmc_rep_store_destroy(&p->store);
  lbmc_rep_store_destroy(&p->qstore);
  if (p->cur) {
    free(p->cur->rows);
    free(p->cur->q);
    free(p->cur);
    p->cur = NULL;
  }
}

lbmc_point_rep *lbmc_point_win(const lbmc_point *p, long i)
{
  lbmc_point_rep *r;
  if (i < p->appended || i >= p->appended + p->win_cap) return NULL;
  r = p->win[i % p->win_cap];
  return r && r->i == i ? r : NULL;
}

lbmc_err lbmc_point_win_slot(lbmc_point *p, long i, lbmc_point_rep **out)
{
  lbmc_point_rep *r;
  if (i < p->appended) return LBMC_ERROR(LBMC_ERR_INTERNAL, "point: replica %ld is stored", i);
  if (i >= p->appended + p->win_cap) { /* room: the window spans more replicas */
    long cap = p->win_cap ? p->win_cap : 16;
    lbmc_point_rep **win;
    while (i >= p->appended + cap) cap *= 2;
    win = calloc((size_t)cap, sizeof *win);
    if (!win) return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory for %ld replicas", cap);
    for (long k = 0; k < p->win_cap; k++)
      if (p->win[k]) win[p->win[k]->i % cap] = p->win[k];
    free(p->win);
    p->win = win;
    p->win_cap = cap;
  }
  if (!(r = lbmc_point_win(p, i))) {
    if (!(r = calloc(1, sizeof *r))) return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory");
    r->i = i;
    p->win[i % p->win_cap] = r;
    p->win_count++;
  }
  *out = r;
  return LBMC_SUCCESS;
}

long lbmc_point_win_end(const lbmc_point *p)
{
  long end = p->appended;
  for (long k = 0; k < p->win_cap; k++)
    if (p->win[k] && p->win[k]->i >= end) end = p->win[k]->i + 1;
  return end;
}

/* Replica r, the first not in the store and summarised, into the store: its running
 * sums of fine parts and its transient values folded, its row and its quantile data
 * appended; replica 0 leaves its whole record to the point (batch means). */
static lbmc_err lbmc_point_store_append(lbmc_point *p, lbmc_point_rep *r)
{
  const uint64_t qsize = r->qsize;
  double sy = p->fine_sy, sx = p->fine_sx;
  for (size_t k = 0; k < p->fine; k++) sy += r->fine[k], sx += r->fine[p->fine + k];
  r->row->fine_sy = p->fine_sy = sy;
  r->row->fine_sx = p->fine_sx = sx;
  LBMC_CALL(lbmc_point_trans_fold(p, r, (int)r->row->unstable));
  lbmc_point_cursor_reset(p->cur, 0); /* the store's memory may move */
  LBMC_CALL(lbmc_rep_store_append(p->store, r->row, 1));
  LBMC_CALL(lbmc_rep_store_append(p->qstore, &qsize, (long)sizeof qsize));
  if (qsize) LBMC_CALL(lbmc_rep_store_append(p->qstore, r->qdata, (long)qsize));
  if (r->i == 0 && r->full) {
    free(p->full0);
    p->full0 = r->full, p->full0_size = r->full_size;
    r->full = NULL;
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_point_store_flush(lbmc_point *p)
{
  lbmc_point_rep *r;
  while ((r = lbmc_point_win(p, p->appended)) && r->kept) {
    LBMC_CALL(lbmc_point_store_append(p, r));
    p->win[r->i % p->win_cap] = NULL;
    p->win_count--;
    p->appended++;
    lbmc_point_rep_clear(r);
    free(r);
  }
  return LBMC_SUCCESS;
}

lbmc_err lbmc_point_row_at(const lbmc_point *p, long i, const lbmc_point_row **row)
{
  lbmc_point_cursor *c = p->cur;
  long first, n;
  if (c->count > 0 && i >= c->first && i < c->first + c->count) {
    *row = (const lbmc_point_row *)(c->at + (size_t)(i - c->first) * p->row_bytes);
    return LBMC_SUCCESS;
  }
  if (i < 0 || i >= p->appended) {
    const lbmc_point_rep *r = lbmc_point_win(p, i); /* summarised, not yet stored */
    if (r && r->kept) {
      *row = r->row;
      return LBMC_SUCCESS;
    }
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "point: replica %ld is not summarised", i);
  }
  first = i - i % LBMC_POINT_BLOCK;
  n = p->appended - first < LBMC_POINT_BLOCK ? p->appended - first : LBMC_POINT_BLOCK;
  c->count = 0;
  if (!(c->at = lbmc_rep_store_peek(p->store, first, n))) {
    if (n > c->cap) {
      unsigned char *rows = realloc(c->rows, (size_t)n * p->row_bytes);
      if (!rows) return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory for a block of rows");
      c->rows = rows, c->cap = n;
    }
    LBMC_CALL(lbmc_rep_store_read(p->store, first, n, c->rows));
    c->at = c->rows;
  }
  c->first = first, c->count = n;
  *row = (const lbmc_point_row *)(c->at + (size_t)(i - first) * p->row_bytes);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_units_row(const lbmc_units *u, size_t k, const double **row)
{
  const lbmc_point_row *r = NULL;
  if (u->row) {
    *row = u->row + k * u->p->W;
    return LBMC_SUCCESS;
  }
  LBMC_CALL(lbmc_point_row_at(u->p, (long)k, &r));
  *row = lbmc_point_row_sums(r);
  return LBMC_SUCCESS;
}

/* The cursor's buffer *buf (capacity *cap bytes) grown to at least n bytes (its contents
 * not kept when it grows). Errors: LBMC_ERR_MEMORY, naming `what`. */
static lbmc_err lbmc_point_bytes_reserve(unsigned char **buf, size_t *cap, size_t n,
                                         const char *what)
{
  unsigned char *b;
  if (n <= *cap) return LBMC_SUCCESS;
  if (!(b = realloc(*buf, n)))
    return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory for %s", what);
  *buf = b, *cap = n;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_point_qdata(const lbmc_point *p, long u, const unsigned char **data, size_t *size)
{
  lbmc_point_cursor *c = p->cur;
  if (u < 0 || u >= p->appended)
    return LBMC_ERROR(LBMC_ERR_INTERNAL, "point: replica %ld is not in the store", u);
  if (u != c->q_cur) {
    if (u < c->q_next) lbmc_point_cursor_reset(c, 1);
    while (c->q_next <= u) {
      uint64_t n;
      LBMC_CALL(lbmc_rep_store_read(p->qstore, c->q_off, (long)sizeof n, &n));
      if (c->q_next == u) {
        LBMC_CALL(lbmc_point_bytes_reserve(&c->q, &c->q_cap, (size_t)n, "quantile data"));
        if (n) LBMC_CALL(lbmc_rep_store_read(p->qstore, c->q_off + 8, (long)n, c->q));
        c->q_size = (size_t)n;
        c->q_cur = u;
      }
      c->q_off += (long)(sizeof n + n);
      c->q_next++;
    }
  }
  *data = c->q;
  *size = c->q_size;
  return LBMC_SUCCESS;
}

/* Bytes a record takes in the record store: its size up to a multiple of 8 (each record
 * starts aligned for its doubles). */
static size_t lbmc_point_full_span(size_t size) { return (size + 7) / 8 * 8; }

lbmc_err lbmc_point_full_keep(lbmc_point *p, lbmc_point_rep *r, const void *record, size_t size)
{
  static const unsigned char pad[8] = {0};
  const size_t span = lbmc_point_full_span(size);
  if (p->decided) { /* summarised at once */
    if (!(r->full = malloc(size)))
      return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory for a record");
    memcpy(r->full, record, size);
    r->full_size = size;
    return LBMC_SUCCESS;
  }
  if (!p->rstore) LBMC_CALL(lbmc_rep_store_create(1, &p->rstore));
  r->full_off = lbmc_rep_store_rows(p->rstore);
  LBMC_CALL(lbmc_rep_store_append(p->rstore, record, (long)size));
  if (span > size) LBMC_CALL(lbmc_rep_store_append(p->rstore, pad, (long)(span - size)));
  r->full_size = size;
  r->full_in = 1;
  return LBMC_SUCCESS;
}

/* Replica r's record from the record store into buf (r->full_size bytes). */
static lbmc_err lbmc_point_full_read(const lbmc_point *p, const lbmc_point_rep *r, void *buf)
{
  return lbmc_rep_store_read(p->rstore, r->full_off, (long)r->full_size, buf);
}

lbmc_err lbmc_point_full_hold(const lbmc_point *p, lbmc_point_rep *r)
{
  if (!r->full_in) return LBMC_SUCCESS;
  if (!(r->full = malloc(r->full_size)))
    return LBMC_ERROR(LBMC_ERR_MEMORY, "point: out of memory for a record");
  LBMC_CALL(lbmc_point_full_read(p, r, r->full));
  r->full_in = 0;
  return LBMC_SUCCESS;
}

void lbmc_point_full_release(lbmc_point *p)
{
  lbmc_rep_store_destroy(&p->rstore);
  if (!p->cur) return;
  free(p->cur->rec);
  p->cur->rec = NULL;
  p->cur->rec_cap = 0;
}

lbmc_err lbmc_point_full(const lbmc_point *p, long i, lbmc_record *rec)
{
  const lbmc_point_rep *r = lbmc_point_win(p, i);
  memset(rec, 0, sizeof *rec);
  if (r && r->full)
    lbmc_record_view(r->full, r->full_size, rec);
  else if (r && r->full_in) {
    lbmc_point_cursor *c = p->cur;
    const void *at = lbmc_rep_store_peek(p->rstore, r->full_off, (long)r->full_size);
    if (!at) {
      LBMC_CALL(lbmc_point_bytes_reserve(&c->rec, &c->rec_cap, r->full_size, "a record"));
      LBMC_CALL(lbmc_point_full_read(p, r, c->rec));
      at = c->rec;
    }
    if (lbmc_record_view(at, r->full_size, rec) != 0)
      return LBMC_ERROR(LBMC_ERR_INTERNAL, "point: replica %ld's record read back is not a record",
                        i);
  } else if (i == 0 && p->full0)
    lbmc_record_view(p->full0, p->full0_size, rec);
  return LBMC_SUCCESS;
}

void lbmc_point_held_of(const lbmc_point *p, lbmc_point_held *out)
{
  const lbmc_point_cursor *c = p->cur;
  memset(out, 0, sizeof *out);
  out->replicas = p->appended + p->win_count;
  out->slots = sizeof *p->win * (size_t)p->win_cap + sizeof **p->win * (size_t)p->win_count;
  out->work = sizeof *p->work * p->work_len;
  out->records = p->full0 ? p->full0_size : 0;
  for (long k = 0; k < p->win_cap; k++) {
    const lbmc_point_rep *r = p->win[k];
    if (!r) continue;
    if (r->full) out->records += r->full_size;
    if (r->row) out->sums += p->row_bytes;
    out->quantiles += r->qsize;
    if (r->fine) out->parts += sizeof *r->fine * (2 * p->fine + 1);
    if (r->trans) out->parts += sizeof *r->trans * p->S * lbmc_point_trans_width(p);
  }
  out->records += c->rec_cap;
  if (p->rstore) {
    out->records += lbmc_rep_store_held(p->rstore);
    if (lbmc_rep_store_spilled(p->rstore)) out->file += (size_t)lbmc_rep_store_rows(p->rstore);
  }
  out->store = lbmc_rep_store_held(p->store) + lbmc_rep_store_held(p->qstore) +
               (size_t)c->cap * p->row_bytes + c->q_cap;
  if (lbmc_rep_store_spilled(p->store)) out->file += (size_t)p->appended * p->row_bytes;
  if (lbmc_rep_store_spilled(p->qstore)) out->file += (size_t)lbmc_rep_store_rows(p->qstore);
  out->stored = p->appended;
}
