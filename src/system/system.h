/* Private: the model as data (struct lbmc_model_): what the engines and the policies
 * read. It sits below them, with the per-server state (state.h) and the policy
 * interface (policy.h); the functions that fill and check it, parse the policy text
 * and answer the getters of lbmc/model.h are above the policies, in
 * src/model/model.c (docs/architecture.md). */
#ifndef LBMC_SYSTEM_H
#define LBMC_SYSTEM_H

#include <stdint.h>

#include "lbmc/service.h"
#include "lbmc/types.h"

struct lbmc_policy_type_;
struct lbmc_policy_alias_;

/* What the set-up model keeps of what is computed from it: the one part of a model that the
 * holders of a const model write (a cache: the model's values stay as they are). The model
 * owns the memo and what it holds: lbmc_model_setup makes an empty one (dropping the old
 * with what it held: the values may have changed), lbmc_model_duplicate gives the copy an
 * empty one of its own, lbmc_model_destroy frees it. Whoever fills a field owns its
 * content's type and sets the free function with it. Not for concurrent use: one thread
 * works on a model at a time (each MPI process sets up its own). */
typedef struct lbmc_model_memo_ {
  void *mf_point;                /* the solved mean-field point (src/engine/occ_meanfield.c),
                                    so that the engines' start and the verdict solve it once;
                                    NULL until solved */
  void (*mf_point_free)(void *); /* frees mf_point */
} lbmc_model_memo;

struct lbmc_model_ {
  int64_t n; /* servers, 1 .. LBMC_MAX_N (the per-server engines: LBMC_MAX_SERVERS) */
  double lambda;
  int J;
  double beta[LBMC_MAX_POOLS];
  double mu[LBMC_MAX_POOLS];
  long buffer[LBMC_MAX_POOLS]; /* LBMC_BUFFER_INF = unlimited */
  int64_t N[LBMC_MAX_POOLS];   /* servers per pool, after setup */
  lbmc_service *service;       /* nservice entries (at least J after set_pools; owned): pool j's
                                  service law (a phase-type law is kilobytes: not 64 inline) */
  int nservice;
  lbmc_service service_all;   /* the law of pools not given their own (set_service(-1)) */
  int nrates[LBMC_MAX_POOLS]; /* L_j: slots; 1 = constant speed mu_j */
  double rates[LBMC_MAX_POOLS][LBMC_MAX_RATES]; /* mu_j(1..L_j) */
  int64_t offset[LBMC_MAX_POOLS];               /* index of the pool's first server, after setup */
  const struct lbmc_policy_type_ *policy;
  long param;                             /* d or c; 0 if none */
  const struct lbmc_policy_alias_ *alias; /* the alias the policy was named by (jiq), or NULL */
  int stale_given;                        /* stale set explicitly by the user, as stale_user */
  lbmc_stale stale_user;
  lbmc_stale stale; /* effective value, resolved by lbmc_model_setup */
  lbmc_sampling sampling;
  long routers;
  char policy_text[64]; /* canonical, e.g. "jsq(2)" */
  char origin[256];
  int is_setup;
  lbmc_model_memo *memo; /* the set-up model's memo (owned; NULL before set-up) */
};

#endif
