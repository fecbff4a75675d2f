"""Mean-field and exact reference formulas against values computed by hand.

Each test writes its hand computation in comments. The exact CTMC values quoted
from /work/shared/refs/cases.json (solved Markov chains of small systems) are
copied here as literals, so the tests do not depend on that file's location.
"""

import math

import numpy as np
import pytest

from lbmc_analysis import limits
from lbmc_analysis import meanfield as mf

# ----------------------------------------------------------------------------- JSQ(d)


def test_jsq_mean_sojourn_d2_lambda09():
    # sum_{i>=1} 0.9^((2^i - 2)/(2 - 1)) = 0.9^0 + 0.9^2 + 0.9^6 + 0.9^14 + 0.9^30 + 0.9^62 + 0.9^126 + ...
    #   = 1 + 0.81 + 0.531441 + 0.228768 + 0.042391 + 0.001456 + 0.0000017 + ... = 2.614057
    # Mitzenmacher 2001 quotes 2.61406.
    assert mf.jsq_mean_sojourn(0.9, 2) == pytest.approx(2.61406, abs=5e-6)
    assert mf.jsq_mean_sojourn(0.9, 2) == pytest.approx(2.614057377, rel=1e-9)


def test_jsq_tail_values():
    # x_k = 0.9^((2^k - 1)/1): k=1: 0.9, k=2: 0.9^3 = 0.729, k=3: 0.9^7 = 0.4782969, k=4: 0.9^15 = 0.205891132
    np.testing.assert_allclose(mf.jsq_tail(0.9, 2, 4), [0.9, 0.729, 0.4782969, 0.205891132], rtol=1e-9)
    # d = 3: x_k = 0.5^((3^k - 1)/2): 0.5^1, 0.5^4 = 0.0625, 0.5^13 = 1.220703125e-4
    np.testing.assert_allclose(mf.jsq_tail(0.5, 3, 3), [0.5, 0.0625, 0.5**13], rtol=1e-12)
    # d = 1 is random routing: x_k = lambda^k
    np.testing.assert_allclose(mf.jsq_tail(0.6, 1, 5), 0.6 ** np.arange(1, 6), rtol=1e-12)
    # huge k underflows to 0 instead of failing
    assert mf.jsq_tail(0.9, 2, 2000)[-1] == 0.0


def test_jsq_d1_is_mm1_and_little():
    # d = 1: mean sojourn 1/(1 - 0.9) = 10, mean queue 0.9/0.1 = 9
    assert mf.jsq_mean_sojourn(0.9, 1) == pytest.approx(10.0)
    assert mf.jsq_mean_queue(0.9, 1) == pytest.approx(9.0)
    # Little's law L = lambda W for d = 2, 3
    for d in (2, 3):
        assert mf.jsq_mean_queue(0.9, d) == pytest.approx(0.9 * mf.jsq_mean_sojourn(0.9, d), rel=1e-12)
    # d = 3, lambda = 0.9: 1 + 0.9^3 + 0.9^12 + 0.9^39 + 0.9^120 = 1 + 0.729 + 0.2824295 + 0.0164232 + 3.2e-6
    #   = 2.0278560
    assert mf.jsq_mean_sojourn(0.9, 3) == pytest.approx(2.027856, abs=1e-6)


def test_jsq_time_scaling_with_mu():
    # mu = 2, lambda = 1.8: rho = 0.9, the same tails; times halved
    assert mf.jsq_mean_sojourn(1.8, 2, mu=2.0) == pytest.approx(2.614057377 / 2, rel=1e-9)
    np.testing.assert_allclose(mf.jsq_tail(1.8, 2, 3, mu=2.0), [0.9, 0.729, 0.4782969])


def test_jsq_fixed_point_metrics():
    r = mf.jsq_fixed_point(0.9, 2, K=5)
    # p_wait = P(both samples busy) = x_1^2 = 0.81; mean wait = 2.614057 - 1 = 1.614057
    assert r["p_wait"] == pytest.approx(0.81)
    assert r["p_block"] == 0.0
    assert r["mean_wait"] == pytest.approx(1.614057377, rel=1e-9)
    assert r["messages_per_arrival"] == 4.0
    assert r["throughput"] == pytest.approx(0.9)
    assert r["tail"].shape == (1, 5)


