#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/policy.h"
#include "lbmc/check.h"
#include "model_impl.h"

lbmc_err lbmc_model_create(lbmc_model **m)
{
  *m = calloc(1, sizeof **m);
  if (!*m) return LBMC_ERROR(LBMC_ERR_MEMORY, "cannot allocate a model");
  (*m)->routers = 1;
  for (int j = 0; j < LBMC_MAX_POOLS; j++) {
    lbmc_service_exponential(&(*m)->service[j]);
    (*m)->nrates[j] = 1;
  }
  (*m)->policy = lbmc_policy_find("random", 0);
  snprintf((*m)->policy_text, sizeof(*m)->policy_text, "random");
  return LBMC_SUCCESS;
}

void lbmc_model_destroy(lbmc_model **m)
{
  if (!m || !*m) return;
  free(*m);
  *m = NULL;
}

lbmc_err lbmc_model_duplicate(const lbmc_model *m, lbmc_model **out)
{
  *out = malloc(sizeof **out);
  if (!*out) return LBMC_ERROR(LBMC_ERR_MEMORY, "cannot allocate a model");
  **out = *m;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_origin(lbmc_model *m, const char *origin)
{
  snprintf(m->origin, sizeof m->origin, "%s", origin ? origin : "");
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_n(lbmc_model *m, long n)
{
  LBMC_CHECK(lbmc_check_int_range("n", n, 1, LBMC_MAX_SERVERS));
  m->n = n;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_lambda(lbmc_model *m, double lambda)
{
  LBMC_CHECK(lbmc_check_positive("lambda", lambda));
  m->lambda = lambda;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_pools(lbmc_model *m, int J, const double *beta, const double *mu,
                              const long *buffer)
{
  char where[64];
  LBMC_CHECK(lbmc_check_int_range("number of pools", J, 1, LBMC_MAX_POOLS));
  for (int j = 0; j < J; j++) {
    snprintf(where, sizeof where, "pool %d: beta", j + 1);
    LBMC_CHECK(lbmc_check_beta(where, beta[j]));
    snprintf(where, sizeof where, "pool %d: mu", j + 1);
    LBMC_CHECK(lbmc_check_positive(where, mu[j]));
    snprintf(where, sizeof where, "pool %d: buffer", j + 1);
    LBMC_CHECK(lbmc_check_buffer(where, buffer[j]));
  }
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
  for (int i = (j < 0 ? 0 : j); i < (j < 0 ? LBMC_MAX_POOLS : j + 1); i++) m->service[i] = *svc;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_rates(lbmc_model *m, int j, int count, const double *rates)
{
  char where[64];
  if (j < 0 || j >= m->J)
    return LBMC_ERROR(LBMC_ERR_ARG, "mu_k: pool %d does not exist (set the pools first)", j + 1);
  snprintf(where, sizeof where, "pool %d: mu_k", j + 1);
  LBMC_CHECK(lbmc_check_int_range(where, count, 1, LBMC_MAX_RATES));
  for (int k = 0; k < count; k++) {
    snprintf(where, sizeof where, "pool %d: mu_k[%d]", j + 1, k + 1);
    LBMC_CHECK(lbmc_check_positive(where, rates[k]));
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
  LBMC_CHECK(lbmc_check_int_range("pool index", j, 0, m->J - 1));
  LBMC_CHECK(lbmc_check_beta(where, beta));
  m->beta[j] = beta;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_policy_list_error(const char *where, const char *text, const char *why)
{
  char list[512] = "";
  for (int i = 0; i < lbmc_policy_count(); i++) {
    const lbmc_policy_type *p = lbmc_policy_get(i);
    size_t len = strlen(list);
    snprintf(list + len, sizeof list - len, "%s%s%s%s%s", len ? ", " : "", p->name,
             p->param ? "(" : "", p->param ? p->param_name : "", p->param ? ")" : "");
  }
  return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not allowed (%s); allowed: %s, jiq", where, text,
                    why, list);
}

/* Parse a policy text: its type, parameter (0 if none) and whether it is jiq. */
static lbmc_err lbmc_policy_parse(const char *where, const char *text,
                                  const lbmc_policy_type **type, long *param, int *is_jiq)
{
  char name[32];
  size_t len = 0;
  const char *p = text ? text : "";
  int has_param = 0;

  *param = 0;
  while (isspace((unsigned char)*p)) p++;
  while ((isalnum((unsigned char)*p) || *p == '_') && len + 1 < sizeof name) name[len++] = *p++;
  name[len] = '\0';
  while (isspace((unsigned char)*p)) p++;
  if (*p == '(') {
    const char *end = strchr(p + 1, ')');
    char pwhere[256];
    if (!end || end == p + 1) return lbmc_policy_list_error(where, text, "bad parameter");
    snprintf(pwhere, sizeof pwhere, "%s: '%s': the parameter", where, text);
    LBMC_CHECK(lbmc_parse_long_n(pwhere, p + 1, (size_t)(end - (p + 1)), param));
    has_param = 1;
    p = end + 1;
    while (isspace((unsigned char)*p)) p++;
  }
  if (*p) return lbmc_policy_list_error(where, text, "unexpected text after the name");
  *is_jiq = strcmp(name, "jiq") == 0 && !has_param;
  if (*is_jiq) {
    *type = lbmc_policy_find("pull", 0);
  } else {
    *type = lbmc_policy_find(name, has_param);
    if (!*type) {
      const lbmc_policy_type *other = lbmc_policy_find(name, !has_param);
      return lbmc_policy_list_error(
          where, text,
          other ? (has_param ? "this policy takes no parameter" : "a parameter is required")
                : "unknown policy");
    }
  }
  if (has_param && *param < 1)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s': %s = %ld is not allowed; it must be >= 1", where,
                      text, (*type)->param_name, *param);
  return LBMC_SUCCESS;
}

lbmc_err lbmc_policy_check(const char *where, const char *text)
{
  const lbmc_policy_type *type;
  long param;
  int is_jiq;
  return lbmc_policy_parse(where, text, &type, &param, &is_jiq);
}

lbmc_err lbmc_model_set_policy(lbmc_model *m, const char *text)
{
  const lbmc_policy_type *type;
  long param;
  int is_jiq;
  LBMC_CHECK(lbmc_policy_parse("policy", text, &type, &param, &is_jiq));
  m->is_jiq = is_jiq;
  m->policy = type;
  m->param = param;
  if (param)
    snprintf(m->policy_text, sizeof m->policy_text, "%s(%ld)", type->name, param);
  else
    snprintf(m->policy_text, sizeof m->policy_text, "%s", is_jiq ? "jiq" : type->name);
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_routers(lbmc_model *m, long routers)
{
  LBMC_CHECK(lbmc_check_int_range("routers", routers, 1, LBMC_MAX_ROUTERS));
  m->routers = routers;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_stale(lbmc_model *m, const char *stale)
{
  lbmc_stale v;
  if (stale && strcmp(stale, "withdraw") == 0)
    v = LBMC_STALE_WITHDRAW;
  else if (stale && strcmp(stale, "keep") == 0)
    v = LBMC_STALE_KEEP;
  else
    return LBMC_ERROR(LBMC_ERR_ARG, "stale: '%s' is not allowed; allowed: withdraw, keep",
                      stale ? stale : "");
  m->stale_user = v;
  m->stale_given = 1;
  m->is_setup = 0;
  return LBMC_SUCCESS;
}

lbmc_err lbmc_model_set_sampling(lbmc_model *m, const char *sampling)
{
  if (sampling && strcmp(sampling, "distinct") == 0)
    m->sampling = LBMC_SAMPLING_DISTINCT;
  else if (sampling && strcmp(sampling, "with_replacement") == 0)
    m->sampling = LBMC_SAMPLING_WITH_REPLACEMENT;
  else
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "sampling: '%s' is not allowed; allowed: distinct, with_replacement",
                      sampling ? sampling : "");
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

lbmc_err lbmc_model_setup(lbmc_model *m)
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
                      "%s: lambda = %g with n = %ld gives a total arrival rate of %g; allowed: "
                      "lambda x n below %g",
                      lbmc_pfx(m), m->lambda, m->n, m->lambda * (double)m->n, LBMC_MAX_RATE);
  for (int j = 0; j < m->J; j++) sum += m->beta[j];
  if (fabs(sum - 1.0) > LBMC_BETA_SUM_TOL)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: beta: the pool fractions sum to %.12g; allowed: a sum of 1 (within %g)",
                      lbmc_pfx(m), sum, LBMC_BETA_SUM_TOL);
  if (m->is_jiq && m->stale_given && m->stale_user != LBMC_STALE_KEEP)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "%s: stale: 'withdraw' is not allowed with policy jiq (jiq is pull with "
                      "stale: keep); use policy pull",
                      lbmc_pfx(m));
  m->stale = m->is_jiq ? LBMC_STALE_KEEP : (m->stale_given ? m->stale_user : LBMC_STALE_WITHDRAW);
  lbmc_model_pool_sizes(m);
  for (int j = 0; j < m->J; j++)
    if (m->N[j] < 1)
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: n = %ld gives pool %d (beta = %g) no server; allowed: n large enough "
                        "that every pool has at least one server",
                        lbmc_pfx(m), m->n, j + 1, m->beta[j]);
  if (m->policy->check) LBMC_CHECK(m->policy->check(m));
  m->is_setup = 1;
  return LBMC_SUCCESS;
}

long lbmc_model_n(const lbmc_model *m) { return m->n; }
double lbmc_model_lambda(const lbmc_model *m) { return m->lambda; }
int lbmc_model_pools(const lbmc_model *m) { return m->J; }
double lbmc_model_beta(const lbmc_model *m, int j) { return m->beta[j]; }
double lbmc_model_mu(const lbmc_model *m, int j) { return m->mu[j]; }
long lbmc_model_buffer(const lbmc_model *m, int j) { return m->buffer[j]; }
long lbmc_model_pool_servers(const lbmc_model *m, int j) { return m->N[j]; }
long lbmc_model_routers(const lbmc_model *m) { return m->routers; }
const char *lbmc_model_policy(const lbmc_model *m) { return m->policy_text; }
const char *lbmc_model_policy_name(const lbmc_model *m) { return m->policy->name; }

const lbmc_service *lbmc_model_service(const lbmc_model *m, int j) { return &m->service[j]; }

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
  if (m->policy->param == LBMC_PARAM_NONE && strcmp(m->policy->name, "jsq") == 0) return m->n;
  return m->param;
}

const char *lbmc_model_stale(const lbmc_model *m)
{
  if (!m->policy->uses_stale) return "";
  return m->stale == LBMC_STALE_KEEP ? "keep" : "withdraw";
}

const char *lbmc_model_sampling(const lbmc_model *m)
{
  if (!m->policy->uses_sampling) return "";
  return m->sampling == LBMC_SAMPLING_WITH_REPLACEMENT ? "with_replacement" : "distinct";
}
