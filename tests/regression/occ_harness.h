/* Regression-test harness for the occupancy engine: replicas through the
 * replica driver (lbmc_replica_run, as lbmc sim and lbmc run), with the engine, the
 * start and the runaway cap chosen per test, results in the th_result of harness.h so
 * that th_compare / th_family judge them. */
#ifndef LBMC_OCC_HARNESS_H
#define LBMC_OCC_HARNESS_H

#include <stdint.h>

#include "harness.h"

typedef struct {
  lbmc_engine_kind engine; /* LBMC_ENGINE_OCCUPANCY, or a per-server engine to compare */
  double warmup, time;     /* discarded and measured time */
  long K;                  /* tail levels */
  long replicas, point, seed;
  lbmc_init_kind init; /* how replicas start */
  double confidence;   /* interval level */
  uint64_t cap;        /* runaway cap; 0: the engine's default */
  double runaway_fraction;
} oh_conf;

/** Defaults: occupancy engine, warm-up 100, time 1000, K 10, 20 replicas, point 0,
 *  seed 1, init empty, confidence 0.95, runaway fraction 0.02. */
void oh_conf_default(oh_conf *c);

/** Simulate c->replicas replicas of m; res as th_simulate (status unstable by the
 *  rules of lbmc_point_unstable). note[len] receives the replicas' start note
 *  (lbmc_replica_init_note). Returns 0, or 1 on failure (message printed). */
int oh_simulate(const lbmc_model *m, const oh_conf *c, th_result *res, char *note, size_t len);

#endif
