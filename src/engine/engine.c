/* The dispatcher: the choice of the engine of a model (from the registry, engines.c),
 * the random streams of a replica, the CPU clock, the observers and the stop hook (on the
 * engine's tally). Everything else is the engine's (engine_type.h). */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/ticks.h"
#include "../system/system.h"
#include "engines.h"
#include "lbmc/engines.h"
#include "lbmc/rng.h"

struct lbmc_engine_ {
  const lbmc_engine_type *type;
  void *ws;                           /* the engine's workspace */
  lbmc_stream streams[LBMC_PURPOSES]; /* the replica's streams, one per purpose */
  double cpu0;                        /* thread CPU time at the last lbmc_engine_cpu */
  uint64_t cap;                       /* the runaway cap in force */
  lbmc_observers *obs;                /* the observers (not owned), or NULL */
};

static double lbmc_thread_cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Append "<sep>text" (or "text" first) to buf[len]. */
static void lbmc_engine_list_add(char *buf, size_t len, const char *sep, const char *text)
{
  size_t used = len ? strlen(buf) : 0;
  if (used + 1 < len) snprintf(buf + used, len - used, "%s%s", used ? sep : "", text);
}

const lbmc_engine_type *lbmc_engine_choose(const lbmc_model *m, lbmc_engine_kind kind, char *why,
                                           size_t len, char *apply, size_t alen)
{
  const lbmc_engine_type *chosen = NULL;
  char reason[256];
  if (len) why[0] = '\0';
  if (alen) apply[0] = '\0';
  for (int k = 1; k < lbmc_engine_kinds(); k++) {
    const lbmc_engine_type *t = lbmc_engine_type_of(k);
    int ok;
    reason[0] = '\0';
    ok = t->applies(m, reason, sizeof reason);
    if (ok) lbmc_engine_list_add(apply, alen, ", ", t->name);
    if (ok && !chosen && (kind == LBMC_ENGINE_AUTO || (int)kind == k)) chosen = t;
    if (!ok && (kind == LBMC_ENGINE_AUTO || (int)kind == k)) {
      char item[320];
      snprintf(item, sizeof item, "%s%s%s", kind == LBMC_ENGINE_AUTO ? t->name : "",
               kind == LBMC_ENGINE_AUTO ? ": " : "", reason);
      lbmc_engine_list_add(why, len, "; ", item);
    }
  }
  return chosen;
}

uint64_t lbmc_engine_default_cap(const lbmc_engine_type *t, const lbmc_model *m)
{
  uint64_t cap = 1000 * (uint64_t)m->n + 100000;
  return cap < t->cap_default_max ? cap : t->cap_default_max;
}

lbmc_err lbmc_engine_create(const lbmc_model *m, int K, uint64_t max_customers,
                            lbmc_engine_kind kind, lbmc_engine **out)
{
  lbmc_engine *e;
  const lbmc_engine_type *type;
  char why[1024];
  lbmc_err err;
  if (!m->is_setup) return LBMC_ERROR(LBMC_ERR_INTERNAL, "engine: model not set up");
  if (!lbmc_engine_kind_name((int)kind)) {
    char names[256];
    return LBMC_ERROR(LBMC_ERR_ARG, "engine kind %d is not allowed; allowed: %s", (int)kind,
                      lbmc_engine_names(names, sizeof names, 1, ", ", ", "));
  }
  type = lbmc_engine_choose(m, kind, why, sizeof why, NULL, 0);
  if (!type)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s%s cannot simulate this model: %s",
                      kind == LBMC_ENGINE_AUTO ? "no engine" : "engine ",
                      kind == LBMC_ENGINE_AUTO ? "" : lbmc_engine_kind_name((int)kind), why);
  if (max_customers == 0) max_customers = lbmc_engine_default_cap(type, m);
  if (max_customers > type->cap_max)
    return LBMC_ERROR(
        LBMC_ERR_ARG, "max_customers = %llu exceeds the %llu customers the %s engine holds",
        (unsigned long long)max_customers, (unsigned long long)type->cap_max, type->name);
  e = calloc(1, sizeof *e);
  if (!e) return LBMC_ERROR(LBMC_ERR_MEMORY, "engine: out of memory");
  e->type = type;
  e->cap = max_customers;
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
    LBMC_CALL(lbmc_stream_init(&e->streams[p], gennum[p], seed));
  LBMC_CALL(e->type->reset(e->ws, e->streams));
  lbmc_observers_reset(e->obs, e->type->view(e->ws));
  e->cpu0 = lbmc_thread_cpu();
  return LBMC_SUCCESS;
}

