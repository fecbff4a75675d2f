/* Tests over the registries (in the manner of GSL's rng/test.c, which loops over every
 * registered generator): every registered policy on every registered engine that applies
 * to it, so that a new policy or engine is covered by being registered.
 *   invariants  a two-pool system with a finite buffer, one replica per (policy, engine):
 *               arrivals = blocked + admitted, admitted - departures = customers at the
 *               end, the tail counts non-increasing, messages per arrival as the policy
 *               type's rule says (exact rules only), withdrawals <= messages;
 *   mm1         M/M/1 (n = 1, lambda 0.5, parameter 1): mean queue 1, p_wait 0.5, mean
 *               sojourn 2, each within its Bonferroni-corrected interval (alpha 0.01
 *               over every comparison), through the replica driver and the point;
 *   observers   (test build only: the test observer `moments`) E[q^2] of the M/M/1 = 3
 *               within 4 standard errors of 20 replicas, and its move count equal to
 *               admissions plus departures, on every engine.
 * Usage: lbmc-registry-sweep invariants|mm1|observers [--swap] (--swap: the M/M/1 at
 * lambda 0.55 against the values of 0.5: must fail, the control). Exit 0 if all pass. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ticks.h"
#include "engine/engine.h"
#include "harness.h"
#include "lbmc/engines.h"
#include "lbmc/rng.h"
#include "observers/observers.h"
#include "policies/registry.h"

/* "name" or "name(p)" for policy type t. */
static void sweep_policy_text(const lbmc_policy_type *t, int p, char *buf, size_t len)
{
  if (t->param == LBMC_PARAM_REQUIRED)
    snprintf(buf, len, "%s(%d)", t->name, p);
  else
    snprintf(buf, len, "%s", t->name);
}

/* Messages per arrival by the type's rule, or -1 when the rule is not exact ("1" of
 * pull is its large-n limit) or not one the sweep knows. */
static double sweep_message_rule(const lbmc_policy_type *t, int d, long n)
{
  const char *r = t->messages_per_arrival;
  if (strcmp(r, "0") == 0) return 0;
  if (strcmp(r, "2*d") == 0) return 2.0 * (t->reports_n ? (double)n : d);
  return -1;
}

/* One replica of m on engine `kind` from empty to time T as one tick: the invariants. */
static int sweep_invariants_one(lbmc_model *m, int kind, const lbmc_policy_type *t, int d)
{
  const int J = lbmc_model_pools(m), K = 6;
  const size_t W = lbmc_tick_width(J, K) + 64;
  double *rec = calloc(W, sizeof *rec), admitted = 0, rule;
  int gennum[LBMC_PURPOSES], bad = 0;
  lbmc_engine *e = NULL;
  for (int p = 0; p < LBMC_PURPOSES; p++)
    lbmc_stream_number(kind, 0, 1, (lbmc_purpose)p, &gennum[p]);
  if (!rec || lbmc_engine_create(m, K, 0, (lbmc_engine_kind)kind, &e) ||
      lbmc_engine_reset(e, gennum, 4242) || lbmc_engine_advance(e, 400, rec)) {
    free(rec);
    lbmc_engine_destroy(&e);
    return 1;
  }
  for (int j = 0; j < J; j++) admitted += rec[lbmc_tk_admitted(J, K, j)];
  bad += rec[LBMC_TK_ARRIVALS] != rec[LBMC_TK_BLOCKED] + admitted;
  bad += admitted - rec[LBMC_TK_DEPARTURES] != rec[LBMC_TK_N_END];
  bad += rec[LBMC_TK_WITHDRAWALS] > rec[LBMC_TK_MESSAGES] || rec[LBMC_TK_ARRIVALS] < 100;
  for (int j = 0; j < J; j++)
    for (int k = 2; k <= K; k++)
      bad +=
          rec[lbmc_tk_area_tail(J, K, j, k)] > rec[lbmc_tk_area_tail(J, K, j, k - 1)] * (1 + 1e-12);
  rule = sweep_message_rule(t, d, lbmc_model_n(m));
  if (rule >= 0) bad += rec[LBMC_TK_MESSAGES] != rule * rec[LBMC_TK_ARRIVALS];
  if (bad)
    printf("FAIL %s on %s: arrivals %g blocked %g admitted %g departures %g end %g messages %g\n",
           lbmc_model_policy(m), lbmc_engine_kind_name(kind), rec[LBMC_TK_ARRIVALS],
           rec[LBMC_TK_BLOCKED], admitted, rec[LBMC_TK_DEPARTURES], rec[LBMC_TK_N_END],
           rec[LBMC_TK_MESSAGES]);
  free(rec);
  lbmc_engine_destroy(&e);
  return bad != 0;
}

/* The engine kinds that simulate m, as a run with o would (1 .. kinds - 1). */
static int sweep_applies(const lbmc_model *m, int kind)
{
  lbmc_run_options o;
  lbmc_run_options_default(&o);
  o.engine = kind;
  return lbmc_run_engine(m, &o, NULL, 0) != NULL;
}

