"""limits.reference / limits.refined: the one entry point, its JSON shape and the command line."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from lbmc_analysis import limits
from lbmc_analysis import meanfield as mf

ANALYSIS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_shapes_and_fields():
    r = limits.reference({"policy": "jsq(2)", "lambda": 0.9, "beta": [0.5, 0.5], "mu": [1, 1], "K": 4})
    m = r["metrics"]
    assert set(m) == set(limits.METRICS)
    assert m["tail"].shape == (2, 4) and m["mean_queue"].shape == (2,) and m["p_wait"].shape == ()
    assert m["sojourn_quantiles"].shape == (4,)
    assert r["kind"] == "limit" and r["n"] is None
    for k in limits.METRICS:
        assert (r["source"][k] is None) == bool(np.all(np.isnan(m[k])))
    np.testing.assert_allclose(m["tail"], np.tile(mf.jsq_tail(0.9, 2, 4), (2, 1)), atol=1e-14)
    assert "Vvedenskaya" in r["source"]["tail"] and r["accuracy"]["tail"] <= 1e-12


def test_jsq2_quantiles_are_the_erlang_mixture():
    # JSQ(2), lam 0.9: P(sojourn > t) = sum_k P(join at level k) P(Erlang(k+1) > t); check at the
    # reported median by summing the mixture by hand
    from scipy import special
    r = limits.reference({"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1]})
    med = float(r["metrics"]["sojourn_quantiles"][0])
    x = mf.jsq_tail(0.9, 2, 40)
    u = np.concatenate(([1.0], x))
    join = u[:-1] ** 2 - u[1:] ** 2  # all d samples at level >= k, not all >= k + 1
    surv = float(np.sum(join * special.gammaincc(np.arange(1, 41), med)))
    assert surv == pytest.approx(0.5, abs=1e-9)


def test_policies_covered():
    base = {"lambda": 0.9, "beta": [1], "mu": [1]}
    for pol in ("random", "jsq(2)", "jsq", "pull", "jiq", "balanced(1)", "balanced(2)", "lwl(2)"):
        r = limits.reference({**base, "policy": pol, "n": 100})
        assert np.isfinite(r["metrics"]["mean_sojourn"]), pol
        assert np.isfinite(r["metrics"]["p_wait"]), pol
    # pull: no waiting, one message per customer
    r = limits.reference({**base, "policy": "pull"})
    assert r["metrics"]["p_wait"] == 0 and r["metrics"]["messages_per_arrival"] == 1
    # full jsq counts 2n messages: inf without n
    assert math.isinf(limits.reference({**base, "policy": "jsq"})["metrics"]["messages_per_arrival"])
    # random is exact at every n
    r = limits.reference({**base, "policy": "random"})
    assert r["exact"]["mean_sojourn"] and r["metrics"]["mean_sojourn"] == pytest.approx(10.0)
    # lwl(2) exponential: -log(1 - lam^2)/lam customers per server
    r = limits.reference({**base, "policy": "lwl(2)"})
    assert r["metrics"]["mean_queue"][0] == pytest.approx(-math.log(1 - 0.81) / 0.9, abs=1e-9)


def test_general_service_and_infinite_means():
    p = {"policy": "jsq(2)", "lambda": 0.8, "pools": [{"beta": 1, "mu": 1, "service": "erlang:k=4"}]}
    r = limits.reference(p)
    assert "cavity" in r["source"]["tail"] and np.isfinite(r["metrics"]["mean_sojourn"])
    # lognormal under jsq(2): no limit here (the cavity needs phase-type laws), said in notes
    r = limits.reference({**p, "pools": [{"beta": 1, "mu": 1, "service": "lognormal:scv=4"}]})
    assert np.isnan(r["metrics"]["mean_sojourn"]) and any("phase-type" in n for n in r["notes"])
    # M/G/1 with Lomax 1.5: the mean wait is infinite, the utilization is not
    r = limits.reference({"policy": "random", "lambda": 0.7, "beta": [1], "mu": [1], "service": "lomax:shape=1.5"})
    assert math.isinf(r["metrics"]["mean_wait"]) and r["metrics"]["utilization"][0] == pytest.approx(0.7)
    assert '"mean_wait": "inf"' in limits.to_json(r)
    # lwl(2) with Lomax 1.8: finite although E[S^2] is infinite
    r = limits.reference({"policy": "lwl(2)", "lambda": 0.7, "beta": [1], "mu": [1], "service": "lomax:shape=1.8"})
    assert np.isfinite(r["metrics"]["mean_wait"])


def test_unstable_and_unknown():
    r = limits.reference({"policy": "jsq(2)", "lambda": 1.0, "beta": [0.5, 0.5], "mu": [2, 1 / 3]})
    assert np.all(np.isnan(r["metrics"]["tail"])) and any("capacity" in n for n in r["notes"])
    r = limits.reference({"policy": "lwl(2)", "lambda": 0.5, "beta": [0.5, 0.5], "mu": [2, 1]})
    assert np.isnan(r["metrics"]["mean_sojourn"]) and any("heterogeneous" in n for n in r["notes"])
    j = json.loads(limits.to_json(r))
    assert j["metrics"]["mean_sojourn"] is None and j["source"]["mean_sojourn"] is None


def test_frame_row_and_speed_lists():
    # a to_frame row: beta_1, mu_1, buffer_1 columns, policy_name and d, NaN for absent values
    row = {"lambda": 0.9, "policy_name": "jsq", "d": 2, "beta_1": 1.0, "mu_1": 1.0, "buffer_1": -1,
           "n": 100, "stale": float("nan"), "sampling": "distinct"}
    r = limits.reference(row)
    assert r["metrics"]["p_wait"] == pytest.approx(0.81)
    # d = n is full JSQ, as the results file writes it
    assert "full JSQ" in limits.reference({**row, "d": 100})["source"]["utilization"]
    # a linear speed list: slots
    r = limits.reference({"policy": "pull", "lambda": 1.5, "pools": [{"beta": 1, "mu_k": [1, 2]}]})
    assert r["point"]["slots"] == [2] and np.isfinite(r["metrics"]["mean_queue"][0])


def test_errors_name_the_key():
    with pytest.raises(ValueError, match="'lambda' is required"):
        limits.reference({"policy": "jsq(2)", "beta": [1], "mu": [1]})
    with pytest.raises(ValueError, match="policy = 'jsq2'"):
        limits.reference({"policy": "jsq2", "lambda": 0.5, "beta": [1], "mu": [1]})
    with pytest.raises(ValueError, match="beta"):
        limits.reference({"policy": "random", "lambda": 0.5, "beta": [0.5], "mu": [1]})
    with pytest.raises(ValueError, match="sampling"):
        limits.reference({"policy": "random", "lambda": 0.5, "beta": [1], "mu": [1], "sampling": "some"})


def test_refined_entry_point():
    p = {"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1], "buffer": 3, "K": 3}
    r = limits.refined(p, 10)
    lim = limits.reference(p)
    assert r["kind"] == "refined" and r["n"] == 10
    # refined tails below the limit (JSQ(2) at n = 10 is worse balanced... fewer long queues
    # measured: exact n = 10 tails 0.8276, 0.5687, 0.2425 vs x* 0.8506, 0.6032, 0.2604)
    assert np.all(r["metrics"]["tail"][0] < lim["metrics"]["tail"][0])
    assert r["metrics"]["throughput"] == pytest.approx(0.9 * (1 - r["metrics"]["p_block"]))
    assert np.isnan(r["metrics"]["sojourn_quantiles"]).all()
    r = limits.refined({"policy": "lwl(2)", "lambda": 0.5, "beta": [1], "mu": [1]}, 10)
    assert np.isnan(r["metrics"]["mean_sojourn"]) and r["notes"]


def test_command_line():
    env = dict(os.environ, PYTHONPATH=ANALYSIS)
    point = {"policy": "jsq(2)", "lambda": 0.9, "pools": [{"beta": 0.5, "mu": 1}, {"beta": 0.5, "mu": "1"}], "K": 3}
    # a list of points: one start-up, a list of results
    out = subprocess.run([sys.executable, "-m", "lbmc_analysis", "limit", "--json",
                          json.dumps([point, {**point, "policy": "random", "buffer": 3}])],
                         capture_output=True, text=True, env=env, check=True)
    j = json.loads(out.stdout)
    assert j[0]["metrics"]["p_wait"] == pytest.approx(0.81) and len(j[0]["metrics"]["tail"]) == 2
    assert j[1]["exact"]["p_block"] and j[1]["metrics"]["p_block"] > 0
    bad = subprocess.run([sys.executable, "-m", "lbmc_analysis", "limit", "--refined", "10", "--json",
                          '{"policy": "jsq(2)"}'], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "'lambda' is required" in bad.stderr
    # --refined through the same function as limits.refined (in-process: the start-up is slow)
    from lbmc_analysis.__main__ import main
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["limit", "--refined", "20", "--json", json.dumps({**point, "buffer": 3})]) == 0
    assert json.loads(buf.getvalue())["kind"] == "refined"


def test_transient_for_point_and_its_command_line():
    from lbmc_analysis.limits import ode
    p = {"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1], "K": 3}
    r = limits.transient_for_point(p, [0.0, 1.0, 2.0], "tail:1,1,0.8", n=10)
    want = ode.transient(ode.OccupancyModel("jsq(2)", 0.9, levels=15), [0.0, 1.0, 2.0], "tail:1,1,0.8")
    np.testing.assert_allclose(r["tail"][:, 0], want.values[:, 0, :3], atol=1e-7)
    assert r["tail_refined"].shape == (3, 1, 3) and np.all(r["tail_refined"][0] == r["tail"][0])
    assert r["top"] < 1e-12
    from lbmc_analysis.__main__ import main
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["limit", "--transient", "0:2:1", "--init", "tail:1,1,0.8", "--json", json.dumps(p)]) == 0
    j = json.loads(buf.getvalue())
    assert j["time"] == [0.0, 1.0, 2.0] and j["tail_refined"] is None
    np.testing.assert_allclose(j["tail"], r["tail"], atol=1e-9)
    with pytest.raises(ValueError, match="exponential"):
        limits.transient_for_point({**p, "service": "erlang:k=2"}, [0, 1])


@pytest.mark.parametrize("policy,extra", [("pull", {}), ("jiq", {}), ("jsq", {}), ("jsq(20)", {"n": 20}),
                                          ("pull", {"routers": 2})])
def test_refined_refuses_the_boundary_policies(policy, extra):
    # pull, jiq and full jsq: the fixed point is on the boundary (no waiting), the drift is not
    # differentiable there; refined() gave the limit itself (p_wait 0, mean_sojourn 1) labelled
    # "error O(1/n^2)" while lbmc measures p_wait 0.34 at n = 20
    p = {"policy": policy, "lambda": 0.9, "beta": [1], "mu": [1], "K": 3, **extra}
    r = limits.refined(p, 20)
    assert all(np.isnan(v).all() for v in r["metrics"].values())
    assert all(s is None for s in r["source"].values())
    assert any("boundary" in s and "differentiable" in s for s in r["notes"])
    # control: jsq(2) at the same point has values
    assert not np.isnan(limits.refined({**p, "policy": "jsq(2)", "n": 20}, 20)["metrics"]["p_wait"])
    # the transient refined curve likewise: none, the source says why; the ODE kept
    tr = limits.transient_for_point(p, [0.0, 1.0], None, n=20)
    assert tr["tail_refined"] is None and "not differentiable" in tr["source"] and tr["tail"].shape[0] == 2


def test_refined_refuses_unstable_points():
    # the quickstart's PULL point at n = 10 was found unstable by the simulation and got a refined
    # mean_sojourn 0.892: a point marked unstable gets none, with a note
    pools = [{"beta": 0.5, "mu": 2}, {"beta": 0.5, "mu": 1 / 3}]
    for pol in ("pull", "jsq(2)"):
        r = limits.refined({"policy": pol, "lambda": 0.5, "pools": pools, "n": 10, "status": "unstable"}, 10)
        assert np.isnan(r["metrics"]["mean_sojourn"]) and r["notes"]
    r = limits.refined({"policy": "jsq(2)", "lambda": 0.5, "pools": pools, "n": 10, "status": "unstable"}, 10)
    assert any("unstable" in s for s in r["notes"])
    # control: the same point with status ok has a value
    ok = limits.refined({"policy": "jsq(2)", "lambda": 0.5, "pools": pools, "n": 10, "status": "ok"}, 10)
    assert np.isfinite(ok["metrics"]["mean_sojourn"])
    # no stationary regime as n -> infinity (rho >= 1, unlimited buffers): none either
    r = limits.refined({"policy": "jsq(2)", "lambda": 1.1, "beta": [1], "mu": [1]}, 10)
    assert np.isnan(r["metrics"]["mean_sojourn"]) and r["notes"]


def test_refined_n_names_a_missing_key(capsys):
    # --refined n on a point without 'n': the message says the key is missing (it said "the
    # point's n = None is not allowed"); a bad n is still named with its value
    from lbmc_analysis.__main__ import main

    point = {"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1]}
    assert main(["limit", "--refined", "n", "--json", json.dumps(point)]) == 2
    err = capsys.readouterr().err
    assert "no key 'n'" in err and "None" not in err
    assert main(["limit", "--refined", "n", "--json", json.dumps({**point, "n": 0})]) == 2
    assert "n = 0 is not allowed" in capsys.readouterr().err


def test_phase_type_texts_get_their_references():
    # M/PH/1 under random routing: Pollaczek-Khinchine, W = lambda E[S^2] / (2 (1 - rho))
    for text, scv in (("coxian:scv=4", 4.0), ("coxian:r=[2,2],p=[1]", 0.5),
                      ("ph:alpha=[0.5,0.5],T=[[-2,1],[0,-1]]", 1.0)):
        r = limits.reference({"policy": "random", "lambda": 0.9, "beta": [1], "mu": [1], "service": text})
        assert r["metrics"]["mean_wait"] == pytest.approx(0.9 * (1 + scv) / (2 * 0.1), rel=1e-9)
    # jsq(2): the cavity, the same as the equivalent built-in law (Erlang-2 = coxian r=[2,2], p=[1])
    p = {"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1]}
    a = limits.reference({**p, "service": "coxian:r=[2,2],p=[1]"})
    b = limits.reference({**p, "service": "erlang:k=2"})
    assert "cavity" in a["source"]["mean_wait"]
    assert a["metrics"]["mean_wait"] == pytest.approx(b["metrics"]["mean_wait"], rel=1e-9)


def test_mean_workload_and_the_withdrawals_source():
    # M/G/1 (random routing): Pollaczek-Khinchine, the work equals the mean wait at speed 1
    r = limits.reference({"policy": "random", "lambda": 0.5, "beta": [1], "mu": [1], "service": "lognormal:scv=4"})
    assert r["metrics"]["mean_workload"][0] == pytest.approx(0.5 * 5 / (2 * 0.5), rel=1e-9)
    assert r["exact"]["mean_workload"]
    # exponential service: the work is the number of customers (JSQ(2) mean field)
    r = limits.reference({"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1]})
    assert r["metrics"]["mean_workload"][0] == pytest.approx(sum(0.9 ** (2 ** k - 1) for k in range(1, 40)), rel=1e-9)
    # no waiting (pull in the limit): a busy server's remaining work has the equilibrium mean (1 + scv) / 2
    r = limits.reference({"policy": "pull", "lambda": 0.9, "beta": [1], "mu": [1], "service": "erlang:k=4"})
    assert r["metrics"]["mean_workload"][0] == pytest.approx(0.9 * (1 + 0.25) / 2, rel=1e-9)
    # infinite E[S^2]: infinite work
    r = limits.reference({"policy": "random", "lambda": 0.5, "beta": [1], "mu": [1], "service": "lomax:shape=1.5"})
    assert math.isinf(r["metrics"]["mean_workload"][0])
    # jsq(2) never withdraws: the withdrawals' source is not the messages' "2d per arrival"
    r = limits.reference({"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1]})
    assert r["metrics"]["withdrawals_per_arrival"] == 0 and "2d" not in r["source"]["withdrawals_per_arrival"]


# ----------------------------------------------------------------------------------
# mean_workload (units of requirement, mean 1): closed forms and independent routes
# ----------------------------------------------------------------------------------


def _workload(policy, lam, pools):
    r = limits.reference({"policy": policy, "lambda": lam, "pools": pools})
    return r, np.asarray(r["metrics"]["mean_workload"], dtype=float)


def test_workload_mg1_pollaczek_khinchine():
    # one pool of speed 2, lognormal scv 4 (E[S^2] = 5 in units of requirement): the time
    # average work is the FCFS wait lam E[S_t^2] / (2 (1 - rho)), S_t = S / 2, times the speed
    lam, mu = 0.9, 2.0
    rho = lam / mu
    expect = mu * lam * (5.0 / mu**2) / (2 * (1 - rho))
    r, w = _workload("random", lam, [{"beta": 1, "mu": mu, "buffer": -1, "service": "lognormal:scv=4"}])
    assert w[0] == pytest.approx(expect, rel=1e-12) and r["exact"]["mean_workload"]
    # the phase-type route (the tagged-queue chain) gives the same for a law of the same scv
    _, w_ph = _workload("random", lam, [{"beta": 1, "mu": mu, "buffer": -1, "service": "hyperexponential:scv=4"}])
    assert w_ph[0] == pytest.approx(expect, rel=1e-8)
    # control: the scv enters (scv 2 is another number)
    _, w2 = _workload("random", lam, [{"beta": 1, "mu": mu, "buffer": -1, "service": "hyperexponential:scv=2"}])
    assert abs(w2[0] - expect) > 0.1 * expect


def test_workload_exponential_is_customers():
    r, w = _workload("jsq(2)", 0.9, [{"beta": 0.5, "mu": 2, "buffer": 5}, {"beta": 0.5, "mu": 0.5, "buffer": 5}])
    np.testing.assert_allclose(w, r["metrics"]["mean_queue"], rtol=1e-9)
    r, w = _workload("jsq(2)", 0.9, [{"beta": 1, "mu": 1, "buffer": -1}])
    np.testing.assert_allclose(w, r["metrics"]["mean_queue"], rtol=1e-12)
    assert "memoryless" in r["source"]["mean_workload"]
    rf = limits.refined({"policy": "jsq(2)", "lambda": 0.9, "pools": [{"beta": 1, "mu": 1, "buffer": -1}]}, 20)
    np.testing.assert_allclose(rf["metrics"]["mean_workload"], rf["metrics"]["mean_queue"], rtol=1e-12)


def test_workload_lwl_brumelle_against_workload_law():
    # LL(2), H2 scv 4: H = lambda G gives lam (E[W] + E[S^2]/2); the integral of the
    # workload survival function F (an independent route) must agree
    from lbmc_analysis.limits.lwl import lwl_fixed_point

    lam = 0.9
    _, w = _workload("lwl(2)", lam, [{"beta": 1, "mu": 1, "buffer": -1, "service": "hyperexponential:scv=4"}])
    fp = lwl_fixed_point(lam, 2, service="hyperexponential:scv=4")
    x, F = np.asarray(fp["w"]), np.asarray(fp["F"])
    integral = float(np.sum(np.diff(x) * (F[1:] + F[:-1]) / 2))
    assert w[0] == pytest.approx(integral, rel=2e-3)
    assert w[0] > fp["mean_queue"][0]  # scv 4: more work than customers


def test_workload_pull_residual_and_infinite():
    # PULL, no waiting in the limit: the work of a busy server is E[S^2]/2 = (1 + scv)/2
    r, w = _workload("pull", 0.9, [{"beta": 1, "mu": 1, "buffer": -1, "service": "lognormal:scv=4"}])
    assert w[0] == pytest.approx(0.9 * 2.5, rel=1e-12)
    # Lomax 1.5: E[S^2] infinite, so is the work
    _, w = _workload("random", 0.5, [{"beta": 1, "mu": 1, "buffer": -1, "service": "lomax:shape=1.5"}])
    assert math.isinf(w[0])


# ----------------------------------------------------------------------------------
# quantiles of phase-type and no-wait limits (limits.quantiles)
# ----------------------------------------------------------------------------------


def _ph_quantile(beta, Q, levels):
    """Quantiles of a (defective) phase-type law beta exp(Q x) 1, by brentq on scipy's expm."""
    from scipy import linalg, optimize

    one = np.ones(Q.shape[0])
    surv = lambda x: float(beta @ linalg.expm(Q * x) @ one)  # noqa: E731
    out = []
    for q in levels:
        if surv(0.0) <= 1 - q:
            out.append(0.0)
            continue
        hi = 1.0
        while surv(hi) > 1 - q:
            hi *= 2
        out.append(optimize.brentq(lambda x: surv(x) - (1 - q), 0, hi, xtol=1e-13))
    return np.array(out)


