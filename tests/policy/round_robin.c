/* round_robin: a test-only policy, registered only in the test build's variant of
 * lbmc_sim (tests/policy/CMakeLists.txt), to show that adding a policy is this one
 * file plus one registry line. Each router sends its customers to the servers in
 * turn, 0, 1, ..., n-1, 0, ... (router r starts at server r n / R); no messages.
 * Also written "rr". */
#include <stdlib.h>

#include "system/policy.h"

typedef struct {
  uint32_t *next; /* R: the server each router sends its next customer to */
} lbmc_rr_ws;

static lbmc_err lbmc_rr_create(const lbmc_state *st, void **ws)
{
  lbmc_rr_ws *w = calloc(1, sizeof *w);
  if (w) w->next = malloc(sizeof *w->next * st->R);
  if (!w || !w->next) {
    free(w);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "round_robin: out of memory");
  }
  *ws = w;
  return LBMC_SUCCESS;
}

static void lbmc_rr_destroy(void **ws)
{
  lbmc_rr_ws *w = *ws;
  if (!w) return;
  free(w->next);
  free(w);
  *ws = NULL;
}

static void lbmc_rr_reset(lbmc_state *st, void *ws)
{
  lbmc_rr_ws *w = ws;
  for (uint32_t r = 0; r < st->R; r++) w->next[r] = (uint32_t)((uint64_t)r * st->n / st->R);
}

static uint32_t lbmc_rr_route(lbmc_state *st, void *ws, uint32_t r)
{
  lbmc_rr_ws *w = ws;
  uint32_t s = w->next[r];
  w->next[r] = s + 1 < st->n ? s + 1 : 0;
  return s;
}

static const lbmc_policy_alias lbmc_rr_aliases[] = {
    {"rr", "round_robin, short", -1},
    {NULL, NULL, -1},
};

const lbmc_policy_type lbmc_policy_round_robin = {
    .name = "round_robin",
    .aliases = lbmc_rr_aliases,
    .param = LBMC_PARAM_NONE,
    .summary = "each router sends its customers to the servers in turn (0 messages; a test)",
    .messages = "0",
    .messages_per_arrival = "0",
    .create = lbmc_rr_create,
    .destroy = lbmc_rr_destroy,
    .reset = lbmc_rr_reset,
    .route = lbmc_rr_route,
};
