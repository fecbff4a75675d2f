#!/usr/bin/python3
"""The refined mean field column of lbmc sim --limit refined and lbmc info --limit refined
(x* + V/n at the point's n; Gast & Van Houdt 2017; lbmc_analysis.limits.refined) and, with
--transient, the ODE and x(t) + V(t)/n beside the transient estimates.

* the column's values are the Python package's (limits.refined at the same n; JSQ(2) on
  two pools pool by pool, so swapped pools would show); PULL has none (null with the reason:
  its fixed point is on the boundary, the expansion does not apply);
* they are right: at n = 20 (JSQ(2), lambda 0.9, buffer 3) the refined tails are within
  the stated O(1/n^2) allowance (0.002 = 0.8 / n^2; measured 0.0008) of the exact chain's
  means (lbmc_analysis.limits.exact), and a long simulation's intervals widened by that
  allowance cover them; controls: the mean field (off by |V|/n = 0.011 on tail[1][2]) and
  the refined value with V of the wrong sign (x* - V/n) are not covered;
* unknown values are null with a reason (lwl(d) has no occupancy form; quantiles);
* --limit=bogus is refused naming the value (exit 2);
* lbmc info --limit refined: text column, CSV/JSON limit_refined (each point at its own
  n), blank with the reason where unknown;
* --transient with --limit refined: the ODE and x(t) + V(t)/n equal the package's
  transient_for_point, time 0 the start, and the Bonferroni band of 400 replicas at n = 20
  covers x(t) + V(t)/n.

Usage: limit_refined.py LBMC  (about 20 s of CPU)
"""
import csv
import io
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

SRC = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SRC / "analysis"))
from lbmc_analysis import limits  # noqa: E402
from lbmc_analysis.limits import exact, ode  # noqa: E402

LBMC = sys.argv[1]
ENV = {"LBMC_ANALYSIS_DIR": str(SRC / "analysis")}
JSQ = ["--n", "20", "--lambda", "0.9", "--pools", "1:1:3", "--policy", "jsq(2)", "--tail-k", "3"]
ALLOW = 0.002  # the O(1/n^2) allowance at n = 20: 0.8 / n^2 (the exact chain: 0.0008 on tail[1][3])
failures = []


def run(args):
    e = dict(os.environ)
    e.update(ENV)
    return subprocess.run(args, capture_output=True, text=True, timeout=900, env=e)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def sim_json(*args):
    r = run([LBMC, "sim", *args, "--json"])
    check(r.returncode == 0, f"lbmc sim {' '.join(args)}: exit 0 ({r.stderr.strip()[-300:]})")
    return json.loads(r.stdout) if r.stdout else {}


# ---- lbmc sim --limit refined: the package's values, and right against the exact chain ----
d = sim_json(*JSQ, "--time", "20000", "--warmup", "200", "--replicas", "10", "--seed", "7", "--limit",
             "refined")
est = d["estimates"]
py = limits.refined({"policy": "jsq(2)", "lambda": 0.9, "n": 20, "K": 3,
                     "pools": [{"beta": 1, "mu": 1, "buffer": 3}]}, 20)["metrics"]
ref = np.array(est["tail"]["limit_refined"][0])
mf = np.array(est["tail"]["limit"][0])
check(np.allclose(ref, py["tail"][0], rtol=0, atol=1e-12)
      and abs(est["p_wait"]["limit_refined"] - py["p_wait"]) < 1e-12
      and abs(est["mean_sojourn"]["limit_refined"] - py["mean_sojourn"]) < 1e-12,
      f"--json: limit_refined is the package's refined(point, 20): {ref}")
check(all("limit_refined" in e and "limit_refined_source" in e for e in est.values())
      and all(np.shape(e["limit_refined"]) == np.shape(e["mean"]) for e in est.values()),
      "--json: limit_refined (the shape of mean) and its source in every estimate")
check(est["sojourn_quantiles"]["limit_refined"] == [None] * 4
      and "expansion" in est["sojourn_quantiles"]["limit_refined_source"],
      "--json: quantiles null with the reason")
