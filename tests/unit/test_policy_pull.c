/* pull (and jiq = pull with stale keep) on hand-built states. The messages a router
 * holds are not visible, so each scenario is built to make the policy's answer (the
 * server, and the message and withdrawal counters) reveal them. */
#include <string.h>

#include "unit.h"

typedef struct {
  int64_t m, w; /* counters before the call */
} ut_mark;

static ut_mark mark(const ut_pstate *p)
{
  return (ut_mark){p->st.tally.c.messages, p->st.tally.c.withdrawals};
}
static int64_t dm(const ut_pstate *p, ut_mark k) { return p->st.tally.c.messages - k.m; }
static int64_t dw(const ut_pstate *p, ut_mark k) { return p->st.tally.c.withdrawals - k.w; }

static ut_pstate *make(long n, long R, const char *stale, int gennum)
{
  ut_pconf c = {
      .n = n, .policy = "pull", .routers = R, .stale = stale, .gennum = gennum, .seed = 5150};
  return ut_pstate_new(&c);
}

/* A server becomes idle, as in the engine: count 0, then on_idle. */
static void go_idle(ut_pstate *p, uint32_t s)
{
  ut_set_q(p, s, 0);
  ut_on_idle(p, s);
}

/* Route at router r and make the chosen server busy (one more customer). */
static uint32_t arrive(ut_pstate *p, uint32_t r)
{
  uint32_t s = ut_route(p, r);
  CU_ASSERT_FATAL(s < p->st.n);
  ut_set_q(p, s, p->st.q[s] + 1);
  return s;
}

/* R = 1: after reset every server holds exactly one message, so n arrivals go to the
 * n servers once each (a permutation; uniform choice would give one with probability
 * 5!/5^5 = 0.04), the first uniformly; the router is then empty and the next arrival
 * is uniform among all n. The initial messages are not counted; taking one is free. */
static void test_reset_one_router(void)
{
  const char *stale[] = {"withdraw", "keep"};
  const double u5[] = {0.2, 0.2, 0.2, 0.2, 0.2};
  for (int v = 0; v < 2; v++) {
    ut_pstate *p = make(5, 1, stale[v], 70 + v);
    const long T = 20000;
    long first[5] = {0}, after[5] = {0}, not_perm = 0;
    ut_mark k = mark(p);
    for (long t = 0; t < T; t++) {
      int seen[5] = {0};
      ut_pstate_reset(p);
      for (int i = 0; i < 5; i++) {
        uint32_t s = arrive(p, 0);
        if (i == 0) first[s]++;
        not_perm += seen[s]++ != 0;
      }
      after[arrive(p, 0)]++;
    }
    UT_CHECK(not_perm == 0, "%s: %ld repeated servers among the first n arrivals", stale[v],
             not_perm);
    UT_CHECK(dm(p, k) == 0 && dw(p, k) == 0, "%s: messages counted without on_idle", stale[v]);
    UT_CHECK_COUNTS("pull: first arrival after reset", first, u5, 5, T);
    UT_CHECK_COUNTS("pull: arrival at an empty router", after, u5, 5, T);
    ut_pstate_free(p);
  }
}

/* R = 1, n = 6, all busy and no message; servers 1, 3, 4 become idle (3 messages
 * counted). The next three arrivals go to 1, 3, 4 in some order, the first uniformly
 * (1/3 each), then the empty router routes uniformly over 6. */
static void test_uniform_among_messages(void)
{
  const char *stale[] = {"withdraw", "keep"};
  const double p3[] = {0, 1.0 / 3, 0, 1.0 / 3, 1.0 / 3, 0},
               u6[] = {1. / 6, 1. / 6, 1. / 6, 1. / 6, 1. / 6, 1. / 6};
  for (int v = 0; v < 2; v++) {
    ut_pstate *p = make(6, 1, stale[v], 72 + v);
    const long T = 30000;
    long first[6] = {0}, after[6] = {0}, wrong = 0, bad_count = 0;
    for (int i = 0; i < 6; i++) arrive(p, 0); /* drain the initial messages */
    for (long t = 0; t < T; t++) {
      ut_mark k = mark(p);
      uint32_t a, b, c;
      go_idle(p, 1), go_idle(p, 3), go_idle(p, 4);
      bad_count += dm(p, k) != 3;
      a = arrive(p, 0), b = arrive(p, 0), c = arrive(p, 0);
      first[a]++;
      wrong += (1u << a | 1u << b | 1u << c) != (1u << 1 | 1u << 3 | 1u << 4);
      after[arrive(p, 0)]++;
      bad_count += dm(p, k) != 3 || dw(p, k) != 0;
    }
    UT_CHECK(wrong == 0, "%s: %ld trials did not use the three messages", stale[v], wrong);
    UT_CHECK(bad_count == 0, "%s: %ld trials with wrong message counts", stale[v], bad_count);
    UT_CHECK_COUNTS("pull: choice among held messages", first, p3, 6, T);
    UT_CHECK_COUNTS("pull: empty router", after, u6, 6, T);
    ut_pstate_free(p);
  }
}

