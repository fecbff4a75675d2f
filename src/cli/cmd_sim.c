/* lbmc sim: one system from flags, replicas one after another. The flags, their
 * checks and the help text are loops over the table of inputs (src/io/inputs.h), which
 * job files share. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../io/inputs.h"
#include "../policies/registry.h"
#include "cli.h"
#include "lbmc/check.h"
#include "lbmc/metrics.h"
#include "lbmc/point.h"
#include "lbmc/rng.h"

/* Column of the help texts in lbmc sim --help. */
#define LBMC_SIM_HELP_COLUMN 22

/* One flag's line(s) of --help: "  --flag ARG   help (default X)". */
static void lbmc_sim_usage_row(FILE *f, const lbmc_input *row)
{
  char head[64], def[96], users[256];
  const char *text = row->help;
  if (row->type == LBMC_IT_FLAG && strcmp(row->flag, "help") == 0)
    snprintf(head, sizeof head, "-h, --%s", row->flag);
  else
    snprintf(head, sizeof head, "--%s%s%s", row->flag, row->arg ? " " : "",
             row->arg ? row->arg : "");
  fprintf(f, "  %-*s ", LBMC_SIM_HELP_COLUMN - 3, head);
  if (row->policies && lbmc_policy_list_using(row->key, users, sizeof users))
    fprintf(f, "%s only: ", users);
  for (;;) { /* continuation lines start at the help column */
    size_t len = strcspn(text, "\n");
    fprintf(f, "%.*s", (int)len, text);
    if (!text[len]) break;
    fprintf(f, "\n%*s", LBMC_SIM_HELP_COLUMN, "");
    text += len + 1;
  }
  fprintf(f, "%s%s\n", lbmc_input_default(row, def, sizeof def),
          row->type == LBMC_IT_POLICY || row->type == LBMC_IT_ENGINE ? ":" : "");
  if (row->type == LBMC_IT_POLICY) lbmc_cli_print_policies(f, "                        ");
  if (row->type == LBMC_IT_ENGINE) lbmc_cli_print_engines(f, "                        ");
}

static void lbmc_sim_usage(FILE *f)
{
  fputs("usage: lbmc sim", f);
  for (int i = 0; i < LBMC_INPUTS; i++)
    if (lbmc_inputs[i].flag && lbmc_inputs[i].sim_need)
      fprintf(f, " --%s %s", lbmc_inputs[i].flag, lbmc_inputs[i].arg);
  fputs(" [options]\n\n"
        "Simulate one system and print steady-state estimates with confidence intervals.\n",
        f);
  for (int i = 0; i < LBMC_INPUTS; i++) {
    const lbmc_input *row = &lbmc_inputs[i];
    if (row->type == LBMC_IT_GROUP)
      fprintf(f, "%s%s:\n", strcmp(row->help, "system") == 0 ? "\n" : "", row->help);
    else if (row->flag)
      lbmc_sim_usage_row(f, row);
  }
  fputs("\n"
        "Progress and an ETA go to stderr when it is a terminal. Ctrl-C stops the run\n"
        "and prints the replicas finished so far (marked partial).\n"
        "Exit status: 0 on success (also for an unstable system, reported as such),\n"
        "2 for bad input, 130 when interrupted, 1 for other failures.\n",
        f);
}

/* The flags as given: one value per input (given[id]), --mu-k's texts in order. */
typedef struct {
  lbmc_input_value val[LBMC_INPUTS];
  int given[LBMC_INPUTS];
  const char *mu_k[LBMC_MAX_POOLS];
  int n_mu_k;
  lbmc_run_options o; /* from the run-option flags */
  long replicas, seed;
} lbmc_sim_args;

/* The value of input ID (an LBMC_IN_ name without its prefix), NULL if not given. */
#define LBMC_SIM_GIVEN(a, ID) ((a)->given[LBMC_IN_##ID] ? &(a)->val[LBMC_IN_##ID] : NULL)

/* One flag with its value: converted now; ranges are checked once all are read. The
 * model judges the policy, stale and sampling (lbmc_sim_model), as for job files. */
