/* A buffered stream of SPRNG 2.0's multiplicative lagged Fibonacci generator: its
 * numbers in blocks of LBMC_STREAM_BUF, the sequence exactly SPRNG's (src/core/stream.h),
 * made here from the stream's start to its numbers, with no allocation. How streams are
 * numbered is in rng.c. */
#include "stream.h"

#include <limits.h>
#include <sprng/sprng.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/rng.h"

/* ---- The numbers ----
 * SPRNG 2.0's MLFG (Mascagni and Srinivasan, "Algorithm 806: SPRNG", ACM TOMS 26(3),
 * 2000) with its default parameter keeps a table of L = 17 odd 64-bit integers and a
 * head index; one number is
 *     hptr = hptr - 1 (L - 1 below 0),  lags[hptr] *= lags[(hptr + K) mod L],
 *     u = (lags[hptr] >> 12) 2^-52,
 * with K = 5: what the library's get_rn_dbl computes after a jump through its table of
 * generator types (about 25 instructions a number with the call, the dispatch and the
 * buffer loop; the loop below takes about 10). */
#define LBMC_MLFG_K 5

/* ---- The start ----
 * SPRNG's init_rng for stream gennum of seed, parameter 0, as the library computes it
 * (its mlfg.c: get_fill, findseed, the first advances), so that the stream holds the
 * state init_rng would give, without init_rng: init_rng never frees the 128-byte start
 * vector it allocates, which cost every stream 144 heap bytes for the life of the process
 * (576 a replica, on every rank). Steps:
 *   - a 64-bit shift register (two 32-bit words) starts at (gennum xor seed xor GS0, 0)
 *     (GS0 when that is 0) and is stepped 64 times, twice;
 *   - lag 0 is 2 gennum; lags 1 .. L - 2 are the register after another 64 steps each,
 *     taken as the high word over the low word sign-extended to 64 bits (the library
 *     builds the word from two ints), masked to 61 bits and doubled; lag L - 1 is 0;
 *     lag 10 gets its lowest bit set (the canonical form);
 *   - each lag x becomes 3^x mod 2^64, negated where bit m of 0x5a38 is set (lag m);
 *   - the head starts at 0 and the recurrence runs 4 L times (the head back at 0).
 * The spawning information SPRNG keeps beside the table does not change the numbers and
 * is not made. Checked against init_rng: tests/unit/test_streams.c (every number of many
 * streams and seeds, the GS0 case among them), and at run time on one stream in
 * LBMC_MLFG_RECHECK (lbmc_mlfg_recheck). */
#define LBMC_MLFG_GS0   0x372f05acu
#define LBMC_MLFG_SIGNS 0x5a38u

/* Parity of the bits of x. */
static uint32_t lbmc_parity(uint32_t x) { return (uint32_t)__builtin_popcount(x) & 1u; }

/* The start's shift register (r[0] the low word, r[1] the high word) stepped 64 times:
 * its feedback taps 0x1b, the bits 28 .. 31 of the high word through adv. */
static void lbmc_mlfg_reg64(uint32_t r[2])
{
  static const uint32_t adv[4][2] = {
      {0xb0000000u, 0x1bu}, {0x60000000u, 0x2du}, {0xc0000000u, 0x5au}, {0x80000000u, 0xafu}};
  const uint32_t taps = 0x1bu;
  uint32_t lo = 0, hi = 0, t = taps << 27;
  for (int i = 27; i >= 0; i--, t >>= 1) {
    lo = (lo << 1) | lbmc_parity(r[0] & t);
    hi = (hi << 1) | lbmc_parity(r[1] & t);
  }
  for (int i = 28; i < 32; i++) {
    lo |= (lbmc_parity(r[0] & (taps << i)) ^ lbmc_parity(r[1] & (taps >> (32 - i)))) << i;
    hi |= (lbmc_parity(r[0] & adv[i - 28][0]) ^ lbmc_parity(r[1] & adv[i - 28][1])) << i;
  }
  r[0] = lo, r[1] = hi;
}

/* 3^x mod 2^64 (bits 0 .. 62 of x: the lags are below 2^62). */
static uint64_t lbmc_pow3(uint64_t x)
{
  uint64_t v = 1, b = 3;
  for (int i = 0; i < 63; i++, b *= b)
    if (x >> i & 1) v *= b;
  return v;
}

/* One step of the recurrence on the table: the head moves down, its slot is multiplied
 * by the one K after it. */
static void lbmc_mlfg_step(uint64_t *lags, int *h)
{
  int l;
  *h = *h ? *h - 1 : LBMC_MLFG_L - 1;
  l = *h + LBMC_MLFG_K;
  lags[*h] *= lags[l >= LBMC_MLFG_L ? l - LBMC_MLFG_L : l];
}

