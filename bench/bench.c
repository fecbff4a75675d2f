/* lbmc-bench: events per second and peak memory of the simulation engines, against n.
 *
 * For each policy, n and engine, a child process (so that the peak memory is its own)
 * simulates one replica through the replica driver (all metrics on, K = 10, tick
 * records, histograms or the occupancy engine's class mixture) with about `events`
 * events in the measured period, after a warm-up, and reports simulated events per CPU
 * second of the measured period and its peak resident memory (getrusage). Events are
 * arrivals plus departures, and for occupancy-ph its phase changes too (their mean number
 * per completion from the law: bench_phase_visits). With two engines (--engine
 * occupancy,servers) the last column is the ratio of their speeds; with --pairs, one
 * engine is run without and with the pair statistics (run.pairs) and the last column is
 * the ratio of the speeds without to with them.
 *
 * Run by hand: build/bench/lbmc-bench [--events E] [--lambda L] [--pools LIST]
 *                [--n N1,N2,...] [--policies P1;P2;...] [--service SPEC]
 *                [--engine E1[,E2]] [--init empty|meanfield] [--warmup T]
 *                [--servers-max N] [--precision [--metric NAME]] [--pairs]
 * --engine: auto or an engine of the registry (default servers; --service selects
 *   general service, hence the general engine). n may be written 1e9; the per-server
 *   engines are run only up to --servers-max (default 10^7).
 * --init meanfield starts the occupancy engine at the mean-field point (warm-up 0 unless
 *   --warmup is given); otherwise the warm-up is --warmup or max(20, 0.2 x the measured
 *   time).
 *   When the engine has no mean-field start, replicas start empty, with the empty
 *   start's warm-up, and a note says so.
 * Each figure names the engine that ran and the verdict of its point (docs/model.md,
 * "Verdicts"): a speed is a speed whatever the verdict, but a run that is not `ok` is
 * marked.
 * --precision: instead, the cost per unit of precision of the first policy with the
 *   first engine: 10 replicas of about E events each (init as given; from the mean-field
 *   point with --init meanfield), the 95% interval of the metric (--metric, a scalar one:
 *   p_wait by default, mean_sojourn, ...) across them, and the CPU seconds a 1% relative
 *   half-width would take (CPU used x (half-width / 1%)^2: the variance falls as 1 / CPU
 *   time). Only from a point whose verdict is ok: for any other the estimate and the cost
 *   are refused (printed as "-") and the reason given, since an interval from a run that
 *   has not reached its steady state measures nothing.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/cli/cli.h"
#include "../src/core/ticks.h"
#include "lbmc/engines.h"
#include "lbmc/metrics.h"
#include "lbmc/point.h"
#include "lbmc/sim.h"

#define BENCH_ENGINES 2
#define BENCH_REPS    10 /* replicas of --precision */
#define BENCH_OUT     5  /* a measurement: ev/s, MiB, events, verdict, started as asked */

typedef struct {
  const char *policy;
  long routers;
} bench_case;

typedef struct {
  double lambda, events, warmup; /* warmup < 0: the default */
  const char *pools, *service;
  int engine[BENCH_ENGINES], engines; /* lbmc_engine_kind */
  int init;                           /* lbmc_init_kind */
  long long servers_max;
  int pairs;          /* 1: each engine column has pairs off, then on (one engine) */
  const char *metric; /* --precision: the metric (a scalar one), default p_wait */
} bench_opts;

static lbmc_model *bench_model(const bench_case *c, long long n, const bench_opts *bo)
{
  double beta[LBMC_MAX_POOLS], mu[LBMC_MAX_POOLS];
  long buffer[LBMC_MAX_POOLS];
  int J;
  lbmc_model *m = NULL;
  lbmc_service svc;
  if (lbmc_cli_parse_pools("--pools", bo->pools, &J, beta, mu, buffer) || lbmc_model_create(&m) ||
      lbmc_model_set_n(m, n) || lbmc_model_set_lambda(m, bo->lambda) ||
      lbmc_model_set_pools(m, J, beta, mu, buffer) || lbmc_model_set_policy(m, c->policy) ||
      lbmc_model_set_routers(m, c->routers) ||
      (bo->service && (lbmc_service_parse("--service", bo->service, &svc) ||
                       lbmc_model_set_service(m, -1, &svc))) ||
      lbmc_model_setup(m)) {
    lbmc_model_destroy(&m);
    return NULL;
  }
  return m;
}

