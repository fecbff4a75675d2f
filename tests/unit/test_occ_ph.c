/* The phase-type occupancy engine (occ_ph.c) in parts: its state against its own
 * redundancy along random runs (phase counts against the tail counts, busy servers per
 * phase and per rate class, the Fenwick trees rebuilt from the counts above the flat
 * levels, the rows beyond the trees' size zero, the class clocks),
 * tick records, common arrivals with the general engine, the phase changes counted,
 * which models it takes, the mixture's phase-type pools against closed forms (Erlang
 * and hyperexponential class laws), their bytes, and the mean-field ODE per level and
 * phase against closed forms (an exponential law written with two phases under JSQ(2),
 * M/PH/1 under random routing by Pollaczek-Khinchine, M/G/1/1 insensitivity). */
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ticks.h"
#include "engine/engine.h"
#include "engine/occ_meanfield.h"
#include "engine/occ_ph.h"
#include "engine/occupancy.h"
#include "lbmc/engines.h"
#include "lbmc/rng.h"
#include "lbmc/sim.h"
#include "stats/mixture.h"
#include "unit.h"

/* ---- helpers ---- */

typedef struct {
  lbmc_model *m;
  lbmc_phocc *o;
  lbmc_stream streams[LBMC_PURPOSES];
} ph_engine;

static void ph_open(ph_engine *e, const ut_occ_conf *c, int gennum0, int K, lbmc_init_kind init)
{
  void *ws = NULL;
  memset(e, 0, sizeof *e);
  e->m = ut_occ_model(c);
  CU_ASSERT_FATAL(lbmc_engine_occupancy_ph.create(e->m, K, UINT64_MAX, &ws) == LBMC_SUCCESS);
  e->o = ws;
  lbmc_run_options *ro = malloc(sizeof *ro); /* large: a tail start's fractions */
  CU_ASSERT_FATAL(ro != NULL);
  lbmc_run_options_default(ro);
  ro->init = init;
  CU_ASSERT_FATAL(lbmc_engine_occupancy_ph.set_init(ws, ro, NULL, 0) == LBMC_SUCCESS);
  free(ro);
  for (int p = 0; p < LBMC_PURPOSES; p++)
    CU_ASSERT_FATAL(lbmc_stream_init(&e->streams[p], gennum0 + p, 777) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_engine_occupancy_ph.reset(ws, e->streams) == LBMC_SUCCESS);
}

static void ph_close(ph_engine *e)
{
  void *ws = e->o;
  lbmc_engine_occupancy_ph.destroy(&ws);
  for (int p = 0; p < LBMC_PURPOSES; p++) lbmc_stream_free(&e->streams[p]);
  lbmc_model_destroy(&e->m);
}

/* ---- the state ---- */

/* Disagreements among the redundant parts of the phase state: x against the tail counts
 * G, y against x, the trees against a rebuild from x, the classes' busy servers, the
 * clocks; plus the level state itself (ut_occ_state_errors). */
static long ph_state_errors(const lbmc_phocc *o)
{
  const lbmc_occ_state *st = &o->st;
  long err = ut_occ_state_errors(st);
  int64_t busy[LBMC_PHOCC_PAIRS] = {0};
  for (uint32_t j = 0; j < st->J; j++) {
    const lbmc_occ_pool *g = &st->pool[j];
    const lbmc_phocc_pool *h = &o->ph[j];
    int64_t y[LBMC_PHOCC_M] = {0};
    err += g->top >= h->size || h->size > h->cap || (h->size & (h->size - 1)) != 0;
    for (uint32_t k = 1; k < h->size; k++) {
      int64_t sum = 0;
      for (uint32_t p = 0; p < h->m; p++) {
        int64_t x = h->x[(size_t)k * h->m + p];
        err += x < 0;
        sum += x;
        y[p] += x;
      }
      err += sum != lbmc_occ_count(g, k);
    }
    for (uint32_t p = 0; p < h->m; p++) {
      err += y[p] != h->y[p];
      busy[h->cls[p]] += h->y[p];
    }
    for (uint32_t i = 1; i < h->size; i++) /* node i: levels size - l, l in (i - lowbit, i],
                                              those above the flat levels */
      for (uint32_t p = 0; p < h->m; p++) {
        int64_t sum = 0;
        for (uint32_t l = i - (i & -i) + 1; l <= i; l++)
          if (h->size - l > LBMC_PHOCC_FLAT) sum += h->x[(size_t)(h->size - l) * h->m + p];
        err += sum != h->f[(size_t)i * h->m + p];
      }
    for (uint32_t k = h->size; k < h->cap; k++) /* rows beyond size (the search reads the */
      for (uint32_t p = 0; p < h->m; p++)       /* flat ones): zero */
        err += h->x[(size_t)k * h->m + p] != 0;
  }
  for (uint32_t c = 0; c < o->C; c++) {
    err += busy[c] != o->cls[c].busy;
    err += o->cls[c].busy > 0 ? !(o->cls[c].next >= st->t && isfinite(o->cls[c].next))
                              : o->cls[c].next != INFINITY;
    err += o->cls[c].next < o->next_dep;
  }
  return err;
}

