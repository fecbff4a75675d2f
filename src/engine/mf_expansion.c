/* The refined mean field around the mean-field start and the start bias of a time average
 * (mf_expansion.h: the formulas and their sources).
 *
 * Derivatives are one-sided finite differences (positive steps only: a level holding 1e-13
 * of the servers must not turn negative, where the routing laws clip): the Jacobian with
 * the second-order formula (-3 f(x) + 4 f(x + h) - f(x + 2h)) / 2h, exact for the quadratic
 * drift of jsq(2); the Hessian's pairs by (f(x + h e_i + h e_j) - f(x + h e_i) - f(x + h e_j)
 * + f(x)) / h^2 at h and 2h, Richardson-extrapolated (exact for quadratics, O(h^2) else).
 * Lyapunov equations: Bartels-Stewart on GSL's real Schur form (gsl_eigen_nonsymm_Z), the
 * quasi-triangular equation solved by blocks of 1 or 2. */
#include "mf_expansion.h"

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../system/policy.h"
#include "../system/system.h"
#include "lbmc/metrics.h"
#include "lbmc/model.h"
#include "lbmc/service.h"
#include "occ_meanfield.h"

#define LBMC_MFX_FLOOR  1e-13 /* levels held by less than this in every pool are dropped */
#define LBMC_MFX_HJAC   1e-6  /* Jacobian step */
#define LBMC_MFX_HHESS  1e-4  /* Hessian step */
#define LBMC_MFX_HTOL   1e-14 /* Hessian entries below this are dropped */
#define LBMC_MFX_TAUS   30.0  /* the path runs this many slowest relaxation times */
#define LBMC_MFX_FLOPS  4e9   /* budget of the path */
#define LBMC_MFX_DIMMAX 170   /* larger states are refused (memory d^2, time d^3) */

/* The expected rates (per n) of the arrival jumps at the last evaluation, whose ratios are
 * the non-linear functionals (mf_expansion.h): admissions, their sum of expected sojourns and
 * of expected waits, the admissions that wait, the blocked arrivals, all arrivals, then pool
 * j's admissions at LBMC_MFX_R_POOL + j. */
enum {
  LBMC_MFX_R_ADM,
  LBMC_MFX_R_SOJ,
  LBMC_MFX_R_WT,
  LBMC_MFX_R_WAITED,
  LBMC_MFX_R_BLOCKED,
  LBMC_MFX_R_ARR,
  LBMC_MFX_R_POOL
};
#define LBMC_MFX_RMAX (LBMC_MFX_R_POOL + LBMC_MAX_POOLS)

typedef struct {
  const lbmc_model *m;
  const lbmc_occupancy_ops *ops;
  lbmc_occ_mf mf;
  uint32_t J, K, Lv, d, nr; /* nr: rates, LBMC_MFX_R_POOL + J */
  uint32_t ph[LBMC_MAX_POOLS], off[LBMC_MAX_POOLS];
  double *s, *p, *work;       /* J x Lv levels, routing law, law scratch */
  double rate[LBMC_MFX_RMAX]; /* the last evaluation's rates (LBMC_MFX_R_*) */
  double *z;                  /* (K + 1) x phases: one pool's fractions with level 0 */
} lbmc_mfx_ctx;

/* The rates of the last evaluation into r (nr). */
static void lbmc_mfx_phi(const lbmc_mfx_ctx *c, double *r)
{
  memcpy(r, c->rate, sizeof *r * c->nr);
}

/* One jump of the chain: rate r (per n) moving a server of pool j from index a to c (-1:
 * level 0, outside the state). */
static void lbmc_mfx_jump(const lbmc_mfx_ctx *c, double r, long a, long to, uint32_t j, double *f,
                          double *B)
{
  const double bj = c->mf.b[j], u = r / bj, v = r / (bj * bj);
  const size_t d = c->d;
  if (r == 0) return;
  if (to >= 0) f[to] += u;
  if (a >= 0) f[a] -= u;
  if (!B) return;
  if (to >= 0) B[(size_t)to * d + (size_t)to] += v;
  if (a >= 0) B[(size_t)a * d + (size_t)a] += v;
  if (a >= 0 && to >= 0) {
    B[(size_t)a * d + (size_t)to] -= v;
    B[(size_t)to * d + (size_t)a] -= v;
  }
}

/* The state's index of class (k, q) of pool j (-1: level 0). */
static long lbmc_mfx_index(const lbmc_mfx_ctx *c, uint32_t j, uint32_t k, uint32_t q)
{
  return k == 0 ? -1 : (long)(c->off[j] + (k - 1) * c->ph[j] + q);
}

typedef struct {
  lbmc_mfx_ctx *c;
  double *f, *B;
} lbmc_mfx_acc;

/* One transition of lbmc_mf_jumps: into the drift, B, and for an admission the rates. */
static void lbmc_mfx_on_jump(void *ctx, uint32_t j, uint32_t k, uint32_t q, uint32_t k2,
                             uint32_t q2, const double *law, uint32_t ph, double rate)
{
  const lbmc_mfx_acc *t = ctx;
  lbmc_mfx_ctx *c = t->c;
  const lbmc_model *m = c->m;
  const long from = lbmc_mfx_index(c, j, k, q);
  double *rt = c->rate, a;
  if (!law)
    lbmc_mfx_jump(c, rate, from, lbmc_mfx_index(c, j, k2, q2), j, t->f, t->B);
  else
    for (uint32_t r = 0; r < ph; r++)
      lbmc_mfx_jump(c, rate * law[r], from, lbmc_mfx_index(c, j, k2, r), j, t->f, t->B);
  if (k2 != k + 1) return;
  a = rate; /* an admission: the expected sojourn, wait and whether it waits (as the
               occupancy engines record them) */
  rt[LBMC_MFX_R_ADM] += a;
  rt[LBMC_MFX_R_POOL + j] += a;
  if (k == 0) {
    rt[LBMC_MFX_R_SOJ] += a / (c->ph[j] > 1 ? m->mu[j] : m->rates[j][0]);
  } else if (c->ph[j] > 1) {
    const double wt = ((double)k - 1 + lbmc_service_ph_residual(&m->service[j])[q]) / m->mu[j];
    rt[LBMC_MFX_R_SOJ] += a * (wt + 1 / m->mu[j]);
    rt[LBMC_MFX_R_WT] += a * wt;
    rt[LBMC_MFX_R_WAITED] += a;
  } else {
    const uint32_t L = (uint32_t)m->nrates[j];
    const double wt = k + 1 > L ? (double)(k + 1 - L) / m->rates[j][L - 1] : 0.0;
    rt[LBMC_MFX_R_SOJ] += a * (wt + 1 / m->rates[j][0]);
    rt[LBMC_MFX_R_WT] += a * wt;
    rt[LBMC_MFX_R_WAITED] += k >= L ? a : 0.0;
  }
}