/* The mean number of phases a requirement of the --service law visits, alpha (-T)^-1 D 1
 * with D = diag(-T_pp) (the jump chain's visits: N = (I - P)^-1 = (-T)^-1 D), 1 for
 * exponential service or a law that is not phase-type. The occupancy-ph engine makes
 * one event per visit (phase changes and the completion), the tick records count the
 * completions only: its events are arrivals + departures x visits. */
static double bench_phase_visits(const bench_opts *bo)
{
  lbmc_service svc;
  const double *alpha, *T;
  double a[LBMC_PH_MAX_PHASES][LBMC_PH_MAX_PHASES + 1], visits = 0;
  int m;
  if (!bo->service || lbmc_service_parse("--service", bo->service, &svc)) return 1;
  m = lbmc_service_ph(&svc, &alpha, &T);
  if (m <= 1) return 1;
  for (int i = 0; i < m; i++) { /* x (-T) = alpha as (-T)^t x = alpha, Gauss-Jordan */
    for (int j = 0; j < m; j++) a[i][j] = -T[j * m + i];
    a[i][m] = alpha[i];
  }
  for (int c = 0; c < m; c++) {
    int piv = c;
    for (int i = c + 1; i < m; i++)
      if (fabs(a[i][c]) > fabs(a[piv][c])) piv = i;
    for (int j = 0; j <= m; j++) {
      double t = a[c][j];
      a[c][j] = a[piv][j];
      a[piv][j] = t;
    }
    for (int i = 0; i < m; i++) {
      const double f = i == c ? 0 : a[i][c] / a[c][c];
      for (int j = c; j <= m; j++) a[i][j] -= f * a[c][j];
    }
  }
  for (int p = 0; p < m; p++) visits += a[p][m] / a[p][p] * -T[p * m + p];
  return visits;
}

/* Run options of one measurement: about `events` events in the measured period; init:
 * the start the replicas get (the asked one, or empty where it does not apply). */
static void bench_options(const bench_opts *bo, int engine, long long n, int init,
                          lbmc_run_options *o)
{
  lbmc_run_options_default(o);
  o->pairs = engine < 0; /* bench_column: the first engine with the pair statistics */
  if (engine < 0) engine = bo->engine[0];
  o->time = bo->events / (2.0 * bo->lambda * (double)n); /* events ~ 2 lambda n T */
  if (bo->warmup >= 0)
    o->warmup = bo->warmup;
  else
    o->warmup = init == LBMC_INIT_MEANFIELD ? 0 : fmax(20.0, 0.2 * o->time);
  o->engine = engine;
  o->init = bo->init;
}

/* The replica of a measurement, in *r with its options in *o (kept: r points to them):
 * when the asked start does not apply (the engine starts empty), the empty start's
 * warm-up; *as_asked = 0 then, and the note is printed once to stderr. */
static int bench_replica(const lbmc_model *m, const bench_opts *bo, int engine, long long n,
                         lbmc_run_options *o, lbmc_replica **r, int *as_asked)
{
  bench_options(bo, engine, n, bo->init, o);
  if (lbmc_replica_create(m, o, r)) return 1;
  *as_asked = !*lbmc_replica_init_note(*r);
  if (!*as_asked) bench_options(bo, engine, n, LBMC_INIT_EMPTY, o);
  return 0;
}

/* One replica: out = {events per CPU second, peak MiB, events, the point's status, 1 if
 * it started as asked}. Returns 0 on success. */
