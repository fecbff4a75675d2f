/* The /points columns and the per-replica arrays of a results file
 * (docs/results-format.md), defined once: the writer (results_write.c), the reader
 * (results_read.c) and the results in memory (results.c) are loops over these tables.
 * A /points column's values live in lbmc_point_info (one field per point, an array of J
 * per point, or a field of the point's verdict) or, for the per-pool service and speeds,
 * in the arrays of lbmc_results. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lbmc/point.h"
#include "results.h"

/* A field of lbmc_point_info: its place and, for strings, its capacity. */
#define LBMC_PT(field)                                                                             \
  LBMC_STORE_POINT, offsetof(lbmc_point_info, field), sizeof(((lbmc_point_info *)0)->field)
/* A per-pool array field of lbmc_point_info: its place and the size of one entry. */
#define LBMC_PT_POOL(field)                                                                        \
  LBMC_STORE_POINT, offsetof(lbmc_point_info, field), sizeof(((lbmc_point_info *)0)->field[0])

/* The columns whose descriptions name levels and limits of the verdict's tests
 * (lbmc/point.h): the text, with the constants written in at each %g. */
static const struct {
  const char *name, *format;
  double a, b;
} lbmc_described[] = {
    {"halves_p",
     "p-value of the test that the halves of the measured period have the same customers per "
     "server (not_stationary below %g); NaN if not made",
     LBMC_STATIONARITY_ALPHA, 0},
    {"short_p",
     "p-value of the test that the eighths of the replicas' measured periods are uncorrelated "
     "(made with 2 to %g replicas; not_stationary below %g); NaN if not made",
     LBMC_SHORT_MAX_REPLICAS - 1, LBMC_STATIONARITY_ALPHA},
    {"growth_lower", "drift test: one-sided lower bound of growth at level 1 - %g",
     LBMC_DRIFT_ALPHA, 0},
    {"decel_lower",
     "drift test: lower bound of Delta4 - %g Delta3 (positive: the growth is not slowing down)",
     LBMC_DRIFT_DECEL, 0},
};

/* {name, HDF5 type, shape, C type, store, offset, size, optional, units, description};
 * optional: files written before the column existed lack it (the reader keeps the
 * defaults of lbmc_results_create). */