@pytest.mark.parametrize("scv", [4.0, 2.0])
def test_quantiles_mph1_against_asmussen(scv):
    # M/PH/1 FCFS (random routing, rho 0.9, H2): the waiting time is phase-type
    # (alpha_+, T + t alpha_+) with alpha_+ = lam alpha (-T)^-1 of mass rho (Asmussen, Applied
    # Probability and Queues, 2003, VIII.5), the sojourn that law followed by one requirement
    from lbmc_analysis.limits.service import ph_hyperexponential

    lam, levels = 0.9, (0.5, 0.9, 0.99, 0.999)
    ph = ph_hyperexponential(scv)
    T, a, t = ph.T, ph.alpha, ph.exit
    ap = lam * a @ np.linalg.inv(-T)
    Qw = T + np.outer(t, ap)
    wait = _ph_quantile(ap, Qw, levels)
    m = a.size
    # W's chain leaves at rate t (1 - rho) (its generator's exit vector), into the requirement
    Qs = np.block([[Qw, (1 - lam) * np.outer(t, a)], [np.zeros((m, m)), T]])
    soj = _ph_quantile(np.concatenate((ap, (1 - lam) * a)), Qs, levels)
    r = limits.reference({"policy": "random", "lambda": lam,
                          "pools": [{"beta": 1, "mu": 1, "buffer": -1, "service": f"hyperexponential:scv={scv:g}"}]})
    np.testing.assert_allclose(r["metrics"]["wait_quantiles"], wait, rtol=1e-6)
    np.testing.assert_allclose(r["metrics"]["sojourn_quantiles"], soj, rtol=1e-6)
    assert "phase-type absorption" in r["source"]["wait_quantiles"]


