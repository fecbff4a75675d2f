/* The mean-field ODE of the occupancy chain and the start it gives (occ_meanfield.h):
 * per level for exponential service, per level and phase for phase-type service. */
#include "occ_meanfield.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../system/policy.h"
#include "../system/system.h"
#include "lbmc/model.h"

/* Stationary: the largest |d s_j(k)/dt| is below this times the fastest rate of the
 * model (lambda + max_j mu_j(L_j)). At n = 10^12 the rounding then starts within
 * ~1e-11 n of the fixed point along every level, far inside the O(sqrt n) noise. */
#define LBMC_MF_DRIFT_TOL 1e-11
/* Levels are added while the top one holds more than this fraction of a pool. */
#define LBMC_MF_TOP_TOL 1e-15
/* First and largest number of levels of the truncated ODE. */
#define LBMC_MF_LEVELS0    32
#define LBMC_MF_LEVELS_MAX 16384
/* Budget: the ODE is integrated for at most this many time units of the fastest rate,
 * and at most this many class evaluations of the drift (a few seconds); a system that
 * has not settled by then starts empty. */
#define LBMC_MF_TIME_MAX   1e5
#define LBMC_MF_EFFORT_MAX 2e8
/* The effort is checked after every piece of integration of this many time units of the
 * fastest rate. */
#define LBMC_MF_PIECE 100.0
/* Accuracy of the adaptive integrator (absolute, relative). */
#define LBMC_MF_EPS_ABS 1e-13
#define LBMC_MF_EPS_REL 1e-10
/* Chunks of integration between stationarity checks grow by this factor. */
#define LBMC_MF_CHUNK_GROWTH 1.5
/* Runaway: customers per server grow by more than LBMC_MF_GROWTH_MIN lambda per time
 * unit, LBMC_MF_GROWTH_CHUNKS chunks in a row, and either
 *  - a pool with an unlimited buffer is saturated: the fraction of its servers below
 *    their full speed (fewer customers than slots) is under LBMC_MF_SATURATED (at a
 *    stationary point of a stable system it is at least 1 - rho_j > 0); or
 *  - the rate slows by less than LBMC_MF_GROWTH_SLOWING from a chunk to the next (sqrt(t)
 *    growth near saturation slows by 1.5^-1/2 = 0.82) over chunks at least
 *    LBMC_MF_GROWTH_SPAN times the model's slowest mean time (lbmc_mf_slow).
 * Over shorter chunks a stable system with a slow phase fills at a nearly steady rate for
 * a long while, with idle servers: JSQ(2), H2 scv 20, lambda 0.9 (slow phase of mean
 * 20.5) grows at 0.05-0.07 customers per server and time unit from ODE time 7 to 60, the
 * rate even rising, 10-40% of its servers idle, and settles near ODE time 2500. The
 * overloaded systems of the tests saturate their slow pool (below 1e-6 idle within ODE
 * time 100-200) while their growth rate wavers by more than 5% from chunk to chunk (the
 * truncated top level holds back the growth until levels are added). */
#define LBMC_MF_GROWTH_MIN     1e-3
#define LBMC_MF_GROWTH_SLOWING 0.95
#define LBMC_MF_GROWTH_CHUNKS  4
#define LBMC_MF_GROWTH_SPAN    10.0
#define LBMC_MF_SATURATED      1e-6

/* ---- The ODE ---- */

/* The state y: J x levels x ph fractions, y[(j levels + k) ph + p] = fraction of pool j's
 * servers at level k whose customer in service is in phase p (level 0: p = 0 only). With
 * exponential service ph = 1 and y is J x levels. */
typedef struct {
  const lbmc_model *m;
  const lbmc_occupancy_ops *ops;
  lbmc_occ_mf mf;
  uint32_t ph;   /* phases per level in y: the largest pool's (1: exponential service) */
  double *p;     /* J x levels: routing law */
  double *work;  /* 2 (levels + 1) */
  double *marg;  /* J x levels: the level marginals of y (ph > 1) */
  double *flow;  /* 2 levels: in and out flows of a pool's levels (ph = 1) */
  double effort; /* classes evaluated so far (drift calls x dimension) */
} lbmc_mf_ctx;