static int bench_one(const bench_case *c, long long n, const bench_opts *bo, int engine,
                     double out[BENCH_OUT])
{
  lbmc_model *m = bench_model(c, n, bo);
  lbmc_run_options o;
  lbmc_replica *r = NULL;
  lbmc_point *p = NULL;
  lbmc_point_replica_info info;
  lbmc_unit u = {0, 0, 0, 1, 1, 0, 0};
  const void *rec;
  size_t size;
  struct rusage ru;
  int bad, used, as_asked = 1;
  if (!m) return 1;
  bad = bench_replica(m, bo, engine, n, &o, &r, &as_asked) ||
        lbmc_replica_record(r, &u, &rec, &size) || lbmc_point_create(m, &o, 1, &p) ||
        lbmc_point_add(p, rec, size, &used) || lbmc_point_reduce(p, 1);
  if (!bad) {
    getrusage(RUSAGE_SELF, &ru);
    bad = lbmc_point_replica(p, 0, &info) != LBMC_SUCCESS;
  }
  if (!bad) {
    double events = (double)info.events;
    if (engine == LBMC_ENGINE_OCCUPANCY_PH) /* its phase changes are events too */
      events += (bench_phase_visits(bo) - 1) * info.sums[LBMC_TK_DEPARTURES];
    out[0] = events / info.cpu_seconds;
    out[1] = (double)ru.ru_maxrss / 1024.0;
    out[2] = events;
    out[3] = lbmc_point_verdict(p)->status;
    out[4] = as_asked;
    bad = lbmc_point_verdict(p)->status == LBMC_STATUS_UNSTABLE || info.unstable;
  }
  lbmc_point_destroy(&p);
  lbmc_replica_destroy(&r);
  lbmc_model_destroy(&m);
  return bad;
}

/* bench_one in a child process (its own peak memory); NaN on failure. */
static void bench_child(const bench_case *c, long long n, const bench_opts *bo, int engine,
                        double out[BENCH_OUT])
{
  int fd[2];
  pid_t pid;
  for (int k = 0; k < BENCH_OUT; k++) out[k] = NAN;
  if (pipe(fd) != 0) return;
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    int bad = bench_one(c, n, bo, engine, out);
    if (write(fd[1], out, sizeof(double) * BENCH_OUT) != (ssize_t)(sizeof(double) * BENCH_OUT))
      bad = 1;
    _exit(bad);
  }
  close(fd[1]);
  if (read(fd[0], out, sizeof(double) * BENCH_OUT) != (ssize_t)(sizeof(double) * BENCH_OUT))
    out[0] = NAN;
  close(fd[0]);
  waitpid(pid, NULL, 0);
}

/* --precision: CPU seconds for a 1% relative half-width on bo->metric at n (the point's
 * pooled estimate and interval over BENCH_REPS replicas), only from a point that is ok. */
static int bench_precision(const bench_case *c, long long n, const bench_opts *bo)
{
  lbmc_model *m = bench_model(c, n, bo);
  lbmc_run_options o;
  lbmc_replica *r = NULL;
  lbmc_point *p = NULL;
  lbmc_point_replica_info info;
  const lbmc_estimates *e;
  double cpu = 0, mean, hw;
  size_t pw;
  int bad, as_asked = 1;
  if (!m) return 1;
  bad = bench_replica(m, bo, bo->engine[0], n, &o, &r, &as_asked) ||
        lbmc_point_create(m, &o, BENCH_REPS, &p);
  pw = lbmc_metric_offset(lbmc_metric_find(bo->metric), lbmc_model_pools(m), (int)o.tail_k);
  for (int i = 0; !bad && i < BENCH_REPS; i++) {
    lbmc_unit u = {0, 0, i, BENCH_REPS, 1, 0, 0};
    const void *rec;
    size_t size;
    int used;
    bad = lbmc_replica_record(r, &u, &rec, &size) || lbmc_point_add(p, rec, size, &used);
  }
  bad = bad || lbmc_point_reduce(p, BENCH_REPS);
  if (!bad) {
    const lbmc_verdict *v = lbmc_point_verdict(p);
    for (int i = 0; i < BENCH_REPS; i++) {
      if (lbmc_point_replica(p, i, &info) != LBMC_SUCCESS) { /* a row lost: no figure */
        cpu = NAN;
        break;
      }
      cpu += info.cpu_seconds;
    }
    e = lbmc_point_estimates(p);
    mean = e->estimate[pw];
    hw = e->half_width[pw];
    printf("%-8s %3ld %14lld %-10s %-14s ", c->policy, c->routers, n, lbmc_replica_engine(r),
           lbmc_status_name(v->status));
    if (v->status == LBMC_STATUS_OK)
      printf("%10.6f %10.2e %10.2f %14.3g\n", mean, hw, cpu, cpu * pow(hw / (0.01 * mean), 2));
    else
      printf("%10s %10s %10.2f %14s\n  refused: %s%s%s\n", "-", "-", cpu, "-",
             lbmc_status_name(v->status), *v->reason ? ": " : "", v->reason);
    if (!as_asked) printf("  note: %s\n", lbmc_replica_init_note(r));
    fflush(stdout);
  }
  lbmc_point_destroy(&p);
  lbmc_replica_destroy(&r);
  lbmc_model_destroy(&m);
  return bad;
}

