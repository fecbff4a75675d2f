#!/usr/bin/python3
"""Known failures of naive estimators (faults 1..7 below: per-replica means, heavy tails,
too few replicas, batch means, ...), the cases the verdicts must judge (too short,
warm-up from empty, a critically loaded PULL) and the edges (heavy traffic, heavy-tailed
service, few replicas) through `lbmc sim --json`, each with its right value or an
explicit verdict.
Usage: estimator_cases.py LBMC [CASE...]. Exit 0 when every check holds.

Fixed seeds (deterministic). Tolerances come from the intervals: an exact value must lie
in the reported interval (or below the one-sided bound of an event never observed), or
the point's verdict must say that the data cannot tell (not_stationary with a reason).
A single run's 95% interval misses 5% of the time by design, so a value may lie up to 4
of the run's standard errors away (two-sided p about 6e-5 each; the interval's own ends
when it has no standard error), not a hand-picked tolerance.
"""
import json
import math
import os
import subprocess
import sys

LBMC = sys.argv[1] if len(sys.argv) > 1 else "lbmc"
ONLY = set(sys.argv[2:])
failures = []


def sim(*args, json_out=True, stderr=None):
    """lbmc sim's JSON (or text); with stderr (a list), LBMC_DEBUG_RELAX set and its lines
    appended to it."""
    cmd = [LBMC, "sim", *args] + (["--json"] if json_out else [])
    env = dict(os.environ, LBMC_DEBUG_RELAX="1") if stderr is not None else None
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"lbmc sim {' '.join(args)}: exit {out.returncode}: {out.stderr}")
    if stderr is not None:
        stderr += out.stderr.splitlines()
    return json.loads(out.stdout) if json_out else out.stdout


def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def entry(r, name, index=None):
    e = r["estimates"][name]
    if index is None:
        return {k: e[k] for k in e}
    return {k: e[k][index] for k in e}


def level_index(r, p):
    return min(range(len(r["quantile_levels"])), key=lambda i: abs(r["quantile_levels"][i] - p))


def holds(e, exact, sigmas=4):
    """The exact value is in the interval (or, with sigmas, within that many standard
    errors), or below the bound of an event never observed."""
    if e["upper_bound"] is not None:
        return e["mean"] == 0 and exact <= e["upper_bound"]
    if sigmas is not None and e["std_err"] is not None:
        return abs(e["mean"] - exact) <= sigmas * e["std_err"]
    return e["lower"] is not None and e["upper"] is not None and e["lower"] <= exact <= e["upper"]


def right_or_run_longer(r, e, exact, what, sigmas=4):
    """The value holds, or the verdict says run longer (with a reason): never a wrong ok."""
    ok = holds(e, exact, sigmas)
    check(ok or (r["status"] == "not_stationary" and r.get("reason")),
          f"{what}: {e['mean']:.6g} [{e['lower']}, {e['upper']}] vs exact {exact:.6g}, "
          f"status {r['status']}")


def case(name):
    return not ONLY or name in ONLY


MM1 = ["--n", "1", "--pools", "1:1:inf"]

# ---- estimators: the faults of naive estimators -----------------------------------

if case("pooled"):  # fault 1: the mean of per-replica ratios was biased (0.4589, 1.867)
    r = sim(*MM1, "--lambda", "0.5", "--time", "20", "--warmup", "200", "--replicas", "20000",
            "--seed", "3")
    check(holds(entry(r, "p_wait"), 0.5), f"fault 1: p_wait {entry(r, 'p_wait')['mean']:.5f} "
          f"[{entry(r, 'p_wait')['lower']:.5f}, {entry(r, 'p_wait')['upper']:.5f}] holds 0.5")
    e = entry(r, "mean_sojourn")
    check(holds(e, 2.0), f"fault 1: mean_sojourn {e['mean']:.5f} [{e['lower']:.5f}, "
          f"{e['upper']:.5f}] holds 2")

if case("quantile"):  # fault 2: q0.99 averaged over replicas was 21.0 (exact 46.05)
    r = sim(*MM1, "--lambda", "0.9", "--replicas", "2000", "--warmup", "5000", "--time", "200",
            "--seed", "2")
    e = entry(r, "sojourn_quantiles", level_index(r, 0.99))
    right_or_run_longer(r, e, 10 * math.log(100), "fault 2: sojourn q0.99")

