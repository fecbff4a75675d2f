/* A buffered SPRNG stream: SPRNG's numbers in blocks of LBMC_STREAM_BUF, the
 * sequence exactly SPRNG's (src/core/stream.h). How streams are numbered is in
 * rng.c. */
#include "stream.h"

#include <limits.h>
#include <sprng/sprng.h>
#include <stddef.h>

#include "lbmc/rng.h"

lbmc_err lbmc_stream_init(lbmc_stream *s, int gennum, long seed)
{
  lbmc_stream_free(s);
  if (seed < 0 || seed > LBMC_SEED_MAX)
    return LBMC_ERROR(LBMC_ERR_ARG, "seed %ld out of range 0..%ld", seed, LBMC_SEED_MAX);
  /* total_gen does not change the sequence of stream gennum; INT_MAX allows every
   * number. Parameter 0: default lags (17, 5). */
  s->gen = init_rng(SPRNG_MLFG, gennum, INT_MAX, (int)seed, 0);
  if (!s->gen) return LBMC_ERROR(LBMC_ERR_RNG, "SPRNG could not create stream %d", gennum);
  s->pos = LBMC_STREAM_BUF;
  return LBMC_SUCCESS;
}

void lbmc_stream_free(lbmc_stream *s)
{
  if (s->gen) free_rng(s->gen);
  s->gen = NULL;
  s->pos = LBMC_STREAM_BUF;
}

void lbmc_stream_refill(lbmc_stream *s)
{
  for (int i = 0; i < LBMC_STREAM_BUF; i++) s->buf[i] = get_rn_dbl(s->gen);
  s->pos = 0;
}
