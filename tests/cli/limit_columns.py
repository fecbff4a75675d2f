#!/usr/bin/python3
"""The limit column (n -> inf) of lbmc sim --limit and lbmc info --limit, from the Python
package (lbmc_analysis.limits, docs/limits.md): the column in lbmc sim's table, "limit"
(the shape of "mean", null where unknown) and "limit_source" in each estimate of --json;
the column in lbmc info's text, and limit, limit_source in its CSV and JSON; the values
those of the closed forms (JSQ(d) with exponential service: P(Q >= k) = lambda^((d^k - 1)
/ (d - 1)), so p_wait = lambda^d; random routing: M/M/1); a missing package is a clear
error (exit status 1) after the estimates, which are not lost.

Usage: limit_columns.py LBMC
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

LBMC = sys.argv[1]
SIM = ["--n", "200", "--lambda", "0.9", "--pools", "1:1:inf", "--time", "100", "--warmup", "20",
       "--tail-k", "3", "--policy", "jsq(2)"]
JOB = """system:
  n: 100
  lambda: 0.8
  pools: [{beta: 1, mu: 1}]
policy: [jsq(2), random]
run: {replicas: 3, time: 100, warmup: 20, tail_k: 3}
"""
failures = []


def run(args, env=None, **kw):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(args, capture_output=True, text=True, timeout=900, env=e, **kw)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def close(x, y, tol=1e-9):
    return x is not None and abs(x - y) <= tol


# ---- lbmc sim --limit ----
r = run([LBMC, "sim", *SIM, "--limit"])
check(r.returncode == 0, f"lbmc sim --limit: exit 0 ({r.stderr.strip()[:300]})")
lines = r.stdout.splitlines()
head = next((line for line in lines if "estimate [interval]" in line), "")
check("limit (n -> inf)" in head, "lbmc sim --limit: the column 'limit (n -> inf)'")
legend = lines[lines.index(next((x for x in lines if "what each value is" in x), lines[0])):]
check(any("mean field" in x and x.rstrip().endswith("throughput") and " p_wait," in x for x in legend)
      and any(x.rstrip().endswith(": messages_per_arrival") for x in legend),
      f"lbmc sim --limit: each source listed with the metrics it gives: {legend[:3]}")
row = next((line.split() for line in lines if line.strip().startswith("p_wait ")), [])
check("0.81" in row, f"its p_wait row shows lambda^2 = 0.81: {row}")
r = run([LBMC, "sim", *SIM, "--limit", "--json", "--pairs"])
d = json.loads(r.stdout)
est = d["estimates"]
check(all("limit" in e and "limit_source" in e for e in est.values()), "--json: limit and limit_source in every estimate")
check(all(np.shape(e["limit"]) == np.shape(e["mean"]) for e in est.values()), "--json: limit has the shape of mean")
check(close(est["p_wait"]["limit"], 0.81) and close(est["tail"]["limit"][0][2], 0.9 ** 7),
      "--json: p_wait = lambda^2, tail[1][3] = lambda^7 (JSQ(2), exponential)")
check(est["p_block"]["limit"] == 0 and isinstance(est["p_wait"]["limit_source"], str),
      "--json: p_block 0, the source named")
check(isinstance(est["pair_tv_scaled"]["limit"][0], float) and est["pair_tv_scaled"]["limit"][0] > 0
      and "Gast" in (est["pair_corr_scaled"]["limit_source"] or "") and est["pair_corr"]["limit"][0][0] == 0,
      "--json: n x the pair statistics' limits from the occupancy's covariance, pair_corr's 0")
lwl = json.loads(run([LBMC, "sim", *SIM[:-1], "lwl(2)", "--limit", "--json", "--pairs"]).stdout)["estimates"]
check(lwl["pair_tv_scaled"]["limit"] == [None], "--json: null where no limit is known (lwl(2)'s pair_tv_scaled)")
pull = json.loads(run([LBMC, "sim", *SIM[:-1], "pull", "--limit", "--json", "--pairs"]).stdout)["estimates"]
check(close(pull["pair_corr_scaled"]["limit"][0][0], 0.81) and pull["pair_corr_scaled"]["limit"][0][1:] == [0, 0]
      and close(pull["pair_tv_scaled"]["limit"][0], 1.62),
      "--json: pull's n x pair_corr -> rho^2 at level 1 (M/M/inf's Poisson busy count), 0 above; n x pair_tv 2 rho^2")
check(close(est["mean_workload"]["limit"][0], est["mean_queue"]["limit"][0])
      and "exponential" in (est["mean_workload"]["limit_source"] or ""),
      "--json: mean_workload's limit is mean_queue's (exponential service), its source said")
check(d["limit"]["error"] is None and "lbmc_analysis" in d["limit"]["source"], "--json: the root names the source")

# ---- the pairs' limit under phase-type service (asymptotic independence, docs/limits.md):
# JSQ(2), H2 scv 5, n = 1000 on the occupancy-ph engine: each n x pair_corr[1][k] and n x
# pair_tv interval covers its limit (n c -> the occupancy's covariance around the cavity);
# control: the exponential law's limits (another model) fall outside at k = 1 and 3 ----
H2 = ["--n", "1000", "--lambda", "0.9", "--pools", "1:1:inf", "--policy", "jsq(2)", "--service",
      "hyperexponential:scv=5", "--replicas", "10", "--time", "1500", "--warmup", "200", "--init", "meanfield",
      "--seed", "7", "--pairs", "--tail-k", "6", "--limit", "--json"]
h2 = json.loads(run([LBMC, "sim", *H2]).stdout)["estimates"]
c, tv = h2["pair_corr_scaled"], h2["pair_tv_scaled"]
check(all(lo <= L <= hi for lo, L, hi in zip(c["lower"][0], c["limit"][0], c["upper"][0]))
      and tv["lower"][0] <= tv["limit"][0] <= tv["upper"][0] and "cavity" in (c["limit_source"] or ""),
      f"H2 jsq(2), n = 1000: every n x pair_corr and n x pair_tv interval covers its limit: {c['limit'][0]}")
expo = json.loads(run([LBMC, "sim", *H2[:9], "exponential", *H2[10:]]).stdout)["estimates"]["pair_corr_scaled"]
check(not all(c["lower"][0][k] <= expo["limit"][0][k] <= c["upper"][0][k] for k in (0, 2)),
      f"control: the exponential law's limits {expo['limit'][0][:3]} are not all covered by H2's intervals")
plain = json.loads(run([LBMC, "sim", *SIM, "--json"]).stdout)
check("limit" not in plain and "limit" not in plain["estimates"]["p_wait"], "without --limit: no limit fields")

# ---- the package missing: a clear error, the estimates kept ----
r = run([LBMC, "sim", *SIM, "--limit"], env={"LBMC_ANALYSIS_DIR": "/nonexistent"})
check(r.returncode == 1 and "lbmc_analysis" in r.stderr and "LBMC_ANALYSIS_DIR" in r.stderr,
      f"no package: exit 1 and a message naming it: {r.stderr.strip()[:200]}")
check(any(line.strip().startswith("p_wait ") for line in r.stdout.splitlines()),
      "no package: the estimates are still printed")
r = run([LBMC, "sim", *SIM, "--limit", "--json"], env={"LBMC_ANALYSIS_DIR": "/nonexistent"})
d = json.loads(r.stdout)
check(r.returncode == 1 and d["estimates"]["p_wait"]["limit"] is None and d["estimates"]["p_wait"]["mean"] > 0
      and d["limit"]["error"], "no package, --json: valid JSON, the estimates, limit null, the error said")

# ---- phase-type texts (their lists hold commas): the package reads them ----
for text, want in (("ph:alpha=[0.5,0.5],T=[[-2,1],[0,-1]]", 0.9 * 2 / (2 * 0.1)),
                   ("coxian:scv=4", 0.9 * 5 / (2 * 0.1))):
    r = run([LBMC, "sim", "--n", "100", "--lambda", "0.9", "--policy", "random", "--service", text,
             "--time", "20", "--warmup", "0", "--limit", "--json"])
    d = json.loads(r.stdout) if r.stdout.strip() else {"estimates": {"mean_wait": {}}, "limit": {}}
    check(r.returncode == 0 and close(d["estimates"]["mean_wait"].get("limit"), want),
          f"--service {text} --limit: mean_wait's limit is Pollaczek-Khinchine's {want:g}: "
          f"{d['estimates']['mean_wait'].get('limit')} ({r.stderr.strip()[:200]})")

# ---- the package refuses a point (exit status 2): its message, without install advice ----
with tempfile.TemporaryDirectory() as tmp:
    for code in (2, 1):
        pkg = os.path.join(tmp, str(code), "lbmc_analysis")
        os.makedirs(pkg)
        open(os.path.join(pkg, "__init__.py"), "w").close()
        with open(os.path.join(pkg, "__main__.py"), "w") as fh:
            fh.write(f"import sys\nsys.stderr.write('lbmc_analysis: error: refused here\\n')\nsys.exit({code})\n")
        r = run([LBMC, "sim", *SIM, "--limit"], env={"LBMC_ANALYSIS_DIR": os.path.dirname(pkg)})
        advice = "python3-numpy" in r.stderr
        check(r.returncode == 1 and "refused here" in r.stderr and advice == (code != 2),
              f"package exit status {code}: its message, install advice {'only then' if code != 2 else 'not'}: "
              f"{r.stderr.strip()[:300]}")

# ---- lbmc info --limit ----
with tempfile.TemporaryDirectory() as tmp:
    job, out = os.path.join(tmp, "job.yaml"), os.path.join(tmp, "out.h5")
    with open(job, "w") as fh:
        fh.write(JOB)
    run([LBMC, "run", job, "-o", out, "--quiet"])
    r = run([LBMC, "info", out, "--limit", "--metrics", "p_wait,mean_queue"])
    check(r.returncode == 0 and "limit (n -> inf)" in r.stdout, "lbmc info --limit: the text column")
    r = run([LBMC, "info", out, "--limit", "--metrics", "p_wait,mean_queue", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    lim = {(row["policy"], row["entry"]): row for row in rows}
    check(len(rows) == 4 and "limit" in rows[0] and "limit_source" in rows[0], "lbmc info --limit --format csv: limit, limit_source")
    check(close(float(lim["jsq(2)", "p_wait"]["limit"]), 0.64) and close(float(lim["random", "p_wait"]["limit"]), 0.8)
          and close(float(lim["random", "mean_queue[1]"]["limit"]), 4.0),
          "CSV: jsq(2) p_wait = 0.64, random p_wait = 0.8 and mean_queue = 4 (M/M/1)")
    r = run([LBMC, "info", out, "--limit", "--metrics", "p_wait", "--format", "json"])
    rows = json.loads(r.stdout)["rows"]
    check(all("limit" in row and "limit_source" in row for row in rows) and close(rows[1]["limit"], 0.8),
          "lbmc info --limit --format json: limit and limit_source in each row")
    r = run([LBMC, "info", out, "--limit"], env={"LBMC_ANALYSIS_DIR": "/nonexistent"})
    check(r.returncode == 1 and "p_wait_or_block" in r.stdout and "lbmc_analysis" in r.stderr,
          "lbmc info --limit without the package: the rows, a clear error, exit 1")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
