#!/usr/bin/python3
"""The phase-type occupancy engine (occupancy-ph) against closed forms at sizes the exact
solver cannot reach.

  - random routing, unlimited buffers: every server is an M/G/1 queue with arrival rate
    lambda and unit-mean service of squared coefficient of variation c2 (Pollaczek-
    Khinchine): p_wait = utilization = rho = lambda, mean_wait = rho (1 + c2) / (2 (1 - rho)),
    mean_sojourn = mean_wait + 1, mean_queue = rho + lambda mean_wait; Erlang-4 (c2 = 1/4),
    H2 of scv 5 and a Coxian.
  - random routing, buffer 1: each server an M/G/1/1 loss system, p_block = rho / (1 + rho)
    whatever the law (insensitivity).
  - jsq with buffer 1: an arrival joins an idle server if any, so the system is M/G/n/n and
    p_block is Erlang's B(n, lambda n) whatever the law (insensitivity); H2 of scv 20 and
    Erlang-8.

  - large n (10^8 servers, the mean-field start, 0.05 time units, no warm-up): random
    routing against Pollaczek-Khinchine as above (Erlang-4, H2 of scv 5); JSQ(2) with
    Erlang-4 and H2 of scv 5 at lambda 0.9 with the busy fraction tail[1] = lambda (work
    conservation, any law) within 1e-3, and the peak memory within 4 MiB of the same run at
    n = 10^3 (the state is counts per level and phase: its size does not grow with n).

Each value must lie in lbmc's interval at the Bonferroni level 1 - 0.01 / (values checked).
The control (--control law: the Pollaczek-Khinchine cases simulated with exponential
service, the loss cases with a finite buffer of 2) must be seen: exit 0 only when some value
falls outside (at large n: exponential service, and JSQ(2)'s busy fraction held to 0.8).

Usage: ph_closed.py [--lbmc LBMC] [--control none|law] [--seed S]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ph_exact import control_status  # noqa: E402

COX = "coxian:r=[2.5,5/3,1.25],p=[0.6,0.5]"  # scv 0.904


def erlang_b(n, a):
    b = 1.0
    for k in range(1, n + 1):
        b = a * b / (k + a * b)
    return b


def pk(lam, c2):
    w = lam * (1 + c2) / (2 * (1 - lam))
    return {"p_wait": lam, "utilization[1]": lam, "mean_wait": w, "mean_sojourn": w + 1,
            "mean_queue[1]": lam + lam * w}


# (n, lambda, buffer, service, policy, time, exact values)
CASES = [
    (200, 0.7, "inf", "erlang:k=4", "random", 2000, pk(0.7, 0.25)),
    (200, 0.6, "inf", "hyperexponential:scv=5", "random", 4000, pk(0.6, 5)),
    (100, 0.8, "inf", COX, "random", 2000, pk(0.8, 0.904)),
    (200, 1.5, "1", "hyperexponential:scv=20", "random", 500, {"p_block": 1.5 / 2.5}),
    (20, 0.8, "1", "hyperexponential:scv=20", "jsq", 5000, {"p_block": erlang_b(20, 16)}),
    (50, 0.9, "1", "erlang:k=8", "jsq", 2000, {"p_block": erlang_b(50, 45)}),
]


# the large-n cases: n = 10^8 from the mean-field start
BIG = [
    (0.6, "erlang:k=4", "random", pk(0.6, 0.25)),
    (0.6, "hyperexponential:scv=5", "random", pk(0.6, 5)),
]
BIG_JSQ = ["erlang:k=4", "hyperexponential:scv=5"]


def _sim_rss(lbmc, args):
    """lbmc's JSON and its peak resident memory in KiB (os.wait4 on the child)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen([lbmc, "sim", "--json", *args], stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise SystemExit(f"lbmc sim {' '.join(args)}: exit {p.returncode}: {err.read()}")
        return json.loads(out.read()), ru.ru_maxrss


