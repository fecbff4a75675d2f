/* Helpers of the CUnit suites (unit.h): checks with a message, statistical checks
 * (binomial and chi-square counts, tolerances from their distributions at a fixed
 * tail probability), suite registration, and a hand-built per-server state for
 * driving policies directly. */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ticks.h"
#include "lbmc/model.h"
#include "unit.h"

void ut_check(int ok, int line, const char *file, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!ok) fprintf(stderr, "  FAILED %s:%d: %s\n", file, line, msg);
  CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, (unsigned int)line, msg, file, "", CU_FALSE);
}

double ut_chisq_crit(double dof) { return gsl_cdf_chisq_Qinv(UT_TAIL, dof); }
double ut_t_crit(double dof) { return gsl_cdf_tdist_Qinv(UT_TAIL / 2, dof); }

void ut_check_binomial(const char *what, long x, long N, double p, int line, const char *file)
{
  double mean = (double)N * p, sd = sqrt((double)N * p * (1 - p));
  ut_check(fabs((double)x - mean) <= UT_Z * sd, line, file,
           "%s: %ld of %ld, expected %.2f +- %g * %.2f (p = %.6g)", what, x, N, mean, UT_Z, sd, p);
}

void ut_check_counts(const char *what, const long *c, const double *p, int k, long N, int line,
                     const char *file)
{
  double chi2 = 0;
  int cells = 0;
  long total = 0;
  char cell[160];
  for (int i = 0; i < k; i++) {
    total += c[i];
    if (p[i] <= 0) {
      ut_check(c[i] == 0, line, file, "%s: cell %d has probability 0 but %ld counts", what, i,
               c[i]);
      continue;
    }
    snprintf(cell, sizeof cell, "%s: cell %d", what, i);
    ut_check_binomial(cell, c[i], N, p[i], line, file);
    chi2 +=
        ((double)c[i] - (double)N * p[i]) * ((double)c[i] - (double)N * p[i]) / ((double)N * p[i]);
    cells++;
  }
  ut_check(total == N, line, file, "%s: counts sum to %ld, not %ld", what, total, N);
  if (cells > 1)
    ut_check(chi2 <= ut_chisq_crit(cells - 1), line, file,
             "%s: chi-square %.2f > %.2f (%d dof, tail %.3g)", what, chi2, ut_chisq_crit(cells - 1),
             cells - 1, UT_TAIL);
}

int ut_add_suite(const char *name, const ut_test *tests)
{
  CU_pSuite s = CU_add_suite(name, NULL, NULL);
  if (!s) return -1;
  for (const ut_test *t = tests; t->name; t++)
    if (!CU_add_test(s, t->name, t->fn)) return -1;
  return 0;
}

/* ---- hand-built policy states ---- */

ut_pstate *ut_pstate_new(const ut_pconf *c)
{
  static const double one = 1.0;
  static const long inf = LBMC_BUFFER_INF;
  ut_pstate *p = calloc(1, sizeof *p);
  lbmc_state *st;
  long buf[LBMC_MAX_POOLS];
  int J = c->beta ? c->J : 1, has_param;
  CU_ASSERT_FATAL(p != NULL);
  for (int j = 0; j < J; j++) buf[j] = c->buffer ? c->buffer[j] : inf;
  CU_ASSERT_FATAL(lbmc_model_create(&p->m) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_n(p->m, c->n) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_lambda(p->m, 1.0) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_pools(p->m, J, c->beta ? c->beta : &one, c->mu ? c->mu : &one,
                                       buf) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_policy(p->m, c->policy) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_routers(p->m, c->routers ? c->routers : 1) == LBMC_SUCCESS);
  if (c->stale) CU_ASSERT_FATAL(lbmc_model_set_stale(p->m, c->stale) == LBMC_SUCCESS);
  if (c->sampling) CU_ASSERT_FATAL(lbmc_model_set_sampling(p->m, c->sampling) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_setup(p->m) == LBMC_SUCCESS);

  st = &p->st;
  st->m = p->m;
  st->n = (uint32_t)c->n;
  st->J = (uint32_t)J;
  st->K = 1;
  st->R = (uint32_t)lbmc_model_routers(p->m);
  st->lambda_total = (double)c->n;
  for (int j = 0; j < J; j++) {
    long b = lbmc_model_buffer(p->m, j);
    st->B[j] = b == LBMC_BUFFER_INF ? UINT32_MAX : (uint32_t)b;
    st->mu[j] = lbmc_model_mu(p->m, j);
    st->inv_mu[j] = 1.0 / st->mu[j];
    st->slots[j] = (uint32_t)lbmc_model_rates(p->m, j, &st->rates[j]);
  }
  st->q = calloc((size_t)c->n, sizeof *st->q);
  st->pool_of = calloc((size_t)c->n, sizeof *st->pool_of);
  st->srv = calloc((size_t)c->n, sizeof *st->srv);
  CU_ASSERT_FATAL(st->q && st->pool_of && st->srv);
  for (int j = 0, s = 0; j < J; j++)
    for (long i = 0; i < lbmc_model_pool_servers(p->m, j); i++, s++) {
      st->pool_of[s] = (uint8_t)j;
      st->srv[s].last = -1;
      st->srv[s].busy_pos = -1;
    }
  p->route.pos = LBMC_STREAM_BUF;
  CU_ASSERT_FATAL(lbmc_stream_init(&p->route, c->gennum, c->seed) == LBMC_SUCCESS);
  st->s_route = &p->route;

  /* The policy type through the registry, as the model names it. */
  has_param = strchr(lbmc_model_policy(p->m), '(') != NULL;
  st->pol = lbmc_policy_find(lbmc_model_policy_name(p->m), has_param);
  CU_ASSERT_FATAL(st->pol != NULL && st->pol == p->m->policy);
  if (st->pol->create) CU_ASSERT_FATAL(st->pol->create(st, &st->pw) == LBMC_SUCCESS);
  ut_pstate_reset(p);
  return p;
}