/* The drift f (d) at state x and, if B is not NULL, the jumps' covariance B (d x d, added):
 * the transitions of lbmc_mf_jumps (occ_meanfield.h) over levels 0 .. K. */
static void lbmc_mfx_eval(lbmc_mfx_ctx *c, const double *x, double *f, double *B)
{
  const lbmc_model *m = c->m;
  const uint32_t Lv = c->Lv, K = c->K;
  lbmc_mfx_acc acc = {c, f, B};
  memset(f, 0, sizeof *f * c->d);
  memset(c->rate, 0, sizeof c->rate);
  for (uint32_t j = 0; j < c->J; j++) {
    double tot = 0;
    for (uint32_t k = 1; k < Lv; k++) {
      double sk = 0;
      for (uint32_t q = 0; k <= K && q < c->ph[j]; q++) sk += x[c->off[j] + (k - 1) * c->ph[j] + q];
      c->s[j * Lv + k] = sk;
      tot += sk;
    }
    c->s[j * Lv] = 1 - tot;
  }
  c->mf.s = c->s;
  c->ops->law(&c->mf, c->p);
  for (uint32_t j = 0; j < c->J; j++) {
    const long Bf = m->buffer[j];
    const uint32_t ph = c->ph[j];
    double *z = c->z;
    for (uint32_t k = 0; k < Lv; k++) { /* every arrival, and those blocked */
      const double a = m->lambda * c->p[j * Lv + k];
      c->rate[LBMC_MFX_R_ARR] += a;
      if (!(Bf == LBMC_BUFFER_INF || (long)k < Bf)) c->rate[LBMC_MFX_R_BLOCKED] += a;
    }
    for (uint32_t q = 0; q < ph; q++) z[q] = q == 0 ? c->s[j * Lv] : 0.0;
    memcpy(z + ph, x + c->off[j], sizeof *z * K * ph);
    const lbmc_mf_pool v = {z, ph, K, c->p + j * Lv, m->lambda, c->mf.b[j], ph > 1, 0};
    lbmc_mf_jumps(m, j, &v, lbmc_mfx_on_jump, &acc); /* rates per n */
  }
}

/* ---- dense linear algebra ---- */

/* Solve the small system M y = r (n <= 4) by Gaussian elimination with partial pivoting;
 * returns -1 if singular. */
static int lbmc_mfx_small(double M[4][4], double *r, int n)
{
  for (int c = 0; c < n; c++) {
    int piv = c;
    for (int i = c + 1; i < n; i++)
      if (fabs(M[i][c]) > fabs(M[piv][c])) piv = i;
    if (M[piv][c] == 0) return -1;
    if (piv != c) {
      for (int k = 0; k < n; k++) {
        double t = M[c][k];
        M[c][k] = M[piv][k];
        M[piv][k] = t;
      }
      double t = r[c];
      r[c] = r[piv];
      r[piv] = t;
    }
    for (int i = c + 1; i < n; i++) {
      double f = M[i][c] / M[c][c];
      for (int k = c; k < n; k++) M[i][k] -= f * M[c][k];
      r[i] -= f * r[c];
    }
  }
  for (int c = n - 1; c >= 0; c--) {
    for (int k = c + 1; k < n; k++) r[c] -= M[c][k] * r[k];
    r[c] /= M[c][c];
  }
  return 0;
}

/* The real Schur form A = Z T Z^T (d x d, row-major) for the Lyapunov solves. */
typedef struct {
  size_t d;
  double *T, *Z; /* row-major */
  int *bs;       /* block size starting at i (1 or 2; 0 inside a 2-block) */
  double slow;   /* min |Re eig| */
  double fast;   /* max |eig| */
} lbmc_mfx_schur;

static int lbmc_mfx_schur_of(const double *A, size_t d, lbmc_mfx_schur *S)
{
  gsl_matrix *a = gsl_matrix_alloc(d, d), *z = gsl_matrix_alloc(d, d);
  gsl_vector_complex *ev = gsl_vector_complex_alloc(d);
  gsl_eigen_nonsymm_workspace *w = gsl_eigen_nonsymm_alloc(d);
  int rc = -1;
  S->d = d;
  S->T = malloc(sizeof *S->T * d * d);
  S->Z = malloc(sizeof *S->Z * d * d);
  S->bs = calloc(d, sizeof *S->bs);
  if (!a || !z || !ev || !w || !S->T || !S->Z || !S->bs) goto done;
  memcpy(a->data, A, sizeof *A * d * d); /* tda == d for a fresh matrix */
  gsl_eigen_nonsymm_params(1, 0, w);
  if (gsl_eigen_nonsymm_Z(a, ev, z, w) != GSL_SUCCESS) goto done;
  memcpy(S->T, a->data, sizeof *S->T * d * d);
  memcpy(S->Z, z->data, sizeof *S->Z * d * d);
  S->slow = INFINITY;
  S->fast = 0;
  for (size_t i = 0; i < d; i++) {
    gsl_complex e = gsl_vector_complex_get(ev, i);
    S->slow = fmin(S->slow, fabs(GSL_REAL(e)));
    S->fast = fmax(S->fast, hypot(GSL_REAL(e), GSL_IMAG(e)));
  }
  for (size_t i = 0; i < d;) {
    int two = i + 1 < d && S->T[(i + 1) * d + i] != 0;
    S->bs[i] = two ? 2 : 1;
    i += two ? 2 : 1;
  }
  rc = 0;
done:
  if (a) gsl_matrix_free(a);
  if (z) gsl_matrix_free(z);
  if (ev) gsl_vector_complex_free(ev);
  if (w) gsl_eigen_nonsymm_free(w);
  return rc;
}

