/* The mixture of sojourn and waiting times over arrival classes (mixture.h): counts,
 * pooling, bytes, distribution function and quantiles; Erlang laws for exponential
 * pools, uniformisation of the phase process for phase-type pools. */
#include "mixture.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "lbmc/service.h"

/* Quantiles are located to this relative precision (far below any interval). */
#define LBMC_MIX_REL_TOL 1e-12
/* Most Brent iterations (it converges in a few dozen). */
#define LBMC_MIX_MAX_ITER 200

lbmc_err lbmc_mixture_create(int J, const double *mu1, const int *L, lbmc_mixture **out)
{
  lbmc_mixture *mx;
  if (J < 1 || J > LBMC_MAX_POOLS)
    return LBMC_ERROR(LBMC_ERR_ARG, "mixture: %d pools; allowed: 1 .. %d", J, LBMC_MAX_POOLS);
  for (int j = 0; j < J; j++)
    if (!(mu1[j] > 0) || L[j] < 1)
      return LBMC_ERROR(LBMC_ERR_ARG, "mixture: pool %d: speed %g, slots %d; allowed: > 0, >= 1",
                        j + 1, mu1[j], L[j]);
  mx = calloc(1, sizeof *mx);
  if (!mx) return LBMC_ERROR(LBMC_ERR_MEMORY, "mixture: out of memory");
  mx->J = (uint32_t)J;
  for (int j = 0; j < J; j++) {
    mx->mu1[j] = mu1[j];
    mx->L[j] = (uint32_t)L[j];
    mx->m[j] = 1;
  }
  *out = mx;
  return LBMC_SUCCESS;
}

/* ---- Phase-type pools: the law and the uniformisation caches ---- */

/* One kind's cache: the deficit chain after `steps` uniformised steps, and the mass
 * absorbed after each step. */
typedef struct {
  uint64_t total; /* the pool's admissions it was computed for (0: not computed) */
  uint32_t dmax;  /* deficits 1 .. dmax */
  uint32_t rows;  /* rows allocated in v and nv (>= dmax + 2) */
  double *v, *nv; /* (dmax + 1) x m: mass at deficit d, phase p (row 0 unused) */
  double *done;   /* done[n]: mass absorbed after n steps, n < steps */
  size_t steps, cap;
} lbmc_mix_cache;

struct lbmc_mix_ph_ {
  uint32_t m;
  double alpha[LBMC_PH_MAX_PHASES], T[LBMC_PH_MAX_PHASES * LBMC_PH_MAX_PHASES];
  double exit[LBMC_PH_MAX_PHASES], residual[LBMC_PH_MAX_PHASES];
  double theta; /* uniformisation rate per unit of requirement: max_p -T_pp */
  /* The uniformised step without completion, I + T / theta, as its nonzero entries. */
  uint32_t nnz;
  uint8_t from[LBMC_PH_MAX_PHASES * LBMC_PH_MAX_PHASES],
      to[LBMC_PH_MAX_PHASES * LBMC_PH_MAX_PHASES];
  double val[LBMC_PH_MAX_PHASES * LBMC_PH_MAX_PHASES];
  lbmc_mix_cache cache[2]; /* by lbmc_mix_kind */
};

static void lbmc_mix_cache_free(lbmc_mix_cache *c)
{
  free(c->v);
  free(c->nv);
  free(c->done);
  memset(c, 0, sizeof *c);
}

static void lbmc_mix_ph_free(lbmc_mix_ph **ph)
{
  if (!*ph) return;
  for (int k = 0; k < 2; k++) lbmc_mix_cache_free(&(*ph)->cache[k]);
  free(*ph);
  *ph = NULL;
}

/* Same law (phases, alpha, T, exit rates, residuals). */
static int lbmc_mix_ph_equal(const lbmc_mix_ph *a, const lbmc_mix_ph *b)
{
  const size_t m = a->m;
  return a->m == b->m && !memcmp(a->alpha, b->alpha, sizeof *a->alpha * m) &&
         !memcmp(a->T, b->T, sizeof *a->T * m * m) &&
         !memcmp(a->exit, b->exit, sizeof *a->exit * m) &&
         !memcmp(a->residual, b->residual, sizeof *a->residual * m);
}

