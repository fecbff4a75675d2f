/* The stochastic model of one system (docs/model.md, "System"): n servers in J pools, arrival
 * rate lambda*n, R routers, a routing policy.
 *
 * Usage: lbmc_model_create, the setters (any order), lbmc_model_setup (checks the
 * combination and computes the pool sizes), then hand the model to the simulator.
 * Setters check their own value; lbmc_model_setup checks what depends on several
 * values (d <= n, every pool gets a server, beta sums to 1). None is collective.
 *
 * Units: time is in an arbitrary unit; lambda and mu are rates per that unit.
 */
#ifndef LBMC_MODEL_H
#define LBMC_MODEL_H

#include <stdint.h>

#include "lbmc/error.h"
#include "lbmc/service.h"
#include "lbmc/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Create a model with defaults: no pools, n = 0, lambda = 0, policy random,
 *  1 router, stale withdraw, sampling distinct. *m is owned by the caller and freed
 *  with lbmc_model_destroy. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_model_create(lbmc_model **m);
/** Free a model and set *m to NULL (no-op on NULL). */
void lbmc_model_destroy(lbmc_model **m);
/** Deep copy of a model (set up or not) into *out. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_model_duplicate(const lbmc_model *m, lbmc_model **out);

/** Text prefixed to the messages of lbmc_model_setup, naming where the model came
 *  from (e.g. "jobs/x.yaml, grid point 3"); copied. */
lbmc_err lbmc_model_set_origin(lbmc_model *m, const char *origin);
/** Number of servers n, 1 <= n <= LBMC_MAX_N (10^12; the per-server engines take up to
 *  LBMC_MAX_SERVERS, the occupancy engine all). Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_model_set_n(lbmc_model *m, int64_t n);
/** Arrival rate per server lambda > 0 (total rate lambda*n). Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_model_set_lambda(lbmc_model *m, double lambda);
/** Pools: arrays of length J (1 <= J <= LBMC_MAX_POOLS): fractions beta_j in (0, 1],
 *  speeds mu_j > 0 (rate per time unit), buffers B_j >= 1 or LBMC_BUFFER_INF
 *  (customers a server holds, the one in service included). Copied.
 *  Errors: LBMC_ERR_ARG, LBMC_ERR_MEMORY. */
lbmc_err lbmc_model_set_pools(lbmc_model *m, int J, const double *beta, const double *mu,
                              const long *buffer);
/** Change beta_j of pool j only (a grid axis). Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_model_set_pool_beta(lbmc_model *m, int j, double beta);
/** Service-requirement distribution of pool j, or of every pool with j = -1 (the
 *  default is exponential). Copied. Errors: LBMC_ERR_ARG (pool out of range),
 *  LBMC_ERR_MEMORY. */
lbmc_err lbmc_model_set_service(lbmc_model *m, int j, const lbmc_service *svc);
/** Queue-length-dependent speeds of pool j (PULL paper, section 6.1): a server of the
 *  pool holding q customers works at speed rates[min(q, L) - 1] (requirement units
 *  per time unit, applied to the customer in service), L = count <= LBMC_MAX_RATES;
 *  L counts its service "slots": its idleness is L - min(q, L). Replaces mu_j by
 *  rates[0]; capacity (rho) uses rates[L-1]. A constant list is the plain model.
 *  Errors: LBMC_ERR_ARG (non-positive rates, too many, pool out of range). */
lbmc_err lbmc_model_set_rates(lbmc_model *m, int j, int count, const double *rates);

/** Policy from its text: a policy of the registry with its parameter, e.g. "jsq(2)",
 *  "pull", or an alias such as "jiq" (= pull with stale keep); `lbmc sim --help`
 *  lists them. Errors: LBMC_ERR_ARG naming the text and the policies allowed. */
lbmc_err lbmc_model_set_policy(lbmc_model *m, const char *policy);
/** Check a policy text as lbmc_model_set_policy would, without a model; `where` names
 *  it in messages ("jobs/x.yaml:7: policy"). Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_policy_check(const char *where, const char *text);
/** Number of routers R >= 1. Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_model_set_routers(lbmc_model *m, long routers);
/** PULL's stale-message variant: "withdraw" or "keep". Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_model_set_stale(lbmc_model *m, const char *stale);
/** JSQ(d) sampling: "distinct" or "with_replacement". Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_model_set_sampling(lbmc_model *m, const char *sampling);

/** Check the whole model and compute the pool sizes N_j by largest-remainder
 *  rounding of beta_j*n (docs/model.md, "System"). Errors: LBMC_ERR_ARG with a message
 *  naming the key, the value and what is allowed. */