void ut_pstate_reset(ut_pstate *p)
{
  memset(p->st.q, 0, sizeof *p->st.q * p->st.n);
  if (p->st.pol->reset) p->st.pol->reset(&p->st, p->st.pw);
}

void ut_set_q(ut_pstate *p, uint32_t s, uint32_t q)
{
  while (p->st.q[s] != q) {
    uint32_t old = p->st.q[s];
    p->st.q[s] = old < q ? old + 1 : old - 1;
    if (p->st.pol->on_change) p->st.pol->on_change(&p->st, p->st.pw, s, old);
  }
}

void ut_pstate_free(ut_pstate *p)
{
  if (!p) return;
  if (p->st.pol && p->st.pol->destroy) p->st.pol->destroy(&p->st.pw);
  lbmc_stream_free(&p->route);
  free(p->st.q);
  free(p->st.pool_of);
  free(p->st.srv);
  lbmc_model_destroy(&p->m);
  free(p);
}

lbmc_model *ut_occ_model(const ut_occ_conf *c)
{
  double one[LBMC_MAX_POOLS];
  long inf[LBMC_MAX_POOLS];
  lbmc_model *m = NULL;
  int J = c->J ? c->J : 1;
  char text[1024];
  const char *at = c->service ? c->service : "exponential";
  for (int j = 0; j < LBMC_MAX_POOLS; j++) {
    one[j] = 1;
    inf[j] = LBMC_BUFFER_INF;
  }
  CU_ASSERT_FATAL(lbmc_model_create(&m) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_n(m, c->n) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_lambda(m, c->lambda > 0 ? c->lambda : 0.5) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_pools(m, J, c->beta ? c->beta : one, c->mu ? c->mu : one,
                                       c->buffer ? c->buffer : inf) == LBMC_SUCCESS);
  for (int j = 0; j < J; j++) { /* the j-th law of the list, or the last one */
    const char *end = strchr(at, ';');
    size_t len = end ? (size_t)(end - at) : strlen(at);
    lbmc_service svc;
    memcpy(text, at, len);
    text[len] = '\0';
    CU_ASSERT_FATAL(lbmc_service_parse("service", text, &svc) == LBMC_SUCCESS);
    CU_ASSERT_FATAL(lbmc_model_set_service(m, j, &svc) == LBMC_SUCCESS);
    if (end) at = end + 1;
  }
  for (int j = 0; c->nrates > 1 && j < J; j++) {
    double r[LBMC_MAX_RATES];
    for (int k = 0; k < c->nrates; k++) r[k] = (k + 1) * (c->mu ? c->mu[j] : 1.0);
    CU_ASSERT_FATAL(lbmc_model_set_rates(m, j, c->nrates, r) == LBMC_SUCCESS);
  }
  CU_ASSERT_FATAL(lbmc_model_set_policy(m, c->policy) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_set_routers(m, c->routers ? c->routers : 1) == LBMC_SUCCESS);
  if (c->stale) CU_ASSERT_FATAL(lbmc_model_set_stale(m, c->stale) == LBMC_SUCCESS);
  if (c->sampling) CU_ASSERT_FATAL(lbmc_model_set_sampling(m, c->sampling) == LBMC_SUCCESS);
  CU_ASSERT_FATAL(lbmc_model_setup(m) == LBMC_SUCCESS);
  return m;
}

long ut_tick_errors(const double *rec, int J, int K, double len, double *prev_n)
{
  double admitted = 0, area = 0;
  long bad = 0;
  for (int j = 0; j < J; j++) {
    admitted += rec[lbmc_tk_admitted(J, K, j)];
    area += rec[lbmc_tk_area_q(J, K, j)];
  }
  bad += rec[LBMC_TK_ARRIVALS] != admitted + rec[LBMC_TK_BLOCKED];
  bad += rec[LBMC_TK_N_END] != *prev_n + admitted - rec[LBMC_TK_DEPARTURES];
  bad += fabs(rec[LBMC_TK_AREA_N] - area) > 1e-9 * fmax(1, area);
  bad += rec[LBMC_TK_WAITS] != admitted || rec[LBMC_TK_SOJOURNS] != admitted;
  bad += rec[LBMC_TK_SUM_SOJOURN] < rec[LBMC_TK_SUM_WAIT];
  bad += rec[LBMC_TK_LEN] != len;
  *prev_n = rec[LBMC_TK_N_END];
  return bad;
}

int ut_same_interval(const lbmc_interval *a, const lbmc_interval *b)
{
  return UT_SAME_FIELD(a, b, estimate) && UT_SAME_FIELD(a, b, std_err) &&
         UT_SAME_FIELD(a, b, lower) && UT_SAME_FIELD(a, b, upper) &&
         UT_SAME_FIELD(a, b, half_width) && UT_SAME_FIELD(a, b, upper_bound) &&
         UT_SAME_FIELD(a, b, dof) && a->units == b->units && a->flags == b->flags;
}

int ut_same_relax(const lbmc_relax *a, const lbmc_relax *b)
{
  return UT_SAME_FIELD(a, b, tau) && UT_SAME_FIELD(a, b, tau_upper) &&
         UT_SAME_FIELD(a, b, tau_lower) && UT_SAME_FIELD(a, b, reading) &&
         UT_SAME_FIELD(a, b, var) && UT_SAME_FIELD(a, b, var_inf) && UT_SAME_FIELD(a, b, scale) &&
         UT_SAME_FIELD(a, b, dof) && a->resolved == b->resolved;
}
