/* lbmc sim: one system from flags, replicas one after another. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lbmc/check.h"
#include "lbmc/metrics.h"
#include "lbmc/rng.h"

static void lbmc_sim_usage(FILE *f)
{
  fputs("usage: lbmc sim --n N --lambda L --pools BETA:MU:BUFFER[,...] [options]\n"
        "\n"
        "Simulate one system and print steady-state estimates with confidence intervals.\n"
        "\n"
        "system:\n"
        "  --n N               number of servers (integer >= 1)\n"
        "  --lambda L          arrival rate per server (> 0); total rate L*N\n"
        "  --pools LIST        pools beta:mu:buffer, comma-separated; beta = fraction of\n"
        "                      servers (sum 1), mu = speed (> 0; 1/3 allowed), buffer =\n"
        "                      customers per server incl. the one in service (>= 1 or inf)\n"
        "  --service SPEC      service requirement distribution (mean 1; the time at a server\n"
        "                      of pool j is requirement / mu_j) for every pool, or one per\n"
        "                      pool separated by ';' (as many as --pools lists):\n"
        "                        exponential (default), deterministic, erlang:k=K,\n"
        "                        hyperexponential:scv=C (C >= 1, balanced means),\n"
        "                        hyperexponential:p=P,r1=A,r2=B (P/A + (1-P)/B = 1),\n"
        "                        lognormal:scv=C, weibull:shape=K (K >= 0.1),\n"
        "                        lomax:shape=A (A > 1; Pareto II)\n"
        "  --mu-k J=R1,...,RL  queue-length-dependent speeds of pool J (1-based): a server\n"
        "                      holding q customers works at speed R_min(q,L); replaces the\n"
        "                      pool's mu from --pools; repeat for other pools (L <= 64)\n"
        "  --policy P          routing policy (default random):\n",
        f);
  lbmc_cli_print_policies(f, "                        ");
  fputs(
      "  --routers R         routers (default 1)\n"
      "  --stale S           pull only: withdraw (default) or keep\n"
      "  --sampling S        jsq(d) only: distinct (default) or with_replacement\n"
      "run:\n"
      "  --replicas R        independent replicas (default 1)\n"
      "  --warmup W          warm-up time discarded (default 100), or auto (MSER-5 within --time)\n"
      "  --time T            measured time per replica (default 1000)\n"
      "  --batches B         batch means per replica (default 20)\n"
      "  --confidence C      interval level (default 0.95)\n"
      "  --seed S            seed 0..2147483647 (default 1)\n"
      "  --tail-k K          tail levels k = 1..K (default 10)\n"
      "  --engine E          auto (default: exponential fast path when it applies) or\n"
      "                      general (the general-service engine, to cross-check)\n"
      "  --max-customers M   runaway cap on customers in the system (default min(1000 n + 1e5, "
      "2^26))\n"
      "output:\n"
      "  --json              one JSON object instead of the table (NaN written as null)\n"
      "  -h, --help          this help\n"
      "\n"
      "Exit status: 0 on success (also for an unstable system, reported as such),\n"
      "2 for bad input, 1 for other failures.\n",
      f);
}

typedef struct {
  long n, routers, replicas, seed;
  double lambda;
  const char *pools, *policy, *stale, *sampling;
  const char *service;              /* --service, NULL if not given */
  const char *mu_k[LBMC_MAX_POOLS]; /* --mu-k values, in command-line order */
  int n_mu_k;
  lbmc_run_options o;
  int json;
} lbmc_sim_args;

enum {
  OPT_N = 256,
  OPT_LAMBDA,
  OPT_POOLS,
  OPT_POLICY,
  OPT_ROUTERS,
  OPT_STALE,
  OPT_SAMPLING,
  OPT_REPLICAS,
  OPT_WARMUP,
  OPT_TIME,
  OPT_BATCHES,
  OPT_CONFIDENCE,
  OPT_SEED,
  OPT_TAILK,
  OPT_MAXCUST,
  OPT_JSON,
  OPT_SERVICE,
  OPT_MU_K,
  OPT_ENGINE
};