check(d["limit"]["refined_n"] == 20, "--json: the root names n")
chain = exact.OccupancyChain(ode.OccupancyModel("jsq(2)", 0.9, buffer=3, n=20)).mean_tail()[0]
err_ref, err_mf = np.max(np.abs(ref - chain)), np.max(np.abs(mf - chain))
check(err_ref < ALLOW and err_mf > 5 * ALLOW,
      f"refined within {ALLOW} of the exact n = 20 means ({err_ref:.2g}); the mean field not ({err_mf:.2g})")
lo, hi = np.array(est["tail"]["lower"][0]), np.array(est["tail"]["upper"][0])


def covered(x):
    return bool(np.all((lo - ALLOW <= x) & (x <= hi + ALLOW)))


x_star = mf
wrong = x_star - (ref - x_star)  # V with the wrong sign
check(covered(ref) and covered(chain), f"the simulation's intervals (+- {ALLOW}) cover the refined and exact "
      f"tails: [{lo}, {hi}]")
check(not covered(mf), f"control: the mean field {mf} is not covered")
check(not covered(wrong), f"control: x* - V/n {wrong} is not covered")

# ---- heterogeneous pools, pool by pool ----
d = sim_json("--n", "20", "--lambda", "0.5", "--pools", "0.5:2:2,0.5:0.5:2", "--policy", "jsq(2)", "--time",
             "200", "--warmup", "20", "--replicas", "2", "--limit", "refined")
est = d["estimates"]
py = limits.refined({"policy": "jsq(2)", "lambda": 0.5, "n": 20, "K": 10,
                     "pools": [{"beta": 0.5, "mu": 2, "buffer": 2}, {"beta": 0.5, "mu": 0.5, "buffer": 2}]},
                    20)["metrics"]
u = est["utilization"]["limit_refined"]
check(np.allclose(u, py["utilization"], atol=1e-12) and abs(u[0] - u[1]) > 0.1,
      f"jsq(2), two pools: utilization per pool is the package's {u} (pools not swapped)")
# pull: its fixed point is on the boundary (the expansion does not apply): null with the reason
d = sim_json("--n", "20", "--lambda", "0.5", "--pools", "0.5:2:2,0.5:0.5:2", "--policy", "pull", "--time",
             "200", "--warmup", "20", "--replicas", "2", "--limit", "refined")
pw = d["estimates"]["p_wait"]
check(pw["limit_refined"] is None and "boundary" in (pw["limit_refined_source"] or "") and pw["limit"] is not None,
      f"pull: limit_refined null, the reason ({pw['limit_refined_source']}), the limit kept")

# ---- unknown: null with the reason; a bad value ----
d = sim_json("--n", "20", "--lambda", "0.9", "--policy", "lwl(2)", "--time", "50", "--warmup", "10",
             "--replicas", "2", "--limit", "refined")
pw = d["estimates"]["p_wait"]
check(pw["limit_refined"] is None and "lwl" in pw["limit_refined_source"] and pw["limit"] is not None,
      f"lwl(2): limit_refined null, the reason ({pw['limit_refined_source']}), the limit kept")
r = run([LBMC, "sim", "--n", "20", "--lambda", "0.9", "--limit=bogus"])
check(r.returncode == 2 and "'bogus'" in r.stderr and "refined" in r.stderr,
      f"--limit=bogus: exit 2 naming the value and what is allowed ({r.stderr.strip()})")
r = run([LBMC, "sim", *JSQ, "--time", "100", "--warmup", "10", "--replicas", "2", "--limit", "refined"])
head = next((line for line in r.stdout.splitlines() if "estimate [interval]" in line), "")
check(r.returncode == 0 and "limit (n -> inf)" in head and "refined x*+V/n" in head
      and head.index("limit (n -> inf)") < head.index("refined x*+V/n"),
      "the table: the refined column after the limit column")