void lbmc_mf_jumps(const lbmc_model *m, uint32_t j, const lbmc_mf_pool *v, lbmc_mf_jump_fn fn,
                   void *ctx)
{
  const long B = m->buffer[j];
  const uint32_t top = v->top, M = v->M;
  const double *z = v->z, *p = v->p, up = v->arrival;
  if (!v->phase_type) {
    const double mu = v->service * m->rates[j][0];
    const uint32_t L = (uint32_t)m->nrates[j];
    for (uint32_t k = 0; k <= top; k++) {
      if (k < top && (B == LBMC_BUFFER_INF || (long)k < B) && (v->clip || k == 0 || z[k] > 0))
        fn(ctx, j, k, 0, k + 1, 0, NULL, 1, up * p[k]);
      if (k >= 1) fn(ctx, j, k, 0, k - 1, 0, NULL, 1, mu * (k < L ? k : L) * z[k]);
    }
    return;
  }
  const lbmc_service *sv = &m->service[j];
  const double *alpha, *T, *exit = lbmc_service_ph_exit(sv), mu = v->service * m->mu[j];
  const uint32_t ph = (uint32_t)lbmc_service_ph(sv, &alpha, &T);
  for (uint32_t k = 0; k <= top; k++) {
    const double *zk = z + (size_t)k * M;
    if (k < top && (B == LBMC_BUFFER_INF || (long)k < B)) { /* arrivals: k -> k + 1 */
      const double a = up * p[k];
      double pos = 0;
      if (k == 0)
        fn(ctx, j, 0, 0, 1, 0, alpha, ph, a);
      else if (v->clip) {
        for (uint32_t q = 0; q < ph; q++) pos += zk[q] > 0 ? zk[q] : 0.0;
        for (uint32_t q = 0; pos > 0 && q < ph; q++)
          fn(ctx, j, k, q, k + 1, q, NULL, ph, zk[q] > 0 ? a * zk[q] / pos : 0.0);
      } else {
        for (uint32_t q = 0; q < ph; q++) pos += zk[q];
        for (uint32_t q = 0; pos > 0 && q < ph; q++)
          fn(ctx, j, k, q, k + 1, q, NULL, ph, a * zk[q] / pos);
      }
    }
    for (uint32_t q = 0; k >= 1 && q < ph; q++) { /* service of the phase-q servers */
      const double x = mu * zk[q], e = x * exit[q];
      for (uint32_t q2 = 0; q2 < ph; q2++)
        fn(ctx, j, k, q, k, q2, NULL, ph, q2 == q ? 0.0 : x * T[q * ph + q2]);
      if (k == 1)
        fn(ctx, j, 1, q, 0, 0, NULL, ph, e);
      else
        fn(ctx, j, k, q, k - 1, 0, alpha, ph, e);
    }
  }
}

/* The drift's accumulation of one transition (lbmc_mf_jumps), phase-type service: g of
 * pool j, levels x M. */
typedef struct {
  double *g;
  uint32_t M;
} lbmc_mf_acc;

static void lbmc_mf_on_jump_ph(void *ctx, uint32_t j, uint32_t k, uint32_t q, uint32_t k2,
                               uint32_t q2, const double *law, uint32_t ph, double rate)
{
  lbmc_mf_acc *a = ctx;
  (void)j;
  a->g[(size_t)k * a->M + q] -= rate;
  if (!law)
    a->g[(size_t)k2 * a->M + q2] += rate;
  else if (k2 == 0)
    a->g[0] += rate;
  else
    for (uint32_t r = 0; r < ph; r++) a->g[(size_t)k2 * a->M + r] += rate * law[r];
}

/* The same with exponential service: what enters and what leaves each level, apart (the
 * drift is their difference). */
