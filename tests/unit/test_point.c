/* The point reduction (include/lbmc/point.h) on hand-made replica records: pooled ratios
 * and their flags, empty replicas, the one warm-up of a point, the halves, drift and cap
 * verdicts, bit-identical results whatever the order of the records, one-replica batch
 * means, quantiles of a point mass, doublings, and sequential mode's decisions. The same
 * reduction on real replicas is tested in tests/regression. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ticks.h"
#include "lbmc/metrics.h"
#include "lbmc/point.h"
#include "sim/point_impl.h"
#include "sim/record.h"
#include "stats/estimators.h"
#include "unit.h"

#define S_SEG 40
#define TK_K  2

/* One segment of an M/M/1-like record: time len, arrivals a (all admitted), of which
 * `waited` waited, mean customers nbar (all at the one server), departures a with mean
 * sojourn 2. */
static int rec_pools = 1;                 /* pools of the records made (all customers in pool 1) */
static long rec_buffer = LBMC_BUFFER_INF; /* the test model's buffer per server */

static void seg_fill(double *seg, double len, double a, double waited, double nbar)
{
  const int J = rec_pools, K = TK_K;
  memset(seg, 0, sizeof *seg * lbmc_tick_width(J, K));
  seg[LBMC_TK_LEN] = len;
  seg[LBMC_TK_ARRIVALS] = a;
  seg[LBMC_TK_WAITED] = waited;
  seg[LBMC_TK_DEPARTURES] = seg[LBMC_TK_STARTS] = seg[LBMC_TK_SOJOURNS] = seg[LBMC_TK_WAITS] = a;
  seg[LBMC_TK_SUM_SOJOURN] = 2 * a;
  seg[LBMC_TK_SUM_WAIT] = waited;
  seg[LBMC_TK_AREA_N] = nbar * len;
  seg[LBMC_TK_CPU] = 1e-3;
  seg[lbmc_tk_admitted(J, K, 0)] = a;
  seg[lbmc_tk_area_q(J, K, 0)] = nbar * len;
  seg[lbmc_tk_area_tail(J, K, 0, 1)] = fmin(nbar, 1) * 0.5 * len;
  seg[lbmc_tk_area_tail(J, K, 0, 2)] = fmin(nbar, 1) * 0.25 * len;
}

/* Segment profiles: per segment s of replica i, arrivals, waited and mean customers. */
typedef void (*seg_profile)(long i, size_t s, double *a, double *waited, double *nbar);

/* A record (malloc'ed, *size bytes) of replica i at `doubling` with S_SEG segments of length
 * 10, one quantile group of histograms holding `atom` (if > 0) for every customer. */
static unsigned char *make_record(long i, int doubling, seg_profile f, int status, double atom,
                                  size_t *size)
{
  const size_t W = lbmc_tick_width(rec_pools, TK_K);
  double *seg = calloc(S_SEG * W, sizeof *seg);
  lbmc_dhist *h = malloc(sizeof *h * 2);
  int64_t groups[2] = {0, S_SEG};
  lbmc_record_head head = {0};
  unsigned char *buf;
  CU_ASSERT_FATAL(seg && h);
  lbmc_dhist_init(&h[0], 1.0);
  lbmc_dhist_init(&h[1], 1.0);
  for (size_t s = 0; s < S_SEG; s++) {
    double a, w, nbar;
    f(i, s, &a, &w, &nbar);
    seg_fill(seg + s * W, 10, a, w, nbar);
    for (long c = 0; atom > 0 && c < (long)a; c++)
      lbmc_dhist_add(&h[0], atom), lbmc_dhist_add(&h[1], 0);
  }
  head.point = 0, head.replica = i, head.doubling = doubling, head.status = status;
  head.S = S_SEG, head.W = (int64_t)W, head.G = 1, head.qkind = LBMC_QK_HIST;
  head.cap = 100, head.seg_len = 10, head.tau = 1, head.t_stop = status ? 123.0 : NAN;
  *size = lbmc_record_pack(NULL, 0, &head, groups, seg, h, NULL);
  buf = malloc(*size);
  CU_ASSERT_FATAL(buf != NULL);
  CU_ASSERT_EQUAL(lbmc_record_pack(buf, *size, &head, groups, seg, h, NULL), *size);
  free(seg), free(h);
  return buf;
}

static lbmc_model *test_model(void)
{
  lbmc_model *m = NULL;
  double beta[2] = {0.5, 0.5}, mu[2] = {1, 1};
  long buffer[2] = {rec_buffer, rec_buffer};
  CU_ASSERT_FATAL(lbmc_model_create(&m) == LBMC_SUCCESS);
  lbmc_model_set_n(m, rec_pools);
  lbmc_model_set_lambda(m, 0.5);
  if (rec_pools == 1) beta[0] = 1;
  lbmc_model_set_pools(m, rec_pools, beta, mu, buffer);
  lbmc_model_set_policy(m, "random");
  CU_ASSERT_FATAL(lbmc_model_setup(m) == LBMC_SUCCESS);
  return m;
}

