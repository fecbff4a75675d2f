#!/usr/bin/python3
"""The cavity limit against lbmc's own simulations at large n (label slow, about ten
minutes of CPU): JSQ(2) at lambda 0.9 with Erlang-4 and hyperexponential (H2, scv 4)
service at n = 10^5 and 10^6, through `lbmc sim --limit --json` itself: p_wait, the mean
sojourn, the mean queue and tail[1][k], k = 1..4, each within its interval at a level
Bonferroni-corrected over all of them (family error 0.01). The limit's own error is
O(1/n), below 10^-4 here, against intervals of about 10^-3.

Usage: cavity_agreement.py LBMC
"""
import json
import subprocess
import sys

LBMC = sys.argv[1]
CASES = [(n, svc) for svc in ("erlang:k=4", "hyperexponential:scv=4") for n in (100000, 1000000)]
RUN = {100000: ["--time", "200", "--warmup", "100", "--replicas", "4"],
       1000000: ["--time", "30", "--warmup", "70", "--replicas", "3"]}
ENTRIES = [("p_wait", None), ("mean_sojourn", None), ("mean_queue", (0,))] + [("tail", (0, k)) for k in range(4)]
ALPHA = 0.01
level = 1 - ALPHA / (len(CASES) * len(ENTRIES))
bad = 0
for n, svc in CASES:
    args = [LBMC, "sim", "--n", str(n), "--lambda", "0.9", "--pools", "1:1:inf", "--policy", "jsq(2)",
            "--service", svc, "--tail-k", "4", "--confidence", f"{level:.10f}", "--limit", "--json", *RUN[n]]
    r = subprocess.run(args, capture_output=True, text=True, timeout=7200)
    if r.returncode != 0:
        print(f"FAIL n={n} {svc}: lbmc sim exited {r.returncode}: {r.stderr.strip()}")
        bad += 1
        continue
    est = json.loads(r.stdout)["estimates"]
    for name, idx in ENTRIES:
        e = est[name]
        get = (lambda v: v) if idx is None else (lambda v: v[idx[0]] if len(idx) == 1 else v[idx[0]][idx[1]])
        mean, lo, hi, lim = get(e["mean"]), get(e["lower"]), get(e["upper"]), get(e["limit"])
        ok = lim is not None and lo <= lim <= hi
        bad += not ok
        label = name + ("" if idx is None else "".join(f"[{i + 1}]" for i in idx))
        print(f"{'ok  ' if ok else 'FAIL'} n={n:<8d} {svc:<24s} {label:<16s} est {mean:.6f} [{lo:.6f}, {hi:.6f}]"
              f"  limit {lim}")
print(f"{bad} failure(s) at level 1 - {ALPHA}/{len(CASES) * len(ENTRIES)} each")
sys.exit(1 if bad else 0)