def test_jsq_finite_buffer_fixed_point():
    # B = 1, d = 2, lambda = 1: x_1 = lambda (1 - x_1^2)  =>  x_1^2 + x_1 - 1 = 0,
    # x_1 = (sqrt(5) - 1)/2 = 0.6180340, p_block = x_1^2 = 0.3819660
    r = mf.jsq_fixed_point(1.0, 2, buffer=1)
    assert r["utilization"][0] == pytest.approx((math.sqrt(5) - 1) / 2, rel=1e-12)
    assert r["p_block"] == pytest.approx((3 - math.sqrt(5)) / 2, rel=1e-12)
    assert r["p_wait"] == pytest.approx(0.0, abs=1e-15)
    # d = 1 reproduces M/M/1/B exactly (independent queues): lambda = 0.9, B = 3
    # pi_i = 0.9^i / (1 + 0.9 + 0.81 + 0.729) = 0.9^i / 3.439, p_block = 0.729/3.439 = 0.2119802
    r = mf.jsq_fixed_point(0.9, 1, buffer=3)
    exact = mf.mm1b(0.9, 1.0, 3)
    assert r["p_block"] == pytest.approx(0.729 / 3.439, rel=1e-10)
    assert r["p_block"] == pytest.approx(exact["p_block"], rel=1e-10)
    assert r["mean_sojourn"] == pytest.approx(exact["mean_sojourn"], rel=1e-10)
    np.testing.assert_allclose(r["tail"][0, :3], exact["tail"], rtol=1e-10)
    assert np.all(r["tail"][0, 3:] == 0)
    # overload allowed with a finite buffer
    assert mf.jsq_fixed_point(3.0, 2, buffer=2)["p_block"] > 0.4


def test_jsq_ode_transient():
    t = np.linspace(0, 300, 61)
    x = mf.jsq_ode(0.9, 2, t)
    assert x.dims == ("t", "k")
    # from empty: x_k(t) is non-decreasing in t (monotone system) ...
    assert np.all(np.diff(x.values, axis=0) >= -1e-9)
    # ... and converges to the fixed point lambda^(2^k - 1)
    np.testing.assert_allclose(x.isel(t=-1).values[:4], [0.9, 0.729, 0.4782969, 0.205891132], atol=1e-6)
    # at small t, dx_1/dt(0) = lambda (1 - 0) - (0 - 0) = lambda, so x_1(h) ~ lambda h
    xs = mf.jsq_ode(0.9, 2, [0.0, 1e-4])
    assert xs.values[1, 0] == pytest.approx(0.9e-4, rel=1e-3)
    # from a full-ish state it decreases to the same fixed point
    x0 = [1.0, 0.9, 0.8, 0.7, 0.6]
    xd = mf.jsq_ode(0.9, 2, 300.0, x0=x0)
    assert xd.values[0, 0] == 1.0 and xd.values[-1, 0] == pytest.approx(0.9, abs=1e-6)
    # finite buffer: K = B, converges to the finite-buffer fixed point
    xb = mf.jsq_ode(1.0, 2, 200.0, buffer=1)
    assert xb.values[-1, 0] == pytest.approx((math.sqrt(5) - 1) / 2, abs=1e-6)


def test_jsq_argument_checks():
    with pytest.raises(ValueError, match="lam >= mu"):
        mf.jsq_tail(1.0, 2)
    with pytest.raises(ValueError):
        mf.jsq_mean_sojourn(-0.1, 2)
    with pytest.raises(ValueError):
        mf.jsq_tail(0.5, 0)
    with pytest.raises(TypeError):
        mf.jsq_tail(0.5, 2.5)
    with pytest.raises(TypeError):
        mf.jsq_tail("0.5", 2)
    with pytest.raises(ValueError, match="give the truncation level K"):
        mf.jsq_ode(1.2, 2, 10.0)
    with pytest.raises(ValueError, match="non-increasing"):
        mf.jsq_ode(0.5, 2, 10.0, x0=[0.1, 0.5])
    with pytest.raises(ValueError):
        mf.jsq_ode(0.5, 2, [1.0, 0.5])