static void test_options(lbmc_run_options *o, int automatic)
{
  lbmc_run_options_default(o);
  o->tail_k = TK_K;
  o->time = 400;
  o->warmup = 0;
  o->warmup_auto = automatic;
}

/* Reduce R records of profile f (replicas 0..R-1) added in the order `order` (NULL:
 * 0..R-1) into a new point. */
static lbmc_point *reduce(const lbmc_model *m, const lbmc_run_options *o, long R, seg_profile f,
                          const long *order, double atom)
{
  lbmc_point *p = NULL;
  int used;
  CU_ASSERT_FATAL(lbmc_point_create(m, o, R, &p) == LBMC_SUCCESS);
  for (long k = 0; k < R; k++) {
    size_t size;
    unsigned char *rec = make_record(order ? order[k] : k, 0, f, 0, atom, &size);
    CU_ASSERT(lbmc_point_add(p, rec, size, &used) == LBMC_SUCCESS && used);
    free(rec);
  }
  CU_ASSERT_FATAL(lbmc_point_ready(p, R));
  CU_ASSERT_FATAL(lbmc_point_reduce(p, R) == LBMC_SUCCESS);
  return p;
}

static size_t at(const lbmc_model *m, int metric)
{
  return lbmc_metric_offset(metric, lbmc_model_pools(m), TK_K);
}

/* Replica i: 2 + i arrivals per segment, 1 of them waits; replica 2 has no arrivals. */
static void prof_ratio(long i, size_t s, double *a, double *w, double *nbar)
{
  (void)s;
  *a = i == 2 ? 0 : 2 + (double)i;
  *w = i == 2 ? 0 : 1;
  *nbar = 0.5 + 0.01 * (double)((s * 7 + (size_t)i * 3) % 5);
}

/* A pooled ratio is sum y / sum x; an empty replica counts for nothing and its own values
 * are NaN; nobody blocked: none observed, bound 1 - 0.05^(1/N). */
static void test_point_pooled(void)
{
  lbmc_model *m = test_model();
  lbmc_run_options o;
  lbmc_point *p;
  const lbmc_estimates *e;
  lbmc_point_replica_info info;
  double N;
  test_options(&o, 0);
  p = reduce(m, &o, 4, prof_ratio, NULL, 0);
  e = lbmc_point_estimates(p);
  N = S_SEG * (2.0 + 3 + 5);
  UT_CHECK(fabs(e->estimate[at(m, LBMC_M_P_WAIT)] - 3 * S_SEG / N) < 1e-15, "p_wait %g",
           e->estimate[at(m, LBMC_M_P_WAIT)]);
  CU_ASSERT(e->lower[at(m, LBMC_M_P_WAIT)] < e->estimate[at(m, LBMC_M_P_WAIT)]);
  CU_ASSERT(e->flags[at(m, LBMC_M_P_BLOCK)] & LBMC_IV_NONE_OBSERVED);
  CU_ASSERT_EQUAL(e->estimate[at(m, LBMC_M_P_BLOCK)], 0.0);
  UT_CHECK(fabs(e->upper_bound[at(m, LBMC_M_P_BLOCK)] - (1 - pow(0.05, 1 / N))) < 1e-12, "bound %g",
           e->upper_bound[at(m, LBMC_M_P_BLOCK)]);
  CU_ASSERT(isnan(e->half_width[at(m, LBMC_M_P_BLOCK)]));
  CU_ASSERT_EQUAL(e->estimate[at(m, LBMC_M_MEAN_SOJOURN)], 2.0);
  CU_ASSERT_EQUAL(lbmc_point_replica(p, 2, &info), LBMC_SUCCESS);
  CU_ASSERT(info.present && isnan(info.values[at(m, LBMC_M_P_WAIT)]));
  CU_ASSERT(lbmc_point_verdict(p)->status == LBMC_STATUS_OK);
  CU_ASSERT_EQUAL(lbmc_point_verdict(p)->warmup_used, 0.0);
  lbmc_point_destroy(&p);
  lbmc_model_destroy(&m);
}

/* The same records in another order give the same bytes. */
static void test_point_order(void)
{
  static const long order[] = {3, 1, 4, 0, 2};
  lbmc_model *m = test_model();
  lbmc_run_options o;
  lbmc_point *a, *b;
  test_options(&o, 1);
  a = reduce(m, &o, 5, prof_ratio, NULL, 1.5);
  b = reduce(m, &o, 5, prof_ratio, order, 1.5);
  {
    const lbmc_estimates *x = lbmc_point_estimates(a), *y = lbmc_point_estimates(b);
    CU_ASSERT(memcmp(x->estimate, y->estimate, sizeof(double) * 6 * x->total) == 0);
    CU_ASSERT(memcmp(x->flags, y->flags, sizeof(unsigned) * x->total) == 0);
    CU_ASSERT(memcmp(lbmc_point_verdict(a), lbmc_point_verdict(b), sizeof(lbmc_verdict)) == 0);
  }
  lbmc_point_destroy(&a);
  lbmc_point_destroy(&b);
  lbmc_model_destroy(&m);
}

