/* The Erlang mixture of sojourn and waiting times over arrival classes (mixture.h):
 * counts, pooling, bytes, distribution function and quantiles. */
#include "mixture.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
  }
  *out = mx;
  return LBMC_SUCCESS;
}

void lbmc_mixture_destroy(lbmc_mixture **mx)
{
  if (!mx || !*mx) return;
  for (uint32_t j = 0; j < (*mx)->J; j++) free((*mx)->c[j]);
  free(*mx);
  *mx = NULL;
}

void lbmc_mixture_clear(lbmc_mixture *mx)
{
  for (uint32_t j = 0; j < mx->J; j++)
    if (mx->c[j]) memset(mx->c[j], 0, sizeof *mx->c[j] * mx->cap[j]);
}

int lbmc_mixture_grow(lbmc_mixture *mx, uint32_t j, uint32_t k)
{
  uint64_t cap = mx->cap[j] ? 2 * (uint64_t)mx->cap[j] : 16;
  uint64_t *c;
  if (cap <= k) cap = (uint64_t)k + 1;
  if (cap > UINT32_MAX) return -1;
  c = realloc(mx->c[j], sizeof *c * cap);
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
  for (uint32_t j = 0; j < dst->J; j++)
    if (dst->L[j] != src->L[j] || dst->mu1[j] != src->mu1[j])
      return LBMC_ERROR(LBMC_ERR_ARG, "mixture: pool %u has other speeds", (unsigned)j + 1);
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
 * pool: double mu1, uint32 L, uint32 levels, levels x uint64 counts. */
static const char lbmc_mix_magic[4] = {'L', 'M', 'X', '1'};
#define LBMC_MIX_HEAD (sizeof lbmc_mix_magic + sizeof(uint32_t))
#define LBMC_MIX_POOL (sizeof(double) + 2 * sizeof(uint32_t))

size_t lbmc_mixture_packed_size(const lbmc_mixture *mx)
{
  size_t b = LBMC_MIX_HEAD;
  for (uint32_t j = 0; j < mx->J; j++) {
    const uint64_t *c;
    b += LBMC_MIX_POOL + sizeof *c * lbmc_mixture_counts(mx, (int)j, &c);
  }
  return b;
}

size_t lbmc_mixture_pack(const lbmc_mixture *mx, void *buf, size_t len)
{
  char *b = buf;
  if (len < lbmc_mixture_packed_size(mx)) return 0;
  memcpy(b, lbmc_mix_magic, sizeof lbmc_mix_magic);
  memcpy(b + sizeof lbmc_mix_magic, &mx->J, sizeof mx->J);
  b += LBMC_MIX_HEAD;
  for (uint32_t j = 0; j < mx->J; j++) {
    const uint64_t *c;
    uint32_t levels = lbmc_mixture_counts(mx, (int)j, &c);
    memcpy(b, &mx->mu1[j], sizeof(double));
    memcpy(b + sizeof(double), &mx->L[j], sizeof(uint32_t));
    memcpy(b + sizeof(double) + sizeof(uint32_t), &levels, sizeof levels);
    b += LBMC_MIX_POOL;
    if (levels) memcpy(b, c, sizeof *c * levels);
    b += sizeof *c * levels;
  }
  return (size_t)(b - (char *)buf);
}

/* The pool headers of a packed mixture: J, speeds, slots; the bytes it takes in *used. */
static lbmc_err lbmc_mix_read_head(const char *b, size_t len, uint32_t *J, double *mu1, int *L,
                                   size_t *used)
{
  size_t at = LBMC_MIX_HEAD;
  if (len < LBMC_MIX_HEAD || memcmp(b, lbmc_mix_magic, sizeof lbmc_mix_magic) != 0)
    return LBMC_ERROR(LBMC_ERR_PARSE, "mixture: not a packed mixture (%zu bytes)", len);
  memcpy(J, b + sizeof lbmc_mix_magic, sizeof *J);
  if (*J < 1 || *J > LBMC_MAX_POOLS)
    return LBMC_ERROR(LBMC_ERR_PARSE, "mixture: %u pools in a packed mixture", (unsigned)*J);
  for (uint32_t j = 0; j < *J; j++) {
    uint32_t l, levels;
    if (len - at < LBMC_MIX_POOL) break;
    memcpy(&mu1[j], b + at, sizeof(double));
    memcpy(&l, b + at + sizeof(double), sizeof l);
    memcpy(&levels, b + at + sizeof(double) + sizeof l, sizeof levels);
    L[j] = l > LBMC_MAX_RATES ? 0 : (int)l;
    at += LBMC_MIX_POOL;
    if ((len - at) / sizeof(uint64_t) < levels) break;
    at += sizeof(uint64_t) * levels;
    if (j + 1 == *J) {
      *used = at;
      return LBMC_SUCCESS;
    }
  }
  return LBMC_ERROR(LBMC_ERR_PARSE, "mixture: a packed mixture cut short (%zu bytes)", len);
}

lbmc_err lbmc_mixture_unpack(const void *buf, size_t len, lbmc_mixture **out, size_t *used)
{
  const char *b = buf;
  double mu1[LBMC_MAX_POOLS];
  int L[LBMC_MAX_POOLS];
  uint32_t J = 0;
  size_t at = LBMC_MIX_HEAD, total = 0;
  lbmc_mixture *mx;
  lbmc_err err;
  *out = NULL;
  LBMC_CALL(lbmc_mix_read_head(b, len, &J, mu1, L, &total));
  LBMC_CALL(lbmc_mixture_create((int)J, mu1, L, &mx));
  for (uint32_t j = 0; j < J; j++) {
    uint32_t levels;
    uint64_t *c;
    memcpy(&levels, b + at + sizeof(double) + sizeof(uint32_t), sizeof levels);
    at += LBMC_MIX_POOL;
    c = levels ? malloc(sizeof *c * levels) : NULL;
    if (levels && !c) {
      lbmc_mixture_destroy(&mx);
      return LBMC_ERROR(LBMC_ERR_MEMORY, "mixture: out of memory for %u levels", (unsigned)levels);
    }
    if (levels) memcpy(c, b + at, sizeof *c * levels);
    err = lbmc_mixture_add_counts(mx, (int)j, c, levels);
    free(c);
    if (err) {
      lbmc_mixture_destroy(&mx);
      return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
    }
    at += sizeof(uint64_t) * levels;
  }
  if (used) *used = total;
  *out = mx;
  return LBMC_SUCCESS;
}

size_t lbmc_mixture_bytes(const lbmc_mixture *mx)
{
  size_t b = sizeof *mx;
  for (uint32_t j = 0; j < mx->J; j++) b += sizeof *mx->c[j] * mx->cap[j];
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

/* P(T <= t) given class (j, k). */
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

double lbmc_mixture_cdf(const lbmc_mixture *mx, lbmc_mix_kind kind, double t)
{
  double sum = 0, total = 0;
  gsl_error_handler_t *old;
  if (t < 0) return 0;
  old = gsl_set_error_handler_off(); /* an underflow deep in a tail is a 0, not an error */
  for (uint32_t j = 0; j < mx->J; j++)
    for (uint32_t k = 0; k < mx->cap[j]; k++) {
      double c = (double)mx->c[j][k];
      if (c == 0) continue;
      total += c;
      sum += c * lbmc_mix_class_cdf(mx, kind, j, k, t);
    }
  gsl_set_error_handler(old);
  return total > 0 ? sum / total : NAN;
}

double lbmc_mixture_mean(const lbmc_mixture *mx, lbmc_mix_kind kind)
{
  double sum = 0, total = 0;
  for (uint32_t j = 0; j < mx->J; j++)
    for (uint32_t k = 0; k < mx->cap[j]; k++) {
      double c = (double)mx->c[j][k];
      total += c;
      sum += c * (lbmc_mix_phases(mx, j, k) / (mx->L[j] * mx->mu1[j]) +
                  (kind == LBMC_MIX_SOJOURN ? 1.0 / mx->mu1[j] : 0.0));
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
  while (lbmc_mixture_cdf(mx, kind, hi) < p) {
    lo = hi;
    hi *= 2;
  }
  return lbmc_mix_brent(&arg, lo, hi);
}
