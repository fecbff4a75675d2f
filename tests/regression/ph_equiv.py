#!/usr/bin/python3
"""The phase-type occupancy engine (occupancy-ph) against the per-server general engine.

Both engines simulate the same chain (docs/occupancy.md: the occupancy counts x_j(k, p) are
an exact lumping of the per-server state), so on every case each stationary metric of the
two runs estimates the same number: the difference of the two replica means is checked
against t(1 - 0.01 / (2 K), R - 1) * sqrt(se_a^2 + se_b^2), K the number of values compared
over the grid (Bonferroni; the t quantile with R - 1 degrees of freedom is conservative for
the Welch difference). Both runs start empty and use the same time and warm-up, so the
start's bias is the same in both; the per-customer means of occupancy-ph are conditional
expectations at admission, those of `general` are measured at departure: the customers
still in the system when a replica ends are censored from general's means, a bias of order
(mean sojourn) x (customers in the system) / (admitted in a replica), which the horizons
here keep far below the intervals (at n = 1000, lambda 0.9 and H2 of scv 5 a horizon of 100
shows it at 30 standard errors; 1500 does not).

The grid covers Erlang-2..8, hyperexponential scv 2..20, J = 1..3 pools, every policy with
an occupancy form (random, jsq(d) both samplings, jsq, balanced(c), pull withdraw/keep with
R routers (keep with one router, as the engine takes it), jiq), finite and unlimited buffers, n = 10..1000. The default grid runs in about
half a minute; the slow one (label slow) in a few minutes.

The control (--control law: occupancy-ph runs Erlang laws as H2 of scv 2 and H2 laws as
Erlang-2) must be seen: exit 0 only when some value falls outside.

Usage: ph_equiv.py [--lbmc LBMC] [--grid default|slow] [--control none|law] [--replicas R]
                   [--seed S]
"""
import argparse
import json
import os
import subprocess
import sys
import time

from scipy.stats import t as tdist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ph_exact import METRICS, _flatten, _pools_arg, control_status  # noqa: E402


def _case(n, lam, pools, service, policy, **kw):
    return dict(n=n, lam=lam, pools=pools, service=service, policy=policy, **kw)


E = {k: f"erlang:k={k}" for k in (2, 3, 4, 8)}
H2 = {c: f"hyperexponential:scv={c}" for c in (2, 5, 10, 20)}

# n, lambda per server, pools (beta, mu, buffer or None), service (one, or one per pool),
# policy; optional routers, stale, sampling, time (per replica).
DEFAULT_GRID = [
    _case(10, 0.8, [(1, 1, None)], E[4], "jsq(2)"),
    _case(20, 0.85, [(1, 1, None)], H2[5], "jsq(2)", sampling="with_replacement"),
    _case(10, 0.9, [(0.5, 1, 3), (0.5, 2, 3)], [H2[20], E[2]], "jsq"),
    _case(30, 0.7, [(1, 1, None)], H2[2], "pull", routers=2),
    _case(12, 0.9, [(0.5, 1, 2), (0.25, 2, 2), (0.25, 0.5, 2)], E[8], "balanced(2)"),
    _case(50, 1.1, [(1, 1, 2)], H2[10], "jiq"),
    _case(40, 0.7, [(0.5, 1, None), (0.5, 1.5, None)], [E[3], H2[5]], "random"),
]
SLOW_GRID = DEFAULT_GRID + [
    _case(1000, 0.9, [(1, 1, None)], E[4], "jsq(2)", time=1500),
    _case(1000, 0.9, [(1, 1, None)], H2[5], "jsq(2)", time=1500),
    _case(1000, 0.95, [(1, 1, 5)], H2[20], "jsq(3)", time=1500),
    _case(200, 0.9, [(1, 1, None)], E[2], "jsq", time=300),
    _case(100, 0.8, [(0.5, 1, None), (0.5, 2, None)], H2[2], "balanced(1)"),
    _case(300, 0.95, [(1 / 3, 1, 4), (1 / 3, 1.5, 4), (1 / 3, 0.5, 4)],
          [E[8], H2[20], E[3]], "balanced(3)", time=300),
    _case(100, 0.85, [(1, 1, None)], H2[20], "pull", stale="keep"),
    _case(500, 0.9, [(0.5, 1, None), (0.5, 2, None)], E[4], "pull", routers=4, time=1500),
    _case(100, 1.3, [(1, 1, 2)], E[8], "pull", stale="keep", routers=1),
    _case(100, 0.7, [(1, 1, 1)], H2[5], "random"),  # Erlang-B, insensitive
    _case(50, 0.9, [(0.5, 1, 3), (0.5, 1, 3)], [E[2], H2[10]], "jsq(2)",
          sampling="with_replacement"),
    _case(1000, 0.8, [(1, 1, None)], H2[10], "jiq", time=1500),
    _case(10, 0.6, [(1, 1, None)], H2[20], "random", time=20000),
]


