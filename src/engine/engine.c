/* The dispatcher: the registry of engines (one line each), the choice of the engine
 * of a model, the random streams of a replica and the CPU clock. Everything else is
 * the engine's (engine_type.h). */
#include "engine.h"

#include <stdlib.h>
#include <time.h>

#include "../core/ticks.h"
#include "../system/system.h"
#include "lbmc/rng.h"

extern const lbmc_engine_type lbmc_engine_servers;
extern const lbmc_engine_type lbmc_engine_general;

/* The registry, in the order `auto` tries them. */
static const lbmc_engine_type *const lbmc_engines[] = {
    &lbmc_engine_servers,
    &lbmc_engine_general,
};

struct lbmc_engine_ {
  const lbmc_engine_type *type;
  void *ws;                           /* the engine's workspace */
  lbmc_stream streams[LBMC_PURPOSES]; /* the replica's streams, one per purpose */
  double cpu0;                        /* thread CPU time at the start of the current tick */
};

static double lbmc_thread_cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The engine of model m: the first of the registry that applies (auto), or the one of
 * that kind, which must apply. */
static lbmc_err lbmc_engine_pick(const lbmc_model *m, lbmc_engine_kind kind,
                                 const lbmc_engine_type **out)
{
  const int count = (int)(sizeof lbmc_engines / sizeof lbmc_engines[0]);
  char why[160] = "";
  for (int i = 0; i < count; i++) {
    const lbmc_engine_type *t = lbmc_engines[i];
    if (kind != LBMC_ENGINE_AUTO && t->kind != kind) continue;
    if (t->applies(m, why, sizeof why)) {
      *out = t;
      return LBMC_SUCCESS;
    }
    if (kind != LBMC_ENGINE_AUTO)
      return LBMC_ERROR(LBMC_ERR_ARG, "engine %s cannot simulate this model: %s", t->name, why);
  }
  return LBMC_ERROR(LBMC_ERR_ARG, "no engine can simulate this model%s%s", *why ? ": " : "", why);
}

lbmc_err lbmc_engine_create(const lbmc_model *m, int K, uint64_t max_customers,
                            lbmc_engine_kind kind, lbmc_engine **out)
{
  lbmc_engine *e;
  const lbmc_engine_type *type = NULL;
  lbmc_err err;
  if (!m->is_setup) return LBMC_ERROR(LBMC_ERR_INTERNAL, "engine: model not set up");
  LBMC_CHECK(lbmc_engine_pick(m, kind, &type));
  e = calloc(1, sizeof *e);
  if (!e) return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory");
  e->type = type;
  for (int p = 0; p < LBMC_PURPOSES; p++) e->streams[p].pos = LBMC_STREAM_BUF;
  err = type->create(m, K, max_customers, &e->ws);
  if (err) {
    lbmc_engine_destroy(&e);
    return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
  }
  *out = e;
  return LBMC_SUCCESS;
}

void lbmc_engine_destroy(lbmc_engine **e)
{
  if (!e || !*e) return;
  if ((*e)->ws) (*e)->type->destroy(&(*e)->ws);
  for (int p = 0; p < LBMC_PURPOSES; p++) lbmc_stream_free(&(*e)->streams[p]);
  free(*e);
  *e = NULL;
}

lbmc_err lbmc_engine_reset(lbmc_engine *e, const int *gennum, long seed)
{
  for (int p = 0; p < LBMC_PURPOSES; p++)
    LBMC_CHECK(lbmc_stream_init(&e->streams[p], gennum[p], seed));
  LBMC_CHECK(e->type->reset(e->ws, e->streams));
  e->cpu0 = lbmc_thread_cpu();
  return LBMC_SUCCESS;
}

lbmc_err lbmc_engine_advance(lbmc_engine *e, double t_end, double *rec)
{
  double cpu;
  LBMC_CHECK(e->type->advance(e->ws, t_end, rec));
  cpu = lbmc_thread_cpu();
  if (rec) rec[LBMC_TK_CPU] = cpu - e->cpu0;
  e->cpu0 = cpu;
  return LBMC_SUCCESS;
}

void lbmc_engine_set_histograms(lbmc_engine *e, uint64_t *sojourn, uint64_t *wait)
{
  e->type->set_histograms(e->ws, sojourn, wait);
}

int lbmc_engine_overflowed(const lbmc_engine *e) { return e->type->overflowed(e->ws); }
double lbmc_engine_time(const lbmc_engine *e) { return e->type->time(e->ws); }
const char *lbmc_engine_name(const lbmc_engine *e) { return e->type->name; }

const lbmc_state *lbmc_engine_state(const lbmc_engine *e)
{
  return e->type->state ? e->type->state(e->ws) : NULL;
}
