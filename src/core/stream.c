#include "stream.h"

#include <limits.h>
#include <sprng/sprng.h>
#include <stddef.h>

#include "lbmc/rng.h"

lbmc_err lbmc_stream_number(long point, long replica, long replicas_max, lbmc_purpose purpose,
                            int *gennum)
{
  long long g;
  if (point < 0 || replicas_max < 1 || replica < 0 || replica >= replicas_max || purpose < 0 ||
      purpose >= LBMC_PURPOSES)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "stream number: point %ld, replica %ld of %ld, purpose %d out of range",
                      point, replica, replicas_max, (int)purpose);
  if (point > LBMC_STREAM_MAX / replicas_max ||
      (g = ((long long)point * replicas_max + replica) * LBMC_PURPOSES + purpose) > LBMC_STREAM_MAX)
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "random streams exhausted: point %ld x replicas %ld x %d purposes exceeds "
                      "SPRNG's %ld stream numbers",
                      point, replicas_max, (int)LBMC_PURPOSES, LBMC_STREAM_MAX);
  *gennum = (int)g;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_stream_check_capacity(long points, long replicas_max)
{
  if (points < 1 || replicas_max < 1) return LBMC_SUCCESS;
  if ((long double)points * replicas_max * LBMC_PURPOSES > (long double)LBMC_STREAM_MAX + 1)
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "the job needs %ld points x %ld replicas x %d streams, more than SPRNG's "
                      "%ld stream numbers; allowed: points x replicas <= %ld (reduce the grid or "
                      "the replicas/max_replicas)",
                      points, replicas_max, (int)LBMC_PURPOSES, LBMC_STREAM_MAX + 1,
                      (LBMC_STREAM_MAX + 1) / LBMC_PURPOSES);
  return LBMC_SUCCESS;
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