def test_quantiles_ph_route_equals_erlang_mixture():
    # exponential service through the phase-type route: the Erlang mixtures by level found
    import importlib

    ref = importlib.import_module("lbmc_analysis.limits.reference")
    from lbmc_analysis.limits.cavity import cavity_jsq

    for beta, mu in (([1.0], [1.0]), ([0.5, 0.5], [2.0, 0.5])):
        p = ref.normalize_point({"policy": "jsq(2)", "lambda": 0.9, "beta": beta, "mu": mu})
        res = cavity_jsq(0.9, 2, beta=beta, mu=mu, weights="uniform")
        soj, wait = ref._ph_quantiles_from_cavity(res, p)
        soj_e, wait_e = ref._quantiles_from_cavity(res, p["beta"], p["mu"], p["levels"])
        np.testing.assert_allclose(soj, soj_e, rtol=1e-8)
        np.testing.assert_allclose(wait, wait_e, rtol=1e-8, atol=1e-12)


def test_quantiles_pull_no_wait_lognormal():
    # PULL as n -> inf: nobody waits; the sojourn is the lognormal requirement itself
    from scipy import special

    levels = (0.5, 0.9, 0.99, 0.999)
    sigma = math.sqrt(math.log(1 + 4.0))
    expect = np.exp(-sigma**2 / 2 + sigma * special.ndtri(np.array(levels)))
    r = limits.reference({"policy": "pull", "lambda": 0.9,
                          "pools": [{"beta": 1, "mu": 1, "buffer": -1, "service": "lognormal:scv=4"}]})
    np.testing.assert_allclose(r["metrics"]["sojourn_quantiles"], expect, rtol=1e-9)
    assert np.all(r["metrics"]["wait_quantiles"] == 0)
    # control: at speed 2 every quantile halves
    r2 = limits.reference({"policy": "pull", "lambda": 0.9,
                           "pools": [{"beta": 1, "mu": 2, "buffer": -1, "service": "lognormal:scv=4"}]})
    np.testing.assert_allclose(r2["metrics"]["sojourn_quantiles"], expect / 2, rtol=1e-9)


