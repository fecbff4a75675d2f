/* lbmc-bench-occ: events per second and peak memory of the occupancy engine (issue 10)
 * against n, beside the per-server engine where it fits, calling the engines directly
 * (phase 1 of issue 10: lbmc-bench drives replicas, which do not know the occupancy
 * engine yet).
 *
 * For each policy and n, a child process (so that the peak memory is its own) starts a
 * replica at the mean-field point (occupancy; the per-server engine starts empty and
 * warms up for `warmup` time units), then simulates about `events` events with every
 * metric on (K = 10, tick records, the sojourn/wait mixture or histograms) and reports
 * events per CPU second of that period and the peak resident memory (getrusage).
 *
 * usage: lbmc-bench-occ [--events E] [--lambda L] [--pools LIST] [--n N1,N2,...]
 *                       [--policies 'jsq(2);pull;pull/3'] [--servers-max N] [--warmup T]
 *                       [--precision]
 * --servers-max: largest n run with the per-server engine too (default 10^6; 0: none).
 * --precision: instead, the cost per unit of precision of the first policy: 10 replicas
 *   of about E events each from the mean-field start (no warm-up), the 95% interval
 *   of p_wait across them, and the CPU seconds a 1% relative half-width would take
 *   (CPU used x (half-width / 1%)^2: the variance falls as 1 / (CPU time)).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/cli/cli.h"
#include "../src/core/model_impl.h"
#include "../src/engine/engine.h"
#include "../src/engine/hist.h"
#include "../src/engine/occupancy.h"
#include "../src/engine/ticks.h"
#include "lbmc/rng.h"

#define BENCH_K    10
#define BENCH_SEED 1L

typedef struct {
  double lambda, events, warmup;
  const char *pools;
  long long servers_max;
} bench_opts;

static double bench_cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static lbmc_model *bench_model(const char *policy, long routers, long long n, const bench_opts *bo)
{
  double beta[LBMC_MAX_POOLS], mu[LBMC_MAX_POOLS];
  long buffer[LBMC_MAX_POOLS];
  int J;
  lbmc_model *m = NULL;
  if (lbmc_cli_parse_pools("--pools", bo->pools, &J, beta, mu, buffer) || lbmc_model_create(&m) ||
      lbmc_model_set_n(m, 1000) || lbmc_model_set_lambda(m, bo->lambda) ||
      lbmc_model_set_pools(m, J, beta, mu, buffer) || lbmc_model_set_policy(m, policy) ||
      lbmc_model_set_routers(m, routers))
    return NULL;
  m->n = (long)n; /* beyond the per-server limit: the occupancy engine's */
  return lbmc_model_setup(m) ? NULL : m;
}

/* Occupancy engine: events/s over about bo->events events after a mean-field start. */
static int bench_occ(const lbmc_model *m, const bench_opts *bo, double *rate, double *events)
{
  const lbmc_engine_type *E = &lbmc_engine_occupancy;
  lbmc_stream streams[LBMC_PURPOSES];
  lbmc_mixture *mix = NULL;
  void *ws = NULL;
  char note[256];
  double *rec = malloc(sizeof *rec * lbmc_tick_width(m->J, BENCH_K));
  double T = bo->events / (2 * m->lambda * (double)m->n), t0 = T / 10, cpu, sum = 0;
  memset(streams, 0, sizeof streams);
  for (int p = 0; p < LBMC_PURPOSES; p++)
    if (lbmc_stream_init(&streams[p], p, BENCH_SEED)) return 1;
  if (!rec || E->create(m, BENCH_K, UINT64_MAX, &ws) ||
      E->set_init(ws, LBMC_INIT_MEANFIELD, note, sizeof note) || lbmc_mixture_create_for(m, &mix) ||
      E->reset(ws, streams) || E->advance(ws, t0, NULL))
    return 1;
  E->set_mixture(ws, mix);
  cpu = bench_cpu();
  for (int i = 1; i <= 20; i++) { /* 20 ticks: the tick records of a replica */
    if (E->advance(ws, t0 + T * i / 20, rec)) return 1;
    sum += rec[LBMC_TK_ARRIVALS] + rec[LBMC_TK_DEPARTURES];
  }
  *rate = sum / (bench_cpu() - cpu);
  *events = sum;
  E->destroy(&ws);
  lbmc_mixture_destroy(&mix);
  for (int p = 0; p < LBMC_PURPOSES; p++) lbmc_stream_free(&streams[p]);
  free(rec);
  return 0;
}