if case("units"):  # fault 3: the same model in three time units; no clamping
    q = {}
    for unit, lam, mu, t, w in (("1e-9", "5e-10", "1e-9", "1e13", "1e12"), ("1", "0.5", "1", "1e4", "1e3"),
                                ("1e9", "5e8", "1e9", "1e-5", "1e-6")):
        r = sim("--n", "1", "--lambda", lam, "--pools", f"1:{mu}:inf", "--time", t, "--warmup", w,
                "--replicas", "2", "--seed", "5")
        q[unit] = (r, [x * float(mu) if x is not None else None
                       for x in r["estimates"]["sojourn_quantiles"]["mean"]])
    base = q["1"][1]
    for unit in ("1e-9", "1e9"):
        same = all(a is not None and abs(a - b) <= 1e-9 * abs(b) for a, b in zip(q[unit][1], base))
        check(same, f"fault 3: quantiles in time unit {unit} equal those in unit 1 "
              f"({q[unit][1]} vs {base})")
    r = q["1e-9"][0]
    for p in (0.9, 0.99, 0.999):  # exact: Exp(mu - lambda) = Exp(5e-10)
        i = level_index(r, p)
        e = entry(r, "sojourn_quantiles", i)
        exact = -math.log(1 - p) / 5e-10
        if e["lower"] is not None and e["upper"] is not None:
            ok = e["lower"] <= exact <= e["upper"]
        else:  # withheld (2 replicas for a tail level): said so, and the estimate not clamped
            ok = "unreliable" in e["flags"] and e["mean"] is not None and e["mean"] < 1e12
        check(ok, f"fault 3: q{p} in units 1e-9: {e['mean']:.4g} [{e['lower']}, {e['upper']}] "
              f"flags {e['flags']} vs exact {exact:.4g}")

if case("point-mass"):  # fault 3: every sojourn equal: the quantiles are that value
    r = sim("--n", "1", "--lambda", "0.01", "--pools", "1:1:1", "--service", "deterministic",
            "--time", "1e5", "--warmup", "100", "--replicas", "4", "--seed", "6")
    qs = r["estimates"]["sojourn_quantiles"]["mean"]
    check(all(x == 1.0 for x in qs), f"point mass: sojourn quantiles {qs} all exactly 1")

if case("none-observed"):  # fault 4: never "0 +/- 0"
    r = sim("--n", "10000", "--lambda", "1", "--pools", "0.5:2:inf,0.5:1/3:inf", "--policy",
            "pull", "--time", "50", "--warmup", "20", "--replicas", "2", "--seed", "7")
    e = entry(r, "p_wait")
    check(e["mean"] > 0 or ("none_observed" in e["flags"] and e["upper_bound"] > 0),
          f"fault 4: PULL n = 10^4 p_wait {e['mean']} flags {e['flags']} bound {e['upper_bound']}")
    # Erlang-B B(12, 1) = 7.7e-10: nothing blocked in 10^5 arrivals; the bound holds it
    a, b = 1.0, 1.0
    for k in range(1, 13):
        b = a * b / (k + a * b)
    r = sim("--n", "12", "--lambda", str(1 / 12), "--pools", "1:1:1", "--policy", "pull",
            "--time", "1e4", "--warmup", "10", "--replicas", "10", "--seed", "8")
    e = entry(r, "p_block")
    check("none_observed" in e["flags"] and e["mean"] == 0 and b <= e["upper_bound"] < 1e-4,
          f"fault 4: Erlang-B {b:.3g}: p_block {e['mean']} flags {e['flags']} bound {e['upper_bound']}")
    # proportions never reach below 0 or above 1
    r = sim("--n", "20", "--lambda", "0.3", "--pools", "1:1:2", "--policy", "jsq(2)", "--time",
            "2000", "--warmup", "20", "--replicas", "4", "--seed", "9")
    inside = True
    for name in ("p_wait", "p_block", "p_wait_or_block", "utilization", "tail", "admitted_share"):
        e = r["estimates"][name]
        flat = lambda x: ([v for row in x for v in (row if isinstance(row, list) else [row])]
                          if isinstance(x, list) else [x])
        for lo, hi in zip(flat(e["lower"]), flat(e["upper"])):
            inside &= (lo is None or lo >= 0) and (hi is None or hi <= 1)
    check(inside, "fault 4: every proportion's interval inside [0, 1]")

if case("batches"):  # fault 5: 1000 batches of one replica
    r = sim(*MM1, "--lambda", "0.9", "--time", "1e5", "--warmup", "1000", "--batches", "1000",
            "--seed", "10")
    for name, exact in (("p_wait", 0.9), ("mean_sojourn", 10.0), ("mean_queue", 9.0)):
        e = entry(r, name) if name != "mean_queue" else entry(r, name, 0)
        right_or_run_longer(r, e, exact, f"fault 5: one replica, 1000 batches, {name}", sigmas=4)

if case("empty"):  # fault 6: NaN from empty parts
    r = sim(*MM1, "--lambda", "0.5", "--replicas", "3", "--time", "1", "--warmup", "10",
            "--seed", "11")
    e = entry(r, "p_wait")
    check(e["mean"] is not None or (r["status"] == "not_stationary" and "no customer" in r["reason"]),
          f"fault 6: 3 replicas of time 1: p_wait {e['mean']}, status {r['status']}")
    r = sim(*MM1, "--lambda", "0.5", "--time", "1e4", "--warmup", "100", "--batches", "10000",
            "--seed", "12")
    e = entry(r, "mean_sojourn")
    check(e["mean"] is not None and math.isfinite(e["mean"]),
          f"fault 6: one replica, 10000 batches: mean_sojourn {e['mean']}")
    r = sim(*MM1, "--lambda", "0.001", "--replicas", "3", "--time", "1", "--warmup", "10",
            "--precision", "p_wait:0.1", "--max-replicas", "12", "--seed", "13")
    check(r["status"] == "ok" or r.get("reason"),
          f"fault 6: precision mode without customers: status {r['status']}, reason {r.get('reason')!r}")

