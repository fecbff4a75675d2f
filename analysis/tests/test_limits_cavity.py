"""The queue at the cavity (JSQ(d), balanced(c), phase-type service) against closed forms,
the ODE's fixed point and exact single-queue formulas."""

import math

import numpy as np
import pytest

from lbmc_analysis import meanfield as mf
from lbmc_analysis.limits import cavity, ode, service


@pytest.mark.parametrize("lam,d", [(0.5, 2), (0.9, 2), (0.9, 3), pytest.param(0.99, 2, marks=pytest.mark.slow)])
def test_exponential_closed_form(lam, d):
    # from a geometric start (not the answer): u_k = lam^((d^k - 1)/(d - 1)) to 1e-10
    r = cavity.cavity_jsq(lam, d, start="geometric")
    u = r["tail"][0]
    k = np.arange(1, u.size + 1, dtype=float)
    with np.errstate(under="ignore"):
        want = lam ** ((d**k - 1) / (d - 1))
    assert r["converged"] and np.max(np.abs(u - want)) < 1e-10
    assert r["accuracy"] < 1e-9
    assert r["mean_sojourn"] == pytest.approx(mf.jsq_mean_sojourn(lam, d), rel=1e-10)
    # Little's law and the arrivals' own sojourn agree
    assert r["mean_sojourn_direct"] == pytest.approx(r["mean_sojourn"], rel=1e-10)
    assert r["p_wait"] == pytest.approx(lam**d, rel=1e-10)


def test_control_wrong_rate_is_detected():
    # the control that can fail: the cavity at lambda 0.9 is not the closed form at 0.905
    u = cavity.cavity_jsq(0.9, 2)["tail"][0][:4]
    assert np.max(np.abs(u - mf.jsq_tail(0.905, 2, 4))) > 1e-3


def test_heterogeneous_exponential_equals_the_ode_fixed_point():
    # two pools, jsq(2) and balanced(2): the cavity with exponential service is the mean-field
    # fixed point of the C side's drift
    for pol, w in (("jsq(2)", "uniform"), ("balanced(2)", "mu")):
        r = cavity.cavity_jsq(0.8, 2, beta=[0.3, 0.7], mu=[2.0, 0.6], buffer=[None, 5], weights=w)
        m, x = ode.fixed_point(ode.OccupancyModel(pol, 0.8, [0.3, 0.7], [2.0, 0.6], [None, 5]))
        for j in range(2):
            u = r["tail"][j]
            K = min(u.size, x.shape[1])
            assert np.max(np.abs(u[:K] - x[j, :K])) < 1e-8
        met = m.metrics(x)
        assert r["p_block"] == pytest.approx(met["p_block"], abs=1e-9)
        assert r["p_wait"] == pytest.approx(met["p_wait"], abs=1e-9)
        assert r["mean_sojourn"] == pytest.approx(met["mean_sojourn"], rel=1e-8)


def test_finite_buffer_matches_meanfield():
    r = cavity.cavity_jsq(1.2, 2, buffer=4)
    want = mf.jsq_fixed_point(1.2, 2, buffer=4, K=4)
    np.testing.assert_allclose(r["tail"][0], want["tail"][0], atol=1e-11)
    assert r["p_block"] == pytest.approx(want["p_block"], abs=1e-11)


@pytest.mark.parametrize("svc", ["erlang:k=4", "hyperexponential:scv=5"])
def test_d1_is_the_m_ph_1_queue(svc):
    # d = 1: a constant arrival rate, the M/PH/1 queue: Pollaczek-Khinchine mean sojourn
    lam = 0.8
    r = cavity.cavity_jsq(lam, 1, service=svc)
    law = service.parse_service(svc)
    pk = 1 + lam * law.moment(2) / (2 * (1 - lam))
    assert r["mean_sojourn"] == pytest.approx(pk, rel=1e-9)
    assert r["utilization"][0] == pytest.approx(lam, abs=1e-12)
    # the mean workload of an M/G/1 queue (time average): lam E[S^2]/(2 (1 - rho))
    assert r["mean_workload"][0] == pytest.approx(lam * law.moment(2) / (2 * (1 - lam)), rel=1e-9)


def test_phase_type_jsq2_consistency_and_speed_scaling():
    r = cavity.cavity_jsq(0.9, 2, service="hyperexponential:scv=20")
    assert r["converged"] and r["utilization"][0] == pytest.approx(0.9, abs=1e-12)
    assert r["mean_sojourn_direct"] == pytest.approx(r["mean_sojourn"], rel=1e-9)
    # H2 with scv 20 waits far more than exponential under JSQ(2)
    assert r["mean_sojourn"] > 3 * mf.jsq_mean_sojourn(0.9, 2)
    # speed mu = 2 at lam = 1.8: the same tails, times halved
    s = cavity.cavity_jsq(1.8, 2, mu=[2.0], service="hyperexponential:scv=20")
    np.testing.assert_allclose(s["tail"][0][:10], r["tail"][0][:10], atol=1e-10)
    assert s["mean_sojourn"] == pytest.approx(r["mean_sojourn"] / 2, rel=1e-9)


def test_errors():
    with pytest.raises(ValueError, match="capacity"):  # the PULL paper's JSQ(2) example is unstable
        cavity.cavity_jsq(1.0, 2, beta=[0.5, 0.5], mu=[2.0, 1 / 3])
    with pytest.raises(ValueError, match="phase-type"):
        cavity.cavity_jsq(0.5, 2, service="lognormal:scv=2")
    with pytest.raises(ValueError, match="weights"):
        cavity.cavity_jsq(0.5, 2, weights="speed")
    with pytest.raises(ValueError, match="d = 0 is not allowed"):
        cavity.cavity_jsq(0.5, 0)
    assert math.isfinite(cavity.cavity_jsq(0.5, 2, service=service.ph_coxian2(3.0))["mean_sojourn"])
