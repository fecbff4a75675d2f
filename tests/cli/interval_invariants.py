#!/usr/bin/python3
"""Possible numbers only: for every engine, replica count and metric entry that `lbmc sim
--json` prints, and every row of `lbmc info --format json` of a results file,
  std_err >= 0, half_width >= 0, lower <= mean <= upper (each where it exists),
  0 <= lower and upper <= 1 for probabilities, upper_bound >= 0.
The cases include degenerate ones that used to break these (every customer's sojourn one
Exp(1) service, so that the units agree to many digits and the Korn-Graubard band for a
quantile is narrower than the precision of GSL's incomplete beta), one replica (batch
means), 2 replicas (1 degree of freedom) and each engine.
Usage: interval_invariants.py LBMC WORKDIR. Exit 0 when every check holds. Fixed seeds.
"""
import json
import math
import os
import subprocess
import sys

LBMC, WORK = sys.argv[1], sys.argv[2]
PROBABILITIES = {"p_wait", "p_block", "p_wait_or_block", "utilization", "admitted_share", "tail"}
failures = []
checked = 0

CASES = [
    # the reproduction: lower > upper for sojourn_quantiles[0.9] with status ok
    ["--n", "100", "--lambda", "50", "--pools", "1:1:1", "--policy", "jsq(2)", "--replicas", "2",
     "--time", "100", "--warmup", "10"],
    ["--n", "100", "--lambda", "50", "--pools", "1:1:1", "--policy", "jsq(2)", "--replicas", "1",
     "--time", "100", "--warmup", "10"],
    ["--n", "1000", "--lambda", "0.9", "--pools", "1:1:inf", "--policy", "random", "--replicas",
     "3", "--time", "50", "--warmup", "10"],
    ["--n", "20", "--lambda", "0.9", "--pools", "0.5:2:inf,0.5:0.5:3", "--policy", "pull",
     "--replicas", "4", "--time", "200", "--warmup", "20", "--engine", "occupancy"],
    ["--n", "20", "--lambda", "0.8", "--pools", "0.5:2:inf,0.5:0.5:3", "--policy", "jsq(2)",
     "--replicas", "3", "--time", "200", "--warmup", "20", "--engine", "servers"],
    ["--n", "10", "--lambda", "30", "--pools", "1:1:1", "--policy", "jsq(2)", "--replicas", "2",
     "--time", "50", "--warmup", "5", "--engine", "servers"],
    ["--n", "20", "--lambda", "0.8", "--pools", "1:1:inf", "--policy", "jsq(2)", "--replicas",
     "1", "--time", "500", "--warmup", "20", "--engine", "servers"],
    ["--n", "20", "--lambda", "0.8", "--pools", "1:1:inf", "--policy", "lwl(2)", "--service",
     "hyperexponential:scv=4", "--replicas", "3", "--time", "200", "--warmup", "20",
     "--engine", "general"],
    ["--n", "10", "--lambda", "20", "--pools", "1:1:1", "--policy", "random", "--service",
     "deterministic", "--replicas", "2", "--time", "50", "--warmup", "5", "--engine", "general"],
    ["--n", "10", "--lambda", "0.7", "--pools", "1:1:inf", "--policy", "jsq(2)", "--service",
     "erlang:k=3", "--replicas", "1", "--time", "500", "--warmup", "20", "--engine", "general"],
]


def entries(name, e):
    """(label, mean, half_width, std_err, lower, upper, upper_bound) of every entry."""
    arrays = [e.get(k) for k in ("mean", "half_width", "std_err", "lower", "upper", "upper_bound")]

    def walk(label, parts):
        if isinstance(parts[0], list):
            for i in range(len(parts[0])):
                yield from walk(f"{label}[{i}]", [p[i] if isinstance(p, list) else None
                                                 for p in parts])
        else:
            yield (label, *parts)

    yield from walk(name, arrays)


def check_entry(where, metric, label, mean, hw, se, lo, hi, ub):
    global checked
    checked += 1
    bad = []
    if se is not None and not se >= 0:
        bad.append(f"std_err {se!r} < 0")
    if hw is not None and not hw >= 0:
        bad.append(f"half_width {hw!r} < 0")
    if lo is not None and hi is not None and not lo <= hi:
        bad.append(f"lower {lo!r} > upper {hi!r}")
    if mean is not None and lo is not None and not lo <= mean:
        bad.append(f"lower {lo!r} > estimate {mean!r}")
    if mean is not None and hi is not None and not mean <= hi:
        bad.append(f"estimate {mean!r} > upper {hi!r}")
    if ub is not None and not ub >= 0:
        bad.append(f"upper_bound {ub!r} < 0")
    if metric in PROBABILITIES:
        if lo is not None and not lo >= 0:
            bad.append(f"lower {lo!r} < 0 for a probability")
        if hi is not None and not hi <= 1:
            bad.append(f"upper {hi!r} > 1 for a probability")
    for b in bad:
        failures.append(f"{where}: {label}: {b}")


for i, args in enumerate(CASES):
    out = subprocess.run([LBMC, "sim", *args, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        failures.append(f"case {i}: exit {out.returncode}: {out.stderr.strip()}")
        continue
    r = json.loads(out.stdout)
    where = f"case {i} ({r['engine']}, {r['replicas']} replicas, {r['status']})"
    before = len(failures)
    for name, e in r["estimates"].items():
        for label, *v in entries(name, e):
            check_entry(where, name, label, *v)
    print(("ok:   " if len(failures) == before else "FAIL: ") + where + ": " + " ".join(args))

# the results file and lbmc info: the same numbers through results_write/read
job = os.path.join(WORK, "invariants.yaml")
res = os.path.join(WORK, "invariants.h5")
for f in (res, res + ".ckpt"):
    if os.path.exists(f):
        os.remove(f)
with open(job, "w") as f:
    f.write("""system:
  n: [10, 100]
  lambda: 50
  pools:
    - {beta: 1, mu: 1, buffer: 1}
policy: [jsq(2), random]
run:
  replicas: 2
  warmup: 10
  time: 100
  seed: 1
""")
out = subprocess.run([LBMC, "run", job, "-o", res, "--quiet"], capture_output=True, text=True)
if out.returncode != 0:
    failures.append(f"lbmc run: exit {out.returncode}: {out.stderr.strip()}")
else:
    info = subprocess.run([LBMC, "info", res, "--format", "json"], capture_output=True, text=True)
    rows = json.loads(info.stdout)["rows"] if info.returncode == 0 else []
    if not rows:
        failures.append(f"lbmc info: exit {info.returncode}: {info.stderr.strip()}")
    before = len(failures)
    for row in rows:
        check_entry(f"results point {row['point']}", row["metric"], row["entry"], row["mean"],
                    row["half_width"], row["std_err"], row["lower"], row["upper"],
                    row["upper_bound"])
    print(("ok:   " if len(failures) == before else "FAIL: ") + f"lbmc info rows ({len(rows)})")

for f in failures:
    print("FAIL: " + f)
print(f"{checked} entries checked, {len(failures)} failures")
sys.exit(1 if failures or checked == 0 else 0)