static int sweep_invariants(void)
{
  int fails = 0, runs = 0;
  for (int i = 0; i < lbmc_policy_count(); i++) {
    const lbmc_policy_type *t = lbmc_policy_get(i);
    char text[64];
    lbmc_model *m;
    sweep_policy_text(t, 2, text, sizeof text);
    m = th_model(6, 0.8, "0.5:2:3,0.5:1:inf", text, 1);
    for (int k = 1; k < lbmc_engine_kinds(); k++)
      if (sweep_applies(m, k)) {
        fails += sweep_invariants_one(m, k, t, 2);
        runs++;
      }
    lbmc_model_destroy(&m);
  }
  printf("invariants: %d policy x engine runs, %d failed\n", runs, fails);
  return fails != 0 || runs < lbmc_policy_count();
}

static int sweep_mm1(int swap)
{
  th_family f = {0};
  long point = 0;
  for (int i = 0; i < lbmc_policy_count(); i++) {
    const lbmc_policy_type *t = lbmc_policy_get(i);
    char text[64], label[128];
    lbmc_model *m;
    sweep_policy_text(t, 1, text, sizeof text);
    m = th_model(1, swap ? 0.55 : 0.5, "1:1:inf", text, 1);
    for (int k = 1; k < lbmc_engine_kinds(); k++) {
      lbmc_run_options o;
      th_result r;
      if (!sweep_applies(m, k)) continue;
      lbmc_run_options_default(&o);
      o.engine = k, o.time = 4000, o.warmup = 200, o.tail_k = 4;
      if (th_simulate(m, &o, point++, 8, 777, &r)) return 1;
      snprintf(label, sizeof label, "%s on %s: mean_queue", text, lbmc_engine_kind_name(k));
      th_family_add(&f, &r, th_index(&r, "mean_queue", 0, 0), 1.0, 0, label);
      snprintf(label, sizeof label, "%s on %s: p_wait", text, lbmc_engine_kind_name(k));
      th_family_add(&f, &r, th_index(&r, "p_wait", 0, 0), 0.5, 0, label);
      snprintf(label, sizeof label, "%s on %s: mean_sojourn", text, lbmc_engine_kind_name(k));
      th_family_add(&f, &r, th_index(&r, "mean_sojourn", 0, 0), 2.0, 0, label);
      th_result_free(&r);
    }
    lbmc_model_destroy(&m);
  }
  return th_family_verdict(&f, 0.01);
}

/* E[q^2] of the M/M/1 at lambda 0.5 from the test observer's block, on every engine. */
static int sweep_observers(void)
{
  const lbmc_observer_type *mo = NULL;
  int fails = 0;
  for (int i = 0; i < lbmc_observer_count(); i++)
    if (strcmp(lbmc_observer_get(i)->name, "moments") == 0) mo = lbmc_observer_get(i);
  if (!mo) {
    printf("observers: no test observer registered (this is the plain build): nothing to do\n");
    return 0;
  }
  for (int k = 1; k < lbmc_engine_kinds(); k++) {
    lbmc_model *m = th_model(1, 0.5, "1:1:inf", "random", 1);
    lbmc_run_options o;
    lbmc_observers *obs = NULL;
    lbmc_engine *e = NULL;
    const int K = 4, R = 20;
    const size_t F = lbmc_tick_width(1, K);
    double rec[64], sum = 0, sum2 = 0, mean, se;
    if (!sweep_applies(m, k)) {
      lbmc_model_destroy(&m);
      continue;
    }
    lbmc_run_options_default(&o);
    o.tail_k = K;
    if (lbmc_observers_create(m, &o, &obs) || lbmc_engine_create(m, K, 0, (lbmc_engine_kind)k, &e))
      return 1;
    lbmc_engine_set_observers(e, obs);
    for (int r = 0; r < R; r++) {
      int gennum[LBMC_PURPOSES];
      double x;
      for (int p = 0; p < LBMC_PURPOSES; p++)
        lbmc_stream_number(900 + k, r, R, (lbmc_purpose)p, &gennum[p]);
      if (lbmc_engine_reset(e, gennum, 99) || lbmc_engine_advance(e, 200, NULL) ||
          lbmc_engine_advance(e, 2200, rec))
        return 1;
      x = rec[F] / rec[LBMC_TK_LEN];
      sum += x, sum2 += x * x;
      fails += rec[F + 1] != rec[LBMC_TK_ARRIVALS] - rec[LBMC_TK_BLOCKED] + rec[LBMC_TK_DEPARTURES];
    }
    mean = sum / R;
    se = sqrt((sum2 - R * mean * mean) / (R - 1) / R);
    printf("observers: %s: E[q^2] = %.4f (se %.4f), exact 3; moves %s\n", lbmc_engine_kind_name(k),
           mean, se, fails ? "WRONG" : "= admissions + departures");
    fails += fabs(mean - 3.0) > 4 * se;
    lbmc_engine_destroy(&e);
    lbmc_observers_destroy(&obs);
    lbmc_model_destroy(&m);
  }
  return fails != 0;
}

int main(int argc, char **argv)
{
  const char *what = argc > 1 ? argv[1] : "";
  const int swap = argc > 2 && strcmp(argv[2], "--swap") == 0;
  if (strcmp(what, "invariants") == 0) return sweep_invariants();
  if (strcmp(what, "mm1") == 0) return sweep_mm1(swap);
  if (strcmp(what, "observers") == 0) return sweep_observers();
  fprintf(stderr, "usage: lbmc-registry-sweep invariants|mm1|observers [--swap]\n");
  return 2;
}
