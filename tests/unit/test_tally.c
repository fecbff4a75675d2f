/* The tally's workload integral (src/core/tally.h): random jumps and drain-rate changes
 * told through lbmc_tally_work / lbmc_tally_drain over several ticks, against the
 * integral of the same piecewise-linear W(t) summed segment by segment (trapezoids,
 * exact for a linear piece); the work carried from tick to tick; NaN when the engine
 * does not tell its work. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/tally.h"
#include "core/ticks.h"
#include "unit.h"

static int64_t ut_tally_tail(const void *ws, int j, uint32_t k)
{
  (void)ws;
  (void)j;
  (void)k;
  return 0;
}
static uint64_t ut_tally_customers(const void *ws, int j)
{
  (void)ws;
  (void)j;
  return 0;
}

/* A uniform on [0, 1) from a 64-bit LCG (the test's own, reproducible). */
static double ut_tally_u(uint64_t *x)
{
  *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*x >> 11) * 0x1.0p-53;
}

static void test_work_integral(void)
{
  enum { J = 2, K = 3, TICKS = 7, EVENTS = 400 };
  const long N[J] = {3, 5};
  lbmc_view v = {NULL, J, K, (const int64_t *)N, ut_tally_tail, ut_tally_customers, NULL, NULL};
  lbmc_tally t = {0}; /* the hooks (observe, stop) unset: the dispatcher sets them */
  double *rec = calloc(lbmc_tick_width(J, K), sizeof *rec);
  double W[J] = {0, 0}, r[J] = {0, 0}, now = 0, tick_end = 0;
  uint64_t x = 12345;
  int bad = 0;
  UT_CHECK(rec && lbmc_tally_create(&t, J, K, 1000, LBMC_TERMS_AT_DEPARTURE) == LBMC_SUCCESS,
           "create");
  if (!rec) return;
  t.has_work = 1;
  lbmc_tally_reset(&t, 0);
  /* A non-empty start: work and busy servers told at time 0. */
  for (int j = 0; j < J; j++) {
    W[j] = 2.5 + j;
    r[j] = 1.5 * (j + 1);
    lbmc_tally_work(&t, 0, (uint32_t)j, W[j]);
    lbmc_tally_drain(&t, 0, (uint32_t)j, r[j]);
  }
  for (int tick = 0; tick < TICKS; tick++) {
    double area[J] = {0, 0};
    tick_end += 0.5 + 3 * ut_tally_u(&x);
    for (int e = 0; e < EVENTS / TICKS; e++) {
      double next = now + (tick_end - now) * ut_tally_u(&x) * 0.2;
      int j = ut_tally_u(&x) < 0.5 ? 0 : 1;
      for (int i = 0; i < J; i++) { /* the piece [now, next]: W linear at slope -r */
        double len = next - now, W1 = W[i] - r[i] * len;
        area[i] += (W[i] + W1) / 2 * len;
        W[i] = W1;
      }
      now = next;
      if (ut_tally_u(&x) < 0.5) {
        double dW = 3 * ut_tally_u(&x) - 0.5; /* jumps of either sign (expectations) */
        W[j] += dW;
        lbmc_tally_work(&t, now, (uint32_t)j, dW);
      } else {
        double dr = ut_tally_u(&x) < 0.5 ? -0.7 : 1.1;
        r[j] += dr;
        lbmc_tally_drain(&t, now, (uint32_t)j, dr);
      }
    }
    for (int i = 0; i < J; i++) { /* up to the tick's end */
      double len = tick_end - now, W1 = W[i] - r[i] * len;
      area[i] += (W[i] + W1) / 2 * len;
      W[i] = W1;
    }
    now = tick_end;
    lbmc_tally_close(&t, &v, tick_end, rec);
    for (int i = 0; i < J; i++) {
      double got = rec[lbmc_tk_area_work(J, K, i)];
      if (!(fabs(got - area[i]) <= 1e-9 * (1 + fabs(area[i])))) {
        UT_CHECK(0, "tick %d pool %d: integral %.15g, want %.15g", tick, i, got, area[i]);
        bad++;
      }
      if (!(fabs(t.work[i * LBMC_TALLY_WORK_FIELDS + LBMC_TW_W0] - W[i]) <=
            1e-9 * (1 + fabs(W[i]))))
        bad++;
    }
  }
  UT_CHECK(bad == 0, "%d mismatches of the workload integral or the carried work", bad);
  /* The control: a jump told at the wrong time changes the integral. */
  lbmc_tally_work(&t, now + 1, 0, 1.0);
  lbmc_tally_close(&t, &v, now + 2, rec);
  UT_CHECK(fabs(rec[lbmc_tk_area_work(J, K, 0)] - ((W[0] + W[0] - 2 * r[0]) / 2 * 2 + 1.0 * 1)) <=
               1e-9 * (1 + fabs(W[0])),
           "a jump at mid-tick adds its work times the rest of the tick");
  /* An engine that does not tell its work: NaN, never 0. */
  t.has_work = 0;
  lbmc_tally_reset(&t, 0);
  lbmc_tally_close(&t, &v, 1.0, rec);
  UT_CHECK(isnan(rec[lbmc_tk_area_work(J, K, 0)]) && isnan(rec[lbmc_tk_area_work(J, K, 1)]),
           "unknown work is NaN");
  lbmc_tally_free(&t);
  free(rec);
}

int ut_register_tally(void)
{
  CU_pSuite s = CU_add_suite("tally", NULL, NULL);
  if (!s) return -1;
  return CU_add_test(s, "workload integral over ticks", test_work_integral) ? 0 : -1;
}