/* The engine kinds of a ","-separated list; returns their number, 0 on a bad name. */
static int bench_engines(const char *text, int *kinds)
{
  char buf[128];
  int count = 0;
  snprintf(buf, sizeof buf, "%s", text);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int k = lbmc_engine_kind_find(tok);
    if (k < 0 || count == BENCH_ENGINES) return 0;
    kinds[count++] = k;
  }
  return count;
}

static void bench_usage(void)
{
  char engines[256];
  printf("usage: lbmc-bench [--events E] [--lambda L] [--pools LIST] [--n N1,N2,..]\n"
         "  [--policies 'random;jsq(2);pull/3'] (pull/3 = pull with 3 routers) [--service SPEC]\n"
         "  [--engine E1[,E2]] (%s) [--init empty|meanfield]\n"
         "  [--warmup T] [--servers-max N] [--precision [--metric NAME]] [--pairs] (one engine\n"
         "  without and with the pair statistics)\n",
         lbmc_engine_names(engines, sizeof engines, 1, ", ", ", "));
}

/* Parse the command line into bo, ns, cases; returns -1 to go on, else an exit code. */
static int bench_args(int argc, char **argv, bench_opts *bo, char *ns, size_t nslen,
                      bench_case *cases, int *ncases, int *precision)
{
  static const struct option opts[] = {{"events", required_argument, 0, 'e'},
                                       {"lambda", required_argument, 0, 'l'},
                                       {"pools", required_argument, 0, 'p'},
                                       {"n", required_argument, 0, 'n'},
                                       {"policies", required_argument, 0, 'P'},
                                       {"service", required_argument, 0, 'S'},
                                       {"engine", required_argument, 0, 'E'},
                                       {"init", required_argument, 0, 'I'},
                                       {"warmup", required_argument, 0, 'w'},
                                       {"servers-max", required_argument, 0, 's'},
                                       {"precision", no_argument, 0, 'r'},
                                       {"pairs", no_argument, 0, 'q'},
                                       {"metric", required_argument, 0, 'm'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  static char policies[512];
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'e': bo->events = atof(optarg); break;
    case 'l': bo->lambda = atof(optarg); break;
    case 'p': bo->pools = optarg; break;
    case 'S': bo->service = optarg; break;
    case 'n': snprintf(ns, nslen, "%s", optarg); break;
    case 'P': snprintf(policies, sizeof policies, "%s", optarg), *ncases = -1; break;
    case 'E':
      if (!(bo->engines = bench_engines(optarg, bo->engine))) return bench_usage(), 2;
      break;
    case 'I': bo->init = strcmp(optarg, "meanfield") == 0; break;
    case 'w': bo->warmup = atof(optarg); break;
    case 's': bo->servers_max = (long long)atof(optarg); break;
    case 'r': *precision = 1; break;
    case 'q': bo->pairs = 1; break;
    case 'm':
      if (lbmc_metric_find(optarg) < 0 ||
          lbmc_metric_get(lbmc_metric_find(optarg))->shape != LBMC_SHAPE_SCALAR)
        return bench_usage(), 2;
      bo->metric = optarg;
      break;
    default: bench_usage(); return c == 'h' ? 0 : 2;
    }
  }
  if (*ncases < 0) {
    *ncases = 0;
    for (char *s = NULL, *tok = strtok_r(policies, ";", &s); tok && *ncases < 16;
         tok = strtok_r(NULL, ";", &s)) {
      char *slash = strchr(tok, '/');
      cases[*ncases].routers = slash ? atol(slash + 1) : 1;
      if (slash) *slash = '\0';
      cases[(*ncases)++].policy = tok;
    }
  }
  return -1;
}

