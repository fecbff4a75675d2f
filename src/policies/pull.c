/* pull: PULL (Stolyar, "Pull-based load distribution in large-scale heterogeneous
 * service systems", Queueing Systems 80, 2015; multi-router version: Stolyar,
 * "... the case of multiple routers", Queueing Systems 85, 2017). A server whose
 * idleness increases sends one pull-message to a router chosen uniformly; idleness is
 * L_j - min(q, L_j), the service slots not in use, L_j the length of its pool's speed
 * list (section 6.1 of the first paper; L_j = 1, the plain model: a message when the
 * server becomes idle). A router holding messages sends the customer to the server of
 * one of them, chosen uniformly, and destroys it; a router holding none sends it to a
 * server chosen uniformly among all n. Option stale (docs/model.md, "Policies"):
 *   withdraw: a server hit that way while it has idleness withdraws one of its
 *             messages from the router holding it (one more message, counted also as a
 *             withdrawal), so a server's messages always equal its idleness;
 *   keep:     the message stays (JIQ, Lu et al. 2011) and may later send a customer
 *             to a busy server; a server sends a fresh message anyway.
 * Messages counted: one per pull-message sent, one per withdrawal. The messages of
 * the initial state (every server empty, L_j messages each) are not counted. */
#include <stdlib.h>

#include "../system/policy.h"

typedef struct {
  uint32_t server;
  uint32_t k; /* withdraw: index of the message in its server's list */
} lbmc_msg;

typedef struct {
  uint32_t router, pos;
} lbmc_msg_loc;

typedef struct {
  uint32_t R, L;     /* routers; most slots of any pool */
  lbmc_msg **msg;    /* R: the messages each router holds */
  uint32_t *count;   /* R */
  uint32_t *cap;     /* R */
  uint32_t *held;    /* n, withdraw only: messages out per server (= its idleness) */
  lbmc_msg_loc *loc; /* n x L, withdraw only: where they are */
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
  free(w->held);
  free(w->loc);
  free(w);
  *ws = NULL;
}

static lbmc_err lbmc_pull_create(const lbmc_state *st, void **ws)
{
  lbmc_pull_ws *w = calloc(1, sizeof *w);
  int ok = w != NULL;
  if (ok) {
    w->R = st->R;
    for (uint32_t j = 0; j < st->J; j++)
      if (st->slots[j] > w->L) w->L = st->slots[j];
    /* with one router, a router without messages means no server has idleness:
     * nothing can be withdrawn, so the bookkeeping is skipped */
    w->withdraw = st->m->stale == LBMC_STALE_WITHDRAW && w->R > 1;
    w->msg = calloc(w->R, sizeof *w->msg);
    w->count = calloc(w->R, sizeof *w->count);
    w->cap = calloc(w->R, sizeof *w->cap);
    ok = w->msg && w->count && w->cap;
    for (uint32_t r = 0; ok && r < w->R; r++) {
      w->cap[r] = (w->R == 1 ? st->n : st->n / w->R + 16) * w->L;
      w->msg[r] = malloc(sizeof **w->msg * w->cap[r]);
      ok = w->msg[r] != NULL;
    }
    if (ok && w->withdraw) {
      w->held = malloc(sizeof *w->held * st->n);
      w->loc = malloc(sizeof *w->loc * st->n * w->L);
      ok = w->held && w->loc;
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
  lbmc_msg m = {s, 0};
  if (w->count[r] == w->cap[r]) {
    uint32_t cap = w->cap[r] * 2 + 16;
    lbmc_msg *a = realloc(w->msg[r], sizeof *a * cap);
    if (!a) return -1;
    w->msg[r] = a;
    w->cap[r] = cap;
  }
  if (w->withdraw) {
    m.k = w->held[s]++;
    w->loc[(size_t)s * w->L + m.k] = (lbmc_msg_loc){r, w->count[r]};
  }
  w->msg[r][w->count[r]++] = m;
  return 0;
}

/* Remove message i of router r (swap with the router's last); returns its server. */
static uint32_t lbmc_pull_take(lbmc_pull_ws *w, uint32_t r, uint32_t i)
{
  lbmc_msg m = w->msg[r][i], last = w->msg[r][--w->count[r]];
  w->msg[r][i] = last;
  if (w->withdraw) {
    lbmc_msg_loc *mine = w->loc + (size_t)m.server * w->L;
    uint32_t top = --w->held[m.server];
    w->loc[(size_t)last.server * w->L + last.k].pos = i;
    if (m.k != top) { /* the server's last message takes the freed index m.k */
      mine[m.k] = mine[top];
      w->msg[mine[m.k].router][mine[m.k].pos].k = m.k;
    }
  }
  return m.server;
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
  if (w->withdraw)
    for (uint32_t s = 0; s < st->n; s++) w->held[s] = 0;
  for (uint32_t s = 0; s < st->n; s++)
    for (uint32_t k = 0; k < st->slots[st->pool_of[s]]; k++) lbmc_pull_send(st, w, s);
}

static uint32_t lbmc_pull_route(lbmc_state *st, void *ws, uint32_t r)
{
  lbmc_pull_ws *w = ws;
  uint32_t s;
  if (w->count[r] > 0) return lbmc_pull_take(w, r, lbmc_uint(st->s_route, w->count[r]));
  s = lbmc_uint(st->s_route, st->n);
  if (w->withdraw && w->held[s] > 0) { /* idle slots: one of its messages is elsewhere */
    const lbmc_msg_loc *at = w->loc + (size_t)s * w->L + (w->held[s] - 1);
    lbmc_pull_take(w, at->router, at->pos);
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

/* jiq (join-idle-queue, Lu et al. 2011): pull with stale keep. */
static const lbmc_policy_alias lbmc_pull_aliases[] = {
    {"jiq", "pull with --stale keep (join-idle-queue)", LBMC_STALE_KEEP},
    {NULL, NULL, -1},
};

const lbmc_policy_type lbmc_policy_pull = {
    .name = "pull",
    .aliases = lbmc_pull_aliases,
    .param = LBMC_PARAM_NONE,
    .summary = "PULL: servers send pull-messages to routers when their idleness grows (1 "
               "message per customer); --routers and --stale apply",
    .messages = "1 per pull-message (sent when a server's idleness grows) and 1 per withdrawal; "
                "the initial messages are not counted",
    .messages_per_arrival = "1",
    .uses_stale = 1,
    .create = lbmc_pull_create,
    .destroy = lbmc_pull_destroy,
    .reset = lbmc_pull_reset,
    .route = lbmc_pull_route,
    .on_idle = lbmc_pull_on_idle,
};