static lbmc_err lbmc_sim_flag(lbmc_sim_args *a, int id, const char *text)
{
  const lbmc_input *row = &lbmc_inputs[id];
  lbmc_input_value *v = &a->val[id];
  char where[64];
  snprintf(where, sizeof where, "--%s", row->flag);
  if (row->type == LBMC_IT_TEXTS) {
    if (a->n_mu_k == row->hi)
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: given more than %ld times; allowed: once per pool",
                        where, row->hi);
    a->mu_k[a->n_mu_k++] = text;
  }
  a->given[id] = 1;
  v->text = (char *)text; /* argv: not owned */
  if (row->type == LBMC_IT_POLICY || row->type == LBMC_IT_OPTION) return LBMC_SUCCESS;
  return lbmc_input_parse(row, where, text, v);
}

/* After every flag: required flags, then ranges in table order, then the run options. */
static lbmc_err lbmc_sim_check(lbmc_sim_args *a)
{
  const lbmc_input_value *v;
  char where[64];
  for (int id = 0; id < LBMC_INPUTS; id++)
    if (lbmc_inputs[id].flag && lbmc_inputs[id].sim_need && !a->given[id])
      return LBMC_ERROR(LBMC_ERR_ARG, "--%s: %s", lbmc_inputs[id].flag, lbmc_inputs[id].sim_need);
  lbmc_run_options_default(&a->o);
  for (int id = 0; id < LBMC_INPUTS; id++) {
    if (!lbmc_inputs[id].flag || !a->given[id]) continue;
    snprintf(where, sizeof where, "--%s", lbmc_inputs[id].flag);
    LBMC_CALL(lbmc_input_check(&lbmc_inputs[id], where, &a->val[id]));
    lbmc_input_apply(&lbmc_inputs[id], &a->val[id], &a->o);
  }
  a->replicas = (v = LBMC_SIM_GIVEN(a, REPLICAS)) ? v->l : LBMC_SIM_DEFAULT_REPLICAS;
  a->seed = (v = LBMC_SIM_GIVEN(a, SEED)) ? v->l : LBMC_DEFAULT_SEED;
  return lbmc_run_options_check(&a->o, "--");
}

static lbmc_err lbmc_sim_parse(int argc, char **argv, lbmc_sim_args *a, int *help)
{
  struct option opts[LBMC_INPUTS + 1];
  int c, n = 0;
  memset(a, 0, sizeof *a);
  memset(opts, 0, sizeof opts);
  for (int id = 0; id < LBMC_INPUTS; id++)
    if (lbmc_inputs[id].flag)
      opts[n++] = (struct option){
          lbmc_inputs[id].flag,
          lbmc_inputs[id].type == LBMC_IT_FLAG ? no_argument : required_argument, NULL, 256 + id};
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    if (c == 'h' || c == 256 + LBMC_IN_HELP) {
      *help = 1;
      return LBMC_SUCCESS;
    }
    if (c == ':')
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: a value is required (see lbmc sim --help)",
                        argv[optind - 1]);
    if (c < 256)
      return LBMC_ERROR(LBMC_ERR_ARG, "'%s' is not an option of lbmc sim (see lbmc sim --help)",
                        argv[optind - 1]);
    LBMC_CALL(lbmc_sim_flag(a, c - 256, optarg));
  }
  if (optind < argc)
    return LBMC_ERROR(LBMC_ERR_ARG, "'%s': lbmc sim takes no positional arguments (see --help)",
                      argv[optind]);
  return lbmc_sim_check(a);
}

/* --service SPEC (every pool) or SPEC1;...;SPECJ (one per pool). */
static lbmc_err lbmc_sim_service(const char *text, int J, lbmc_model *m)
{
  char buf[4096], *save = NULL, *tok, where[64];
  lbmc_service svc;
  int count = 1, j = 0;
  for (const char *p = text; *p; p++) count += *p == ';';
  if (count == 1) {
    LBMC_CALL(lbmc_service_parse("--service", text, &svc));
    return lbmc_model_set_service(m, -1, &svc);
  }
  if (count != J)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--service: '%s' gives %d distributions for %d pool%s; allowed: one for all "
                      "pools, or one per pool separated by ';'",
                      text, count, J, J > 1 ? "s" : "");
  if (strlen(text) >= sizeof buf)
    return LBMC_ERROR(LBMC_ERR_ARG, "--service: the value is too long (at most %zu characters)",
                      sizeof buf - 1);
  snprintf(buf, sizeof buf, "%s", text);
  /* strsep-like split that keeps empty fields, so "a;;b" names its empty pool */
  for (tok = buf; j < J; j++, tok = save) {
    save = strchr(tok, ';');
    if (save) *save++ = '\0';
    snprintf(where, sizeof where, "--service: pool %d", j + 1);
    LBMC_CALL(lbmc_service_parse(where, tok, &svc));
    LBMC_CALL(lbmc_model_set_service(m, j, &svc));
  }
  return LBMC_SUCCESS;
}