static void lbmc_mfx_schur_free(lbmc_mfx_schur *S)
{
  free(S->T);
  free(S->Z);
  free(S->bs);
  S->T = S->Z = NULL;
  S->bs = NULL;
}

/* C = op(X) Y op(Z) helpers: out = X^T M X (tr = 1) or X M X^T (tr = 0), d x d row-major,
 * tmp d x d scratch. */
static void lbmc_mfx_congruence(const double *X, const double *M, size_t d, int tr, double *tmp,
                                double *out)
{
  /* tmp = op(X) M; out = tmp op(X)^T */
  for (size_t i = 0; i < d; i++)
    for (size_t k = 0; k < d; k++) {
      double s = 0;
      for (size_t l = 0; l < d; l++) s += (tr ? X[l * d + i] : X[i * d + l]) * M[l * d + k];
      tmp[i * d + k] = s;
    }
  for (size_t i = 0; i < d; i++)
    for (size_t k = 0; k < d; k++) {
      double s = 0;
      for (size_t l = 0; l < d; l++) s += tmp[i * d + l] * (tr ? X[l * d + k] : X[k * d + l]);
      out[i * d + k] = s;
    }
}

/* Solve A Y + Y A^T + Q = 0 for symmetric Q (d x d) through the Schur form: Y into out.
 * tmp: 2 d^2 scratch. Returns -1 if a block is singular. */
static int lbmc_mfx_lyap(const lbmc_mfx_schur *S, const double *Q, double *tmp, double *out)
{
  const size_t d = S->d;
  const double *T = S->T;
  double *C = tmp + d * d, *Y = out;
  lbmc_mfx_congruence(S->Z, Q, d, 1, tmp, C); /* C = Z^T Q Z */
  for (size_t i = 0; i < d * d; i++) C[i] = -C[i], Y[i] = 0;
  /* T Y + Y T^T = C, blocks (p, q) from the last: Y_pq needs Y_rq (r > p) and Y_ps (s > q) */
  for (size_t qe = d; qe > 0;) {
    size_t q = qe - 1;
    if (q > 0 && S->bs[q] == 0) q--;
    const int bq = S->bs[q];
    for (size_t pe = d; pe > 0;) {
      size_t p = pe - 1;
      if (p > 0 && S->bs[p] == 0) p--;
      const int bp = S->bs[p];
      double M[4][4] = {{0}}, r[4];
      for (int a = 0; a < bp; a++)
        for (int b = 0; b < bq; b++) {
          const size_t i = p + (size_t)a, j = q + (size_t)b;
          double s = C[i * d + j];
          for (size_t k = p + (size_t)bp; k < d; k++) s -= T[i * d + k] * Y[k * d + j];
          for (size_t k = q + (size_t)bq; k < d; k++) s -= Y[i * d + k] * T[j * d + k];
          r[a * bq + b] = s;
        }
      /* unknowns y[a][b] at a * bq + b: sum_c T_pp[a][c] y[c][b] + sum_c y[a][c] T_qq[b][c] */
      for (int a = 0; a < bp; a++)
        for (int b = 0; b < bq; b++) {
          for (int c2 = 0; c2 < bp; c2++) M[a * bq + b][c2 * bq + b] += T[(p + a) * d + p + c2];
          for (int c2 = 0; c2 < bq; c2++) M[a * bq + b][a * bq + c2] += T[(q + b) * d + q + c2];
        }
      if (lbmc_mfx_small(M, r, bp * bq) != 0) return -1;
      for (int a = 0; a < bp; a++)
        for (int b = 0; b < bq; b++) Y[(p + a) * d + q + b] = r[a * bq + b];
      pe = p;
    }
    qe = q;
  }
  memcpy(C, Y, sizeof *C * d * d);
  lbmc_mfx_congruence(S->Z, C, d, 0, tmp, out); /* Z Y Z^T */
  for (size_t i = 0; i < d; i++)
    for (size_t j = i + 1; j < d; j++) {
      const double v = 0.5 * (out[i * d + j] + out[j * d + i]);
      out[i * d + j] = out[j * d + i] = v;
    }
  return 0;
}

/* ---- the Hessian, sparse ---- */

typedef struct {
  uint32_t i, j, c; /* d2 f_c / dx_i dx_j, i <= j */
  double v;
} lbmc_mfx_h;

typedef struct {
  lbmc_mfx_h *e;
  size_t n, cap;
} lbmc_mfx_hess;

static int lbmc_mfx_hess_add(lbmc_mfx_hess *H, uint32_t i, uint32_t j, uint32_t c, double v)
{
  if (H->n == H->cap) {
    size_t cap = H->cap ? 2 * H->cap : 1024;
    lbmc_mfx_h *e = realloc(H->e, sizeof *e * cap);
    if (!e) return -1;
    H->e = e, H->cap = cap;
  }
  H->e[H->n++] = (lbmc_mfx_h){i, j, c, v};
  return 0;
}

/* out = H:M = sum_ij H_ij M_ij for symmetric M (d x d). */
static void lbmc_mfx_hess_apply(const lbmc_mfx_hess *H, const double *M, size_t d, double *out)
{
  memset(out, 0, sizeof *out * d);
  for (size_t k = 0; k < H->n; k++) {
    const lbmc_mfx_h *e = &H->e[k];
    out[e->c] += (e->i == e->j ? 1.0 : 2.0) * e->v * M[(size_t)e->i * d + e->j];
  }
}

/* The Hessian of the drift at x (one-sided, Richardson at h and 2h) into H (sparse), and
 * those of the arrival rates (dense d x d each, LBMC_MFX_R_*) into Hphi. */
