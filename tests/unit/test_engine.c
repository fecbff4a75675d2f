/* The event engine (src/engine/engine.h) driven directly: state invariants, tick
 * records, common random numbers, and an exact replay of lbmc_replica_record. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ticks.h"
#include "engine/engine.h"
#include "lbmc/metrics.h"
#include "lbmc/rng.h"
#include "lbmc/sim.h"
#include "sim/record.h"
#include "unit.h"

static lbmc_model *model(long n, int J, const double *beta, const double *mu, const long *buf,
                         double lambda, const char *policy, long routers)
{
  lbmc_model *m = NULL;
  CU_ASSERT_FATAL(lbmc_model_create(&m) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_n(m, n) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_lambda(m, lambda) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_pools(m, J, beta, mu, buf) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_policy(m, policy) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_routers(m, routers) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_setup(m) == LBMC_SUCCESS);
  return m;
}

static void gennums(long point, long replica, long rmax, int *g)
{
  for (int p = 0; p < LBMC_PURPOSES; p++)
    CU_ASSERT_FATAL(lbmc_stream_number(point, replica, rmax, (lbmc_purpose)p, &g[p]) ==
                    LBMC_SUCCESS);
}

/* Every redundant piece of the state agrees with the queue lengths q[]. Returns the
 * number of disagreements. */
static long state_errors(const lbmc_state *st)
{
  long err = 0;
  uint64_t total = 0;
  for (uint32_t j = 0; j < st->J; j++) {
    long off = st->m->offset[j], N = st->m->N[j];
    uint64_t pq = 0;
    uint32_t busy = 0;
    for (uint32_t k = 0; k <= st->K; k++) {
      uint32_t atleast = 0;
      for (long s = off; s < off + N; s++) atleast += st->q[s] >= k;
      err += st->level[j * (st->K + 1) + k] != atleast;
    }
    for (long s = off; s < off + N; s++) {
      const lbmc_server *sv = &st->srv[s];
      uint32_t waiting = 0;
      int32_t c = st->first[s], last = -1;
      pq += st->q[s];
      err += st->pool_of[s] != j || st->q[s] > st->B[j];
      for (; c >= 0 && waiting <= st->q[s]; c = st->cust[c].next) waiting++, last = c;
      err += waiting != (st->q[s] ? st->q[s] - 1 : 0) || sv->last != last;
      if (st->q[s] > 0) {
        busy++;
        err += sv->busy_pos < 0 || (uint32_t)sv->busy_pos >= st->nbusy[j] ||
               st->busy[off + sv->busy_pos] != (int32_t)s;
      } else {
        err += sv->busy_pos != -1;
      }
    }
    err += st->nbusy[j] != busy || st->pool_q[j] != pq;
    total += pq;
  }
  err += st->tally.in_system != total;
  return err;
}

/* Two pools (mu 1 and 2; buffers unlimited and 4), n = 8, rho = 0.8, jsq(2), K = 6:
 * after every tick the state is consistent, the counters balance exactly
 *   arrivals = blocked + admitted, admitted - departures = in system,
 *   starts = departures + busy servers,
 * and the tick record holds the counter increments, the tick length, the customers at
 * the end, and (pool 2, buffer 4 <= K) area of customers = sum over k of the areas of
 * "at least k" up to floating rounding (1e-9 relative; ~1e2 events per tick). */