lbmc_err lbmc_mixture_set_ph(lbmc_mixture *mx, int j, int m, const double *alpha, const double *T,
                             const double *exit, const double *residual)
{
  lbmc_mix_ph *ph;
  const uint64_t *counts;
  if (j < 0 || (uint32_t)j >= mx->J || m < 1 || m > LBMC_PH_MAX_PHASES)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "mixture: pool %d, %d phases; allowed: pools 1 .. %u, 1 .. %d "
                      "phases",
                      j + 1, m, (unsigned)mx->J, LBMC_PH_MAX_PHASES);
  if (m == 1) return LBMC_SUCCESS;
  if (mx->L[j] != 1 || lbmc_mixture_counts(mx, j, &counts) != 0)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "mixture: pool %d: a phase-type law needs a plain server (slots %u) and no "
                      "counts yet",
                      j + 1, (unsigned)mx->L[j]);
  ph = calloc(1, sizeof *ph);
  if (!ph) return LBMC_ERROR(LBMC_ERR_MEMORY, "mixture: out of memory");
  ph->m = (uint32_t)m;
  memcpy(ph->alpha, alpha, sizeof *alpha * (size_t)m);
  memcpy(ph->T, T, sizeof *T * (size_t)m * (size_t)m);
  memcpy(ph->exit, exit, sizeof *exit * (size_t)m);
  memcpy(ph->residual, residual, sizeof *residual * (size_t)m);
  for (int p = 0; p < m; p++) ph->theta = fmax(ph->theta, -T[p * m + p]);
  for (int p = 0; p < m; p++)
    for (int q = 0; q < m; q++) {
      double v = (p == q) + T[p * m + q] / ph->theta;
      if (v == 0) continue;
      ph->from[ph->nnz] = (uint8_t)p;
      ph->to[ph->nnz] = (uint8_t)q;
      ph->val[ph->nnz++] = v;
    }
  lbmc_mix_ph_free(&mx->ph[j]);
  mx->ph[j] = ph;
  mx->m[j] = (uint32_t)m;
  return LBMC_SUCCESS;
}

void lbmc_mixture_destroy(lbmc_mixture **mx)
{
  if (!mx || !*mx) return;
  for (uint32_t j = 0; j < (*mx)->J; j++) {
    free((*mx)->c[j]);
    lbmc_mix_ph_free(&(*mx)->ph[j]);
  }
  free(*mx);
  *mx = NULL;
}

void lbmc_mixture_clear(lbmc_mixture *mx)
{
  for (uint32_t j = 0; j < mx->J; j++) {
    if (mx->c[j]) memset(mx->c[j], 0, sizeof *mx->c[j] * mx->cap[j]);
    if (mx->ph[j])
      for (int k = 0; k < 2; k++) mx->ph[j]->cache[k].total = 0;
  }
}

int lbmc_mixture_grow(lbmc_mixture *mx, uint32_t j, uint32_t k)
{
  size_t cap = mx->cap[j];
  uint64_t *c = lbmc_grow(mx->c[j], &cap, (size_t)k + 1, sizeof *c, UINT32_MAX);
  if (!c) return -1;
  memset(c + mx->cap[j], 0, sizeof *c * (cap - mx->cap[j]));
  mx->c[j] = c;
  mx->cap[j] = (uint32_t)cap;
  return 0;
}

lbmc_err lbmc_mixture_add_counts(lbmc_mixture *mx, int j, const uint64_t *counts, uint32_t levels)
{
  if (j < 0 || (uint32_t)j >= mx->J)
    return LBMC_ERROR(LBMC_ERR_ARG, "mixture: pool %d does not exist", j + 1);
  if (levels == 0) return LBMC_SUCCESS;
  if (levels > mx->cap[j] && lbmc_mixture_grow(mx, (uint32_t)j, levels - 1) != 0)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "mixture: out of memory for %u levels", (unsigned)levels);
  for (uint32_t k = 0; k < levels; k++) mx->c[j][k] += counts[k];
  return LBMC_SUCCESS;
}