if case("labels"):  # fault 7: the level and the warm-up as given
    out = sim(*MM1, "--lambda", "0.5", "--time", "100", "--warmup", "10", "--confidence",
              "0.999999999", json_out=False)
    check("99.9999999% intervals" in out, "fault 7: --confidence 0.999999999 labelled 99.9999999%")
    r = sim(*MM1, "--lambda", "0.5", "--replicas", "10", "--warmup", "3000", "--time", "0.1")
    check(r["verdict"]["warmup_used"] == 3000.0,
          f"fault 7: fixed warm-up reported as {r['verdict']['warmup_used']!r}")

# ---- verdicts: runs too short, warm-up from empty, critical load ------------------

if case("too-short"):
    r = sim("--n", "1000", "--lambda", "0.98", "--pools", "1:1:inf", "--policy", "random",
            "--replicas", "8", "--warmup", "auto", "--time", "1000", "--seed", "31")
    check(r["status"] == "not_stationary" and r.get("reason"),
          f"verdict: rho 0.98, time 1000, warm-up auto: {r['status']} ({r.get('reason', '')[:60]})")
    r = sim("--n", "100", "--lambda", "0.9", "--pools", "1:1:inf", "--replicas", "4", "--warmup",
            "0", "--time", "100", "--seed", "32")
    right_or_run_longer(r, entry(r, "mean_sojourn"), 10.0, "verdict: rho 0.9, warm-up 0, time 100")
    check(r["status"] != "unstable", f"verdict: rho 0.9, time 100 is not called unstable ({r['status']})")
    r = sim("--n", "1000", "--lambda", "0.95", "--pools", "1:1:inf", "--policy", "jsq(1)",
            "--replicas", "8", "--warmup", "500", "--time", "2000", "--seed", "1996")
    right_or_run_longer(r, entry(r, "mean_sojourn"), 20.0, "verdict: jsq-tails M/M/1 at 0.95")
    r = sim(*MM1, "--lambda", "0.9", "--warmup", "auto", "--time", "100000", "--replicas", "4",
            "--seed", "33")
    right_or_run_longer(r, entry(r, "mean_queue", 0), 9.0, "verdict: M/M/1 rho 0.9 warm-up auto",
                        sigmas=4)
    for extra in ([], ["--service", "lognormal:scv=4"]):
        r = sim("--n", "100", "--lambda", "0.9", "--pools", "1:1:inf", "--warmup", "0", "--time",
                "50", "--replicas", "4", "--seed", "34", *extra)
        check(r["status"] == "not_stationary" and "unstable" not in r.get("reason", ""),
              f"verdict: rho 0.9 {' '.join(extra)} time 50: {r['status']} (run longer, not unstable)")

    # a run far shorter than the relaxation time (tau 6 here, exact) asks for a length of
    # the relaxation rule's order, not the start-bias extrapolation T (bound / 0.25)^2 that
    # holds only once se falls like T^(-1/2) (it asked for --time 4.6e6 and, at n = 2^31,
    # 3.8e11)
    for n, t in (("1000", "0.01"), ("100000", "0.001")):
        r = sim("--n", n, "--lambda", "0.5", "--pools", "1:1:inf", "--policy", "random",
                "--replicas", "2", "--warmup", "0", "--time", t, "--seed", "35")
        st = r["verdict"]["suggested_time"]
        check(r["status"] == "not_stationary" and st is not None and 6 <= st <= 1000,
              f"verdict: n = {n}, time {t}: {r['status']}, suggested time {st} (the relaxation "
              "rule's length, 60, is the advice)")

if case("meanfield-short"):
    # Replicas far shorter than the relaxation time from the mean-field start estimate the
    # start x*, not the stationary mean x* + V/n: JSQ(2) at 0.9, n = 1000, 30 replicas of
    # 0.05 covered the refined mean field's mean_queue in 8 of 200 runs (docs/model.md,
    # "Relaxation time", bench/short_replicas.py). Any rule that accepts short replicas
    # from that start must refuse these; n = 10 and rho 0.99 likewise.
    runs = {}
    for n, lam, R in (("1000", "0.9", "30"), ("1000", "0.9", "10"), ("10", "0.9", "30"),
                      ("100000", "0.99", "10")):
        r = runs[n, lam, R] = sim("--n", n, "--lambda", lam, "--policy", "jsq(2)", "--init",
                                  "meanfield", "--replicas", R, "--warmup", "0", "--time",
                                  "0.05", "--seed", "36")
        check(r["status"] == "not_stationary" and "relaxation" in r.get("reason", ""),
              f"verdict: JSQ(2) n = {n}, lambda {lam}, {R} replicas of 0.05 from the mean-field "
              f"start: {r['status']} ({r.get('reason', '')[:60]})")
    # the bias itself, against the refined mean field's 2.35543 at n = 1000 (limit 2.35265):
    # the 30 replicas' interval sits at the start, below it
    q = entry(runs["1000", "0.9", "30"], "mean_queue", 0)
    check(q["upper"] < 2.35543, f"mean-field start, 30 replicas of 0.05: mean_queue "
          f"[{q['lower']:.5f}, {q['upper']:.5f}] sits below the stationary 2.35543")