typedef struct {
  double *in, *out;
} lbmc_mf_flow;

static void lbmc_mf_on_jump(void *ctx, uint32_t j, uint32_t k, uint32_t q, uint32_t k2, uint32_t q2,
                            const double *law, uint32_t ph, double rate)
{
  lbmc_mf_flow *fl = ctx;
  (void)j, (void)q, (void)q2, (void)law, (void)ph;
  fl->out[k] += rate;
  fl->in[k2] += rate;
}

/* The drift with phase-type service (ph > 1; plain servers), in the fractions z_j(k, p),
 * from the transitions of lbmc_mf_jumps. */
static void lbmc_mf_drift_ph(lbmc_mf_ctx *c, const double *y, double *f)
{
  const uint32_t Lv = c->mf.levels, M = c->ph;
  for (uint32_t j = 0; j < c->mf.J; j++)
    for (uint32_t k = 0; k < Lv; k++) {
      double sum = 0;
      for (uint32_t q = 0; q < M; q++) sum += y[((size_t)j * Lv + k) * M + q];
      c->marg[j * Lv + k] = sum;
    }
  c->mf.s = c->marg;
  c->ops->law(&c->mf, c->p);
  for (uint32_t j = 0; j < c->mf.J; j++) {
    const lbmc_mf_pool v = {y + (size_t)j * Lv * M,    M,   Lv - 1, c->p + j * Lv,
                            c->m->lambda / c->mf.b[j], 1.0, 1,      1};
    lbmc_mf_acc a = {f + (size_t)j * Lv * M, M};
    memset(a.g, 0, sizeof *a.g * Lv * M);
    lbmc_mf_jumps(c->m, j, &v, lbmc_mf_on_jump_ph, &a);
  }
}

static int lbmc_mf_drift(double t, const double y[], double f[], void *params)
{
  lbmc_mf_ctx *c = params;
  const uint32_t Lv = c->mf.levels;
  (void)t;
  c->effort += (double)c->mf.J * Lv * c->ph;
  if (c->ph > 1) {
    lbmc_mf_drift_ph(c, y, f);
    return GSL_SUCCESS;
  }
  c->mf.s = y;
  c->ops->law(&c->mf, c->p);
  for (uint32_t j = 0; j < c->mf.J; j++) {
    const lbmc_mf_pool v = {y + j * Lv, 1, Lv - 1, c->p + j * Lv, c->m->lambda / c->mf.b[j],
                            1.0,        0, 1};
    lbmc_mf_flow fl = {c->flow, c->flow + Lv};
    memset(c->flow, 0, sizeof *c->flow * 2 * Lv);
    lbmc_mf_jumps(c->m, j, &v, lbmc_mf_on_jump, &fl);
    for (uint32_t k = 0; k < Lv; k++) f[j * Lv + k] = fl.in[k] - fl.out[k];
  }
  return GSL_SUCCESS;
}

/* The fastest rate of the model: lambda plus the largest saturated speed (times the
 * fastest phase, ph > 1). */
static double lbmc_mf_rate(const lbmc_model *m, uint32_t ph)
{
  double r = 0;
  for (int j = 0; j < m->J; j++) {
    double v = m->rates[j][m->nrates[j] - 1];
    if (ph > 1) {
      const double *T;
      int q = lbmc_service_ph(&m->service[j], NULL, &T);
      for (int i = 0; i < q; i++) r = fmax(r, -m->mu[j] * T[i * q + i]);
      continue;
    }
    r = fmax(r, v);
  }
  return r + m->lambda;
}

/* The slowest mean time of the model: the largest of 1 / lambda and, per pool, the mean
 * remaining requirement from its slowest phase (r_p / mu_j, r = (-T)^-1 1; the mean
 * requirement 1 / mu_j(1) with exponential service). */
