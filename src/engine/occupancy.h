/* Private: the occupancy engine (issue 10, docs/occupancy.md): exponential service,
 * policies that treat the servers of a pool alike, state = counts of servers per pool
 * and level. Event cost and memory independent of n (n up to LBMC_OCC_MAX_N).
 *
 * It implements the engine interface of the lead's contract (plan/engine-contract.md),
 * whose table is declared here until src/engine/engine_type.h (issue 9) lands; two
 * entries are added at its end (set_init, set_mixture), NULL for engines without them.
 */
#ifndef LBMC_OCCUPANCY_H
#define LBMC_OCCUPANCY_H

#include <stddef.h>
#include <stdint.h>

#include "../core/model_impl.h"
#include "../core/stream.h"
#include "mixture.h"
#include "occ_state.h"

/** Most servers the occupancy engine takes (issue 10). Counts stay exact far beyond:
 *  positions need n <= 2^52 (lbmc_occ_uint), tick sums 2^53. */
#define LBMC_OCC_MAX_N 1000000000000LL

/** How a replica starts: empty, or near the mean-field stationary point. */
typedef enum { LBMC_INIT_EMPTY = 0, LBMC_INIT_MEANFIELD = 1 } lbmc_init_kind;

/* ---- The engine table of the contract (until engine_type.h lands) ---- */
typedef enum {
  LBMC_ENGINE_AUTO = 0,
  LBMC_ENGINE_SERVERS,
  LBMC_ENGINE_GENERAL,
  LBMC_ENGINE_OCCUPANCY
} lbmc_engine_kind;

typedef struct lbmc_engine_type_ {
  const char *name;
  const char *summary;
  lbmc_engine_kind kind;
  int (*applies)(const lbmc_model *m, char *why, size_t len);
  lbmc_err (*create)(const lbmc_model *m, int K, uint64_t max_customers, void **ws);
  void (*destroy)(void **ws);
  lbmc_err (*reset)(void *ws, lbmc_stream *streams);
  lbmc_err (*advance)(void *ws, double t_end, double *rec);
  void (*set_histograms)(void *ws, uint64_t *sojourn, uint64_t *wait);
  int (*overflowed)(const void *ws);
  double (*time)(const void *ws);
  /* Added by issue 10 (NULL where not supported): */
  /** How the next resets start. LBMC_INIT_MEANFIELD solves the mean-field ODE now
   *  (deterministic, once); if it does not settle, replicas start empty and note[len]
   *  says why. Errors: LBMC_ERR_MEMORY. */
  lbmc_err (*set_init)(void *ws, lbmc_init_kind init, char *note, size_t len);
  /** Record the admitted customers' arrival classes into mix from now on (NULL: stop):
   *  sojourn and wait quantiles come from this mixture, not from histograms. */
  void (*set_mixture)(void *ws, lbmc_mixture *mix);
} lbmc_engine_type;

/** The occupancy engine's table. */
extern const lbmc_engine_type lbmc_engine_occupancy;

/** The state of an occupancy workspace (read-only use: tests and diagnostics). */
const lbmc_occ_state *lbmc_occ_state_of(const void *ws);

#endif
