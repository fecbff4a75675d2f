"""Coverage of short replicas from the mean-field start (docs/model.md, "Relaxation time";
docs/occupancy.md, "The mean-field start"): a hand-run measurement, not a test.

For each cell (law, n, T, R) it runs `lbmc sim` RUNS times (seeds 1..RUNS) with R replicas of
measured time T, no warm-up, `--init meanfield`, JSQ(2) at lambda 0.9 on one pool, and counts
how often the 95% intervals of mean_sojourn, mean_queue and p_wait cover a truth, whatever the
verdict, and how many runs the verdict called ok. The truth:
  - exponential service: the refined mean field x* + V/n at this n (`--limit refined`; Gast and
    Van Houdt 2017, error O(1/n^2));
  - hyperexponential scv 5 (occupancy-ph engine), given with --truth METRIC=VALUE,...: the
    n -> inf limit (`lbmc sim ... --limit`: the cavity queue; mean_sojourn 4.616840315464833,
    mean_queue 4.155156283918338, p_wait 0.81) for n >= 1e5, whose O(1/n) offset (+0.004 +-
    0.007 on mean_queue at n = 1e3, from 100 replicas of 4000) is at most 0.3 of a half-width
    there; or a long run's estimate; or the refined mean field at n, x*_n + D/n per metric,
    which `LBMC_DEBUG_RELAX=1 lbmc sim ... --init meanfield` prints ("mf rule: ...") from
    the C expansion (src/engine/mf_expansion.c; the cells of docs/model.md, "The mean-field
    start's rule").
The table gives the coverage over every run and over the runs the verdict called ok, and
the worst miss of an ok run in half-widths.

Usage:
  /usr/bin/python3 bench/short_replicas.py LBMC OUT.jsonl LAW N T R RUNS [--truth k=v,...]
      LAW: exp or h2; appends one line per run to OUT.jsonl (resumes: seeds already there are
      skipped) and prints the cell's coverage.
  /usr/bin/python3 bench/short_replicas.py --table OUT.jsonl
      the table of every cell in OUT.jsonl (coverage with its binomial 95% half-width).
  /usr/bin/python3 bench/short_replicas.py entries LBMC OUT.jsonl LAW N T R RUNS
  /usr/bin/python3 bench/short_replicas.py entries --table OUT.jsonl
      every entry the mean-field start's rule gates (tails, per-pool metrics, ...), LAW exp,
      exp2 (two pools 0.5:1.5, 0.5:0.75), h2 or h2pool (the same, hyperexponential scv 5 on
      occupancy-ph): the coverage of the ok runs per entry, its lowest and the worst miss.
      Truth: --limit refined (exponential), else the C expansion's x*_n + D / n per entry
      (LBMC_DEBUG_RELAX's "mf entry" lines).
Cost: events about 1.8 n T R per run (about 15 M events per CPU second); a cell of 200 runs
at n = 1e6, T = 2, R = 10 is about 7e9 events (some 8 CPU minutes). The table in
docs/model.md ("Relaxation time") came from cells run this way, e.g.
  for T in 0.05 0.5 2 8; do /usr/bin/python3 bench/short_replicas.py build/src/lbmc \
      exp.jsonl exp 1e3 $T 30 200; done"""
import json
import os
import subprocess
import sys

METRICS = ("mean_sojourn", "mean_queue", "p_wait")
LAWS = {
    "exp": ["--engine", "occupancy"],
    "h2": ["--engine", "occupancy-ph", "--service", "hyperexponential:scv=5"],
}


def scalar(x):
    return x[0] if isinstance(x, list) else x


def one_run(lbmc, law, n, t, r, seed, refined):
    cmd = [lbmc, "sim", "--n", n, "--lambda", "0.9", "--policy", "jsq(2)", "--init",
           "meanfield", "--replicas", str(r), "--time", str(t), "--warmup", "0", "--seed",
           str(seed), "--json", "--progress", "never"] + LAWS[law]
    if refined:
        cmd += ["--limit", "refined"]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    row = {"law": law, "n": n, "T": t, "R": r, "seed": seed, "status": out["status"],
           "evidence": out["verdict"]["evidence"], "cpu": out["cpu_seconds"]}
    for m in METRICS:
        e = out["estimates"][m]
        row[m] = [scalar(e["mean"]), scalar(e["lower"]), scalar(e["upper"])]
        if "limit_refined" in e:
            row[m + "_truth"] = scalar(e["limit_refined"])
        elif "limit" in e:
            row[m + "_limit"] = scalar(e["limit"])
    return row


def cell_key(row):
    return (row["law"], row["n"], float(row["T"]), int(row["R"]))


