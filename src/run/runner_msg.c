/* The messages of a run: a result message's framing, written by the workers and read by
 * rank 0 and by a worker reducing a whole point (runner_impl.h, the tags' comment: each
 * entry is its size as an int64, negative for a reduced point, its bytes, and zeros to a
 * multiple of 8 bytes); and the wait for a request without holding a core. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner_impl.h"

static size_t lbmc_msg_padded(size_t bytes) { return (bytes + 7) & ~(size_t)7; }

int lbmc_msg_next(const unsigned char *msg, size_t size, size_t *at, lbmc_msg_entry *e)
{
  int64_t len;
  size_t bytes;
  if (*at >= size) return *at == size ? 0 : -1;
  if (size - *at < sizeof len) return -1;
  memcpy(&len, msg + *at, sizeof len);
  bytes = (size_t)(len < 0 ? -len : len);
  if (len == 0 || bytes > size - *at - sizeof len ||
      lbmc_msg_padded(bytes) > size - *at - sizeof len)
    return -1;
  e->data = msg + *at + sizeof len;
  e->bytes = bytes;
  e->reduced = len < 0;
  *at += sizeof len + lbmc_msg_padded(bytes);
  return 1;
}

lbmc_err lbmc_msg_append(unsigned char **msg, size_t *size, size_t *cap, int reduced, const void *a,
                         size_t na, const void *b, size_t nb)
{
  const int64_t len = reduced ? -(int64_t)(na + nb) : (int64_t)(na + nb);
  const size_t padded = lbmc_msg_padded(na + nb);
  const size_t need = *size + sizeof len + padded;
  unsigned char *at;
  if (need > *cap) {
    size_t c = need + (need >> 1) + 64;
    unsigned char *m = realloc(*msg, c);
    if (!m) return LBMC_ERROR(LBMC_ERR_MEMORY, "runner: out of memory for a result message");
    *msg = m;
    *cap = c;
  }
  at = *msg + *size;
  memcpy(at, &len, sizeof len);
  memcpy(at + sizeof len, a, na);
  if (nb) memcpy(at + sizeof len + na, b, nb);
  memset(at + sizeof len + na + nb, 0, padded - na - nb);
  *size = need;
  return LBMC_SUCCESS;
}

/* Complete *req (status into *st, or MPI_STATUS_IGNORE) without holding a core (MPI's
 * blocking calls busy-poll, which on a machine with no spare core takes the time of the
 * rank it waits for): test for LBMC_WAIT_SPIN seconds, then sleep between tests from
 * 50 us, doubling up to 8 ms, so that an answer rank 0 gives between its own ticks is
 * seen soon and a long wait (a worker parked, or waiting for rank 0's set-up or final
 * write) costs almost no CPU. Workers get their units in batches (LBMC_BATCH_SECONDS),
 * so the sleep's latency is small against the work of a message. */
#define LBMC_WAIT_SPIN 0.0002
void lbmc_wait_nap(MPI_Request *req, MPI_Status *st)
{
  const double spin_until = MPI_Wtime() + LBMC_WAIT_SPIN;
  long ns = 50000;
  int done = 0;
  MPI_Test(req, &done, st);
  while (!done && MPI_Wtime() < spin_until) MPI_Test(req, &done, st);
  while (!done) {
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    if (ns < 8000000) ns *= 2;
    MPI_Test(req, &done, st);
  }
}
