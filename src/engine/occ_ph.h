/* Private: the phase-type occupancy engine (docs/occupancy.md, "Phase-type service"):
 * service of phase type (alpha, T) per pool (exponential, erlang k <= 16,
 * hyperexponential, coxian, ph), plain servers, FCFS, every policy with an occupancy
 * form; state = counts x_j(k, p) of servers of pool j holding k customers whose customer
 * in service is in phase p. Event cost O(log levels) plus scans of the phases (at most
 * LBMC_PH_MAX_PHASES), memory O(J x levels x phases): independent of n (n up to
 * LBMC_MAX_N). Its table, lbmc_engine_occupancy_ph, is listed in LBMC_ENGINE_LIST right
 * after the exponential occupancy engine, whose state (occ_state.h: the tail counts G
 * the policies' occupancy forms read, the tally) it extends; this header shows the
 * workspace to the unit tests. */
#ifndef LBMC_OCC_PH_H
#define LBMC_OCC_PH_H

#include <stdint.h>

#include "../system/occ_state.h"
#include "engine_type.h"
#include "lbmc/service.h"
#include "occ_meanfield.h"

/** The engine's table. */
extern const lbmc_engine_type lbmc_engine_occupancy_ph;

#define LBMC_PHOCC_M LBMC_PH_MAX_PHASES

/** Levels 1 .. LBMC_PHOCC_FLAT are kept out of the Fenwick trees (their nodes count 0;
 *  occ_ph.c, "The phase arrays"). */
#define LBMC_PHOCC_FLAT 8

/** One pool's phases: the counts per (level, phase), a Fenwick tree over the levels per
 *  phase, and the law's constants. */
typedef struct {
  uint32_t m;    /* phases of the pool's law (1: exponential) */
  uint32_t size; /* levels 0 .. size - 1 addressable in x and f (a power of two > top) */
  uint32_t cap;  /* levels allocated in x and f */
  int64_t *x;    /* cap x m: x[k m + p] = servers at level k >= 1 in phase p (row 0 and the
                    rows from size on: 0) */
  int64_t *f;    /* size x m: per phase p, a Fenwick tree over levels LBMC_PHOCC_FLAT + 1
                    .. size - 1 indexed from the top: f[i m + p] = sum of x[(size - l) m +
                    p] for l in (i - (i & -i), i] with size - l > LBMC_PHOCC_FLAT */
  int64_t y[LBMC_PHOCC_M];   /* busy servers in phase p: sum over the levels of x */
  double rate[LBMC_PHOCC_M]; /* mu_j (-T_pp): rate of leaving phase p (time units) */
  double inv_rate[LBMC_PHOCC_M];
  uint16_t cls[LBMC_PHOCC_M]; /* the rate class of phase p (lbmc_phocc) */
  double res[LBMC_PHOCC_M];   /* mean residual requirement from phase p, ((-T)^-1 1)_p */
  /* Leaving phase p: to next[p] (0 .. m - 1; m = completion) when certain, else (-1)
   * to dest[p][i] with cumulative probability cum[p][i], i < ndest[p]. */
  int next[LBMC_PHOCC_M];
  uint8_t ndest[LBMC_PHOCC_M];
  uint8_t dest[LBMC_PHOCC_M][LBMC_PHOCC_M + 1];
  double cum[LBMC_PHOCC_M][LBMC_PHOCC_M + 1];
  int start;                 /* the start phase when certain, else -1 (acum) */
  double acum[LBMC_PHOCC_M]; /* cumulative alpha */
  double inv_mu;             /* 1 / mu_j */
  /* Cumulative since the replica started: the sum of (k - 1) over the admissions at a
   * busy server, how many of them found phase p in service; phase changes. */
  int64_t wait_levels, wait_phase[LBMC_PHOCC_M], phase_changes;
} lbmc_phocc_pool;

/** Most (pool, phase) pairs. */
#define LBMC_PHOCC_PAIRS (LBMC_MAX_POOLS * LBMC_PHOCC_M)

/** A rate class: the (pool, phase) pairs whose servers leave their phase at the same
 *  rate, so that the server an event of the class moves is a uniform busy one of it. */
typedef struct {
  double rate; /* mu_j (-T_pp) of every member */
  double inv_rate;
  double next;    /* the class's next event (occ_ph.c, "The clocks of the rate classes") */
  int64_t busy;   /* busy servers of the members */
  uint32_t first; /* members: member[first .. first + n) */
  uint32_t n;
} lbmc_phocc_class;

/** The workspace. st comes first: the view's ws is &st (lbmc_occ_view_init). */
typedef struct {
  lbmc_occ_state st;
  uint32_t C;                             /* rate classes */
  lbmc_phocc_class cls[LBMC_PHOCC_PAIRS]; /* in order of first appearance over (j, p) */
  uint16_t member[LBMC_PHOCC_PAIRS];      /* j LBMC_PHOCC_M + p, grouped by class */
  const int64_t *ymem[LBMC_PHOCC_PAIRS];  /* &ph[j].y[p] of each member */
  lbmc_phocc_pool ph[LBMC_MAX_POOLS];
  double next_arr, next_dep; /* next arrival; next service event: the earliest class clock */
  uint32_t dep_cls;          /* the class of next_dep */
  double inv_lambda_total;
  int pair2; /* 1: the arrivals route by lbmc_occ_route_pair2 inline (jsq(2), one pool) */
  /* At the start of the current tick: the per-customer counters above. */
  int64_t wait_levels0[LBMC_MAX_POOLS], wait_phase0[LBMC_MAX_POOLS][LBMC_PHOCC_M];
  lbmc_view view;
  lbmc_init_kind init;
  lbmc_occ_mf_point mf; /* the mean-field point (init meanfield) */
  int64_t *counts;      /* scratch for rounding: levels x phases, then levels */
} lbmc_phocc;

/** Servers of pool j at level k in phase p (0 beyond the arrays). */
static inline int64_t lbmc_phocc_count(const lbmc_phocc *o, uint32_t j, uint32_t k, uint32_t p)
{
  const lbmc_phocc_pool *h = &o->ph[j];
  return k >= 1 && k < h->size && p < h->m ? h->x[(size_t)k * h->m + p] : 0;
}

#endif