static const lbmc_point_column lbmc_columns[] = {
    {"index", LBMC_COL_I64, LBMC_COL_POINT, LBMC_FIELD_LONG, LBMC_PT(index), 0, "1",
     "index of the point in the job's full grid (0-based, first axis slowest)"},
    {"scenario", LBMC_COL_I64, LBMC_COL_POINT, LBMC_FIELD_LONG, LBMC_PT(scenario), 1, "1",
     "the point's scenario: its grid cell without the routing axes (policy, routers, stale, "
     "sampling); points of one scenario share their random streams (common random numbers)"},
    {"n", LBMC_COL_I64, LBMC_COL_POINT, LBMC_FIELD_LONG, LBMC_PT(n), 0, "1", "number of servers"},
    {"lambda", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(lambda), 0, "1/time",
     "arrival rate per server (total rate lambda * n)"},
    {"rho", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(rho), 0, "1",
     "load lambda / sum_j beta_j mu_j"},
    {"policy", LBMC_COL_STR, LBMC_COL_POINT, LBMC_FIELD_CHARS, LBMC_PT(policy), 0, "1",
     "routing policy as written, e.g. jsq(2)"},
    {"policy_name", LBMC_COL_STR, LBMC_COL_POINT, LBMC_FIELD_CHARS, LBMC_PT(policy_name), 0, "1",
     NULL /* from the policy registry: lbmc_point_column_description */},
    {"d", LBMC_COL_I64, LBMC_COL_POINT, LBMC_FIELD_LONG, LBMC_PT(d), 0, "1",
     "policy parameter: d of jsq(d), c of balanced(c), n for full jsq, 0 if none"},
    {"sampling", LBMC_COL_STR, LBMC_COL_POINT, LBMC_FIELD_CHARS, LBMC_PT(sampling), 0, "1",
     "jsq(d) sampling: distinct or with_replacement; empty otherwise"},
    {"routers", LBMC_COL_I64, LBMC_COL_POINT, LBMC_FIELD_LONG, LBMC_PT(routers), 0, "1",
     "number of routers R"},
    {"stale", LBMC_COL_STR, LBMC_COL_POINT, LBMC_FIELD_CHARS, LBMC_PT(stale), 0, "1",
     "pull's stale-message variant: withdraw or keep; empty otherwise"},
    {"beta", LBMC_COL_F64, LBMC_COL_POOL, LBMC_FIELD_DOUBLE, LBMC_PT_POOL(beta), 0, "1",
     "fraction of the servers in each pool"},
    {"mu", LBMC_COL_F64, LBMC_COL_POOL, LBMC_FIELD_DOUBLE, LBMC_PT_POOL(mu), 0, "1/time",
     "service speed of a server of each pool"},
    {"buffer", LBMC_COL_I64, LBMC_COL_POOL, LBMC_FIELD_LONG, LBMC_PT_POOL(buffer), 0, "1",
     "customers a server of each pool holds, -1 = unlimited"},
    {"pool_servers", LBMC_COL_I64, LBMC_COL_POOL, LBMC_FIELD_LONG, LBMC_PT_POOL(pool_servers), 0,
     "1", "servers per pool (largest-remainder rounding of beta_j n)"},
    {"service", LBMC_COL_STR, LBMC_COL_POOL, LBMC_FIELD_TEXT, LBMC_STORE_SERVICE, 0, sizeof(char *),
     1, "1",
     "service requirement distribution (mean 1) of each pool, canonical text such as "
     "lognormal:scv=4 (docs/job-files.md)"},
    {"slots", LBMC_COL_I64, LBMC_COL_POOL, LBMC_FIELD_INT, LBMC_STORE_SLOTS, 0, sizeof(int), 1, "1",
     "L_j: entries of each pool's speed list mu_k (1 = the constant speed mu)"},
    {"mu_k", LBMC_COL_F64, LBMC_COL_POOL_RATES, LBMC_FIELD_DOUBLE, LBMC_STORE_MU_K, 0,
     sizeof(double), 1, "1/time",
     "speed of a server of each pool holding k = 1..L customers (the last one for more); NaN "
     "beyond the pool's slots"},
    {"time", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(time), 0, "time",
     "measured time per replica (with warmup auto: the whole run)"},
    {"warmup", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(warmup), 0, "time",
     "requested warm-up time, NaN for auto (MSER-5)"},
    {"batches", LBMC_COL_I64, LBMC_COL_POINT, LBMC_FIELD_LONG, LBMC_PT(batches), 0, "1",
     "batch means per replica"},
    {"replicas", LBMC_COL_I64, LBMC_COL_POINT, LBMC_FIELD_LONG, LBMC_PT(v.replicas), 0, "1",
     "replicas run for the point"},
    {"engine", LBMC_COL_STR, LBMC_COL_POINT, LBMC_FIELD_CHARS, LBMC_PT(engine), 1, "1",
     "the engine that simulated the point, by its --engine name (lbmc sim --help lists the "
     "engines; docs/model.md, Engines)"},
    {"init", LBMC_COL_STR, LBMC_COL_POINT, LBMC_FIELD_CHARS, LBMC_PT(init), 1, "1",
     "how replicas started: empty, or meanfield (near the mean-field fixed point; engines "
     "without one, and systems whose ODE does not settle, start empty)"},
    {"status", LBMC_COL_STR, LBMC_COL_POINT, LBMC_FIELD_STATUS, LBMC_PT(v.status), 0, "1",
     "the verdict: ok, not_stationary (the data cannot tell: run longer; numbers kept), "
     "unstable (proven; estimates NaN) or precision_not_met (docs/model.md, \"Verdicts\")"},
    {"reason", LBMC_COL_STR, LBMC_COL_POINT, LBMC_FIELD_CHARS, LBMC_PT(v.reason), 0, "1",
     "why the status is not ok, with the evidence's numbers, and which metrics are infinite; "
     "empty for ok without infinite metrics"},
    {"evidence", LBMC_COL_STR, LBMC_COL_POINT, LBMC_FIELD_EVIDENCE, LBMC_PT(v.evidence), 1, "1",
     "the verdict's evidence, comma-separated names (rho_at_least_one, customer_cap, drift, "
     "warmup_near_cap, halves_differ, replicas_short, batches_correlated, no_customers, "
     "still_growing, relaxation_short, warmup_short, pool_overloaded, heavy_tail, "
     "infinite_mean); empty for ok (infinite_mean may come with ok)"},
    /* "level" is the file's name of the verdict's doubling (kept: files are read by it) */
    {"level", LBMC_COL_I64, LBMC_COL_POINT, LBMC_FIELD_INT, LBMC_PT(v.doubling), 1, "1",
     "times sequential mode doubled the run because the point was not stationary"},
    {"time_run", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(v.time), 1, "time",
     "the time setting used: time x 2^level"},
    {"warmup_used", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(v.warmup_used), 1,
     "time",
     "warm-up discarded per replica: the fixed warm-up, or the one MSER chose for the point"},
    {"time_used", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(v.time_used), 1, "time",
     "measured time per replica, after the warm-up"},
    {"suggested_time", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(v.suggested_time),
     1, "time", "for a not_stationary point, a time setting to try; NaN otherwise"},
    {"warmup_near_cap", LBMC_COL_I64, LBMC_COL_POINT, LBMC_FIELD_INT, LBMC_PT(v.warmup_near_cap), 1,
     "1", "1 if MSER truncated in the last fifth before its cap (half the run)"},
    {"halves_p", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(v.halves_p), 1, "1",
     NULL /* built: lbmc_described */},
    {"short_p", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(v.short_p), 1, "1",
     NULL /* built: lbmc_described */},
    {"growth", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(v.growth), 1, "1",
     "drift test: customers accumulated per arrival in the last quarter of the run, pooled over "
     "the replicas; NaN if not made"},
    {"growth_lower", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(v.growth_lower), 1,
     "1", NULL /* built: lbmc_described */},
    {"decel_lower", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(v.decel_lower), 1, "1",
     NULL /* built: lbmc_described */},
    {"relaxation_time", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(v.relaxation_time),
     1, "time",
     "integrated autocorrelation time of the customers in the system (batch means of growing "
     "length, corrected for their length; inf: the run is far shorter); NaN if not estimated"},
    {"relaxation_upper", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE,
     LBMC_PT(v.relaxation_upper), 1, "time",
     "its one-sided upper bound at 90%, which the relaxation rules use (docs/model.md)"},
    {"transient_bound", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(v.transient_bound),
     1, "1",
     "bound on the bias the start leaves after the warm-up, in standard errors of the mean "
     "customers in the system (warmup_short above 0.25)"},
    {"overload", LBMC_COL_F64, LBMC_COL_POINT, LBMC_FIELD_DOUBLE, LBMC_PT(v.overload), 1, "1",
     "flow balance: the largest lower bound (level 1 - 0.001) of a pool's inflow over its "
     "capacity plus the runaway threshold (above 1: pool_overloaded); NaN without unlimited "
     "buffers"},
    {"suggested_replicas", LBMC_COL_I64, LBMC_COL_POINT, LBMC_FIELD_LONG,
     LBMC_PT(v.suggested_replicas), 1, "1",
     "replicas that would decide growth not proven unbounded (0: more replicas would not)"},
};