lbmc_err lbmc_engine_advance(lbmc_engine *e, double t_end, double *rec)
{
  LBMC_CALL(e->type->advance(e->ws, t_end, rec));
  if (rec) rec[LBMC_TK_CPU] = 0; /* lbmc_engine_cpu measures it, once per many ticks */
  return LBMC_SUCCESS;
}

double lbmc_engine_cpu(lbmc_engine *e)
{
  double cpu = lbmc_thread_cpu(), since = cpu - e->cpu0;
  e->cpu0 = cpu;
  return since;
}

void lbmc_engine_set_histograms(lbmc_engine *e, lbmc_dhist *sojourn, lbmc_dhist *wait)
{
  e->type->set_histograms(e->ws, sojourn, wait);
}

lbmc_err lbmc_engine_set_init(lbmc_engine *e, const lbmc_run_options *o, char *note, size_t len)
{
  if (len) note[0] = '\0';
  if (o->init == LBMC_INIT_TAIL && !e->type->tail_start)
    return LBMC_ERROR(LBMC_ERR_ARG,
                      "--init tail:...: the %s engine cannot start from a given state (only the "
                      "occupancy engine can: use --engine occupancy where it applies)",
                      e->type->name);
  if (e->type->set_init) return e->type->set_init(e->ws, o, note, len);
  if (o->init == LBMC_INIT_MEANFIELD)
    snprintf(note, len, "replicas start empty: the %s engine has no mean-field start",
             e->type->name);
  return LBMC_SUCCESS;
}

int lbmc_engine_meanfield_start(lbmc_engine *e)
{
  return e->type->meanfield_start && e->type->meanfield_start(e->ws);
}

lbmc_err lbmc_engine_mixture_create(const lbmc_engine *e, lbmc_mixture **mix)
{
  *mix = NULL;
  return e->type->mixture_create ? e->type->mixture_create(e->ws, mix) : LBMC_SUCCESS;
}

void lbmc_engine_set_mixture(lbmc_engine *e, lbmc_mixture *mix)
{
  if (e->type->set_mixture) e->type->set_mixture(e->ws, mix);
}

uint64_t lbmc_engine_cap(const lbmc_engine *e) { return e->cap; }

int lbmc_engine_overflowed(const lbmc_engine *e)
{
  return e->type->tally(e->ws)->halt == LBMC_HALT_CAP;
}

int lbmc_engine_uses_mixtures(const lbmc_engine *e) { return e->type->mixtures; }

void lbmc_engine_set_observers(lbmc_engine *e, lbmc_observers *obs)
{
  e->obs = obs;
  lbmc_observers_attach(obs, e->type->tally(e->ws));
}

void lbmc_engine_set_stop(lbmc_engine *e, int (*stop)(void *ctx), void *ctx)
{
  lbmc_tally *t = e->type->tally(e->ws);
  t->stop = stop;
  t->stop_ctx = ctx;
}

const lbmc_view *lbmc_engine_view(const lbmc_engine *e) { return e->type->view(e->ws); }
double lbmc_engine_time(const lbmc_engine *e) { return e->type->time(e->ws); }
const char *lbmc_engine_name(const lbmc_engine *e) { return e->type->name; }

const lbmc_state *lbmc_engine_state(const lbmc_engine *e)
{
  return e->type->state ? e->type->state(e->ws) : NULL;
}