static int lbmc_mfx_hessian(lbmc_mfx_ctx *c, const double *x, lbmc_mfx_hess *H, double *Hphi)
{
  const size_t d = c->d, P = c->nr;
  const double h = LBMC_MFX_HHESS;
  double *y = malloc(sizeof *y * d), *f0 = malloc(sizeof *f0 * d), *fa = malloc(sizeof *fa * d),
         *fb = malloc(sizeof *fb * d);
  double *F1 = malloc(sizeof *F1 * d * d), *F2 = malloc(sizeof *F2 * d * d),
         *F4 = malloc(sizeof *F4 * d * d);
  double *Q1 = malloc(sizeof *Q1 * d * P), *Q2 = malloc(sizeof *Q2 * d * P),
         *Q4 = malloc(sizeof *Q4 * d * P), q0[LBMC_MFX_RMAX], qa[LBMC_MFX_RMAX], qb[LBMC_MFX_RMAX];
  int rc = -1;
  if (!y || !f0 || !fa || !fb || !F1 || !F2 || !F4 || !Q1 || !Q2 || !Q4) goto done;
  memcpy(y, x, sizeof *y * d);
  lbmc_mfx_eval(c, y, f0, NULL);
  lbmc_mfx_phi(c, q0);
  for (size_t i = 0; i < d; i++) { /* f(x + h e_i), f(x + 2h e_i), f(x + 4h e_i) */
    y[i] = x[i] + h;
    lbmc_mfx_eval(c, y, F1 + i * d, NULL);
    lbmc_mfx_phi(c, Q1 + i * P);
    y[i] = x[i] + 2 * h;
    lbmc_mfx_eval(c, y, F2 + i * d, NULL);
    lbmc_mfx_phi(c, Q2 + i * P);
    y[i] = x[i] + 4 * h;
    lbmc_mfx_eval(c, y, F4 + i * d, NULL);
    lbmc_mfx_phi(c, Q4 + i * P);
    y[i] = x[i];
  }
  for (size_t i = 0; i < d; i++)
    for (size_t j = i; j < d; j++) {
      const double *a1, *a2, *b1, *b2, *p1, *p2, *r1, *r2;
      double da, db;
      if (i == j) { /* (f(x+2h) - 2 f(x+h) + f) / h^2 at h and 2h */
        a1 = F2 + i * d, b1 = F1 + i * d, a2 = F4 + i * d, b2 = F2 + i * d;
        p1 = Q2 + i * P, r1 = Q1 + i * P, p2 = Q4 + i * P, r2 = Q2 + i * P;
        for (size_t k = 0; k < d; k++) {
          const double v =
              2 * (a1[k] - 2 * b1[k] + f0[k]) / (h * h) - (a2[k] - 2 * b2[k] + f0[k]) / (4 * h * h);
          if (fabs(v) > LBMC_MFX_HTOL &&
              lbmc_mfx_hess_add(H, (uint32_t)i, (uint32_t)j, (uint32_t)k, v))
            goto done;
        }
        for (size_t k = 0; k < P; k++)
          Hphi[k * d * d + i * d + i] =
              2 * (p1[k] - 2 * r1[k] + q0[k]) / (h * h) - (p2[k] - 2 * r2[k] + q0[k]) / (4 * h * h);
        continue;
      }
      y[i] = x[i] + h, y[j] = x[j] + h;
      lbmc_mfx_eval(c, y, fa, NULL);
      lbmc_mfx_phi(c, qa);
      y[i] = x[i] + 2 * h, y[j] = x[j] + 2 * h;
      lbmc_mfx_eval(c, y, fb, NULL);
      lbmc_mfx_phi(c, qb);
      y[i] = x[i], y[j] = x[j];
      for (size_t k = 0; k < d; k++) {
        const double a = (fa[k] - F1[i * d + k] - F1[j * d + k] + f0[k]) / (h * h);
        const double b = (fb[k] - F2[i * d + k] - F2[j * d + k] + f0[k]) / (4 * h * h);
        const double v = 2 * a - b;
        if (fabs(v) > LBMC_MFX_HTOL &&
            lbmc_mfx_hess_add(H, (uint32_t)i, (uint32_t)j, (uint32_t)k, v))
          goto done;
      }
      for (size_t k = 0; k < P; k++) {
        da = (qa[k] - Q1[i * P + k] - Q1[j * P + k] + q0[k]) / (h * h);
        db = (qb[k] - Q2[i * P + k] - Q2[j * P + k] + q0[k]) / (4 * h * h);
        Hphi[k * d * d + i * d + j] = Hphi[k * d * d + j * d + i] = 2 * da - db;
      }
    }
  rc = 0;
done:
  free(y);
  free(f0);
  free(fa);
  free(fb);
  free(F1);
  free(F2);
  free(F4);
  free(Q1);
  free(Q2);
  free(Q4);
  return rc;
}

/* sum_ab M_ab N_ab (d x d). */
static double lbmc_mfx_frob(const double *M, const double *N, size_t d)
{
  double s = 0;
  for (size_t i = 0; i < d * d; i++) s += M[i] * N[i];
  return s;
}

/* ---- the expansion ---- */

/* The state x* from the mean-field point pt and the context's layout; 0 if it applies. */
static int lbmc_mfx_layout(lbmc_mfx_ctx *c, const lbmc_occ_mf_point *pt, lbmc_mf_expansion *out)
{
  const lbmc_model *m = c->m;
  uint32_t K = 1;
  for (uint32_t j = 0; j < c->J; j++) {
    int q = lbmc_service_ph(&m->service[j], NULL, NULL);
    if (q < 1) {
      snprintf(out->note, sizeof out->note, "pool %u's service law is not phase-type", j + 1);
      return -1;
    }
    if (pt->ph == 1 && q > 1) q = 1; /* exponential engine: not reached (ph follows q) */
    if (q > 1 && m->nrates[j] != 1) {
      snprintf(out->note, sizeof out->note, "phase-type service with several slots per server");
      return -1;
    }
    c->ph[j] = pt->ph > 1 ? (uint32_t)q : 1;
    for (uint32_t k = 1; k < pt->levels; k++)
      if (pt->s[j * pt->levels + k] > LBMC_MFX_FLOOR && k > K) K = k;
  }
  c->K = K;
  c->Lv = K + 2;
  c->d = 0;
  for (uint32_t j = 0; j < c->J; j++) c->off[j] = c->d, c->d += K * c->ph[j];
  if (c->d > LBMC_MFX_DIMMAX) {
    snprintf(out->note, sizeof out->note,
             "the mean-field state has %u classes (levels x phases), more than %d", c->d,
             LBMC_MFX_DIMMAX);
    return -1;
  }
  return 0;
}