static void test_invariants(void)
{
  const double beta[] = {0.5, 0.5}, mu[] = {1, 2};
  const long buf[] = {LBMC_BUFFER_INF, 4};
  const int K = 6;
  lbmc_model *m = model(8, 2, beta, mu, buf, 1.2, "jsq(2)", 1);
  lbmc_engine *e = NULL;
  double *rec = malloc(sizeof *rec * lbmc_tick_width(2, K));
  int g[LBMC_PURPOSES];
  lbmc_counters prev;
  long err = 0;
  CU_ASSERT_FATAL(rec &&
                  lbmc_engine_create(m, K, 1u << 20, LBMC_ENGINE_SERVERS, &e) == LBMC_SUCCESS);
  gennums(0, 0, 1, g);
  CU_ASSERT_FATAL(lbmc_engine_reset(e, g, 1) == LBMC_SUCCESS);
  prev = lbmc_engine_state(e)->tally.c;
  for (int i = 1; i <= 300; i++) {
    const lbmc_state *st;
    const lbmc_counters *c;
    int64_t admitted = 0, d_adm = 0;
    double areas = 0;
    CU_ASSERT_FATAL(lbmc_engine_advance(e, 0.5 * i, rec) == LBMC_SUCCESS);
    st = lbmc_engine_state(e);
    c = &st->tally.c;
    err += state_errors(st);
    for (int j = 0; j < 2; j++) {
      admitted += c->admitted[j];
      d_adm += c->admitted[j] - prev.admitted[j];
      err += rec[lbmc_tk_admitted(2, K, j)] != (double)(c->admitted[j] - prev.admitted[j]);
    }
    err += c->arrivals != c->blocked + admitted;
    err += admitted - c->departures != (int64_t)st->tally.in_system;
    err += c->starts != c->departures + (int64_t)(st->nbusy[0] + st->nbusy[1]);
    err += rec[LBMC_TK_ARRIVALS] != (double)(c->arrivals - prev.arrivals);
    err += rec[LBMC_TK_DEPARTURES] != (double)(c->departures - prev.departures);
    err += rec[LBMC_TK_BLOCKED] != (double)(c->blocked - prev.blocked);
    err += rec[LBMC_TK_WAITED] != (double)(c->waited - prev.waited);
    err += rec[LBMC_TK_STARTS] != (double)(c->starts - prev.starts);
    err += rec[LBMC_TK_N_END] != (double)st->tally.in_system;
    err += fabs(rec[LBMC_TK_LEN] - 0.5) > 1e-12;
    for (int k = 1; k <= K; k++) areas += rec[lbmc_tk_area_tail(2, K, 1, k)];
    err += fabs(rec[lbmc_tk_area_q(2, K, 1)] - areas) > 1e-9 * fmax(1, areas);
    err += fabs(rec[LBMC_TK_AREA_N] - rec[lbmc_tk_area_q(2, K, 0)] - rec[lbmc_tk_area_q(2, K, 1)]) >
           1e-9 * fmax(1, rec[LBMC_TK_AREA_N]);
    for (int j = 0; j < 2; j++)
      for (int k = 1; k <= K; k++) {
        double a = rec[lbmc_tk_area_tail(2, K, j, k)];
        err += a < -1e-9 || a > 0.5 * (double)st->m->N[j] + 1e-9;
        if (k > 1) err += a > rec[lbmc_tk_area_tail(2, K, j, k - 1)] + 1e-9;
      }
    err += rec[lbmc_tk_area_tail(2, K, 1, 5)] != 0 || rec[lbmc_tk_area_tail(2, K, 1, 6)] != 0;
    prev = *c;
  }
  UT_CHECK(err == 0, "%ld inconsistencies in the engine state or tick records", err);
  CU_ASSERT(lbmc_engine_state(e)->tally.c.arrivals > 1000);
  lbmc_engine_destroy(&e);
  lbmc_model_destroy(&m);
  free(rec);
}

/* Common random numbers: the arrival stream does not depend on the policy (nor on the
 * number of routers), so at the same streams and seed every policy sees the same
 * arrivals up to any time. */
static void test_common_random_numbers(void)
{
  const char *pol[] = {"random", "jsq(2)", "jsq", "pull", "balanced(2)", "jiq", "pull"};
  const long routers[] = {1, 1, 1, 1, 1, 1, 3};
  const double beta[] = {0.5, 0.5}, mu[] = {2, 1.0 / 3};
  const long buf[] = {LBMC_BUFFER_INF, 5};
  int64_t arrivals[7][10];
  int g[LBMC_PURPOSES];
  gennums(4, 2, 8, g);
  for (int i = 0; i < 7; i++) {
    lbmc_model *m = model(10, 2, beta, mu, buf, 0.9, pol[i], routers[i]);
    lbmc_engine *e = NULL;
    CU_ASSERT_FATAL(lbmc_engine_create(m, 3, 1u << 20, LBMC_ENGINE_SERVERS, &e) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_engine_reset(e, g, 77) == LBMC_SUCCESS);
    for (int k = 0; k < 10; k++) {
      CU_ASSERT_FATAL(lbmc_engine_advance(e, 20.0 * (k + 1), NULL) == LBMC_SUCCESS);
      arrivals[i][k] = lbmc_engine_state(e)->tally.c.arrivals;
    }
    if (i > 0)
      UT_CHECK(memcmp(arrivals[i], arrivals[0], sizeof arrivals[0]) == 0,
               "policy %s (R=%ld) saw other arrivals than random", pol[i], routers[i]);
    lbmc_engine_destroy(&e);
    lbmc_model_destroy(&m);
  }
}