/* Customers filling up over the first 6 of 40 segments (the same in every replica, small
 * noise): MSER discards them; filling over 90% of the run: near the cap, not stationary. */
static void prof_fill6(long i, size_t s, double *a, double *w, double *nbar)
{
  *a = 5, *w = 2;
  *nbar = (s < 6 ? 0.15 * (double)s : 1.0) + 0.01 * (double)((s * 7 + (size_t)i * 3) % 5);
}
static void prof_fill36(long i, size_t s, double *a, double *w, double *nbar)
{
  *a = 5, *w = 2;
  *nbar = (s < 36 ? 0.025 * (double)s : 1.0) + 0.001 * (double)((s * 7 + (size_t)i * 3) % 5);
}

static void test_point_warmup(void)
{
  lbmc_model *m = test_model();
  lbmc_run_options o;
  lbmc_point *p;
  const lbmc_verdict *v;
  test_options(&o, 1);
  p = reduce(m, &o, 5, prof_fill6, NULL, 0);
  v = lbmc_point_verdict(p);
  UT_CHECK(v->warmup_used >= 50 && v->warmup_used <= 80, "warm-up %g", v->warmup_used);
  CU_ASSERT_EQUAL(v->time_used + v->warmup_used, 400.0);
  UT_CHECK(v->status == LBMC_STATUS_OK, "status %s: %s", lbmc_status_name(v->status), v->reason);
  lbmc_point_destroy(&p);
  p = reduce(m, &o, 5, prof_fill36, NULL, 0);
  v = lbmc_point_verdict(p);
  CU_ASSERT(v->warmup_near_cap && (v->evidence & LBMC_EV_NEAR_CAP));
  CU_ASSERT(v->status == LBMC_STATUS_NOT_STATIONARY && v->suggested_time == 1600.0);
  CU_ASSERT(strstr(v->reason, "warm-up") != NULL);
  /* its numbers are kept */
  CU_ASSERT(!isnan(lbmc_point_estimates(p)->estimate[at(m, LBMC_M_MEAN_QUEUE)]));
  lbmc_point_destroy(&p);
  lbmc_model_destroy(&m);
}

/* The fill-up of prof_fill6 with a spread between the replicas (a standard error > 0). */
static void prof_fill6_spread(long i, size_t s, double *a, double *w, double *nbar)
{
  prof_fill6(i, s, a, w, nbar);
  *nbar += 0.004 * (double)i;
}

/* The start's transient bound of R records of profile f, all from empty, with warm-up d
 * segments, in standard errors of their mean customers over the rest (replicas' ratio
 * interval: what the point reads), with relaxation time tau. */
static double transient_at(seg_profile f, long R, size_t d, double tau)
{
  double y[8] = {0}, x[8] = {0}, sy = 0, sx = 0;
  lbmc_interval iv;
  for (long i = 0; i < R; i++)
    for (size_t s = d; s < S_SEG; s++) {
      double a, w, nbar;
      f(i, s, &a, &w, &nbar);
      y[i] += nbar * 10, x[i] += 10;
      sy += nbar * 10, sx += 10;
    }
  lbmc_ratio_interval(y, x, (size_t)R, 1, 0.95, &iv);
  return lbmc_transient_bound(0 - sy / sx, tau, 10.0 * (double)d, 10.0 * (double)(S_SEG - d)) /
         iv.std_err;
}

/* Where the model gives the relaxation time (M/M/1 at rho 0.5: exactly 6) and the replicas
 * start empty, the automatic warm-up is the start's transient bound's: the fewest segments
 * that bring it to a twentieth of a standard error (the automatic warm-up's target), not
 * MSER's cut (the fill-up's 6 segments). With a finite buffer the model gives none, and
 * MSER still decides. */
static void test_point_warmup_transient(void)
{
  lbmc_model *m = test_model();
  lbmc_run_options o;
  lbmc_point *p;
  size_t d;
  test_options(&o, 1);
  p = reduce(m, &o, 5, prof_fill6_spread, NULL, 0);
  d = (size_t)(lbmc_point_verdict(p)->warmup_used / 10);
  UT_CHECK(d >= 1 && d < 6 && lbmc_point_verdict(p)->warmup_used == 10.0 * (double)d, "warm-up %g",
           lbmc_point_verdict(p)->warmup_used);
  UT_CHECK(transient_at(prof_fill6_spread, 5, d, 6) <= 0.05 &&
               transient_at(prof_fill6_spread, 5, d - 1, 6) > 0.05,
           "warm-up %zu segments: bound %g, with one less %g", d,
           transient_at(prof_fill6_spread, 5, d, 6), transient_at(prof_fill6_spread, 5, d - 1, 6));
  lbmc_point_destroy(&p);
  lbmc_model_destroy(&m);
  rec_buffer = 100;
  m = test_model();
  p = reduce(m, &o, 5, prof_fill6_spread, NULL, 0);
  UT_CHECK(lbmc_point_verdict(p)->warmup_used >= 50 && lbmc_point_verdict(p)->warmup_used <= 80,
           "buffer 100: warm-up %g (MSER)", lbmc_point_verdict(p)->warmup_used);
  lbmc_point_destroy(&p);
  lbmc_model_destroy(&m);
  rec_buffer = LBMC_BUFFER_INF;
}

