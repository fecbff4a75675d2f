/* lbmc sim: one system from flags. The flags, their checks and the help text are loops
 * over the table of inputs (src/io/inputs.h), which job files share; the flags then give
 * the settings of a job of one point (src/io/job_build.h), whose model, run options and
 * precision target are built as a job file's, and the point runs through sequential
 * mode's driver as lbmc run's do (sim_run.c). */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../io/job_build.h"
#include "../io/results.h"
#include "../policies/registry.h"
#include "cli.h"
#include "lbmc/check.h"
#include "lbmc/metrics.h"
#include "lbmc/rng.h"
#include "lbmc/runner.h"

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
        "Progress and an ETA go to stderr (--progress), and for a long run first its\n"
        "estimated CPU seconds (a short calibration run). Ctrl-C stops the run and\n"
        "prints the replicas finished so far (marked partial).\n"
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
} lbmc_sim_args;

/* The value of input ID (an LBMC_IN_ name without its prefix), NULL if not given. */
#define LBMC_SIM_GIVEN(a, ID) ((a)->given[LBMC_IN_##ID] ? &(a)->val[LBMC_IN_##ID] : NULL)

/* One flag with its value: converted now; ranges are checked once all are read. The
 * model judges the policy, stale and sampling (lbmc_job_point_model), as for job files. */
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
static lbmc_err lbmc_sim_check(const lbmc_sim_args *a)
{
  lbmc_run_options o;
  char where[64];
  for (int id = 0; id < LBMC_INPUTS; id++)
    if (lbmc_inputs[id].flag && lbmc_inputs[id].sim_need && !a->given[id])
      return LBMC_ERROR(LBMC_ERR_ARG, "--%s: %s", lbmc_inputs[id].flag, lbmc_inputs[id].sim_need);
  lbmc_run_options_default(&o);
  for (int id = 0; id < LBMC_INPUTS; id++) {
    if (!lbmc_inputs[id].flag || !a->given[id]) continue;
    snprintf(where, sizeof where, "--%s", lbmc_inputs[id].flag);
    LBMC_CALL(lbmc_input_check(&lbmc_inputs[id], where, &a->val[id]));
    lbmc_input_apply(&lbmc_inputs[id], &a->val[id], &o);
  }
  return lbmc_run_options_check(&o, "--");
}

static lbmc_err lbmc_sim_parse(int argc, char **argv, lbmc_sim_args *a, int *help)
{
  struct option opts[LBMC_INPUTS + 1];
  int c, n = 0;
  memset(a, 0, sizeof *a);
  memset(opts, 0, sizeof opts);
  for (int id = 0; id < LBMC_INPUTS; id++)
    if (lbmc_inputs[id].flag)
      opts[n++] = (struct option){lbmc_inputs[id].flag,
                                  lbmc_input_takes_value(&lbmc_inputs[id]) ? required_argument
                                  : id == LBMC_IN_LIMIT ? optional_argument /* [refined] */
                                                        : no_argument,
                                  NULL, 256 + id};
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
    if (c == 'o') c = 256 + LBMC_IN_OUTPUT; /* -o FILE, as lbmc run's */
    if (c == 'h' || c == 256 + LBMC_IN_HELP) {
      *help = 1;
      return LBMC_SUCCESS;
    }
    if (c == ':')
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: a value is required (see lbmc sim --help)",
                        argv[optind - 1]);
    if (c < 256) return lbmc_cli_unknown_option("sim", argv[optind - 1], opts);
    if (c == 256 + LBMC_IN_LIMIT) { /* --limit [refined]: which columns */
      int mode;
      LBMC_CALL(lbmc_limit_parse_mode("--limit", optarg, argc, argv, &mode));
      a->given[LBMC_IN_LIMIT] = 1;
      a->val[LBMC_IN_LIMIT].l = mode;
      continue;
    }
    LBMC_CALL(lbmc_sim_flag(a, c - 256, optarg));
  }
  if (optind < argc)
    return LBMC_ERROR(LBMC_ERR_ARG, "'%s': lbmc sim takes no positional arguments (see --help)",
                      argv[optind]);
  return lbmc_sim_check(a);
}

/* ---- the flags as a job of one point ---- */

/* A number as the value of input id (of pool j) of the job. */
static lbmc_err lbmc_sim_give_real(lbmc_job *job, int id, int j, double x)
{
  lbmc_input_value v = {0};
  v.x = x;
  return lbmc_job_give(job, id, j, NULL, &v);
}

static lbmc_err lbmc_sim_give_long(lbmc_job *job, int id, int j, long l)
{
  lbmc_input_value v = {0};
  v.l = l;
  return lbmc_job_give(job, id, j, NULL, &v);
}

