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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/fenwick.h"
#include "../core/sampler.h"
#include "../system/occ_policy.h"
#include "../system/policy.h"
#include "occ_laws.h"

/* A message a router holds: an idle slot of `server`. */
typedef struct {
  uint32_t server;
  uint32_t k; /* withdraw: index of the message in its server's list */
} lbmc_pull_msg;

/* Where a message is: its router and its position in the router's list. */
typedef struct {
  uint32_t router, pos;
} lbmc_pull_msg_loc;

typedef struct {
  uint32_t R, L;          /* routers; most slots of any pool */
  lbmc_pull_msg **msg;    /* R: the messages each router holds */
  uint32_t *count;        /* R */
  uint32_t *cap;          /* R */
  uint32_t *held;         /* n, withdraw only: messages out per server (= its idleness) */
  lbmc_pull_msg_loc *loc; /* n x L, withdraw only: where they are */
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

/* The routers' message arrays (n L entries) and, withdrawing with R > 1, the messages'
 * places (n L) and counts (n). */
static double lbmc_pull_memory(const lbmc_model *m)
{
  double L = 1, n = (double)m->n;
  for (int j = 0; j < m->J; j++)
    if (m->nrates[j] > L) L = m->nrates[j];
  return n * L * sizeof(lbmc_pull_msg) +
         (m->stale == LBMC_STALE_WITHDRAW && m->routers > 1
              ? n * (sizeof(uint32_t) + L * sizeof(lbmc_pull_msg_loc))
              : 0);
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
  lbmc_pull_msg m = {s, 0};
  if (w->count[r] == w->cap[r]) {
    uint32_t cap = w->cap[r] * 2 + 16;
    lbmc_pull_msg *a = realloc(w->msg[r], sizeof *a * cap);
    if (!a) return -1;
    w->msg[r] = a;
    w->cap[r] = cap;
  }
  if (w->withdraw) {
    m.k = w->held[s]++;
    w->loc[(size_t)s * w->L + m.k] = (lbmc_pull_msg_loc){r, w->count[r]};
  }
  w->msg[r][w->count[r]++] = m;
  return 0;
}

/* Remove message i of router r (swap with the router's last); returns its server. */
static uint32_t lbmc_pull_take(lbmc_pull_ws *w, uint32_t r, uint32_t i)
{
  lbmc_pull_msg m = w->msg[r][i], last = w->msg[r][--w->count[r]];
  w->msg[r][i] = last;
  if (w->withdraw) {
    lbmc_pull_msg_loc *mine = w->loc + (size_t)m.server * w->L;
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
  if (lbmc_pull_put(w, r, s) != 0) lbmc_tally_out_of_memory(&st->tally); /* stop: an error */
}

static void lbmc_pull_reset(lbmc_state *st, void *ws)
{
  lbmc_pull_ws *w = ws;
  for (uint32_t r = 0; r < w->R; r++) w->count[r] = 0;
  if (w->withdraw)
    for (uint32_t s = 0; s < st->n; s++) w->held[s] = 0;
  for (uint32_t s = 0; s < st->n; s++) { /* one message per idle slot (every slot: empty) */
    const uint32_t L = st->slots[st->pool_of[s]], q = lbmc_q(st, s);
    for (uint32_t k = q < L ? q : L; k < L; k++) lbmc_pull_send(st, w, s);
  }
}

static uint32_t lbmc_pull_route(lbmc_state *st, void *ws, uint32_t r)
{
  lbmc_pull_ws *w = ws;
  uint32_t s;
  if (w->count[r] > 0) return lbmc_pull_take(w, r, lbmc_uint(st->s_route, w->count[r]));
  s = lbmc_uint(st->s_route, st->n);
  if (w->withdraw && w->held[s] > 0) { /* idle slots: one of its messages is elsewhere */
    const lbmc_pull_msg_loc *at = w->loc + (size_t)s * w->L + (w->held[s] - 1);
    lbmc_pull_take(w, at->router, at->pos);
    st->tally.c.messages++;
    st->tally.c.withdrawals++;
  }
  return s;
}

static void lbmc_pull_on_idle(lbmc_state *st, void *ws, uint32_t s)
{
  lbmc_pull_send(st, ws, s);
  st->tally.c.messages++;
}

/* jiq (join-idle-queue, Lu et al. 2011): pull with stale keep. */
/* ---- Occupancy form (the occupancy engine, src/system/occ_policy.h) ----
 * With stale: withdraw every message names a server with idleness and a server's
 * messages equal its idleness. With R = 1 the router's messages are therefore the idle
 * slots of the counts themselves (so keep, jiq, gives the same chain: a message is only
 * used while its server has idleness, and a random choice happens only when no server
 * has any). With R > 1 (plain servers only) the idle servers of pool j are split by the
 * router holding their message: y_j(r); the router of a withdrawn message is found by a
 * Fenwick tree per pool over the routers, O(log R) (with at most LBMC_PULL_SCAN routers
 * a scan of y_j is cheaper than keeping the trees). The initial messages (every server idle,
 * one message at a uniform router) are a multinomial split, drawn at reset. */

/* Most routers for which a withdrawn message is found by scanning y_j. */
#define LBMC_PULL_SCAN 16

typedef struct {
  uint32_t R;
  int64_t *y;      /* J x R: idle servers of pool j whose message router r holds */
  int64_t *M;      /* R: messages router r holds */
  lbmc_fenwick *f; /* J: trees over y_j(.), when R > LBMC_PULL_SCAN (else NULL) */
} lbmc_pull_occ_ws;

/* Add delta to y_j(r) and M(r). */
static void lbmc_pull_occ_move(lbmc_pull_occ_ws *w, uint32_t j, uint32_t r, int64_t delta)
{
  w->y[(size_t)j * w->R + r] += delta;
  w->M[r] += delta;
  if (w->f) lbmc_fenwick_add(&w->f[j], r, delta);
}

/* The router holding the message of pool j's idle server of rank v (0 <= v < idle). */
static uint32_t lbmc_pull_occ_router(const lbmc_pull_occ_ws *w, uint32_t j, int64_t v)
{
  const int64_t *y = w->y + (size_t)j * w->R;
  uint32_t r = 0;
  if (w->f) return lbmc_fenwick_find(&w->f[j], v);
  while (v >= y[r]) v -= y[r++];
  return r;
}

static int lbmc_pull_occ_applies(const lbmc_model *m, char *why, size_t len)
{
  if (m->routers == 1) return 1;
  if (m->stale == LBMC_STALE_KEEP) {
    snprintf(why, len,
             "pull with stale: keep and R > 1 (stale messages name servers that may be busy: "
             "the state is per server)");
    return 0;
  }
  for (int j = 0; j < m->J; j++)
    if (m->nrates[j] > 1) {
      snprintf(why, len,
               "pull with a speed list and R > 1 (a server's messages sit at "
               "several routers: the state is per server)");
      return 0;
    }
  return 1;
}

static void lbmc_pull_occ_destroy(void **ws)
{
  lbmc_pull_occ_ws *w = *ws;
  if (!w) return;
  if (w->f)
    for (uint32_t j = 0; j < LBMC_MAX_POOLS; j++) lbmc_fenwick_free(&w->f[j]);
  free(w->f);
  free(w->y);
  free(w->M);
  free(w);
  *ws = NULL;
}

static lbmc_err lbmc_pull_occ_create(const lbmc_occ_state *st, void **ws)
{
  lbmc_pull_occ_ws *w;
  int ok;
  *ws = NULL;
  if (st->R == 1) return LBMC_SUCCESS;
  w = calloc(1, sizeof *w);
  ok = w != NULL;
  if (ok) {
    w->R = st->R;
    w->y = calloc((size_t)st->J * st->R, sizeof *w->y);
    w->M = calloc(st->R, sizeof *w->M);
    if (st->R > LBMC_PULL_SCAN) w->f = calloc(LBMC_MAX_POOLS, sizeof *w->f);
    ok = w->y && w->M && (w->f || st->R <= LBMC_PULL_SCAN);
    for (uint32_t j = 0; ok && w->f && j < st->J; j++) ok = lbmc_fenwick_init(&w->f[j], st->R) == 0;
  }
  if (!ok) {
    lbmc_pull_occ_destroy((void **)&w);
    return LBMC_ERROR(LBMC_ERR_MEMORY, "pull: out of memory");
  }
  *ws = w;
  return LBMC_SUCCESS;
}

static lbmc_err lbmc_pull_occ_reset(lbmc_occ_state *st, void *ws)
{
  lbmc_pull_occ_ws *w = ws;
  gsl_rng *rng = NULL;
  if (!w) return LBMC_SUCCESS;
  LBMC_CALL(lbmc_sampler_create(st->s_route, &rng));
  for (uint32_t r = 0; r < w->R; r++) w->M[r] = 0;
  for (uint32_t j = 0; j < st->J; j++) {
    int64_t *y = w->y + (size_t)j * w->R;
    lbmc_occ_split_equal(rng, st->pool[j].N - st->pool[j].G[1], w->R, y);
    if (w->f) lbmc_fenwick_build(&w->f[j], y);
    for (uint32_t r = 0; r < w->R; r++) w->M[r] += y[r];
  }
  lbmc_sampler_destroy(&rng);
  return LBMC_SUCCESS;
}

/* R = 1: an idle slot uniformly (each is a message), else a uniform server. */
static lbmc_occ_class lbmc_pull_occ_route1(lbmc_occ_state *st)
{
  lbmc_occ_class c = {0, 0, 0};
  int64_t I = 0, U;
  const lbmc_occ_pool *p;
  uint32_t i = 1;
  for (uint32_t j = 0; j < st->J; j++) I += lbmc_occ_idle_slots(&st->pool[j]);
  if (I == 0) return lbmc_occ_class_of(st, (int64_t)lbmc_occ_uint(st->s_route, (uint64_t)st->n));
  if (st->J == 1 && st->pool[0].L == 1) return c;
  U = (int64_t)lbmc_occ_uint(st->s_route, (uint64_t)I);
  for (; c.j + 1 < st->J; c.j++) {
    int64_t x = lbmc_occ_idle_slots(&st->pool[c.j]);
    if (U < x) break;
    U -= x;
  }
  p = &st->pool[c.j];
  if (p->L == 1) return c;
  while (U >= p->N - p->G[i]) U -= p->N - p->G[i++]; /* idle slot layer i: servers below i */
  c.k = lbmc_occ_level(p, p->G[i] + U);
  return c;
}

static lbmc_occ_class lbmc_pull_occ_route(lbmc_occ_state *st, void *ws, uint32_t r)
{
  lbmc_pull_occ_ws *w = ws;
  lbmc_occ_class c = {0, 0, 0};
  int64_t Q, idle;
  if (!w) return lbmc_pull_occ_route1(st);
  if (w->M[r] > 0) { /* a message of router r, uniformly: pool j in proportion to y_j(r) */
    int64_t U = st->J > 1 ? (int64_t)lbmc_occ_uint(st->s_route, (uint64_t)w->M[r]) : 0;
    for (; c.j + 1 < st->J; c.j++) {
      if (U < w->y[(size_t)c.j * w->R + r]) break;
      U -= w->y[(size_t)c.j * w->R + r];
    }
    lbmc_pull_occ_move(w, c.j, r, -1);
    return c;
  }
  Q = (int64_t)lbmc_occ_uint(st->s_route, (uint64_t)st->n);
  c = lbmc_occ_class_of(st, Q);
  if (c.k == 0) { /* idle: its message, at another router, is withdrawn */
    idle = Q - st->off[c.j] - st->pool[c.j].G[1]; /* its rank among the pool's idle servers */
    lbmc_pull_occ_move(w, c.j, lbmc_pull_occ_router(w, c.j, idle), -1);
    st->tally.c.messages++;
    st->tally.c.withdrawals++;
  }
  return c;
}

static void lbmc_pull_occ_on_idle(lbmc_occ_state *st, void *ws, uint32_t j)
{
  lbmc_pull_occ_ws *w = ws;
  st->tally.c.messages++;
  if (w) lbmc_pull_occ_move(w, j, (uint32_t)lbmc_occ_uint(st->s_route, w->R), 1); /* uniform */
}

/* Mean-field law: every arrival takes an idle slot (pool j, level k < L_j in proportion
 * to (L_j - k) x_j(k)) while there is one, else a uniform server; between integer counts
 * of idle slots I the share min(1, I) interpolates. With many routers the same law holds
 * in the limit (each holds a positive fraction of the messages). */
static void lbmc_pull_occ_law(const lbmc_occ_mf *mf, double *p)
{
  const uint32_t Lv = mf->levels;
  double I = 0, q;
  for (uint32_t j = 0; j < mf->J; j++)
    for (uint32_t k = 0; k < Lv && k < (uint32_t)mf->m->nrates[j]; k++)
      I += mf->n * mf->b[j] * (mf->m->nrates[j] - (double)k) * fmax(0.0, mf->s[j * Lv + k]);
  q = fmin(1.0, I);
  lbmc_occ_law_min_of(mf, NULL, 1, 0, p); /* the uniform server */
  for (uint32_t j = 0; j < mf->J; j++)
    for (uint32_t k = 0; k < Lv; k++) {
      double idle =
          k < (uint32_t)mf->m->nrates[j]
              ? mf->n * mf->b[j] * (mf->m->nrates[j] - (double)k) * fmax(0.0, mf->s[j * Lv + k])
              : 0.0;
      p[j * Lv + k] = (1 - q) * p[j * Lv + k] + (I > 0 ? q * idle / I : 0.0);
    }
}

static const lbmc_occupancy_ops lbmc_pull_occupancy = {
    .applies = lbmc_pull_occ_applies,
    .create = lbmc_pull_occ_create,
    .destroy = lbmc_pull_occ_destroy,
    .reset = lbmc_pull_occ_reset,
    .route = lbmc_pull_occ_route,
    .on_idle = lbmc_pull_occ_on_idle,
    .law = lbmc_pull_occ_law,
};

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
    .occupancy = &lbmc_pull_occupancy,
    .memory = lbmc_pull_memory,
    .create = lbmc_pull_create,
    .destroy = lbmc_pull_destroy,
    .reset = lbmc_pull_reset,
    .route = lbmc_pull_route,
    .on_idle = lbmc_pull_on_idle,
};