lbmc_err lbmc_model_setup(lbmc_model *m);

/* Getters (valid after lbmc_model_setup unless noted). */
int64_t lbmc_model_n(const lbmc_model *m);
double lbmc_model_lambda(const lbmc_model *m);
int lbmc_model_pools(const lbmc_model *m);
double lbmc_model_beta(const lbmc_model *m, int j);
double lbmc_model_mu(const lbmc_model *m, int j);
/** Buffer of pool j, LBMC_BUFFER_INF for unlimited. */
long lbmc_model_buffer(const lbmc_model *m, int j);
/** Servers in pool j, N_j. */
int64_t lbmc_model_pool_servers(const lbmc_model *m, int j);
/** Load rho = lambda / sum_j beta_j mu_j. */
double lbmc_model_rho(const lbmc_model *m);
long lbmc_model_routers(const lbmc_model *m);
/** Service distribution of pool j (owned by the model; valid until the model is destroyed or
 *  its pools or service laws are set again). */
const lbmc_service *lbmc_model_service(const lbmc_model *m, int j);
/** Speed list of pool j: its length L (1 without queue-length dependence) and values. */
int lbmc_model_rates(const lbmc_model *m, int j, const double **rates);
/** 1 if the model needs the general-service engine (non-exponential service,
 *  non-constant speed lists, or a policy that reads workloads). */
int lbmc_model_needs_general(const lbmc_model *m);
/** Policy text in canonical form, e.g. "jsq(2)"; owned by the model. */
const char *lbmc_model_policy(const lbmc_model *m);
/** Policy family name as the registry writes it, e.g. "jsq" for jsq(2), "pull" for jiq. */
const char *lbmc_model_policy_name(const lbmc_model *m);
/** Policy parameter (d or c), 0 if none; n for full jsq (a policy reported with n). */
long lbmc_model_policy_param(const lbmc_model *m);
/** "withdraw"/"keep" for pull, "" otherwise. */
const char *lbmc_model_stale(const lbmc_model *m);
/** "distinct"/"with_replacement" for jsq(d), "" otherwise. */
const char *lbmc_model_sampling(const lbmc_model *m);

/** 1 if the model is unstable for certain: rho >= 1 with every buffer unlimited. */
int lbmc_model_surely_unstable(const lbmc_model *m);

/** One pool of a set-up model, as lbmc_model_describe reads it. */
typedef struct {
  double beta, mu;             /* fraction of the servers; speed (mu_k[0] with a speed list) */
  long buffer;                 /* customers a server holds, LBMC_BUFFER_INF: unlimited */
  int64_t servers;             /* N_j, the pool's servers */
  const lbmc_service *service; /* service distribution (owned by the model) */
  int L;                       /* entries of the speed list, 1 for the constant speed mu */
  const double *mu_k;          /* speeds with 1, ..., L customers (owned by the model) */
} lbmc_pool_description;

/** A set-up model as its views show it: lbmc sim's table and JSON, the /points row of a
 *  results file. Each view formats these fields; none reads the model's getters, so a
 *  new setting reaches every view through this struct. Texts and arrays are the model's
 *  (valid while it lives). */
typedef struct {
  int64_t n;
  double lambda, rho;
  const char *policy;      /* canonical text, "jsq(2)" */
  const char *policy_name; /* its family, "jsq" */
  long d;                  /* the policy's parameter (lbmc_model_policy_param) */
  long routers;
  const char *stale, *sampling; /* "" for policies that do not read them */
  int surely_unstable;          /* lbmc_model_surely_unstable */
  int J;
  lbmc_pool_description pool[LBMC_MAX_POOLS]; /* J of them */
} lbmc_model_description;

/** The description of a set-up model m into *d (the getters above, read once). */
void lbmc_model_describe(const lbmc_model *m, lbmc_model_description *d);

#ifdef __cplusplus
}
#endif
#endif