/* Per-server engine: events/s after an empty start and bo->warmup time units. */
static int bench_servers(const lbmc_model *m, const bench_opts *bo, double *rate, double *events)
{
  lbmc_engine *e = NULL;
  int gennum[LBMC_PURPOSES] = {0, 1, 2, 3};
  uint64_t *hist = calloc(2 * LBMC_HIST_BINS, sizeof *hist);
  double *rec = malloc(sizeof *rec * lbmc_tick_width(m->J, BENCH_K));
  double T = bo->events / (2 * m->lambda * (double)m->n), cpu, sum = 0;
  if (!hist || !rec || lbmc_engine_create(m, BENCH_K, UINT64_MAX, 0, &e) ||
      lbmc_engine_reset(e, gennum, BENCH_SEED) || lbmc_engine_advance(e, bo->warmup, NULL))
    return 1;
  lbmc_engine_set_histograms(e, hist, hist + LBMC_HIST_BINS);
  cpu = bench_cpu();
  for (int i = 1; i <= 20; i++) {
    if (lbmc_engine_advance(e, bo->warmup + T * i / 20, rec)) return 1;
    sum += rec[LBMC_TK_ARRIVALS] + rec[LBMC_TK_DEPARTURES];
  }
  *rate = sum / (bench_cpu() - cpu);
  *events = sum;
  lbmc_engine_destroy(&e);
  free(hist);
  free(rec);
  return 0;
}

/* --precision: CPU seconds for a 1% relative half-width on p_wait at n. */
static int bench_precision(const char *policy, long routers, long long n, const bench_opts *bo)
{
  enum { REPS = 10 };
  const lbmc_engine_type *E = &lbmc_engine_occupancy;
  lbmc_model *m = bench_model(policy, routers, n, bo);
  lbmc_stream streams[LBMC_PURPOSES];
  void *ws = NULL;
  char note[256];
  double *rec, x[REPS], mean = 0, var = 0, cpu = 0, warm, T, hw;
  if (!m || E->create(m, BENCH_K, UINT64_MAX, &ws) ||
      E->set_init(ws, LBMC_INIT_MEANFIELD, note, sizeof note))
    return 1;
  rec = malloc(sizeof *rec * lbmc_tick_width(m->J, BENCH_K));
  memset(streams, 0, sizeof streams);
  warm = 0; /* the mean-field start */
  T = bo->events / (2 * m->lambda * (double)m->n);
  for (int r = 0; r < REPS; r++) {
    double c0;
    for (int p = 0; p < LBMC_PURPOSES; p++)
      if (lbmc_stream_init(&streams[p], r * LBMC_PURPOSES + p, BENCH_SEED)) return 1;
    c0 = bench_cpu();
    if (E->reset(ws, streams) || E->advance(ws, warm + T, rec)) return 1;
    cpu += bench_cpu() - c0;
    x[r] = rec[LBMC_TK_WAITED] / rec[LBMC_TK_ARRIVALS];
    mean += x[r] / REPS;
  }
  for (int r = 0; r < REPS; r++) var += (x[r] - mean) * (x[r] - mean) / (REPS - 1);
  hw = 2.262157 * sqrt(var / REPS); /* Student t, 9 degrees of freedom, 97.5% */
  printf("%-8s %3ld %14lld %10.6f %10.2e %10.2f %14.3g\n", policy, routers, n, mean, hw, cpu,
         cpu * pow(hw / (0.01 * mean), 2));
  fflush(stdout);
  E->destroy(&ws);
  for (int p = 0; p < LBMC_PURPOSES; p++) lbmc_stream_free(&streams[p]);
  lbmc_model_destroy(&m);
  free(rec);
  return 0;
}