if case("meanfield-rule"):
    # The mean-field start's rule (docs/model.md): where the refined mean field bounds the
    # start bias at most 0.05 standard errors, replicas far shorter than the relaxation time
    # are ok and cover the stationary mean (the refined mean field at n); the same replicas at
    # n = 1000, where the bound is 3.6 standard errors, are refused (meanfield-short above).
    r = sim("--n", "1000000", "--lambda", "0.9", "--policy", "jsq(2)", "--init", "meanfield",
            "--replicas", "10", "--warmup", "0", "--time", "0.5", "--seed", "36",
            "--limit", "refined")
    q = entry(r, "mean_queue", 0)
    tb = r["verdict"].get("transient_bound")
    check(r["status"] == "ok" and tb is not None and tb <= 0.05,
          f"mean-field start's rule: JSQ(2) n = 10^6, 10 replicas of 0.5 (tau_N 13): "
          f"{r['status']}, bound {tb} standard errors ({r.get('reason', '')[:80]})")
    check(q["lower"] <= q["limit_refined"] <= q["upper"],
          f"mean-field start's rule: mean_queue [{q['lower']:.6f}, {q['upper']:.6f}] covers "
          f"the refined mean field's {q['limit_refined']:.6f}")
    rt = r["verdict"].get("relaxation_time")
    check(rt is not None and abs(rt - 13.08) < 0.05,
          f"mean-field start's rule: relaxation_time {rt} is the model's tau_N (13.08)")
    # the entries that are functions of the mean-field state are bounded (and cover their
    # refined mean field here); the others are flagged: their start bias is not bounded
    t = entry(r, "tail", 0)
    for k in range(7):  # within 2 half-widths: seven 95% intervals, one may miss by chance
        if "few_events" in t["flags"][k]:  # x* 1.6e-6: about 8 entries into level 7 in the run
            check(k == 6 and t["lower"][k] is None and t["upper"][k] is None,
                  f"mean-field start's rule: tail[1][{k + 1}] withheld as a rare event ({t['flags'][k]})")
            continue
        hw = (t["upper"][k] - t["lower"][k]) / 2
        check(abs(t["mean"][k] - t["limit_refined"][k]) <= 2 * hw,
              f"mean-field start's rule: tail[1][{k + 1}] [{t['lower'][k]:.6g}, "
              f"{t['upper'][k]:.6g}] within 2 half-widths of the refined mean field's "
              f"{t['limit_refined'][k]:.6g}")
    sq = entry(r, "sojourn_quantiles")
    check(all("start_bias_unbounded" in f for f in sq["flags"])
          and not any("start_bias_unbounded" in f for f in t["flags"]),
          f"mean-field start's rule: the quantiles are flagged start_bias_unbounded, the tails "
          f"not ({sq['flags']}, {t['flags']})")
    # A deep tail no longer holds the point: at n = 1000, 10 replicas of 200 (15 tau_N), seed
    # 2, the customers pass (bound 0.03 standard errors) and tail[1][6] (x* 0.0013, its 1/n
    # term relatively large) is bounded by 0.086 of its standard error: the point was refused
    # on that tail; it is ok, the tail flagged start_bias_widened and its interval widened by
    # the bound on each side (LBMC_DEBUG_RELAX's "mf widen" line: the bound and the interval
    # before), its estimate as it was
    args = ("--n", "1000", "--lambda", "0.9", "--policy", "jsq(2)", "--init", "meanfield",
            "--replicas", "10", "--warmup", "0", "--time", "200")
    lines = []
    r = sim(*args, "--seed", "2", stderr=lines)
    t = entry(r, "tail", 0)
    widen = {w[2]: [float(w[4]), float(w[6]), float(w[9].strip("[,")), float(w[10].strip("]"))]
             for w in (x.split() for x in lines if x.startswith("mf widen "))}
    check(r["status"] == "ok", f"mean-field start's rule: n = 1000, 10 replicas of 200, seed 2: "
          f"{r['status']}, not held by tail[1][6] ({r.get('reason', '')[:120]})")
    check("start_bias_widened" in t["flags"][5] and "tail[1][6]" in widen,
          f"mean-field start's rule: tail[1][6] flagged start_bias_widened ({t['flags'][5]})")
    if "tail[1][6]" in widen:
        b, se, lo, hi = widen["tail[1][6]"]
        check(b > 0.05 * se and math.isclose(t["lower"][5], max(0.0, lo - b), rel_tol=1e-12)
              and math.isclose(t["upper"][5], hi + b, rel_tol=1e-12)
              and lo <= t["mean"][5] <= hi,
              f"mean-field start's rule: tail[1][6] [{t['lower'][5]:.6g}, {t['upper'][5]:.6g}] is "
              f"[{lo:.6g}, {hi:.6g}] widened by the bound {b:.3g} ({b / se:.3f} standard errors)")
    unflagged = [k for k in range(4) if t["flags"][k]]
    check(not unflagged, f"mean-field start's rule: tail[1][1..4], bounded under 0.05 standard "
          f"errors, keep their intervals (flagged: {unflagged})")
    # the customers still hold the point: seed 36, the same replicas, is refused on them
    # (0.052 standard errors), the reason naming them; in sequential mode the target entry
    # holds it too (seed 2 with the target tail[1][6]: refused on it)
    r = sim(*args, "--seed", "36")
    check(r["status"] != "ok" and "start bias of the customers per server" in r.get("reason", ""),
          f"mean-field start's rule: n = 1000, 10 replicas of 200, seed 36: {r['status']}, the "
          f"reason names the customers ({r.get('reason', '')[:120]})")
    r = sim(*args, "--seed", "2", "--precision", "tail[1][6]:1", "--max-time", "200")
    check(r["status"] != "ok" and "start bias of tail[1][6]" in r.get("reason", ""),
          f"mean-field start's rule: the same, target tail[1][6]: {r['status']}, the reason names "
          f"it ({r.get('reason', '')[:120]})")

