#!/usr/bin/python3
"""The pair statistics through the commands (docs/model.md, "Pair statistics"):
`lbmc sim --pairs` shows pair_tv, pair_tv_scaled, pair_corr and pair_corr_scaled in its
table and --json (and not without --pairs); a job with run.pairs: true writes them and
/pairs (shapes and a joint law that sums to 1 per pool, symmetric), lbmc info reads them
back, a precision target may name them (and is refused without run.pairs, as is
--metrics on a file without them), a sharded run merges to the same file as a plain one;
a run without pairs has neither; bad values are clear errors (exit status 2).

Usage: pairs_cli.py LBMC
"""
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

LBMC = sys.argv[1]
SIM = ["--n", "12", "--lambda", "0.7", "--pools", "0.5:1:inf,0.5:2:4", "--time", "200", "--warmup", "20",
       "--tail-k", "3", "--policy", "jsq(2)", "--replicas", "4"]
PAIR_METRICS = ["pair_tv", "pair_tv_scaled", "pair_corr", "pair_corr_scaled"]
JOB = """system:
  n: [12, 30]
  lambda: 0.7
  pools:
    - {beta: 0.5, mu: 1}
    - {beta: 0.5, mu: 2, buffer: 4}
policy: [jsq(2), random]
run:
  replicas: 4
  warmup: 20
  time: 200
  tail_k: 3
%s
"""
failures = []


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=900, **kw)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


# ---- lbmc sim ----
plain = json.loads(run([LBMC, "sim", *SIM, "--json"]).stdout)["estimates"]
check(not any(m in plain for m in PAIR_METRICS), "lbmc sim without --pairs: no pair metrics")
r = run([LBMC, "sim", *SIM, "--pairs", "--json"])
est = json.loads(r.stdout)["estimates"]
check(all(m in est for m in PAIR_METRICS), "lbmc sim --pairs --json: the four pair metrics")
check(np.shape(est["pair_tv"]["mean"]) == (2,) and np.shape(est["pair_corr"]["lower"]) == (2, 3),
      "shapes: pair_tv per pool, pair_corr pool x k")
check(np.allclose(np.array(est["pair_tv_scaled"]["mean"], float), 12 * np.array(est["pair_tv"]["mean"], float)),
      "pair_tv_scaled = n x pair_tv")
check(all(est[m]["mean"] == plain[m]["mean"] for m in plain),
      "--pairs changes no other estimate (an observer draws no random numbers)")
pj = json.loads(r.stdout)["pairs"]
check(np.shape(pj["joint"]["mean"]) == (2, 4, 4) and np.shape(pj["across_deviation"]["upper"]) == (2, 2, 4, 4)
      and abs(np.sum(np.array(pj["joint"]["mean"], float)[0]) - 1) < 1e-9,
      "lbmc sim --pairs --json: the tables under \"pairs\" (joint law summing to 1)")
text = run([LBMC, "sim", *SIM, "--pairs"]).stdout
check("pair_corr_scaled[2][3]" in text and "pair_tv[1]" in text, "lbmc sim --pairs: the table names the entries")
r = run([LBMC, "sim", *SIM, "--tail-k", "400", "--pairs"])
check(r.returncode == 2 and "--pairs" in r.stderr and "tail_k" in r.stderr,
      f"--pairs with tail_k 400: a clear error (exit 2): {r.stderr.strip()}")
r = run([LBMC, "sim", *SIM, "--precision", "pair_tv[1]:0.5"])
check(r.returncode == 2 and "pair statistics" in r.stderr, "--precision pair_tv[1] without --pairs: refused")

