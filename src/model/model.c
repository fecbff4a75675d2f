/* The model of one system (include/lbmc/model.h): its setters, each checking its own
 * value; lbmc_model_setup, which checks what depends on several values and computes
 * the pool sizes; the getters. The policy is named by its text, parsed through the
 * policy registry, so the model sits above the policies; its data (src/system/
 * system.h) sits below them, for the engines and policies to read. */
#include "lbmc/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../policies/registry.h"
#include "../system/policy.h"
#include "../system/system.h"
#include "lbmc/check.h"

lbmc_err lbmc_model_create(lbmc_model **m)
{
  *m = calloc(1, sizeof **m);
  if (!*m) return LBMC_ERROR(LBMC_ERR_MEMORY, "cannot allocate a model");
  (*m)->routers = 1;
  lbmc_service_exponential(&(*m)->service_all);
  for (int j = 0; j < LBMC_MAX_POOLS; j++) (*m)->nrates[j] = 1;
  (*m)->policy = lbmc_policy_find("random", 0);
  snprintf((*m)->policy_text, sizeof(*m)->policy_text, "random");
  return LBMC_SUCCESS;
}

/* Free the model's memo and what it holds (system.h: lbmc_model_memo). */
static void lbmc_model_forget(lbmc_model *m)
{
  if (m->memo && m->memo->mf_point && m->memo->mf_point_free)
    m->memo->mf_point_free(m->memo->mf_point);
  free(m->memo);
  m->memo = NULL;
}

/* A new empty memo for m (its old one freed first). */
static lbmc_err lbmc_model_memo_new(lbmc_model *m)
{
  lbmc_model_forget(m);
  m->memo = calloc(1, sizeof *m->memo);
  return m->memo ? LBMC_SUCCESS : LBMC_ERROR(LBMC_ERR_MEMORY, "cannot allocate a model's memo");
}

void lbmc_model_destroy(lbmc_model **m)
{
  if (!m || !*m) return;
  lbmc_model_forget(*m);
  free((*m)->service);
  free(*m);
  *m = NULL;
}

lbmc_err lbmc_model_duplicate(const lbmc_model *m, lbmc_model **out)
{
  *out = malloc(sizeof **out);
  if (!*out) return LBMC_ERROR(LBMC_ERR_MEMORY, "cannot allocate a model");
  **out = *m;
  (*out)->memo = NULL; /* the copy keeps its own (its values may be changed) */
  (*out)->service = m->nservice ? malloc(sizeof *m->service * (size_t)m->nservice) : NULL;
  if (m->nservice && !(*out)->service) {
    free(*out);
    *out = NULL;
    return LBMC_ERROR(LBMC_ERR_MEMORY, "cannot allocate a model's service laws");
  }
  if (m->nservice) memcpy((*out)->service, m->service, sizeof *m->service * (size_t)m->nservice);
  if (m->is_setup && lbmc_model_memo_new(*out) != LBMC_SUCCESS) {
    lbmc_model_destroy(out);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "cannot allocate a model's memo");
  }
  return LBMC_SUCCESS;
}

/* At least `count` pools' service laws, the new ones the default (service_all).
 * Errors: LBMC_ERR_MEMORY. */