static lbmc_err lbmc_sim_parse(int argc, char **argv, lbmc_sim_args *a, int *help)
{
  static const struct option opts[] = {{"n", required_argument, 0, OPT_N},
                                       {"lambda", required_argument, 0, OPT_LAMBDA},
                                       {"pools", required_argument, 0, OPT_POOLS},
                                       {"policy", required_argument, 0, OPT_POLICY},
                                       {"routers", required_argument, 0, OPT_ROUTERS},
                                       {"stale", required_argument, 0, OPT_STALE},
                                       {"sampling", required_argument, 0, OPT_SAMPLING},
                                       {"replicas", required_argument, 0, OPT_REPLICAS},
                                       {"warmup", required_argument, 0, OPT_WARMUP},
                                       {"time", required_argument, 0, OPT_TIME},
                                       {"batches", required_argument, 0, OPT_BATCHES},
                                       {"confidence", required_argument, 0, OPT_CONFIDENCE},
                                       {"seed", required_argument, 0, OPT_SEED},
                                       {"tail-k", required_argument, 0, OPT_TAILK},
                                       {"max-customers", required_argument, 0, OPT_MAXCUST},
                                       {"json", no_argument, 0, OPT_JSON},
                                       {"engine", required_argument, 0, OPT_ENGINE},
                                       {"service", required_argument, 0, OPT_SERVICE},
                                       {"mu-k", required_argument, 0, OPT_MU_K},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  int c, n_given = 0, lambda_given = 0;
  long v;
  memset(a, 0, sizeof *a);
  a->routers = 1;
  a->replicas = 1;
  a->seed = 1;
  a->policy = "random";
  lbmc_run_options_default(&a->o);
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case OPT_N:
      LBMC_CHECK(lbmc_parse_long("--n", optarg, &a->n));
      n_given = 1;
      break;
    case OPT_LAMBDA:
      LBMC_CHECK(lbmc_parse_real("--lambda", optarg, &a->lambda));
      lambda_given = 1;
      break;
    case OPT_POOLS: a->pools = optarg; break;
    case OPT_POLICY: a->policy = optarg; break;
    case OPT_ROUTERS: LBMC_CHECK(lbmc_parse_long("--routers", optarg, &a->routers)); break;
    case OPT_STALE: a->stale = optarg; break;
    case OPT_SAMPLING: a->sampling = optarg; break;
    case OPT_REPLICAS: LBMC_CHECK(lbmc_parse_long("--replicas", optarg, &a->replicas)); break;
    case OPT_WARMUP:
      if (strcmp(optarg, "auto") == 0)
        a->o.warmup_auto = 1;
      else
        LBMC_CHECK(lbmc_parse_real("--warmup", optarg, &a->o.warmup));
      break;
    case OPT_TIME: LBMC_CHECK(lbmc_parse_real("--time", optarg, &a->o.time)); break;
    case OPT_BATCHES: LBMC_CHECK(lbmc_parse_long("--batches", optarg, &a->o.batches)); break;
    case OPT_CONFIDENCE:
      LBMC_CHECK(lbmc_parse_real("--confidence", optarg, &a->o.confidence));
      break;
    case OPT_SEED: LBMC_CHECK(lbmc_parse_long("--seed", optarg, &a->seed)); break;
    case OPT_TAILK: LBMC_CHECK(lbmc_parse_long("--tail-k", optarg, &a->o.tail_k)); break;
    case OPT_MAXCUST:
      LBMC_CHECK(lbmc_parse_long("--max-customers", optarg, &v));
      a->o.max_customers = v;
      break;
    case OPT_JSON: a->json = 1; break;
    case OPT_ENGINE:
      if (strcmp(optarg, "general") == 0)
        a->o.general_engine = 1;
      else if (strcmp(optarg, "auto") != 0)
        return LBMC_ERROR(LBMC_ERR_ARG, "--engine: '%s' is not allowed; allowed: auto, general",
                          optarg);
      break;
    case OPT_SERVICE: a->service = optarg; break;
    case OPT_MU_K:
      if (a->n_mu_k == LBMC_MAX_POOLS)
        return LBMC_ERROR(LBMC_ERR_ARG, "--mu-k: given more than %d times; allowed: once per pool",
                          LBMC_MAX_POOLS);
      a->mu_k[a->n_mu_k++] = optarg;
      break;
    case 'h': *help = 1; return LBMC_SUCCESS;
    case ':':
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: a value is required (see lbmc sim --help)",
                        argv[optind - 1]);
    default:
      return LBMC_ERROR(LBMC_ERR_ARG, "'%s' is not an option of lbmc sim (see lbmc sim --help)",
                        argv[optind - 1]);
    }
  }
  if (optind < argc)
    return LBMC_ERROR(LBMC_ERR_ARG, "'%s': lbmc sim takes no positional arguments (see --help)",
                      argv[optind]);
  if (!n_given) return LBMC_ERROR(LBMC_ERR_ARG, "--n: the number of servers is required");
  if (!lambda_given)
    return LBMC_ERROR(LBMC_ERR_ARG, "--lambda: the arrival rate per server is required");
  if (!a->pools) return LBMC_ERROR(LBMC_ERR_ARG, "--pools: the pools beta:mu:buffer are required");
  LBMC_CHECK(lbmc_check_int_range("--n", a->n, 1, LBMC_MAX_SERVERS));
  LBMC_CHECK(lbmc_check_positive("--lambda", a->lambda));
  LBMC_CHECK(lbmc_check_int_range("--routers", a->routers, 1, LBMC_MAX_ROUTERS));
  LBMC_CHECK(lbmc_check_int_range("--replicas", a->replicas, 1, 1000000));
  LBMC_CHECK(lbmc_check_int_range("--seed", a->seed, 0, LBMC_SEED_MAX));
  LBMC_CHECK(lbmc_run_options_check(&a->o, "--"));
  return LBMC_SUCCESS;
}