/* Random runs: the invariants at every tick, and tick records consistent with the
 * counters. */
static void test_invariants(void)
{
  const double beta3[] = {0.3, 0.3, 0.4}, mu3[] = {1, 0.5, 2};
  const long buf3[] = {3, LBMC_BUFFER_INF, 1};
  const char *h2 = "hyperexponential:scv=5", *mixed = "erlang:k=4;hyperexponential:scv=2;"
                                                      "exponential";
  const char *cox = "coxian:r=[2.5,5/3,1.25],p=[0.6,0.5]";
  const char *phf =
      "ph:alpha=[1/2,1/2,0],T=[[-73/22,73/44,73/88],[73/88,-73/44,0],[73/44,0,-73/11]]";
  ut_occ_conf cases[] = {
      {.n = 13,
       .J = 3,
       .beta = beta3,
       .mu = mu3,
       .buffer = buf3,
       .service = mixed,
       .policy = "jsq(2)",
       .lambda = 1.1},
      {.n = 40,
       .J = 3,
       .beta = beta3,
       .mu = mu3,
       .service = mixed,
       .policy = "pull",
       .routers = 3,
       .lambda = 1.0},
      {.n = 60,
       .J = 3,
       .beta = beta3,
       .mu = mu3,
       .service = h2,
       .policy = "pull",
       .routers = 20,
       .lambda = 1.0},
      {.n = 9,
       .J = 3,
       .beta = beta3,
       .mu = mu3,
       .buffer = buf3,
       .service = cox,
       .policy = "balanced(3)",
       .lambda = 1.2},
      {.n = 7, .J = 3, .beta = beta3, .mu = mu3, .service = phf, .policy = "jsq", .lambda = 1.0},
      {.n = 5, .service = "erlang:k=16", .policy = "random", .lambda = 0.9},
      {.n = 20, .service = h2, .policy = "jsq(3)", .sampling = "with_replacement", .lambda = 0.95},
      {.n = 10, .service = phf, .policy = "jiq", .lambda = 0.9},
      {.n = 1000, .service = "hyperexponential:scv=20", .policy = "jsq(2)", .lambda = 0.9}};
  const int N = (int)(sizeof cases / sizeof cases[0]);
  for (int i = 0; i < N; i++) {
    ph_engine e;
    const int K = 4, J = cases[i].J ? cases[i].J : 1;
    double *rec = malloc(sizeof *rec * lbmc_tick_width(J, K)), prev_n = 0;
    long bad = 0;
    ph_open(&e, &cases[i], 1370 + 4 * i, K, LBMC_INIT_EMPTY);
    for (int t = 1; t <= 200; t++) {
      CU_ASSERT_FATAL(lbmc_engine_occupancy_ph.advance(e.o, 0.5 * t, rec) == LBMC_SUCCESS);
      bad += ph_state_errors(e.o);
      bad += ut_tick_errors(rec, J, K, 0.5, &prev_n);
    }
    UT_CHECK(bad == 0, "case %d (%s, %s): %ld inconsistencies", i, cases[i].policy,
             cases[i].service, bad);
    free(rec);
    ph_close(&e);
  }
}

/* From the mean-field start: the cells rounded to counts that sum to N_j, and the state
 * consistent from the first event. */