if case("pull-example"):  # the README's PULL at n = 10 is critically loaded: never ok
    for t in ("500", "2000"):
        r = sim("--n", "10", "--lambda", "1", "--pools", "0.5:2:inf,0.5:1/3:inf", "--policy",
                "pull", "--replicas", "4", "--warmup", "100", "--time", t, "--seed", "1")
        check(r["status"] in ("not_stationary", "unstable") and r.get("reason"),
              f"verdict: PULL n = 10, time {t}: {r['status']}")

if case("controls"):  # stable points run long enough stay ok
    r = sim("--n", "100", "--lambda", "0.9", "--pools", "1:1:inf", "--replicas", "4", "--warmup",
            "400", "--time", "4000", "--seed", "35")
    check(r["status"] == "ok", f"control: rho 0.9, time 4000: {r['status']} {r.get('reason', '')}")
    right_or_run_longer(r, entry(r, "mean_sojourn"), 10.0, "control: rho 0.9 mean_sojourn", sigmas=4)
    for n in ("100", "1000"):
        r = sim("--n", n, "--lambda", "1", "--pools", "0.5:2:inf,0.5:1/3:inf", "--policy", "pull",
                "--replicas", "4", "--warmup", "100", "--time", "500", "--batches", "20", "--seed", "1")
        check(r["status"] == "ok", f"control: quickstart PULL n = {n}: {r['status']} {r.get('reason', '')}")

if case("grid"):  # stable systems are never called unstable; unstable ones never ok
    alarms = runs = 0
    for lam, t in (("0.5", "2000"), ("0.8", "5000"), ("0.95", "20000")):
        for seed in range(10):
            r = sim("--n", "10", "--lambda", lam, "--pools", "1:1:inf", "--replicas", "4",
                    "--warmup", "auto", "--time", t, "--seed", str(100 + seed))
            runs += 1
            alarms += r["status"] == "unstable"
    check(alarms == 0, f"grid: {alarms} of {runs} stable runs (rho 0.5 to 0.95) called unstable")
    wrong = runs = 0
    for n in ("100", "1000"):
        for seed in range(5):
            r = sim("--n", n, "--lambda", "1", "--pools", "0.5:2:inf,0.5:1/3:inf", "--policy",
                    "jsq(2)", "--replicas", "4", "--warmup", "100", "--time", "500", "--seed",
                    str(200 + seed))
            runs += 1
            wrong += r["status"] == "ok"
    for seed in range(5):
        r = sim("--n", "100", "--lambda", "1.05", "--pools", "1:1:inf", "--replicas", "4",
                "--warmup", "100", "--time", "500", "--seed", str(300 + seed))
        runs += 1
        wrong += r["status"] == "ok"
    check(wrong == 0, f"grid: {wrong} of {runs} unstable runs (JSQ(2) on the paper's example, "
          "rho 1.05) called ok")

# ---- heavy traffic, heavy tails, few replicas: trust at the edges ------------------------