/* A fixed warm-up too short: the halves differ (not stationary); customers growing by
 * 10% of the arrivals without slowing down: unstable (drift). */
static void prof_slope(long i, size_t s, double *a, double *w, double *nbar)
{
  *a = 5, *w = 2;
  *nbar = 1 + 0.01 * (double)s + 0.002 * (double)((s * 7 + (size_t)i * 3) % 5);
}
static void prof_drift(long i, size_t s, double *a, double *w, double *nbar)
{
  *a = 5, *w = 2;
  *nbar = 1 + 0.5 * 10 * (double)s * 0.1 + 0.002 * (double)((s * 7 + (size_t)i * 3) % 5);
}

static void test_point_verdicts(void)
{
  lbmc_model *m = test_model();
  lbmc_run_options o;
  lbmc_point *p;
  const lbmc_verdict *v;
  test_options(&o, 0);
  p = reduce(m, &o, 5, prof_slope, NULL, 0);
  v = lbmc_point_verdict(p);
  CU_ASSERT(v->evidence & LBMC_EV_HALVES);
  UT_CHECK(v->status == LBMC_STATUS_NOT_STATIONARY, "slope: %s (%s)", lbmc_status_name(v->status),
           v->reason);
  lbmc_point_destroy(&p);
  /* one pool at rho < 1 cannot be unstable: the growth of a drift profile is a fill-up */
  p = reduce(m, &o, 5, prof_drift, NULL, 0);
  v = lbmc_point_verdict(p);
  UT_CHECK(v->status == LBMC_STATUS_NOT_STATIONARY && (v->evidence & LBMC_EV_GROWING) &&
               v->suggested_replicas == 0,
           "drift, one pool: %s (%s)", lbmc_status_name(v->status), v->reason);
  lbmc_point_destroy(&p);
  lbmc_model_destroy(&m);
  rec_pools = 2; /* two pools: instability is possible, and the drift test proves it */
  m = test_model();
  p = reduce(m, &o, 5, prof_drift, NULL, 0);
  v = lbmc_point_verdict(p);
  UT_CHECK(v->status == LBMC_STATUS_UNSTABLE && (v->evidence & LBMC_EV_DRIFT), "drift: %s (%s)",
           lbmc_status_name(v->status), v->reason);
  CU_ASSERT(isnan(lbmc_point_estimates(p)->estimate[at(m, LBMC_M_P_WAIT)]));
  lbmc_point_destroy(&p);
  lbmc_model_destroy(&m);
  rec_pools = 1;
}

/* A replica over the cap makes the point unstable, naming the replica and the time. */
static void test_point_cap(void)
{
  lbmc_model *m = test_model();
  lbmc_run_options o;
  lbmc_point *p = NULL;
  int used;
  test_options(&o, 0);
  CU_ASSERT_FATAL(lbmc_point_create(m, &o, 2, &p) == LBMC_SUCCESS);
  for (long i = 0; i < 2; i++) {
    size_t size;
    unsigned char *rec = make_record(i, 0, prof_ratio, i == 1, 0, &size);
    CU_ASSERT(lbmc_point_add(p, rec, size, &used) == LBMC_SUCCESS);
    free(rec);
  }
  CU_ASSERT_FATAL(lbmc_point_reduce(p, 2) == LBMC_SUCCESS);
  CU_ASSERT(lbmc_point_verdict(p)->status == LBMC_STATUS_UNSTABLE);
  CU_ASSERT(strstr(lbmc_point_verdict(p)->reason, "replica 1") != NULL);
  CU_ASSERT(strstr(lbmc_point_verdict(p)->reason, "123") != NULL);
  lbmc_point_destroy(&p);
  lbmc_model_destroy(&m);
}

/* One replica: batch means of its segments; a point mass of sojourn 1.5 gives exactly
 * 1.5 with the interval [1.5, 1.5]. */