def _swap_law(s):
    if s.startswith("erlang"):
        return H2[2]
    if s.startswith("hyperexponential"):
        return E[2]
    return s


def _args(c, engine, control, replicas, confidence, seed, tail_k):
    svc = c["service"]
    svc = svc if isinstance(svc, list) else [svc]
    if control == "law" and engine == "occupancy-ph":
        svc = [_swap_law(s) for s in svc]
    args = ["--n", str(c["n"]), "--lambda", f"{c['lam']:.17g}", "--pools", _pools_arg(c["pools"]),
            "--service", ";".join(svc), "--policy", c["policy"], "--engine", engine,
            "--replicas", str(replicas), "--time", str(c.get("time", 2000)),
            "--warmup", str(c.get("time", 2000) / 20), "--tail-k", str(tail_k),
            "--confidence", f"{confidence:.12g}", "--seed", str(seed)]
    if c.get("routers", 1) > 1:
        args += ["--routers", str(c["routers"])]
    if c["policy"] == "pull" and c.get("stale"):
        args += ["--stale", c["stale"]]
    if c.get("sampling"):
        args += ["--sampling", c["sampling"]]
    return args


def _run(lbmc, args, engine):
    out = subprocess.run([lbmc, "sim", "--json", *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"lbmc sim {' '.join(args)}: exit {out.returncode}: {out.stderr}")
    js = json.loads(out.stdout)
    if js.get("engine") != engine:
        raise SystemExit(f"lbmc sim ran engine {js.get('engine')}, not {engine}")
    return js["estimates"]


def _values(est):
    vals = {}
    for name in METRICS:
        if name not in est:
            continue
        for (e, m), (_, se) in zip(_flatten(name, est[name]["mean"]),
                                   _flatten(name, est[name]["std_err"])):
            if m is not None:
                vals[e] = (m, se or 0.0)
    return vals


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lbmc", default=os.environ.get("LBMC", "lbmc"))
    ap.add_argument("--grid", choices=("default", "slow"), default="default")
    ap.add_argument("--control", choices=("none", "law"), default="none")
    ap.add_argument("--replicas", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    cases = DEFAULT_GRID if a.grid == "default" else SLOW_GRID
    tail_k = 3
    t0 = time.time()
    runs = []
    for ci, c in enumerate(cases):
        pair = []
        for k, engine in enumerate(("general", "occupancy-ph")):
            # independent seeds for the two engines: the test is a two-sample one
            args = _args(c, engine, a.control, a.replicas, 0.99, a.seed + 2 * ci + k, tail_k)
            pair.append(_values(_run(a.lbmc, args, engine)))
        runs.append(pair)
    K = sum(len(set(g) & set(o)) for g, o in runs)
    q = float(tdist.ppf(1 - 0.01 / (2 * K), a.replicas - 1))
    print(f"{len(cases)} cases, {K} values compared at the Bonferroni level 1 - 0.01/{K} "
          f"(t quantile {q:.3f}); lbmc sim {time.time() - t0:.1f} s wall")
    bad = 0
    for c, (g, o) in zip(cases, runs):
        label = (f"n {c['n']} lambda {c['lam']} pools {_pools_arg(c['pools'])} {c['service']} "
                 f"{c['policy']} R {c.get('routers', 1)} {c.get('stale', '')} "
                 f"{c.get('sampling', '')}")
        worst = 0.0
        for e in sorted(set(g) & set(o)):
            (mg, sg), (mo, so) = g[e], o[e]
            se = (sg * sg + so * so) ** 0.5
            tol = 1e-12 * max(1.0, abs(mg))
            z = abs(mg - mo) / se if se > 0 else (0.0 if abs(mg - mo) <= tol else float("inf"))
            worst = max(worst, z)
            if z > q:
                bad += 1
                print(f"  OUT: {e}: general {mg:.6g} +/- {sg:.2g}, occupancy-ph {mo:.6g} "
                      f"+/- {so:.2g} ({z:.2f} std_err)")
        print(f"{label}: largest difference {worst:.2f} std_err", flush=True)
    print(f"{bad} of {K} values differ beyond the Bonferroni bound")
    return control_status(bad, a.control)


if __name__ == "__main__":
    sys.exit(main())