static double lbmc_mf_slow(const lbmc_model *m)
{
  double s = m->lambda > 0 ? 1.0 / m->lambda : 0.0;
  for (int j = 0; j < m->J; j++) {
    const double *res = lbmc_service_ph_residual(&m->service[j]);
    const int q = lbmc_service_ph(&m->service[j], NULL, NULL);
    if (!res || q < 1) {
      s = fmax(s, 1.0 / m->rates[j][0]);
      continue;
    }
    for (int i = 0; i < q; i++) s = fmax(s, res[i] / m->mu[j]);
  }
  return s;
}

/* (Re)allocate the context and the state for `levels` levels, copying the old state. */
static int lbmc_mf_resize(lbmc_mf_ctx *c, double **y, uint32_t levels)
{
  const uint32_t J = c->mf.J, old = c->mf.levels, M = c->ph;
  double *ny = calloc((size_t)J * levels * M, sizeof *ny);
  double *p = malloc(sizeof *p * J * levels), *w = malloc(sizeof *w * 2 * (levels + 1));
  double *marg = M > 1 ? malloc(sizeof *marg * J * levels) : NULL;
  double *flow = malloc(sizeof *flow * 2 * levels);
  if (!ny || !p || !w || (M > 1 && !marg) || !flow) {
    free(flow);
    free(ny);
    free(p);
    free(w);
    free(marg);
    return -1;
  }
  for (uint32_t j = 0; j < J; j++)
    for (uint32_t k = 0; k < old && k < levels; k++)
      for (uint32_t q = 0; q < M; q++)
        ny[((size_t)j * levels + k) * M + q] = (*y)[((size_t)j * old + k) * M + q];
  free(*y);
  free(c->p);
  free(c->work);
  free(c->marg);
  free(c->flow);
  c->flow = flow;
  *y = ny;
  c->p = p;
  c->work = c->mf.work = w;
  c->marg = marg;
  c->mf.levels = levels;
  return 0;
}

/* The fraction of pool j's servers at level k in state y. */
static double lbmc_mf_level(const lbmc_mf_ctx *c, const double *y, uint32_t j, uint32_t k)
{
  double s = 0;
  for (uint32_t q = 0; q < c->ph; q++) s += y[((size_t)j * c->mf.levels + k) * c->ph + q];
  return s;
}

/* Largest |drift| and largest top-level fraction of the state y. */
static void lbmc_mf_measure(lbmc_mf_ctx *c, const double *y, double *f, double *drift, double *top)
{
  const uint32_t Lv = c->mf.levels;
  lbmc_mf_drift(0, y, f, c);
  *drift = 0;
  *top = 0;
  for (uint32_t i = 0; i < c->mf.J * Lv * c->ph; i++) *drift = fmax(*drift, fabs(f[i]));
  for (uint32_t j = 0; j < c->mf.J; j++) *top = fmax(*top, lbmc_mf_level(c, y, j, Lv - 1));
}

/* The point from state y: the level fractions s (y itself with ph = 1; with ph > 1 the
 * marginals, y kept as x). Returns -1 when out of memory. */
static int lbmc_mf_finish(lbmc_occ_mf_point *pt, const lbmc_mf_ctx *c, double *y)
{
  const lbmc_model *m = c->m;
  const uint32_t Lv = c->mf.levels;
  pt->levels = Lv;
  pt->ph = c->ph;
  pt->s = y;
  if (c->ph > 1) {
    pt->x = y;
    pt->s = malloc(sizeof *pt->s * pt->J * Lv);
    if (!pt->s) return -1;
    for (uint32_t j = 0; j < pt->J; j++)
      for (uint32_t k = 0; k < Lv; k++) pt->s[j * Lv + k] = lbmc_mf_level(c, y, j, k);
  }
  pt->customers = 0;
  for (uint32_t j = 0; j < pt->J; j++)
    for (uint32_t k = 1; k < Lv; k++)
      pt->customers += (double)m->N[j] / (double)m->n * k * pt->s[j * Lv + k];
  return 0;
}