# ------------------------------------------------------------------ JSQ(d) stability


def test_jsq_stability_pull_paper_example():
    # beta = (1/2, 1/2), mu = (2, 1/3), lambda = 1, d = 2 (Stolyar 2015, introduction):
    # rho = 1 / (1 + 1/6) = 6/7 < 1, but pool 2 receives at least 1 * (1/2)^2 = 1/4 per server
    # of the system against capacity (1/2)(1/3) = 1/6: unstable.
    stable, det = mf.jsq_stability(1.0, [0.5, 0.5], [2.0, 1 / 3], 2)
    assert stable is False
    assert det["conclusive"]
    assert det["rho"] == pytest.approx(6 / 7)
    assert det["worst"]["pools"] == (2,)
    assert det["worst"]["min_arrival_rate"] == pytest.approx(0.25)
    assert det["worst"]["capacity"] == pytest.approx(1 / 6)
    assert [s["pools"] for s in det["overloaded"]] == [(2,)]


def test_jsq_stability_passes_and_finite_n():
    # homogeneous, rho = 0.9: every set S has lambda beta_S^2 < beta_S (beta_S <= 1)
    assert mf.jsq_stability(0.9, [0.3, 0.7], [1.0, 1.0], 2)[0] is True
    # paper's pools with lambda = 0.5: pool 2 gets >= 0.5/4 = 0.125 < 1/6; all: 0.5 < 7/6
    stable, det = mf.jsq_stability(0.5, [0.5, 0.5], [2.0, 1 / 3], 2)
    assert stable and not det["conclusive"]
    # lambda = 0.7: limit 0.7/4 = 0.175 > 1/6 -> unstable;
    # n = 10 (5 + 5), distinct sampling: P(both in pool 2) = C(5,2)/C(10,2) = 10/45, 0.7*10/45 = 0.1556 < 1/6
    # -> the necessary condition holds; with replacement (5/10)^2 = 1/4 -> unstable again.
    assert mf.jsq_stability(0.7, [0.5, 0.5], [2.0, 1 / 3], 2)[0] is False
    stable, det = mf.jsq_stability(0.7, [0.5, 0.5], [2.0, 1 / 3], 2, n=10)
    assert stable is True
    s2 = [s for s in det["sets"] if s["pools"] == (2,)][0]
    assert s2["p_all_samples"] == pytest.approx(10 / 45)
    assert mf.jsq_stability(0.7, [0.5, 0.5], [2.0, 1 / 3], 2, n=10, sampling="with_replacement")[0] is False
    # rho >= 1 is caught by S = all pools
    assert mf.jsq_stability(1.2, [0.5, 0.5], [2.0, 1 / 3], 2)[0] is False
    # a finite-buffer slow pool cannot be overloaded (it blocks)
    assert mf.jsq_stability(1.0, [0.5, 0.5], [2.0, 1 / 3], 2, buffer=[-1, 5])[0] is True
    with pytest.raises(ValueError):
        mf.jsq_stability(1.0, [0.5, 0.6], [2.0, 1 / 3], 2)
    with pytest.raises(ValueError):
        mf.jsq_stability(1.0, [0.5, 0.5], [2.0, 1 / 3], 11, n=10)


def test_pool_sizes_largest_remainder():
    # 0.5*7 = 3.5, 0.5*7 = 3.5: floors 3+3 = 6, one left -> lower index: (4, 3)
    assert list(mf.pool_sizes(7, [0.5, 0.5])) == [4, 3]
    # 1/3 * 10 = 3.33 x3: floors 9, remainder to pool 1
    assert list(mf.pool_sizes(10, [1 / 3, 1 / 3, 1 / 3])) == [4, 3, 3]
    # 2.5 and 7.5: floors 2 + 7 = 9, the one left goes to pool 1 (equal remainders, lower index)
    assert list(mf.pool_sizes(10, [0.25, 0.75])) == [3, 7]