# ---- lbmc info --limit refined ----
JOB = """system:
  n: [10, 40]
  lambda: 0.9
  pools: [{beta: 1, mu: 1, buffer: 3}]
policy: [jsq(2), lwl(2)]
run: {replicas: 2, time: 100, warmup: 10, tail_k: 2}
"""
with tempfile.TemporaryDirectory() as tmp:
    job, out = os.path.join(tmp, "job.yaml"), os.path.join(tmp, "out.h5")
    with open(job, "w") as fh:
        fh.write(JOB)
    r = run([LBMC, "run", job, "-o", out, "--quiet"])
    check(r.returncode == 0, f"lbmc run: exit 0 ({r.stderr.strip()[-200:]})")
    r = run([LBMC, "info", out, "--limit", "refined", "--metrics", "p_wait"])
    check(r.returncode == 0 and "refined x*+V/n" in r.stdout, "lbmc info --limit refined: the text column")
    r = run([LBMC, "info", out, "--limit", "refined", "--metrics", "p_wait", "--format", "csv"])
    rows = {(row["n"], row["policy"]): row for row in csv.DictReader(io.StringIO(r.stdout))}
    ok = len(rows) == 4
    for n in (10, 40):
        want = limits.refined({"policy": "jsq(2)", "lambda": 0.9, "n": n, "pools": [{"beta": 1, "mu": 1, "buffer": 3}]},
                              n)["metrics"]["p_wait"]
        ok = ok and abs(float(rows[str(n), "jsq(2)"]["limit_refined"]) - want) < 1e-12
    check(ok, "CSV: limit_refined of jsq(2) at n = 10 and 40 (each at its own n) is the package's")
    lw = rows.get(("10", "lwl(2)"), {})
    check(lw.get("limit_refined") == "" and "lwl" in lw.get("limit_refined_source", ""),
          f"CSV: lwl(2) blank with the reason ({lw.get('limit_refined_source')})")
    r = run([LBMC, "info", out, "--limit", "refined", "--metrics", "p_wait", "--format", "json"])
    rows = json.loads(r.stdout)["rows"]
    check(all("limit_refined" in row for row in rows)
          and [row["limit_refined"] is None for row in rows] == [False, True, False, True],
          "JSON: limit_refined in each row, null for lwl(2)")

# ---- --transient with --limit refined ----
t = sim_json(*JSQ, "--init", "tail:1,1,0.8", "--transient", "0:4:0.5",
             "--replicas", "400", "--seed", "3", "--limit", "refined")["transient"]
mq = t["estimates"]["mean_queue"]
py = limits.transient_for_point({"policy": "jsq(2)", "lambda": 0.9, "K": 3, "pools": [{"beta": 1, "mu": 1, "buffer": 3}]},
                                np.array(t["time"]), "tail:1,1,0.8", n=20)
check(np.allclose(np.array(mq["limit"])[:, 0], py["mean_queue"][:, 0], atol=1e-12)
      and np.allclose(np.array(mq["limit_refined"])[:, 0], py["mean_queue_refined"][:, 0], atol=1e-12)
      and np.allclose(np.array(t["estimates"]["tail"]["limit_refined"]), py["tail_refined"], atol=1e-12),
      "transient: limit (ODE) and limit_refined (x(t) + V(t)/n) are the package's")
check(abs(mq["limit"][0][0] - 2.8) < 1e-12 and abs(mq["limit_refined"][0][0] - 2.8) < 1e-12
      and abs(mq["mean"][0][0] - 2.8) < 1e-12, "transient: time 0 is the start (mean queue 2.8)")
bl, bu, r_ = (np.array(mq[k])[1:, 0] for k in ("band_lower", "band_upper", "limit_refined"))
check(bool(np.all((bl <= r_) & (r_ <= bu))), "transient: the band of 400 replicas covers x(t) + V(t)/n")
check("Gast" in t.get("limit_source", ""), "transient: the source named")
# no ODE for lwl(2) or non-exponential service: a note, exit 0, no curves (they failed with exit 1)
for extra in (["--policy", "lwl(2)"], ["--service", "erlang:k=2"]):
    t2 = sim_json(*JSQ, *extra, "--transient", "0:2:1", "--replicas", "4", "--seed", "3", "--limit",
                  "refined")["transient"]
    check("no ODE" in t2.get("limit_note", "") and "limit" not in t2["estimates"]["mean_queue"],
          f"transient {' '.join(extra)}: no ODE, said in limit_note ({t2.get('limit_note')})")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