/* Each metric is its ratio of tick sums (relative rounding 1e-12): e.g. throughput n T
 * = admitted, p_block arrivals = blocked, mean_sojourn departures = sum of sojourns. */
static void check_formulas(const double *S, const double *v, const long *N, long n)
{
  const int J = 2, K = 4;
  const double A = S[LBMC_TK_ARRIVALS], T = S[LBMC_TK_LEN];
  double adm = S[lbmc_tk_admitted(J, K, 0)] + S[lbmc_tk_admitted(J, K, 1)];
#define NEAR(x, y)                                                                                 \
  UT_CHECK(fabs((x) - (y)) <= 1e-12 * fmax(1, fabs(y)), "%s = %.15g, want %s = %.15g", #x,         \
           (double)(x), #y, (double)(y))
  NEAR(v[lbmc_metric_offset(LBMC_M_THROUGHPUT, J, K)] * (double)n * T, adm);
  NEAR(v[lbmc_metric_offset(LBMC_M_P_WAIT, J, K)] * A, S[LBMC_TK_WAITED]);
  NEAR(v[lbmc_metric_offset(LBMC_M_P_BLOCK, J, K)] * A, S[LBMC_TK_BLOCKED]);
  NEAR(adm + S[LBMC_TK_BLOCKED], A);
  NEAR(v[lbmc_metric_offset(LBMC_M_MESSAGES_PER_ARRIVAL, J, K)] * A, S[LBMC_TK_MESSAGES]);
  NEAR(v[lbmc_metric_offset(LBMC_M_WITHDRAWALS_PER_ARRIVAL, J, K)] * A, S[LBMC_TK_WITHDRAWALS]);
  NEAR(v[lbmc_metric_offset(LBMC_M_MEAN_SOJOURN, J, K)] * S[LBMC_TK_DEPARTURES],
       S[LBMC_TK_SUM_SOJOURN]);
  NEAR(v[lbmc_metric_offset(LBMC_M_MEAN_WAIT, J, K)] * S[LBMC_TK_STARTS], S[LBMC_TK_SUM_WAIT]);
  for (int j = 0; j < J; j++) {
    NEAR(v[lbmc_metric_offset(LBMC_M_UTILIZATION, J, K) + j] * T * (double)N[j],
         S[lbmc_tk_area_tail(J, K, j, 1)]);
    NEAR(v[lbmc_metric_offset(LBMC_M_MEAN_QUEUE, J, K) + j] * T * (double)N[j],
         S[lbmc_tk_area_q(J, K, j)]);
    NEAR(v[lbmc_metric_offset(LBMC_M_ADMITTED_SHARE, J, K) + j] * adm,
         S[lbmc_tk_admitted(J, K, j)]);
  }
#undef NEAR
  CU_ASSERT(S[LBMC_TK_WITHDRAWALS] > 0); /* pull with 2 routers withdraws */
}

/* lbmc_replica_record = engine reset, warm-up, then segments of LBMC_TICKS_PER_SEGMENT
 * ticks each. Replaying that with the engine gives bit-identical segments (but the CPU
 * field), whose arrivals plus departures are those of the state's counters over the
 * measured period; the metrics of their sums obey the formulas of the tick record. */
static void test_replay(void)
{
  const double beta[] = {0.3, 0.7}, mu[] = {1.5, 0.8};
  const long buf[] = {3, LBMC_BUFFER_INF};
  lbmc_model *m = model(9, 2, beta, mu, buf, 0.85, "pull", 2);
  lbmc_run_options o;
  lbmc_replica *r = NULL;
  lbmc_engine *e = NULL;
  lbmc_unit u = {7, 2, 1, 4, 9, 0, 0};
  lbmc_record rec;
  const void *bytes;
  size_t total, width, len, S;
  double *mine, *seg, *tick, *sums, h, events = 0;
  long N[2] = {lbmc_model_pool_servers(m, 0), lbmc_model_pool_servers(m, 1)};
  int g[LBMC_PURPOSES];
  int64_t a0, d0;
  const lbmc_counters *c;

  lbmc_run_options_default(&o);
  o.warmup = 10, o.time = 300, o.batches = 6, o.tail_k = 4, o.engine = LBMC_ENGINE_SERVERS;
  total = lbmc_metric_total(2, 4), width = lbmc_tick_width(2, 4);
  S = (size_t)lbmc_run_segments(&o);
  h = o.time / (double)(S * LBMC_TICKS_PER_SEGMENT);
  mine = malloc(sizeof *mine * total), seg = calloc(width, sizeof *seg);
  tick = malloc(sizeof *tick * width), sums = calloc(width, sizeof *sums);
  CU_ASSERT_FATAL(mine && seg && tick && sums);
  CU_ASSERT_FATAL(lbmc_replica_create(m, &o, &r) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_replica_record(r, &u, &bytes, &len) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_record_view(bytes, len, &rec) == 0);
  CU_ASSERT_EQUAL(rec.h.status, LBMC_STATUS_OK);
  CU_ASSERT_EQUAL(rec.h.point, 7);
  CU_ASSERT_EQUAL((size_t)rec.h.S, S);

  CU_ASSERT_FATAL(lbmc_engine_create(m, 4, 1000 * 9 + 100000, LBMC_ENGINE_SERVERS, &e) ==
                  LBMC_SUCCESS);
  gennums(2, 1, 4, g);
  CU_ASSERT_FATAL(lbmc_engine_reset(e, g, 9) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_engine_advance(e, o.warmup, NULL) == LBMC_SUCCESS);
  c = &lbmc_engine_state(e)->tally.c;
  a0 = c->arrivals, d0 = c->departures;
  for (size_t s = 0; s < S; s++) {
    memset(seg, 0, sizeof *seg * width);
    for (size_t k = 0; k < LBMC_TICKS_PER_SEGMENT; k++) {
      const size_t i = s * LBMC_TICKS_PER_SEGMENT + k;
      CU_ASSERT_FATAL(lbmc_engine_advance(e, o.warmup + (double)(i + 1) * h, tick) == LBMC_SUCCESS);
      for (size_t w = 0; w < width; w++) seg[w] += tick[w];
    }
    seg[LBMC_TK_CPU] = rec.seg[s * width + LBMC_TK_CPU]; /* CPU time is not replayed */
    UT_CHECK(memcmp(seg, rec.seg + s * width, sizeof *seg * width) == 0,
             "replay of segment %zu differs from the record", s);
    for (size_t w = 0; w < width; w++) sums[w] += seg[w];
  }
  events = sums[LBMC_TK_ARRIVALS] + sums[LBMC_TK_DEPARTURES];
  UT_CHECK(events == (double)((c->arrivals - a0) + (c->departures - d0)),
           "events %.0f, arrivals + departures %lld", events,
           (long long)((c->arrivals - a0) + (c->departures - d0)));
  lbmc_metrics_from_sums(sums, 2, 4, N, 9, mine, NULL);
  check_formulas(sums, mine, N, 9);
  lbmc_engine_destroy(&e);
  lbmc_replica_destroy(&r);
  lbmc_model_destroy(&m);
  free(mine), free(seg), free(tick), free(sums);
}

int ut_register_engine(void)
{
  static const ut_test tests[] = {
      {"state invariants and tick records", test_invariants},
      {"common random numbers across policies", test_common_random_numbers},
      {"replay equals lbmc_replica_record", test_replay},
      {NULL, NULL}};
  return ut_add_suite("engine", tests);
}