/* Customers per server in state y. */
static double lbmc_mf_customers(const lbmc_mf_ctx *c, const double *y)
{
  double x = 0;
  for (uint32_t j = 0; j < c->mf.J; j++)
    for (uint32_t k = 1; k < c->mf.levels; k++) x += c->mf.b[j] * k * lbmc_mf_level(c, y, j, k);
  return x;
}

/* Progress of the integration, chunk after chunk. */
typedef struct {
  double t, drift, top;
  double customers, rate; /* customers per server, its growth per time unit */
  int steady_growth;      /* chunks in a row, each >= span, whose growth did not slow down */
  int saturated_growth;   /* chunks in a row of growth with a saturated pool */
  double span;            /* shortest chunk that counts for steady growth */
} lbmc_mf_prog;

/* The smallest fraction, over the pools with unlimited buffers, of servers below full
 * speed (fewer customers than slots) in state y; 1 when every buffer is finite. */
static double lbmc_mf_unsaturated(const lbmc_mf_ctx *c, const double *y)
{
  double least = 1;
  for (uint32_t j = 0; j < c->mf.J; j++) {
    double below = 0;
    if (c->m->buffer[j] != LBMC_BUFFER_INF) continue;
    for (uint32_t k = 0; k < (uint32_t)c->m->nrates[j] && k < c->mf.levels; k++)
      below += lbmc_mf_level(c, y, j, k);
    least = fmin(least, below);
  }
  return least;
}

/* After a chunk ending at time t: update the growth statistics of g; 1 if the queues
 * run away (LBMC_MF_GROWTH_MIN ..: grow by a rate that does not die out, with a pool
 * saturated or over chunks long against the model's slowest time). */
static int lbmc_mf_runaway(lbmc_mf_ctx *c, const double *y, double t, lbmc_mf_prog *g)
{
  double x = lbmc_mf_customers(c, y), rate = (x - g->customers) / (t - g->t);
  int grows = rate > LBMC_MF_GROWTH_MIN * c->m->lambda;
  int steady = grows && rate >= LBMC_MF_GROWTH_SLOWING * g->rate && t - g->t >= g->span;
  int saturated = grows && lbmc_mf_unsaturated(c, y) < LBMC_MF_SATURATED;
  g->steady_growth = steady ? g->steady_growth + 1 : 0;
  g->saturated_growth = saturated ? g->saturated_growth + 1 : 0;
  g->customers = x;
  g->rate = rate;
  g->t = t;
  return g->steady_growth >= LBMC_MF_GROWTH_CHUNKS || g->saturated_growth >= LBMC_MF_GROWTH_CHUNKS;
}

/* One run of the driver over the current levels, chunk by chunk, until stationary, out of
 * budget, out of levels (returns 1: add levels) or running away. Returns -1 when out of
 * memory, 0 otherwise; g->drift, g->top say where it stopped, *runaway whether it ran away. */
static int lbmc_mf_run(lbmc_mf_ctx *c, double *y, double rate, double *chunk, lbmc_mf_prog *g,
                       int *runaway)
{
  gsl_odeiv2_system sys = {lbmc_mf_drift, NULL, (size_t)c->mf.J * c->mf.levels * c->ph, c};
  gsl_odeiv2_driver *drv = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rkf45, 0.1 / rate,
                                                         LBMC_MF_EPS_ABS, LBMC_MF_EPS_REL);
  double *f = malloc(sizeof *f * sys.dimension), t = g->t;
  int more = 0;
  if (!drv || !f) {
    if (drv) gsl_odeiv2_driver_free(drv);
    free(f);
    return -1;
  }
  for (; t < LBMC_MF_TIME_MAX / rate && c->effort < LBMC_MF_EFFORT_MAX;
       *chunk *= LBMC_MF_CHUNK_GROWTH) {
    const double t1 = t + *chunk;
    int status = GSL_SUCCESS;
    while (t < t1 && status == GSL_SUCCESS && c->effort < LBMC_MF_EFFORT_MAX)
      status = gsl_odeiv2_driver_apply(drv, &t, fmin(t1, t + LBMC_MF_PIECE / rate), y);
    if (status != GSL_SUCCESS || t < t1) break;
    lbmc_mf_measure(c, y, f, &g->drift, &g->top);
    *runaway = lbmc_mf_runaway(c, y, t, g);
    if (*runaway || g->drift < LBMC_MF_DRIFT_TOL * rate) break;
    if (g->top > LBMC_MF_TOP_TOL) {
      more = 1;
      break;
    }
  }
  g->t = t;
  gsl_odeiv2_driver_free(drv);
  free(f);
  return more;
}