# ---------------------------------------------------------- random routing, M/M/1(/B)


def test_mm1_and_mm1b_by_hand():
    r = mf.mm1(0.5, 1.0, K=3)
    # rho = 0.5: L = 1, W = 1/(1 - 0.5) = 2, Wq = 0.5/0.5 = 1, tail 0.5, 0.25, 0.125
    assert (r["mean_queue"], r["mean_sojourn"], r["mean_wait"]) == pytest.approx((1.0, 2.0, 1.0))
    np.testing.assert_allclose(r["tail"], [0.5, 0.25, 0.125])
    # M/M/1/2, lambda = mu = 1: pi = (1/3, 1/3, 1/3); p_block = 1/3, util 2/3, L = 1,
    # throughput 2/3, W = 1/(2/3) = 1.5 (= (1/3*1 + 1/3*2)/(2/3)), p_wait = pi_1 = 1/3
    r = mf.mm1b(1.0, 1.0, 2)
    np.testing.assert_allclose(r["pi"], [1 / 3] * 3)
    assert r["p_block"] == pytest.approx(1 / 3)
    assert r["utilization"] == pytest.approx(2 / 3)
    assert r["mean_sojourn"] == pytest.approx(1.5)
    assert r["p_wait"] == pytest.approx(1 / 3)
    # overload with a finite buffer is fine: lambda = 4, mu = 1, B = 1: p_block = 4/5
    assert mf.mm1b(4.0, 1.0, 1)["p_block"] == pytest.approx(0.8)
    # a large rho does not overflow
    assert mf.mm1b(1e3, 1.0, 200)["p_block"] == pytest.approx(1 - 1e-3, rel=1e-6)
    with pytest.raises(ValueError):
        mf.mm1(1.0, 1.0)


def test_random_routing_by_hand():
    # beta = (1/2, 1/2), mu = (2, 1), lambda = 0.5: pool 1 rho = 0.25, L = 1/3, W = 1/(2-0.5) = 2/3;
    # pool 2 rho = 0.5, L = 1, W = 2. Equal arrivals to both pools: W = (2/3 + 2)/2 = 4/3;
    # p_wait = (0.25 + 0.5)/2 = 0.375
    r = mf.random_routing(0.5, [0.5, 0.5], [2.0, 1.0])
    assert r["stable"]
    np.testing.assert_allclose(r["mean_queue"], [1 / 3, 1.0])
    assert r["mean_sojourn"] == pytest.approx(4 / 3)
    assert r["p_wait"] == pytest.approx(0.375)
    np.testing.assert_allclose(r["admitted_share"], [0.5, 0.5])
    np.testing.assert_allclose(r["tail"][1, :3], [0.5, 0.25, 0.125])
    # unstable pool: lambda = 1.5 >= mu_2 = 1
    r = mf.random_routing(1.5, [0.5, 0.5], [2.0, 1.0])
    assert not r["stable"] and math.isnan(r["mean_queue"][1]) and math.isnan(r["mean_sojourn"])
    assert not mf.random_routing_stable(1.5, [2.0, 1.0])
    assert mf.random_routing_stable(1.5, [2.0, 1.0], buffer=[-1, 4])


def test_random_routing_matches_exact_ctmc_cases():
    # /work/shared/refs/cases.json, case "1:1:3,2:1/2:3,1:1/4:3" random, total lambda 0.9 on 4 servers:
    # per-server lambda = 0.225, beta = (1/4, 1/2, 1/4), mu = (1, 1/2, 1/4), B = 3 everywhere.
    r = mf.random_routing(0.9 / 4, [0.25, 0.5, 0.25], [1.0, 0.5, 0.25], 3, K=3)
    assert r["p_block"] == pytest.approx(0.08133856640023579, rel=1e-10)
    assert r["p_wait"] == pytest.approx(0.3649591391612218, rel=1e-10)
    assert r["mean_sojourn"] == pytest.approx(3.5595786228457125, rel=1e-10)
    assert r["mean_wait"] == pytest.approx(1.400409547598453, rel=1e-10)
    np.testing.assert_allclose(r["utilization"], [0.22300865616918988, 0.42648218510287467, 0.7092177958708928])
    np.testing.assert_allclose(r["admitted_share"], [0.26972656811399204, 0.5158256102053824, 0.2144478216806257])
    np.testing.assert_allclose(r["tail"][2], [0.7092177958708928, 0.44751381215469627, 0.21198022681011916])
    # throughput_per_server (lbmc's throughput) 0.20669882255994695
    assert r["throughput"] == pytest.approx(0.20669882255994695, rel=1e-10)