lbmc_err lbmc_mixture_add(lbmc_mixture *dst, const lbmc_mixture *src)
{
  if (dst->J != src->J)
    return LBMC_ERROR(LBMC_ERR_ARG, "mixture: cannot add %u pools to %u", (unsigned)src->J,
                      (unsigned)dst->J);
  for (uint32_t j = 0; j < dst->J; j++) {
    if (dst->L[j] != src->L[j] || dst->mu1[j] != src->mu1[j])
      return LBMC_ERROR(LBMC_ERR_ARG, "mixture: pool %u has other speeds", (unsigned)j + 1);
    if (dst->m[j] != src->m[j] || (dst->ph[j] && !lbmc_mix_ph_equal(dst->ph[j], src->ph[j])))
      return LBMC_ERROR(LBMC_ERR_ARG, "mixture: pool %u has another service law", (unsigned)j + 1);
  }
  for (uint32_t j = 0; j < dst->J; j++) {
    const uint64_t *c;
    uint32_t levels = lbmc_mixture_counts(src, (int)j, &c);
    LBMC_CALL(lbmc_mixture_add_counts(dst, (int)j, c, levels));
  }
  return LBMC_SUCCESS;
}

uint32_t lbmc_mixture_counts(const lbmc_mixture *mx, int j, const uint64_t **counts)
{
  uint32_t levels = mx->cap[j];
  while (levels > 0 && mx->c[j][levels - 1] == 0) levels--;
  *counts = mx->c[j];
  return levels;
}

uint64_t lbmc_mixture_total(const lbmc_mixture *mx)
{
  uint64_t total = 0;
  for (uint32_t j = 0; j < mx->J; j++)
    for (uint32_t k = 0; k < mx->cap[j]; k++) total += mx->c[j][k];
  return total;
}

/* ---- Bytes ---- */

/* Packed form (native byte order, as the replica record): "LMX1", uint32 J, then per
 * pool: double mu1, uint32 L, uint32 levels, levels x uint64 counts. With a phase-type
 * pool, "LMX2", uint32 J, then per pool: double mu1, uint32 L, uint32 levels (entries),
 * uint32 m, and for m > 1 the law (alpha m, T m x m, exit m, residual m doubles), then
 * the counts. Mixtures of exponential pools keep the first form. */
static const char lbmc_mix_magic[4] = {'L', 'M', 'X', '1'};
static const char lbmc_mix_magic2[4] = {'L', 'M', 'X', '2'};
#define LBMC_MIX_HEAD  (sizeof lbmc_mix_magic + sizeof(uint32_t))
#define LBMC_MIX_POOL  (sizeof(double) + 2 * sizeof(uint32_t))
#define LBMC_MIX_POOL2 (LBMC_MIX_POOL + sizeof(uint32_t))

/* 1 if some pool is phase-type (the second form). */
static int lbmc_mix_has_ph(const lbmc_mixture *mx)
{
  for (uint32_t j = 0; j < mx->J; j++)
    if (mx->m[j] > 1) return 1;
  return 0;
}

/* Doubles of a phase-type law in the packed form. */
static size_t lbmc_mix_law_doubles(uint32_t m) { return m > 1 ? (size_t)m * m + 3 * (size_t)m : 0; }

size_t lbmc_mixture_packed_size(const lbmc_mixture *mx)
{
  const int two = lbmc_mix_has_ph(mx);
  size_t b = LBMC_MIX_HEAD;
  for (uint32_t j = 0; j < mx->J; j++) {
    const uint64_t *c;
    b += (two ? LBMC_MIX_POOL2 : LBMC_MIX_POOL) + sizeof *c * lbmc_mixture_counts(mx, (int)j, &c);
    if (two) b += sizeof(double) * lbmc_mix_law_doubles(mx->m[j]);
  }
  return b;
}

/* Append n bytes at *b. */
static void lbmc_mix_put(char **b, const void *x, size_t n)
{
  if (n) memcpy(*b, x, n);
  *b += n;
}