/* x* (d) from pt. */
static void lbmc_mfx_start(const lbmc_mfx_ctx *c, const lbmc_occ_mf_point *pt, double *x)
{
  for (uint32_t j = 0; j < c->J; j++)
    for (uint32_t k = 1; k <= c->K; k++)
      for (uint32_t q = 0; q < c->ph[j]; q++)
        x[c->off[j] + (k - 1) * c->ph[j] + q] =
            pt->ph > 1 ? pt->x[((size_t)j * pt->levels + k) * pt->ph + q]
                       : pt->s[j * pt->levels + k];
}

static double lbmc_mfx_dot(const double *a, const double *b, size_t d)
{
  double s = 0;
  for (size_t i = 0; i < d; i++) s += a[i] * b[i];
  return s;
}

/* y = M x (d x d row-major). */
static void lbmc_mfx_mv(const double *M, const double *x, size_t d, double *y)
{
  for (size_t i = 0; i < d; i++) y[i] = lbmc_mfx_dot(M + i * d, x, d);
}

/* The functionals (mf_expansion.h) at x*, linearised: functional k's value into out->f[k],
 * its gradient into grads (nf x d) and the weights of the rates' Hessians in its 1/n term
 * into coef (nf x nr). rate0: the rates at x*, rgrad their gradients (nr x d). */
static void lbmc_mfx_functionals(const lbmc_mfx_ctx *c, const double *x, const double *rate0,
                                 const double *rgrad, double *grads, double *coef,
                                 lbmc_mf_expansion *out)
{
  const size_t d = c->d, nr = c->nr;
  const lbmc_model *m = c->m;
  /* the ratios u / v of rates: functional, numerator, denominator (-1: none) */
  static const int ratios[][3] = {
      {LBMC_MF_SOJOURN, LBMC_MFX_R_SOJ, LBMC_MFX_R_ADM},
      {LBMC_MF_WAIT, LBMC_MFX_R_WAITED, LBMC_MFX_R_ARR},
      {LBMC_MF_MEAN_WAIT, LBMC_MFX_R_WT, LBMC_MFX_R_ADM},
      {LBMC_MF_BLOCK, LBMC_MFX_R_BLOCKED, LBMC_MFX_R_ARR},
      {LBMC_MF_WAIT_OR_BLOCK, -1, LBMC_MFX_R_ARR}, /* numerator: waited + blocked */
      {LBMC_MF_THROUGHPUT, LBMC_MFX_R_ADM, -1}};
  memset(grads, 0, sizeof *grads * out->nf * d);
  memset(coef, 0, sizeof *coef * out->nf * nr);
  for (uint32_t j = 0; j < c->J; j++) { /* the linear ones: customers, queue, workload, tails */
    const double *res = c->ph[j] > 1 ? lbmc_service_ph_residual(&m->service[j]) : NULL;
    const size_t base = LBMC_MF_POOLS + (size_t)j * (LBMC_MFP_TAIL + c->K);
    for (uint32_t k = 1; k <= c->K; k++)
      for (uint32_t q = 0; q < c->ph[j]; q++) {
        const size_t i = c->off[j] + (k - 1) * c->ph[j] + q;
        grads[LBMC_MF_CUSTOMERS * d + i] = c->mf.b[j] * k;
        grads[(base + LBMC_MFP_QUEUE) * d + i] = k;
        grads[(base + LBMC_MFP_WORKLOAD) * d + i] = res ? (double)k - 1 + res[q] : (double)k;
        for (uint32_t l = 1; l <= k; l++) grads[(base + LBMC_MFP_TAIL + l - 1) * d + i] = 1;
      }
  }
  for (size_t k = 0; k < out->nf; k++) out->f[k].value = lbmc_mfx_dot(grads + k * d, x, d);
  for (uint32_t r = 0; r < sizeof ratios / sizeof *ratios + c->J; r++) {
    const int k = r < 6 ? ratios[r][0]
                        : (int)(LBMC_MF_POOLS + (r - 6) * (LBMC_MFP_TAIL + c->K) + LBMC_MFP_SHARE);
    const int u = r < 6 ? ratios[r][1] : (int)(LBMC_MFX_R_POOL + r - 6);
    const int v = r < 6 ? ratios[r][2] : LBMC_MFX_R_ADM;
    double *gk = grads + (size_t)k * d, *ck = coef + (size_t)k * nr;
    const double u0 = u >= 0 ? rate0[u] : rate0[LBMC_MFX_R_WAITED] + rate0[LBMC_MFX_R_BLOCKED];
    const double v0 = v >= 0 ? rate0[v] : 1.0, phi = u0 / v0;
    if (!(v0 > 0)) continue; /* no arrivals: the functional is 0 */
    out->f[k].value = phi;
    /* delta(u / v) = (delta u - phi delta v) / v0 */
    if (u >= 0)
      ck[u] += 1 / v0;
    else
      ck[LBMC_MFX_R_WAITED] += 1 / v0, ck[LBMC_MFX_R_BLOCKED] += 1 / v0;
    if (v >= 0) ck[v] -= phi / v0;
    for (size_t i = 0; i < d; i++)
      for (size_t l = 0; l < nr; l++) gk[i] += ck[l] * rgrad[l * d + i];
  }
}

/* The paths (mf_expansion.h): e_{i+1} = E e_i + dt/2 (E q_i + q_{i+1}), G_{i+1} = E G_i E^T,
 * q = -1/2 H:G; functional k's value grad_k . e - 1/2 sum_r coef_kr Hr : G over the rates'
 * Hessians Hr (Hphi: nr x d x d). grads: nf x d; coef: nf x nr. */