static void test_meanfield_start(void)
{
  const double beta[] = {0.5, 0.5}, mu[] = {1, 2};
  ut_occ_conf c = {.n = 1000003,
                   .J = 2,
                   .beta = beta,
                   .mu = mu,
                   .service = "erlang:k=4;hyperexponential:scv=5",
                   .policy = "jsq(2)",
                   .lambda = 1.2};
  ph_engine e;
  double *rec = malloc(sizeof *rec * lbmc_tick_width(2, 4));
  long bad;
  ph_open(&e, &c, 1420, 4, LBMC_INIT_MEANFIELD);
  UT_CHECK(e.o->mf.settled && e.o->mf.ph == 4, "mean-field point: %s (%u phases)", e.o->mf.note,
           e.o->mf.ph);
  bad = ph_state_errors(e.o);
  UT_CHECK(e.o->st.pool[0].G[1] > 0 && e.o->st.pool[1].G[2] > 0, "a busy start: %lld %lld",
           (long long)e.o->st.pool[0].G[1], (long long)e.o->st.pool[1].G[2]);
  for (int t = 1; t <= 5; t++) {
    CU_ASSERT_FATAL(lbmc_engine_occupancy_ph.advance(e.o, 0.01 * t, rec) == LBMC_SUCCESS);
    bad += ph_state_errors(e.o);
  }
  UT_CHECK(bad == 0, "%ld inconsistencies", bad);
  free(rec);
  ph_close(&e);
}

/* Common random numbers: the same arrival count in every tick as the general engine. */
static void test_common_arrivals(void)
{
  ut_occ_conf c = {.n = 50, .service = "hyperexponential:scv=5", .policy = "jsq(2)", .lambda = 0.9};
  ph_engine e;
  lbmc_engine *gen = NULL;
  int gennum[LBMC_PURPOSES] = {1440, 1441, 1442, 1443};
  const int K = 3;
  double *a = malloc(sizeof *a * lbmc_tick_width(1, K)),
         *b = malloc(sizeof *b * lbmc_tick_width(1, K));
  long diff = 0;
  ph_open(&e, &c, 1440, K, LBMC_INIT_EMPTY);
  CU_ASSERT_FATAL(lbmc_engine_create(e.m, K, 0, LBMC_ENGINE_GENERAL, &gen) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_engine_reset(gen, gennum, 777) == LBMC_SUCCESS);
  for (int t = 1; t <= 100; t++) {
    CU_ASSERT_FATAL(lbmc_engine_occupancy_ph.advance(e.o, 0.3 * t, a) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_engine_advance(gen, 0.3 * t, b) == LBMC_SUCCESS);
    diff += a[LBMC_TK_ARRIVALS] != b[LBMC_TK_ARRIVALS];
  }
  UT_CHECK(diff == 0, "%ld ticks with different arrival counts", diff);
  lbmc_engine_destroy(&gen);
  ph_close(&e);
  free(a);
  free(b);
}

/* Phase changes: Erlang-4 from an empty start moves every customer through phases 0..3,
 * so the changes are exactly 3 per completion plus the phases reached by the customers in
 * service; a Coxian's per completion average alpha (-T)^-1 q - 1 (q the phases' exit
 * rates from the diagonal), within 5 standard errors of a binomial-like count. */
static void test_phase_changes(void)
{
  {
    ut_occ_conf c = {.n = 30, .service = "erlang:k=4", .policy = "jsq(2)", .lambda = 0.9};
    ph_engine e;
    const lbmc_phocc_pool *h;
    int64_t expect;
    ph_open(&e, &c, 1450, 3, LBMC_INIT_EMPTY);
    CU_ASSERT_FATAL(lbmc_engine_occupancy_ph.advance(e.o, 500, NULL) == LBMC_SUCCESS);
    h = &e.o->ph[0];
    expect = 3 * e.o->st.tally.c.departures;
    for (uint32_t p = 0; p < 4; p++) expect += (int64_t)p * h->y[p];
    UT_CHECK(h->phase_changes == expect, "erlang:k=4: %lld phase changes, expected %lld",
             (long long)h->phase_changes, (long long)expect);
    ph_close(&e);
  }
  { /* coxian r = (2.5, 5/3, 1.25), p = (0.6, 0.5): phases visited 1 + 0.6 + 0.3 */
    ut_occ_conf c = {.n = 30,
                     .service = "coxian:r=[2.5,5/3,1.25],p=[0.6,0.5]",
                     .policy = "random",
                     .lambda = 0.7};
    ph_engine e;
    double d, per;
    ph_open(&e, &c, 1460, 3, LBMC_INIT_EMPTY);
    CU_ASSERT_FATAL(lbmc_engine_occupancy_ph.advance(e.o, 5000, NULL) == LBMC_SUCCESS);
    d = (double)e.o->st.tally.c.departures;
    per = (double)e.o->ph[0].phase_changes / d;
    /* changes per customer: 0, 1, 2 w.p. 0.4, 0.3, 0.3: mean 0.9, variance 0.69 */
    UT_CHECK_NORMAL("coxian phase changes per completion", per, 0.9, sqrt(0.69 / d) + 30 / d);
    ph_close(&e);
  }
}

