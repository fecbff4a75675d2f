/* Policies random, jsq(d) and jsq on hand-built states: which server gets the customer,
 * with what probability (per-cell binomial and chi-square bounds at 5 sigma, see
 * unit.h), and how many messages each call counts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"

#define NROUTE 100000

/* Route N customers at router 0 without changing the state; counts per server. Checks
 * that every call counts exactly `msg` messages and no withdrawal. */
static void route_counts(ut_pstate *p, long N, long *c, int64_t msg)
{
  int64_t m0 = p->st.tally.c.messages, w0 = p->st.tally.c.withdrawals;
  memset(c, 0, sizeof *c * p->st.n);
  for (long i = 0; i < N; i++) {
    uint32_t s = ut_route(p, 0);
    CU_ASSERT_FATAL(s < p->st.n);
    c[s]++;
  }
  UT_CHECK((int64_t)(p->st.tally.c.messages - m0) == msg * N,
           "%s: %lld messages for %ld arrivals, want %lld each", lbmc_model_policy(p->m),
           (long long)(p->st.tally.c.messages - m0), N, (long long)msg);
  CU_ASSERT_EQUAL(p->st.tally.c.withdrawals, w0);
}

static void set_all(ut_pstate *p, const uint32_t *q)
{
  for (uint32_t s = 0; s < p->st.n; s++) ut_set_q(p, s, q[s]);
}

static void check_policy(const char *policy, const char *sampling, long n, const uint32_t *q,
                         const double *probs, int64_t msg, int gennum)
{
  ut_pconf c = {.n = n, .policy = policy, .sampling = sampling, .gennum = gennum, .seed = 4242};
  ut_pstate *p = ut_pstate_new(&c);
  long cnt[16];
  char what[128];
  set_all(p, q);
  route_counts(p, NROUTE, cnt, msg);
  snprintf(what, sizeof what, "%s %s n=%ld", policy, sampling ? sampling : "", n);
  UT_CHECK_COUNTS(what, cnt, probs, (int)n, NROUTE);
  ut_pstate_free(p);
}

static void test_random(void)
{
  const double u5[] = {0.2, 0.2, 0.2, 0.2, 0.2};
  check_policy("random", NULL, 5, (const uint32_t[]){0, 0, 0, 0, 0}, u5, 0, 10);
  check_policy("random", NULL, 5, (const uint32_t[]){0, 3, 0, 5, 1}, u5, 0, 11); /* blind to q */
}

/* jsq(2), distinct sampling: the 6 pairs of 4 servers are equally likely.
 * q = (0,1,1,2): server 0 wins the 3 pairs it is in: 1/2; server 3 never wins; servers
 * 1, 2 win {1,3} resp. {2,3} and half of the tie {1,2}: 1/6 + 1/12 = 1/4 each.
 * (A tie-break favouring the lower index would give 1/3 and 1/6.)
 * All equal: uniform 1/4. n = 2: the longer of two is never chosen.
 * jsq(3) of 5, q = (3,1,1,2,0): server 4 is in the sample w.p. 3/5 and wins; otherwise
 * the 4 triples of {0,1,2,3} give server 1 (1/2 + 1 + 0 + 1/2)/4 = 1/2, server 2 too:
 * (0, 1/5, 1/5, 0, 3/5). Messages: 2d per arrival. */
static void test_jsqd_distinct(void)
{
  check_policy("jsq(2)", NULL, 4, (const uint32_t[]){0, 1, 1, 2},
               (const double[]){0.5, 0.25, 0.25, 0}, 4, 20);
  check_policy("jsq(2)", NULL, 4, (const uint32_t[]){2, 2, 2, 2},
               (const double[]){0.25, 0.25, 0.25, 0.25}, 4, 21);
  check_policy("jsq(2)", NULL, 2, (const uint32_t[]){0, 5}, (const double[]){1, 0}, 4, 22);
  check_policy("jsq(2)", NULL, 2, (const uint32_t[]){1, 0}, (const double[]){0, 1}, 4, 23);
  check_policy("jsq(2)", "distinct", 2, (const uint32_t[]){3, 3}, (const double[]){0.5, 0.5}, 4,
               24);
  check_policy("jsq(3)", NULL, 5, (const uint32_t[]){3, 1, 1, 2, 0},
               (const double[]){0, 0.2, 0.2, 0, 0.6}, 6, 25);
}

