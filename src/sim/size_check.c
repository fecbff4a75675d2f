/* The size check of a run, made before anything runs: how many events a replica may be
 * asked to simulate (counts are summed in doubles, so a replica must stay below
 * LBMC_MAX_EVENTS, lbmc/sim.h, for its counts to stay exact), the memory a replica
 * takes at its start (the engine's and the policy's per-server arrays), against this
 * machine's, and how wide the pair statistics make a tick record. The engine check is in
 * engine_check.c. */
#include <stdio.h>
#include <unistd.h>

#include "../core/ticks.h"
#include "../engine/engine.h"
#include "lbmc/engines.h"
#include "lbmc/sim.h"

double lbmc_run_memory(const lbmc_model *m, const lbmc_run_options *o, double *per_customer)
{
  const lbmc_engine_type *t = lbmc_engine_choose(m, (lbmc_engine_kind)o->engine, NULL, 0, NULL, 0);
  double per = 0, bytes = t && t->memory ? t->memory(m, (int)o->tail_k, &per) : 0;
  if (per_customer) *per_customer = per;
  return bytes;
}

/* This machine's physical memory in bytes (0 if unknown). */
static double lbmc_physical_memory(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

lbmc_err lbmc_run_check_size(const lbmc_model *m, const lbmc_run_options *o, const char *where)
{
  const int transient = o->transient[2] > 0; /* observed from 0 to T1: --time/--warmup unused */
  double horizon = transient ? o->transient[1] : o->time + (o->warmup_auto ? 0 : o->warmup);
  double record = transient ? (double)lbmc_transient_times(o) * sizeof(double) *
                                  (double)lbmc_tick_width(lbmc_model_pools(m), (int)o->tail_k)
                            : 0;
  double events = 2 * lbmc_model_lambda(m) * (double)lbmc_model_n(m) * horizon;
  double per_customer, bytes = lbmc_run_memory(m, o, &per_customer), ram = lbmc_physical_memory();
  if (ram > 0 && bytes > ram) {
    const lbmc_engine_type *t =
        lbmc_engine_choose(m, (lbmc_engine_kind)o->engine, NULL, 0, NULL, 0);
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "%s: a replica on the %s engine takes about %.3g GiB at n = %lld (%.0f "
                      "bytes per server%s), more than this machine's %.3g GiB of memory: lower "
                      "n, or use an engine whose memory does not grow with n where one applies",
                      where, t->name, bytes / 1073741824.0, (long long)lbmc_model_n(m),
                      bytes / (double)lbmc_model_n(m),
                      per_customer > 0 ? ", and more with each customer held" : "",
                      ram / 1073741824.0);
  }
  if (ram > 0 && record > ram / 4) /* each replica's record holds a tick per time */
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "%s: a transient replica's record of %ld times x %zu values takes %.3g GiB; "
                      "allowed: at most a quarter of this machine's %.3g GiB: fewer times (a "
                      "larger DT in T0:T1:DT) or a lower tail_k",
                      where, lbmc_transient_times(o),
                      lbmc_tick_width(lbmc_model_pools(m), (int)o->tail_k), record / 1073741824.0,
                      ram / 1073741824.0);
  if (!(events <= LBMC_MAX_EVENTS))
    return LBMC_ERROR(LBMC_ERR_LIMIT,
                      "%s: a replica would simulate about %.3g events (2 lambda n %s); allowed: "
                      "at most %.3g, the most the counters hold exactly: %s",
                      where, events, transient ? "T1" : "(warmup + time)", LBMC_MAX_EVENTS,
                      transient ? "an earlier T1 in T0:T1:DT, or a lower n"
                                : "shorten warmup/time or use more replicas");
  return LBMC_SUCCESS;
}

/* The pair statistics' block of a tick record: J C (C + 1) / 2 products within the pools
 * and J (J - 1) / 2 C^2 across them (src/observers/pairs.c), C = tail_k + 1. */
lbmc_err lbmc_run_check_pairs(const lbmc_model *m, const lbmc_run_options *o, const char *where)
{
  const double J = lbmc_model_pools(m), C = (double)o->tail_k + 1;
  const double width = J * C * (C + 1) / 2 + J * (J - 1) / 2 * C * C;
  char key[512];
  if (!o->pairs || width <= LBMC_PAIRS_MAX_WIDTH) return LBMC_SUCCESS;
  return LBMC_ERROR(LBMC_ERR_LIMIT,
                    "%s: the pair statistics of %g pool%s at tail_k %ld take %.0f doubles per "
                    "tick; allowed: at most %d: lower tail_k (the levels of the joint law)",
                    lbmc_run_option_key(key, sizeof key, where, "pairs"), J, J > 1 ? "s" : "",
                    o->tail_k, width, LBMC_PAIRS_MAX_WIDTH);
}