/* --service SPEC (every pool) or SPEC1;...;SPECJ (one per pool). */
static lbmc_err lbmc_sim_service(const char *text, int J, lbmc_model *m)
{
  char buf[4096], *save = NULL, *tok, where[64];
  lbmc_service svc;
  int count = 1, j = 0;
  for (const char *p = text; *p; p++) count += *p == ';';
  if (count == 1) {
    LBMC_CHECK(lbmc_service_parse("--service", text, &svc));
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
    LBMC_CHECK(lbmc_service_parse(where, tok, &svc));
    LBMC_CHECK(lbmc_model_set_service(m, j, &svc));
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
  LBMC_CHECK(lbmc_parse_long("--mu-k: pool", buf, &pool));
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
    LBMC_CHECK(lbmc_parse_real(where, tok, &rates[L]));
    LBMC_CHECK(lbmc_check_positive(where, rates[L]));
    L++;
  }
  return lbmc_model_set_rates(m, (int)pool - 1, L, rates);
}

static lbmc_err lbmc_sim_model(const lbmc_sim_args *a, lbmc_model *m)
{
  double beta[LBMC_MAX_POOLS], mu[LBMC_MAX_POOLS];
  long buffer[LBMC_MAX_POOLS];
  int J;
  LBMC_CHECK(lbmc_cli_parse_pools("--pools", a->pools, &J, beta, mu, buffer));
  LBMC_CHECK(lbmc_model_set_origin(m, "command line"));
  LBMC_CHECK(lbmc_model_set_n(m, a->n));
  LBMC_CHECK(lbmc_model_set_lambda(m, a->lambda));
  LBMC_CHECK(lbmc_model_set_pools(m, J, beta, mu, buffer));
  {
    int seen[LBMC_MAX_POOLS] = {0};
    for (int i = 0; i < a->n_mu_k; i++) LBMC_CHECK(lbmc_sim_mu_k(a->mu_k[i], J, seen, m));
  }
  if (a->service) LBMC_CHECK(lbmc_sim_service(a->service, J, m));
  LBMC_CHECK(lbmc_model_set_policy(m, a->policy));
  LBMC_CHECK(lbmc_model_set_routers(m, a->routers));
  if (a->stale) LBMC_CHECK(lbmc_model_set_stale(m, a->stale));
  if (a->sampling) LBMC_CHECK(lbmc_model_set_sampling(m, a->sampling));
  LBMC_CHECK(lbmc_model_setup(m));
  LBMC_CHECK(lbmc_run_check_size(m, &a->o, "--time/--warmup"));
  for (int j = 0; j < J; j++) {
    const char *w = lbmc_service_warning(lbmc_model_service(m, j));
    if (w) fprintf(stderr, "lbmc: warning: pool %d, service %s: %s\n", j + 1, lbmc_model_service(m, j)->text, w);
  }
  if (a->stale && !*lbmc_model_stale(m))
    return LBMC_ERROR(LBMC_ERR_ARG, "--stale: applies only to policy pull, not to %s",
                      lbmc_model_policy(m));
  if (a->sampling && !*lbmc_model_sampling(m))
    return LBMC_ERROR(LBMC_ERR_ARG, "--sampling: applies only to policy jsq(d), not to %s",
                      lbmc_model_policy(m));
  return LBMC_SUCCESS;
}

static json_t *lbmc_json_num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *lbmc_json_metric(const double *x, lbmc_shape shape, int J, long K)
{
  json_t *a;
  if (shape == LBMC_SHAPE_SCALAR) return lbmc_json_num(x[0]);
  a = json_array();
  if (shape == LBMC_SHAPE_QUANTILE) {
    for (int i = 0; i < LBMC_QUANTILES; i++) json_array_append_new(a, lbmc_json_num(x[i]));
    return a;
  }
  for (int j = 0; j < J; j++) {
    if (shape == LBMC_SHAPE_POOL) {
      json_array_append_new(a, lbmc_json_num(x[j]));
    } else {
      json_t *row = json_array();
      for (long k = 0; k < K; k++) json_array_append_new(row, lbmc_json_num(x[(size_t)j * K + k]));
      json_array_append_new(a, row);
    }
  }
  return a;
}

