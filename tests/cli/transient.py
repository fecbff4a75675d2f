#!/usr/bin/python3
"""Transient runs through `lbmc sim --transient T0:T1:DT` (the transient observer, the
driver's ticks ending at the observation times, the point's pointwise intervals and
Bonferroni band). Usage: transient.py LBMC SOURCE_DIR. Exit 0 when every check holds.

1. M/M/1 (n = 1, rho = 0.8) from empty: E[N(t)] at t = 0..10 against the exact transient
   mean (uniformisation of the birth-death chain truncated at 200 customers: the mass
   lost is below 1e-30 by t = 10), on the occupancy and the servers engines: time 0 is 0
   exactly; the band covers the exact mean at every time; over 30 seeds of 200 replicas
   the pointwise intervals cover at least 90% of 330 (time, seed) cells (95% nominal:
   P(< 90%) < 1e-3) and the band covers all 11 times in at least 25 of 30 seeds (nominal
   >= 95%: P(< 25) < 1e-2). Control: the same runs against the exact mean at rho = 0.7
   must fail the band.
2. JSQ(2), lambda 0.9, n = 10^6 from tail:1,1,0.8 against the mean-field ODE from the same
   start (`python3 -m lbmc_analysis limit --transient`, the C side's drift): time-0 tails
   are the start exactly; tail[0][k], k = 1..4, and mean_queue inside the 99% band at every
   time (8 replicas; five values checked, so all hold with probability >= 95%; the O(1/n)
   bias is about 1e-6, far inside the noise of 1e-4). Control: the ODE from tail:1,0.9,0.8 must
   leave the band.
3. Observation draws no random numbers: the same seed observed at 0:10:1 and at 0:10:0.5
   gives identical values (bit for bit) at the common times."""
import json
import math
import os
import subprocess
import sys

LBMC = sys.argv[1] if len(sys.argv) > 1 else "lbmc"
SRC = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("LBMC_SOURCE_DIR", ".")
failures = []