size_t lbmc_mixture_pack(const lbmc_mixture *mx, void *buf, size_t len)
{
  const int two = lbmc_mix_has_ph(mx);
  char *b = buf;
  if (len < lbmc_mixture_packed_size(mx)) return 0;
  lbmc_mix_put(&b, two ? lbmc_mix_magic2 : lbmc_mix_magic, sizeof lbmc_mix_magic);
  lbmc_mix_put(&b, &mx->J, sizeof mx->J);
  for (uint32_t j = 0; j < mx->J; j++) {
    const uint64_t *c;
    uint32_t levels = lbmc_mixture_counts(mx, (int)j, &c);
    const lbmc_mix_ph *ph = mx->ph[j];
    lbmc_mix_put(&b, &mx->mu1[j], sizeof(double));
    lbmc_mix_put(&b, &mx->L[j], sizeof(uint32_t));
    lbmc_mix_put(&b, &levels, sizeof levels);
    if (two) lbmc_mix_put(&b, &mx->m[j], sizeof(uint32_t));
    if (two && ph) {
      lbmc_mix_put(&b, ph->alpha, sizeof(double) * ph->m);
      lbmc_mix_put(&b, ph->T, sizeof(double) * ph->m * ph->m);
      lbmc_mix_put(&b, ph->exit, sizeof(double) * ph->m);
      lbmc_mix_put(&b, ph->residual, sizeof(double) * ph->m);
    }
    lbmc_mix_put(&b, c, sizeof *c * levels);
  }
  return (size_t)(b - (char *)buf);
}

/* One pool of a packed mixture at b + *at (len bytes in all): its header into
 * mu1, L, levels, m, the law (m > 1) into law[m^2 + 3 m], and *counts pointing at its
 * counts; *at moves past it. 0, or -1 when cut short or malformed. */
static int lbmc_mix_read_pool(const char *b, size_t len, size_t *at, int two, double *mu1, int *L,
                              uint32_t *levels, uint32_t *m, double *law, const char **counts)
{
  uint32_t l;
  size_t need = two ? LBMC_MIX_POOL2 : LBMC_MIX_POOL, nlaw;
  if (len - *at < need) return -1;
  memcpy(mu1, b + *at, sizeof(double));
  memcpy(&l, b + *at + sizeof(double), sizeof l);
  memcpy(levels, b + *at + sizeof(double) + sizeof l, sizeof *levels);
  *m = 1;
  if (two) memcpy(m, b + *at + LBMC_MIX_POOL, sizeof *m);
  if (*m < 1 || *m > LBMC_PH_MAX_PHASES) return -1;
  *L = l > LBMC_MAX_RATES ? 0 : (int)l;
  *at += need;
  nlaw = lbmc_mix_law_doubles(*m);
  if ((len - *at) / sizeof(double) < nlaw) return -1;
  if (nlaw) memcpy(law, b + *at, sizeof(double) * nlaw);
  *at += sizeof(double) * nlaw;
  if ((len - *at) / sizeof(uint64_t) < *levels) return -1;
  *counts = b + *at;
  *at += sizeof(uint64_t) * *levels;
  return 0;
}

/* The counts of one pool (levels x uint64 at src, maybe unaligned) added to pool j. */
static lbmc_err lbmc_mix_add_packed(lbmc_mixture *mx, int j, const char *src, uint32_t levels)
{
  uint64_t *c = levels ? malloc(sizeof *c * levels) : NULL;
  lbmc_err err;
  if (levels && !c)
    return LBMC_ERROR(LBMC_ERR_MEMORY, "mixture: out of memory for %u levels", (unsigned)levels);
  if (levels) memcpy(c, src, sizeof *c * levels);
  err = lbmc_mixture_add_counts(mx, j, c, levels);
  free(c);
  return err;
}