if case("saturation"):  # M/M/1 rho 0.99, 30 replicas x 2000, warm-up auto: was ok, 24.6 vs 99
    r = sim(*MM1, "--lambda", "0.99", "--policy", "random", "--replicas", "30", "--time", "2000",
            "--warmup", "auto", "--seed", "52004")
    e = entry(r, "mean_queue", 0)
    right_or_run_longer(r, e, 99.0, "edges: rho 0.99, 30 x 2000, warm-up auto", sigmas=None)
    v = r["verdict"]
    check(r["status"] == "not_stationary" and "relaxation_short" in v["evidence"]
          and v["suggested_time"] > 2000,
          f"edges: rho 0.99, 30 x 2000: {r['status']}, evidence {v['evidence']}, suggested time "
          f"{v['suggested_time']}")

if case("auto-warmup"):  # MSER at rho 0.95, 10 replicas x 5000: 75% of the ok runs covered
    wrong = oks = 0
    for seed in range(10):
        r = sim(*MM1, "--lambda", "0.95", "--replicas", "10", "--time", "5000", "--warmup", "auto",
                "--seed", str(2200 + seed))
        oks += r["status"] == "ok"
        wrong += r["status"] == "ok" and not holds(entry(r, "mean_sojourn"), 20.0, sigmas=None)
        check(r["status"] == "ok" or (r.get("reason") and r["verdict"]["suggested_time"] > 5000),
              f"edges: rho 0.95, 10 x 5000, seed {2200 + seed}: {r['status']}, suggested time "
              f"{r['verdict']['suggested_time']}")
    check(wrong == 0, f"edges: rho 0.95, 10 x 5000, warm-up auto: {wrong} of {oks} ok runs miss 20")
    # the time it suggests suffices: the same replicas at that time are ok and hold the value
    r = sim(*MM1, "--lambda", "0.95", "--replicas", "10", "--time", "5000", "--warmup", "auto",
            "--seed", "2200")
    t = r["verdict"]["suggested_time"]
    if t:
        r = sim(*MM1, "--lambda", "0.95", "--replicas", "10", "--time", str(math.ceil(t)),
                "--warmup", "auto", "--seed", "2200")
        right_or_run_longer(r, entry(r, "mean_sojourn"), 20.0,
                            f"edges: rho 0.95 at the suggested time {t:.4g}", sigmas=None)
        check(r["status"] == "ok" or r["verdict"]["suggested_time"] > t,
              f"edges: at the suggested time {t:.4g}: {r['status']} ({r.get('reason', '')[:80]})")

if case("warmup-transient"):  # warm-up auto where the model gives tau: the transient bound's w
    # The same seed with a fixed warm-up runs the same replicas, so a fixed run's
    # transient_bound is the bound the automatic choice saw at that warm-up: at most 0.05
    # standard errors (the automatic warm-up's target), and above it one segment (a
    # fortieth of the run) earlier.
    for label, args, time in (
            ("M/M/1 rho 0.9 (tau exact)",
             ("--n", "1", "--lambda", "0.9", "--pools", "1:1:inf", "--policy", "random"), 3000.0),
            ("JSQ(2), 2 servers, rho 0.9 (tau floor)",
             ("--n", "2", "--lambda", "0.9", "--pools", "1:1:inf", "--policy", "jsq(2)"), 1500.0)):
        def run(w, t, args=args):
            return sim(*args, "--replicas", "10", "--warmup", w, "--time", repr(t),
                       "--seed", "3")["verdict"]
        v = run("auto", time)
        w, seg = v["warmup_used"], time / 40
        fixed = run(repr(w), time - w)
        less = run(repr(w - seg), time - w + seg)
        same = math.isclose(fixed["transient_bound"], v["transient_bound"], rel_tol=1e-9)
        check(w > 0 and same and v["transient_bound"] <= 0.05 and less["transient_bound"] > 0.05,
              f"warm-up auto, {label}: {w}, bound there {fixed['transient_bound']:.3g} <= 0.05, "
              f"one segment ({seg}) less {less['transient_bound']:.3g} > 0.05")
    # a finite buffer: the model gives no tau, MSER decides and cuts more than the bound asks
    args = ("--n", "1", "--lambda", "0.95", "--pools", "1:1:50", "--policy", "random",
            "--replicas", "10", "--seed", "3")
    v = sim(*args, "--warmup", "auto", "--time", "3000")["verdict"]
    less = sim(*args, "--warmup", repr(v["warmup_used"] - 75),
               "--time", repr(3075 - v["warmup_used"]))["verdict"]
    check(v["warmup_used"] > 75 and less["transient_bound"] <= 0.25,
          f"warm-up auto, M/M/1/50 at rho 0.95 (no tau from the model): MSER's {v['warmup_used']}, "
          f"while one segment less already meets the bound ({less['transient_bound']:.3g} <= 0.25)")

