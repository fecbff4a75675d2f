/* transient: the instantaneous state at the end of every tick, for transient runs
 * (--transient T0:T1:DT), whose ticks end at the observation times (src/sim/sim.c). Per
 * tick its block holds, from the view at the tick's end t1:
 *   [mean_queue of pool 0 .. J-1 (customers / servers of the pool),
 *    tail[j][k] for j = 0 .. J-1, k = 1 .. K (servers with >= k customers / servers),
 *    customers in the system].
 * The interval quantities between observation times (p_wait, p_block, throughput,
 * messages) are the tick record's own sums. It reads the view only: no random numbers,
 * no moves. The point pools the blocks over replicas (lbmc_point_transient). */
#include <stdlib.h>

#include "../system/system.h"
#include "observers.h"

typedef struct {
  int J, K;
} lbmc_transient_obs;

static int lbmc_transient_wanted(const lbmc_model *m, const lbmc_run_options *o)
{
  (void)m;
  return o->transient[2] > 0;
}

static size_t lbmc_transient_width(const lbmc_model *m, int K)
{
  return lbmc_transient_values(m->J, K);
}

static lbmc_err lbmc_transient_create(const lbmc_model *m, int K, void **ws)
{
  lbmc_transient_obs *w = calloc(1, sizeof *w);
  if (!w) return LBMC_ERROR(LBMC_ERR_MEMORY, "transient observer: out of memory");
  w->J = m->J;
  w->K = K;
  *ws = w;
  return LBMC_SUCCESS;
}

static void lbmc_transient_destroy(void **ws)
{
  free(*ws);
  *ws = NULL;
}

static void lbmc_transient_close(void *ws, const lbmc_view *v, double t0, double t1, double *block)
{
  const lbmc_transient_obs *w = ws;
  double *tail = block + w->J, customers = 0;
  (void)t0;
  (void)t1;
  if (!block) return;
  for (int j = 0; j < w->J; j++) {
    const double N = (double)v->N[j], q = (double)v->customers(v->ws, j);
    block[j] = q / N;
    customers += q;
    for (int k = 1; k <= w->K; k++)
      tail[j * w->K + (k - 1)] = (double)v->tail(v->ws, j, (uint32_t)k) / N;
  }
  block[w->J + w->J * w->K] = customers;
}

const lbmc_observer_type lbmc_observer_transient = {
    .name = "transient",
    .summary = "per pool mean_queue and tail[j][k], and the customers in the system, at each "
               "tick's end (transient runs)",
    .wanted = lbmc_transient_wanted,
    .width = lbmc_transient_width,
    .create = lbmc_transient_create,
    .destroy = lbmc_transient_destroy,
    .close = lbmc_transient_close,
};