lbmc_err lbmc_mixture_unpack(const void *buf, size_t len, lbmc_mixture **out, size_t *used)
{
  const char *b = buf, *counts[LBMC_MAX_POOLS];
  double mu1[LBMC_MAX_POOLS], *law = NULL;
  int L[LBMC_MAX_POOLS], two;
  uint32_t J = 0, levels[LBMC_MAX_POOLS], m[LBMC_MAX_POOLS];
  size_t at = LBMC_MIX_HEAD, lawsize = lbmc_mix_law_doubles(LBMC_PH_MAX_PHASES);
  lbmc_mixture *mx = NULL;
  lbmc_err err = LBMC_SUCCESS;
  *out = NULL;
  if (len < LBMC_MIX_HEAD || (memcmp(b, lbmc_mix_magic, sizeof lbmc_mix_magic) != 0 &&
                              memcmp(b, lbmc_mix_magic2, sizeof lbmc_mix_magic2) != 0))
    return LBMC_ERROR(LBMC_ERR_PARSE, "mixture: not a packed mixture (%zu bytes)", len);
  two = b[3] == '2';
  memcpy(&J, b + sizeof lbmc_mix_magic, sizeof J);
  if (J < 1 || J > LBMC_MAX_POOLS)
    return LBMC_ERROR(LBMC_ERR_PARSE, "mixture: %u pools in a packed mixture", (unsigned)J);
  law = malloc(sizeof *law * lawsize * J);
  if (!law) return LBMC_ERROR(LBMC_ERR_MEMORY, "mixture: out of memory");
  for (uint32_t j = 0; j < J && !err; j++)
    if (lbmc_mix_read_pool(b, len, &at, two, &mu1[j], &L[j], &levels[j], &m[j], law + j * lawsize,
                           &counts[j]) != 0)
      err = LBMC_ERROR(LBMC_ERR_PARSE, "mixture: a packed mixture cut short (%zu bytes)", len);
  if (!err) err = lbmc_mixture_create((int)J, mu1, L, &mx);
  for (uint32_t j = 0; j < J && !err; j++) {
    const double *a = law + j * lawsize, *T = a + m[j];
    if (m[j] > 1)
      err =
          lbmc_mixture_set_ph(mx, (int)j, (int)m[j], a, T, T + m[j] * m[j], T + m[j] * m[j] + m[j]);
    if (!err) err = lbmc_mix_add_packed(mx, (int)j, counts[j], levels[j]);
  }
  free(law);
  if (err) {
    lbmc_mixture_destroy(&mx);
    return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
  }
  if (used) *used = at;
  *out = mx;
  return LBMC_SUCCESS;
}

size_t lbmc_mixture_bytes(const lbmc_mixture *mx)
{
  size_t b = sizeof *mx;
  for (uint32_t j = 0; j < mx->J; j++) {
    b += sizeof *mx->c[j] * mx->cap[j];
    if (!mx->ph[j]) continue;
    b += sizeof *mx->ph[j];
    for (int k = 0; k < 2; k++) {
      const lbmc_mix_cache *c = &mx->ph[j]->cache[k];
      b += sizeof(double) * (c->cap + 2 * (size_t)c->rows * mx->m[j]);
    }
  }
  return b;
}

/* Waiting phases of class (j, k): (k - L + 1)^+. */
static uint32_t lbmc_mix_phases(const lbmc_mixture *mx, uint32_t j, uint32_t k)
{
  return k + 1 > mx->L[j] ? k + 1 - mx->L[j] : 0;
}

/* P(W + Y <= t) for W ~ Erlang(a, r), Y ~ Exp(mu), r > mu, a >= 1:
 *   E[(1 - e^{-mu (t - W)}) 1{W <= t}] = P(a, r t) - e^{-mu t} (r / (r - mu))^a P(a, (r - mu) t)
 * (P the regularised lower incomplete gamma function); the second term in logarithms. */
static double lbmc_mix_hypo_cdf(uint32_t a, double r, double mu, double t)
{
  double low = gsl_sf_gamma_inc_P(a, (r - mu) * t), second = 0;
  if (low > 0) second = exp(-mu * t + a * log(r / (r - mu)) + log(low));
  return fmax(0.0, gsl_sf_gamma_inc_P(a, r * t) - second);
}

/* P(T <= t) given class (j, k) of an exponential pool. */
static double lbmc_mix_class_cdf(const lbmc_mixture *mx, lbmc_mix_kind kind, uint32_t j, uint32_t k,
                                 double t)
{
  const uint32_t a = lbmc_mix_phases(mx, j, k), L = mx->L[j];
  const double mu = mx->mu1[j], r = L * mu;
  if (kind == LBMC_MIX_WAIT) return a == 0 ? 1.0 : gsl_sf_gamma_inc_P(a, r * t);
  if (L == 1) return gsl_sf_gamma_inc_P(a + 1, mu * t);
  if (a == 0) return -expm1(-mu * t);
  return lbmc_mix_hypo_cdf(a, r, mu, t);
}