const char *lbmc_point_column_description(const lbmc_point_column *c, char *buf, size_t len)
{
  if (c->description) return c->description;
  for (size_t i = 0; i < sizeof lbmc_described / sizeof lbmc_described[0]; i++)
    if (strcmp(c->name, lbmc_described[i].name) == 0) {
      snprintf(buf, len, lbmc_described[i].format, lbmc_described[i].a, lbmc_described[i].b);
      return buf;
    }
  return NULL;
}

int lbmc_point_columns(void) { return (int)(sizeof lbmc_columns / sizeof lbmc_columns[0]); }

const lbmc_point_column *lbmc_point_column_get(int i)
{
  return i >= 0 && i < lbmc_point_columns() ? &lbmc_columns[i] : NULL;
}

size_t lbmc_point_column_text(const lbmc_point_column *c)
{
  switch (c->kind) {
  case LBMC_FIELD_STATUS: return 32; /* longer than the longest status name */
  case LBMC_FIELD_EVIDENCE: return LBMC_EVIDENCE_TEXT;
  default: return c->size;
  }
}

void *lbmc_point_field(const lbmc_point_column *c, const lbmc_results *res, long i, int j, int k)
{
  const size_t pj = (size_t)i * (size_t)res->J + (size_t)j;
  switch (c->store) {
  case LBMC_STORE_SERVICE: return res->service + pj;
  case LBMC_STORE_SLOTS: return res->slots + pj;
  case LBMC_STORE_MU_K: return res->mu_k + pj * LBMC_MAX_RATES + (size_t)k;
  default: return (char *)&res->pt[i] + c->offset + (size_t)j * c->size;
  }
}