static void lbmc_sim_print_json(const lbmc_sim_args *a, const lbmc_model *m, lbmc_status status,
                                const char *reason, const double *mean, const double *hw,
                                const double *se, int64_t events, double cpu, double warmup)
{
  const int J = lbmc_model_pools(m);
  json_t *root = json_object(), *est = json_object(), *model = json_object(), *pools = json_array();
  json_object_set_new(root, "status", json_string(lbmc_status_name(status)));
  if (reason && *reason) json_object_set_new(root, "reason", json_string(reason));
  for (int i = 0; i < LBMC_METRICS; i++) {
    const lbmc_metric_info *info = lbmc_metric_get(i);
    size_t off = lbmc_metric_offset(i, J, (int)a->o.tail_k);
    json_t *e = json_object();
    json_object_set_new(e, "mean", lbmc_json_metric(mean + off, info->shape, J, a->o.tail_k));
    json_object_set_new(e, "half_width", lbmc_json_metric(hw + off, info->shape, J, a->o.tail_k));
    json_object_set_new(e, "std_err", lbmc_json_metric(se + off, info->shape, J, a->o.tail_k));
    json_object_set_new(est, info->name, e);
  }
  json_object_set_new(root, "estimates", est);
  json_object_set_new(root, "replicas", json_integer(a->replicas));
  json_object_set_new(root, "events", json_integer(events));
  json_object_set_new(root, "cpu_seconds", json_real(cpu));
  json_object_set_new(root, "warmup", lbmc_json_num(warmup));
  json_object_set_new(model, "n", json_integer(lbmc_model_n(m)));
  json_object_set_new(model, "lambda", json_real(lbmc_model_lambda(m)));
  json_object_set_new(model, "rho", json_real(lbmc_model_rho(m)));
  json_object_set_new(model, "policy", json_string(lbmc_model_policy(m)));
  json_object_set_new(model, "routers", json_integer(lbmc_model_routers(m)));
  json_object_set_new(model, "stale", json_string(lbmc_model_stale(m)));
  json_object_set_new(model, "sampling", json_string(lbmc_model_sampling(m)));
  for (int j = 0; j < J; j++) {
    json_t *p = json_object();
    json_object_set_new(p, "beta", json_real(lbmc_model_beta(m, j)));
    json_object_set_new(p, "mu", json_real(lbmc_model_mu(m, j)));
    json_object_set_new(p, "buffer",
                        lbmc_model_buffer(m, j) == LBMC_BUFFER_INF
                            ? json_string("inf")
                            : json_integer(lbmc_model_buffer(m, j)));
    json_object_set_new(p, "servers", json_integer(lbmc_model_pool_servers(m, j)));
    {
      const lbmc_service *svc = lbmc_model_service(m, j);
      const double *rates;
      int L = lbmc_model_rates(m, j, &rates);
      json_t *speeds = json_array();
      json_object_set_new(p, "service", json_string(svc->text));
      json_object_set_new(p, "scv", lbmc_json_num(svc->scv)); /* null if infinite */
      for (int k = 0; k < L; k++) json_array_append_new(speeds, json_real(rates[k]));
      json_object_set_new(p, "mu_k", speeds);
    }
    json_array_append_new(pools, p);
  }
  json_object_set_new(model, "pools", pools);
  json_object_set_new(root, "model", model);
  json_object_set_new(root, "seed", json_integer(a->seed));
  json_object_set_new(root, "confidence", json_real(a->o.confidence));
  {
    json_t *levels = json_array();
    for (int i = 0; i < LBMC_QUANTILES; i++)
      json_array_append_new(levels, json_real(lbmc_quantile_level(i)));
    json_object_set_new(root, "quantile_levels", levels);
  }
  json_dumpf(root, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
  fputc('\n', stdout);
  json_decref(root);
}

/* Run the replicas (values: R x total, batch: batches x total) and judge stability. */
static lbmc_err lbmc_sim_replicas(const lbmc_sim_args *a, const lbmc_model *m, size_t total,
                                  double *values, double *batch, lbmc_status *status, char *reason,
                                  size_t rlen, int64_t *events, double *cpu, double *warmup)
{
  lbmc_replica *rep = NULL;
  lbmc_replica_result res;
  double *growth = malloc(sizeof *growth * (size_t)a->replicas);
  int8_t *unstable = malloc(sizeof *unstable * (size_t)a->replicas);
  int surely = lbmc_model_surely_unstable(m);
  lbmc_err err = LBMC_SUCCESS;
  *status = LBMC_STATUS_OK;
  *events = 0;
  *cpu = 0;
  *warmup = surely ? NAN : 0;
  if (!growth || !unstable) err = LBMC_ERROR(LBMC_ERR_MEMORY, "out of memory");
  if (!err) err = lbmc_stream_check_capacity(1, a->replicas);
  if (!err && !surely) err = lbmc_replica_create(m, &a->o, &rep);
  for (long r = 0; !err && !surely && r < a->replicas; r++) {
    res.values = values + (size_t)r * total;
    res.batch_values = r == 0 ? batch : NULL;
    err = lbmc_replica_run(rep, 0, r, a->replicas, a->seed, &res);
    *events += res.events;
    *cpu += res.cpu_seconds;
    *warmup += res.warmup / (double)a->replicas;
    growth[r] = res.growth;
    unstable[r] = res.status == LBMC_STATUS_UNSTABLE;
  }
  if (!err && lbmc_point_unstable(&a->o, surely, lbmc_model_rho(m), surely ? 0 : a->replicas,
                                  unstable, growth, reason, rlen))
    *status = LBMC_STATUS_UNSTABLE;
  lbmc_replica_destroy(&rep);
  free(growth);
  free(unstable);
  return err;
}

static lbmc_err lbmc_sim_main(int argc, char **argv, int *help)
{
  lbmc_sim_args a;
  lbmc_model *m = NULL;
  double *values = NULL, *batch = NULL, *mean = NULL, *hw = NULL, *se = NULL, cpu, warmup;
  int64_t events;
  lbmc_status status;
  char reason[256] = "";
  size_t total;
  lbmc_err err = LBMC_SUCCESS;

  LBMC_CHECK(lbmc_sim_parse(argc, argv, &a, help));
  if (*help) return LBMC_SUCCESS;
  LBMC_CHECK(lbmc_model_create(&m));
  LBMC_CHECK_GOTO(err, lbmc_sim_model(&a, m), done);
  total = lbmc_metric_total(lbmc_model_pools(m), (int)a.o.tail_k);
  values = malloc(sizeof *values * total * (size_t)a.replicas);
  batch = malloc(sizeof *batch * total * (size_t)a.o.batches);
  mean = malloc(sizeof *mean * total * 3);
  if (!values || !batch || !mean) {
    err = LBMC_ERROR(LBMC_ERR_MEMORY, "out of memory for %ld replicas", a.replicas);
    goto done;
  }
  hw = mean + total;
  se = hw + total;
  LBMC_CHECK_GOTO(err,
                  lbmc_sim_replicas(&a, m, total, values, batch, &status, reason, sizeof reason,
                                    &events, &cpu, &warmup),
                  done);
  lbmc_estimate(values, a.replicas, a.replicas == 1 ? batch : NULL, a.o.batches, total,
                a.o.confidence, mean, hw, se);
  if (status == LBMC_STATUS_UNSTABLE)
    for (size_t i = 0; i < 3 * total; i++) mean[i] = NAN; /* mean, hw, se are contiguous */
  if (a.json) {
    lbmc_sim_print_json(&a, m, status, reason, mean, hw, se, events, cpu, warmup);
  } else {
    lbmc_cli_print_model(stdout, m);
    printf("run: %ld replica%s, warm-up %s%.6g, measured time %.6g, %ld batches, seed %ld\n",
           a.replicas, a.replicas > 1 ? "s" : "", a.o.warmup_auto ? "auto (MSER-5), mean " : "",
           warmup, a.o.warmup_auto ? a.o.time - warmup : a.o.time, a.o.batches, a.seed);
    printf("status: %s%s%s\n", lbmc_status_name(status), *reason ? ": " : "", reason);
    printf("estimates (%.0f%% intervals, %s):\n", 100 * a.o.confidence,
           a.replicas > 1 ? "across replicas" : "batch means of one replica");
    lbmc_cli_print_estimates(stdout, m, a.o.tail_k, mean, hw, se);
    printf("events: %lld after warm-up in %.3f CPU s (%.3g events/s)\n", (long long)events, cpu,
           cpu > 0 ? (double)events / cpu : 0.0);
  }
done:
  free(values);
  free(batch);
  free(mean);
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
  return lbmc_exit_status(err);
}