if case("tau-floor"):  # one replica at rho 0.9: runs whose queue made no large excursion
    # read a short relaxation time and a low mean; these seeds were ok on their own tau
    # (110, 116, 104 against an exact 190) and missed 9; the exact value for M/M/1,
    # (1 + rho) / (1 - rho)^2 = 190, is what the rules use, and it withholds ok
    for seed in (7006, 7015, 7049):
        r = sim(*MM1, "--lambda", "0.9", "--replicas", "1", "--time", "100000", "--warmup",
                "1000", "--batches", "1000", "--engine", "occupancy", "--seed", str(seed))
        v = r["verdict"]
        check(r["status"] == "not_stationary" and "relaxation_short" in v["evidence"]
              and abs(v["relaxation_upper"] - 190) < 1e-6 and v["suggested_time"] > 100000,
              f"edges: rho 0.9, one replica of 1e5, seed {seed}: {r['status']}, tau "
              f"{v['relaxation_time']:.4g}, bound {v['relaxation_upper']:.4g}")
    # 10 replicas of 16720 (88 tau): long enough by the rule (80.2 tau of this queue), so ok
    # whatever the run's own readings say (on them, 112 of 200 such runs were withheld, the
    # ones with a long excursion); control: JSQ(2) on two servers is no M/M/1, and its tau
    # stays a reading
    r = sim(*MM1, "--lambda", "0.9", "--replicas", "10", "--time", "16720", "--warmup", "2090",
            "--engine", "occupancy", "--seed", "20261201")
    v = r["verdict"]
    check(r["status"] == "ok" and abs(v["relaxation_time"] - 190) < 1e-6,
          f"edges: rho 0.9, 10 x 88 tau: {r['status']}, tau {v['relaxation_time']:.6g} (exact 190)")
    r = sim("--n", "2", "--lambda", "0.9", "--pools", "1:1:inf", "--policy", "jsq(2)",
            "--replicas", "10", "--time", "16720", "--warmup", "2090", "--seed", "20261201")
    check(abs(r["verdict"]["relaxation_time"] - 190) > 1,
          f"edges: JSQ(2) on 2 servers: tau {r['verdict']['relaxation_time']:.6g} is a reading")
    # ... but the rules gate on the model's floor, M/M/1 of speed 2: (1 + rho) / (2 (1 -
    # rho)^2) = 95 (the exact chain: 94.8), since this run's reading does not prove it slower
    # (71.7, at most 81.8 at 90%, at least 64.1: below 95; before, the rules used 90, the
    # heavy-traffic floor 2 rho / (C (1 - rho)^2), over its reading)
    check(r["status"] == "ok" and abs(r["verdict"]["relaxation_upper"] - 95) < 1e-6,
          f"edges: JSQ(2) on 2 servers gates on the floor 95: {r['status']}, "
          f"relaxation_upper {r['verdict']['relaxation_upper']:.6g}")

if case("heavy-tail"):  # infinite means reported as inf; Lomax 1.5 loss system never a wrong ok
    r = sim(*MM1, "--lambda", "0.5", "--service", "lomax:shape=1.5", "--replicas", "10",
            "--time", "10000", "--warmup", "1000", "--seed", "3")
    for name in ("mean_wait", "mean_sojourn"):
        e = entry(r, name)
        check(e["mean"] == "inf" and "infinite" in e["flags"] and e["lower"] is None
              and e["upper"] is None,
              f"edges: M/G/1 Lomax 1.5 {name}: {e['mean']} [{e['lower']}, {e['upper']}] {e['flags']}")
    for name in ("mean_queue", "mean_workload"):
        e = entry(r, name, 0)
        check(e["mean"] == "inf" and "infinite" in e["flags"], f"edges: Lomax 1.5 {name} {e['mean']}")
    qs = r["estimates"]["sojourn_quantiles"]["mean"]
    check(all(isinstance(q, float) and math.isfinite(q) for q in qs),
          f"edges: Lomax 1.5 sojourn quantiles stay finite: {qs}")
    check("infinite_mean" in r["verdict"]["evidence"] and "infinite" in r.get("reason", ""),
          f"edges: Lomax 1.5 evidence {r['verdict']['evidence']}")
    wrong = 0
    for seed in range(5):
        r = sim("--n", "1", "--lambda", "1", "--pools", "1:1:1", "--service", "lomax:shape=1.5",
                "--replicas", "10", "--time", "10000", "--warmup", "100", "--seed", str(40 + seed))
        e = entry(r, "p_block")
        wrong += not (holds(e, 0.5, sigmas=None) or (r["status"] == "not_stationary"
                                                      and "heavy tail" in r.get("reason", "")))
        w = entry(r, "mean_wait")
        wrong += not (w["mean"] == 0 and "infinite" not in w["flags"])  # a loss system never waits
        # but the work in progress has mean E[S^2] / (2 E[S]) = inf: so has the mean workload
        lw = entry(r, "mean_workload", 0)
        wrong += not (lw["mean"] == "inf" and "infinite" in lw["flags"] and lw["lower"] is None)
    check(wrong == 0, "edges: Lomax 1.5 loss system: p_block holds 1/2 or the verdict says heavy tail")

