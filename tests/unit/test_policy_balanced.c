/* balanced(c) on hand-built states: c distinct servers drawn one after another, each
 * with probability proportional to mu among those not yet drawn; the fewest customers
 * wins, ties uniformly; 2c messages. */
#include <string.h>

#include "unit.h"

#define NROUTE 200000

static void check(long n, int J, const double *beta, const double *mu, const char *policy,
                  const uint32_t *q, const double *probs, int gennum)
{
  ut_pconf c = {
      .n = n, .J = J, .beta = beta, .mu = mu, .policy = policy, .gennum = gennum, .seed = 8080};
  ut_pstate *p = ut_pstate_new(&c);
  long cnt[8] = {0}, param = lbmc_model_policy_param(p->m);
  for (uint32_t s = 0; s < p->st.n; s++) ut_set_q(p, s, q[s]);
  for (long i = 0; i < NROUTE; i++) cnt[ut_route(p, 0)]++;
  UT_CHECK((int64_t)p->st.tally.c.messages == 2 * param * NROUTE,
           "%s: %lld messages, want 2c per arrival", policy, (long long)p->st.tally.c.messages);
  UT_CHECK_COUNTS(policy, cnt, probs, (int)n, NROUTE);
  ut_pstate_free(p);
}

/* Three servers, one per pool, mu = (1, 2, 3) (total 6), c = 2. An ordered draw (i, k)
 * has probability mu_i/6 * mu_k/(6 - mu_i). Server i is in the sample with probability
 *   P(0) = 1/6 + (2/6)(1/4) + (3/6)(1/3) = 5/12,
 *   P(1) = 2/6 + (1/6)(2/5) + (3/6)(2/3) = 11/15,
 *   P(2) = 3/6 + (1/6)(3/5) + (2/6)(3/4) = 17/20     (sum 2).
 * Equal queues: the tie of the two drawn is uniform, so server i is chosen with
 * probability P(i)/2 = (5/24, 11/30, 17/40). (Keeping the first drawn would give the
 * first-draw probabilities (1/6, 1/3, 1/2); the lowest index, (5/12, 7/12, 0).)
 * q = (0, 1, 1): server 0 whenever drawn, 5/12; otherwise the pair {1, 2} (7/12), a tie:
 * (5/12, 7/24, 7/24). q = (1, 1, 0): server 2 whenever drawn, 17/20; else {0, 1}:
 * (3/40, 3/40, 17/20). c = 1: proportional to mu, (1/6, 1/3, 1/2), whatever q. c = 3 = n:
 * every server drawn, the minimum, ties uniform. */
static void test_three_pools(void)
{
  const double beta[] = {1.0 / 3, 1.0 / 3, 1.0 / 3}, mu[] = {1, 2, 3};
  check(3, 3, beta, mu, "balanced(2)", (const uint32_t[]){0, 0, 0},
        (const double[]){5.0 / 24, 11.0 / 30, 17.0 / 40}, 60);
  check(3, 3, beta, mu, "balanced(2)", (const uint32_t[]){0, 1, 1},
        (const double[]){5.0 / 12, 7.0 / 24, 7.0 / 24}, 61);
  check(3, 3, beta, mu, "balanced(2)", (const uint32_t[]){1, 1, 0},
        (const double[]){3.0 / 40, 3.0 / 40, 17.0 / 20}, 62);
  check(3, 3, beta, mu, "balanced(1)", (const uint32_t[]){0, 4, 9},
        (const double[]){1.0 / 6, 1.0 / 3, 1.0 / 2}, 63);
  check(3, 3, beta, mu, "balanced(3)", (const uint32_t[]){2, 2, 2},
        (const double[]){1.0 / 3, 1.0 / 3, 1.0 / 3}, 64);
  check(3, 3, beta, mu, "balanced(3)", (const uint32_t[]){2, 1, 2}, (const double[]){0, 1, 0}, 65);
}

/* Two pools of 3 servers, mu = (1, 3) (total 12), c = 2, equal queues. A pool-1 server
 * a is drawn first w.p. 1/12, second after another pool-1 server w.p. (2/12)(1/11),
 * second after a pool-2 server w.p. (9/12)(1/9): in total 2/11. A pool-2 server b:
 * 3/12 + (6/12)(3/9) + (3/12)(3/11) = 16/33 (3 * 2/11 + 3 * 16/33 = 2). Chosen (uniform
 * tie): 1/11 for each pool-1 server, 8/33 for each pool-2 server. Exercises the
 * without-replacement draws inside a pool. */
static void test_two_pools(void)
{
  const double beta[] = {0.5, 0.5}, mu[] = {1, 3};
  const double a = 1.0 / 11, b = 8.0 / 33;
  check(6, 2, beta, mu, "balanced(2)", (const uint32_t[]){1, 1, 1, 1, 1, 1},
        (const double[]){a, a, a, b, b, b}, 66);
}

int ut_register_policy_balanced(void)
{
  static const ut_test tests[] = {
      {"balanced(c): three pools, exact probabilities", test_three_pools},
      {"balanced(2): two pools of three", test_two_pools},
      {NULL, NULL}};
  return ut_add_suite("policy balanced", tests);
}