def test_pair_statistics_of_state_blind_routing():
    # random routing: independent queues at every n, so every pair deviation is exactly 0
    for policy in ("random", "jsq(1)", "balanced(1)"):
        r = limits.reference({"policy": policy, "lambda": 0.9, "beta": [0.5, 0.5], "mu": [1, 2], "K": 3})
        assert r["metrics"]["pair_corr"].shape == (2, 3) and r["metrics"]["pair_tv"].shape == (2,)
        for m in ("pair_tv", "pair_tv_scaled", "pair_corr", "pair_corr_scaled"):
            assert np.all(r["metrics"][m] == 0) and r["exact"][m] and "independent" in r["source"][m]
    # an unstable point: no value
    r = limits.reference({"policy": "random", "lambda": 1.2, "beta": [1], "mu": [1], "K": 3})
    assert np.all(np.isnan(r["metrics"]["pair_tv"]))
    # lwl(d), pull with several routers: no route, no value claimed
    for point in ({"policy": "lwl(2)"}, {"policy": "pull", "routers": 2}):
        r = limits.reference({**point, "lambda": 0.9, "beta": [1], "mu": [1], "K": 3})
        assert np.all(np.isnan(r["metrics"]["pair_corr_scaled"])) and r["source"]["pair_corr_scaled"] is None


