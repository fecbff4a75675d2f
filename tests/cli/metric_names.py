#!/usr/bin/python3
"""One metric naming: every entry name `lbmc sim` prints in its table is
read by `lbmc info --metrics` (which prints it back as the same entry) and by a job file's
run.precision.metric, and bare per-pool names mean all entries.

Usage: metric_names.py LBMC LBMC_JOB_CHECK
"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

LBMC, JOB_CHECK = sys.argv[1], sys.argv[2]
SIM = ["--n", "8", "--lambda", "0.5", "--pools", "0.5:1:inf,0.5:2:3", "--time", "50", "--warmup", "5",
       "--tail-k", "3", "--policy", "jsq(2)"]
JOB = """system:
  n: 8
  lambda: 0.5
  pools:
    - {beta: 0.5, mu: 1}
    - {beta: 0.5, mu: 2, buffer: 3}
policy: jsq(2)
run:
  replicas: 2
  warmup: 5
  time: 50
  tail_k: 3
  precision: {metric: "%s", relative: 0.1, max_replicas: 4}
"""
failures = []


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)


def sim_names():
    """The entry names of lbmc sim's table: first words whose metric is one of --json's."""
    base = set(json.loads(run([LBMC, "sim", *SIM, "--json"]).stdout)["estimates"])
    names = []
    for line in run([LBMC, "sim", *SIM]).stdout.splitlines():
        m = re.match(r"\s+([a-z_]+)((\[[^\]\s]+\])*)\s", line)
        if m and m.group(1) in base:
            names.append(m.group(1) + m.group(2))
    return base, names


with tempfile.TemporaryDirectory() as tmp:
    base, names = sim_names()
    if len(names) < len(base) + 10:
        failures.append(f"lbmc sim's table shows too few entries: {names}")
    job = os.path.join(tmp, "job.yaml")
    with open(job, "w") as fh:
        fh.write(JOB % "p_wait")
    out = os.path.join(tmp, "out.h5")
    r = run([LBMC, "run", job, "-o", out, "--quiet"])
    if r.returncode:
        sys.exit(f"lbmc run failed: {r.stderr}")
    for name in names:
        r = run([LBMC, "info", out, "--format", "csv", "--metrics", name])
        entries = [row["entry"] for row in csv.DictReader(io.StringIO(r.stdout))] if r.returncode == 0 else []
        if r.returncode or entries != [name]:
            failures.append(f"lbmc info --metrics {name}: exit {r.returncode}, entries {entries}: {r.stderr}")
        with open(job, "w") as fh:
            fh.write(JOB % name)
        r = run([JOB_CHECK, job])
        if r.returncode:
            failures.append(f"run.precision.metric: {name}: exit {r.returncode}: {r.stderr}")
    # a bare per-pool name is every entry, in the order lbmc sim prints them
    r = run([LBMC, "info", out, "--format", "csv", "--metrics", "utilization,tail"])
    got = [row["entry"] for row in csv.DictReader(io.StringIO(r.stdout))]
    want = [n for n in names if n.startswith(("utilization[", "tail["))]
    if got != want:
        failures.append(f"--metrics utilization,tail gives {got}, lbmc sim prints {want}")
    # names neither accepts, with the same message
    # (an index is decimal digits: blanks, a sign or an exponent are not the names printed)
    for bad in ("utilization[3]", "tail[1][4]", "p_wait[1]", "sojourn_quantiles[0.95]", "pwait",
                "utilization[ 1]", "utilization[+1]", "utilization[1 ]", "utilization[1e0]",
                "tail[1][ 2]"):
        r = run([LBMC, "info", out, "--metrics", bad])
        with open(job, "w") as fh:
            fh.write(JOB % bad)
        rj = run([JOB_CHECK, job])
        if r.returncode != 2 or rj.returncode != 2 or f"'{bad}'" not in r.stderr or f"'{bad}'" not in rj.stderr:
            failures.append(f"{bad}: info exit {r.returncode} ({r.stderr.strip()}), job exit {rj.returncode}")

    # an empty name ('', ',', a trailing or doubled comma) is refused, not read as "all"
    for bad in ("", ",", "p_wait,", "p_wait,,mean_queue"):
        r = run([LBMC, "info", out, "--metrics", bad])
        if r.returncode != 2 or "empty name" not in r.stderr:
            failures.append(f"--metrics {bad!r}: exit {r.returncode} ({r.stderr.strip()[:200]})")

print(f"{len(names)} entry names of lbmc sim checked against lbmc info and job files")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