def _value(est, key):
    name, _, idx = key.partition("[")
    e = est[name]
    if not idx:
        return e["mean"], e["lower"], e["upper"]
    j = int(idx.rstrip("]")) - 1
    return e["mean"][j], e["lower"][j], e["upper"][j]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lbmc", default=os.environ.get("LBMC", "lbmc"))
    ap.add_argument("--control", choices=("none", "law"), default="none")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    K = sum(len(c[6]) for c in CASES) + sum(len(c[3]) for c in BIG) + len(BIG_JSQ)
    conf = 1 - 0.01 / K
    bad = 0
    for ci, (n, lam, buf, svc, pol, t, exact) in enumerate(CASES):
        if a.control == "law":
            svc, buf = ("exponential", buf) if buf == "inf" else (svc, "2")
        args = ["sim", "--json", "--n", str(n), "--lambda", str(lam), "--pools", f"1:1:{buf}",
                "--service", svc, "--policy", pol, "--engine", "occupancy-ph", "--replicas",
                "10", "--time", str(t), "--warmup", str(t / 20), "--confidence", f"{conf:.12g}",
                "--seed", str(a.seed + ci)]
        out = subprocess.run([a.lbmc, *args], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"lbmc {' '.join(args)}: exit {out.returncode}: {out.stderr}")
        js = json.loads(out.stdout)
        if js.get("engine") != "occupancy-ph":
            raise SystemExit(f"lbmc sim ran engine {js.get('engine')}, not occupancy-ph")
        for key, x in exact.items():
            m, lo, hi = _value(js["estimates"], key)
            ok = lo <= x <= hi
            bad += not ok
            print(f"n {n} lambda {lam} buffer {buf} {svc} {pol}: {key} exact {x:.6g}, "
                  f"simulated {m:.6g} [{lo:.6g}, {hi:.6g}]{'' if ok else '  OUT'}", flush=True)
    big = ["--lambda", "", "--pools", "1:1:inf", "--time", "0.05", "--warmup", "0", "--init",
           "meanfield", "--tail-k", "2", "--engine", "occupancy-ph", "--confidence", f"{conf:.12g}"]
    for ci, (lam, svc, pol, exact) in enumerate(BIG):
        if a.control == "law":
            svc = "exponential"
        big[1] = str(lam)
        js, _ = _sim_rss(a.lbmc, ["--n", "1e8", "--service", svc, "--policy", pol, "--seed",
                                  str(a.seed + 100 + ci), *big])
        for key, x in exact.items():
            m, lo, hi = _value(js["estimates"], key)
            # the interval, widened by the mean-field start's O(1/sqrt(n)) rounding
            ok = lo - 1e-3 * abs(x) <= x <= hi + 1e-3 * abs(x)
            bad += not ok
            print(f"n 1e8 lambda {lam} {svc} {pol}: {key} exact {x:.6g}, simulated {m:.6g} "
                  f"[{lo:.6g}, {hi:.6g}]{'' if ok else '  OUT'}", flush=True)
    big[1] = "0.9"
    for ci, svc in enumerate(BIG_JSQ):
        rss = []
        for n in ("1e3", "1e8"):
            js, kib = _sim_rss(a.lbmc, ["--n", n, "--service", svc, "--policy", "jsq(2)",
                                        "--seed", str(a.seed + 200 + ci), *big])
            rss.append(kib)
        busy = js["estimates"]["tail"]["mean"][0][0]
        want = 0.9 if a.control == "none" else 0.8  # the control: a wrong busy fraction
        ok = abs(busy - want) <= 1e-3 and rss[1] <= rss[0] + 4096
        bad += not ok
        print(f"n 1e8 lambda 0.9 {svc} jsq(2): busy {busy:.6f} (want {want}), peak memory "
              f"{rss[1]} KiB (n = 1e3: {rss[0]} KiB){'' if ok else '  OUT'}", flush=True)
    print(f"{bad} of {K} values outside their intervals at the level {conf:.6f}")
    return control_status(bad, a.control)


if __name__ == "__main__":
    sys.exit(main())