/* jsq(2) with replacement: 16 equally likely ordered pairs.
 * n = 2, q = (0,5): server 1 only if both draws are 1: 1/4 (distinct: never).
 * q = (0,1,1,2): server 0 if any draw is 0: 1 - (3/4)^2 = 7/16; server 3 only for (3,3):
 * 1/16; servers 1, 2 share the remaining 8/16 by symmetry: 1/4 each. Messages 2d even
 * when a server is drawn twice. */
static void test_jsqd_replacement(void)
{
  check_policy("jsq(2)", "with_replacement", 2, (const uint32_t[]){0, 5},
               (const double[]){0.75, 0.25}, 4, 30);
  check_policy("jsq(2)", "with_replacement", 4, (const uint32_t[]){0, 1, 1, 2},
               (const double[]){7.0 / 16, 0.25, 0.25, 1.0 / 16}, 4, 31);
}

/* Full jsq: the minimum, ties uniform; 2n messages. */
static void test_jsq_full_static(void)
{
  check_policy("jsq", NULL, 5, (const uint32_t[]){0, 0, 0, 0, 0},
               (const double[]){0.2, 0.2, 0.2, 0.2, 0.2}, 10, 40);
  check_policy("jsq", NULL, 5, (const uint32_t[]){1, 0, 0, 2, 0},
               (const double[]){0, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3}, 10, 41);
  check_policy("jsq", NULL, 5, (const uint32_t[]){4, 3, 5, 3, 6},
               (const double[]){0, 0.5, 0, 0.5, 0}, 10, 42);
  check_policy("jsq", NULL, 1, (const uint32_t[]){9}, (const double[]){1}, 2, 43);
}

/* jsq's on_change bookkeeping through a random walk of counts (+-1, as the engine makes
 * them), including one server pushed to 40 customers and back (beyond the initial 16
 * levels of its index). After every step a routed customer must go to a minimum; at
 * checkpoints the choice is uniform among the minima (counts test). */
static void test_jsq_full_walk(void)
{
  ut_pconf c = {.n = 7, .policy = "jsq", .gennum = 50, .seed = 99};
  ut_pstate *p = ut_pstate_new(&c);
  lbmc_stream walk = {0};
  long bad = 0, cnt[7];
  double probs[7];
  CU_ASSERT_FATAL(lbmc_stream_init(&walk, 51, 99) == LBMC_SUCCESS);
  for (int step = 0; step < 20000; step++) {
    uint32_t s = lbmc_uint(&walk, 7), qmin = UINT32_MAX;
    if (step == 5000)
      ut_set_q(p, 3, 40);
    else if (step == 6000)
      ut_set_q(p, 3, 0);
    else if (lbmc_u01(&walk) < 0.5 || p->st.q[s] == 0)
      ut_set_q(p, s, p->st.q[s] + 1);
    else
      ut_set_q(p, s, p->st.q[s] - 1);
    for (uint32_t i = 0; i < 7; i++) qmin = p->st.q[i] < qmin ? p->st.q[i] : qmin;
    for (int k = 0; k < 3; k++) bad += p->st.q[ut_route(p, 0)] != qmin;
    if (step % 4000 == 3999) {
      int ties = 0;
      for (uint32_t i = 0; i < 7; i++) ties += p->st.q[i] == qmin;
      for (uint32_t i = 0; i < 7; i++) probs[i] = p->st.q[i] == qmin ? 1.0 / ties : 0;
      route_counts(p, 30000, cnt, 14);
      UT_CHECK_COUNTS("jsq after walk", cnt, probs, 7, 30000);
    }
  }
  UT_CHECK(bad == 0, "jsq routed %ld customers to a server that is not a shortest queue", bad);
  lbmc_stream_free(&walk);
  ut_pstate_free(p);
}

int ut_register_policy_simple(void)
{
  static const ut_test tests[] = {{"random: uniform, 0 messages", test_random},
                                  {"jsq(d) distinct: exact probabilities", test_jsqd_distinct},
                                  {"jsq(d) with replacement", test_jsqd_replacement},
                                  {"jsq: minimum, ties uniform, 2n messages", test_jsq_full_static},
                                  {"jsq: on_change bookkeeping walk", test_jsq_full_walk},
                                  {NULL, NULL}};
  return ut_add_suite("policy random/jsq(d)/jsq", tests);
}