/* Which models the engine takes, the reasons for the others, and auto's choice. */
static void test_applies(void)
{
  static const struct {
    ut_occ_conf c;
    int applies;
    const char *why;
  } cases[] = {
      {{.n = 10, .service = "erlang:k=4", .policy = "jsq(2)"}, 1, ""},
      {{.n = 10, .service = "erlang:k=16", .policy = "jsq(2)"}, 1, ""},
      {{.n = 10, .service = "erlang:k=17", .policy = "jsq(2)"}, 0, "not of phase type"},
      {{.n = 10, .service = "lognormal:scv=4", .policy = "jsq(2)"}, 0, "not of phase type"},
      {{.n = 10, .service = "deterministic", .policy = "random"}, 0, "not of phase type"},
      {{.n = 10, .service = "coxian:scv=3", .policy = "pull", .routers = 3}, 1, ""},
      {{.n = 10, .service = "exponential", .policy = "jsq"}, 1, ""},
      {{.n = 10, .service = "hyperexponential:scv=2", .policy = "lwl(2)"}, 0, "reads workloads"},
      {{.n = 10, .service = "hyperexponential:scv=2", .policy = "jiq", .routers = 2},
       0,
       "keep and R > 1"},
      {{.n = 10, .service = "hyperexponential:scv=2", .policy = "jsq(2)", .nrates = 2},
       0,
       "speed list"},
      {{.n = 1000000000000LL, .service = "hyperexponential:scv=2", .policy = "jsq(2)"}, 1, ""}};
  const int N = (int)(sizeof cases / sizeof cases[0]);
  char why[256];
  for (int i = 0; i < N; i++) {
    lbmc_model *m = ut_occ_model(&cases[i].c);
    int a;
    why[0] = '\0';
    a = lbmc_engine_occupancy_ph.applies(m, why, sizeof why);
    UT_CHECK(a == cases[i].applies && strstr(why, cases[i].why), "%s %s: applies %d (%s)",
             cases[i].c.service, cases[i].c.policy, a, why);
    lbmc_model_destroy(&m);
  }
}