# ---------------------------------------------------------------------------- Erlang-B


def test_erlang_b_known_values():
    # B(10, 5) = (5^10/10!) / sum_{i=0}^{10} 5^i/i! = 2.6911445 / 146.3806010 = 0.0183846
    assert mf.erlang_b(10, 5) == pytest.approx(0.018384, abs=1e-6)
    assert mf.erlang_b(10, 5) == pytest.approx(2.6911444554673722 / 146.38060102513225, rel=1e-12)
    # B(1, A) = A/(1 + A): A = 2 -> 2/3; B(0, A) = 1
    assert mf.erlang_b(1, 2.0) == pytest.approx(2 / 3)
    assert mf.erlang_b(0, 3.0) == 1.0
    assert mf.erlang_b(5, 0.0) == 0.0
    # exact CTMC case "8:1:1" pull, total lambda 7.2 (per server 0.9), mu = 1: A = 7.2, P_block 0.19031316866395698
    assert mf.erlang_b(8, 7.2) == pytest.approx(0.19031316866395698, rel=1e-12)
    r = mf.mmnn(8, 0.9, 1.0)
    assert r["p_block"] == pytest.approx(0.19031316866395698, rel=1e-12)
    assert r["utilization"][0] == pytest.approx(0.7287181482024394, rel=1e-12)
    assert r["messages_per_arrival"] == pytest.approx(0.8096868313360438, rel=1e-12)


def test_erlang_b_large_n_branch_consistent():
    # the log-space branch (N > 100000) continues the recursion B(N+1) = A B(N) / (N + 1 + A B(N))
    A = 99000.0
    b = mf.erlang_b(100000, A)
    assert mf.erlang_b(100001, A) == pytest.approx(A * b / (100001 + A * b), rel=1e-8)
    with pytest.raises(TypeError):
        mf.erlang_b(2.5, 1.0)
    with pytest.raises(ValueError):
        mf.erlang_b(3, -1.0)


# -------------------------------------------------------------------------------- PULL


def test_pull_fixed_point_paper_example():
    # beta = (1/2, 1/2), mu = (2, 1/3), lambda = 1:
    #   (1/2) 2 a/(a+2) + (1/2)(1/3) a/(a+1/3) = 1  <=>  a/(a+2) + a/(6a+2) = 1
    #   <=>  a(6a+2) + a(a+2) = (a+2)(6a+2)  <=>  7a^2 + 4a = 6a^2 + 14a + 4  <=>  a^2 - 10a - 4 = 0
    #   a = 5 + sqrt(29) = 10.3851648
    # busy fractions a/(a+2) = 0.8385165, a/(a+1/3) = 0.9689011;
    # shares beta_j mu_j x_j / lambda = (0.8385165, 0.1614835); mean sojourn 0.8385165/2 + 0.1614835*3 = 0.9037088
    r = mf.pull_fixed_point(1.0, [0.5, 0.5], [2.0, 1 / 3])
    a = 5 + math.sqrt(29)
    assert r["a"] == pytest.approx(a, rel=1e-12)
    np.testing.assert_allclose(r["utilization"], [a / (a + 2), a / (a + 1 / 3)], rtol=1e-12)
    np.testing.assert_allclose(r["utilization"], [0.8385165, 0.9689011], atol=1e-7)
    np.testing.assert_allclose(r["admitted_share"], [0.8385165, 0.1614835], atol=1e-7)
    assert r["mean_sojourn"] == pytest.approx(0.9037088, abs=1e-7)
    assert r["p_wait_or_block"] == 0.0 and r["messages_per_arrival"] == 1.0
    assert r["idle_fraction"] == pytest.approx(1 / a)
    assert r["tail"][0, 0] == r["utilization"][0] and np.all(r["tail"][:, 1:] == 0)


