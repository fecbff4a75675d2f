"""How far lbmc run's ETA is from the time the run actually took, for a job whose small
units come last (the schedule hands out the costliest first): a few large points, then
many tiny ones, whose wall time is mostly a fixed cost per unit (set-up, reduction,
messages) that a pace proportional to n x time leaves out (src/run/pace.h).

Runs LBMC run on the job under mpirun with a progress line every second, and prints the
ETA against the true remaining time at 25, 50 and 75% of the run's wall time, and the
mean relative error of the lines in the second half (the tiny units).

Usage: /usr/bin/python3 bench/eta_check.py LBMC [ranks] [tiny points] (2, 1500: about
16 s of wall time on 2 cores)."""
import os
import re
import subprocess
import sys
import tempfile


def job(tiny, big=3):
    n = [4000] * big + [10] * tiny
    lam = [round(0.9 - 0.00005 * i, 6) for i in range(big + tiny)]
    time = [1500] * big + [20] * tiny
    warm = [100] * big + [5] * tiny
    lst = lambda v: "[" + ", ".join(str(x) for x in v) + "]"
    return f"""system:
  n: {lst(n)}
  lambda: {lst(lam)}
  pools:
    - {{beta: 1, mu: 1, buffer: inf}}
policy: jsq(2)
run:
  replicas: 4
  warmup: {lst(warm)}
  time: {lst(time)}
  batches: 10
  seed: 1
  tail_k: 3
together:
  - [n, lambda, run.warmup, run.time]
"""


def main():
    lbmc = sys.argv[1]
    ranks = sys.argv[2] if len(sys.argv) > 2 else "2"
    tiny = int(sys.argv[3]) if len(sys.argv) > 3 else 1500
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "eta.yaml")
        with open(path, "w") as f:
            f.write(job(tiny))
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        err = subprocess.run(["mpirun", "--oversubscribe", "-np", ranks, lbmc, "run", path, "-o",
                              os.path.join(d, "eta.h5"), "--progress", "1"],
                             env=env, capture_output=True, text=True, check=True).stderr
    lines = []
    for m in re.finditer(r"elapsed ([\d.]+) s, ETA (\S+) s", err):
        lines.append((float(m.group(1)), None if m.group(2) == "?" else float(m.group(2))))
    total = lines[-1][0]
    out = []
    for q in (0.25, 0.5, 0.75):
        el, eta = min(lines, key=lambda p: abs(p[0] - q * total))
        true = total - el
        # a run shorter than a few progress lines ends on the chosen one: no error to say
        e = "?" if eta is None else "-" if true <= 0 else f"{100 * (eta / true - 1):+.0f}%"
        out.append(f"{q:.0%}: ETA {eta} s, true {true:.1f} s ({e})")
    tail = [(el, eta) for el, eta in lines[:-1] if total / 2 <= el < total]
    errs = [abs((eta or 0) / (total - el) - 1) for el, eta in tail]  # "?" counts as 0 s
    print(f"wall {total:.1f} s; " + "; ".join(out) +
          f"; second half: mean |error| {100 * sum(errs) / max(len(errs), 1):.0f}% "
          f"over {len(errs)} lines")


if __name__ == "__main__":
    main()