static void test_point_one(void)
{
  lbmc_model *m = test_model();
  lbmc_run_options o;
  lbmc_point *p;
  const lbmc_estimates *e;
  test_options(&o, 0);
  o.batches = 20;
  p = reduce(m, &o, 1, prof_ratio, NULL, 1.5);
  e = lbmc_point_estimates(p);
  CU_ASSERT(!isnan(e->half_width[at(m, LBMC_M_MEAN_QUEUE)]));
  CU_ASSERT_EQUAL(e->estimate[at(m, LBMC_M_SOJOURN_QUANTILES) + 2], 1.5);
  lbmc_point_destroy(&p);
  p = reduce(m, &o, 4, prof_ratio, NULL, 1.5);
  e = lbmc_point_estimates(p);
  for (int l = 0; l < 2; l++) {
    const size_t k = at(m, LBMC_M_SOJOURN_QUANTILES) + (size_t)l;
    UT_CHECK(e->estimate[k] == 1.5 && e->lower[k] == 1.5 && e->upper[k] == 1.5,
             "point mass, level %d: %g [%g, %g] flags %u", l, e->estimate[k], e->lower[k],
             e->upper[k], e->flags[k]);
  }
  CU_ASSERT(e->flags[at(m, LBMC_M_SOJOURN_QUANTILES) + 3] & LBMC_IV_UNRELIABLE); /* 4 < 20 */
  CU_ASSERT_EQUAL(e->estimate[at(m, LBMC_M_WAIT_QUANTILES) + 1], 0.0);
  lbmc_point_destroy(&p);
  lbmc_model_destroy(&m);
}

/* Every replica alike: 3 arrivals per segment, one waits. */
static void prof_same(long i, size_t s, double *a, double *w, double *nbar)
{
  *a = 3, *w = 1;
  *nbar = 0.5 + 0.01 * (double)((s * 7 + (size_t)i * 3) % 5);
}

/* The caller's LBMC_REP_STORE_BYTES (NULL: unset), to put back with store_bytes_restore. */
static char *store_bytes_save(void)
{
  const char *env = getenv(LBMC_REP_STORE_BYTES_ENV);
  return env ? strdup(env) : NULL;
}

static void store_bytes_restore(char *saved)
{
  if (saved)
    setenv(LBMC_REP_STORE_BYTES_ENV, saved, 1);
  else
    unsetenv(LBMC_REP_STORE_BYTES_ENV);
  free(saved);
}

/* What a point holds in memory does not grow with the replicas: with its store in the file
 * (LBMC_REP_STORE_BYTES=0), after reducing 64 and 4096 replicas the same bytes, the
 * reduction's work space included (its estimators are fed row by row), but for the block
 * the passes read through (at most LBMC_POINT_BLOCK rows); no whole record, no row and no
 * fine part in memory once the replicas before are in (records arriving out of order keep
 * theirs until the gap is filled; a record that comes again changes nothing); every
 * replica's row in the file. */
static void test_point_held(void)
{
  lbmc_model *m = test_model();
  lbmc_run_options o;
  size_t mem[2], block[2];
  char *saved = store_bytes_save();
  test_options(&o, 0);
  setenv(LBMC_REP_STORE_BYTES_ENV, "0", 1);
  for (int t = 0; t < 2; t++) {
    const long R = t ? 4096 : 64;
    lbmc_point *p = NULL;
    lbmc_point_held h;
    int used;
    CU_ASSERT_FATAL(lbmc_point_create(m, &o, R, &p) == LBMC_SUCCESS);
    for (long k = 0; k < R; k++) {
      const long i = k == 0 ? 1 : k == 1 ? 0 : k; /* replica 1 before replica 0 */
      size_t size;
      unsigned char *rec = make_record(i, 0, prof_same, 0, 1.5, &size);
      CU_ASSERT(lbmc_point_add(p, rec, size, &used) == LBMC_SUCCESS && used);
      free(rec);
      lbmc_point_held_of(p, &h);
      if (k == 0) /* replica 0 missing: replica 1 keeps its fine parts */
        CU_ASSERT(h.replicas == 1 && h.parts > 0 && h.records == 0);
    }
    CU_ASSERT_FATAL(lbmc_point_reduce(p, R) == LBMC_SUCCESS);
    if (t == 0) { /* a replica's record again (a re-issued unit): the same reduction */
      const lbmc_estimates *e = lbmc_point_estimates(p);
      double *before = malloc(sizeof(double) * 6 * e->total);
      lbmc_verdict v = *lbmc_point_verdict(p);
      size_t size;
      unsigned char *rec = make_record(R - 1, 0, prof_same, 0, 1.5, &size);
      lbmc_point_relaxation m0, m1;
      CU_ASSERT_FATAL(before != NULL);
      memcpy(before, e->estimate, sizeof(double) * 6 * e->total);
      CU_ASSERT_FATAL(lbmc_point_relax_measure(p, R, 0, &m0) == LBMC_SUCCESS);
      CU_ASSERT(lbmc_point_add(p, rec, size, &used) == LBMC_SUCCESS && used);
      free(rec);
      CU_ASSERT_FATAL(lbmc_point_reduce(p, R) == LBMC_SUCCESS);
      CU_ASSERT(memcmp(before, e->estimate, sizeof(double) * 6 * e->total) == 0);
      CU_ASSERT(memcmp(&v, lbmc_point_verdict(p), sizeof v) == 0);
      CU_ASSERT_FATAL(lbmc_point_relax_measure(p, R, 0, &m1) == LBMC_SUCCESS);
      UT_CHECK(m0.nbar == m1.nbar && m0.nbar > 0.5 && m0.nbar < 0.55,
               "customers per server from the fine parts' running sums: %.17g, then %.17g", m0.nbar,
               m1.nbar);
      free(before);
    }
    lbmc_point_held_of(p, &h);
    UT_CHECK(h.replicas == R && h.stored == R && h.records == 0 && h.parts == 0 && h.sums == 0 &&
                 h.quantiles == 0,
             "%ld replicas: %ld in, %ld stored, records %zu, parts %zu, sums %zu, quantiles %zu "
             "bytes",
             R, h.replicas, h.stored, h.records, h.parts, h.sums, h.quantiles);
    UT_CHECK(h.file >= (size_t)R * lbmc_point_row_bytes(p), "%ld replicas: file %zu bytes", R,
             h.file);
    mem[t] = h.slots + h.records + h.sums + h.quantiles + h.parts + h.store + h.work;
    block[t] = (size_t)(R < LBMC_POINT_BLOCK ? R : LBMC_POINT_BLOCK) * lbmc_point_row_bytes(p);
    lbmc_point_destroy(&p);
  }
  UT_CHECK(
      mem[1] - block[1] == mem[0] - block[0],
      "bytes in memory, the work space included: %zu at 64 replicas, %zu at 4096 (blocks of %zu "
      "and %zu)",
      mem[0], mem[1], block[0], block[1]);
  store_bytes_restore(saved);
  lbmc_model_destroy(&m);
}