def test_pull_fixed_point_homogeneous_and_checks():
    # one pool: mu a/(a+mu) = lambda  =>  busy fraction a/(a+mu) = lambda/mu
    r = mf.pull_fixed_point(0.7, [1.0], [1.0])
    assert r["utilization"][0] == pytest.approx(0.7)
    assert r["mean_sojourn"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="rho < 1"):
        mf.pull_fixed_point(1.2, [0.5, 0.5], [2.0, 1 / 3])  # capacity 7/6
    with pytest.raises(ValueError, match="sum to 1"):
        mf.pull_fixed_point(0.5, [0.5, 0.4], [1.0, 1.0])
    with pytest.raises(ValueError):
        mf.pull_fixed_point(0.5, [0.5, 0.5], [1.0, 0.0])
    with pytest.raises(ValueError):
        mf.pull_fixed_point(0.5, [0.5, 0.5], [1.0, 1.0], buffer=[0, 2])
    with pytest.raises(ValueError):
        mf.pull_fixed_point(0.0, [1.0], [1.0])


def test_pull_multi_router():
    single = mf.pull_fixed_point(1.0, [0.5, 0.5], [2.0, 1 / 3])
    r = mf.pull_multi_router(1.0, [0.5, 0.5], [2.0, 1 / 3], routers=4)
    np.testing.assert_allclose(r["utilization"], single["utilization"])
    assert r["proven"]["p_wait_or_block"] and not r["proven"]["fixed_point"]
    k = mf.pull_multi_router(1.0, [0.5, 0.5], [2.0, 1 / 3], routers=4, stale="jiq")
    assert k["stale"] == "keep" and not any(k["proven"].values())
    one = mf.pull_multi_router(1.0, [0.5, 0.5], [2.0, 1 / 3], routers=1, stale="keep")
    assert all(one["proven"].values())
    with pytest.raises(ValueError):
        mf.pull_multi_router(1.0, [0.5, 0.5], [2.0, 1 / 3], routers=0)
    with pytest.raises(ValueError):
        mf.pull_multi_router(1.0, [0.5, 0.5], [2.0, 1 / 3], routers=2, stale="drop")


# ---------------------------------------------------------------- reference selection


def test_reference_for_point():
    base = {"lambda": 0.9, "beta": [1.0], "mu": [1.0], "buffer": [-1], "n": 1000}
    r = limits.reference_for_point({**base, "policy": "jsq(2)"})
    assert r["mean_sojourn"] == pytest.approx(2.614057377)
    r = limits.reference_for_point({**base, "policy_name": "random", "d": 0})
    assert r["mean_sojourn"] == pytest.approx(10.0)
    r = limits.reference_for_point({**base, "policy": "pull", "routers": 2, "stale": "withdraw"})
    assert r["utilization"][0] == pytest.approx(0.9)
    # columns as in to_frame
    r = limits.reference_for_point({"lambda": 1.0, "policy": "pull", "beta_1": 0.5, "beta_2": 0.5,
                                "mu_1": 2.0, "mu_2": 1 / 3, "buffer_1": -1, "buffer_2": -1})
    assert r["a"] == pytest.approx(5 + math.sqrt(29))
    # no formula for heterogeneous JSQ(d), and none for unstable points
    assert limits.reference_for_point({"lambda": 1.0, "policy": "jsq(2)", "beta": [0.5, 0.5], "mu": [2, 1 / 3]}) is None
    assert limits.reference_for_point({**base, "lambda": 1.1, "policy": "pull"}) is None
    assert mf.parse_policy("balanced(3)") == ("balanced", 3)
    assert mf.parse_policy("jiq") == ("pull", None)
    with pytest.raises(ValueError):
        mf.parse_policy("jsq(")


# ------------------------------------------------------------------ balanced routing