/* ---- the per-replica columns ---- */

/* {dataset, type, per metric, units, description}, in the order written and in a
 * replica's row. */
static const lbmc_replica_column lbmc_replica_table[] = {
    {NULL, LBMC_COL_F64, 1, NULL, NULL}, /* the values */
    {NULL, LBMC_COL_F64, 1, NULL, NULL}, /* their weights */
    {"warmup", LBMC_COL_F64, 0, "time",
     "warm-up time discarded by the replica (the point's); NaN where no replica"},
    {"events", LBMC_COL_I64, 0, "1",
     "arrivals plus departures simulated after the warm-up; -1 where no replica"},
    {"cpu_seconds", LBMC_COL_F64, 0, "s",
     "CPU seconds (real time, not model time) of the replica's measured period; NaN where no "
     "replica"},
    {"growth", LBMC_COL_F64, 0, "1",
     "the replica's rise of the time-average customers in the system from the third to the last "
     "quarter of its measured period, per arrival of the last quarter (about 0 in a steady "
     "state; the point's drift test pools it over replicas); NaN where no replica"},
    {"unstable", LBMC_COL_I8, 0, "1",
     "1 if the replica hit the cap on customers in the system (max_customers), 0 if not, -1 "
     "where no replica"},
};

int lbmc_replica_columns(void)
{
  return (int)(sizeof lbmc_replica_table / sizeof lbmc_replica_table[0]);
}

const lbmc_replica_column *lbmc_replica_column_get(int i)
{
  return i >= 0 && i < lbmc_replica_columns() ? &lbmc_replica_table[i] : NULL;
}

size_t lbmc_replica_column_bytes(const lbmc_results *res, const lbmc_replica_column *c)
{
  return lbmc_col_bytes(c->type) * (c->per_metric ? res->total : 1);
}

size_t lbmc_replica_column_offset(const lbmc_results *res, int k)
{
  size_t off = 0;
  for (int i = 0; i < k && i < lbmc_replica_columns(); i++)
    off += lbmc_replica_column_bytes(res, lbmc_replica_column_get(i));
  return off;
}

size_t lbmc_replica_row_bytes(const lbmc_results *res)
{
  return lbmc_replica_column_offset(res, lbmc_replica_columns());
}

void lbmc_replica_row_missing(const lbmc_results *res, void *row)
{
  unsigned char *at = row;
  const double nan = NAN;
  const int64_t i64 = -1;
  const int8_t i8 = -1;
  for (int k = 0; k < lbmc_replica_columns(); k++) {
    const lbmc_replica_column *c = lbmc_replica_column_get(k);
    const size_t n = c->per_metric ? res->total : 1, elem = lbmc_col_bytes(c->type);
    const void *v = c->type == LBMC_COL_F64   ? (const void *)&nan
                    : c->type == LBMC_COL_I64 ? (const void *)&i64
                                              : (const void *)&i8;
    for (size_t i = 0; i < n; i++, at += elem) memcpy(at, v, elem);
  }
}

size_t lbmc_col_bytes(lbmc_col_type t)
{
  return t == LBMC_COL_I8 ? sizeof(int8_t) : t == LBMC_COL_I64 ? sizeof(int64_t) : sizeof(double);
}