def test_pair_statistics_when_arrivals_join_idle_servers():
    # full jsq, pull and jiq with one router: nobody waits as n -> inf and the pools' busy
    # fractions carry the dependence (limits.pairs.idle_pair_covariances). Against the exact
    # chain of full JSQ with buffer 1 (join an idle server, else blocked: the same busy counts),
    # two pools (beta 1/4, 3/4; mu 2, 0.6), lambda 0.5: the error of n c(1, 1) halves as n
    # doubles in both pools; the wrong limit of independence (0) or of swapped rates stalls.
    from lbmc_analysis.limits import ode
    from lbmc_analysis.limits.exact import OccupancyChain
    from lbmc_analysis.limits.pairs import idle_pair_covariances

    beta, mu = np.array([0.25, 0.75]), np.array([2.0, 0.6])
    lim, acc = idle_pair_covariances(0.5, beta, mu)
    lim = np.array([c[0, 0] for c in lim])
    assert acc < 1e-12
    swapped = np.array([c[0, 0] for c in idle_pair_covariances(0.5, beta, mu[::-1])[0]])

    def exact(n):
        ch = OccupancyChain(ode.OccupancyModel("jsq", 0.5, beta, mu, np.array([1, 1]), n=n))
        pi, out = ch.stationary(), []
        for j in range(2):
            nj, x = beta[j] * n, ch.x[:, j, 0]
            p = pi @ x
            var = pi @ (x * x) - p * p
            out.append(n * (var - p * (1 - p) / nj) * nj / (nj - 1))
        return np.array(out)

    nc = {n: exact(n) for n in (32, 64, 128)}
    err = {n: np.abs(v - lim) for n, v in nc.items()}
    for j in range(2):
        assert 1.5 < err[64][j] / err[128][j] < 2.5, (nc, lim)
        assert np.abs(nc[128][j] - swapped[j]) > 5 * err[128][j] and nc[128][j] > 10 * err[128][j]
    # one pool: the busy count is M/M/inf's Poisson law, n c(1, 1) = rho^2; any service law
    # (insensitivity); levels >= 2 are 0; n x pair_tv = 2 rho^2
    for policy in ("pull", "jiq", "jsq"):
        for law in ("exponential", "lognormal:scv=4"):
            r = limits.reference({"policy": policy, "lambda": 0.9, "beta": [1], "mu": [1], "K": 3, "service": law})
            np.testing.assert_allclose(r["metrics"]["pair_corr_scaled"][0], [0.81, 0, 0], atol=1e-12)
            np.testing.assert_allclose(r["metrics"]["pair_tv_scaled"], [1.62], atol=1e-12)
            assert np.all(r["metrics"]["pair_corr"] == 0)
    # several pools of a law that is not exponential: no route
    r = limits.reference({"policy": "pull", "lambda": 0.9, "beta": [0.5, 0.5], "mu": [1, 1],
                          "service": "lognormal:scv=4"})
    assert np.all(np.isnan(r["metrics"]["pair_corr_scaled"]))