def load(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    return rows


def summarize(rows):
    """Coverage per metric and the ok count of one cell's rows (each with its truth)."""
    s = {"runs": len(rows), "ok": sum(r["status"] == "ok" for r in rows),
         "cpu": sum(r["cpu"] for r in rows) / max(1, len(rows))}
    for m in METRICS:
        hit = sum(r[m][1] <= r["truth"][m] <= r[m][2] for r in rows)
        s[m] = hit / len(rows)
        s[m + "_hw"] = sum((r[m][2] - r[m][1]) / 2 for r in rows) / len(rows)
        s[m + "_bias"] = sum(r[m][0] - r["truth"][m] for r in rows) / len(rows)
        ok = [r for r in rows if r["status"] == "ok"]
        s[m + "_ok"] = sum(r[m][1] <= r["truth"][m] <= r[m][2] for r in ok) / max(1, len(ok))
    # the worst miss of an ok run, in half-widths, over the metrics
    s["worst"] = max((abs(r[m][0] - r["truth"][m]) / max((r[m][2] - r[m][1]) / 2, 1e-300)
                      for r in rows if r["status"] == "ok" for m in METRICS), default=float("nan"))
    return s


def table(path):
    rows = load(path)
    cells = {}
    for r in rows:
        cells.setdefault(cell_key(r), []).append(r)
    print("| law | n | T | R | runs | ok | " + " | ".join(METRICS) + " | ok runs: " +
          ", ".join(METRICS) + " | worst ok miss (half-widths) | mean_queue: half-width, mean "
          "bias / half-width | CPU s per run |")
    print("|" + "---|" * (10 + len(METRICS)))
    for k in sorted(cells, key=lambda k: (k[0], float(k[1]), k[3], k[2])):
        s = summarize(cells[k])
        cov = " | ".join(f"{100 * s[m]:.1f}" for m in METRICS)
        cov_ok = ", ".join(f"{100 * s[m + '_ok']:.1f}" for m in METRICS)
        print(f"| {k[0]} | {k[1]} | {k[2]:g} | {k[3]} | {s['runs']} | {s['ok']} | {cov} | "
              f"{cov_ok} | {s['worst']:.2f} | "
              f"{s['mean_queue_hw']:.2g}, {s['mean_queue_bias'] / s['mean_queue_hw']:+.3f} | "
              f"{s['cpu']:.2f} |")
    print("(coverage in %; a cell of 200 runs at a true 95% reads within +-3.0, of 100 +-4.3)")


# ---- every gated entry (the rule gates each metric entry with a mean-field functional) ----

ENTRY_LAWS = {
    "exp": ["--engine", "occupancy"],
    "exp2": ["--engine", "occupancy", "--pools", "0.5:1.5:inf,0.5:0.75:inf"],
    "h2": ["--engine", "occupancy-ph", "--service", "hyperexponential:scv=5"],
    "h2pool": ["--engine", "occupancy-ph", "--service", "hyperexponential:scv=5", "--pools",
               "0.5:1.5:inf,0.5:0.75:inf"],
}


def entry_names(name, values):
    """(entry name, value) of a JSON estimate field: scalar, per pool, or pool x level."""
    if not isinstance(values, list):
        return [(name, values)]
    out = []
    for j, v in enumerate(values):
        if isinstance(v, list):
            out += [(f"{name}[{j + 1}][{k + 1}]", w) for k, w in enumerate(v)]
        else:
            out.append((f"{name}[{j + 1}]", v))
    return out


def entry_flags(mean, flags):
    """The flag lists of a JSON estimate, one per entry in entry_names' order (a flag list is
    itself a list: the shape is read from the mean's)."""
    if not isinstance(mean, list):
        return [flags]
    out = []
    for v, f in zip(mean, flags):
        out += list(f) if isinstance(v, list) else [f]
    return out


def entries_run(lbmc, law, n, t, r, seed, truths=None):
    """One run: its status and, for each entry the rule gates (LBMC_DEBUG_RELAX's "mf entry"
    lines), [mean, lower, upper] and the expansion's truth x*_n + D / n; with exponential
    service the truth is the analysis package's refined mean field (--limit refined)."""
    cmd = [lbmc, "sim", "--n", n, "--lambda", "0.9", "--policy", "jsq(2)", "--init",
           "meanfield", "--replicas", str(r), "--time", str(t), "--warmup", "0", "--seed",
           str(seed), "--json", "--progress", "never"] + ENTRY_LAWS[law]
    if law.startswith("exp") and not truths:
        cmd += ["--limit", "refined"]
    env = dict(os.environ, LBMC_DEBUG_RELAX="1")
    p = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    out = json.loads(p.stdout)
    gated = {}
    for line in p.stderr.splitlines():
        if line.startswith("mf entry "):
            w = line.split()
            gated[w[2]] = float(w[3]) + float(w[4]) / float(n)
    row = {"law": law, "n": n, "T": t, "R": r, "seed": seed, "status": out["status"],
           "cpu": out["cpu_seconds"], "entries": {}, "refined": {}}
    for m, e in out["estimates"].items():
        if "limit_refined" in e:
            row["refined"].update(entry_names(m, e["limit_refined"]))
        ref = dict(entry_names(m, e.get("limit_refined"))) if "limit_refined" in e else {}
        for (name, mean), (_, lo), (_, hi), fl in zip(
                entry_names(m, e["mean"]), entry_names(m, e["lower"]),
                entry_names(m, e["upper"]), entry_flags(e["mean"], e["flags"])):
            if name not in gated or lo is None or hi is None or not hi > lo:
                continue
            truth = (truths or ref).get(name) if law.startswith("exp") else gated[name]
            if truth is not None:  # the fifth: the interval widened by the start bias's bound
                row["entries"][name] = [mean, lo, hi, truth, int("start_bias_widened" in fl)]
    return row


def entries_table(path):
    rows = load(path)
    cells = {}
    for r in rows:
        cells.setdefault(cell_key(r), []).append(r)
    print("| law | n | T | R | runs | ok | entries | lowest ok coverage (entry) | worst ok miss "
          "(half-widths, entry) | ok entries below 93% | CPU s per run |")
    print("|" + "---|" * 11)
    for k in sorted(cells, key=lambda k: (k[0], float(k[1]), k[3], k[2])):
        rs = cells[k]
        ok = [r for r in rs if r["status"] == "ok"]
        names = sorted({e for r in ok for e in r["entries"]})
        cov, worst, wname = {}, 0.0, ""
        for e in names:
            v = [r["entries"][e] for r in ok if e in r["entries"]]
            cov[e] = (sum(lo <= t <= hi for _, lo, hi, t, *_ in v) / len(v), len(v))
            for mean, lo, hi, t, *_ in v:
                miss = abs(mean - t) / ((hi - lo) / 2)
                if miss > worst:
                    worst, wname = miss, e
        low = min(cov, key=lambda e: cov[e][0]) if cov else ""
        below = [e for e in cov if cov[e][0] < 0.93]
        cpu = sum(r["cpu"] for r in rs) / len(rs)
        print(f"| {k[0]} | {k[1]} | {k[2]:g} | {k[3]} | {len(rs)} | {len(ok)} | {len(cov)} | "
              + (f"{100 * cov[low][0]:.1f} of {cov[low][1]} ({low})" if low else "-")
              + f" | {worst:.2f} ({wname}) | {len(below)} | {cpu:.2f} |")
    print("(coverage in % over the ok runs, per entry; 100 runs at a true 95% read within "
          "+-4.3, and the minimum over tens of entries lower still)")


def entries_main(argv):
    if argv[0] == "--table":
        entries_table(argv[1])
        return
    lbmc, out, law, n, t, r, runs = argv[:7]
    prev = [row for row in load(out) if cell_key(row) == (law, n, float(t), int(r))]
    done = {row["seed"] for row in prev}
    # the refined mean field (exponential): computed by the cell's first run, kept in its row
    truths = next((row["refined"] for row in prev if row.get("refined")), None)
    with open(out, "a") as f:
        for seed in range(1, int(runs) + 1):
            if seed not in done:
                row = entries_run(lbmc, law, n, t, int(r), seed, truths)
                if truths:
                    row["refined"] = {}
                truths = truths or row["refined"]
                f.write(json.dumps(row) + "\n")
                f.flush()
    entries_table(out)


def main(argv):
    if argv[0] == "entries":
        entries_main(argv[1:])
        return
    if argv[0] == "--table":
        table(argv[1])
        return
    lbmc, out, law, n, t, r, runs = argv[:7]
    truth = {}
    if len(argv) > 8 and argv[7] == "--truth":
        truth = {k: float(v) for k, v in (kv.split("=") for kv in argv[8].split(","))}
    prev = [row for row in load(out) if cell_key(row) == (law, n, float(t), int(r))]
    done = {row["seed"] for row in prev}
    if not truth and prev:
        truth = prev[0]["truth"]
    with open(out, "a") as f:
        for seed in range(1, int(runs) + 1):
            if seed in done:
                continue
            row = one_run(lbmc, law, n, t, int(r), seed, refined=(law == "exp" and not truth))
            if not truth:
                if law != "exp":
                    sys.exit("h2 needs --truth (the limit: lbmc sim ... --limit)")
                truth = {m: row[m + "_truth"] for m in METRICS}
            for m in METRICS:
                row.pop(m + "_truth", None)
                row.pop(m + "_limit", None)
            row["truth"] = dict(truth)
            f.write(json.dumps(row) + "\n")
            f.flush()
    table(out)


if __name__ == "__main__":
    main(sys.argv[1:])