/* --mu-k J=R1,...,RL for pool J (1-based) of J pools; seen[] marks pools already given. */
static lbmc_err lbmc_sim_mu_k(const char *text, int J, int *seen, lbmc_model *m)
{
  char buf[4096], *eq, *save = NULL, where[96];
  double rates[LBMC_MAX_RATES];
  long pool;
  int L = 0;
  if (strlen(text) >= sizeof buf)
    return LBMC_ERROR(LBMC_ERR_ARG, "--mu-k: the value is too long (at most %zu characters)",
                      sizeof buf - 1);
  snprintf(buf, sizeof buf, "%s", text);
  eq = strchr(buf, '=');
  if (!eq || eq == buf || !eq[1])
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--mu-k: '%s' is not allowed; write J=R1,R2,...,RL: the 1-based pool J and "
                      "its speeds with 1, 2, ..., L or more customers, e.g. --mu-k 1=1,2,3",
                      text);
  *eq = '\0';
  LBMC_CALL(lbmc_parse_long("--mu-k: pool", buf, &pool));
  if (pool < 1 || pool > J)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--mu-k: pool %ld is not allowed; --pools has %d pool%s, allowed: 1 to %d",
                      pool, J, J > 1 ? "s" : "", J);
  if (seen[pool - 1])
    return LBMC_ERROR(LBMC_ERR_ARG, "--mu-k: pool %ld is given twice; give each pool's speeds once",
                      pool);
  seen[pool - 1] = 1;
  for (char *tok = eq + 1; tok; tok = save) { /* empty fields kept: "1,,2" is an error */
    save = strchr(tok, ',');
    if (save) *save++ = '\0';
    if (L == LBMC_MAX_RATES)
      return LBMC_ERROR(LBMC_ERR_ARG, "--mu-k: pool %ld: more than %d speeds are not allowed", pool,
                        LBMC_MAX_RATES);
    snprintf(where, sizeof where, "--mu-k: pool %ld: speed %d", pool, L + 1);
    LBMC_CALL(lbmc_parse_real(where, tok, &rates[L]));
    LBMC_CALL(lbmc_check_positive(where, rates[L]));
    L++;
  }
  return lbmc_model_set_rates(m, (int)pool - 1, L, rates);
}

/* --stale or --sampling given for a policy that does not read it: name those that do. */
static lbmc_err lbmc_sim_not_for(const lbmc_model *m, const char *setting)
{
  char users[256];
  int count = lbmc_policy_list_using(setting, users, sizeof users);
  return LBMC_ERROR(LBMC_ERR_ARG, "--%s: applies only to polic%s %s, not to %s", setting,
                    count > 1 ? "ies" : "y", users, lbmc_model_policy(m));
}

