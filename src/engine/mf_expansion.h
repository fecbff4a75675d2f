/* Private: the refined mean field (order 1/n) around the mean-field start of the occupancy
 * engines, and the start bias of a time average from that start (mf_expansion.c).
 *
 * State: the fractions x_j(k, p) of pool j's servers at level k = 1..K whose customer in
 * service is in phase p (p = 0 only with exponential service), the level 0 implied
 * (1 - sum), K the last level where some pool holds more than 1e-13 at the fixed point x*
 * of the drift f (the drift of lbmc_occ_meanfield_solve, occ_meanfield.h). With the model
 * a density-dependent chain (jumps l / N_j at rates n r_l(x)):
 *   A = Df(x*)              the drift's Jacobian,
 *   B = sum_l r_l(x*) l l^T  the jumps' covariance per n,
 *   W: A W + W A^T + B = 0   Cov(X) = W / n + O(1/n^2) (linear noise),
 *   D0 = -A^-1 (1/2 H:W)     E[X] = x* + D0 / n + O(1/n^2), H:W = sum_ij d2f/dx_i dx_j W_ij
 * (N. Gast, B. Van Houdt, "A refined mean field approximation", Proc. ACM POMACS 1(2),
 * 2017, Theorem 3.1; the 1/n term of a drift that depends on n, jsq(d) with distinct
 * sampling, is in x* itself: the start and the drift use the model's n.)
 *
 * From the deterministic start x* (the replicas' start: its rounding is unbiased and off
 * by less than one server per class), E[X(t)] = x* + m(t)/n + O(1/n^2) with
 *   m' = A m + 1/2 H:V, V' = A V + V A^T + B, m(0) = V(0) = 0
 * (N. Gast, L. Bortolussi, M. Tribastone, "Size expansions of mean field approximation:
 * transient and steady-state analysis", Performance Evaluation 129, 2019, section 3; the
 * mean-field path itself stays at x*, so A and H are constant). So V = W - G with G(t) =
 * e^{At} W e^{A^T t}, and e = m - D0 solves e' = A e - 1/2 H:G(t), e(0) = -D0. Its integral
 * has the closed form int_0^inf e = A^-1 (D0 + 1/2 H:Z), A Z + Z A^T + W = 0 (G's integral).
 * The start bias of a time average over [w, w + T] of a linear functional g of X is
 * (1/(n T)) int_w^{w+T} g.e(t) dt; lbmc_mf_expansion_bias bounds it by
 * (1/n) min(sup_{t >= w} |g.e(t)|, int_w^inf |g.e(t)| dt / T) from g.e(t) computed on a time
 * grid (exact propagation e^{A dt} of e and G, the trapezoid for the forcing); for a
 * non-linear functional phi the path is grad phi . e(t) - 1/2 D2 phi : G(t).
 */
#ifndef LBMC_MF_EXPANSION_H
#define LBMC_MF_EXPANSION_H

#include <stddef.h>
#include <stdint.h>

#include "lbmc/error.h"
#include "lbmc/types.h"

/** The functionals of the state whose start bias is bounded, one per metric entry the
 *  engines record as a function of the state (lbmc_mf_expansion_entry maps the entries):
 *   - linear in x (their Hessian is 0): the customers per server g.x = sum_j b_j sum_{k,p} k
 *     x_j(k, p); pool j's mean_queue sum_{k,p} k x_j(k, p), its tail[j][k] (and utilization =
 *     tail[j][1]) sum_{k' >= k, p} x_j(k', p), its mean_workload in units of requirement
 *     sum_{k,p} (k - 1 + r_p) x_j(k, p) (r_p the mean residual requirement from phase p; 1
 *     with exponential service);
 *   - ratios of the expected rates of the arrival jumps (the estimators are ratios of sums
 *     over time: E[sum] / E[sum], each sum's rate a function of x): mean_sojourn and
 *     mean_wait (sum_c r_c h_c / sum_c r_c over the admissions c, h_c the expected sojourn
 *     (k - L_j + 1)^+ / mu_j(L_j) + 1 / mu_j(1), or (k - 1 + r_p + 1) / mu_j with phase-type
 *     service, and the wait the same less the service), p_wait, p_block, p_wait_or_block (the
 *     arrivals that wait, are blocked, or either, over all arrivals), admitted_share[j] (the
 *     admissions to pool j over all), and throughput (the admission rate itself).
 *  For a ratio u/v of expected rates the 1/n term is (delta u - phi delta v) / v(x*) with
 *  phi = u(x*)/v(x*) and delta u = grad u . m + 1/2 D2 u : V (Gast and Van Houdt 2017,
 *  Theorem 3.1, for each rate; the ratio linearised at order 1/n); the path from the start
 *  the same with e and G (Gast, Bortolussi and Tribastone 2019, section 3). */
