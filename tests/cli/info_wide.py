"""lbmc info --wide METRIC: every cell of the wide table, in CSV, JSON and text, is the
point's entry in the tidy rows (mean, lower, upper, status) at its row and column values;
the defaults are rows n and columns policy; --rows/--columns swap them; not_stationary
cells are marked (n) in text and the legend says so; an axis with several values among the
kept points, an unknown axis, rows and columns on one axis, a metric of several entries
and --rows without --wide are errors (exit 2) naming what to do. A control: the cells
checked against the tidy rows of another lambda must differ.

Usage: info_wide.py LBMC"""
import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile

LBMC = sys.argv[1]
JOB = """system:
  n: [10, 100, 1000]
  lambda: [0.5, 0.9]
  pools: [{beta: 1, mu: 1}]
policy: [random, jsq(2), pull]
run: {replicas: 3, warmup: 20, time: 200}
"""
fails = 0


def check(what, ok):
    global fails
    print(("ok: " if ok else "FAIL: ") + what)
    fails += not ok


def lbmc(*args, status=0):
    p = subprocess.run([LBMC, *args], capture_output=True, text=True)
    if p.returncode != status:
        print("  lbmc %s -> %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p


def num(x):
    return float("nan") if x is None or x == "" else float(x)


def same(a, b):
    """Two cells: numbers equal (NaN with NaN), or texts equal."""
    try:
        a, b = num(a), num(b)
    except ValueError:
        return str(a) == str(b)
    return (math.isnan(a) and math.isnan(b)) or a == b


def tidy(path, metric, lam):
    """(n, policy) -> (mean, lower, upper, status) from lbmc info's tidy CSV."""
    rows = csv.DictReader(io.StringIO(lbmc("info", path, "--format", "csv", "--metrics", metric,
                                           "--where", "lambda=%s" % lam).stdout))
    return {(r["n"], r["policy"]): (r["mean"], r["lower"], r["upper"], r["status"]) for r in rows}


def agrees(cells, truth, swap=False):
    """cells: {(row, column): (mean, lower, upper, status)} of the wide view."""
    if len(cells) != len(truth):
        return False
    for (r, c), got in cells.items():
        want = truth[(c, r) if swap else (r, c)]
        if want[3] == "unstable":
            if got[3] != "unstable":
                return False
        elif not all(same(x, y) for x, y in zip(got, want)):
            return False
    return True


def wide_csv(text, key):
    out = {}
    for r in csv.DictReader(io.StringIO(text)):
        for name in r:
            if name.endswith(".mean"):
                col = name[:-5]
                out[(r[key], col)] = tuple(r[col + "." + p] or "nan" for p in
                                           ("mean", "lower", "upper", "status"))
    return out


with tempfile.TemporaryDirectory() as tmp:
    job, h5 = os.path.join(tmp, "job.yaml"), os.path.join(tmp, "w.h5")
    open(job, "w").write(JOB)
    check("the job runs", lbmc("run", job, "-o", h5, "--quiet").returncode == 0)
    truth = tidy(h5, "p_wait", "0.9")
    other = tidy(h5, "p_wait", "0.5")

    p = lbmc("info", h5, "--wide", "p_wait", "--where", "lambda=0.9", "--format", "csv")
    cells = wide_csv(p.stdout, "n")
    check("CSV: rows n, columns policy (defaults)",
          p.stdout.splitlines()[0].startswith("n,random.mean,random.lower,random.upper,"
                                              "random.status,jsq(2).mean"))
    check("CSV: every cell is the point's tidy row", agrees(cells, truth))
    check("control: the cells are not those of lambda = 0.5", not agrees(cells, other))

    p = lbmc("info", h5, "--wide", "p_wait", "--where", "lambda=0.9", "--format", "json")
    rows = json.loads(p.stdout)["rows"]
    cells = {(str(r["n"]), k[:-5]): tuple(r[k[:-5] + "." + q] for q in
                                          ("mean", "lower", "upper", "status"))
             for r in rows for k in r if k.endswith(".mean")}
    check("JSON: every cell is the point's tidy row", agrees(cells, truth))

    p = lbmc("info", h5, "--wide", "mean_sojourn", "--where", "lambda=0.9", "--rows", "policy",
             "--columns", "n", "--format", "csv")
    check("--rows policy --columns n: transposed, every cell the tidy row's",
          agrees(wide_csv(p.stdout, "policy"), tidy(h5, "mean_sojourn", "0.9"), swap=True))

    p = lbmc("info", h5, "--wide", "p_wait", "--where", "lambda=0.9")
    text = p.stdout
    marked = sum(v[3] == "not_stationary" for v in truth.values())
    check("text: a cell per point, (n) on each not_stationary one (%d)" % marked,
          sum(l.count(" (n)") for l in text.splitlines() if l.strip()[:1].isdigit()) == marked
          and "(n): not_stationary" in text.replace("\n", " ")
          if marked else " (n)" not in text)
    line = next(l for l in text.splitlines() if l.startswith("1000 "))
    m, lo, hi, st = truth[("1000", "random")]
    check("text: n = 1000, random: estimate [lower, upper]",
          "%.6g [%.6g, %.6g]" % (float(m), float(lo), float(hi)) in line)

    for args, pattern in [
            (["--wide", "p_wait"], "the axis lambda has several values among the points"),
            (["--wide", "p_wait", "--where", "lambda=0.9", "--rows", "mu"],
             "--rows: 'mu' is not a grid axis of"),
            (["--wide", "p_wait", "--where", "lambda=0.9", "--rows", "n", "--columns", "n"],
             "the same axis"),
            (["--wide", "utilization", "--where", "lambda=0.9"], "utilization[j]"),
            (["--rows", "n"], "--rows: applies only with --wide METRIC"),
            (["--wide", "p_wait", "--metrics", "p_wait"], "not allowed together with --metrics")]:
        p = lbmc("info", h5, *args, status=2)
        check("error: %s" % " ".join(args), p.returncode == 2 and pattern in p.stderr)

print("all passed" if not fails else "%d failure(s)" % fails)
sys.exit(fails > 0)