static lbmc_err lbmc_model_services(lbmc_model *m, int count)
{
  lbmc_service *s;
  if (count <= m->nservice) return LBMC_SUCCESS;
  s = realloc(m->service, sizeof *s * (size_t)count);
  if (!s) return LBMC_ERROR(LBMC_ERR_MEMORY, "cannot allocate %d pools' service laws", count);
  for (int j = m->nservice; j < count; j++) s[j] = m->service_all;
  m->service = s;
  m->nservice = count;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_origin(lbmc_model *m, const char *origin)
{
  snprintf(m->origin, sizeof m->origin, "%s", origin ? origin : "");
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_n(lbmc_model *m, int64_t n)
{
  LBMC_CALL(lbmc_check_int_range("n", (long)n, 1, (long)LBMC_MAX_N));
  m->n = n;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_lambda(lbmc_model *m, double lambda)
{
  LBMC_CALL(lbmc_check_positive("lambda", lambda));
  m->lambda = lambda;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_pools(lbmc_model *m, int J, const double *beta, const double *mu,
                              const long *buffer)
{
  char where[64];
  LBMC_CALL(lbmc_check_int_range("number of pools", J, 1, LBMC_MAX_POOLS));
  for (int j = 0; j < J; j++) {
    snprintf(where, sizeof where, "pool %d: beta", j + 1);
    LBMC_CALL(lbmc_check_beta(where, beta[j]));
    snprintf(where, sizeof where, "pool %d: mu", j + 1);
    LBMC_CALL(lbmc_check_positive(where, mu[j]));
    snprintf(where, sizeof where, "pool %d: buffer", j + 1);
    LBMC_CALL(lbmc_check_buffer(where, buffer[j]));
  }
  LBMC_CALL(lbmc_model_services(m, J));
  m->J = J;
  for (int j = 0; j < J; j++) {
    m->beta[j] = beta[j];
    m->mu[j] = mu[j];
    m->buffer[j] = buffer[j];
    m->nrates[j] = 1;
    m->rates[j][0] = mu[j];
  }
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_service(lbmc_model *m, int j, const lbmc_service *svc)
{
  if (j < -1 || j >= LBMC_MAX_POOLS)
    return LBMC_ERROR(LBMC_ERR_ARG, "service: pool %d does not exist", j + 1);
  if (j < 0) m->service_all = *svc;
  LBMC_CALL(lbmc_model_services(m, j + 1));
  for (int i = (j < 0 ? 0 : j); i < (j < 0 ? m->nservice : j + 1); i++) m->service[i] = *svc;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_rates(lbmc_model *m, int j, int count, const double *rates)
{
  char where[64];
  if (j < 0 || j >= m->J)
    return LBMC_ERROR(LBMC_ERR_ARG, "mu_k: pool %d does not exist (set the pools first)", j + 1);
  snprintf(where, sizeof where, "pool %d: mu_k", j + 1);
  LBMC_CALL(lbmc_check_int_range(where, count, 1, LBMC_MAX_RATES));
  for (int k = 0; k < count; k++) {
    snprintf(where, sizeof where, "pool %d: mu_k[%d]", j + 1, k + 1);
    LBMC_CALL(lbmc_check_positive(where, rates[k]));
  }
  /* a constant list is the plain model: same engine, same streams, same numbers */
  m->nrates[j] = 1;
  for (int k = 0; k < count; k++) {
    m->rates[j][k] = rates[k];
    if (rates[k] != rates[0]) m->nrates[j] = count;
  }
  m->mu[j] = rates[0];
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_pool_beta(lbmc_model *m, int j, double beta)
{
  char where[64];
  snprintf(where, sizeof where, "pool %d: beta", j + 1);
  LBMC_CALL(lbmc_check_int_range("pool index", j, 0, m->J - 1));
  LBMC_CALL(lbmc_check_beta(where, beta));
  m->beta[j] = beta;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_policy_check(const char *where, const char *text)
{
  lbmc_policy_spec spec;
  return lbmc_policy_parse(where, text, &spec);
}

lbmc_err lbmc_model_set_policy(lbmc_model *m, const char *text)
{
  lbmc_policy_spec spec;
  LBMC_CALL(lbmc_policy_parse("policy", text, &spec));
  m->policy = spec.type;
  m->param = spec.param;
  m->alias = spec.alias;
  lbmc_policy_format(&spec, m->policy_text, sizeof m->policy_text);
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_routers(lbmc_model *m, long routers)
{
  LBMC_CALL(lbmc_check_int_range("routers", routers, 1, LBMC_MAX_ROUTERS));
  m->routers = routers;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

/* The names of the stale and sampling settings, by their enum values. */
static const char *const lbmc_stale_names[] = {"withdraw", "keep"};
static const char *const lbmc_sampling_names[] = {"distinct", "with_replacement"};

/* The index of text in names[count], or -1. */
static int lbmc_name_index(const char *text, const char *const *names, int count)
{
  for (int i = 0; text && i < count; i++)
    if (strcmp(text, names[i]) == 0) return i;
  return -1;
}

lbmc_err lbmc_model_set_stale(lbmc_model *m, const char *stale)
{
  int v = lbmc_name_index(stale, lbmc_stale_names, 2);
  if (v < 0)
    return LBMC_ERROR(LBMC_ERR_ARG, "stale: '%s' is not allowed; allowed: withdraw, keep",
                      stale ? stale : "");
  m->stale_user = (lbmc_stale)v;
  m->stale_given = 1;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_sampling(lbmc_model *m, const char *sampling)
{
  int v = lbmc_name_index(sampling, lbmc_sampling_names, 2);
  if (v < 0)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "sampling: '%s' is not allowed; allowed: distinct, with_replacement",
                      sampling ? sampling : "");
  m->sampling = (lbmc_sampling)v;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

/* Largest-remainder rounding of beta_j * n (ties: the lower pool index first). */
static void lbmc_model_pool_sizes(lbmc_model *m)
{
  double rem[LBMC_MAX_POOLS];
  long total = 0;
  for (int j = 0; j < m->J; j++) {
    double x = m->beta[j] * (double)m->n;
    m->N[j] = (long)floor(x);
    rem[j] = x - floor(x);
    total += m->N[j];
  }
  while (total < m->n) {
    int best = 0;
    for (int j = 1; j < m->J; j++)
      if (rem[j] > rem[best]) best = j;
    m->N[best] += 1;
    rem[best] = -1.0;
    total += 1;
  }
  while (total > m->n) { /* only if the beta sum exceeds 1 by rounding */
    int best = 0;
    for (int j = 1; j < m->J; j++)
      if (m->N[j] > m->N[best]) best = j;
    m->N[best] -= 1;
    total -= 1;
  }
  for (int j = 0; j < m->J; j++) m->offset[j] = j ? m->offset[j - 1] + m->N[j - 1] : 0;
}

static const char *lbmc_pfx(const lbmc_model *m) { return m->origin[0] ? m->origin : "model"; }

/* The checks of n, lambda and beta that need several values. */
static lbmc_err lbmc_model_check_values(const lbmc_model *m)
{
  double sum = 0;
  if (m->J < 1)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: pools: at least one pool is required", lbmc_pfx(m));
  if (m->n < 1)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: n: the number of servers is required (an integer >= 1)",
                      lbmc_pfx(m));
  if (!(m->lambda > 0))
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: lambda: an arrival rate > 0 is required", lbmc_pfx(m));
  if (!(m->lambda * (double)m->n < LBMC_MAX_RATE))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: lambda = %g with n = %lld gives a total arrival rate of %g; allowed: "
                      "lambda x n below %g",
                      lbmc_pfx(m), m->lambda, (long long)m->n, m->lambda * (double)m->n,
                      LBMC_MAX_RATE);
  for (int j = 0; j < m->J; j++) sum += m->beta[j];
  if (fabs(sum - 1.0) > LBMC_BETA_SUM_TOL)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: beta: the pool fractions sum to %.12g; allowed: a sum of 1 (within %g)",
                      lbmc_pfx(m), sum, LBMC_BETA_SUM_TOL);
  return LBMC_SUCCESS;
}

/* The effective stale setting: fixed by an alias (jiq: keep), else as given, else
 * withdraw. An alias and a different explicit value contradict each other. */
static lbmc_err lbmc_model_resolve_stale(lbmc_model *m)
{
  const lbmc_policy_alias *a = m->alias;
  if (a && a->stale >= 0 && m->stale_given && (int)m->stale_user != a->stale)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: stale: '%s' is not allowed with policy %s (%s is %s with stale: %s); "
                      "use policy %s",
                      lbmc_pfx(m), lbmc_stale_names[m->stale_user], a->name, a->name,
                      m->policy->name, lbmc_stale_names[a->stale], m->policy->name);
  if (a && a->stale >= 0)
    m->stale = (lbmc_stale)a->stale;
  else
    m->stale = m->stale_given ? m->stale_user : LBMC_STALE_WITHDRAW;
  return LBMC_SUCCESS;
}

/* A parameter that counts servers drawn among n (jsq(d), balanced(c), lwl(d)). */
static lbmc_err lbmc_model_check_param(const lbmc_model *m)
{
  if (m->policy->param_le_n && m->param > m->n)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: policy %s: %s = %ld exceeds n = %lld; allowed: 1 <= %s <= n",
                      lbmc_pfx(m), m->policy_text, m->policy->param_name, m->param, (long long)m->n,
                      m->policy->param_name);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_setup(lbmc_model *m)
{
  LBMC_CALL(lbmc_model_memo_new(m)); /* values may have changed since the memo was filled */
  LBMC_CALL(lbmc_model_check_values(m));
  LBMC_CALL(lbmc_model_resolve_stale(m));
  lbmc_model_pool_sizes(m);
  for (int j = 0; j < m->J; j++)
    if (m->N[j] < 1)
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: n = %lld gives pool %d (beta = %g) no server; allowed: n large enough "
                        "that every pool has at least one server",
                        lbmc_pfx(m), (long long)m->n, j + 1, m->beta[j]);
  LBMC_CALL(lbmc_model_check_param(m));
  m->is_setup = 1;
  return LBMC_SUCCESS;
}

int64_t lbmc_model_n(const lbmc_model *m) { return m->n; }
double lbmc_model_lambda(const lbmc_model *m) { return m->lambda; }
int lbmc_model_pools(const lbmc_model *m) { return m->J; }
double lbmc_model_beta(const lbmc_model *m, int j) { return m->beta[j]; }
double lbmc_model_mu(const lbmc_model *m, int j) { return m->mu[j]; }
long lbmc_model_buffer(const lbmc_model *m, int j) { return m->buffer[j]; }
int64_t lbmc_model_pool_servers(const lbmc_model *m, int j) { return m->N[j]; }
long lbmc_model_routers(const lbmc_model *m) { return m->routers; }
const char *lbmc_model_policy(const lbmc_model *m) { return m->policy_text; }
const char *lbmc_model_policy_name(const lbmc_model *m) { return m->policy->name; }

const lbmc_service *lbmc_model_service(const lbmc_model *m, int j)
{
  return j >= 0 && j < m->nservice ? &m->service[j] : &m->service_all;
}

int lbmc_model_rates(const lbmc_model *m, int j, const double **rates)
{
  *rates = m->rates[j];
  return m->nrates[j];
}

int lbmc_model_needs_general(const lbmc_model *m)
{
  if (m->policy->needs_workload) return 1;
  for (int j = 0; j < m->J; j++)
    if (m->nrates[j] > 1 || !lbmc_service_is_exponential(&m->service[j])) return 1;
  return 0;
}

double lbmc_model_rho(const lbmc_model *m)
{
  double cap = 0; /* saturated speeds: the last value of each speed list */
  for (int j = 0; j < m->J; j++) cap += m->beta[j] * m->rates[j][m->nrates[j] - 1];
  return m->lambda / cap;
}

long lbmc_model_policy_param(const lbmc_model *m)
{
  return m->policy->reports_n ? (long)m->n : m->param;
}

const char *lbmc_model_stale(const lbmc_model *m)
{
  if (!m->policy->uses_stale) return "";
  return lbmc_stale_names[m->stale];
}

const char *lbmc_model_sampling(const lbmc_model *m)
{
  if (!m->policy->uses_sampling) return "";
  return lbmc_sampling_names[m->sampling];
}
int lbmc_model_surely_unstable(const lbmc_model *m)
{
  for (int j = 0; j < lbmc_model_pools(m); j++)
    if (lbmc_model_buffer(m, j) != LBMC_BUFFER_INF) return 0;
  return lbmc_model_rho(m) >= 1;
}

void lbmc_model_describe(const lbmc_model *m, lbmc_model_description *d)
{
  memset(d, 0, sizeof *d);
  d->n = lbmc_model_n(m);
  d->lambda = lbmc_model_lambda(m);
  d->rho = lbmc_model_rho(m);
  d->policy = lbmc_model_policy(m);
  d->policy_name = lbmc_model_policy_name(m);
  d->d = lbmc_model_policy_param(m);
  d->routers = lbmc_model_routers(m);
  d->stale = lbmc_model_stale(m);
  d->sampling = lbmc_model_sampling(m);
  d->surely_unstable = lbmc_model_surely_unstable(m);
  d->J = lbmc_model_pools(m);
  for (int j = 0; j < d->J; j++) {
    lbmc_pool_description *p = &d->pool[j];
    p->beta = lbmc_model_beta(m, j);
    p->mu = lbmc_model_mu(m, j);
    p->buffer = lbmc_model_buffer(m, j);
    p->servers = lbmc_model_pool_servers(m, j);
    p->service = lbmc_model_service(m, j);
    p->L = lbmc_model_rates(m, j, &p->mu_k);
  }
}