/* ---- Phase-type pools: uniformisation ----
 * The deficit chain of pool j: state (d, p), d >= 1 completions still needed and p the
 * phase of the requirement in service; in uniformised steps (rate theta per unit of
 * requirement) the phase moves by I + T / theta, and with probability exit_p / theta the
 * requirement ends: d falls by one and the next one starts in a phase drawn from alpha,
 * or at d = 1 the customer's time is over (absorbed). Every class starts at once: class
 * (k, p) puts its count at deficit k (wait) or k + 1 (sojourn), phase p; class k = 0
 * waits nothing (absorbed from the start) and its sojourn starts at deficit 1 from
 * alpha. The absorbed mass after n steps, D_n, is nondecreasing to the pool's total. */

/* Fill the starting vector of cache c (kind) from pool j's counts. -1 when out of memory. */
static int lbmc_mix_ph_start(const lbmc_mixture *mx, uint32_t j, lbmc_mix_kind kind,
                             lbmc_mix_cache *c, uint64_t total)
{
  const lbmc_mix_ph *ph = mx->ph[j];
  const uint32_t m = ph->m, shift = kind == LBMC_MIX_SOJOURN;
  const uint64_t *cnt;
  const uint32_t E = lbmc_mixture_counts(mx, (int)j, &cnt);
  const uint32_t dmax = (E ? (E - 1) / m : 0) + shift;
  const size_t size = sizeof *c->v * ((size_t)dmax + 2) * m; /* rows 0 and dmax + 1 stay 0 */
  double idle = 0;
  if (dmax + 2 > c->rows) {
    double *v = realloc(c->v, size), *nv = v ? realloc(c->nv, size) : NULL;
    if (v) c->v = v;
    if (!nv) return -1;
    c->nv = nv;
    c->rows = dmax + 2;
  }
  c->dmax = dmax;
  memset(c->v, 0, size);
  memset(c->nv, 0, size);
  for (uint32_t e = 0; e < E; e++) {
    const uint32_t k = e / m, p = e % m;
    if (k == 0)
      idle += (double)cnt[e];
    else
      c->v[(size_t)(k + shift) * m + p] += (double)cnt[e];
  }
  if (shift)
    for (uint32_t p = 0; p < m; p++) c->v[(size_t)m + p] += idle * ph->alpha[p];
  c->steps = 0;
  if (!c->done) {
    c->cap = 1024;
    c->done = malloc(sizeof *c->done * c->cap);
    if (!c->done) return -1;
  }
  c->done[c->steps++] = shift ? 0.0 : idle;
  c->total = total;
  return 0;
}

/* Extend cache c to hold D_n for n < steps. -1 when out of memory or beyond
 * LBMC_MIX_PH_MAX_STEPS. */
static int lbmc_mix_ph_extend(const lbmc_mix_ph *ph, lbmc_mix_cache *c, size_t steps)
{
  const uint32_t m = ph->m;
  if (steps > LBMC_MIX_PH_MAX_STEPS) return -1;
  if (steps > c->cap) {
    double *d = lbmc_grow(c->done, &c->cap, steps, sizeof *d, LBMC_MIX_PH_MAX_STEPS);
    if (!d) return -1;
    c->done = d;
  }
  while (c->steps < steps) {
    double *v = c->v, *nv = c->nv, absorbed = 0;
    for (uint32_t p = 0; p < m; p++) absorbed += v[m + p] * ph->exit[p];
    for (uint32_t d = 1; d <= c->dmax; d++) {
      const double *vd = v + (size_t)d * m;
      double *nd = nv + (size_t)d * m, next = 0;
      for (uint32_t p = 0; p < m; p++) nd[p] = 0;
      for (uint32_t i = 0; i < ph->nnz; i++) nd[ph->to[i]] += vd[ph->from[i]] * ph->val[i];
      if (d < c->dmax) /* completions at deficit d + 1 start a fresh requirement at d */
        for (uint32_t p = 0; p < m; p++) next += vd[m + p] * ph->exit[p];
      next /= ph->theta;
      if (next > 0)
        for (uint32_t p = 0; p < m; p++) nd[p] += next * ph->alpha[p];
    }
    c->v = nv;
    c->nv = v;
    c->done[c->steps] = c->done[c->steps - 1] + absorbed / ph->theta;
    c->steps++;
  }
  return 0;
}

