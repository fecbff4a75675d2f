/* The pair statistics as an observer (pairs.h; docs/model.md, "Pair statistics"): from
 * the counts x_{j,a} of servers per pool and level (lumped at K), the time integrals of
 * the products of counts over each tick, exactly, from the move hook.
 *
 * Signed-time form (src/core/tally.h): over a tick [t0, t1] of length L, the integral of
 * a product P of counts is P(t1) L - sum over its changes at times s of (change)(s - t0).
 * A move takes one server of pool j from level la to lb != la: x_{j,la} - 1, then
 * x_{j,lb} + 1, and changes only the products that hold x_{j,la} or x_{j,lb}. Each
 * change of one count is written in that count's row: R[la][b] gets -x_b (s - t0), then,
 * with x_la already lowered, R[lb][b] gets +x_b (s - t0) (the row of the product with
 * pool i's counts likewise). The change of the product of levels a != b is then
 * R[a][b] + R[b][a] (the term -1 x +1 of a product whose two counts both change comes
 * from the lowered x_la in the second row); x_a (x_a - 1) changes by -2 (x_a - 1) when
 * x_a drops and by +2 x_a when it rises, which R[a][a] holds once its row's term is
 * corrected. So a move costs two rows of K + 1 levels per pool, O(J K), whatever n. */
#include "pairs.h"

#include <stdlib.h>
#include <string.h>

#include "../system/system.h"

typedef struct {
  int J, C;     /* pools, levels K + 1 */
  double t0;    /* start of the tick */
  double *x;    /* J x C: the counts x_{j,a}, exact in doubles up to 2^53 */
  double *rows; /* J x J x C x C: rows[(j J + i) C C + a C + b], the changes of x_{j,a}
                   times x_{i,b} (s - t0) summed over the tick (i = j: within the pool) */
} lbmc_pairs;

static int lbmc_pairs_wanted(const lbmc_model *m, const lbmc_run_options *o)
{
  (void)m;
  return o->pairs;
}

static size_t lbmc_pairs_block(const lbmc_model *m, int K) { return lbmc_pairs_width(m->J, K); }

static void lbmc_pairs_destroy(void **ws)
{
  lbmc_pairs *w = *ws;
  if (w) {
    free(w->x);
    free(w->rows);
    free(w);
  }
  *ws = NULL;
}

static lbmc_err lbmc_pairs_create(const lbmc_model *m, int K, void **ws)
{
  lbmc_pairs *w = calloc(1, sizeof *w);
  const size_t J = (size_t)m->J, C = (size_t)K + 1;
  *ws = w;
  if (w) {
    w->J = m->J;
    w->C = K + 1;
    w->x = calloc(J * C, sizeof *w->x);
    w->rows = calloc(J * J * C * C, sizeof *w->rows);
  }
  if (!w || !w->x || !w->rows) {
    lbmc_pairs_destroy(ws);
    return LBMC_ERROR(LBMC_ERR_MEMORY,
                      "pair statistics: out of memory for %zu pools and %zu levels", J, C);
  }
  return LBMC_SUCCESS;
}

static void lbmc_pairs_reset(void *ws, const lbmc_view *v)
{
  lbmc_pairs *w = ws;
  const int K = w->C - 1;
  w->t0 = v->time(v->ws);
  for (int j = 0; j < w->J; j++) {
    double *x = w->x + (size_t)j * (size_t)w->C;
    for (int a = 0; a < K; a++)
      x[a] = (double)(v->tail(v->ws, j, (uint32_t)a) - v->tail(v->ws, j, (uint32_t)a + 1));
    x[K] = (double)v->tail(v->ws, j, (uint32_t)K);
  }
  memset(w->rows, 0, sizeof *w->rows * (size_t)w->J * (size_t)w->J * (size_t)w->C * (size_t)w->C);
}

/* row[b] += sign x[b] dt for the C levels b. */
static inline void lbmc_pairs_row(double *restrict row, const double *restrict x, int C, double sdt)
{
  for (int b = 0; b < C; b++) row[b] += sdt * x[b];
}

static void lbmc_pairs_move(void *ws, double t, int j, uint32_t from, uint32_t to)
{
  lbmc_pairs *w = ws;
  const int C = w->C, K = C - 1;
  const int la = from < (uint32_t)K ? (int)from : K, lb = to < (uint32_t)K ? (int)to : K;
  const size_t CC = (size_t)C * (size_t)C;
  const double dt = t - w->t0;
  double *x = w->x + (size_t)j * (size_t)C;
  double *mine = w->rows + (size_t)j * (size_t)w->J * CC; /* rows of pool j's counts */
  if (la == lb) return;                                   /* both at or beyond K */
  for (int i = 0; i < w->J; i++) {
    double *r = mine + (size_t)i * CC;
    const double *xi = w->x + (size_t)i * (size_t)C;
    lbmc_pairs_row(r + (size_t)la * (size_t)C, xi, C, -dt);
  }
  mine[(size_t)j * CC + (size_t)la * (size_t)(C + 1)] += (2 - x[la]) * dt; /* -2 (x - 1) */
  x[la] -= 1;
  for (int i = 0; i < w->J; i++) {
    double *r = mine + (size_t)i * CC;
    const double *xi = w->x + (size_t)i * (size_t)C;
    lbmc_pairs_row(r + (size_t)lb * (size_t)C, xi, C, dt);
  }
  mine[(size_t)j * CC + (size_t)lb * (size_t)(C + 1)] += x[lb] * dt; /* +2 x */
  x[lb] += 1;
}

static void lbmc_pairs_close(void *ws, const lbmc_view *v, double t0, double t1, double *block)
{
  lbmc_pairs *w = ws;
  const int J = w->J, C = w->C, K = C - 1;
  const size_t CC = (size_t)C * (size_t)C;
  const double L = t1 - w->t0;
  (void)v;
  (void)t0;
  for (int j = 0; block && j < J; j++) {
    const double *x = w->x + (size_t)j * (size_t)C;
    const double *r = w->rows + ((size_t)j * (size_t)J + (size_t)j) * CC;
    for (int a = 0; a < C; a++)
      for (int b = a; b < C; b++) {
        const double now = x[a] * (x[b] - (a == b));
        const double changes = a == b ? r[a * (C + 1)] : r[a * C + b] + r[b * C + a];
        block[lbmc_pairs_within(K, j, a, b)] = now * L - changes;
      }
    for (int i = j + 1; i < J; i++) {
      const double *y = w->x + (size_t)i * (size_t)C;
      const double *rj = w->rows + ((size_t)j * (size_t)J + (size_t)i) * CC; /* x_j changes */
      const double *ri = w->rows + ((size_t)i * (size_t)J + (size_t)j) * CC; /* x_i changes */
      for (int a = 0; a < C; a++)
        for (int b = 0; b < C; b++)
          block[lbmc_pairs_across(J, K, j, i, a, b)] =
              x[a] * y[b] * L - (rj[a * C + b] + ri[b * C + a]);
    }
  }
  memset(w->rows, 0, sizeof *w->rows * (size_t)J * (size_t)J * CC);
  w->t0 = t1;
}

const lbmc_observer_type lbmc_observer_pairs = {
    .name = "pairs",
    .summary = "pair statistics: time integrals of products of the counts per pool and level",
    .wanted = lbmc_pairs_wanted,
    .width = lbmc_pairs_block,
    .create = lbmc_pairs_create,
    .destroy = lbmc_pairs_destroy,
    .reset = lbmc_pairs_reset,
    .close = lbmc_pairs_close,
    .move = lbmc_pairs_move,
};