with tempfile.TemporaryDirectory() as tmp:
    def job(extra, name):
        path = os.path.join(tmp, name + ".yaml")
        with open(path, "w") as fh:
            fh.write(JOB % extra)
        return path

    # ---- a job with run.pairs ----
    out = os.path.join(tmp, "pairs.h5")
    r = run([LBMC, "run", job("  pairs: true", "pairs"), "-o", out, "--quiet"])
    check(r.returncode == 0, f"lbmc run with run.pairs: true ({r.stderr.strip()})")
    with h5py.File(out) as f:
        check(all(f"estimates/{m}" in f for m in PAIR_METRICS), "the pair metrics in /estimates")
        check(all(f"replicas/{m}" in f and f"replicas/{m}_weight" not in f for m in PAIR_METRICS),
              "/replicas/pair_*: values (NaN) without weights")
        check(bool(np.all(np.isnan(f["replicas/pair_tv"][()]))), "per-replica pair values are NaN")
        joint = f["pairs/joint/mean"][()]
        across = f["pairs/across/mean"][()]
        check(joint.shape == (4, 2, 4, 4) and across.shape == (4, 2, 2, 4, 4), "/pairs shapes")
        check(np.allclose(joint.sum(axis=(2, 3)), 1) and np.allclose(joint, joint.transpose(0, 1, 3, 2)),
              "the joint law of each pool sums to 1 and is symmetric")
        check(np.allclose(across[:, 0, 1], across[:, 1, 0].transpose(0, 2, 1)) and
              bool(np.all(np.isnan(across[:, 0, 0]))), "across: [i][j][a][b] = [j][i][b][a], NaN for i = j")
        check(np.allclose(across[:, 0, 1].sum(axis=(1, 2)), 1), "across: sums to 1")
        for part in ("lower", "upper", "std_err"):
            check(f"pairs/joint_deviation/{part}" in f, f"/pairs/joint_deviation/{part}")
    r = run([LBMC, "info", out, "--metrics", "pair_tv,pair_corr_scaled[2][1]", "--format", "csv"])
    check(r.returncode == 0 and r.stdout.count("pair_tv[") == 8 and "pair_corr_scaled[2][1]" in r.stdout,
          "lbmc info --metrics reads the pair metrics back")
    # ---- shards merge to the plain run ----
    parts = []
    for i in (1, 2):
        parts.append(os.path.join(tmp, f"part{i}.h5"))
        run([LBMC, "run", job("  pairs: true", "pairs"), "-o", parts[-1], "--shard", f"{i}/2", "--quiet"])
    merged = os.path.join(tmp, "merged.h5")
    r = run([LBMC, "merge", merged, *parts])
    with h5py.File(out) as a, h5py.File(merged) as b:
        same = all(np.array_equal(a[f"pairs/{t}/{p}"][()], b[f"pairs/{t}/{p}"][()], equal_nan=True)
                   for t in ("joint", "joint_deviation", "across", "across_deviation")
                   for p in ("mean", "lower", "upper", "std_err"))
        same = same and np.array_equal(a["estimates/pair_tv/mean"][()], b["estimates/pair_tv/mean"][()],
                                       equal_nan=True)
    check(r.returncode == 0 and same, "two shards merged: the same pair statistics as the plain run")
    # ---- a precision target on a pair metric ----
    prec = os.path.join(tmp, "prec.h5")
    r = run([LBMC, "run", job("  pairs: true\n  precision: {metric: \"pair_corr[1][1]\", relative: 10, "
                             "max_replicas: 8}", "prec"), "-o", prec, "--quiet"])
    check(r.returncode == 0, f"run.precision.metric pair_corr[1][1] with run.pairs ({r.stderr.strip()})")
    r = run([LBMC, "run", job("  precision: {metric: \"pair_corr[1][1]\", relative: 10, max_replicas: 8}",
                              "noprec"), "-o", os.path.join(tmp, "x.h5"), "--quiet"])
    check(r.returncode == 2 and "run.pairs" in r.stderr, "the same without run.pairs: refused")
    # ---- a job without run.pairs ----
    plainf = os.path.join(tmp, "plain.h5")
    run([LBMC, "run", job("", "plain"), "-o", plainf, "--quiet"])
    with h5py.File(plainf) as f:
        check("pairs" not in f and not any(f"estimates/{m}" in f for m in PAIR_METRICS),
              "a run without run.pairs: no /pairs, no pair metrics")
    r = run([LBMC, "info", plainf, "--metrics", "pair_tv"])
    check(r.returncode == 2 and "pair statistics" in r.stderr, "lbmc info --metrics pair_tv on it: refused")
    r = run([LBMC, "run", job("  pairs: maybe", "bad"), "-o", os.path.join(tmp, "y.h5"), "--quiet"])
    check(r.returncode == 2 and "run.pairs" in r.stderr and "true, false" in r.stderr,
          f"run.pairs: maybe: a clear error ({r.stderr.strip()})")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