/* Run one measurement in a child process: out = {events/s, peak MiB, events}. */
static void bench_child(const char *policy, long routers, long long n, const bench_opts *bo,
                        int servers, double out[3])
{
  int fd[2];
  pid_t pid;
  out[0] = out[1] = out[2] = NAN;
  if (pipe(fd) != 0) return;
  pid = fork();
  if (pid == 0) {
    struct rusage ru;
    lbmc_model *m = bench_model(policy, routers, n, bo);
    int bad = !m || (servers ? bench_servers(m, bo, &out[0], &out[2])
                             : bench_occ(m, bo, &out[0], &out[2]));
    getrusage(RUSAGE_SELF, &ru);
    out[1] = (double)ru.ru_maxrss / 1024.0;
    if (write(fd[1], out, sizeof(double) * 3) != (ssize_t)(sizeof(double) * 3)) bad = 1;
    _exit(bad);
  }
  close(fd[1]);
  if (read(fd[0], out, sizeof(double) * 3) != (ssize_t)(sizeof(double) * 3)) out[0] = NAN;
  close(fd[0]);
  waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
  static const struct option opts[] = {
      {"events", required_argument, 0, 'e'},   {"lambda", required_argument, 0, 'l'},
      {"pools", required_argument, 0, 'p'},    {"n", required_argument, 0, 'n'},
      {"policies", required_argument, 0, 'P'}, {"servers-max", required_argument, 0, 's'},
      {"warmup", required_argument, 0, 'w'},   {"precision", no_argument, 0, 'r'},
      {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
  bench_opts bo = {0.9, 2e7, 20, "1:1:inf", 1000000};
  char ns[512] = "1000,10000,100000,1000000,10000000,100000000,1000000000,1000000000000";
  char policies[512] = "jsq(2);pull;pull/3";
  int c, precision = 0;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'e': bo.events = atof(optarg); break;
    case 'l': bo.lambda = atof(optarg); break;
    case 'p': bo.pools = optarg; break;
    case 'n': snprintf(ns, sizeof ns, "%s", optarg); break;
    case 'P': snprintf(policies, sizeof policies, "%s", optarg); break;
    case 's': bo.servers_max = atoll(optarg); break;
    case 'w': bo.warmup = atof(optarg); break;
    case 'r': precision = 1; break;
    default:
      printf("usage: lbmc-bench-occ [--events E] [--lambda L] [--pools LIST] [--n N1,N2,..] "
             "[--policies 'jsq(2);pull;pull/3'] [--servers-max N] [--warmup T] [--precision]\n");
      return c == 'h' ? 0 : 2;
    }
  }
  printf("lbmc-bench-occ: lambda = %g, pools %s, ~%.3g events per run, K = %d, all metrics\n",
         bo.lambda, bo.pools, bo.events, BENCH_K);
  if (precision) {
    char *slash = strchr(policies, ';') ? strchr(policies, ';') : policies + strlen(policies);
    long routers = 1;
    *slash = '\0';
    if ((slash = strchr(policies, '/'))) {
      routers = atol(slash + 1);
      *slash = '\0';
    }
    printf("%-8s %3s %14s %10s %10s %10s %14s\n", "policy", "R", "n", "p_wait", "half-width",
           "CPU s", "CPU s for 1%");
    for (char *save = NULL, *tok = strtok_r(ns, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
      if (bench_precision(policies, routers, (long long)atof(tok), &bo)) return 1;
    return 0;
  }
  printf("%-8s %3s %14s %14s %10s %14s %10s %8s\n", "policy", "R", "n", "occ ev/s", "occ MiB",
         "servers ev/s", "srv MiB", "ratio");
  for (char *ps = NULL, *pt = strtok_r(policies, ";", &ps); pt; pt = strtok_r(NULL, ";", &ps)) {
    char nbuf[512], *slash = strchr(pt, '/');
    long routers = slash ? atol(slash + 1) : 1;
    if (slash) *slash = '\0';
    snprintf(nbuf, sizeof nbuf, "%s", ns);
    for (char *save = NULL, *tok = strtok_r(nbuf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
      long long n = (long long)atof(tok);
      double occ[3], srv[3] = {NAN, NAN, NAN};
      bench_child(pt, routers, n, &bo, 0, occ);
      if (n <= bo.servers_max) bench_child(pt, routers, n, &bo, 1, srv);
      printf("%-8s %3ld %14lld %14.4g %10.1f %14.4g %10.1f %8.2f\n", pt, routers, n, occ[0], occ[1],
             srv[0], srv[1], occ[0] / srv[0]);
      fflush(stdout);
    }
  }
  return 0;
}