enum {
  LBMC_MF_CUSTOMERS,     /* customers per server (the pooled mean_queue) */
  LBMC_MF_SOJOURN,       /* mean_sojourn */
  LBMC_MF_WAIT,          /* p_wait */
  LBMC_MF_MEAN_WAIT,     /* mean_wait */
  LBMC_MF_BLOCK,         /* p_block */
  LBMC_MF_WAIT_OR_BLOCK, /* p_wait_or_block */
  LBMC_MF_THROUGHPUT,    /* throughput */
  LBMC_MF_POOLS          /* pool j's: LBMC_MF_POOLS + j (3 + K) + LBMC_MFP_* (tail k: + k - 1) */
};
enum { LBMC_MFP_QUEUE, LBMC_MFP_WORKLOAD, LBMC_MFP_SHARE, LBMC_MFP_TAIL };
/** lbmc_mf_expansion_entry: the entry has no functional of the state (quantiles, pair
 *  statistics, messages) */
#define LBMC_MF_NONE (-1)
/** lbmc_mf_expansion_entry: identically 0 at order 1/n (a tail beyond the levels kept: every
 *  pool holds less than 1e-13 there at x*) */
#define LBMC_MF_NIL (-2)

typedef struct {
  double value; /* phi(x*) */
  double D;     /* E[phi(X)] = phi(x*) + D / n + O(1/n^2) (stationary) */
  double ratio; /* the long-run standard deviation of phi's time average over that of the
                   customers per server (linear noise: v' A^-1 W v with v = grad phi, over
                   the same for g; square root) */
  double I0;    /* int_0^inf of the bias path, closed form */
  double *path; /* steps + 1 values: n x the bias of E[phi(X(t_i))] from the start (owned) */
} lbmc_mf_functional;

/** The expansion for the customers per server g.x = sum_j b_j sum_{k,p} k x_j(k, p). */
typedef struct lbmc_mf_expansion_ {
  int ok;            /* 1: computed; 0: not applicable, note says why */
  char note[256];    /* why not, in words */
  uint32_t d;        /* dimension of the state (pools x levels x phases) */
  uint32_t K;        /* levels kept */
  double customers;  /* g.x*: customers per server at the fixed point */
  double D0;         /* g.D0: E[customers per server] = g.x* + D0 / n + O(1/n^2) */
  double W;          /* g' W g: n Var(customers per server) */
  double tau;        /* -g' A^-1 W g / g' W g: integrated autocorrelation time of the
                        customers in the system (Ornstein-Uhlenbeck limit) */
  double slowest;    /* the slowest relaxation time of the drift, 1 / min |Re eig(A)| */
  double I0;         /* g . int_0^inf e(t) dt, closed form (in customers per server x n,
                        times time units) */
  double skew;       /* skewness of one server's queue length at x* (the servers mixed by b_j) */
  double lyap_resid; /* max |A W + W A^T + B| relative to max |B| */
  double dt;         /* the grid of the path: t_i = i dt, i = 0 .. steps */
  size_t steps;
  double *ge;            /* steps + 1 values g.e(t_i): f[LBMC_MF_CUSTOMERS].path */
  uint32_t J;            /* pools */
  size_t nf;             /* functionals: LBMC_MF_POOLS + J (3 + K) */
  lbmc_mf_functional *f; /* nf of them (owned) */
} lbmc_mf_expansion;

/** The expansion of model m (set up; an occupancy form; exponential or phase-type service,
 *  one slot per server with phase-type service) at its mean-field fixed point (the start of
 *  --init meanfield). out->ok = 0 with out->note when the model is outside that (no
 *  occupancy form, no mean-field point, a service law that is not phase-type, a singular
 *  drift). Deterministic. Cost: O(d^3) for d = pools x levels x phases (dense Schur form,
 *  a Hessian of d^2 / 2 pairs of drift evaluations, the path's d^3 per step, steps capped
 *  so that the path costs at most ~4e9 flops: at most 170 classes, else ok = 0). Errors:
 *  LBMC_ERR_MEMORY. */
lbmc_err lbmc_mf_expansion_compute(const lbmc_model *m, lbmc_mf_expansion *out);
void lbmc_mf_expansion_free(lbmc_mf_expansion *x);

/** The functional of entry `entry` of metric `metric` (LBMC_M_*) of a run with J pools and
 *  K tail levels: its index in x->f, LBMC_MF_NIL (a tail beyond x's levels) or LBMC_MF_NONE
 *  (no functional; also when x is not ok). */
int lbmc_mf_expansion_entry(const lbmc_mf_expansion *x, int metric, size_t entry, int J, int K);

/** The bound on |start bias| of the time average of functional `which` (index in x->f) over
 *  [w, w + T] from the mean-field start, at order 1/n: (1/n) min(sup_{t >= w} |b(t)|,
 *  int_w^inf |b| / T) with b its path (g.e for the customers per server), n servers; and
 *  in *area (if not NULL) int_w^inf |b|. NAN if x is not ok. */
double lbmc_mf_expansion_bias(const lbmc_mf_expansion *x, int which, double n, double w, double T,
                              double *area);

#endif
