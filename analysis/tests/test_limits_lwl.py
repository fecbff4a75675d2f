"""LL(d) (lwl(d)) limits: exponential closed forms, Pollaczek-Khinchine at d = 1, the grid
method against the phase-type initial-value problem, and infinite means."""

import math

import numpy as np
import pytest
from scipy import integrate

from lbmc_analysis.limits import lwl, service


@pytest.mark.parametrize("lam,d", [(0.5, 2), (0.9, 2), (0.7, 3)])
def test_exponential_closed_forms(lam, d):
    r = lwl.lwl_fixed_point(lam, d)  # phase-type: the initial-value problem
    if d == 2:
        want = -math.log(1 - lam**2) / lam  # E[Q], Hellemans & Van Houdt 2018
    else:
        want = lam * (1 + integrate.quad(lambda w: lwl.lwl_exponential_F(lam, d, w) ** d, 0, np.inf,
                                         epsabs=1e-14, limit=200)[0])
    assert r["mean_queue"][0] == pytest.approx(want, abs=1e-10)
    assert r["accuracy"] < 1e-9
    # F on the solver's points against the closed form
    np.testing.assert_allclose(r["F"], lwl.lwl_exponential_F(lam, d, r["w"]), atol=1e-10)
    assert r["p_wait"] == pytest.approx(lam**d)
    # the grid method on the same law: within its stated accuracy, which is small
    g = lwl.lwl_fixed_point(lam, d, method="grid", h=0.02, n_max=4096)
    assert abs(g["mean_wait"] - (want / lam - 1)) <= g["accuracy"] and g["accuracy"] < 1e-4


def test_control_closed_form_is_sensitive():
    # E[Q] at lam = 0.9 is not the value at 0.91: the comparison above can fail
    r = lwl.lwl_fixed_point(0.9, 2)
    assert abs(r["mean_queue"][0] + math.log(1 - 0.91**2) / 0.91) > 1e-2


@pytest.mark.parametrize("svc", ["deterministic", "erlang:k=4", "weibull:shape=2", "lognormal:scv=4", "lomax:shape=3"])
def test_d1_is_pollaczek_khinchine(svc):
    # d = 1: F is the M/G/1 workload, int F = E[W] = lam E[S^2] / (2 (1 - lam))
    lam = 0.7
    law = service.parse_service(svc)
    r = lwl.lwl_fixed_point(lam, 1, service=svc, method="grid", h=0.02, n_max=4096)
    want = lam * law.moment(2) / (2 * (1 - lam))
    assert abs(r["mean_wait"] - want) <= r["accuracy"] + 1e-12, (r["mean_wait"], want, r["accuracy"])
    assert r["accuracy"] < 0.02 * want


@pytest.mark.parametrize("svc", ["erlang:k=4", "hyperexponential:scv=5"])
def test_grid_agrees_with_the_ivp(svc):
    a = lwl.lwl_fixed_point(0.85, 2, service=svc, method="ph")
    b = lwl.lwl_fixed_point(0.85, 2, service=svc, method="grid", h=0.02, n_max=8192)
    assert abs(a["mean_wait"] - b["mean_wait"]) <= b["accuracy"] + a["accuracy"]
    assert a["accuracy"] < 1e-8


def test_speed_scaling():
    a = lwl.lwl_fixed_point(0.8, 2, service="erlang:k=2")
    b = lwl.lwl_fixed_point(1.6, 2, mu=2.0, service="erlang:k=2")
    assert b["mean_sojourn"] == pytest.approx(a["mean_sojourn"] / 2, rel=1e-9)
    assert b["mean_queue"][0] == pytest.approx(a["mean_queue"][0], rel=1e-9)


def test_heavy_tails_infinite_where_derived():
    # Lomax shape a: the LL(d) mean wait is finite iff d (a - 1) > 1
    assert lwl.lwl_mean_wait_finite("lomax:shape=1.6", 2)
    assert not lwl.lwl_mean_wait_finite("lomax:shape=1.5", 2)
    assert lwl.lwl_mean_wait_finite("lomax:shape=1.5", 3)
    assert not lwl.lwl_mean_wait_finite("lomax:shape=2", 1)  # M/G/1 needs E[S^2] < inf
    r = lwl.lwl_fixed_point(0.8, 2, service="lomax:shape=1.5")
    assert math.isinf(r["mean_wait"]) and math.isinf(r["mean_queue"][0]) and not r["finite"]
    # finite although E[S^2] = inf (shape 1.8 <= 2), with its stated accuracy
    f = lwl.lwl_fixed_point(0.8, 2, service="lomax:shape=1.8", h=0.02, n_max=4096)
    assert f["finite"] and math.isfinite(f["mean_wait"]) and f["accuracy"] < 0.01 * f["mean_wait"]


@pytest.mark.slow
@pytest.mark.parametrize("svc", ["weibull:shape=0.5", "lognormal:scv=4", "lomax:shape=3", "lomax:shape=1.8",
                                 "deterministic"])
def test_grid_accuracy_is_honest(svc):
    # the stated accuracy at h = 0.01 covers the difference to a 2x finer computation (the error
    # at h is about |E_h - E_2h| / 3 for a second-order scheme; the accuracy states |E_h - E_2h|)
    coarse = lwl.lwl_fixed_point(0.9, 2, service=svc, method="grid", h=0.01, n_max=1 << 14)
    fine = lwl.lwl_fixed_point(0.9, 2, service=svc, method="grid", h=0.005, n_max=1 << 15)
    assert abs(coarse["mean_wait"] - fine["mean_wait"]) <= coarse["accuracy"]


def test_errors():
    with pytest.raises(ValueError, match="lam < mu"):
        lwl.lwl_fixed_point(1.0, 2)
    with pytest.raises(ValueError, match="not phase-type"):
        lwl.lwl_fixed_point(0.5, 2, service="lognormal:scv=2", method="ph")
    with pytest.raises(ValueError, match="method"):
        lwl.lwl_fixed_point(0.5, 2, method="exact")
