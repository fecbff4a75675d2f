/* Shared helpers of the CUnit unit tests.
 *
 * Statistical checks use fixed seeds, so every run is the same; their tolerances are
 * "5 sigma": a normal deviation of at most UT_Z standard errors, or, for a chi-square
 * or t statistic, the quantile with the same two-sided tail probability UT_TAIL =
 * P(|N(0,1)| > 5) = 5.733e-7. A correct implementation fails such a check with
 * probability ~1e-6 per check; the seeds are then fixed, so a pass is reproducible. */
#ifndef LBMC_UNIT_H
#define LBMC_UNIT_H

#include <CUnit/CUnit.h>
#include <stdint.h>
#include <string.h>

#include "lbmc/model.h"
#include "policies/registry.h"
#include "stats/estimators.h"
#include "system/policy.h"
#include "system/state.h"

#define UT_Z    5.0
#define UT_TAIL 5.733031438470704e-7 /* 2 * (1 - Phi(5)) */

/* Assert cond; on failure record a formatted message (CUnit copies it). */
#define UT_CHECK(cond, ...) ut_check((cond) ? 1 : 0, __LINE__, __FILE__, __VA_ARGS__)
void ut_check(int ok, int line, const char *file, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* |x - expected| <= UT_Z * se (se computed by the caller from the sample size). */
#define UT_CHECK_NORMAL(what, x, expected, se)                                                     \
  UT_CHECK(fabs((x) - (expected)) <= UT_Z * (se), "%s: %.9g vs expected %.9g, |diff| > %g * %.3g", \
           (what), (double)(x), (double)(expected), UT_Z, (double)(se))

/* x successes in N trials vs probability p: |x - Np| <= UT_Z sqrt(N p (1-p)). */
void ut_check_binomial(const char *what, long x, long N, double p, int line, const char *file);
#define UT_CHECK_BINOMIAL(what, x, N, p)                                                           \
  ut_check_binomial((what), (x), (N), (p), __LINE__, __FILE__)

/* Counts c[0..k) of N trials vs probabilities p[0..k): a cell with p = 0 must be empty,
 * every cell passes UT_CHECK_BINOMIAL, and Pearson's chi-square over the cells with
 * p > 0 is below the chi-square quantile of tail UT_TAIL (dof = those cells - 1). */
void ut_check_counts(const char *what, const long *c, const double *p, int k, long N, int line,
                     const char *file);
#define UT_CHECK_COUNTS(what, c, p, k, N)                                                          \
  ut_check_counts((what), (c), (p), (k), (N), __LINE__, __FILE__)

/* 1 when two intervals (relaxation readings) have the same bits in every field. Not memcmp
 * of the whole struct: its padding bytes are unspecified (they differed under the
 * sanitizers). */
#define UT_SAME_FIELD(a, b, f) (memcmp(&(a)->f, &(b)->f, sizeof(a)->f) == 0) /* same bits */
int ut_same_interval(const lbmc_interval *a, const lbmc_interval *b);
int ut_same_relax(const lbmc_relax *a, const lbmc_relax *b);

/* Chi-square quantile with tail UT_TAIL, and the two-sided t quantile with the same tail. */
double ut_chisq_crit(double dof);
double ut_t_crit(double dof);

/* A hand-built lbmc_state for calling a policy directly (no engine): the model from the
 * public API, q[], pool_of[], srv[], B[], mu[], the routing stream and the policy
 * workspace. Servers start empty; ut_set_q changes a count one customer at a time and
 * calls the policy's on_change after each step, as the engine does. */
typedef struct {
  lbmc_model *m;
  lbmc_state st;
  lbmc_stream route;
} ut_pstate;

typedef struct {
  long n;
  int J;
  const double *beta, *mu; /* NULL: one pool, beta 1, mu 1 */
  const long *buffer;      /* NULL: unlimited */
  const char *policy;
  long routers;         /* 0: 1 */
  const char *stale;    /* NULL: default */
  const char *sampling; /* NULL: default */
  int gennum;
  long seed;
} ut_pconf;

/* Create (and reset) the state; returns NULL after a failed assertion. */
ut_pstate *ut_pstate_new(const ut_pconf *c);
void ut_pstate_free(ut_pstate *p);
/* Policy reset with every server empty. */
void ut_pstate_reset(ut_pstate *p);
void ut_set_q(ut_pstate *p, uint32_t s, uint32_t q);
static inline uint32_t ut_route(ut_pstate *p, uint32_t r)
{
  return p->st.pol->route(&p->st, p->st.pw, r);
}
static inline void ut_on_idle(ut_pstate *p, uint32_t s) { p->st.pol->on_idle(&p->st, p->st.pw, s); }

/* Suites (one register function per test file). */
int ut_register_model(void);
int ut_register_streams(void);
int ut_register_ziggurat(void);
int ut_register_stats(void);
int ut_register_policy_simple(void);
int ut_register_policy_balanced(void);
int ut_register_policy_pull(void);
int ut_register_engine(void);
int ut_register_replica(void);
int ut_register_service(void);
int ut_register_estimators(void);
int ut_register_accumulators(void);
int ut_register_dhist(void);
int ut_register_occupancy(void);
int ut_register_mf_expansion(void);
int ut_register_rep_store(void);
int ut_register_occ_ph(void);
int ut_register_point(void);
int ut_register_error(void);
int ut_register_tally(void);
int ut_register_ladder(void);
int ut_register_residual(void);

/* Add a suite with its tests {name, function} ended by {NULL, NULL}. */
typedef struct {
  const char *name;
  void (*fn)(void);
} ut_test;
int ut_add_suite(const char *name, const ut_test *tests);

/* A model for the occupancy engines' suites: n servers in J pools, every field but n and
 * policy optional (0/NULL: the default in its comment). */
typedef struct {
  long long n;
  int J;                   /* 0: 1 */
  const double *beta, *mu; /* NULL: one pool, beta 1, mu 1 */
  const long *buffer;      /* NULL: unlimited */
  const char *service;     /* NULL: exponential; one law for every pool, or one per pool ';' */
  const char *policy;
  long routers;         /* 0: 1 */
  const char *stale;    /* NULL: default */
  const char *sampling; /* NULL: default */
  int nrates;           /* > 1: every pool's speed list is mu_j * (1, 2, .., nrates) */
  double lambda;        /* 0: 0.5 */
} ut_occ_conf;

/* The model of c, set up (CU_ASSERT_FATAL on any refusal); the caller destroys it. */
lbmc_model *ut_occ_model(const ut_occ_conf *c);

/* Disagreements among the redundant parts of an occupancy state (tail counts, customers,
 * busy slots, lowest level, room, customers in the system); test_occupancy.c. */
struct lbmc_occ_state_;
long ut_occ_state_errors(const struct lbmc_occ_state_ *st);

/* Disagreements within one tick record rec (lbmc_tick_width(J, K) doubles, a tick of length
 * len) and with the last one (*prev_n: customers at its end, updated): arrivals = admitted +
 * blocked, customers conserved, area of N = sum of the pools' areas, one wait and one sojourn
 * per admitted customer (engines that record every customer), sojourns >= waits. */
long ut_tick_errors(const double *rec, int J, int K, double len, double *prev_n);

#endif