static int lbmc_mfx_path(const double *A, const lbmc_mfx_hess *H, const double *W, const double *D0,
                         const double *grads, const double *coef, const double *Hphi, size_t nr,
                         const lbmc_mfx_schur *S, lbmc_mf_expansion *out)
{
  const size_t d = S->d, nf = out->nf;
  const double horizon = LBMC_MFX_TAUS / S->slow;
  double steps = ceil(horizon * S->fast * 2);
  const double cap = LBMC_MFX_FLOPS / (4.0 * (double)d * (double)d * (double)d);
  gsl_matrix *a = gsl_matrix_alloc(d, d), *E = gsl_matrix_alloc(d, d);
  double *G = malloc(sizeof *G * d * d), *tmp = malloc(sizeof *tmp * d * d);
  double *e = malloc(sizeof *e * d), *q = malloc(sizeof *q * d), *u = malloc(sizeof *u * d),
         *v = malloc(sizeof *v * d), hg[LBMC_MFX_RMAX];
  int rc = -1, bad = 0;
  steps = fmax(200, fmin(steps, fmin(cap, 20000)));
  out->steps = (size_t)steps;
  out->dt = horizon / steps;
  for (size_t k = 0; k < nf; k++)
    bad |= !(out->f[k].path = malloc(sizeof *out->f[k].path * (out->steps + 1)));
  out->ge = out->f[LBMC_MF_CUSTOMERS].path;
  if (bad || !a || !E || !G || !tmp || !e || !q || !u || !v) goto done;
  for (size_t i = 0; i < d * d; i++) a->data[i] = A[i] * out->dt;
  if (gsl_linalg_exponential_ss(a, E, GSL_PREC_DOUBLE) != GSL_SUCCESS) goto done;
  memcpy(G, W, sizeof *G * d * d);
  for (size_t i = 0; i < d; i++) e[i] = -D0[i];
  lbmc_mfx_hess_apply(H, G, d, q);
  for (size_t i = 0; i < d; i++) q[i] *= -0.5;
  for (size_t s = 0; s <= out->steps; s++) {
    if (s > 0) {
      lbmc_mfx_mv(E->data, e, d, u); /* E e */
      lbmc_mfx_mv(E->data, q, d, v); /* E q_i */
      lbmc_mfx_congruence(E->data, G, d, 0, tmp, G);
      lbmc_mfx_hess_apply(H, G, d, q);
      for (size_t i = 0; i < d; i++) {
        q[i] *= -0.5;
        e[i] = u[i] + 0.5 * out->dt * (v[i] + q[i]);
      }
    }
    for (size_t r = 0; r < nr; r++) hg[r] = lbmc_mfx_frob(Hphi + r * d * d, G, d);
    for (size_t k = 0; k < nf; k++) {
      double h = 0;
      for (size_t r = 0; r < nr; r++) h += coef[k * nr + r] * hg[r];
      out->f[k].path[s] = lbmc_mfx_dot(grads + k * d, e, d) - 0.5 * h;
    }
  }
  rc = 0;
done:
  if (a) gsl_matrix_free(a);
  if (E) gsl_matrix_free(E);
  free(G);
  free(tmp);
  free(e);
  free(q);
  free(u);
  free(v);
  return rc;
}

/* The skewness of one server's queue length at the point (pools mixed by b_j). */
static double lbmc_mfx_skew(const lbmc_occ_mf_point *pt, const lbmc_model *m)
{
  double m1 = 0, m2 = 0, m3 = 0;
  for (uint32_t j = 0; j < pt->J; j++)
    for (uint32_t k = 1; k < pt->levels; k++) {
      const double w = (double)m->N[j] / (double)m->n * pt->s[j * pt->levels + k];
      m1 += w * k, m2 += w * k * k, m3 += w * (double)k * k * k;
    }
  const double var = m2 - m1 * m1;
  return var > 0 ? (m3 - 3 * m1 * m2 + 2 * m1 * m1 * m1) / pow(var, 1.5) : 0;
}

