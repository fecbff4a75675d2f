/* A buffered SPRNG stream: SPRNG's numbers in blocks of LBMC_STREAM_BUF, the
 * sequence exactly SPRNG's (src/core/stream.h). How streams are numbered is in
 * rng.c. */
#include "stream.h"

#include <limits.h>
#include <sprng/sprng.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/rng.h"

/* ---- Direct refill ----
 * SPRNG 2.0's multiplicative lagged Fibonacci generator (MLFG, Mascagni and
 * Srinivasan, "Algorithm 806: SPRNG", ACM TOMS 26(3), 2000) keeps a table of lval
 * 64-bit odd integers and a head index; one number is
 *     hptr = hptr - 1 (lval - 1 below 0),  lags[hptr] *= lags[(hptr + kval) mod lval],
 *     u = (lags[hptr] >> 12) 2^-52,
 * which is what the library's generic get_rn_dbl computes after a jump through its
 * table of generator types (about 25 instructions a number with the call, the
 * dispatch and the buffer loop; the loop below takes about 10). The state is the
 * library's own (its struct rngen for MLFG: type first, then the lag table at byte
 * 0x38 and hptr, lval, kval at 0x48, 0x4c, 0x50), so the sequence stays SPRNG's and
 * SPRNG's own calls (free_rng) see it. That layout is private to the library: at
 * initialisation lbmc_mlfg_check runs the loop on a copy of the new stream's lag table
 * against get_rn_dbl on the stream and uses the loop only when the numbers agree bit
 * for bit; otherwise the stream draws through get_rn_dbl, with the same numbers. */

typedef struct {
  int rng_type;
  char pad_[0x38 - sizeof(int)];
  uint64_t *lags;
  uint64_t *si;
  int hptr, lval, kval;
} lbmc_mlfg;

_Static_assert(offsetof(lbmc_mlfg, lags) == 0x38 && offsetof(lbmc_mlfg, hptr) == 0x48 &&
                   offsetof(lbmc_mlfg, lval) == 0x4c && offsetof(lbmc_mlfg, kval) == 0x50,
               "the MLFG state's layout");

/* Most lags the direct loop takes (SPRNG's default MLFG, parameter 0, has lags (17, 5)). */
#define LBMC_MLFG_LMAX 64

/* The numbers in sequence order: with x_i the i-th number's 64-bit integer, the table
 * update above is the recurrence x_i = x_{i - lval} x_{i - kval} (mod 2^64) (the head's
 * slot holds the number written lval steps before, its partner (head + kval) mod lval
 * the one written kval steps before). In seq, numbers a line: x_{i - l + j} at j for
 * the lval before the first new one, read off the table (the next head h - 1 holds
 * x_{i - l}, slot (h - 1 + d) mod l holds x_{i - d}), then the n new ones; the last
 * lval are written back the same way and the head moves n slots. The loop has no index
 * arithmetic modulo lval and no short stretches (the table's were 12 and 5 numbers
 * long), and each number reads what was written kval numbers before: the same numbers. */
#define LBMC_MLFG_NEXT(i)                                                                          \
  do {                                                                                             \
    const uint64_t v_ = seq[(i)] * seq[(i) + l - k];                                               \
    seq[(i) + l] = v_;                                                                             \
    buf[(i)] = (double)(int64_t)(v_ >> 12) * 0x1p-52;                                              \
  } while (0)

/* Four at a time while kval >= 4 (the four read nothing the others write; the loop's
 * own counting was a third of its instructions), then one at a time. */
static inline void lbmc_mlfg_seq(uint64_t *seq, double *buf, int n, int l, int k)
{
  int i = 0;
  for (; k >= 4 && i + 4 <= n; i += 4) {
    LBMC_MLFG_NEXT(i);
    LBMC_MLFG_NEXT(i + 1);
    LBMC_MLFG_NEXT(i + 2);
    LBMC_MLFG_NEXT(i + 3);
  }
  for (; i < n; i++) LBMC_MLFG_NEXT(i);
}
#undef LBMC_MLFG_NEXT

/* n (<= LBMC_STREAM_BUF) numbers of MLFG generator g (lval <= LBMC_MLFG_LMAX) into buf. */
static void lbmc_mlfg_fill(lbmc_mlfg *g, double *buf, int n)
{
  uint64_t seq[LBMC_MLFG_LMAX + LBMC_STREAM_BUF];
  uint64_t *lags = g->lags;
  const int l = g->lval, k = g->kval;
  int h = g->hptr, s;
  for (int j = 0; j < l; j++) { /* slot (h - 1 + l - j) mod l */
    s = h - 1 - j + l;
    seq[j] = lags[s >= l ? s - l : s];
  }
  if (l == 17 && k == 5) /* the default lags as constants: a tighter loop */
    lbmc_mlfg_seq(seq, buf, n, 17, 5);
  else
    lbmc_mlfg_seq(seq, buf, n, l, k);
  h = (int)(((long)h - n) % l);
  h += h < 0 ? l : 0;
  for (int j = 0; j < l; j++) {
    s = h - 1 - j + l;
    lags[s >= l ? s - l : s] = seq[n + j];
  }
  g->hptr = h;
}

