/* Regression-test harness: simulate a model with replicas through the public API and
 * compare estimates with known values, keeping coverage statistics. */
#ifndef LBMC_TEST_HARNESS_H
#define LBMC_TEST_HARNESS_H

#include <stddef.h>

#include "lbmc/metrics.h"
#include "lbmc/model.h"
#include "lbmc/sim.h"

typedef struct {
  size_t total; /* entries of the flat metric vector */
  int J, K;
  long replicas;
  double arrivals; /* mean arrivals per replica in the measured period */
  lbmc_status status;
  double *mean, *hw, *se; /* total entries each */
  double *ub;             /* total: the one-sided bound of an entry with none observed
                             (NaN otherwise) */
  double *lo, *hi;        /* total each: the interval's ends (NaN where none) */
} th_result;

/** Simulate `replicas` replicas of grid point `point` (its streams: give every system
 *  of a test its own point so that their errors are independent) with the seed;
 *  options o (confidence used for the intervals). Returns 0 on success. */
int th_simulate(const lbmc_model *m, const lbmc_run_options *o, long point, long replicas,
                long seed, th_result *res);
void th_result_free(th_result *res);

/** th_simulate that also copies the replicas' start note (lbmc_replica_init_note) into
 *  note[len] (note may be NULL). */
int th_simulate_noted(const lbmc_model *m, const lbmc_run_options *o, long point, long replicas,
                      long seed, th_result *res, char *note, size_t len);

/** The engine of th_simulate when the options leave it to auto: TH_PER_SERVER (the
 *  default: the servers engine where it applies, else the general one, so that the
 *  tests written for the per-server engines keep testing them), or an engine kind
 *  (LBMC_ENGINE_OCCUPANCY: every test through the occupancy engine; LBMC_ENGINE_AUTO:
 *  as lbmc sim chooses). */
#define TH_PER_SERVER (-1)
void th_use_engine(int kind);

/** A set-up model from "beta:mu:buffer,..." pools (buffer an integer or inf) and a
 *  policy text; exits the test program with status 2 on bad input. */
lbmc_model *th_model(long n, double lambda, const char *pools, const char *policy, long routers);
/** th_simulate with default options but the given time and warm-up; exits with status
 *  1 on failure. */
void th_run(lbmc_model *m, double time, double warmup, long point, long replicas, long seed,
            th_result *r);

/** Value of metric `name` entry (pool j, level k; 0 for unused) in a result. */
size_t th_index(const th_result *r, const char *name, int j, int k);

typedef struct {
  double max_hw; /* set by the caller: the largest |d|/hw allowed */
  long compared, covered, beyond;
  double worst_z; /* largest |estimate - exact| / half-width */
  char worst[256];
} th_tally;

/** Compare estimate i of r with the exact value: covered if within the half-width;
 *  a structural zero/constant (half-width 0) must match exactly (|diff| <= 1e-12
 *  relative, i.e. round-off). `label` names the comparison in the output. */
void th_compare(th_tally *t, const th_result *r, size_t i, double exact, const char *label,
                int verbose);

/** Print the tally and return 0 if coverage >= min_coverage and nothing lies beyond
 *  t->max_hw half-widths. */
int th_verdict(const th_tally *t, double min_coverage);

/* A family of comparisons judged together with a Bonferroni-corrected level: the
 * test passes if every exact value lies in its two-sided Student-t interval at level
 * 1 - alpha/m (m = comparisons), so a correct model fails with probability <= alpha.
 * An allowance (e.g. a finite-n bias bound) may widen one comparison. */
typedef struct {
  int m, cap;
  struct th_item {
    char label[128];
    double est, se, ub, exact, allowance;
    long dof;
  } * items;
} th_family;

/** Add estimate i of r (replicas - 1 degrees of freedom). */
void th_family_add(th_family *f, const th_result *r, size_t i, double exact, double allowance,
                   const char *label);
/** Add every comparable entry of a - b (two engines' results of one model, independent
 * streams) to f as a difference with exact value 0. An entry NaN in both is skipped; NaN in
 * one only fails (a metric one engine lost). Tail levels (shape pool x K) are compared where
 * the expected visits, min(a, b) x arrivals, reach tail_min_visits; histogram quantiles get
 * the allowance hist_rel x (|a| + |b|), each estimate being within hist_rel of its own
 * quantile (docs/model.md, histogram resolution). tag prefixes the labels. */
void th_family_compare(th_family *f, const th_result *a, const th_result *b, const char *tag,
                       double tail_min_visits, double hist_rel);
/** Judge and print; returns 0 if all pass. Frees the family. */
int th_family_verdict(th_family *f, double alpha);

#endif