/* Everything from x*, with the point's layout in c. */
static lbmc_err lbmc_mfx_solve(lbmc_mfx_ctx *c, const double *x, lbmc_mf_expansion *out)
{
  const size_t d = c->d;
  double *A = calloc(d * d, sizeof *A), *Bm = calloc(d * d, sizeof *Bm);
  double *W = malloc(sizeof *W * d * d), *Z = malloc(sizeof *Z * d * d);
  double *tmp = malloc(sizeof *tmp * 2 * d * d), *y = malloc(sizeof *y * d);
  double *f0 = malloc(sizeof *f0 * d), *f1 = malloc(sizeof *f1 * d), *f2 = malloc(sizeof *f2 * d);
  double *D0 = malloc(sizeof *D0 * d), *hz = malloc(sizeof *hz * d), *g = malloc(sizeof *g * d);
  const size_t nr = c->nr, nf = out->nf;
  double *grads = malloc(sizeof *grads * nf * d), *coef = malloc(sizeof *coef * nf * nr);
  double *rgrad = malloc(sizeof *rgrad * nr * d);
  double *Hphi = calloc(nr * d * d, sizeof *Hphi), *I0v = malloc(sizeof *I0v * d);
  double q0[LBMC_MFX_RMAX], q1[LBMC_MFX_RMAX], q2[LBMC_MFX_RMAX], hw[LBMC_MFX_RMAX],
      hzr[LBMC_MFX_RMAX];
  gsl_matrix *lu = gsl_matrix_alloc(d, d);
  gsl_permutation *perm = gsl_permutation_alloc(d);
  lbmc_mfx_hess H = {NULL, 0, 0};
  lbmc_mfx_schur S = {0};
  lbmc_err err = LBMC_SUCCESS;
  int sig;
  if (!A || !Bm || !W || !Z || !tmp || !y || !f0 || !f1 || !f2 || !D0 || !hz || !g || !lu ||
      !perm || !grads || !coef || !rgrad || !Hphi || !I0v) {
    err = LBMC_ERROR(LBMC_ERR_MEMORY, "mean-field expansion: out of memory (%zu classes)", d);
    goto done;
  }
  memcpy(y, x, sizeof *y * d);
  lbmc_mfx_eval(c, y, f0, Bm);
  lbmc_mfx_phi(c, q0);
  for (size_t i = 0; i < d; i++) { /* A and the rates' gradients by columns */
    const double h = LBMC_MFX_HJAC;
    y[i] = x[i] + h;
    lbmc_mfx_eval(c, y, f1, NULL);
    lbmc_mfx_phi(c, q1);
    y[i] = x[i] + 2 * h;
    lbmc_mfx_eval(c, y, f2, NULL);
    lbmc_mfx_phi(c, q2);
    y[i] = x[i];
    for (size_t k = 0; k < d; k++) A[k * d + i] = (-3 * f0[k] + 4 * f1[k] - f2[k]) / (2 * h);
    for (size_t k = 0; k < nr; k++) rgrad[k * d + i] = (-3 * q0[k] + 4 * q1[k] - q2[k]) / (2 * h);
  }
  lbmc_mfx_functionals(c, x, q0, rgrad, grads, coef, out);
  memcpy(g, grads + LBMC_MF_CUSTOMERS * d, sizeof *g * d);
  if (lbmc_mfx_schur_of(A, d, &S) != 0 || !(S.slow > 0)) {
    snprintf(out->note, sizeof out->note, "the drift's Jacobian at the fixed point is singular");
    goto done;
  }
  if (lbmc_mfx_lyap(&S, Bm, tmp, W) != 0) {
    snprintf(out->note, sizeof out->note, "the Lyapunov equation of the fluctuations is singular");
    goto done;
  }
  { /* residual of A W + W A^T + B */
    double r = 0, bmax = 0;
    for (size_t i = 0; i < d; i++)
      for (size_t k = 0; k < d; k++) {
        double s = Bm[i * d + k];
        for (size_t l = 0; l < d; l++)
          s += A[i * d + l] * W[l * d + k] + W[i * d + l] * A[k * d + l];
        r = fmax(r, fabs(s));
        bmax = fmax(bmax, fabs(Bm[i * d + k]));
      }
    out->lyap_resid = bmax > 0 ? r / bmax : r;
  }
  if (lbmc_mfx_hessian(c, x, &H, Hphi) != 0) {
    err = LBMC_ERROR(LBMC_ERR_MEMORY, "mean-field expansion: out of memory (Hessian)");
    goto done;
  }
  memcpy(lu->data, A, sizeof *A * d * d);
  gsl_linalg_LU_decomp(lu, perm, &sig);
  {
    gsl_vector_view b = gsl_vector_view_array(hz, d), xv = gsl_vector_view_array(D0, d);
    double *wg = f1, *aw = f2;
    gsl_vector_view wgv = gsl_vector_view_array(wg, d), awv = gsl_vector_view_array(aw, d);
    lbmc_mfx_hess_apply(&H, W, d, hz); /* D0 = -A^-1 (1/2 H:W) */
    for (size_t i = 0; i < d; i++) hz[i] *= -0.5;
    gsl_linalg_LU_solve(lu, perm, &b.vector, &xv.vector);
    out->D0 = lbmc_mfx_dot(g, D0, d);
    lbmc_mfx_mv(W, g, d, wg); /* tau = -g A^-1 W g / g W g */
    gsl_linalg_LU_solve(lu, perm, &wgv.vector, &awv.vector);
    out->W = lbmc_mfx_dot(g, wg, d);
    out->tau = -lbmc_mfx_dot(g, aw, d) / out->W;
    if (lbmc_mfx_lyap(&S, W, tmp, Z) != 0) { /* I0 = A^-1 (D0 + 1/2 H:Z) */
      snprintf(out->note, sizeof out->note, "the Lyapunov equation of the start is singular");
      goto done;
    }
    lbmc_mfx_hess_apply(&H, Z, d, hz);
    for (size_t i = 0; i < d; i++) hz[i] = D0[i] + 0.5 * hz[i];
    gsl_linalg_LU_solve(lu, perm, &b.vector, &awv.vector);
    memcpy(I0v, aw, sizeof *aw * d);
    out->I0 = lbmc_mfx_dot(g, aw, d);
    for (size_t r = 0; r < nr; r++) { /* the rates' Hessians against W and Z */
      hw[r] = lbmc_mfx_frob(Hphi + r * d * d, W, d);
      hzr[r] = lbmc_mfx_frob(Hphi + r * d * d, Z, d);
    }
    for (size_t k = 0; k < nf; k++) { /* D, I0 and the noise ratio */
      const double *gr = grads + k * d, *ck = coef + k * nr;
      lbmc_mf_functional *F = &out->f[k];
      double sw = 0, sz = 0;
      for (size_t r = 0; r < nr; r++) sw += ck[r] * hw[r], sz += ck[r] * hzr[r];
      F->D = lbmc_mfx_dot(gr, D0, d) + 0.5 * sw;
      F->I0 = lbmc_mfx_dot(gr, I0v, d) - 0.5 * sz;
      lbmc_mfx_mv(W, gr, d, wg);
      gsl_linalg_LU_solve(lu, perm, &wgv.vector, &awv.vector);
      F->ratio = -lbmc_mfx_dot(gr, aw, d); /* v' (-A^-1) W v */
    }
    for (size_t k = nf; k-- > 0;)
      out->f[k].ratio = sqrt(fabs(out->f[k].ratio / out->f[LBMC_MF_CUSTOMERS].ratio));
  }
  out->slowest = 1 / S.slow;
  if (lbmc_mfx_path(A, &H, W, D0, grads, coef, Hphi, nr, &S, out) != 0) {
    err = LBMC_ERROR(LBMC_ERR_MEMORY, "mean-field expansion: out of memory (path)");
    goto done;
  }
  out->ok = 1;
done:
  lbmc_mfx_schur_free(&S);
  free(H.e);
  free(A);
  free(Bm);
  free(W);
  free(Z);
  free(tmp);
  free(y);
  free(f0);
  free(f1);
  free(f2);
  free(D0);
  free(hz);
  free(g);
  free(grads);
  free(coef);
  free(rgrad);
  free(Hphi);
  free(I0v);
  if (lu) gsl_matrix_free(lu);
  if (perm) gsl_permutation_free(perm);
  return err;
}