/* Poisson(x) weights w[n - lo] for n = *lo .. *hi, cut where the mass left out on each
 * side is below LBMC_MIX_PH_EPS / 2 (the tails are bounded by geometric series from the
 * last weight kept: the ratio of successive weights falls away from the mode). Returns
 * the weights (malloc'ed), NULL when out of memory or beyond LBMC_MIX_PH_MAX_STEPS. */
static double *lbmc_mix_poisson(double x, size_t *lo, size_t *hi)
{
  const double mode = floor(x), half = 0.5 * LBMC_MIX_PH_EPS;
  size_t a = (size_t)mode, b = (size_t)mode, cap = 64, n0;
  double wa, wb, *w;
  if (mode + 1 >= LBMC_MIX_PH_MAX_STEPS) return NULL;
  wa = wb = exp(-x + (mode > 0 ? mode * log(x) : 0.0) - lgamma(mode + 1));
  /* right: tail after b below wb r / (1 - r), r = x / (b + 1) */
  while ((double)b + 1 <= x || wb * (x / ((double)b + 1)) / (1 - x / ((double)b + 1)) >= half) {
    wb *= x / ((double)b + 1);
    b++;
    if (b >= LBMC_MIX_PH_MAX_STEPS) return NULL;
  }
  /* left: tail before a below wa r / (1 - r), r = a / x */
  while (a > 0 && wa * ((double)a / x) / (1 - (double)a / x) >= half) {
    wa *= (double)a / x;
    a--;
  }
  while (cap < b - a + 1) cap *= 2;
  w = malloc(sizeof *w * cap);
  if (!w) return NULL;
  n0 = (size_t)mode - a;
  w[n0] = exp(-x + (mode > 0 ? mode * log(x) : 0.0) - lgamma(mode + 1));
  for (size_t i = n0; i-- > 0;) w[i] = w[i + 1] * (double)(a + i + 1) / x;
  for (size_t i = n0 + 1; i <= b - a; i++) w[i] = w[i - 1] * x / (double)(a + i);
  *lo = a;
  *hi = b;
  return w;
}

/* Pool j's customers with T <= t (counts times probabilities), phase-type; NaN when
 * the steps needed exceed LBMC_MIX_PH_MAX_STEPS or memory runs out. */
static double lbmc_mix_ph_mass(const lbmc_mixture *mx, uint32_t j, lbmc_mix_kind kind, double t,
                               uint64_t total)
{
  lbmc_mix_ph *ph = mx->ph[j];
  lbmc_mix_cache *c = &ph->cache[kind];
  size_t lo, hi;
  double *w, sum = 0;
  if (c->total != total && lbmc_mix_ph_start(mx, j, kind, c, total) != 0) {
    c->total = 0;
    return NAN;
  }
  if (!(t > 0)) return c->done[0];
  w = lbmc_mix_poisson(ph->theta * mx->mu1[j] * t, &lo, &hi);
  if (!w || lbmc_mix_ph_extend(ph, c, hi + 1) != 0) {
    free(w);
    return NAN;
  }
  for (size_t n = lo; n <= hi; n++) sum += w[n - lo] * c->done[n];
  free(w);
  return sum;
}

/* Pool j's admissions. */
static uint64_t lbmc_mix_pool_total(const lbmc_mixture *mx, uint32_t j)
{
  uint64_t total = 0;
  for (uint32_t e = 0; e < mx->cap[j]; e++) total += mx->c[j][e];
  return total;
}