/* The state init_rng gives stream gennum of seed (both 0 .. 2^31 - 1): lags and head. */
static void lbmc_mlfg_start(uint64_t *lags, int *hptr, int gennum, int seed)
{
  const uint64_t mask61 = (UINT64_C(1) << 61) - 1;
  uint32_t r[2] = {(uint32_t)gennum ^ (uint32_t)seed ^ LBMC_MLFG_GS0, 0};
  if (!r[0]) r[0] = LBMC_MLFG_GS0;
  lbmc_mlfg_reg64(r);
  lbmc_mlfg_reg64(r);
  lags[0] = ((uint64_t)(uint32_t)gennum & mask61) << 1;
  for (int i = 1; i < LBMC_MLFG_L - 1; i++) {
    lbmc_mlfg_reg64(r);
    lags[i] = ((((uint64_t)r[1] << 32) | (uint64_t)(int64_t)(int32_t)r[0]) & mask61) << 1;
  }
  lags[LBMC_MLFG_L - 1] = 0;
  lags[10] |= 1;
  for (int m = 0; m < LBMC_MLFG_L; m++) {
    const uint64_t v = lbmc_pow3(lags[m]);
    lags[m] = (LBMC_MLFG_SIGNS >> m & 1) ? (uint64_t)0 - v : v;
  }
  *hptr = 0;
  for (int j = 0; j < 4 * LBMC_MLFG_L; j++) lbmc_mlfg_step(lags, hptr);
}

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

/* n (<= LBMC_STREAM_BUF) numbers of the table lags with head *hptr into buf. */
static void lbmc_mlfg_fill(uint64_t *lags, int *hptr, double *buf, int n)
{
  enum { l = LBMC_MLFG_L, k = LBMC_MLFG_K };
  uint64_t seq[LBMC_MLFG_L + LBMC_STREAM_BUF];
  int h = *hptr, s;
  for (int j = 0; j < l; j++) { /* slot (h - 1 + l - j) mod l */
    s = h - 1 - j + l;
    seq[j] = lags[s >= l ? s - l : s];
  }
  lbmc_mlfg_seq(seq, buf, n, l, k);
  h = (int)(((long)h - n) % l);
  h += h < 0 ? l : 0;
  for (int j = 0; j < l; j++) {
    s = h - 1 - j + l;
    lags[s >= l ? s - l : s] = seq[n + j];
  }
  *hptr = h;
}

/* One stream in this many (by number) is also made by SPRNG's init_rng and its first
 * numbers compared (each check leaves init_rng's 144 bytes). */
#define LBMC_MLFG_RECHECK 4096
/* Numbers compared: several turns of the lag table. */
#define LBMC_MLFG_CHECK 96

/* 0 when the first LBMC_MLFG_CHECK numbers of the stream s was just started as are
 * those of init_rng's stream gennum of seed, else 1 (s does not move). */
static int lbmc_mlfg_recheck(const lbmc_stream *s, int gennum, long seed)
{
  uint64_t lags[LBMC_MLFG_L];
  double got[LBMC_MLFG_CHECK];
  int h = s->hptr, bad = 0;
  int *ref = init_rng(SPRNG_MLFG, gennum, INT_MAX, (int)seed, 0);
  if (!ref) return 1;
  memcpy(lags, s->lags, sizeof lags);
  lbmc_mlfg_fill(lags, &h, got, LBMC_MLFG_CHECK);
  for (int i = 0; i < LBMC_MLFG_CHECK; i++) {
    const double want = get_rn_dbl(ref);
    bad |= memcmp(&want, &got[i], sizeof want) != 0;
  }
  free_rng(ref);
  return bad;
}

lbmc_err lbmc_stream_init(lbmc_stream *s, int gennum, long seed)
{
  if (seed < 0 || seed > LBMC_SEED_MAX)
    return LBMC_ERROR(LBMC_ERR_ARG, "seed %ld out of range 0..%ld", seed, LBMC_SEED_MAX);
  if (gennum < 0 || gennum == INT_MAX)
    return LBMC_ERROR(LBMC_ERR_RNG, "stream number %d out of range 0..%d", gennum, INT_MAX - 1);
  lbmc_mlfg_start(s->lags, &s->hptr, gennum, (int)seed);
  s->pos = LBMC_STREAM_BUF;
  if (gennum % LBMC_MLFG_RECHECK == 0 && lbmc_mlfg_recheck(s, gennum, seed))
    return LBMC_ERROR(LBMC_ERR_RNG,
                      "stream %d of seed %ld: lbmc's start of SPRNG's MLFG gives other numbers "
                      "than this SPRNG library's init_rng (lbmc is checked against SPRNG 2.0)",
                      gennum, seed);
  return LBMC_SUCCESS;
}

void lbmc_stream_free(lbmc_stream *s) { s->pos = LBMC_STREAM_BUF; }

void lbmc_stream_refill(lbmc_stream *s)
{
  lbmc_mlfg_fill(s->lags, &s->hptr, s->buf, LBMC_STREAM_BUF);
  s->pos = 0;
}
