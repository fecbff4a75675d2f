/* The list of observers (observer.h) and the set of a run: its creation from the run's
 * settings, the blocks' offsets, the tally's hooks.
 * Adding an observer: one file in this directory defining a const lbmc_observer_type,
 * one line in LBMC_OBSERVER_LIST below (docs/architecture.md). */
#include "observers.h"

#include <stdlib.h>

#include "../core/ticks.h"

/* A test build registers one more observer (tests/engine/): -DLBMC_TEST_OBSERVER=its
 * type's name. */
#ifdef LBMC_TEST_OBSERVER
#define LBMC_OBSERVER_LIST_TEST(X) X(LBMC_TEST_OBSERVER)
#else
#define LBMC_OBSERVER_LIST_TEST(X)
#endif

/* The registry: one line per observer, in the order of their blocks. */
#define LBMC_OBSERVER_LIST(X) LBMC_OBSERVER_LIST_TEST(X)

#define LBMC_X_DECLARE(type) extern const lbmc_observer_type type;
LBMC_OBSERVER_LIST(LBMC_X_DECLARE)
#undef LBMC_X_DECLARE

static const lbmc_observer_type *const lbmc_observer_types[] = {
#define LBMC_X_ENTRY(type) &type,
    LBMC_OBSERVER_LIST(LBMC_X_ENTRY)
#undef LBMC_X_ENTRY
        NULL /* the end (the list may be empty) */
};

int lbmc_observer_count(void)
{
  return (int)(sizeof lbmc_observer_types / sizeof lbmc_observer_types[0]) - 1;
}

const lbmc_observer_type *lbmc_observer_get(int i)
{
  return i >= 0 && i < lbmc_observer_count() ? lbmc_observer_types[i] : NULL;
}

/** One observer of a run. */
typedef struct {
  const lbmc_observer_type *type;
  void *ws;
  size_t offset; /* of its block, after the fixed part of the tick record */
} lbmc_observer_slot;

struct lbmc_observers_ {
  int count;
  lbmc_observer_slot slot[]; /* count */
};

size_t lbmc_observers_width(const lbmc_model *m, const lbmc_run_options *o)
{
  size_t w = 0;
  for (int i = 0; i < lbmc_observer_count(); i++)
    if (lbmc_observer_types[i]->wanted(m, o)) w += lbmc_observer_types[i]->width(m, (int)o->tail_k);
  return w;
}

lbmc_err lbmc_observers_create(const lbmc_model *m, const lbmc_run_options *o, lbmc_observers **out)
{
  lbmc_observers *obs;
  int wanted = 0;
  size_t offset = 0;
  *out = NULL;
  for (int i = 0; i < lbmc_observer_count(); i++) wanted += lbmc_observer_types[i]->wanted(m, o);
  if (!wanted) return LBMC_SUCCESS;
  obs = calloc(1, sizeof *obs + sizeof obs->slot[0] * (size_t)wanted);
  if (!obs) return LBMC_ERROR(LBMC_ERR_MEMORY, "observers: out of memory");
  for (int i = 0; i < lbmc_observer_count(); i++) {
    const lbmc_observer_type *t = lbmc_observer_types[i];
    lbmc_observer_slot *s = &obs->slot[obs->count];
    lbmc_err err;
    if (!t->wanted(m, o)) continue;
    s->type = t;
    s->offset = offset;
    offset += t->width(m, (int)o->tail_k);
    err = t->create(m, (int)o->tail_k, &s->ws);
    if (err) {
      lbmc_observers_destroy(&obs);
      return lbmc_error_trace(__FILE__, __LINE__, __func__, err);
    }
    obs->count++;
  }
  *out = obs;
  return LBMC_SUCCESS;
}

void lbmc_observers_destroy(lbmc_observers **obs)
{
  if (!obs || !*obs) return;
  for (int i = 0; i < (*obs)->count; i++) (*obs)->slot[i].type->destroy(&(*obs)->slot[i].ws);
  free(*obs);
  *obs = NULL;
}

/* The tally's hooks. */
static void lbmc_observers_move(void *ctx, double t, int j, uint32_t from, uint32_t to)
{
  const lbmc_observers *obs = ctx;
  for (int i = 0; i < obs->count; i++)
    if (obs->slot[i].type->move) obs->slot[i].type->move(obs->slot[i].ws, t, j, from, to);
}

static void lbmc_observers_close(void *ctx, const lbmc_view *v, double t0, double t1, double *block)
{
  const lbmc_observers *obs = ctx;
  for (int i = 0; i < obs->count; i++)
    obs->slot[i].type->close(obs->slot[i].ws, v, t0, t1,
                             block ? block + obs->slot[i].offset : NULL);
}

void lbmc_observers_attach(lbmc_observers *obs, lbmc_tally *t)
{
  int moves = 0;
  for (int i = 0; obs && i < obs->count; i++) moves |= obs->slot[i].type->move != NULL;
  t->obs_ctx = obs;
  t->observe = obs ? lbmc_observers_close : NULL;
  t->move = moves ? lbmc_observers_move : NULL;
}

void lbmc_observers_reset(lbmc_observers *obs, const lbmc_view *v)
{
  for (int i = 0; obs && i < obs->count; i++)
    if (obs->slot[i].type->reset) obs->slot[i].type->reset(obs->slot[i].ws, v);
}