/* --pools beta:mu:buffer,...: each pool's fraction, speed and buffer. */
static lbmc_err lbmc_sim_give_pools(lbmc_job *job, int J, const double *beta, const double *mu,
                                    const long *buffer)
{
  for (int j = 0; j < J; j++) {
    LBMC_CALL(lbmc_sim_give_real(job, LBMC_IN_POOL_BETA, j, beta[j]));
    LBMC_CALL(lbmc_sim_give_real(job, LBMC_IN_POOL_MU, j, mu[j]));
    LBMC_CALL(lbmc_sim_give_long(job, LBMC_IN_POOL_BUFFER, j, buffer[j]));
  }
  return LBMC_SUCCESS;
}

/* A service distribution parsed from text, given as setting id (of pool j). */
static lbmc_err lbmc_sim_give_service(lbmc_job *job, int id, int j, const char *where,
                                      const char *text)
{
  lbmc_service svc;
  lbmc_input_value v = {0};
  LBMC_CALL(lbmc_service_parse(where, text, &svc));
  v.text = svc.text;
  v.svc = &svc;
  return lbmc_job_give(job, id, j, "--service", &v);
}

/* --service SPEC (every pool) or SPEC1;...;SPECJ (one per pool). */
static lbmc_err lbmc_sim_service(lbmc_job *job, const char *text, int J)
{
  char *buf, *save = NULL, *tok, where[64];
  lbmc_err err = LBMC_SUCCESS;
  int count = 1, j = 0;
  for (const char *p = text; *p; p++) count += *p == ';';
  if (count == 1) return lbmc_sim_give_service(job, LBMC_IN_SERVICE, 0, "--service", text);
  if (count != J)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--service: '%s' gives %d distributions for %d pool%s; allowed: one for all "
                      "pools, or one per pool separated by ';'",
                      text, count, J, J > 1 ? "s" : "");
  if (!(buf = strdup(text))) /* of any length: phase-type texts are long */
    return LBMC_ERROR(LBMC_ERR_MEMORY, "--service: out of memory");
  /* strsep-like split that keeps empty fields, so "a;;b" names its empty pool */
  for (tok = buf; !err && j < J; j++, tok = save) {
    save = strchr(tok, ';');
    if (save) *save++ = '\0';
    snprintf(where, sizeof where, "--service: pool %d", j + 1);
    err = lbmc_sim_give_service(job, LBMC_IN_POOL_SERVICE, j, where, tok);
  }
  free(buf);
  return err;
}

/* The speeds R1,...,RL of --mu-k's pool (1-based, for messages) into rates[*L]. */
static lbmc_err lbmc_sim_speeds(long pool, char *list, double *rates, int *L)
{
  char where[96], *save = NULL;
  *L = 0;
  for (char *tok = list; tok; tok = save) { /* empty fields kept: "1,,2" is an error */
    save = strchr(tok, ',');
    if (save) *save++ = '\0';
    if (*L == LBMC_MAX_RATES)
      return LBMC_ERROR(LBMC_ERR_ARG, "--mu-k: pool %ld: more than %d speeds are not allowed", pool,
                        LBMC_MAX_RATES);
    snprintf(where, sizeof where, "--mu-k: pool %ld: speed %d", pool, *L + 1);
    LBMC_CALL(lbmc_parse_real(where, tok, &rates[*L]));
    LBMC_CALL(lbmc_check_positive(where, rates[*L]));
    ++*L;
  }
  return LBMC_SUCCESS;
}

/* --mu-k J=R1,...,RL for pool J (1-based) of J pools; seen[] marks pools already given. */
static lbmc_err lbmc_sim_mu_k(lbmc_job *job, const char *text, int J, int *seen)
{
  char buf[4096], *eq;
  double rates[LBMC_MAX_RATES];
  lbmc_input_value v = {0};
  long pool;
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
  LBMC_CALL(lbmc_sim_speeds(pool, eq + 1, rates, &v.vec_len));
  v.vec = rates;
  return lbmc_job_give(job, LBMC_IN_POOL_MU_K, (int)pool - 1, "--mu-k", &v);
}

/* Every flag of an input with a job-file key gives its setting (lbmc sim's defaults
 * where they differ from a job file's); --pools, --mu-k and --service give the pools'. */