static lbmc_err lbmc_sim_model(const lbmc_sim_args *a, lbmc_model *m)
{
  const lbmc_input_value *v, *stale = LBMC_SIM_GIVEN(a, STALE),
                             *sampling = LBMC_SIM_GIVEN(a, SAMPLING);
  double beta[LBMC_MAX_POOLS], mu[LBMC_MAX_POOLS];
  long buffer[LBMC_MAX_POOLS];
  int J;
  LBMC_CALL(
      lbmc_cli_parse_pools("--pools", LBMC_SIM_GIVEN(a, POOLS_TEXT)->text, &J, beta, mu, buffer));
  LBMC_CALL(lbmc_model_set_origin(m, "command line"));
  LBMC_CALL(lbmc_model_set_n(m, LBMC_SIM_GIVEN(a, N)->l));
  LBMC_CALL(lbmc_model_set_lambda(m, LBMC_SIM_GIVEN(a, LAMBDA)->x));
  LBMC_CALL(lbmc_model_set_pools(m, J, beta, mu, buffer));
  {
    int seen[LBMC_MAX_POOLS] = {0};
    for (int i = 0; i < a->n_mu_k; i++) LBMC_CALL(lbmc_sim_mu_k(a->mu_k[i], J, seen, m));
  }
  if ((v = LBMC_SIM_GIVEN(a, SERVICE_TEXT))) LBMC_CALL(lbmc_sim_service(v->text, J, m));
  v = LBMC_SIM_GIVEN(a, POLICY);
  LBMC_CALL(lbmc_model_set_policy(m, v ? v->text : lbmc_inputs[LBMC_IN_POLICY].def));
  if ((v = LBMC_SIM_GIVEN(a, ROUTERS))) LBMC_CALL(lbmc_model_set_routers(m, v->l));
  if (stale) LBMC_CALL(lbmc_model_set_stale(m, stale->text));
  if (sampling) LBMC_CALL(lbmc_model_set_sampling(m, sampling->text));
  LBMC_CALL(lbmc_model_setup(m));
  LBMC_CALL(lbmc_run_check_size(m, &a->o, "--n/--time/--warmup"));
  for (int j = 0; j < J; j++) {
    const char *w = lbmc_service_warning(lbmc_model_service(m, j));
    if (w)
      fprintf(stderr, "lbmc: warning: pool %d, service %s: %s\n", j + 1,
              lbmc_model_service(m, j)->text, w);
  }
  if (stale && !*lbmc_model_stale(m)) return lbmc_sim_not_for(m, "stale");
  if (sampling && !*lbmc_model_sampling(m)) return lbmc_sim_not_for(m, "sampling");
  return LBMC_SUCCESS;
}

/* --precision M:REL, --max-replicas, --max-time into prec (disabled without --precision). */
static lbmc_err lbmc_sim_precision(const lbmc_sim_args *a, const lbmc_model *m,
                                   lbmc_precision *prec)
{
  const lbmc_input_value *v = LBMC_SIM_GIVEN(a, PRECISION_TEXT),
                         *mr = LBMC_SIM_GIVEN(a, MAX_REPLICAS);
  const lbmc_input_value *mt = LBMC_SIM_GIVEN(a, MAX_TIME);
  char metric[128];
  const char *colon;
  memset(prec, 0, sizeof *prec);
  if (!v) {
    if (mr || mt)
      return LBMC_ERROR(LBMC_ERR_ARG, "--%s: applies only with --precision",
                        mr ? "max-replicas" : "max-time");
    return LBMC_SUCCESS;
  }
  colon = strrchr(v->text, ':');
  if (!colon || colon == v->text || strlen(v->text) >= sizeof metric)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--precision: '%s' is not allowed; write METRIC:REL, e.g. p_wait:0.05",
                      v->text);
  snprintf(metric, sizeof metric, "%.*s", (int)(colon - v->text), v->text);
  LBMC_CALL(lbmc_metric_parse("--precision", metric, lbmc_model_pools(m), (int)a->o.tail_k, 0,
                              &prec->metric, &prec->index));
  LBMC_CALL(lbmc_parse_real("--precision: REL", colon + 1, &prec->relative));
  LBMC_CALL(lbmc_check_positive("--precision: REL", prec->relative));
  prec->enabled = 1;
  prec->max_replicas = mr ? mr->l : LBMC_SIM_DEFAULT_MAX_REPLICAS;
  prec->max_time = mt ? mt->x : 0;
  if (prec->max_replicas < a->replicas)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--max-replicas: %ld is not allowed; allowed: at least "
                      "--replicas = %ld",
                      prec->max_replicas, a->replicas);
  return LBMC_SUCCESS;
}