/* Integrate until stationary, out of budget, out of levels or running away; fills the
 * verdict of pt. Returns 0, or -1 when out of memory. */
static int lbmc_mf_integrate(lbmc_mf_ctx *c, double **y, lbmc_occ_mf_point *pt)
{
  const double rate = lbmc_mf_rate(c->m, c->ph);
  double chunk = 1.0 / rate;
  lbmc_mf_prog g = {0, INFINITY, 0, 0, 0, 0, 0, LBMC_MF_GROWTH_SPAN * lbmc_mf_slow(c->m)};
  int runaway = 0, more;
  while ((more = lbmc_mf_run(c, *y, rate, &chunk, &g, &runaway)) == 1) {
    if (2 * c->mf.levels > LBMC_MF_LEVELS_MAX) break;
    if (lbmc_mf_resize(c, y, 2 * c->mf.levels) != 0) return -1;
  }
  if (more < 0) return -1;
  pt->t = g.t;
  pt->settled = !runaway && g.top <= LBMC_MF_TOP_TOL && g.drift < LBMC_MF_DRIFT_TOL * rate;
  if (pt->settled)
    snprintf(pt->note, sizeof pt->note, "mean-field start: stationary at ODE time %.4g", g.t);
  else if (runaway || g.top > LBMC_MF_TOP_TOL)
    snprintf(pt->note, sizeof pt->note,
             "the mean-field ODE does not settle: its queues keep growing (%.3g customers per "
             "server and time unit at ODE time %.3g): unstable, or too close to saturation for a "
             "mean-field start; replicas start empty",
             g.rate, g.t);
  else
    snprintf(pt->note, sizeof pt->note,
             "the mean-field ODE does not settle within ODE time %.3g (largest drift %.3g): "
             "unstable, or too close to saturation for a mean-field start; replicas start empty",
             g.t, g.drift);
  return 0;
}

/* The integration itself (lbmc_occ_meanfield_solve). */
static lbmc_err lbmc_occ_meanfield_compute(const lbmc_model *m, const lbmc_occupancy_ops *ops,
                                           lbmc_occ_mf_point *pt)
{
  lbmc_mf_ctx c;
  double *y = NULL;
  gsl_error_handler_t *old;
  int bad;
  memset(pt, 0, sizeof *pt);
  memset(&c, 0, sizeof c);
  pt->J = (uint32_t)m->J;
  c.m = m;
  c.ops = ops;
  c.mf.m = m;
  c.mf.J = (uint32_t)m->J;
  c.mf.n = (double)m->n;
  c.ph = 1;
  for (int j = 0; j < m->J; j++) {
    int q = lbmc_service_ph(&m->service[j], NULL, NULL);
    c.mf.b[j] = (double)m->N[j] / (double)m->n;
    if (q > (int)c.ph) c.ph = (uint32_t)q;
  }
  if (lbmc_model_surely_unstable(m)) {
    snprintf(pt->note, sizeof pt->note,
             "rho = %.4g >= 1 with unlimited buffers: no mean-field start (unstable); replicas "
             "start empty",
             lbmc_model_rho(m));
    return LBMC_SUCCESS;
  }
  if (lbmc_mf_resize(&c, &y, LBMC_MF_LEVELS0) != 0)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "mean-field start: out of memory");
  for (uint32_t j = 0; j < c.mf.J; j++) /* empty: all at level 0 */
    y[(size_t)j * c.mf.levels * c.ph] = 1.0;
  old = gsl_set_error_handler_off(); /* a failed step is reported, not fatal */
  bad = lbmc_mf_integrate(&c, &y, pt);
  gsl_set_error_handler(old);
  free(c.p);
  free(c.work);
  free(c.marg);
  free(c.flow);
  if (bad || lbmc_mf_finish(pt, &c, y) != 0) {
    free(y);
    pt->s = pt->x = NULL;
    return LBMC_ERROR(LBMC_ERR_MEMORY, "mean-field start: out of memory");
  }
  return LBMC_SUCCESS;
}

