/* lbmc-bench: events per second and peak memory of the simulation core, against n.
 *
 * For each policy and n, a child process simulates one replica (all metrics on, K =
 * 10) with about `events` events after a warm-up, and reports simulated events per
 * CPU second of the measured period and its peak resident memory (getrusage).
 * Run by hand: build/bench/lbmc-bench [--events E] [--lambda L] [--pools LIST]
 *                                     [--n N1,N2,...] [--policies P1;P2;...]
 *                                     [--service SPEC] [--general]
 * --service (e.g. lognormal:scv=4) or --general select the general-service engine.
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
#include "lbmc/metrics.h"
#include "lbmc/point.h"
#include "lbmc/sim.h"

typedef struct {
  const char *policy;
  long routers;
} bench_case;

typedef struct {
  double lambda, events;
  const char *pools, *service;
  int general;
} bench_opts;

static int bench_one(const bench_case *c, long n, const bench_opts *bo, double *rate,
                     double *rss_mib, double *sim_events)
{
  double beta[LBMC_MAX_POOLS], mu[LBMC_MAX_POOLS], cap = 0;
  long buffer[LBMC_MAX_POOLS];
  int J;
  lbmc_model *m = NULL;
  lbmc_run_options o;
  lbmc_replica *r = NULL;
  lbmc_point *p = NULL;
  lbmc_point_replica_info info;
  lbmc_unit u = {0, 0, 0, 1, 1, 0, 0};
  const void *rec;
  size_t size;
  int used, status;
  struct rusage ru;
  double lambda = bo->lambda, events = bo->events;
  lbmc_service svc;
  if (lbmc_cli_parse_pools("--pools", bo->pools, &J, beta, mu, buffer)) return 1;
  for (int j = 0; j < J; j++) cap += beta[j] * mu[j];
  if (lbmc_model_create(&m) || lbmc_model_set_n(m, n) || lbmc_model_set_lambda(m, lambda) ||
      lbmc_model_set_pools(m, J, beta, mu, buffer) || lbmc_model_set_policy(m, c->policy) ||
      lbmc_model_set_routers(m, c->routers) ||
      (bo->service && (lbmc_service_parse("--service", bo->service, &svc) ||
                       lbmc_model_set_service(m, -1, &svc))) ||
      lbmc_model_setup(m))
    return 1;
  lbmc_run_options_default(&o);
  /* events ~ (arrivals + departures) = 2 lambda n T */
  o.time = events / (2.0 * lambda * (double)n);
  o.warmup = fmax(20.0, 0.2 * o.time);
  o.batches = 2;
  o.general_engine = bo->general;
  if (lbmc_replica_create(m, &o, &r) || lbmc_replica_record(r, &u, &rec, &size) ||
      lbmc_point_create(m, &o, 1, &p) || lbmc_point_add(p, rec, size, &used) ||
      lbmc_point_reduce(p, 1))
    return 1;
  getrusage(RUSAGE_SELF, &ru);
  lbmc_point_replica(p, 0, &info);
  *rate = (double)info.events / info.cpu_seconds;
  *sim_events = (double)info.events;
  *rss_mib = (double)ru.ru_maxrss / 1024.0;
  status = lbmc_point_verdict(p)->status;
  lbmc_point_destroy(&p);
  lbmc_replica_destroy(&r);
  lbmc_model_destroy(&m);
  return status == LBMC_STATUS_UNSTABLE;
}

int main(int argc, char **argv)
{
  static const struct option opts[] = {{"events", required_argument, 0, 'e'},
                                       {"lambda", required_argument, 0, 'l'},
                                       {"pools", required_argument, 0, 'p'},
                                       {"n", required_argument, 0, 'n'},
                                       {"policies", required_argument, 0, 'P'},
                                       {"service", required_argument, 0, 'S'},
                                       {"general", no_argument, 0, 'G'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  bench_opts bo = {0.9, 2e7, "1:1:inf", NULL, 0};
  const char *ns = "1000,10000,100000,1000000";
  char *policies = NULL;
  bench_case cases[16] = {{"random", 1}, {"jsq(2)", 1}, {"pull", 1}, {"pull", 3}};
  int ncases = 4, c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'e': bo.events = atof(optarg); break;
    case 'l': bo.lambda = atof(optarg); break;
    case 'p': bo.pools = optarg; break;
    case 'S': bo.service = optarg; break;
    case 'G': bo.general = 1; break;
    case 'n': ns = optarg; break;
    case 'P': policies = optarg; break;
    default:
      printf(
          "usage: lbmc-bench [--events E] [--lambda L] [--pools LIST] [--n N1,N2,..] "
          "[--policies 'random;jsq(2);pull/3'] [--service SPEC] [--general]  (pull/3 = pull with 3 "
          "routers)\n");
      return c == 'h' ? 0 : 2;
    }
  }
  if (policies) {
    ncases = 0;
    for (char *tok = strtok(policies, ";"); tok && ncases < 16; tok = strtok(NULL, ";")) {
      char *slash = strchr(tok, '/');
      cases[ncases].routers = slash ? atol(slash + 1) : 1;
      if (slash) *slash = '\0';
      cases[ncases++].policy = tok;
    }
  }
  printf("lbmc-bench: lambda = %g, pools %s, ~%.3g events per run, K = 10, all metrics, %s\n",
         bo.lambda, bo.pools, bo.events,
         bo.service ? bo.service : (bo.general ? "exponential (general engine)" : "exponential"));
  printf("%-10s %8s %10s %14s %12s %10s\n", "policy", "routers", "n", "events/s", "peak MiB",
         "events");
  fflush(stdout);
  for (int i = 0; i < ncases; i++) {
    char nbuf[256];
    snprintf(nbuf, sizeof nbuf, "%s", ns);
    for (char *save = NULL, *tok = strtok_r(nbuf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
      long n = atol(tok);
      int fd[2];
      pid_t pid;
      double out[3] = {0, 0, 0};
      if (pipe(fd) != 0) return 1;
      pid = fork();
      if (pid == 0) { /* child: a fresh process so that the peak memory is this run's */
        int bad = bench_one(&cases[i], n, &bo, &out[0], &out[1], &out[2]);
        if (write(fd[1], out, sizeof out) != (ssize_t)sizeof out) bad = 1;
        _exit(bad);
      }
      close(fd[1]);
      if (read(fd[0], out, sizeof out) != (ssize_t)sizeof out) out[0] = NAN;
      close(fd[0]);
      waitpid(pid, NULL, 0);
      printf("%-10s %8ld %10ld %14.4g %12.1f %10.3g\n", cases[i].policy, cases[i].routers, n,
             out[0], out[1], out[2]);
      fflush(stdout);
    }
  }
  return 0;
}