/* n = 1, R = 2, withdraw: reset puts the message at a uniform router, so the first
 * arrival at router 0 finds it there (taken, nothing counted) or, w.p. 1/2, finds the
 * router empty, picks the idle server 0 and withdraws its message from router 1
 * (messages +1, withdrawals +1). */
static void test_reset_two_routers(void)
{
  ut_pstate *p = make(1, 2, "withdraw", 74);
  const long T = 20000;
  long withdrawn = 0, bad = 0;
  for (long t = 0; t < T; t++) {
    ut_mark k;
    ut_pstate_reset(p);
    k = mark(p);
    arrive(p, 0);
    withdrawn += dw(p, k) == 1;
    bad += dm(p, k) != dw(p, k) || dw(p, k) > 1;
    k = mark(p);
    arrive(p, 1); /* busy, no message anywhere: nothing counted */
    bad += dm(p, k) != 0 || dw(p, k) != 0;
  }
  CU_ASSERT_EQUAL(bad, 0);
  UT_CHECK_BINOMIAL("pull: reset message at the other router", withdrawn, T, 0.5);
  ut_pstate_free(p);
}

/* n = 2, R = 2, server 1 always busy, no message anywhere. Server 0 becomes idle: one
 * message (counted) at router Y, uniform. An arrival at router 0:
 *   A: Y = 0, takes the message, server 0, nothing counted            (1/2)
 *   B: Y = 1, router 0 empty, uniform pick hits idle server 0:
 *      withdraw: messages +1, withdrawals +1; keep: nothing counted    (1/4)
 *   C: Y = 1, uniform pick hits busy server 1, nothing counted         (1/4)
 * Then an arrival at router 1: after C the message is still there: server 0, surely.
 * withdraw: after A or B router 1 is empty (B withdrew the message): uniform, so
 *   server 0 w.p. 1/2; never a withdrawal (server 0 is busy: it has no message).
 * keep: after B the stale message stays at router 1 and is used: P(server 0 | server 0
 *   chosen first) = (1/2 * 1/2 + 1/4) / (3/4) = 2/3. */
static void run_two_routers(const char *stale, int gennum)
{
  const int withdraw = strcmp(stale, "withdraw") == 0;
  ut_pstate *p = make(2, 2, stale, gennum);
  const long T = 40000;
  long cat[3] = {0}, other = 0, after_c_wrong = 0, second0 = 0, second_trials = 0;
  for (int i = 0; i < 2; i++) arrive(p, 0), arrive(p, 1); /* consume the reset messages */
  for (long t = 0; t < T; t++) {
    ut_mark k = mark(p);
    uint32_t s0, s1;
    go_idle(p, 0);
    other += dm(p, k) != 1;
    k = mark(p);
    s0 = arrive(p, 0);
    if (s0 == 1 && dm(p, k) == 0 && dw(p, k) == 0)
      cat[2]++;
    else if (s0 == 0 && dm(p, k) == 0 && dw(p, k) == 0)
      cat[0]++;
    else if (s0 == 0 && withdraw && dm(p, k) == 1 && dw(p, k) == 1)
      cat[1]++;
    else
      other++;
    k = mark(p);
    s1 = arrive(p, 1);
    other += dm(p, k) != 0 || dw(p, k) != 0;
    if (s0 == 1)
      after_c_wrong += s1 != 0;
    else
      second_trials++, second0 += s1 == 0;
    ut_set_q(p, 0, 1), ut_set_q(p, 1, 1);
  }
  UT_CHECK(other == 0, "%s: %ld unexpected outcomes or counts", stale, other);
  UT_CHECK(after_c_wrong == 0, "%s: message left at router 1 not used in %ld trials", stale,
           after_c_wrong);
  if (withdraw) {
    UT_CHECK_COUNTS("pull withdraw: take / withdraw / busy", cat,
                    ((const double[]){0.5, 0.25, 0.25}), 3, T);
    UT_CHECK_BINOMIAL("pull withdraw: router 1 empty after", second0, second_trials, 0.5);
  } else {
    UT_CHECK_BINOMIAL("pull keep: first arrival to server 0", cat[0], T, 0.75);
    UT_CHECK_BINOMIAL("pull keep: stale message used", second0, second_trials, 2.0 / 3);
  }
  ut_pstate_free(p);
}

static void test_two_routers_withdraw(void) { run_two_routers("withdraw", 75); }
static void test_two_routers_keep(void) { run_two_routers("keep", 76); }

/* keep, R = 1: a server idle again sends a fresh message although its first is still
 * out: two messages for server 0 send the next two arrivals there; the third finds the
 * router empty (server 0 w.p. 1/2 of n = 2). */
