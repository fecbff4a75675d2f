/* moments: a test-only observer, registered only in the test build's variant of lbmc_sim
 * (tests/engine/CMakeLists.txt: LBMC_TEST_OBSERVER=lbmc_observer_moments), to show that
 * a new output is one file plus one list line and touches no engine. Per pool j and tick
 * it records the time integral of S2_j = sum over the pool's servers of q^2 (so that
 * E[q^2] of a server is integral / (tick length x N_j)) and the number of moves of the
 * pool's servers (admissions plus departures), from the move hook alone; block layout:
 * [S2 integral of pool 0 .. J-1, moves of pool 0 .. J-1]. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "observers/observer.h"
#include "system/system.h"

typedef struct {
  int J;
  double t0;                   /* start of the tick */
  double s2[LBMC_MAX_POOLS];   /* S2_j now */
  double area[LBMC_MAX_POOLS]; /* integral of S2_j over the tick, signed-time form */
  double moves[LBMC_MAX_POOLS];
} lbmc_moments;

static int lbmc_moments_wanted(const lbmc_model *m, const lbmc_run_options *o)
{
  (void)m;
  (void)o;
  return 1; /* the test build records it in every run */
}

static size_t lbmc_moments_width(const lbmc_model *m, int K)
{
  (void)K;
  return 2 * (size_t)m->J;
}

static lbmc_err lbmc_moments_create(const lbmc_model *m, int K, void **ws)
{
  lbmc_moments *w = calloc(1, sizeof *w);
  (void)K;
  if (!w) return LBMC_ERROR(LBMC_ERR_MEMORY, "moments observer: out of memory");
  w->J = m->J;
  *ws = w;
  return LBMC_SUCCESS;
}

static void lbmc_moments_destroy(void **ws)
{
  free(*ws);
  *ws = NULL;
}

/* S2_j = sum_k k^2 (G[k] - G[k+1]) = sum_{k>=1} (2k - 1) G[k], from the view; NaN when the
 * engine does not show levels high enough. */
static double lbmc_moments_s2(const lbmc_view *v, int j)
{
  double s2 = 0;
  for (uint32_t k = 1;; k++) {
    int64_t g = v->tail(v->ws, j, k);
    if (g == 0) return s2;
    if (g < 0) return NAN;
    s2 += (2.0 * k - 1) * (double)g;
  }
}

static void lbmc_moments_reset(void *ws, const lbmc_view *v)
{
  lbmc_moments *w = ws;
  w->t0 = v->time(v->ws);
  for (int j = 0; j < w->J; j++) {
    w->s2[j] = lbmc_moments_s2(v, j);
    w->area[j] = w->moves[j] = 0;
  }
}

static void lbmc_moments_move(void *ws, double t, int j, uint32_t from, uint32_t to)
{
  lbmc_moments *w = ws;
  const double d = (double)to * to - (double)from * from;
  w->s2[j] += d;
  w->area[j] -= d * (t - w->t0);
  w->moves[j] += 1;
}

static void lbmc_moments_close(void *ws, const lbmc_view *v, double t0, double t1, double *block)
{
  lbmc_moments *w = ws;
  (void)v;
  (void)t0;
  for (int j = 0; j < w->J; j++) {
    if (block) {
      block[j] = w->area[j] + w->s2[j] * (t1 - w->t0);
      block[w->J + j] = w->moves[j];
    }
    w->area[j] = w->moves[j] = 0;
  }
  w->t0 = t1;
}

const lbmc_observer_type lbmc_observer_moments = {
    .name = "moments",
    .summary = "test only: the integral of the sum of squared queue lengths, and moves",
    .wanted = lbmc_moments_wanted,
    .width = lbmc_moments_width,
    .create = lbmc_moments_create,
    .destroy = lbmc_moments_destroy,
    .reset = lbmc_moments_reset,
    .close = lbmc_moments_close,
    .move = lbmc_moments_move,
};