/* Before the warm-up is decided (warmup auto) the first round's whole records wait in the
 * point's record store: with it in its file (LBMC_REP_STORE_BYTES=0), the bytes held in
 * memory but the window's slots are the same once 63 and once 1023 records are in, out of
 * order (replica 0 last), the records in the file; the reduction equals that of the
 * same records in order with every record in memory; and the work space after the decision
 * is the same at both. */
static void test_point_records_held(void)
{
  lbmc_model *m = test_model();
  lbmc_run_options o;
  size_t mem[2], work[2];
  char *saved = store_bytes_save();
  test_options(&o, 1);
  for (int t = 0; t < 2; t++) {
    const long R = t ? 1024 : 64;
    lbmc_point *p = NULL, *ref;
    lbmc_point_held h;
    size_t size, bytes = 0;
    int used;
    setenv(LBMC_REP_STORE_BYTES_ENV, "1073741824", 1); /* every record in memory */
    ref = reduce(m, &o, R, prof_fill6, NULL, 1.5);
    setenv(LBMC_REP_STORE_BYTES_ENV, "0", 1);
    CU_ASSERT_FATAL(lbmc_point_create(m, &o, R, &p) == LBMC_SUCCESS);
    for (long k = 0; k < R; k++) {
      const long i = k == R - 1 ? 0 : 1 + (k * 37) % (R - 1); /* scrambled, replica 0 last */
      unsigned char *rec = make_record(i, 0, prof_fill6, 0, 1.5, &size);
      if (k == R - 1) {
        lbmc_point_held_of(p, &h);
        UT_CHECK(h.replicas == R - 1 && h.stored == 0 && h.file >= bytes,
                 "%ld replicas before the decision: %ld in, %ld stored, file %zu bytes (records "
                 "%zu)",
                 R, h.replicas, h.stored, h.file, bytes);
        mem[t] = h.records + h.sums + h.quantiles + h.parts + h.store + h.work;
      }
      bytes += size;
      CU_ASSERT(lbmc_point_add(p, rec, size, &used) == LBMC_SUCCESS && used);
      free(rec);
    }
    CU_ASSERT_FATAL(lbmc_point_ready(p, R));
    CU_ASSERT_FATAL(lbmc_point_reduce(p, R) == LBMC_SUCCESS);
    {
      const lbmc_estimates *x = lbmc_point_estimates(ref), *y = lbmc_point_estimates(p);
      CU_ASSERT(memcmp(x->estimate, y->estimate, sizeof(double) * 6 * x->total) == 0);
      CU_ASSERT(memcmp(x->flags, y->flags, sizeof(unsigned) * x->total) == 0);
      CU_ASSERT(memcmp(lbmc_point_verdict(ref), lbmc_point_verdict(p), sizeof(lbmc_verdict)) == 0);
      CU_ASSERT(lbmc_point_verdict(p)->warmup_used > 0);
    }
    lbmc_point_held_of(p, &h);
    UT_CHECK(h.records == 0, "%ld replicas after the decision: records %zu bytes", R, h.records);
    work[t] = h.work;
    lbmc_point_destroy(&p);
    lbmc_point_destroy(&ref);
  }
  UT_CHECK(mem[0] == mem[1], "bytes in memory before the decision: %zu at 64 replicas, %zu at 1024",
           mem[0], mem[1]);
  /* the decision's relaxation readings summarise one record at a time (88 bytes a replica,
   * freed), not R x m parts in the work space */
  UT_CHECK(work[0] == work[1],
           "work space after the decision: %zu bytes at 64 replicas, %zu at 1024", work[0],
           work[1]);
  store_bytes_restore(saved);
  lbmc_model_destroy(&m);
}

