/* Private: what the occupancy forms of several policies share (docs/occupancy.md): the routing laws
 * of the mean-field start (lbmc_occupancy_ops.law, src/system/occ_policy.h) and the large-n
 * binomial splits of initial states. Defined in occ_laws.c. */
#ifndef LBMC_OCC_LAWS_H
#define LBMC_OCC_LAWS_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "../system/occ_policy.h"

/* ---- Routing laws ---- */

/** d draws, each a server of pool j with probability proportional to weight[j] N_j
 *  (weight NULL: 1, a uniform server), uniform within its pool; the customer joins the
 *  fewest customers among them, ties uniformly. exact_distinct: the draws are uniform
 *  without replacement and the chain's own law at n is used, prod_i (n T_k - i)/(n - i)
 *  for "all d at level >= k" (T_k: fraction of servers at level >= k); otherwise draws
 *  are independent (the n -> infinity law of both samplings): T_k^d. */
void lbmc_occ_law_min_of(const lbmc_occ_mf *mf, const double *weight, double d, int exact_distinct,
                         double *p);
/** The lowest occupied level, pools in proportion to their servers there. A level's
 *  share is min(1, servers there) of what the levels below left: the chain's law at
 *  integer counts, continuous between them. */
void lbmc_occ_law_lowest(const lbmc_occ_mf *mf, double *p);

/** Binomial(n, p) for n up to 2^62 (GSL's sampler takes 32-bit n: a sum over chunks).
 *  r: a gsl_rng (lbmc_sampler_create). */
int64_t lbmc_occ_binomial(const gsl_rng *r, double p, int64_t n);
/** Multinomial split of n items over R equally likely cells into out[R], by binomial
 *  halving (R - 1 binomials). */
void lbmc_occ_split_equal(const gsl_rng *r, int64_t n, uint32_t R, int64_t *out);

#endif
