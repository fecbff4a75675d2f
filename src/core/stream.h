/* Private: a buffered SPRNG stream. Numbers are drawn in blocks of LBMC_STREAM_BUF
 * from SPRNG; the sequence is exactly SPRNG's, the buffer only saves call overhead.
 * For SPRNG's MLFG (the generator lbmc uses) the block is computed by lbmc's own loop
 * over the generator's lag table (stream.c, "Direct refill"), checked at
 * initialisation to reproduce SPRNG's numbers bit for bit; otherwise through
 * get_rn_dbl. */
#ifndef LBMC_STREAM_H
#define LBMC_STREAM_H

#include <math.h>
#include <stdint.h>

#include "lbmc/error.h"

#define LBMC_STREAM_BUF 256

typedef struct {
  int *gen;   /* SPRNG generator, NULL when not initialised */
  int pos;    /* next unused entry of buf; LBMC_STREAM_BUF = empty */
  int direct; /* 1: refilled by the direct MLFG loop (stream.c), 0: by get_rn_dbl */
  double buf[LBMC_STREAM_BUF];
} lbmc_stream;

/** (Re)initialise s as SPRNG stream gennum with the given seed; frees a previous
 *  generator. Errors: LBMC_ERR_RNG. */
lbmc_err lbmc_stream_init(lbmc_stream *s, int gennum, long seed);
/** Free the generator (safe on an uninitialised, zeroed stream). */
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
