/* Private: a buffered stream of SPRNG 2.0's MLFG (the generator lbmc uses, default
 * parameter). The stream's start (what SPRNG's init_rng gives) and its numbers are
 * computed by lbmc (stream.c), the sequence exactly SPRNG's bit for bit (checked against
 * the library by the unit tests, and at run time on one stream in 4096); numbers are
 * made in blocks of LBMC_STREAM_BUF. A stream allocates nothing. */
#ifndef LBMC_STREAM_H
#define LBMC_STREAM_H

#include <math.h>
#include <stdint.h>

#include "lbmc/error.h"

#define LBMC_STREAM_BUF 256

/* SPRNG's default MLFG: lags (17, 5). */
#define LBMC_MLFG_L 17

typedef struct {
  int pos;                     /* next unused entry of buf; LBMC_STREAM_BUF = empty */
  int hptr;                    /* the head of the lag table (SPRNG's hptr) */
  uint64_t lags[LBMC_MLFG_L];  /* the generator's lag table */
  double buf[LBMC_STREAM_BUF]; /* numbers made, not yet drawn */
} lbmc_stream;

/** (Re)initialise s as SPRNG stream gennum (0 .. INT_MAX - 1) with the given seed
 *  (0 .. LBMC_SEED_MAX): the state SPRNG's init_rng(SPRNG_MLFG, gennum, total, seed, 0)
 *  gives. Errors: LBMC_ERR_ARG (seed), LBMC_ERR_RNG (gennum; or the numbers differ from
 *  this SPRNG library's, checked on one stream in 4096). */
lbmc_err lbmc_stream_init(lbmc_stream *s, int gennum, long seed);
/** Forget the numbers buffered (a stream holds no resources; kept for symmetry). */
void lbmc_stream_free(lbmc_stream *s);
/** Refill the buffer (called by lbmc_u01 when it is empty). */
void lbmc_stream_refill(lbmc_stream *s);

/** Uniform on [0, 1). */
static inline double lbmc_u01(lbmc_stream *s)
{
  if (s->pos == LBMC_STREAM_BUF) lbmc_stream_refill(s);
  return s->buf[s->pos++];
}

/** Exponential with mean 1 (inversion). */
static inline double lbmc_exp1(lbmc_stream *s) { return -log(1.0 - lbmc_u01(s)); }

/** The integer lbmc_uint returns for the uniform u. */
static inline uint32_t lbmc_uint_of(double u, uint32_t k)
{
  uint32_t i = (uint32_t)(u * (double)k);
  return i < k ? i : k - 1;
}

/** Uniform integer on {0, ..., k-1}, k >= 1. */
static inline uint32_t lbmc_uint(lbmc_stream *s, uint32_t k)
{
  return lbmc_uint_of(lbmc_u01(s), k);
}

/** The numbers buffered in s, not yet drawn: the next lbmc_u01 calls return
 *  s->buf[s->pos], s->buf[s->pos + 1], .. up to this many without refilling. For hints
 *  that must not consume numbers (prefetching what the next draws will touch). */
static inline int lbmc_stream_buffered(const lbmc_stream *s) { return LBMC_STREAM_BUF - s->pos; }

#endif
