/* Regression-test harness for the occupancy engine (issue 10), phase 1: replicas run
 * by calling the engines directly (the occupancy engine's table, or the per-server
 * engines of src/engine/engine.h for comparisons), with the same stream numbering,
 * warm-up, tick sums and metrics as lbmc_replica_run, and results in the th_result of
 * harness.h so that th_compare / th_family judge them. */
#ifndef LBMC_OCC_HARNESS_H
#define LBMC_OCC_HARNESS_H

#include "engine/occupancy.h"
#include "harness.h"

typedef enum { OH_OCCUPANCY = 0, OH_SERVERS, OH_GENERAL } oh_engine;

typedef struct {
  oh_engine engine;
  double warmup, time; /* discarded and measured time */
  long K;              /* tail levels */
  long replicas, point, seed;
  lbmc_init_kind init; /* occupancy engine only */
  double confidence;   /* interval level */
  uint64_t cap;        /* runaway cap; 0: 1000 n + 100000 */
  double runaway_fraction;
} oh_conf;

/** Defaults: occupancy engine, warm-up 100, time 1000, K 10, 20 replicas, point 0,
 *  seed 1, init empty, confidence 0.95, runaway fraction 0.02. */
void oh_conf_default(oh_conf *c);

/** Simulate c->replicas replicas of m; res as th_simulate (status unstable by the
 *  rules of lbmc_point_unstable). note[len] receives the engine's init note. Returns 0,
 *  or 1 on failure (message printed). */
int oh_simulate(const lbmc_model *m, const oh_conf *c, th_result *res, char *note, size_t len);

/** th_model for n beyond the per-server limit (the occupancy engine's 10^12): the
 *  model is built at a small n and n is then set directly. */
lbmc_model *oh_model(long long n, double lambda, const char *pools, const char *policy,
                     long routers);

#endif