static json_t *lbmc_json_num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* The model as JSON. */
static json_t *lbmc_sim_json_model(const lbmc_model *m)
{
  const int J = lbmc_model_pools(m);
  json_t *model = json_object(), *pools = json_array();
  json_object_set_new(model, "n", json_integer(lbmc_model_n(m)));
  json_object_set_new(model, "lambda", json_real(lbmc_model_lambda(m)));
  json_object_set_new(model, "rho", json_real(lbmc_model_rho(m)));
  json_object_set_new(model, "policy", json_string(lbmc_model_policy(m)));
  json_object_set_new(model, "routers", json_integer(lbmc_model_routers(m)));
  json_object_set_new(model, "stale", json_string(lbmc_model_stale(m)));
  json_object_set_new(model, "sampling", json_string(lbmc_model_sampling(m)));
  for (int j = 0; j < J; j++) {
    json_t *p = json_object();
    const lbmc_service *svc = lbmc_model_service(m, j);
    const double *rates;
    int L = lbmc_model_rates(m, j, &rates);
    json_t *speeds = json_array();
    json_object_set_new(p, "beta", json_real(lbmc_model_beta(m, j)));
    json_object_set_new(p, "mu", json_real(lbmc_model_mu(m, j)));
    json_object_set_new(p, "buffer",
                        lbmc_model_buffer(m, j) == LBMC_BUFFER_INF
                            ? json_string("inf")
                            : json_integer(lbmc_model_buffer(m, j)));
    json_object_set_new(p, "servers", json_integer(lbmc_model_pool_servers(m, j)));
    json_object_set_new(p, "service", json_string(svc->text));
    json_object_set_new(p, "scv", lbmc_json_num(svc->scv)); /* null if infinite */
    for (int k = 0; k < L; k++) json_array_append_new(speeds, json_real(rates[k]));
    json_object_set_new(p, "mu_k", speeds);
    json_array_append_new(pools, p);
  }
  json_object_set_new(model, "pools", pools);
  return model;
}

/* A finished (or interrupted) lbmc sim: the point and what the run was. */
typedef struct {
  const lbmc_sim_args *a;
  const lbmc_model *m;
  lbmc_replica *rep;
  lbmc_point *acc;
  lbmc_precision prec;
  const char *engine;  /* the engine that runs the replicas */
  char init_note[256]; /* why they did not start as asked ("" if they did) */
  long done, target, Rmax;
  int interrupted;
  int64_t events;
  double cpu;
  /* progress on a terminal */
  int tty;
  double t0, shown;
} lbmc_sim_run;

/* The replica driver's monitor: stop at SIGINT or SIGTERM (ctx: the flag). */
static int lbmc_sim_monitor(void *ctx) { return *(volatile sig_atomic_t *)ctx != 0; }

static double lbmc_sim_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "replica 12 of 40 (level 1), 3.1 s, ETA 7 s" on a terminal, at most twice a second. */
static void lbmc_sim_progress(lbmc_sim_run *s, int force)
{
  double now = lbmc_sim_now(), el = now - s->t0;
  if (!s->tty || (!force && now - s->shown < 0.5)) return;
  s->shown = now;
  if (force) {
    fprintf(stderr, "\r%70s\r", "");
    return;
  }
  fprintf(stderr, "\rlbmc sim: replica %ld of %ld%s, %.1f s, ETA %.0f s   ", s->done + 1, s->target,
          lbmc_point_level(s->acc) ? " (a longer run)" : "", el,
          s->done > 0 ? el / (double)s->done * (double)(s->target - s->done) : 0.0);
  fflush(stderr);
}

/* Replicas done .. target - 1 into the point; stops at a signal (s->interrupted). */
static lbmc_err lbmc_sim_round(lbmc_sim_run *s)
{
  for (; s->done < s->target; s->done++) {
    lbmc_unit u = {
        0, 0, s->done, s->Rmax, s->a->seed, lbmc_point_level(s->acc), s->a->replicas == 1};
    const void *rec;
    size_t size;
    int used;
    lbmc_err err;
    lbmc_sim_progress(s, 0);
    err = lbmc_replica_record(s->rep, &u, &rec, &size);
    if (err == LBMC_ERR_INTERRUPTED) {
      s->interrupted = 1;
      return LBMC_SUCCESS;
    }
    LBMC_CALL(err);
    LBMC_CALL(lbmc_point_add(s->acc, rec, size, &used));
  }
  return LBMC_SUCCESS;
}

/* Rounds until the point is done (sequential mode: more replicas, or a longer run). */
static lbmc_err lbmc_sim_rounds(lbmc_sim_run *s)
{
  for (;;) {
    long next;
    char why[256];
    lbmc_next what;
    LBMC_CALL(lbmc_sim_round(s));
    if (s->interrupted) return LBMC_SUCCESS;
    LBMC_CALL(lbmc_point_reduce(s->acc, s->target));
    what = lbmc_point_next(s->acc, &s->prec, &next, why, sizeof why);
    lbmc_sim_progress(s, 1);
    if (*why) fprintf(stderr, "lbmc sim: %s\n", why);
    if (what == LBMC_NEXT_DONE) return LBMC_SUCCESS;
    if (what == LBMC_NEXT_LONGER) {
      lbmc_point_set_level(s->acc, lbmc_point_level(s->acc) + 1);
      s->done = 0;
    }
    s->target = next;
  }
}