double lbmc_mixture_cdf(const lbmc_mixture *mx, lbmc_mix_kind kind, double t)
{
  double sum = 0, total = 0;
  gsl_error_handler_t *old;
  if (t < 0) return 0;
  old = gsl_set_error_handler_off(); /* an underflow deep in a tail is a 0, not an error */
  for (uint32_t j = 0; j < mx->J; j++) {
    if (mx->ph[j]) {
      uint64_t tot = lbmc_mix_pool_total(mx, j);
      if (tot == 0) continue;
      total += (double)tot;
      sum += lbmc_mix_ph_mass(mx, j, kind, t, tot);
      continue;
    }
    for (uint32_t k = 0; k < mx->cap[j]; k++) {
      double c = (double)mx->c[j][k];
      if (c == 0) continue;
      total += c;
      sum += c * lbmc_mix_class_cdf(mx, kind, j, k, t);
    }
  }
  gsl_set_error_handler(old);
  return total > 0 ? sum / total : NAN;
}

/* Mean time of class e of pool j (time units). */
static double lbmc_mix_class_mean(const lbmc_mixture *mx, lbmc_mix_kind kind, uint32_t j,
                                  uint32_t e)
{
  const double service = kind == LBMC_MIX_SOJOURN ? 1.0 / mx->mu1[j] : 0.0;
  const lbmc_mix_ph *ph = mx->ph[j];
  if (ph) { /* class (k, p): the residual from p and k - 1 fresh requirements */
    const uint32_t k = e / ph->m;
    return (k ? ph->residual[e % ph->m] + (double)(k - 1) : 0.0) / mx->mu1[j] + service;
  }
  return lbmc_mix_phases(mx, j, e) / (mx->L[j] * mx->mu1[j]) + service;
}

double lbmc_mixture_mean(const lbmc_mixture *mx, lbmc_mix_kind kind)
{
  double sum = 0, total = 0;
  for (uint32_t j = 0; j < mx->J; j++)
    for (uint32_t k = 0; k < mx->cap[j]; k++) {
      double c = (double)mx->c[j][k];
      total += c;
      sum += c * lbmc_mix_class_mean(mx, kind, j, k);
    }
  return total > 0 ? sum / total : NAN;
}

typedef struct {
  const lbmc_mixture *mx;
  lbmc_mix_kind kind;
  double p;
} lbmc_mix_root;

static double lbmc_mix_f(double t, void *arg)
{
  const lbmc_mix_root *r = arg;
  return lbmc_mixture_cdf(r->mx, r->kind, t) - r->p;
}

/* Brent's method on F(t) - p over [lo, hi], F(lo) < p <= F(hi). */
static double lbmc_mix_brent(lbmc_mix_root *arg, double lo, double hi)
{
  gsl_function f = {lbmc_mix_f, arg};
  gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  double x = 0.5 * (lo + hi);
  if (!s) return NAN;
  gsl_root_fsolver_set(s, &f, lo, hi);
  for (int it = 0; it < LBMC_MIX_MAX_ITER; it++) {
    if (gsl_root_fsolver_iterate(s) != GSL_SUCCESS) break;
    x = gsl_root_fsolver_root(s);
    lo = gsl_root_fsolver_x_lower(s);
    hi = gsl_root_fsolver_x_upper(s);
    if (gsl_root_test_interval(lo, hi, 0, LBMC_MIX_REL_TOL) == GSL_SUCCESS) break;
  }
  gsl_root_fsolver_free(s);
  return x;
}

double lbmc_mixture_quantile(const lbmc_mixture *mx, lbmc_mix_kind kind, double p)
{
  lbmc_mix_root arg = {mx, kind, p};
  double lo = 0, hi = lbmc_mixture_mean(mx, kind);
  if (!(p > 0 && p < 1) || !isfinite(hi)) return NAN;
  if (lbmc_mixture_cdf(mx, kind, 0) >= p) return 0;
  if (!(hi > 0)) hi = 1.0 / mx->mu1[0];
  for (;;) {
    double F = lbmc_mixture_cdf(mx, kind, hi);
    if (isnan(F)) return NAN; /* a phase-type pool beyond LBMC_MIX_PH_MAX_STEPS */
    if (F >= p) break;
    lo = hi;
    hi *= 2;
  }
  return lbmc_mix_brent(&arg, lo, hi);
}