static lbmc_err lbmc_sim_give(const lbmc_sim_args *a, lbmc_job *job, int J, const double *beta,
                              const double *mu, const long *buffer)
{
  const lbmc_input_value *v;
  int seen[LBMC_MAX_POOLS] = {0};
  for (int id = 0; id < LBMC_INPUTS; id++)
    if (lbmc_inputs[id].key && lbmc_inputs[id].flag && a->given[id])
      LBMC_CALL(lbmc_job_give(job, id, 0, NULL, &a->val[id]));
  if (!a->given[LBMC_IN_POLICY]) {
    lbmc_input_value policy = {0};
    policy.text = (char *)lbmc_inputs[LBMC_IN_POLICY].def;
    LBMC_CALL(lbmc_job_give(job, LBMC_IN_POLICY, 0, NULL, &policy));
  }
  if (!a->given[LBMC_IN_REPLICAS])
    LBMC_CALL(lbmc_sim_give_long(job, LBMC_IN_REPLICAS, 0, LBMC_SIM_DEFAULT_REPLICAS));
  LBMC_CALL(lbmc_sim_give_pools(job, J, beta, mu, buffer));
  for (int i = 0; i < a->n_mu_k; i++) LBMC_CALL(lbmc_sim_mu_k(job, a->mu_k[i], J, seen));
  if ((v = LBMC_SIM_GIVEN(a, SERVICE_TEXT))) LBMC_CALL(lbmc_sim_service(job, v->text, J));
  return LBMC_SUCCESS;
}

/* The job of one point that the flags describe (caller-owned). */
static lbmc_err lbmc_sim_job(const lbmc_sim_args *a, lbmc_job **job)
{
  double beta[LBMC_MAX_POOLS], mu[LBMC_MAX_POOLS];
  long buffer[LBMC_MAX_POOLS];
  int J;
  lbmc_err err;
  const lbmc_input_value *pools = LBMC_SIM_GIVEN(a, POOLS_TEXT);
  LBMC_CALL(lbmc_cli_parse_pools(
      "--pools", pools ? pools->text : lbmc_inputs[LBMC_IN_POOLS_TEXT].def, &J, beta, mu, buffer));
  LBMC_CALL(lbmc_job_build("command line", J, job));
  err = lbmc_sim_give(a, *job, J, beta, mu, buffer);
  if (err) lbmc_job_destroy(job);
  return err;
}

/* ---- what only the command line judges ---- */

/* --stale or --sampling given for a policy that does not read it: name those that do. */
static lbmc_err lbmc_sim_not_for(const lbmc_model *m, const char *setting)
{
  char users[256];
  int count = lbmc_policy_list_using(setting, users, sizeof users);
  return LBMC_ERROR(LBMC_ERR_ARG, "--%s: applies only to polic%s %s, not to %s", setting,
                    count > 1 ? "ies" : "y", users, lbmc_model_policy(m));
}

/* The point's model under o: its size for the engines, a warning for each pool whose
 * service distribution makes the means converge slowly or not at all (and, with --pairs,
 * for each pool of one server: no pair within it), and --stale or
 * --sampling given for a policy that does not read it (a job file ignores them). */
static lbmc_err lbmc_sim_judge(const lbmc_sim_args *a, const lbmc_model *m,
                               const lbmc_run_options *o)
{
  LBMC_CALL(
      lbmc_run_check_size(m, o, o->transient[2] > 0 ? "--n/--transient" : "--n/--time/--warmup"));
  LBMC_CALL(lbmc_run_check_pairs(m, o, "--"));
  if (a->given[LBMC_IN_TRANSIENT] && (a->given[LBMC_IN_TIME] || a->given[LBMC_IN_WARMUP]))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--%s: not allowed with --transient (a transient run is observed from 0 to "
                      "T1 of T0:T1:DT; its warm-up is T0): leave it out",
                      a->given[LBMC_IN_TIME] ? "time" : "warmup");
  for (int j = 0; j < lbmc_model_pools(m); j++) {
    const char *w = lbmc_service_warning(lbmc_model_service(m, j));
    if (w)
      fprintf(stderr, "lbmc: warning: pool %d, service %s: %s\n", j + 1,
              lbmc_model_service(m, j)->text, w);
  }
  for (int j = 0; o->pairs && j < lbmc_model_pools(m); j++)
    if (lbmc_model_pool_servers(m, j) < 2)
      fprintf(stderr,
              "lbmc: warning: --pairs: pool %d has 1 server: the pair statistics within it "
              "(pair_tv, pair_corr, its joint law) need two servers and stay empty (no data)\n",
              j + 1);
  if (a->given[LBMC_IN_STALE] && !*lbmc_model_stale(m)) return lbmc_sim_not_for(m, "stale");
  if (a->given[LBMC_IN_SAMPLING] && !*lbmc_model_sampling(m))
    return lbmc_sim_not_for(m, "sampling");
  return LBMC_SUCCESS;
}