static void test_choice(void)
{
  static const struct {
    ut_occ_conf c;
    const char *engine;
  } cases[] = {
      {{.n = 10, .service = "exponential", .policy = "jsq(2)"}, "occupancy"},
      {{.n = 10, .service = "erlang:k=4", .policy = "jsq(2)"}, "occupancy-ph"},
      {{.n = 3000000000LL, .service = "hyperexponential:scv=5", .policy = "pull"}, "occupancy-ph"},
      {{.n = 10, .service = "erlang:k=20", .policy = "jsq(2)"}, "lean"},
      {{.n = 10, .service = "erlang:k=4", .policy = "lwl(2)"}, "lean"},
      {{.n = 10, .service = "erlang:k=4", .policy = "jiq", .routers = 2}, "lean"},
      {{.n = 10, .service = "erlang:k=4", .policy = "random", .nrates = 2}, "general"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lbmc_model *m = ut_occ_model(&cases[i].c);
    lbmc_run_options o;
    char why[1024];
    const char *name;
    lbmc_run_options_default(&o);
    name = lbmc_run_engine(m, &o, why, sizeof why);
    UT_CHECK(name && strcmp(name, cases[i].engine) == 0, "case %zu (%s, %s): %s, %s", i,
             cases[i].c.service, cases[i].c.policy, name ? name : "none", why);
    lbmc_model_destroy(&m);
  }
}

/* ---- the mixture's phase-type pools ---- */

/* A mixture of one pool with the law of `text` at speed mu. */
static lbmc_mixture *ph_mixture(const char *text, double mu, lbmc_service *svc)
{
  lbmc_mixture *mx = NULL;
  const double *alpha, *T;
  int L = 1, m;
  CU_ASSERT_FATAL(lbmc_service_parse("service", text, svc) == LBMC_SUCCESS);
  m = lbmc_service_ph(svc, &alpha, &T);
  CU_ASSERT_FATAL(lbmc_mixture_create(1, &mu, &L, &mx) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_mixture_set_ph(mx, 0, m, alpha, T, lbmc_service_ph_exit(svc),
                                      lbmc_service_ph_residual(svc)) == LBMC_SUCCESS);
  return mx;
}

/* Erlang-k classes: from phase p (0-based) k - p phases remain, then whole requirements,
 * every phase Exp(k mu): class (k0, p) waits Erlang(k - p + (k0 - 1) k, k mu) and stays
 * k phases more; idle arrivals stay Erlang(k, k mu). The mixture's distribution function
 * against the gamma mixture, its mean, and quantiles as roots. */
static void test_mixture_erlang(void)
{
  const int k = 4;
  const double mu = 1.5;
  lbmc_service svc;
  lbmc_mixture *mx = ph_mixture("erlang:k=4", mu, &svc);
  static const uint32_t cls[][3] = {{0, 0, 50}, {1, 0, 20}, {1, 3, 7},
                                    {2, 1, 11}, {5, 2, 3},  {9, 3, 1}};
  double total = 0, err = 0, mean_w = 0, mean_s = 0;
  for (size_t i = 0; i < sizeof cls / sizeof cls[0]; i++)
    for (uint32_t c = 0; c < cls[i][2]; c++)
      CU_ASSERT_FATAL(lbmc_mixture_record(mx, 0, cls[i][0] * k + cls[i][1]) == 0);
  for (size_t i = 0; i < sizeof cls / sizeof cls[0]; i++) {
    const double a = cls[i][0] ? k - cls[i][1] + (cls[i][0] - 1.0) * k : 0;
    total += cls[i][2];
    mean_w += cls[i][2] * a / (k * mu);
    mean_s += cls[i][2] * (a + k) / (k * mu);
  }
  for (double t = 0.05; t < 12; t *= 1.3)
    for (int kind = 0; kind < 2; kind++) {
      double F = 0;
      for (size_t i = 0; i < sizeof cls / sizeof cls[0]; i++) {
        double a = cls[i][0] ? k - cls[i][1] + (cls[i][0] - 1.0) * k : 0;
        if (kind == LBMC_MIX_SOJOURN) a += k;
        F += cls[i][2] * (a == 0 ? 1.0 : gsl_sf_gamma_inc_P(a, k * mu * t));
      }
      err = fmax(err, fabs(lbmc_mixture_cdf(mx, (lbmc_mix_kind)kind, t) - F / total));
    }
  UT_CHECK(err < 1e-12, "erlang classes: largest cdf error %.3g", err);
  UT_CHECK(fabs(lbmc_mixture_mean(mx, LBMC_MIX_WAIT) - mean_w / total) < 1e-12 &&
               fabs(lbmc_mixture_mean(mx, LBMC_MIX_SOJOURN) - mean_s / total) < 1e-12,
           "means %.12g %.12g vs %.12g %.12g", lbmc_mixture_mean(mx, LBMC_MIX_WAIT),
           lbmc_mixture_mean(mx, LBMC_MIX_SOJOURN), mean_w / total, mean_s / total);
  for (double p = 0.1; p < 1; p += 0.2)
    for (int kind = 0; kind < 2; kind++) {
      double q = lbmc_mixture_quantile(mx, (lbmc_mix_kind)kind, p);
      double F = lbmc_mixture_cdf(mx, (lbmc_mix_kind)kind, q);
      UT_CHECK(kind == LBMC_MIX_WAIT && F - p >= 0 && q == 0 ? 1 : fabs(F - p) < 1e-9,
               "quantile %g (kind %d): %.12g, F = %.12g", p, kind, q, F);
    }
  lbmc_mixture_destroy(&mx);
}

/* Hyperexponential classes: class (1, p) waits Exp(mu r_p); class (2, p) waits that plus a
 * fresh requirement, sum_i a_i (Exp(mu r_p) + Exp(mu r_i)), whose distribution function
 * is 1 - (b e^{-a t} - a e^{-b t}) / (b - a) for rates a != b. */
static void test_mixture_h2(void)
{
  const double mu = 0.8;
  lbmc_service svc;
  lbmc_mixture *mx = ph_mixture("hyperexponential:scv=5", mu, &svc);
  const double *alpha, *T;
  double r[2], err = 0;
  lbmc_service_ph(&svc, &alpha, &T);
  r[0] = -T[0] * mu;
  r[1] = -T[3] * mu;
  for (int i = 0; i < 30; i++) CU_ASSERT_FATAL(lbmc_mixture_record(mx, 0, 1 * 2 + 0) == 0);
  for (int i = 0; i < 10; i++) CU_ASSERT_FATAL(lbmc_mixture_record(mx, 0, 2 * 2 + 1) == 0);
  for (double t = 0.01; t < 200; t *= 1.4) {
    double F = 30 * -expm1(-r[0] * t);
    for (int i = 0; i < 2; i++) {
      const double a = r[1], b = r[i];
      F += 10 * alpha[i] * (1 - (b * exp(-a * t) - a * exp(-b * t)) / (b - a));
    }
    err = fmax(err, fabs(lbmc_mixture_cdf(mx, LBMC_MIX_WAIT, t) - F / 40));
  }
  UT_CHECK(err < 1e-12, "hyperexponential classes: largest cdf error %.3g", err);
  lbmc_mixture_destroy(&mx);
}

/* Bytes: a phase-type pool travels with its law (LMX2) and comes back with the same
 * counts and quantiles; exponential pools alone keep the LMX1 form; adding a mixture of
 * another law is refused; clearing forgets the cached uniformisation. */
static void test_mixture_bytes(void)
{
  const double mu[] = {1, 2};
  const int L[] = {1, 1};
  lbmc_service h2, e4;
  const double *a, *T;
  lbmc_mixture *mx = NULL, *back = NULL, *other = NULL;
  unsigned char buf[8192];
  size_t size, used = 0;
  double q0, q1;
  CU_ASSERT_FATAL(lbmc_service_parse("s", "hyperexponential:scv=5", &h2) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_service_parse("s", "erlang:k=4", &e4) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_mixture_create(2, mu, L, &mx) == LBMC_SUCCESS);
  size = lbmc_mixture_pack(mx, buf, sizeof buf);
  UT_CHECK(size > 0 && memcmp(buf, "LMX1", 4) == 0, "exponential pools pack as LMX1");
  lbmc_service_ph(&h2, &a, &T);
  CU_ASSERT_FATAL(lbmc_mixture_set_ph(mx, 0, 2, a, T, lbmc_service_ph_exit(&h2),
                                      lbmc_service_ph_residual(&h2)) == LBMC_SUCCESS);
  for (uint32_t i = 0; i < 300; i++)
    CU_ASSERT_FATAL(lbmc_mixture_record(mx, i % 2, i % 2 ? i % 7 : i % 13) == 0);
  UT_CHECK(lbmc_mixture_set_ph(mx, 0, 2, a, T, lbmc_service_ph_exit(&h2),
                               lbmc_service_ph_residual(&h2)) != LBMC_SUCCESS,
           "a law is set before counts only");
  size = lbmc_mixture_packed_size(mx);
  CU_ASSERT_FATAL(size <= sizeof buf && lbmc_mixture_pack(mx, buf, sizeof buf) == size);
  UT_CHECK(memcmp(buf, "LMX2", 4) == 0, "a phase-type pool packs as LMX2");
  CU_ASSERT_FATAL(lbmc_mixture_unpack(buf, size, &back, &used) == LBMC_SUCCESS && used == size);
  q0 = lbmc_mixture_quantile(mx, LBMC_MIX_SOJOURN, 0.9);
  q1 = lbmc_mixture_quantile(back, LBMC_MIX_SOJOURN, 0.9);
  UT_CHECK(q0 == q1 && lbmc_mixture_total(back) == 300, "unpacked: q0.9 %.12g vs %.12g", q0, q1);
  CU_ASSERT_FATAL(lbmc_mixture_add(back, mx) == LBMC_SUCCESS);
  UT_CHECK(fabs(lbmc_mixture_quantile(back, LBMC_MIX_SOJOURN, 0.9) - q0) < 1e-9 * q0,
           "doubled counts, the same quantile");
  UT_CHECK(lbmc_mixture_unpack(buf, size - 8, &other, NULL) != LBMC_SUCCESS && !other,
           "a cut-short packing is refused");
  CU_ASSERT_FATAL(lbmc_mixture_create(2, mu, L, &other) == LBMC_SUCCESS);
  lbmc_service_ph(&e4, &a, &T);
  CU_ASSERT_FATAL(lbmc_mixture_set_ph(other, 0, 4, a, T, lbmc_service_ph_exit(&e4),
                                      lbmc_service_ph_residual(&e4)) == LBMC_SUCCESS);
  UT_CHECK(lbmc_mixture_add(other, mx) != LBMC_SUCCESS, "another law is refused");
  lbmc_mixture_clear(back);
  for (uint32_t i = 0; i < 300; i++)
    CU_ASSERT_FATAL(lbmc_mixture_record(back, i % 2, i % 2 ? i % 7 : i % 13) == 0);
  UT_CHECK(lbmc_mixture_quantile(back, LBMC_MIX_SOJOURN, 0.9) == q0, "cleared and refilled");
  lbmc_mixture_destroy(&mx);
  lbmc_mixture_destroy(&back);
  lbmc_mixture_destroy(&other);
}

/* ---- the mean-field ODE per level and phase ---- */

static double ph_mf_customers(const lbmc_occ_mf_point *pt, uint32_t j)
{
  double x = 0;
  for (uint32_t k = 1; k < pt->levels; k++) x += k * pt->s[j * pt->levels + k];
  return x;
}

static void test_meanfield(void)
{
  lbmc_occ_mf_point pt;
  { /* Exp(1) written with two phases: JSQ(2) tails lambda^(2^k - 1) */
    ut_occ_conf c = {.n = 1000000000,
                     .service = "ph:alpha=[0.25,0.75],T=[[-1,0],[0,-1]]",
                     .policy = "jsq(2)",
                     .lambda = 0.9};
    lbmc_model *m = ut_occ_model(&c);
    CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m, m->policy->occupancy, &pt) == LBMC_SUCCESS);
    UT_CHECK(pt.settled && pt.ph == 2 && pt.x, "two-phase exponential: %s", pt.note);
    for (uint32_t k = 1; k <= 6 && pt.settled; k++) {
      double tail = 0;
      for (uint32_t i = k; i < pt.levels; i++) tail += pt.s[i];
      UT_CHECK(fabs(tail - pow(0.9, pow(2, k) - 1)) < 1e-8, "tail %u: %.12g vs %.12g", k, tail,
               pow(0.9, pow(2, k) - 1));
    }
    for (uint32_t k = 1; k < 6 && pt.settled; k++) /* the phases in proportion to alpha */
      UT_CHECK(fabs(pt.x[k * 2] - 0.25 * pt.s[k]) < 1e-8, "phase 1 at level %u: %.12g of %.12g", k,
               pt.x[k * 2], pt.s[k]);
    lbmc_occ_meanfield_free(&pt);
    lbmc_model_destroy(&m);
  }
  { /* random routing: each server M/PH/1; idle 1 - rho, customers rho + rho^2 (1 + scv) /
       (2 (1 - rho)) (Pollaczek-Khinchine) */
    static const struct {
      const char *svc;
      double scv, lambda;
    } q[] = {{"erlang:k=4", 0.25, 0.7},
             {"hyperexponential:scv=5", 5, 0.6},
             {"coxian:r=[2.5,5/3,1.25],p=[0.6,0.5]", 0.904, 0.8}};
    for (int i = 0; i < 3; i++) {
      ut_occ_conf c = {.n = 1000, .service = q[i].svc, .policy = "random", .lambda = q[i].lambda};
      lbmc_model *m = ut_occ_model(&c);
      const double r = q[i].lambda, L = r + r * r * (1 + q[i].scv) / (2 * (1 - r));
      const lbmc_service *s = &m->service[0];
      double scv = s->scv;
      CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m, m->policy->occupancy, &pt) == LBMC_SUCCESS);
      UT_CHECK(pt.settled, "%s: %s", q[i].svc, pt.note);
      UT_CHECK(fabs(scv - q[i].scv) < 1e-3, "%s: scv %.6g", q[i].svc, scv);
      if (pt.settled) {
        const double Lx = r + r * r * (1 + scv) / (2 * (1 - r));
        UT_CHECK(fabs(pt.s[0] - (1 - r)) < 1e-8, "%s: idle %.12g vs %.12g", q[i].svc, pt.s[0],
                 1 - r);
        UT_CHECK(fabs(ph_mf_customers(&pt, 0) - Lx) < 1e-7 * Lx,
                 "%s: customers %.12g vs %.12g (%.6g)", q[i].svc, ph_mf_customers(&pt, 0), Lx, L);
      }
      lbmc_occ_meanfield_free(&pt);
      lbmc_model_destroy(&m);
    }
  }
  { /* random routing, buffer 1: M/G/1/1 busy rho / (1 + rho) whatever the law */
    const long one[] = {1};
    ut_occ_conf c = {.n = 1000,
                     .buffer = one,
                     .service = "hyperexponential:scv=20",
                     .policy = "random",
                     .lambda = 1.5};
    lbmc_model *m = ut_occ_model(&c);
    CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m, m->policy->occupancy, &pt) == LBMC_SUCCESS);
    UT_CHECK(pt.settled && fabs(1 - pt.s[0] - 1.5 / 2.5) < 1e-8, "M/H2/1/1 busy %.12g (%s)",
             1 - pt.s[0], pt.note);
    lbmc_occ_meanfield_free(&pt);
    lbmc_model_destroy(&m);
  }
  { /* JSQ(2), H2 scv 20, lambda 0.9: stable, though its slow phase (mean 20.5) keeps the
       queues filling at a nearly steady rate for hundreds of time units. The fixed point
       against the cavity method's (python: lbmc_analysis.limits.cavity_jsq(0.9, 2,
       service='hyperexponential:scv=20'), a fixed point of the tagged queue's QBD, solved
       independently): customers per server lambda x mean_sojourn and tails 1..4. */
    static const double cav_tail[] = {0.9000000000000951, 0.8076657637031155, 0.7280641173591527,
                                      0.662881114491433};
    const double cav_customers = 9.728504972838056;
    ut_occ_conf c = {
        .n = 1000000000, .service = "hyperexponential:scv=20", .policy = "jsq(2)", .lambda = 0.9};
    lbmc_model *m = ut_occ_model(&c);
    CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m, m->policy->occupancy, &pt) == LBMC_SUCCESS);
    UT_CHECK(pt.settled, "jsq(2), H2 scv 20: %s", pt.note);
    if (pt.settled) {
      UT_CHECK(fabs(ph_mf_customers(&pt, 0) - cav_customers) < 1e-7 * cav_customers,
               "jsq(2), H2 scv 20: customers %.12g vs the cavity's %.12g", ph_mf_customers(&pt, 0),
               cav_customers);
      for (uint32_t k = 1; k <= 4; k++) {
        double tail = 0;
        for (uint32_t i = k; i < pt.levels; i++) tail += pt.s[i];
        UT_CHECK(fabs(tail - cav_tail[k - 1]) < 1e-8, "jsq(2), H2 scv 20: tail %u %.12g vs %.12g",
                 k, tail, cav_tail[k - 1]);
      }
    }
    lbmc_occ_meanfield_free(&pt);
    lbmc_model_destroy(&m);
  }
  { /* overloaded with rho < 1 (0.86 overall), H2 scv 20, two pools of speeds 2 and 1/3:
       random routing sends each server lambda = 1, which the slow pool cannot take; JSQ(2)
       on the PULL example sends the slow pool more than it can serve (Stolyar's flow
       bound): in both the ODE says the queues grow, no start */
    const double beta[] = {0.5, 0.5}, mu[] = {2, 1.0 / 3};
    const char *policies[] = {"random", "jsq(2)"};
    for (int i = 0; i < 2; i++) {
      ut_occ_conf c = {.n = 1000000,
                       .J = 2,
                       .beta = beta,
                       .mu = mu,
                       .service = "hyperexponential:scv=20",
                       .policy = policies[i],
                       .lambda = 1};
      lbmc_model *m = ut_occ_model(&c);
      CU_ASSERT_FATAL(lbmc_occ_meanfield_solve(m, m->policy->occupancy, &pt) == LBMC_SUCCESS);
      UT_CHECK(!pt.settled && strstr(pt.note, "keep growing"), "%s, overloaded slow pool: %s",
               policies[i], pt.note);
      lbmc_occ_meanfield_free(&pt);
      lbmc_model_destroy(&m);
    }
  }
}

int ut_register_occ_ph(void)
{
  static const ut_test tests[] = {{"state invariants and tick records", test_invariants},
                                  {"the mean-field start", test_meanfield_start},
                                  {"common arrivals with the general engine", test_common_arrivals},
                                  {"phase changes", test_phase_changes},
                                  {"which models apply", test_applies},
                                  {"auto's choice", test_choice},
                                  {"mixture: Erlang classes", test_mixture_erlang},
                                  {"mixture: hyperexponential classes", test_mixture_h2},
                                  {"mixture: bytes, pooling, laws", test_mixture_bytes},
                                  {"mean-field fixed points per level and phase", test_meanfield},
                                  {NULL, NULL}};
  return ut_add_suite("phase-type occupancy engine", tests);
}