def test_proportional_routing_by_hand():
    # pools beta = (0.2, 0.3, 0.5), mu = (2.5, 1, 0.5): capacity 0.5 + 0.3 + 0.25 = 1.05;
    # lambda = 0.84 -> rho = 0.8; every server M/M/1 of load 0.8: mean queue 4.
    r = mf.proportional_routing(0.84, [0.2, 0.3, 0.5], [2.5, 1, 0.5])
    assert r["rho"] == pytest.approx(0.8)
    np.testing.assert_allclose(r["mean_queue"], [4, 4, 4])
    # shares beta mu / capacity = (0.5, 0.3, 0.25) / 1.05
    np.testing.assert_allclose(r["admitted_share"], np.array([0.5, 0.3, 0.25]) / 1.05)
    # workload per server 4 * (0.2/2.5 + 0.3/1 + 0.5/0.5) = 4 * 1.38 = 5.52
    assert r["workload"] == pytest.approx(5.52)
    # mean sojourn sum_j share_j / (mu_j (1 - rho)) = 5 * (0.2 + 0.3 + 0.5) / 1.05 = 4.7619
    assert r["mean_sojourn"] == pytest.approx(5 / 1.05)
    # Little: lambda * sojourn = customers per server = 4
    assert 0.84 * r["mean_sojourn"] == pytest.approx(4.0)
    np.testing.assert_allclose(r["tail"][1, :3], [0.8, 0.64, 0.512])


def test_balanced_heavy_traffic_by_hand():
    beta, mu = [0.2, 0.3, 0.5], [2.5, 1, 0.5]
    one = mf.balanced_heavy_traffic(0.84, beta, mu, 1, 10)
    two = mf.balanced_heavy_traffic(0.84, beta, mu, 2, 10)
    three = mf.balanced_heavy_traffic(0.84, beta, mu, 3, 10)
    assert one["exact"] and not two["exact"]
    assert one["workload"] == pytest.approx(5.52)          # = proportional_routing
    assert one["scaled_limit"] == pytest.approx(1.38)      # sum beta/mu
    assert two["scaled_limit"] == pytest.approx(0.138)     # (1/n) sum beta/mu, n = 10
    assert two["workload"] == pytest.approx(0.552) and three["workload"] == two["workload"]
    assert two["scaled_workload"] == pytest.approx(0.2 * 0.552)
    with pytest.raises(ValueError):
        mf.balanced_heavy_traffic(1.05, beta, mu, 2, 10)   # rho = 1
    with pytest.raises(ValueError):
        mf.balanced_heavy_traffic(0.5, beta, mu, 11, 10)   # c > n


def test_workload_per_server():
    # 2 pools: queues (2, 6), beta (0.5, 0.5), mu (2, 1/2): 0.5*2/2 + 0.5*6*2 = 0.5 + 6 = 6.5
    assert mf.workload_per_server([2, 6], [0.5, 0.5], [2, 0.5]) == pytest.approx(6.5)
    np.testing.assert_allclose(mf.workload_per_server(np.array([[2, 6], [0, 0]]), [0.5, 0.5], [2, 0.5]), [6.5, 0])


def test_reference_for_balanced_one():
    r = limits.reference_for_point({"lambda": 0.84, "policy": "balanced(1)", "beta": [0.2, 0.3, 0.5],
                                "mu": [2.5, 1, 0.5], "buffer": [-1, -1, -1], "n": 10})
    assert r is not None and r["workload"] == pytest.approx(5.52)
    # balanced(2) as n -> infinity (the cavity with draws proportional to mu): a server of pool j
    # gets arrivals at rate rho mu_j (A_k^2 - A_{k+1}^2)/(A_k - A_{k+1}) and serves at mu_j, so
    # every pool has the tails of homogeneous JSQ(2) at load rho = 0.8
    r = limits.reference_for_point({"lambda": 0.84, "policy": "balanced(2)", "beta": [0.2, 0.3, 0.5],
                                "mu": [2.5, 1, 0.5], "n": 10})
    np.testing.assert_allclose(r["tail"][:, :4], np.tile(mf.jsq_tail(0.8, 2, 4), (3, 1)), atol=1e-10)