/* A point planned for 4 replicas and stopped after its first (lbmc sim's Ctrl-C) reduces
 * from that replica's batches, to the same bytes as a one-replica point; once a second
 * replica is in, the first one's record is gone and R = 1 is no longer ready (never a
 * reduction from a record that is not there). Fixed warm-up and warmup auto. */
static void test_point_stopped(void)
{
  lbmc_model *m = test_model();
  lbmc_run_options o;
  for (int automatic = 0; automatic < 2; automatic++) {
    lbmc_point *p = NULL, *one;
    const lbmc_estimates *e, *e1;
    const size_t k = at(m, LBMC_M_MEAN_QUEUE);
    size_t size;
    int used;
    unsigned char *rec;
    test_options(&o, automatic);
    o.batches = 20;
    one = reduce(m, &o, 1, prof_ratio, NULL, 1.5);
    CU_ASSERT_FATAL(lbmc_point_create(m, &o, 4, &p) == LBMC_SUCCESS);
    rec = make_record(0, 0, prof_ratio, 0, 1.5, &size);
    CU_ASSERT(lbmc_point_add(p, rec, size, &used) == LBMC_SUCCESS && used);
    free(rec);
    CU_ASSERT_FATAL(lbmc_point_decide_early(p, 1) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_point_ready(p, 1));
    CU_ASSERT_FATAL(lbmc_point_reduce(p, 1) == LBMC_SUCCESS);
    e = lbmc_point_estimates(p), e1 = lbmc_point_estimates(one);
    UT_CHECK(e->estimate[k] == e1->estimate[k] && e->half_width[k] == e1->half_width[k] &&
                 !isnan(e->half_width[k]),
             "warmup auto %d: stopped %g +- %g, one-replica point %g +- %g", automatic,
             e->estimate[k], e->half_width[k], e1->estimate[k], e1->half_width[k]);
    CU_ASSERT_EQUAL(lbmc_point_verdict(p)->replicas, 1);
    rec = make_record(1, 0, prof_ratio, 0, 1.5, &size);
    CU_ASSERT(lbmc_point_add(p, rec, size, &used) == LBMC_SUCCESS && used);
    free(rec);
    CU_ASSERT(lbmc_point_ready(p, 2));
    CU_ASSERT(!lbmc_point_ready(p, 1));
    CU_ASSERT(lbmc_point_reduce(p, 1) == LBMC_ERR_ARG);
    CU_ASSERT(lbmc_point_reduce(p, 2) == LBMC_SUCCESS);
    lbmc_point_destroy(&p);
    lbmc_point_destroy(&one);
  }
  lbmc_model_destroy(&m);
}

/* Doublings: a record of another doubling is ignored; sequential mode's decisions. */
static void test_point_next(void)
{
  lbmc_model *m = test_model();
  lbmc_run_options o;
  lbmc_point *p;
  lbmc_precision prec = {1, LBMC_M_P_WAIT, 0, 1e-9, 8, 0};
  char why[256];
  long next;
  int used;
  size_t size;
  unsigned char *rec;
  test_options(&o, 0);
  p = reduce(m, &o, 4, prof_ratio, NULL, 0);
  CU_ASSERT(lbmc_point_next(p, &prec, &next, why, sizeof why) == LBMC_NEXT_MORE);
  CU_ASSERT_EQUAL(next, 8);
  prec.max_replicas = 4;
  CU_ASSERT(lbmc_point_next(p, &prec, &next, why, sizeof why) == LBMC_NEXT_DONE);
  CU_ASSERT(lbmc_point_verdict(p)->status == LBMC_STATUS_PRECISION_NOT_MET);
  prec.relative = 5;
  CU_ASSERT_FATAL(lbmc_point_reduce(p, 4) == LBMC_SUCCESS);
  CU_ASSERT(lbmc_point_next(p, &prec, &next, why, sizeof why) == LBMC_NEXT_DONE);
  CU_ASSERT(lbmc_point_verdict(p)->status == LBMC_STATUS_OK);
  lbmc_point_destroy(&p);
  p = reduce(m, &o, 5, prof_slope, NULL, 0); /* not stationary: longer, up to max_time */
  CU_ASSERT(lbmc_point_next(p, &prec, &next, why, sizeof why) == LBMC_NEXT_LONGER);
  CU_ASSERT_EQUAL(next, 5);
  lbmc_point_set_doubling(p, 1);
  CU_ASSERT(!lbmc_point_ready(p, 1));
  rec = make_record(0, 0, prof_ratio, 0, 0, &size);
  CU_ASSERT(lbmc_point_add(p, rec, size, &used) == LBMC_SUCCESS && !used);
  free(rec);
  prec.max_time = 400;
  CU_ASSERT_FATAL(lbmc_point_reduce(p, 0) == LBMC_SUCCESS);
  lbmc_point_destroy(&p);
  lbmc_model_destroy(&m);
}

