/* Random streams: how lbmc numbers its SPRNG streams (docs/model.md, "Random streams").
 *
 * Every work unit (grid point, replica) owns LBMC_PURPOSES streams, one per purpose,
 * numbered
 *     gennum = (point * replicas_max + replica) * LBMC_PURPOSES + purpose
 * and initialised with the job seed. Streams never depend on the MPI rank, so a
 * replica gives bit-identical results on any number of ranks or shards.
 *
 * Generator: SPRNG 2.0's multiplicative lagged Fibonacci generator (SPRNG_MLFG,
 * default lags 17 and 5; Mascagni & Srinivasan, ACM TOMS 26(3), 2000). It has
 * 2^(63*16-1) distinct streams, so the only limit is SPRNG's C int stream number:
 * gennum <= LBMC_STREAM_MAX. Only 31 bits of the seed count: seeds are 0..LBMC_SEED_MAX.
 */
#ifndef LBMC_RNG_H
#define LBMC_RNG_H

#include "lbmc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  LBMC_PURPOSE_ARRIVALS = 0, /* inter-arrival times */
  LBMC_PURPOSE_SERVICE = 1,  /* service requirements / completions */
  LBMC_PURPOSE_ROUTING = 2,  /* router choice and policy randomness */
  LBMC_PURPOSE_AUX = 3,      /* reserved for future purposes */
  LBMC_PURPOSES = 4
} lbmc_purpose;

#define LBMC_SEED_MAX   2147483647L
#define LBMC_STREAM_MAX 2147483646L

/** Stream number of (point, replica, purpose) for a job whose points have at most
 *  replicas_max replicas. point >= 0, 0 <= replica < replicas_max.
 *  Errors: LBMC_ERR_LIMIT when the number exceeds LBMC_STREAM_MAX, LBMC_ERR_ARG for
 *  out-of-range indices. */
lbmc_err lbmc_stream_number(long point, long replica, long replicas_max, lbmc_purpose purpose,
                            int *gennum);

/** Check that a job of `points` points with up to replicas_max replicas each fits in
 *  the stream numbering. Errors: LBMC_ERR_LIMIT with a message giving the largest
 *  allowed product. */
lbmc_err lbmc_stream_check_capacity(long points, long replicas_max);

#ifdef __cplusplus
}
#endif
#endif