if case("flow-balance"):  # JSQ(2) on the PULL example, n = 200, time 400: decided with 1 or 2
    for R in ("1", "2"):
        r = sim("--n", "200", "--lambda", "1", "--pools", "0.5:2:inf,0.5:1/3:inf", "--policy",
                "jsq(2)", "--replicas", R, "--warmup", "100", "--time", "400", "--seed", "7")
        check(r["status"] == "unstable" and "pool_overloaded" in r["verdict"]["evidence"]
              and "pool 2 receives" in r.get("reason", ""),
              f"edges: JSQ(2), n = 200, {R} replica(s), time 400: {r['status']} "
              f"({r.get('reason', '')[:90]})")
    alarms = 0
    for policy, n in (("pull", "100"), ("pull", "1000"), ("balanced(2)", "100")):
        for seed in range(3):
            r = sim("--n", n, "--lambda", "1", "--pools", "0.5:2:inf,0.5:1/3:inf", "--policy",
                    policy, "--replicas", "2", "--warmup", "100", "--time", "400", "--seed",
                    str(60 + seed))
            alarms += r["status"] == "unstable"
    check(alarms == 0, f"edges: {alarms} of 9 stable heterogeneous runs called unstable")

if case("empty-replica"):  # occupancy engine: a replica without arrivals contributes 0/0
    r = sim(*MM1, "--lambda", "0.5", "--policy", "random", "--time", "20", "--warmup", "200",
            "--replicas", "2000", "--seed", "90030")
    q = r["estimates"]["sojourn_quantiles"]
    lost = [i for i in range(len(q["mean"])) if q["lower"][i] is None and "unreliable" not in q["flags"][i]]
    check(not lost, f"edges: 2000 replicas of time 20 on the occupancy engine: quantile intervals "
          f"lost at levels {lost} (flags {q['flags']})")

if case("rare-events"):  # a tail level visited a handful of times: was 185 half-widths off, ok
    # Random routing makes each server an M/M/1 queue (tail level k: rho^k exactly), started
    # from its law. On seed 25 the old rule gave tail[1][19] = 3.0e-9 in [2.6e-11, 2.1e-8]
    # for the exact 1.9e-6, tail[1][18] 2.0e-8 in [1.7e-10, 1.3e-7] for 3.8e-6. Fewer than
    # 20 entries into a level withhold its interval (few_events, estimate kept); the common
    # entries and the verdict are left alone (docs/model.md, "Rare events").
    def rare_tail(r, k):
        t = r["estimates"]["tail"]
        return {f: t[f][0][k - 1] for f in t}

    def withheld_or_holds(e, exact):
        if "few_events" in e["flags"]:
            return e["lower"] is None and e["upper"] is None and e["std_err"] is None and e["mean"] is not None
        if "none_observed" in e["flags"]:
            return e["mean"] == 0
        return e["lower"] is not None and e["upper"] is not None and e["lower"] <= exact <= e["upper"]

    def common_kept(r, what):
        for k in range(1, 15):
            e = rare_tail(r, k)
            check("few_events" not in e["flags"] and e["lower"] is not None and e["upper"] is not None,
                  f"rare events, {what}: tail[1][{k}] (exact {0.5 ** k:.3g}, many entries) keeps its interval")
        for m in ("p_wait", "mean_sojourn", "mean_queue", "utilization"):
            f = r["estimates"][m]["flags"]
            check("few_events" not in (f if m in ("p_wait", "mean_sojourn") else f[0]),
                  f"rare events, {what}: {m} not flagged few_events")

    rare = ["--n", "1e3", "--lambda", "0.5", "--policy", "random", "--init", "meanfield",
            "--warmup", "0", "--time", "400", "--tail-k", "20"]
    r = sim(*rare, "--replicas", "10", "--seed", "25")
    check(r["status"] == "ok", f"rare events, 10 replicas, seed 25: status {r['status']} (left alone)")
    for k in range(15, 21):
        e = rare_tail(r, k)
        check(withheld_or_holds(e, 0.5 ** k), f"rare events, seed 25: tail[1][{k}] = {e['mean']} "
              f"[{e['lower']}, {e['upper']}] {e['flags']} holds the exact {0.5 ** k:.4g} or is withheld")
    for k in (18, 19):
        check("few_events" in rare_tail(r, k)["flags"], f"rare events, seed 25: tail[1][{k}] (about "
              f"{4e6 * 0.5 ** (k + 1):.0f} expected entries, fewer seen) is flagged few_events")
    common_kept(r, "10 replicas")
    r = sim(*rare, "--time", "4000", "--replicas", "1", "--seed", "3")  # batch means of one
    check(r["status"] == "ok", f"rare events, one replica, seed 3: status {r['status']}")
    check("few_events" in rare_tail(r, 19)["flags"] and withheld_or_holds(rare_tail(r, 19), 0.5 ** 19),
          "rare events, one replica: tail[1][19] (about 4 expected entries) is flagged few_events")
    common_kept(r, "one replica")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
