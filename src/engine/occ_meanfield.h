/* Private: the mean-field start of the occupancy engines (the start --init meanfield;
 * docs/occupancy.md).
 *
 * The drift of the occupancy chain divided by n, written for the fractions s_j(k) of
 * pool j's servers at level k, is the mean-field ODE of the model:
 *     d s_j(k)/dt = lambda/b_j (p_j(k-1) - p_j(k))                 (arrivals routed)
 *                 + mu_j(1) (min(k+1, L_j) s_j(k+1) - min(k, L_j) s_j(k))   (departures)
 * with p_j(k) the policy's routing law (lbmc_occupancy_ops.law; 0 for k >= B_j: blocked) and
 * b_j = N_j / n. It is integrated from the empty state (GSL's adaptive Runge-Kutta-
 * Fehlberg 4(5)) until it is stationary; each replica then starts from counts rounded
 * from that point at random (lbmc_occ_round). Systems whose ODE does not settle
 * (unstable, or too slow to relax within the budget) start empty.
 *
 * With phase-type service (plain servers; the phase-type occupancy engine) the state is
 * finer: z_j(k, p), the fraction of pool j's servers at level k whose customer in
 * service is in phase p, with the drift of the counts x_j(k, p) divided by n (arrivals
 * routed by the same law p_j(k) of the level marginals, the joined server's phase in
 * proportion to z_j(k, p) and a new service's from alpha; phase changes at rates mu_j T;
 * completions at mu_j (-T 1)_p, the next customer's phase from alpha); see
 * lbmc_mf_drift_ph in occ_meanfield.c.
 */
#ifndef LBMC_OCC_MEANFIELD_H
#define LBMC_OCC_MEANFIELD_H

#include "../system/occ_policy.h"

/** The outcome of the mean-field integration. */
typedef struct {
  int settled;      /* 1: a stationary point was reached */
  uint32_t J;       /* pools */
  uint32_t levels;  /* levels 0 .. levels-1 */
  double *s;        /* J x levels: fraction of pool j's servers at level k (owned) */
  uint32_t ph;      /* phases per level in x: 1 with exponential service (x NULL) */
  double *x;        /* ph > 1: J x levels x ph, x[(j levels + k) ph + p] = fraction of pool
                       j's servers at level k with the customer in service in phase p
                       (level 0: p = 0); owned */
  double t;         /* ODE time integrated */
  double customers; /* customers per server at the point */
  char note[256];   /* what happened, in words for the user */
} lbmc_occ_mf_point;

/** Integrate the mean-field ODE of model m (set up, occupancy form ops) from the empty
 *  state until stationary. pt is filled (pt->s owned by pt: lbmc_occ_meanfield_free);
 *  pt->settled = 0 with pt->note saying why when it does not settle. Deterministic, no
 *  randomness. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_occ_meanfield_solve(const lbmc_model *m, const lbmc_occupancy_ops *ops,
                                  lbmc_occ_mf_point *pt);
void lbmc_occ_meanfield_free(lbmc_occ_mf_point *pt);

/** One transition of the mean-field model: servers of pool j in class (k, q) (level k,
 *  phase q of the customer in service; q = 0 at level 0 and in the exponential form) move
 *  at `rate` to class (k2, q2), or, when law is not NULL, to level k2 with the phase drawn
 *  from law (ph entries). The rate's unit is its caller's (lbmc_mf_pool). */
typedef void (*lbmc_mf_jump_fn)(void *ctx, uint32_t j, uint32_t k, uint32_t q, uint32_t k2,
                                uint32_t q2, const double *law, uint32_t ph, double rate);

/** Pool j's side of the transitions (lbmc_mf_jumps). The rates come out in the caller's
 *  unit, as each caller wrote them: arrivals from level k at arrival x p[k] (the drift of
 *  the pool's fractions: lambda / b_j; rates per n: lambda), services at (service x mu)
 *  x the phase's or level's factor (1, or b_j); the mean-field drift passes lambda / b_j,
 *  1 and clip 1, the expansion lambda, b_j and clip 0 (per n). */
typedef struct {
  const double *z; /* the pool's fractions, (top + 1) x M: level, phase */
  uint32_t M;      /* phases per level in z */
  uint32_t top;    /* the last level: no arrival out of it */
  const double *p; /* its routing law, top + 1 levels (lbmc_occupancy_ops.law) */
  double arrival;  /* the arrivals' factor */
  double service;  /* the services' factor */
  int phase_type;  /* 1: per level and phase (phase-type service, plain servers) */
  int clip;        /* an arrival joining level k >= 1: 1: its phase in proportion to the
                      positive fractions z(k, q) only (the ODE's); 0: to all of them, and
                      no arrival when their sum s(k) is not positive, in the exponential
                      form too (the expansion's) */
} lbmc_mf_pool;

/** Every transition of pool j of model m, level by level, k = 0 .. v->top: first its
 *  arrivals k -> k + 1 (k < top, where the buffer admits them: from level 0 into the
 *  phase drawn from alpha, from level k >= 1 keeping the phase of the server joined, a
 *  share z(k, q) / s(k) of them), then, k >= 1, its services: exponential form: k -> k - 1
 *  at mu_j(1) min(k, L_j) z(k); phase-type: each phase q's changes q -> q2 at mu_j z(k, q)
 *  T[q][q2] (q2 = q included, at rate 0), then its completions at mu_j z(k, q) exit_q to
 *  level k - 1 (to level 0 from level 1, else with the next phase from alpha). The mean-
 *  field drift (occ_meanfield.c) and the expansion's drift and jump covariance
 *  (mf_expansion.c) are sums over these. */
void lbmc_mf_jumps(const lbmc_model *m, uint32_t j, const lbmc_mf_pool *v, lbmc_mf_jump_fn fn,
                   void *ctx);

/** Randomised rounding of the targets N s[k], k < levels, to integer counts[levels]
 *  summing to N exactly: with u uniform on [0, 1) (one draw per pool), count k is
 *  floor(C_k + u) - floor(C_{k-1} + u) for the cumulative targets C_k, so every count is
 *  the floor or the ceiling of its target and equals it in expectation (systematic
 *  sampling). s must sum to 1 (it is renormalised). */
void lbmc_occ_round(const double *s, uint32_t levels, int64_t N, double u, int64_t *counts);

#endif
