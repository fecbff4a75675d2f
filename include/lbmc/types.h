/* The limits and small types of a model, shared by every layer of lbmc: the model's
 * data (src/system/), the policies and engines read them as much as the model's own
 * functions (lbmc/model.h, which includes this header). Kept apart from lbmc/model.h
 * so that the layers below the model need not see the model's functions
 * (docs/architecture.md). */
#ifndef LBMC_TYPES_H
#define LBMC_TYPES_H

#ifdef __cplusplus
extern "C" {
#endif

/** Buffer size meaning "unlimited". */
#define LBMC_BUFFER_INF (-1L)
/** The pool fractions must sum to 1 within this (rounding of fractions written in decimal). */
#define LBMC_BETA_SUM_TOL 1e-9
/** Most servers a model may have (the occupancy engine's limit; it keeps
 *  counts of servers, exact as 64-bit integers, and draws positions among n exactly
 *  with 52 random bits). */
#define LBMC_MAX_N 1000000000000LL
/** Most servers of the per-server engines (servers, general), which number them with
 *  32-bit integers. */
#define LBMC_MAX_SERVERS 2147483647L
/** Most customers in the system a runaway cap may allow (run.max_customers; the
 *  engines that hold customers one by one allow fewer, see src/engine/engine_type.h). */
#define LBMC_MAX_CUSTOMERS 4611686018427387904LL
/** Most pools a model may have. */
#define LBMC_MAX_POOLS 64
/** Most values of a queue-length-dependent speed list mu_j(1..L). */
#define LBMC_MAX_RATES 64
/** Largest total arrival rate lambda x n (the clock must still move between events). */
#define LBMC_MAX_RATE 1e15
/** Most routers a model may have. */
#define LBMC_MAX_ROUTERS 1048576L

typedef enum { LBMC_STALE_WITHDRAW = 0, LBMC_STALE_KEEP = 1 } lbmc_stale;
typedef enum { LBMC_SAMPLING_DISTINCT = 0, LBMC_SAMPLING_WITH_REPLACEMENT = 1 } lbmc_sampling;

/** A model of one system (opaque outside the simulator; functions in lbmc/model.h). */
typedef struct lbmc_model_ lbmc_model;

#ifdef __cplusplus
}
#endif
#endif