/* Numbers compared by lbmc_mlfg_check: several turns of the lag table. */
#define LBMC_MLFG_CHECK 96

/* 1 when gen is an MLFG generator whose numbers lbmc_mlfg_fill reproduces, else 0.
 * Checked on gen itself, with no other stream: its lag table and head are saved, gen
 * draws LBMC_MLFG_CHECK numbers through get_rn_dbl while the loop draws as many from
 * the saved copy, and when the numbers and the resulting tables and heads agree bit for
 * bit the saved state is written back (get_rn_dbl changes only the table and the head),
 * so gen stands where it started. When they disagree gen has moved and the caller makes
 * it afresh. Before, the check made two more streams by init_rng, which leaks 128
 * bytes a call (its start vector is never freed): 256 of the 384 bytes a stream cost
 * for the life of the process. */
static int lbmc_mlfg_check(int *gen, int *moved)
{
  lbmc_mlfg *g = (lbmc_mlfg *)gen;
  double want[LBMC_MLFG_CHECK], got[LBMC_MLFG_CHECK];
  uint64_t saved[LBMC_MLFG_LMAX], copy[LBMC_MLFG_LMAX];
  lbmc_mlfg c;
  int ok, h0;
  *moved = 0;
  if (g->rng_type != SPRNG_MLFG || !g->lags || g->lval < 2 || g->lval > LBMC_MLFG_LMAX ||
      g->kval < 1 || g->kval >= g->lval || g->hptr < 0 || g->hptr >= g->lval)
    return 0;
  h0 = g->hptr;
  memcpy(saved, g->lags, (size_t)g->lval * sizeof *saved);
  memcpy(copy, saved, sizeof copy);
  memset(&c, 0, sizeof c); /* only the fields the loop reads: the library's struct may be
                              smaller than lbmc_mlfg where the layout check would fail */
  c.lags = copy;
  c.hptr = h0, c.lval = g->lval, c.kval = g->kval;
  lbmc_mlfg_fill(&c, got, LBMC_MLFG_CHECK);
  for (int i = 0; i < LBMC_MLFG_CHECK; i++) want[i] = get_rn_dbl(gen);
  *moved = 1;
  ok = memcmp(want, got, sizeof want) == 0 && c.hptr == g->hptr &&
       memcmp(copy, g->lags, (size_t)g->lval * sizeof *copy) == 0;
  if (ok) {
    memcpy(g->lags, saved, (size_t)g->lval * sizeof *saved);
    g->hptr = h0;
    *moved = 0;
  }
  return ok;
}

lbmc_err lbmc_stream_init(lbmc_stream *s, int gennum, long seed)
{
  lbmc_stream_free(s);
  if (seed < 0 || seed > LBMC_SEED_MAX)
    return LBMC_ERROR(LBMC_ERR_ARG, "seed %ld out of range 0..%ld", seed, LBMC_SEED_MAX);
  /* total_gen does not change the sequence of stream gennum; INT_MAX allows every
   * number. Parameter 0: default lags (17, 5). */
  s->gen = init_rng(SPRNG_MLFG, gennum, INT_MAX, (int)seed, 0);
  if (!s->gen) return LBMC_ERROR(LBMC_ERR_RNG, "SPRNG could not create stream %d", gennum);
  int moved;
  s->direct = lbmc_mlfg_check(s->gen, &moved);
  if (moved) { /* the check failed after drawing from the stream: start it again */
    free_rng(s->gen);
    s->gen = init_rng(SPRNG_MLFG, gennum, INT_MAX, (int)seed, 0);
    if (!s->gen) return LBMC_ERROR(LBMC_ERR_RNG, "SPRNG could not create stream %d", gennum);
  }
  s->pos = LBMC_STREAM_BUF;
  return LBMC_SUCCESS;
}

void lbmc_stream_free(lbmc_stream *s)
{
  if (s->gen) free_rng(s->gen);
  s->gen = NULL;
  s->direct = 0;
  s->pos = LBMC_STREAM_BUF;
}

void lbmc_stream_refill(lbmc_stream *s)
{
  if (s->direct)
    lbmc_mlfg_fill((lbmc_mlfg *)s->gen, s->buf, LBMC_STREAM_BUF);
  else
    for (int i = 0; i < LBMC_STREAM_BUF; i++) s->buf[i] = get_rn_dbl(s->gen);
  s->pos = 0;
}
