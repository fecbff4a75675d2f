/* pull: PULL (Stolyar, "Pull-based load distribution in large-scale heterogeneous
 * service systems", Queueing Systems 80, 2015; multi-router version: Stolyar,
 * "... the case of multiple routers", Queueing Systems 85, 2017). A server that
 * becomes idle sends one pull-message to a router chosen uniformly. A router holding
 * messages sends the customer to the server of one of them, chosen uniformly, and
 * destroys it; a router holding none sends it to a server chosen uniformly among all
 * n. Option stale (SPEC section 2):
 *   withdraw: a server hit that way while idle withdraws its message from the other
 *             router (one more message, counted also as a withdrawal), so every
 *             message points to an idle server and idle <=> exactly one message;
 *   keep:     the message stays (JIQ, Lu et al. 2011) and may later send a customer
 *             to a busy server; an idle-again server sends a fresh message anyway.
 * Messages counted: one per pull-message sent, one per withdrawal. The messages of
 * the initial state (every server idle, one message each) are not counted. */
#include <stdlib.h>

#include "../engine/policy.h"

typedef struct {
  uint32_t R;
  uint32_t **msg;  /* R: servers named by the messages each router holds */
  uint32_t *count; /* R */
  uint32_t *cap;   /* R */
  int32_t *where;  /* n, withdraw only: router holding the server's message, -1 if none */
  uint32_t *slot;  /* n, withdraw only: its index in that router's array */
  int withdraw;
} lbmc_pull_ws;

static void lbmc_pull_destroy(void **ws)
{
  lbmc_pull_ws *w = *ws;
  if (!w) return;
  if (w->msg)
    for (uint32_t r = 0; r < w->R; r++) free(w->msg[r]);
  free(w->msg);
  free(w->count);
  free(w->cap);
  free(w->where);
  free(w->slot);
  free(w);
  *ws = NULL;
}

static lbmc_err lbmc_pull_create(const lbmc_state *st, void **ws)
{
  lbmc_pull_ws *w = calloc(1, sizeof *w);
  int ok = w != NULL;
  if (ok) {
    w->R = st->R;
    /* with one router, a router without messages means no server is idle: nothing
     * can be withdrawn, so the bookkeeping is skipped */
    w->withdraw = st->m->stale == LBMC_STALE_WITHDRAW && w->R > 1;
    w->msg = calloc(w->R, sizeof *w->msg);
    w->count = calloc(w->R, sizeof *w->count);
    w->cap = calloc(w->R, sizeof *w->cap);
    ok = w->msg && w->count && w->cap;
    for (uint32_t r = 0; ok && r < w->R; r++) {
      /* room for every server's message at one router avoids most regrowth */
      w->cap[r] = w->R == 1 ? st->n : st->n / w->R + 16;
      w->msg[r] = malloc(sizeof **w->msg * w->cap[r]);
      ok = w->msg[r] != NULL;
    }
    if (ok && w->withdraw) {
      w->where = malloc(sizeof *w->where * st->n);
      w->slot = malloc(sizeof *w->slot * st->n);
      ok = w->where && w->slot;
    }
  }
  if (!ok) {
    lbmc_pull_destroy((void **)&w);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "pull: out of memory");
  }
  *ws = w;
  return LBMC_SUCCESS;
}

/* Append a message naming server s at router r; 0 on success. */
static int lbmc_pull_put(lbmc_pull_ws *w, uint32_t r, uint32_t s)
{
  if (w->count[r] == w->cap[r]) {
    uint32_t cap = w->cap[r] * 2 + 16;
    uint32_t *a = realloc(w->msg[r], sizeof *a * cap);
    if (!a) return -1;
    w->msg[r] = a;
    w->cap[r] = cap;
  }
  if (w->withdraw) {
    w->where[s] = (int32_t)r;
    w->slot[s] = w->count[r];
  }
  w->msg[r][w->count[r]++] = s;
  return 0;
}

/* Remove message i of router r (swap with the last); returns its server. */
static uint32_t lbmc_pull_take(lbmc_pull_ws *w, uint32_t r, uint32_t i)
{
  uint32_t s = w->msg[r][i], last = w->msg[r][--w->count[r]];
  w->msg[r][i] = last;
  if (w->withdraw) {
    w->slot[last] = i;
    w->where[s] = -1;
  }
  return s;
}

static void lbmc_pull_send(lbmc_state *st, lbmc_pull_ws *w, uint32_t s)
{
  uint32_t r = w->R > 1 ? lbmc_uint(st->s_route, w->R) : 0;
  if (lbmc_pull_put(w, r, s) != 0) st->overflow = 1; /* out of memory: stop the replica */
}

static void lbmc_pull_reset(lbmc_state *st, void *ws)
{
  lbmc_pull_ws *w = ws;
  for (uint32_t r = 0; r < w->R; r++) w->count[r] = 0;
  for (uint32_t s = 0; s < st->n; s++) lbmc_pull_send(st, w, s);
}

static uint32_t lbmc_pull_route(lbmc_state *st, void *ws, uint32_t r)
{
  lbmc_pull_ws *w = ws;
  uint32_t s;
  if (w->count[r] > 0) return lbmc_pull_take(w, r, lbmc_uint(st->s_route, w->count[r]));
  s = lbmc_uint(st->s_route, st->n);
  if (w->withdraw && w->where[s] >= 0) { /* idle server, its message is elsewhere */
    lbmc_pull_take(w, (uint32_t)w->where[s], w->slot[s]);
    st->c.messages++;
    st->c.withdrawals++;
  }
  return s;
}

static void lbmc_pull_on_idle(lbmc_state *st, void *ws, uint32_t s)
{
  lbmc_pull_send(st, ws, s);
  st->c.messages++;
}

const lbmc_policy_type lbmc_policy_pull = {
    .name = "pull",
    .param = LBMC_PARAM_NONE,
    .summary = "PULL: idle servers send pull-messages to routers (1 message per customer); "
               "--routers and --stale apply",
    .uses_stale = 1,
    .create = lbmc_pull_create,
    .destroy = lbmc_pull_destroy,
    .reset = lbmc_pull_reset,
    .route = lbmc_pull_route,
    .on_idle = lbmc_pull_on_idle,
};
