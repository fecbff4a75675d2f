/* Private: the tick record. The measured period of a replica is cut into ticks of
 * equal length; for each tick the engine's tally (tally.h) records raw sums (counts,
 * sums of times, time integrals), from which every metric of any union of ticks is a
 * ratio (src/core/metrics.c). Warm-up truncation and batch means regroup ticks.
 *
 * Layout of one record (the fixed part: lbmc_tick_width(J, K) doubles; the blocks of
 * the run's observers follow it, src/observers/, lbmc_run_segment_width):
 *   [LBMC_TK_*]                         the scalar sums below
 *   [LBMC_TK_FIXED + j]                 admitted to pool j
 *   [LBMC_TK_FIXED + J + j]             integral of customers in pool j (customers x time)
 *   [LBMC_TK_FIXED + 2J + j*K + k-1]    integral of servers of pool j holding >= k customers
 *   [LBMC_TK_FIXED + 2J + J*K + j]      integral of pool j's unfinished work (units of
 *                                       requirement x time; NaN: the engine cannot say)
 */
#ifndef LBMC_TICKS_H
#define LBMC_TICKS_H

#include <stddef.h>

enum {
  LBMC_TK_LEN = 0,     /* tick length (time) */
  LBMC_TK_ARRIVALS,    /* arrivals */
  LBMC_TK_BLOCKED,     /* blocked arrivals */
  LBMC_TK_WAITED,      /* admitted arrivals that found their server busy */
  LBMC_TK_DEPARTURES,  /* service completions */
  LBMC_TK_STARTS,      /* service starts */
  LBMC_TK_SUM_SOJOURN, /* sum of sojourn times of the departures (time); occupancy
                          engine: of the admitted, by conditional expectation */
  LBMC_TK_SUM_WAIT,    /* sum of waiting times of the service starts (time); idem */
  LBMC_TK_MESSAGES,    /* router-server messages, withdrawals included */
  LBMC_TK_WITHDRAWALS, /* pull withdrawal messages */
  LBMC_TK_AREA_N,      /* integral of customers in the system */
  LBMC_TK_N_END,       /* customers in the system at the end of the tick */
  LBMC_TK_CPU,         /* CPU seconds of the simulation (the driver sets it per segment) */
  LBMC_TK_SOJOURNS,    /* terms of SUM_SOJOURN: departures (per-server engines) or
                          admissions (occupancy engine: expected sojourns at admission) */
  LBMC_TK_WAITS,       /* terms of SUM_WAIT: service starts, or admissions (occupancy) */
  LBMC_TK_N_M2,        /* of a segment (not a sum over its ticks): the sums of squares and */
  LBMC_TK_N_M3,        /* of cubes of the deviations of its ticks' N_END from their mean (the
                          replica driver sets them): samples of N at equal spacing, whose
                          central moments give the variance and skewness of N behind the
                          relaxation rules (combined over segments by Chan's formulas) */
  LBMC_TK_FIXED
};

static inline size_t lbmc_tick_width(int J, int K)
{
  return LBMC_TK_FIXED + 3 * (size_t)J + (size_t)J * K;
}
static inline size_t lbmc_tk_admitted(int J, int K, int j)
{
  (void)J;
  (void)K;
  return LBMC_TK_FIXED + j;
}
static inline size_t lbmc_tk_area_q(int J, int K, int j)
{
  (void)K;
  return LBMC_TK_FIXED + J + j;
}
static inline size_t lbmc_tk_area_tail(int J, int K, int j, int k)
{
  return LBMC_TK_FIXED + 2 * (size_t)J + (size_t)j * K + (k - 1);
}
static inline size_t lbmc_tk_area_work(int J, int K, int j)
{
  return LBMC_TK_FIXED + 2 * (size_t)J + (size_t)J * K + j;
}

#endif