def _exact_pair_cov(policy, lam, B, n):
    """n c(a, b) of two distinct servers from the exact occupancy chain: the pool's empirical
    tails T have Cov(T(a), T(b)) = (P(Q >= max) - P(Q >= a) P(Q >= b)) / n + (1 - 1/n) c(a, b)."""
    from lbmc_analysis.limits import ode
    from lbmc_analysis.limits.exact import OccupancyChain

    m = ode.OccupancyModel(policy, lam, np.array([1.0]), np.array([1.0]), np.array([B]), n=n)
    ch = OccupancyChain(m)
    pi = ch.stationary()
    x = ch.x[:, 0, :]
    p = pi @ x
    cov = (x * pi[:, None]).T @ x - np.outer(p, p)
    top = p[np.maximum.outer(np.arange(p.size), np.arange(p.size))]
    return n * (cov - (top - np.outer(p, p)) / n) * n / (n - 1)


def test_pair_statistics_of_jsq2_against_exact_chains():
    # lim n c(a, b) from the occupancy's covariance W (limits.refined_point.pair_covariances)
    # against the exact chains of n = 8, 16, 32 servers (JSQ(2), lambda 0.8, buffer 3): the
    # error falls like 1/n (halves as n doubles) and Richardson's 2 (n c)_2n - (n c)_n like
    # 1/n^2 (a quarter), as the expansion says; a wrong limit (e.g. independence, 0) stalls.
    from lbmc_analysis.limits import ode, refined_mf
    from lbmc_analysis.limits.pairs import pair_covariances

    lim, acc = pair_covariances(refined_mf.refined_stationary(
        ode.OccupancyModel("jsq(2)", 0.8, np.array([1.0]), np.array([1.0]), np.array([3]))))
    lim = lim[0]
    nc = {n: _exact_pair_cov("jsq(2)", 0.8, 3, n) for n in (8, 16, 32)}
    err = {n: np.abs(v - lim).max() for n, v in nc.items()}
    rich = {n: np.abs(2 * nc[n] - nc[n // 2] - lim).max() for n in (16, 32)}
    assert 1.5 < err[8] / err[16] < 2.5 and 1.5 < err[16] / err[32] < 2.5, err
    assert rich[32] < err[32] / 3 and rich[16] / rich[32] > 2.5, (rich, err)
    assert np.abs(nc[32]).max() > 10 * err[32]  # independence (0) would be far off
    # the entry point: pair_corr_scaled is the diagonal, pair_tv_scaled 1/2 sum |D(a, b)| of the
    # deviations at the levels 0 .. K (K lumped), pair_corr / pair_tv 0 in the limit
    r = limits.reference({"policy": "jsq(2)", "lambda": 0.8, "beta": [1], "mu": [1], "buffer": [3], "K": 3})
    np.testing.assert_allclose(r["metrics"]["pair_corr_scaled"][0], np.diag(lim), atol=1e-9)
    D = np.zeros((4, 4))
    for a in range(4):
        for b in range(4):
            def t(k, h):
                return lim[k - 1, h - 1] if 1 <= k <= 3 and 1 <= h <= 3 else 0.0
            # 1{Q = a} = 1{Q >= a} - 1{Q >= a + 1}; level 3 is "at least 3"
            D[a, b] = sum(sa * sb * t(a + da, b + db) for da, sa in ((0, 1), (1, -1)) for db, sb in ((0, 1), (1, -1))
                          if (a < 3 or da == 0) and (b < 3 or db == 0))
    np.testing.assert_allclose(r["metrics"]["pair_tv_scaled"][0], 0.5 * np.abs(D).sum(), rtol=1e-9)
    assert np.all(r["metrics"]["pair_corr"] == 0) and not r["exact"]["pair_corr_scaled"]
    rf = limits.refined({"policy": "jsq(2)", "lambda": 0.8, "beta": [1], "mu": [1], "buffer": [3], "K": 3}, 32)
    np.testing.assert_allclose(rf["metrics"]["pair_corr"][0], np.diag(lim) / 32, atol=1e-9)
    # the same covariance under random routing (independent servers) is 0 to round-off
    rnd, _ = pair_covariances(refined_mf.refined_stationary(
        ode.OccupancyModel("random", 0.7, np.array([0.3, 0.7]), np.array([2.0, 0.5]), np.array([np.inf, 5]))))
    assert np.abs(rnd).max() < 1e-10


def test_pair_statistics_of_phase_type_service():
    # the counts by level and phase around the queue at the cavity (limits.pairs): its drift
    # vanishes at the cavity's solution; with exponential service it gives the tail route's
    # covariances (heterogeneous pools, a finite buffer); d = 1 (independent servers) gives 0
    from lbmc_analysis.limits import cavity, ode, pairs, refined_mf

    lam, beta, mu, buf = 0.8, [0.4, 0.6], [2.0, 0.5], [np.inf, 6]
    res = cavity.cavity_jsq(lam, 3, beta=beta, mu=mu, buffer=buf)
    C, acc, resid = pairs.ph_pair_covariances(res, lam, 3, beta, mu, ["exponential"] * 2)
    tail_route, _ = pairs.pair_covariances(refined_mf.refined_stationary(
        ode.OccupancyModel("jsq(3)", lam, np.array(beta), np.array(mu), np.array(buf))))
    assert resid < 1e-12 and acc < 1e-9
    for j in range(2):
        m = min(C[j].shape[0], tail_route[j].shape[0])
        np.testing.assert_allclose(C[j][:m, :m], tail_route[j][:m, :m], atol=1e-9)
    res = cavity.cavity_jsq(0.8, 1, service="hyperexponential:scv=5")
    C, _, resid = pairs.ph_pair_covariances(res, 0.8, 1, [1.0], [1.0], ["hyperexponential:scv=5"])
    assert resid < 1e-12 and np.abs(C[0]).max() < 1e-10
    # the entry point for H2 scv 5, JSQ(2), lambda 0.9 (a simulation at n = 1000 covers these:
    # tests/cli/limit_columns.py); Erlang-4 too; lognormal (not phase-type) has none
    r = limits.reference({"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1],
                          "service": "hyperexponential:scv=5", "K": 6})
    assert "cavity" in r["source"]["pair_corr_scaled"] and np.all(r["metrics"]["pair_corr_scaled"] > 0)
    assert r["metrics"]["pair_tv_scaled"][0] > 0 and np.all(r["metrics"]["pair_corr"] == 0)
    r = limits.reference({"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1], "service": "erlang:k=4", "K": 4})
    assert np.all(np.isfinite(r["metrics"]["pair_corr_scaled"]))
    r = limits.reference({"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1], "service": "lognormal:scv=4"})
    assert np.all(np.isnan(r["metrics"]["pair_corr_scaled"]))


def test_lwl_sojourn_quantiles():
    # LL(d)'s sojourn = W + S/mu with S independent of W (limits.quantiles.wait_plus_service_quantiles):
    # d = 1 with exponential service is M/M/1, sojourn Exp(mu - lam), within the stated accuracy;
    # deterministic service: the sojourn quantile is the wait quantile + 1/mu exactly
    from lbmc_analysis.limits import lwl, quantiles, service

    levels = [0.5, 0.9, 0.99, 0.999]
    for mu in (1.0, 2.0):
        r = lwl.lwl_fixed_point(0.7 * mu, 1, mu=mu, service="exponential")
        q, acc = quantiles.wait_plus_service_quantiles(r["w"], r["F"], service.parse_service("exponential"), mu, levels)
        exact = -np.log1p(-np.array(levels)) / (0.3 * mu)
        assert acc < 0.02 / mu and np.all(np.abs(q - exact) <= acc), (q, exact, acc)
        # a wrong law (the service's own quantiles, no wait) is far outside
        assert np.all(np.abs(-np.log1p(-np.array(levels)) / mu - exact) > 10 * acc)
    r = limits.reference({"policy": "lwl(2)", "lambda": 0.9, "beta": [1], "mu": [2], "service": "deterministic"})
    soj, wait = r["metrics"]["sojourn_quantiles"], r["metrics"]["wait_quantiles"]
    tol = r["accuracy"]["sojourn_quantiles"] + r["accuracy"]["wait_quantiles"]
    assert np.all(np.abs(soj - (wait + 0.5)) <= tol) and tol < 0.02, (soj, wait, tol)
    assert "independent" in r["source"]["sojourn_quantiles"]


def test_mg1_quantiles_of_random_routing():
    # random routing, a law that is not phase-type, unlimited buffers: each server an M/G/1 queue
    # whose wait is the workload it finds (LL(1)'s integral equation). The route on the grid
    # against M/M/1's P(W > w) = rho exp(-(mu - lam) w); M/D/1: sojourn = wait + 1/mu
    from lbmc_analysis.limits import lwl
    from lbmc_analysis.limits.reference import _grid_quantiles

    levels = [0.5, 0.9, 0.99, 0.999]
    r = lwl.lwl_fixed_point(0.7, 1, service="exponential", method="grid")
    q = np.array(_grid_quantiles(r["w"], r["F"], levels))
    exact = np.log(0.7 / (1 - np.array(levels))) / 0.3
    assert np.all(np.abs(q - exact) <= np.max(np.diff(r["w"]))), (q, exact)
    r = limits.reference({"policy": "random", "lambda": 0.7, "beta": [1], "mu": [2], "service": "deterministic"})
    soj, wait = r["metrics"]["sojourn_quantiles"], r["metrics"]["wait_quantiles"]
    tol = r["accuracy"]["sojourn_quantiles"] + r["accuracy"]["wait_quantiles"]
    assert np.all(np.abs(soj - (wait + 0.5)) <= tol) and tol < 0.05 and r["exact"]["wait_quantiles"]
    r = limits.reference({"policy": "random", "lambda": 0.7, "beta": [0.5, 0.5], "mu": [1, 2],
                          "service": "lognormal:scv=4"})
    assert np.all(np.isnan(r["metrics"]["wait_quantiles"])) and any("differ" in x for x in r["notes"])