def sim(*args):
    out = subprocess.run([LBMC, "sim", "--json", *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"lbmc sim {' '.join(args)}: exit {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)["transient"]


def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def mm1_mean(lam, mu, times, cap=200):
    """E[N(t)] of M/M/1 from empty by uniformisation of the chain truncated at cap."""
    q = lam + mu
    out = []
    for t in times:
        p = [0.0] * (cap + 1)
        p[0] = 1.0
        acc = [0.0] * (cap + 1)
        w = math.exp(-q * t)  # Poisson weight of 0 jumps
        m = 0
        total = 0.0
        while True:
            for i in range(cap + 1):
                acc[i] += w * p[i]
            total += w
            if total > 1 - 1e-15 and m > q * t:
                break
            m += 1
            w *= q * t / m
            nxt = [0.0] * (cap + 1)
            for i in range(cap + 1):
                up = lam / q if i < cap else 0.0
                down = mu / q if i > 0 else 0.0
                nxt[i] += p[i] * (1 - up - down)
                if i < cap:
                    nxt[i + 1] += p[i] * up
                if i > 0:
                    nxt[i - 1] += p[i] * down
            p = nxt
        out.append(sum(i * a for i, a in enumerate(acc)) / total)
    return out


TIMES = list(range(11))
exact = mm1_mean(0.8, 1.0, TIMES)
wrong = mm1_mean(0.7, 1.0, TIMES)
mm1 = ["--n", "1", "--lambda", "0.8", "--pools", "1:1:inf", "--transient", "0:10:1"]

# 1. M/M/1 from empty, both engines.
for engine in ("occupancy", "servers"):
    tr = sim(*mm1, "--engine", engine, "--replicas", "4000", "--seed", "7")
    c = tr["estimates"]["customers"]
    check(tr["time"] == [float(t) for t in TIMES], f"{engine}: the observation times 0..10")
    check(c["mean"][0] == 0 and c["band_lower"][0] == 0 and c["band_upper"][0] == 0,
          f"{engine}: time 0 is the empty start exactly")
    inside = all(c["band_lower"][i] <= exact[i] <= c["band_upper"][i] for i in TIMES)
    check(inside, f"{engine}: exact E[N(t)] inside the band at t = 0..10 "
          f"(t = 10: {c['mean'][10]:.4f} vs exact {exact[10]:.4f})")
    control = all(c["band_lower"][i] <= wrong[i] <= c["band_upper"][i] for i in TIMES)
    check(not control, f"{engine}: control: the rho = 0.7 exact mean leaves the band")

point_cover = band_cover = 0
for seed in range(1, 31):
    c = sim(*mm1, "--replicas", "200", "--seed", str(seed))["estimates"]["customers"]
    ok = [c["lower"][i] <= exact[i] <= c["upper"][i] for i in TIMES[1:]]
    point_cover += sum(ok)
    band_cover += all(c["band_lower"][i] <= exact[i] <= c["band_upper"][i] for i in TIMES)
check(point_cover >= 0.9 * 300,
      f"pointwise coverage {point_cover}/300 >= 90% (95% nominal)")
check(band_cover >= 25, f"band covers every time in {band_cover}/30 seeds >= 25 (95% nominal)")

# 2. JSQ(2) at n = 10^6 from tail:1,1,0.8 against the ODE.
model = {"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1]}


def ode(init):
    out = subprocess.run(
        ["/usr/bin/python3", "-m", "lbmc_analysis", "limit", "--transient", "0:4:0.5", "--init",
         init, "--json", json.dumps(model)],
        capture_output=True, text=True, cwd=os.path.join(SRC, "analysis"))
    if out.returncode != 0:
        raise SystemExit(f"lbmc_analysis limit: exit {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)


tr = sim("--n", "1000000", "--lambda", "0.9", "--pools", "1:1:inf", "--policy", "jsq(2)",
         "--init", "tail:1,1,0.8", "--transient", "0:4:0.5", "--replicas", "8", "--seed", "3",
         "--confidence", "0.99")
e = tr["estimates"]
start = [e["tail"][f][0][0][:4] + [e["mean_queue"][f][0][0]] for f in ("band_lower", "band_upper")]
check(all(abs(x - y) <= 1e-12 for s in start for x, y in zip(s, [1, 1, 0.8, 0, 2.8])),
      "jsq(2): time 0 is tail:1,1,0.8 in every replica (N F_k integers: the rounding is exact; "
      "to 1e-12, the rounding of the mean of 8 equal values)")


def within(ref):
    bad = []
    for i in range(len(tr["time"])):
        for k in range(4):
            lo, hi = e["tail"]["band_lower"][i][0][k], e["tail"]["band_upper"][i][0][k]
            x = ref["tail"][i][0][k]
            if not (lo - 1e-12 <= x <= hi + 1e-12):
                bad.append((tr["time"][i], f"tail[{k + 1}]", x, lo, hi))
        lo, hi = e["mean_queue"]["band_lower"][i][0], e["mean_queue"]["band_upper"][i][0]
        x = ref["mean_queue"][i][0]
        if not (lo - 1e-12 <= x <= hi + 1e-12):
            bad.append((tr["time"][i], "mean_queue", x, lo, hi))
    return bad


ref = ode("tail:1,1,0.8")
check(ref["time"] == tr["time"], "jsq(2): the ODE's times are the run's")
bad = within(ref)
check(not bad, f"jsq(2) n = 10^6: the ODE inside the band at every time ({bad[:2]})")
check(bool(within(ode("tail:1,0.9,0.8"))), "jsq(2): control: the ODE from tail:1,0.9,0.8 leaves the band")

# 3. Observing draws no random numbers.
args = ["--n", "20", "--lambda", "0.9", "--pools", "1:1:inf", "--policy", "jsq(2)", "--replicas",
        "5", "--seed", "11"]
a = sim(*args, "--transient", "0:10:1")["estimates"]
b = sim(*args, "--transient", "0:10:0.5")["estimates"]
same = all(a[m]["mean"][i] == b[m]["mean"][2 * i] for m in ("customers", "mean_queue", "tail")
           for i in range(11))
check(same, "observing at 0:10:0.5 gives the values of 0:10:1 at the common times, bit for bit")

# 4. Intervals within the values a metric can take: with 2 replicas the t quantiles are wide,
# so unclipped bands of the fractions leave [0, 1] and those of the counts go below 0.
def flat(x):
    return [v for y in x for v in (flat(y) if isinstance(y, list) else [y]) if v is not None]


e = sim("--n", "20", "--lambda", "0.9", "--pools", "1:1:inf", "--policy", "jsq(2)", "--replicas", "2",
        "--seed", "3", "--transient", "0:4:0.5")["estimates"]
outside = [(m, part) for m in e for part in ("lower", "upper", "band_lower", "band_upper")
           if any(v < 0 or (m in ("tail", "p_wait", "p_block") and v > 1) for v in flat(e[m][part]))]
check(not outside, f"2 replicas: every bound within the metric's range (outside: {outside[:3]})")
wide = [v for v in flat(e["tail"]["band_upper"]) if v == 1.0]
check(bool(wide), "2 replicas: control: some tail band reaches 1 (the clip is exercised)")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