static void test_keep_fresh_message(void)
{
  ut_pstate *p = make(2, 1, "keep", 77);
  const long T = 20000;
  long wrong = 0, third0 = 0, badm = 0;
  arrive(p, 0), arrive(p, 0);
  for (long t = 0; t < T; t++) {
    ut_mark k = mark(p);
    go_idle(p, 0);
    ut_set_q(p, 0, 1); /* a customer sent at random, not through the message */
    go_idle(p, 0);
    badm += dm(p, k) != 2;
    wrong += arrive(p, 0) != 0;
    wrong += arrive(p, 0) != 0;
    third0 += arrive(p, 0) == 0;
  }
  CU_ASSERT_EQUAL(badm, 0);
  UT_CHECK(wrong == 0, "keep: %ld arrivals did not use the two messages", wrong);
  UT_CHECK_BINOMIAL("keep: empty router after two messages", third0, T, 0.5);
  ut_pstate_free(p);
}

/* on_idle sends one message (+1) to a uniform router: n = 1, R = 3, withdraw. An
 * arrival at router r takes it iff it went to r (probability 1/3 for each r); otherwise
 * it withdraws it (+1 message, +1 withdrawal). */
static void test_on_idle_router(void)
{
  ut_pstate *p = make(1, 3, "withdraw", 78);
  const long T = 30000;
  long taken[3] = {0}, bad = 0;
  arrive(p, 0);
  for (long t = 0; t < T; t++) {
    ut_mark k = mark(p);
    uint32_t r = (uint32_t)(t % 3);
    go_idle(p, 0);
    bad += dm(p, k) != 1 || dw(p, k) != 0;
    k = mark(p);
    arrive(p, r);
    if (dm(p, k) == 0 && dw(p, k) == 0)
      taken[r]++;
    else
      bad += dm(p, k) != 1 || dw(p, k) != 1;
  }
  CU_ASSERT_EQUAL(bad, 0);
  for (int r = 0; r < 3; r++)
    UT_CHECK_BINOMIAL("on_idle: message at router r", taken[r], T / 3, 1.0 / 3);
  ut_pstate_free(p);
}

/* A random sequence of arrivals and departures (as the engine would make them) with
 * withdraw: an arrival at an idle server counts a withdrawal or nothing (messages +=
 * withdrawals), at a busy server nothing (it has no message); every server becoming
 * idle counts one message. With R = 1, idle <=> one message at the router, so an
 * arrival finds an idle server whenever there is one. keep: routing never counts. */
static void run_walk(long R, const char *stale, int gennum)
{
  const int withdraw = strcmp(stale, "withdraw") == 0;
  ut_pstate *p = make(6, R, stale, gennum);
  lbmc_stream dice = {0};
  long bad = 0, missed_idle = 0, idles = 0;
  int64_t m_start = p->st.tally.c.messages;
  CU_ASSERT_FATAL(lbmc_stream_init(&dice, gennum + 1000, 1) == LBMC_SUCCESS);
  for (int step = 0; step < 100000; step++) {
    ut_mark k = mark(p);
    if (lbmc_u01(&dice) < 0.5) {
      uint32_t r = lbmc_uint(&dice, (uint32_t)R), s = ut_route(p, r), nidle = 0;
      for (uint32_t i = 0; i < 6; i++) nidle += p->st.q[i] == 0;
      if (p->st.q[s] == 0 && withdraw)
        bad += dw(p, k) > 1 || dm(p, k) != dw(p, k);
      else
        bad += dm(p, k) != 0 || dw(p, k) != 0;
      if (R == 1 && nidle > 0) missed_idle += p->st.q[s] != 0;
      ut_set_q(p, s, p->st.q[s] + 1);
    } else {
      uint32_t s = lbmc_uint(&dice, 6);
      if (p->st.q[s] == 0) continue;
      ut_set_q(p, s, p->st.q[s] - 1);
      if (p->st.q[s] == 0) ut_on_idle(p, s), idles++;
      bad += dm(p, k) != (p->st.q[s] == 0) || dw(p, k) != 0;
    }
  }
  UT_CHECK(bad == 0, "pull R=%ld %s: %ld events with wrong counts", R, stale, bad);
  UT_CHECK(missed_idle == 0, "pull R=1 %s: %ld arrivals sent to a busy server while one was idle",
           stale, missed_idle);
  if (!withdraw || R == 1)
    UT_CHECK((int64_t)(p->st.tally.c.messages - m_start) == idles,
             "messages %lld, servers became idle %ld times",
             (long long)(p->st.tally.c.messages - m_start), idles);
  lbmc_stream_free(&dice);
  ut_pstate_free(p);
}

static void test_walks(void)
{
  run_walk(1, "withdraw", 80);
  run_walk(3, "withdraw", 81);
  run_walk(1, "keep", 82);
  run_walk(3, "keep", 83);
}

int ut_register_policy_pull(void)
{
  static const ut_test tests[] = {
      {"reset: one message per server (R=1)", test_reset_one_router},
      {"uniform among held messages", test_uniform_among_messages},
      {"reset: messages at uniform routers (R=2)", test_reset_two_routers},
      {"withdraw at a message-less router (R=2)", test_two_routers_withdraw},
      {"keep: stale message stays (R=2)", test_two_routers_keep},
      {"keep: fresh message while a stale one is out", test_keep_fresh_message},
      {"on_idle: one message, uniform router", test_on_idle_router},
      {"random walks: counters and idle <=> message", test_walks},
      {NULL, NULL}};
  return ut_add_suite("policy pull", tests);
}