/* The mean-field start's widening (lbmc_point_mf_widen) of three entries: a proportion near
 * 1 and one near 0 whose widened ends would leave [0, 1] are clamped to it, half_width is the
 * longer side, std_err scaled with it, the bound and the standard error before are kept; a
 * ratio (nonnegative, unbounded above) only clamped at 0; a point interval (half_width 0)
 * keeps its std_err. */
static void test_point_mf_widen(void)
{
  enum { T = 4 };
  /*                     near 1  near 0  ratio  point */
  double est[T] = {0.98, 0.01, 0.9, 1.0}, lo[T] = {0.95, 0.002, 0.85, 1.0},
         up[T] = {0.995, 0.018, 0.95, 1.0}, hw[T] = {0.03, 0.008, 0.05, 0.0},
         se[T] = {0.015, 0.004, 0.025, 0.0}, ub[T] = {NAN, NAN, NAN, NAN}, widen[2 * T];
  unsigned flags[T] = {0, 0, 0, 0};
  const double b[T] = {0.02, 0.03, 0.2, 0.05};
  const int proportion[T] = {1, 1, 0, 1};
  /* expected ends and half-widths: clamped at 1, at 0, below only at 0, at 1 */
  const double want_lo[T] = {0.93, 0.0, 0.65, 0.95}, want_up[T] = {1.0, 0.048, 1.15, 1.0},
               want_hw[T] = {0.05, 0.038, 0.25, 0.05};
  lbmc_point p;
  memset(&p, 0, sizeof p);
  p.total = T;
  p.mf_widen = widen;
  p.est = (lbmc_estimates){T, est, hw, se, lo, up, ub, flags};
  for (size_t k = 0; k < T; k++) {
    const double hw0 = hw[k], se0 = se[k], est0 = est[k];
    lbmc_point_mf_widen(&p, k, b[k], proportion[k]);
    UT_CHECK(fabs(lo[k] - want_lo[k]) < 1e-15 && fabs(up[k] - want_up[k]) < 1e-15,
             "entry %zu: [%.17g, %.17g], expected [%g, %g]", k, lo[k], up[k], want_lo[k],
             want_up[k]);
    UT_CHECK(lo[k] >= 0 && (!proportion[k] || up[k] <= 1), "entry %zu: [%g, %g] out of range", k,
             lo[k], up[k]);
    UT_CHECK(fabs(hw[k] - want_hw[k]) < 1e-15 && hw[k] == fmax(est0 - lo[k], up[k] - est0),
             "entry %zu: half_width %.17g, expected the longer side %g", k, hw[k], want_hw[k]);
    UT_CHECK(hw0 > 0 ? se[k] == se0 * (hw[k] / hw0) : se[k] == se0,
             "entry %zu: std_err %.17g from %g (half_width %g -> %g)", k, se[k], se0, hw0, hw[k]);
    UT_CHECK(est[k] == est0 && isnan(ub[k]), "entry %zu: estimate or upper bound moved", k);
    UT_CHECK(widen[k] == b[k] && widen[T + k] == se0, "entry %zu: kept %g, %g", k, widen[k],
             widen[T + k]);
    UT_CHECK(flags[k] == LBMC_IV_START_BIAS_WIDENED, "entry %zu: flags %#x", k, flags[k]);
  }
}

int ut_register_point(void)
{
  static const ut_test tests[] = {
      {"point: pooled ratios, empty replicas, bounds", test_point_pooled},
      {"point: any order, same bytes", test_point_order},
      {"point: one warm-up, near the cap", test_point_warmup},
      {"point: automatic warm-up from the transient bound", test_point_warmup_transient},
      {"point: halves and drift", test_point_verdicts},
      {"point: customer cap", test_point_cap},
      {"point: one replica, point mass", test_point_one},
      {"point: stopped after its first replica", test_point_stopped},
      {"point: bytes held per replica, 64 and 4096 replicas", test_point_held},
      {"point: first round's records out of memory, 64 and 1024", test_point_records_held},
      {"point: doublings, sequential mode", test_point_next},
      {"point: the mean-field start's widening clamped to the range", test_point_mf_widen},
      {NULL, NULL}};
  return ut_add_suite("point", tests);
}
