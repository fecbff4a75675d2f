#!/usr/bin/python3
"""Paired comparisons on common random numbers: `lbmc info FILE
--compare A,B` and `lbmc_analysis.compare` on the same file. Usage: paired_compare.py
LBMC SOURCE_DIR. Exit 0 when every check holds.

1. An exact small case: 4 servers, buffer 2, lambda 0.7 per server, random routing
   against PULL with 2 routers (tests/data/cases.json, cases 2 and 20; random routing
   ignores the routers). The paired interval of the difference must hold the exact
   difference of p_wait, p_block and mean_sojourn, within 2 half-widths (about 4 standard
   errors, as a single run's 95% interval misses 5% of the time); the C and Python sides
   must agree to 1e-9.
2. The documented gain (docs/model.md, "Paired comparisons"): JSQ(2) against JSQ(3), 20
   servers, lambda 0.9, 20 replicas; the unpaired (Welch) half-width of the difference
   over the paired one must reach 2 on the general engine (which shares the service
   requirements too); the per-server and occupancy engines' gains are printed.
"""
import json
import os
import subprocess
import sys
import tempfile

LBMC, SOURCE = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "analysis"))
import lbmc_analysis as la  # noqa: E402

failures = []


def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def run(job, path):
    with open(path + ".yaml", "w") as f:
        f.write(job)
    subprocess.run([LBMC, "run", path + ".yaml", "-o", path, "--quiet"], check=True)


def compare_json(path, spec, metrics):
    out = subprocess.run([LBMC, "info", path, "--compare", spec, "--metrics", metrics, "--format",
                          "json"], capture_output=True, text=True, check=True)
    return {row["entry"]: row for row in json.loads(out.stdout)}


EXACT = """
system:
  n: 4
  lambda: 0.7
  routers: 2
  pools:
    - {beta: 1, mu: 1, buffer: 2}
policy: [random, pull]
run:
  replicas: 20
  warmup: 50
  time: 2000
  seed: 4
"""

GAIN = """
system:
  n: 20
  lambda: 0.9
  pools:
    - {beta: 1, mu: 1}
policy: [jsq(2), jsq(3)]
run:
  replicas: 20
  warmup: 100
  time: 1000
  seed: 4
  engine: %s
"""

with tempfile.TemporaryDirectory() as work:
    cases = json.load(open(os.path.join(SOURCE, "tests", "data", "cases.json")))["cases"]
    ra, rb = cases[2]["result"], cases[20]["result"]  # random, pull (2 routers), 4:1:2 at 2.8
    path = os.path.join(work, "exact.h5")
    run(EXACT, path)
    rows = compare_json(path, "random,pull", "p_wait,p_block,mean_sojourn")
    for name, key in (("p_wait", "P_wait"), ("p_block", "P_block"), ("mean_sojourn", "ET")):
        exact = ra[key] - rb[key]
        r = rows[name]
        check(abs(r["difference"] - exact) <= 2 * r["paired_half_width"],
              f"exact case {name}: difference {r['difference']:.5f} +/- {r['paired_half_width']:.2g} "
              f"[{r['difference_lower']:.5f}, {r['difference_upper']:.5f}] vs exact {exact:.5f}")
        df = la.compare(path, name, "random", "pull")
        check(abs(float(df["diff"].iloc[0]) - r["difference"]) <= 1e-9 * abs(exact) and
              abs(float(df["diff_half_width"].iloc[0]) - r["paired_half_width"]) <= 1e-9 and
              abs(float(df["diff_half_width_unpaired"].iloc[0]) - r["unpaired_half_width"]) <= 1e-9,
              f"exact case {name}: lbmc_analysis.compare gives the same difference and half-widths "
              f"({float(df['diff'].iloc[0]):.9f}, {float(df['diff_half_width'].iloc[0]):.3g})")
    for engine in ("general", "servers", "occupancy"):
        path = os.path.join(work, f"gain-{engine}.h5")
        run(GAIN % engine, path)
        rows = compare_json(path, "jsq(2),jsq(3)", "p_wait,mean_sojourn,mean_queue")
        gains = {k: v["gain"] for k, v in rows.items()}
        print(f"gain (unpaired / paired half-width), {engine} engine: "
              + ", ".join(f"{k} {v:.2f}" for k, v in gains.items()))
        if engine == "general":
            check(min(gains.values()) >= 2, f"documented case: gain at least 2 on the general engine {gains}")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