int main(int argc, char **argv)
{
  bench_opts bo = {0.9, 2e7, -1,       "1:1:inf", NULL,    {LBMC_ENGINE_SERVERS},
                   1,   0,   10000000, 0,         "p_wait"};
  char ns[512] = "1000,10000,100000,1000000";
  bench_case cases[16] = {{"random", 1}, {"jsq(2)", 1}, {"pull", 1}, {"pull", 3}};
  int ncases = 4, precision = 0, code;
  if ((code = bench_args(argc, argv, &bo, ns, sizeof ns, cases, &ncases, &precision)) >= 0)
    return code;
  if (bo.pairs) { /* the engine, then the same engine with the pair statistics (kind -1) */
    bo.engines = 2;
    bo.engine[1] = -1;
  }
  printf("lbmc-bench: lambda = %g, pools %s, ~%.3g events per run, K = 10, all metrics, %s "
         "service, init %s\n",
         bo.lambda, bo.pools, bo.events, bo.service ? bo.service : "exponential",
         lbmc_init_kind_names[bo.init]);
  if (precision) {
    printf("%-8s %3s %14s %-10s %-14s %10s %10s %10s %14s\n", "policy", "R", "n", "engine",
           "verdict", bo.metric, "half-width", "CPU s", "CPU s for 1%");
    for (char *s = NULL, *tok = strtok_r(ns, ",", &s); tok; tok = strtok_r(NULL, ",", &s))
      if (bench_precision(&cases[0], (long long)atof(tok), &bo)) return 1;
    return 0;
  }
  printf("%-10s %3s %14s", "policy", "R", "n");
  for (int e = 0; e < bo.engines; e++)
    printf(" %10s ev/s %8s MiB %-14s",
           bo.engine[e] < 0 ? "+pairs" : lbmc_engine_kind_name(bo.engine[e]), "", "verdict");
  printf("%s\n", bo.engines > 1 ? "    ratio" : "");
  for (int i = 0; i < ncases; i++) {
    char nbuf[512];
    snprintf(nbuf, sizeof nbuf, "%s", ns);
    for (char *s = NULL, *tok = strtok_r(nbuf, ",", &s); tok; tok = strtok_r(NULL, ",", &s)) {
      long long n = (long long)atof(tok);
      double out[BENCH_ENGINES][BENCH_OUT];
      int empty = 0; /* an engine started empty though --init meanfield was asked */
      printf("%-10s %3ld %14lld", cases[i].policy, cases[i].routers, n);
      for (int e = 0; e < bo.engines; e++) {
        const int kind = bo.engine[e] < 0 ? bo.engine[0] : bo.engine[e];
        int per_server = kind == LBMC_ENGINE_SERVERS || kind == LBMC_ENGINE_GENERAL;
        for (int k = 0; k < BENCH_OUT; k++) out[e][k] = NAN;
        if (!per_server || n <= bo.servers_max)
          bench_child(&cases[i], n, &bo, bo.engine[e], out[e]);
        printf(" %15.4g %12.1f %-14s", out[e][0], out[e][1],
               isnan(out[e][3]) ? "-" : lbmc_status_name((lbmc_status)out[e][3]));
        empty |= out[e][4] == 0;
      }
      if (bo.engines > 1) printf(" %8.2f", out[0][0] / out[1][0]);
      printf("%s\n", empty ? "  (an engine without a mean-field start: started empty)" : "");
      fflush(stdout);
    }
  }
  return 0;
}