/* --precision M:REL: the settings of run.precision (--max-replicas, --max-time given with
 * the other flags, or lbmc sim's default budget), then the job's precision target. */
static lbmc_err lbmc_sim_precision(const lbmc_sim_args *a, lbmc_job *job)
{
  const lbmc_input_value *v = LBMC_SIM_GIVEN(a, PRECISION_TEXT);
  lbmc_input_value metric = {0}, rel = {0};
  char text[128];
  const char *colon;
  if (!v) {
    if (a->given[LBMC_IN_MAX_REPLICAS] || a->given[LBMC_IN_MAX_TIME])
      return LBMC_ERROR(LBMC_ERR_ARG, "--%s: applies only with --precision",
                        a->given[LBMC_IN_MAX_REPLICAS] ? "max-replicas" : "max-time");
    return LBMC_SUCCESS;
  }
  if (LBMC_SIM_GIVEN(a, TRANSIENT))
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--precision: not with --transient (a transient run has a fixed number of "
                      "replicas: --replicas)");
  colon = strrchr(v->text, ':');
  if (!colon || colon == v->text || strlen(v->text) >= sizeof text)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--precision: '%s' is not allowed; write METRIC:REL, e.g. p_wait:0.05",
                      v->text);
  snprintf(text, sizeof text, "%.*s", (int)(colon - v->text), v->text);
  metric.text = text;
  LBMC_CALL(lbmc_input_parse(&lbmc_inputs[LBMC_IN_RELATIVE], "--precision: REL", colon + 1, &rel));
  LBMC_CALL(lbmc_input_check(&lbmc_inputs[LBMC_IN_RELATIVE], "--precision: REL", &rel));
  LBMC_CALL(lbmc_job_give(job, LBMC_IN_METRIC, 0, "--precision", &metric));
  LBMC_CALL(lbmc_job_give(job, LBMC_IN_RELATIVE, 0, "--precision: REL", &rel));
  if (!a->given[LBMC_IN_MAX_REPLICAS])
    LBMC_CALL(lbmc_sim_give_long(job, LBMC_IN_MAX_REPLICAS, 0, LBMC_SIM_DEFAULT_MAX_REPLICAS));
  return lbmc_job_build_finish(job);
}

/* ---- the command ---- */

/* The flags as a job, its point's model checked as the command line judges it, the
 * precision target, then the run (sim_run.c). */
static lbmc_err lbmc_sim_main(int argc, char **argv, int *help)
{
  lbmc_sim_args a;
  lbmc_job *job = NULL;
  lbmc_model *m = NULL;
  lbmc_run_options o;
  const char *engine = NULL;
  int progress = LBMC_SIM_PROGRESS_AUTO;
  double every = NAN; /* the default */
  lbmc_err err = LBMC_SUCCESS;
  LBMC_CALL(lbmc_sim_parse(argc, argv, &a, help));
  if (*help) return LBMC_SUCCESS;
  if (a.given[LBMC_IN_PROGRESS])
    LBMC_CALL(
        lbmc_cli_parse_progress("--progress", a.val[LBMC_IN_PROGRESS].text, &progress, &every));
  LBMC_CALL(lbmc_sim_job(&a, &job));
  lbmc_job_point_options(job, 0, &o);
  LBMC_CALL_GOTO(err, lbmc_job_point_model(job, 0, &m), done);
  LBMC_CALL_GOTO(err, lbmc_sim_judge(&a, m, &o), done);
  LBMC_CALL_GOTO(err, lbmc_run_check_engine(m, &o, "--", &engine), done);
  LBMC_CALL_GOTO(err, lbmc_sim_precision(&a, job), done);
  LBMC_CALL_GOTO(err, lbmc_stream_check_capacity(1, lbmc_job_replicas_max(job)), done);
  if (lbmc_job_output(job)) { /* before anything runs: the path, and that HDF5 can write there
                                 (a read-only file system passes access() as root) */
    LBMC_CALL_GOTO(err, lbmc_check_output_path(lbmc_job_output(job), NULL, 0), done);
    LBMC_CALL_GOTO(err,
                   lbmc_results_probe(lbmc_job_output(job),
                                      lbmc_results_bytes(1, lbmc_job_replicas_max(job),
                                                         lbmc_model_pools(m), (int)o.tail_k)),
                   done);
  }
  err = lbmc_sim_run_point(job, m, &o, engine, a.given[LBMC_IN_JSON],
                           a.given[LBMC_IN_LIMIT] ? (int)a.val[LBMC_IN_LIMIT].l : LBMC_LIMIT_NONE,
                           progress, every);
done:
  lbmc_model_destroy(&m);
  lbmc_job_destroy(&job);
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