void lbmc_occ_meanfield_free(lbmc_occ_mf_point *pt)
{
  if (pt->x != pt->s) free(pt->x);
  free(pt->s);
  pt->s = pt->x = NULL;
}

/* dst = a deep copy of src (bit for bit); 0, or -1 out of memory (dst then holds nothing). */
static int lbmc_occ_mf_copy(const lbmc_occ_mf_point *src, lbmc_occ_mf_point *dst)
{
  const size_t ns = (size_t)src->J * src->levels, nx = ns * src->ph;
  *dst = *src;
  dst->s = dst->x = NULL;
  if (src->s && !(dst->s = malloc(sizeof *dst->s * ns))) return -1;
  if (src->s) memcpy(dst->s, src->s, sizeof *dst->s * ns);
  if (src->x == src->s)
    dst->x = dst->s;
  else if (src->x) {
    if (!(dst->x = malloc(sizeof *dst->x * nx))) {
      lbmc_occ_meanfield_free(dst);
      return -1;
    }
    memcpy(dst->x, src->x, sizeof *dst->x * nx);
  }
  return 0;
}

static void lbmc_occ_mf_memo_free(void *memo)
{
  lbmc_occ_meanfield_free(memo);
  free(memo);
}

lbmc_err lbmc_occ_meanfield_solve(const lbmc_model *m, const lbmc_occupancy_ops *ops,
                                  lbmc_occ_mf_point *pt)
{
  /* the set-up model's memo keeps the point it was solved for (the engines' start and the
   * verdict's expansion: a deterministic function of the model, so a copy is the same bit
   * for bit); the model owns the memo (system.h: lbmc_model_memo), this file what it puts
   * in mf_point: an lbmc_occ_mf_point of its own, freed by lbmc_occ_mf_memo_free */
  lbmc_model_memo *keep = m->is_setup && m->policy && ops == m->policy->occupancy ? m->memo : NULL;
  lbmc_occ_mf_point *memo = keep ? keep->mf_point : NULL;
  if (memo && keep->mf_point_free == lbmc_occ_mf_memo_free) {
    if (lbmc_occ_mf_copy(memo, pt) != 0)
      return LBMC_ERROR(LBMC_ERR_MEMORY, "mean-field start: out of memory");
    return LBMC_SUCCESS;
  }
  LBMC_CALL(lbmc_occ_meanfield_compute(m, ops, pt));
  if (keep && !keep->mf_point && (memo = malloc(sizeof *memo)) != NULL) {
    if (lbmc_occ_mf_copy(pt, memo) == 0) {
      keep->mf_point = memo;
      keep->mf_point_free = lbmc_occ_mf_memo_free;
    } else
      free(memo); /* out of memory: solved again next time */
  }
  return LBMC_SUCCESS;
}

void lbmc_occ_round(const double *s, uint32_t levels, int64_t N, double u, int64_t *counts)
{
  double tot = 0, cum = 0;
  int64_t prev = 0;
  for (uint32_t k = 0; k < levels; k++) tot += s[k] > 0 ? s[k] : 0.0;
  for (uint32_t k = 0; k < levels; k++) {
    int64_t here;
    cum += (s[k] > 0 ? s[k] : 0.0) / tot * (double)N;
    here = k + 1 == levels ? N : (int64_t)floor(cum + u);
    if (here > N) here = N;
    if (here < prev) here = prev;
    counts[k] = here - prev;
    prev = here;
  }
}
