/* The lean engine's event list (src/core/ladder.h) against a binary heap: the hold model (pop the
 * earliest event, push it again later by a random increment) with increments of very
 * different spreads (exponential, lognormal of scv 16, Pareto of infinite variance, a
 * constant: ties, and zero and tiny increments), with phases in which the queue grows and
 * shrinks, and after a clear. Every popped time must be the heap's, in order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ladder.h"
#include "unit.h"

typedef struct {
  double *h;
  size_t n;
} ut_heap;

static void ut_heap_push(ut_heap *H, double t)
{
  size_t i = H->n++;
  while (i > 0 && H->h[(i - 1) / 2] > t) {
    H->h[i] = H->h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  H->h[i] = t;
}

static double ut_heap_pop(ut_heap *H)
{
  double top = H->h[0], last = H->h[--H->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= H->n) break;
    if (c + 1 < H->n && H->h[c + 1] < H->h[c]) c++;
    if (H->h[c] >= last) break;
    H->h[i] = H->h[c];
    i = c;
  }
  if (H->n) H->h[i] = last;
  return top;
}

static double ut_lq_u(uint64_t *x)
{
  *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
  return ((double)(*x >> 11) + 0.5) * 0x1.0p-53;
}

/* An increment of kind k. */
static double ut_lq_increment(int k, uint64_t *x)
{
  double u = ut_lq_u(x);
  switch (k) {
  case 0: return -log(u); /* exponential */
  case 1: {               /* lognormal, scv 16 */
    double s2 = log(17.0), z = sqrt(-2 * log(u)) * cos(2 * M_PI * ut_lq_u(x));
    return exp(-s2 / 2 + sqrt(s2) * z);
  }
  case 2: return 0.1 * (pow(u, -1 / 1.1) - 1); /* Pareto (Lomax), shape 1.1 */
  case 3: return 1.0;                          /* constant: ties */
  default: return u < 0.3 ? 0.0 : (u < 0.6 ? 1e-12 : -log(ut_lq_u(x))); /* zero, tiny */
  }
}

/* The hold model with up to NMAX events, phases of phase_len steps, `steps` steps for
 * each of the first `kinds` kinds of increment; a window planned for `rate` events per
 * unit time for the odd kinds (every kind if all). */
static void ut_ladder_hold(uint32_t NMAX, long phase_len, long steps, int KINDS, double rate,
                           int all)
{
  double *node = malloc(sizeof *node * NMAX); /* the time of event i */
  uint32_t *freel = malloc(sizeof *freel * NMAX);
  ut_heap H = {malloc(sizeof(double) * NMAX), 0};
  lbmc_ladder q;
  int bad = 0;
  UT_CHECK(node && freel && H.h && lbmc_ladder_create(&q) == LBMC_SUCCESS, "create");
  if (!node || !freel || !H.h) return;
  for (int kind = 0; kind < KINDS && !bad; kind++) {
    uint64_t x = 99 + (uint64_t)kind;
    size_t nfree = NMAX;
    double now = 0;
    for (uint32_t i = 0; i < NMAX; i++) freel[i] = NMAX - 1 - i;
    lbmc_ladder_clear(&q);
    if (all || kind % 2) lbmc_ladder_plan(&q, 0, rate, NMAX); /* a window laid ahead, or none */
    H.n = 0;
    for (long step = 0; step < steps && !bad; step++) {
      /* phases: grow to NMAX, hold, shrink to a few, hold, grow ... */
      long phase = (step / phase_len) % 4;
      int pushes = phase == 0 ? 2 : (phase == 2 ? 0 : 1);
      double a = lbmc_ladder_min(&q), b;
      if (q.size != H.n) {
        UT_CHECK(0, "kind %d step %ld: sizes %zu vs %zu", kind, step, q.size, H.n);
        bad = 1;
        break;
      }
      if (H.n > 0 && (phase != 0 || nfree < 2)) {
        uint32_t i;
        b = ut_heap_pop(&H);
        if (a != b) {
          UT_CHECK(0, "kind %d step %ld: ladder %.17g, heap %.17g", kind, step, a, b);
          bad = 1;
          break;
        }
        i = lbmc_ladder_pop(&q);
        if (node[i] != a) {
          UT_CHECK(0, "kind %d step %ld: event %u has %.17g", kind, step, i, node[i]);
          bad = 1;
        }
        now = a;
        freel[nfree++] = i;
      } else if (H.n == 0 && a != INFINITY) {
        UT_CHECK(0, "kind %d: empty ladder gives %g", kind, a);
        bad = 1;
      }
      for (int p = 0; p < pushes && nfree > 0 && H.n + 8 < NMAX; p++) {
        uint32_t i = freel[--nfree];
        node[i] = now + ut_lq_increment(kind, &x);
        ut_heap_push(&H, node[i]);
        if (lbmc_ladder_push(&q, node[i], i) != 0) bad = 1;
      }
      if (H.n < 4 && phase == 2) /* keep a few events when shrinking */
        for (int p = 0; p < 4; p++) {
          uint32_t i = freel[--nfree];
          node[i] = now + ut_lq_increment(kind, &x);
          ut_heap_push(&H, node[i]);
          if (lbmc_ladder_push(&q, node[i], i) != 0) bad = 1;
        }
    }
    while (!bad && H.n > 0) { /* drain */
      double a = lbmc_ladder_min(&q), b = ut_heap_pop(&H);
      if (a != b) bad = 1;
      lbmc_ladder_pop(&q);
    }
    UT_CHECK(!bad && lbmc_ladder_min(&q) == INFINITY && q.size == 0,
             "kind %d: the ladder's order is the heap's", kind);
  }
  UT_CHECK(lbmc_ladder_bytes(&q) > 0, "bytes");
  lbmc_ladder_free(&q);
  free(node);
  free(freel);
  free(H.h);
}

static void test_ladder_hold(void) { ut_ladder_hold(40000, 50000, 400000, 5, 1000.0, 0); }

/* Up to 700000 events: past LBMC_LADDER_BIG, where the windows aim at
 * LBMC_LADDER_PER_BUCKET_BIG events per bucket, and back below it (one cycle of the
 * phases), with a window planned for the rate of the growth phase (as the lean engine
 * plans it: without one, the first window is laid from a few events and far too wide,
 * and a queue that then grows by pushes alone sorts into Bottom at a cost of its length
 * per push) and without the increments of kind 4 (zero and tiny: the same). */
static void test_ladder_hold_big(void)
{
  CU_ASSERT_FATAL(700000 > 2 * LBMC_LADDER_PER_BUCKET_BIG + LBMC_LADDER_BIG);
  ut_ladder_hold(700000, 350000, 4 * 350000, 4, 1e5, 1);
}

int ut_register_ladder(void)
{
  CU_pSuite s = CU_add_suite("ladder", NULL, NULL);
  if (!s) return -1;
  return CU_add_test(s, "hold model against a heap", test_ladder_hold) &&
                 CU_add_test(s, "hold model, a queue past LBMC_LADDER_BIG", test_ladder_hold_big)
             ? 0
             : -1;
}