lbmc_err lbmc_mf_expansion_compute(const lbmc_model *m, lbmc_mf_expansion *out)
{
  const lbmc_occupancy_ops *ops = m->policy ? m->policy->occupancy : NULL;
  lbmc_occ_mf_point pt;
  lbmc_mfx_ctx c;
  double *x = NULL;
  lbmc_err err = LBMC_SUCCESS;
  gsl_error_handler_t *old;
  memset(out, 0, sizeof *out);
  memset(&c, 0, sizeof c);
  if (!ops || !ops->law) {
    snprintf(out->note, sizeof out->note, "the policy has no occupancy form");
    return LBMC_SUCCESS;
  }
  if (ops->applies && !ops->applies(m, out->note, sizeof out->note)) return LBMC_SUCCESS;
  LBMC_CALL(lbmc_occ_meanfield_solve(m, ops, &pt));
  if (!pt.settled) {
    snprintf(out->note, sizeof out->note, "no mean-field point: %.200s", pt.note);
    lbmc_occ_meanfield_free(&pt);
    return LBMC_SUCCESS;
  }
  c.m = m;
  c.ops = ops;
  c.J = (uint32_t)m->J;
  c.mf.m = m;
  c.mf.J = c.J;
  c.mf.n = (double)m->n;
  for (int j = 0; j < m->J; j++) c.mf.b[j] = (double)m->N[j] / (double)m->n;
  out->customers = pt.customers;
  out->skew = lbmc_mfx_skew(&pt, m);
  if (lbmc_mfx_layout(&c, &pt, out) != 0) {
    lbmc_occ_meanfield_free(&pt);
    return LBMC_SUCCESS;
  }
  out->d = c.d;
  out->K = c.K;
  out->J = c.J;
  out->nf = LBMC_MF_POOLS + (size_t)c.J * (LBMC_MFP_TAIL + c.K);
  c.nr = LBMC_MFX_R_POOL + c.J;
  c.mf.levels = c.Lv;
  out->f = calloc(out->nf, sizeof *out->f);
  x = malloc(sizeof *x * c.d);
  c.s = malloc(sizeof *c.s * c.J * c.Lv);
  c.p = malloc(sizeof *c.p * c.J * c.Lv);
  c.work = c.mf.work = malloc(sizeof *c.work * 2 * (c.Lv + 1));
  c.z = malloc(sizeof *c.z * (c.K + 1) * LBMC_PH_MAX_PHASES);
  if (!x || !c.s || !c.p || !c.work || !out->f || !c.z)
    err = LBMC_ERROR(LBMC_ERR_MEMORY, "mean-field expansion: out of memory");
  else {
    lbmc_mfx_start(&c, &pt, x);
    old = gsl_set_error_handler_off();
    err = lbmc_mfx_solve(&c, x, out);
    gsl_set_error_handler(old);
  }
  free(x);
  free(c.s);
  free(c.p);
  free(c.work);
  free(c.z);
  lbmc_occ_meanfield_free(&pt);
  if (err != LBMC_SUCCESS) lbmc_mf_expansion_free(out);
  return err;
}

void lbmc_mf_expansion_free(lbmc_mf_expansion *x)
{
  for (size_t k = 0; x->f && k < x->nf; k++) free(x->f[k].path);
  free(x->f);
  x->f = NULL;
  x->nf = 0;
  x->ge = NULL;
  x->ok = 0;
}

double lbmc_mf_expansion_bias(const lbmc_mf_expansion *x, int which, double n, double w, double T,
                              double *area)
{
  double sup = 0, a = 0;
  const double *b;
  size_t i0;
  if (area) *area = NAN;
  if (!x->ok || which < 0 || (size_t)which >= x->nf || !(T > 0) || !(n > 0)) return NAN;
  b = x->f[which].path;
  i0 = w > 0 ? (size_t)fmin((double)x->steps, floor(w / x->dt)) : 0;
  for (size_t i = i0; i <= x->steps; i++) {
    sup = fmax(sup, fabs(b[i]));
    if (i > i0) a += 0.5 * x->dt * (fabs(b[i - 1]) + fabs(b[i]));
  }
  if (area) *area = a;
  return fmin(sup, a / T) / n;
}

int lbmc_mf_expansion_entry(const lbmc_mf_expansion *x, int metric, size_t entry, int J, int K)
{
  const size_t per = LBMC_MFP_TAIL + (size_t)x->K;
  const size_t j = metric == LBMC_M_TAIL ? entry / (size_t)K : entry;
  if (!x->ok || J != (int)x->J || K < 1) return LBMC_MF_NONE;
  switch (metric) {
  case LBMC_M_P_WAIT: return LBMC_MF_WAIT;
  case LBMC_M_P_BLOCK: return LBMC_MF_BLOCK;
  case LBMC_M_P_WAIT_OR_BLOCK: return LBMC_MF_WAIT_OR_BLOCK;
  case LBMC_M_MEAN_SOJOURN: return LBMC_MF_SOJOURN;
  case LBMC_M_MEAN_WAIT: return LBMC_MF_MEAN_WAIT;
  case LBMC_M_THROUGHPUT: return LBMC_MF_THROUGHPUT;
  case LBMC_M_MEAN_QUEUE: return (int)(LBMC_MF_POOLS + j * per + LBMC_MFP_QUEUE);
  case LBMC_M_MEAN_WORKLOAD: return (int)(LBMC_MF_POOLS + j * per + LBMC_MFP_WORKLOAD);
  case LBMC_M_ADMITTED_SHARE: return (int)(LBMC_MF_POOLS + j * per + LBMC_MFP_SHARE);
  case LBMC_M_UTILIZATION: return (int)(LBMC_MF_POOLS + j * per + LBMC_MFP_TAIL);
  case LBMC_M_TAIL: {
    const size_t k = entry % (size_t)K + 1;
    return k > x->K ? LBMC_MF_NIL : (int)(LBMC_MF_POOLS + j * per + LBMC_MFP_TAIL + k - 1);
  }
  default: return LBMC_MF_NONE; /* messages, withdrawals, quantiles, pair statistics */
  }
}