/* After an interruption: the replicas that finished, if the point can use them. */
static int lbmc_sim_partial(lbmc_sim_run *s)
{
  lbmc_sim_progress(s, 1);
  if (s->done > 0 && lbmc_point_decide_early(s->acc, s->done)) return 0;
  while (s->done > 0 && !lbmc_point_ready(s->acc, s->done)) s->done--;
  if (s->done == 0 || lbmc_point_reduce(s->acc, s->done)) return 0;
  return 1;
}

static void lbmc_sim_totals(lbmc_sim_run *s)
{
  const long R = lbmc_point_verdict(s->acc)->replicas;
  for (long r = 0; r < R; r++) {
    lbmc_point_replica_info info;
    lbmc_point_replica(s->acc, r, &info);
    s->events += info.events;
    s->cpu += info.cpu_seconds;
  }
}

static void lbmc_sim_print_json(const lbmc_sim_run *s)
{
  const lbmc_sim_args *a = s->a;
  const lbmc_verdict *v = lbmc_point_verdict(s->acc);
  json_t *root = json_object(), *levels = json_array();
  json_object_set_new(root, "status", json_string(lbmc_status_name(v->status)));
  if (*v->reason) json_object_set_new(root, "reason", json_string(v->reason));
  if (s->interrupted) json_object_set_new(root, "interrupted", json_true());
  json_object_set_new(root, "verdict", lbmc_cli_json_verdict(v));
  json_object_set_new(
      root, "estimates",
      lbmc_cli_json_estimates(lbmc_point_estimates(s->acc), lbmc_model_pools(s->m), a->o.tail_k));
  json_object_set_new(root, "replicas", json_integer(v->replicas));
  json_object_set_new(root, "events", json_integer(s->events));
  json_object_set_new(root, "cpu_seconds", json_real(s->cpu));
  json_object_set_new(root, "warmup", lbmc_json_num(v->warmup_used));
  json_object_set_new(root, "model", lbmc_sim_json_model(s->m));
  json_object_set_new(root, "seed", json_integer(a->seed));
  json_object_set_new(root, "confidence", json_real(a->o.confidence));
  json_object_set_new(root, "common_random_numbers", json_true());
  json_object_set_new(root, "engine", json_string(s->engine));
  json_object_set_new(root, "init", json_string(lbmc_init_kind_names[a->o.init]));
  if (*s->init_note) json_object_set_new(root, "init_note", json_string(s->init_note));
  for (int i = 0; i < LBMC_QUANTILES; i++)
    json_array_append_new(levels, json_real(lbmc_quantile_level(i)));
  json_object_set_new(root, "quantile_levels", levels);
  json_dumpf(root, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
  fputc('\n', stdout);
  json_decref(root);
}

static void lbmc_sim_print_table(const lbmc_sim_run *s)
{
  const lbmc_sim_args *a = s->a;
  const lbmc_verdict *v = lbmc_point_verdict(s->acc);
  char lv[32];
  lbmc_cli_print_model(stdout, s->m);
  printf("run: %ld replica%s, warm-up %s%.6g, measured time %.6g per replica, %ld batches, "
         "seed %ld, engine %s, start %s%s\n",
         v->replicas, v->replicas == 1 ? "" : "s", a->o.warmup_auto ? "auto (MSER), " : "",
         v->warmup_used, v->time_used, a->o.batches, a->seed, s->engine,
         lbmc_init_kind_names[a->o.init], s->interrupted ? " (interrupted: partial results)" : "");
  if (*s->init_note) printf("note: %s\n", s->init_note);
  lbmc_cli_print_verdict(stdout, v);
  if (v->status == LBMC_STATUS_UNSTABLE) return;
  printf("estimates (%s intervals, %s):\n", lbmc_cli_level(a->o.confidence, lv, sizeof lv),
         v->replicas > 1 ? "pooled over the replicas" : "batch means of one replica");
  lbmc_cli_print_point(stdout, s->m, a->o.tail_k, lbmc_point_estimates(s->acc));
  printf("events: %lld after warm-up in %.3f CPU s (%.3g events/s)\n", (long long)s->events, s->cpu,
         s->cpu > 0 ? (double)s->events / s->cpu : 0.0);
}

/* Run the point (rounds, a signal's partial results), then print it. */
static lbmc_err lbmc_sim_point(lbmc_sim_run *s)
{
  volatile sig_atomic_t *stop = lbmc_cli_catch_stop_signals(0);
  lbmc_err err;
  if (s->rep) lbmc_replica_set_monitor(s->rep, lbmc_sim_monitor, (void *)stop);
  s->tty = isatty(STDERR_FILENO);
  s->t0 = s->shown = lbmc_sim_now();
  err = lbmc_sim_rounds(s);
  LBMC_CALL(err);
  if (s->interrupted && !lbmc_sim_partial(s)) {
    fprintf(stderr, "lbmc sim: interrupted before a replica finished: nothing to show\n");
    return LBMC_ERR_INTERRUPTED;
  }
  if (s->interrupted)
    fprintf(stderr, "lbmc sim: interrupted: partial results from %ld finished replica%s\n", s->done,
            s->done == 1 ? "" : "s");
  lbmc_sim_totals(s);
  if (LBMC_SIM_GIVEN(s->a, JSON))
    lbmc_sim_print_json(s);
  else
    lbmc_sim_print_table(s);
  return s->interrupted ? LBMC_ERR_INTERRUPTED : LBMC_SUCCESS;
}

static lbmc_err lbmc_sim_main(int argc, char **argv, int *help)
{
  lbmc_sim_args a;
  lbmc_model *m = NULL;
  lbmc_sim_run s;
  lbmc_err err = LBMC_SUCCESS;
  memset(&s, 0, sizeof s);
  LBMC_CALL(lbmc_sim_parse(argc, argv, &a, help));
  if (*help) return LBMC_SUCCESS;
  LBMC_CALL(lbmc_model_create(&m));
  s.a = &a;
  s.m = m;
  LBMC_CALL_GOTO(err, lbmc_sim_model(&a, m), done);
  LBMC_CALL_GOTO(err, lbmc_run_check_engine(m, &a.o, "--", &s.engine), done);
  LBMC_CALL_GOTO(err, lbmc_sim_precision(&a, m, &s.prec), done);
  s.Rmax = s.prec.enabled ? s.prec.max_replicas : a.replicas;
  s.target = a.replicas;
  LBMC_CALL_GOTO(err, lbmc_stream_check_capacity(1, s.Rmax), done);
  LBMC_CALL_GOTO(err, lbmc_point_create(m, &a.o, a.replicas, &s.acc), done);
  if (!lbmc_model_surely_unstable(m)) {
    LBMC_CALL_GOTO(err, lbmc_replica_create(m, &a.o, &s.rep), done);
    snprintf(s.init_note, sizeof s.init_note, "%s", lbmc_replica_init_note(s.rep));
  } else
    s.target = 0; /* rho >= 1 with unlimited buffers: nothing to simulate */
  err = lbmc_sim_point(&s);
done:
  lbmc_replica_destroy(&s.rep);
  lbmc_point_destroy(&s.acc);
  lbmc_model_destroy(&m);
  return err;
}

/* 1 if started as one of several MPI ranks (lbmc sim is a single-process command). */
static int lbmc_sim_under_mpi(void)
{
  const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
  for (int i = 0; i < 3; i++) {
    const char *v = getenv(vars[i]);
    if (v && atoi(v) > 1) return 1;
  }
  return 0;
}

int lbmc_cmd_sim(int argc, char **argv)
{
  int help = 0;
  if (lbmc_sim_under_mpi())
    return lbmc_exit_status(LBMC_ERROR(LBMC_ERR_ARG,
                                       "lbmc sim runs as one process (its replicas one after "
                                       "another); for several ranks write a job file and use "
                                       "lbmc run"));
  lbmc_err err = lbmc_sim_main(argc, argv, &help);
  if (help) lbmc_sim_usage(stdout);
  if (err == LBMC_ERR_INTERRUPTED) return 130; /* as a shell reports SIGINT */
  return lbmc_exit_status(err);
}
