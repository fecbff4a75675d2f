"""Write small lbmc results files that follow docs/results-format.md (layout version 1).

Reusable by any test: ``write_results(path, points)`` writes the file and returns
the values it wrote (``Expected``), so a test can compare a reader's output with
them. Points are built with :func:`point`. Per-replica values come from the
mean-field references of :mod:`lbmc_analysis.meanfield` where one applies (so plots
of a fake file look plausible), else from simple formulas, plus deterministic
noise; estimates are the Student-t summaries of the replicas actually "run",
slots beyond a point's replicas are NaN-padded (float datasets) or ``int_pad``
(integer datasets: -1 as the doc says; another value tests a reader's tolerance),
unstable points have NaN estimates and replicas, ``unstable = 1`` and a ``reason``.

Knobs for negative tests: ``layout_version``, ``omit`` (paths to leave out, e.g.
``"points/rho"`` or ``"@job"`` for a root attribute), ``extras`` (unknown datasets
a forward-compatible reader must ignore), ``quantile_levels`` (the later
``/estimates/{sojourn,wait}_quantiles`` addition), ``long_job`` (a job text over
64 KiB).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import os
from typing import Any, Sequence

import h5py
import numpy as np
from scipy import stats

from lbmc_analysis import limits, meanfield

STR = h5py.string_dtype("utf-8")

SCALAR = [
    "p_wait",
    "p_block",
    "p_wait_or_block",
    "mean_sojourn",
    "mean_wait",
    "messages_per_arrival",
    "withdrawals_per_arrival",
    "throughput",
]
POOL = ["mean_queue", "utilization", "admitted_share"]
UNITS = {m: "1" for m in SCALAR + POOL + ["tail"]}
UNITS.update({"mean_sojourn": "time", "mean_wait": "time", "throughput": "1/time"})
METRIC_ORDER = ["p_wait", "p_block", "p_wait_or_block", "mean_sojourn", "mean_wait", "mean_queue",
                "utilization", "admitted_share", "tail", "messages_per_arrival",
                "withdrawals_per_arrival", "throughput"]


def point(n, lam, policy, beta=(1.0,), mu=(1.0,), buffer=-1, *, routers=1, stale=None, sampling=None,
          replicas=3, status="ok", time=1000.0, warmup=100.0, batches=20, reason=None) -> dict:
    """One grid point as the writer needs it (pool parameters as sequences; buffer -1 = inf)."""
    name, param = meanfield.parse_policy(policy)
    beta = [float(b) for b in beta]
    mu = [float(m) for m in np.broadcast_to(np.asarray(mu, dtype=float), (len(beta),))]
    buf = [int(b) for b in np.broadcast_to(np.asarray(buffer), (len(beta),))]
    if name == "jsq":
        d = param if param is not None else n
        sampling = sampling or "distinct"
    elif name in ("balanced", "lwl"):
        d, sampling = param, ""
    else:
        d, sampling = 0, ""
    if name == "pull":
        stale = stale or ("keep" if policy == "jiq" else "withdraw")
    else:
        stale = ""
    return {
        "n": int(n), "lambda": float(lam), "policy": policy, "policy_name": name, "d": int(d),
        "sampling": sampling, "routers": int(routers), "stale": stale, "beta": beta, "mu": mu,
        "buffer": buf, "time": float(time), "warmup": float(warmup), "batches": int(batches),
        "replicas": int(replicas), "status": status,
        "reason": reason if reason is not None else (
            "the customers in the system keep growing: in every replica, from each quarter of the measured "
            "period to the next, by at least 8.0% of the customers admitted" if status == "unstable" else ""),
    }


def default_points() -> list[dict]:
    """A small mixed grid: two pools, JSQ(2)/PULL/random over n, one unstable point, one
    point with fewer replicas (NaN padding), a finite-buffer pool."""
    beta, mu = (0.5, 0.5), (1.5, 0.5)
    pts = []
    for pol in ("jsq(2)", "pull", "random"):
        for n in (10, 100, 1000):
            pts.append(point(n, 0.7, pol, beta, mu, replicas=3))
    pts[4]["replicas"] = 2  # pull, n = 100: one replica fewer
    pts.append(point(100, 0.7, "pull", beta, mu, (-1, 2), routers=4, stale="keep", replicas=1,
                     status="precision_not_met"))
    # PULL paper's example under JSQ(2): unstable although rho < 1
    pts.append(point(100, 1.0, "jsq(2)", (0.5, 0.5), (2.0, 1 / 3), replicas=3, status="unstable"))
    return pts


@dataclasses.dataclass
class Expected:
    """What :func:`write_results` wrote (numpy arrays, strings as str)."""

    path: str
    P: int
    J: int
    K: int
    R: int
    root: dict
    points: dict
    estimates: dict      # metric -> {"mean", "half_width", "std_err"}
    replicas: dict       # name -> P x R [...] array as written (int padding included)
    estimate_replicas: np.ndarray
    quantiles: dict = dataclasses.field(default_factory=dict)  # name -> (levels, P x Q)


def _pool_sizes(n, beta):
    return meanfield.pool_sizes(n, beta)


def _base_values(p: dict, K: int) -> dict:
    """Plausible per-point values: a mean-field reference if one applies, else formulas."""
    J = len(p["beta"])
    beta, mu = np.array(p["beta"]), np.array(p["mu"])
    rho = p["lambda"] / float(np.sum(beta * mu))
    ref = limits.reference_for_point({**p, "n": p["n"]}, K=K)
    if ref is not None and all(np.all(np.isfinite(np.asarray(ref[m], dtype=float))) for m in METRIC_ORDER):
        base = {m: np.asarray(ref[m], dtype=float) for m in METRIC_ORDER}
        # finite n: make PULL wait a little so that log plots have something to show
        if p["policy_name"] == "pull":
            base["p_wait"] = np.asarray(0.5 / math.sqrt(p["n"]))
            base["p_wait_or_block"] = base["p_wait"] + base["p_block"]
        return base
    util = np.full(J, min(rho, 0.99))
    tail = np.array([[u ** k for k in range(1, K + 1)] for u in util])
    return {
        "p_wait": np.asarray(rho**2), "p_block": np.asarray(0.0), "p_wait_or_block": np.asarray(rho**2),
        "mean_sojourn": np.asarray(1 / (1 - min(rho, 0.99))), "mean_wait": np.asarray(rho / (1 - min(rho, 0.99))),
        "mean_queue": util / (1 - util), "utilization": util, "admitted_share": beta.copy(), "tail": tail,
        "messages_per_arrival": np.asarray({"random": 0.0, "pull": 1.0}.get(p["policy_name"], 2.0 * p["d"])),
        "withdrawals_per_arrival": np.asarray(0.0),
        "throughput": np.asarray(p["lambda"]),
    }


def _dset(group, name, data, units, description, dtype=None):
    d = group.create_dataset(name, data=data, dtype=dtype)
    d.attrs.create("units", units, dtype=STR)
    d.attrs.create("description", description, dtype=STR)
    return d


#: the order in which grid_points writes the keys of a job (so the order of its axes)
_KEY_ORDER = ("n", "lambda", "routers", "pools[1].beta", "pools[1].mu", "pools[1].buffer", "pools[2].beta",
              "pools[2].mu", "pools[2].buffer", "policy", "stale", "sampling")


def grid_points(axes: dict, *, beta=(1.0,), mu=(1.0,), buffer=-1, linked: Sequence[Sequence[str]] = (),
                status=None, skip=(), **kw):
    """The points of a job grid and its job text: ``(points, job, grid_group)``.

    ``axes`` maps axis names (``n``, ``lambda``, ``routers``, ``pools[j].{beta,mu,buffer}``,
    ``policy``, ``stale``, ``sampling``) to value lists; settings that are not axes come
    from ``beta``, ``mu``, ``buffer`` and ``kw`` (passed to :func:`point`). The job text
    lists the keys in ``_KEY_ORDER``, which is therefore the grid order. ``linked``
    groups axes that vary together (one dimension; the job text then cannot say so and
    ``grid_group`` is the ``/grid`` group that does). ``status(params) -> str`` marks
    points (e.g. unstable); cells in ``skip`` (grid indices) are left out of the file.
    Pool 2's ``beta`` defaults to the rest.
    """
    names = [k for k in _KEY_ORDER if k in axes]
    unknown = set(axes) - set(names)
    if unknown:
        raise ValueError(f"grid_points: unknown axes {unknown}")
    groups, seen = [], set()
    for nm in names:
        if nm in seen:
            continue
        g = next((list(x) for x in linked if nm in x), [nm])
        seen.update(g)
        groups.append(g)
    lengths = [len(axes[g[0]]) for g in groups]
    for g in groups:
        if len({len(axes[a]) for a in g}) != 1:
            raise ValueError(f"linked axes {g} differ in length")
    pts = []
    for cell, idx in enumerate(np.ndindex(*lengths)):
        if cell in skip:
            continue
        val = {a: axes[a][i] for g, i in zip(groups, idx) for a in g}
        J = len(beta)
        b = [val.get(f"pools[{j + 1}].beta", beta[j]) for j in range(J)]
        if J == 2 and "pools[2].beta" not in val:
            b[1] = 1.0 - b[0]
        m = [val.get(f"pools[{j + 1}].mu", np.broadcast_to(mu, (J,))[j]) for j in range(J)]
        bu = [val.get(f"pools[{j + 1}].buffer", np.broadcast_to(buffer, (J,))[j]) for j in range(J)]
        bu = [-1 if (isinstance(x, str) or x is None or (isinstance(x, float) and math.isinf(x))) else int(x)
              for x in bu]
        args = dict(kw)
        for key in ("routers", "stale", "sampling"):
            if key in val:
                args[key] = val[key]
        p = point(val.get("n", kw.pop("n", 100) if "n" not in args else args.pop("n")),
                  val.get("lambda", args.pop("lam", 0.7)), val.get("policy", args.pop("policy", "pull")),
                  tuple(b), tuple(m), tuple(bu), **args)
        if p["policy_name"] != "pull":
            p["stale"] = ""
        p["index"] = cell
        if status is not None:
            p["status"] = status(p)
            if p["status"] == "unstable" and not p["reason"]:
                p["reason"] = "rho >= 1 (fake)"
        pts.append(p)

    def fmt(v):
        return "inf" if isinstance(v, float) and math.isinf(v) else str(v)

    def setting(key, default):
        v = axes.get(key, default)
        return "[" + ", ".join(fmt(x) for x in v) + "]" if isinstance(v, (list, tuple)) else fmt(v)

    first = pts[0] if pts else point(100, 0.7, "pull")
    lines = ["system:", f"  n: {setting('n', first['n'])}", f"  lambda: {setting('lambda', first['lambda'])}"]
    if "routers" in axes:
        lines.append(f"  routers: {setting('routers', 1)}")
    lines.append("  pools:")
    for j in range(len(beta)):
        items = [f"beta: {setting(f'pools[{j + 1}].beta', beta[j] if j + 1 < len(beta) or len(beta) == 1 else 'rest')}",
                 f"mu: {setting(f'pools[{j + 1}].mu', np.broadcast_to(mu, (len(beta),))[j])}",
                 f"buffer: {setting(f'pools[{j + 1}].buffer', 'inf' if np.broadcast_to(buffer, (len(beta),))[j] == -1 else np.broadcast_to(buffer, (len(beta),))[j])}"]
        lines.append("    - {" + ", ".join(items) + "}")
    lines.append(f"policy: {setting('policy', first['policy'])}")
    for key in ("stale", "sampling"):
        if key in axes:
            lines.append(f"{key}: {setting(key, '')}")
    job = "\n".join(lines) + "\n"
    grid_group = {
        "axis_name": [a for g in groups for a in g],
        "axis_length": [len(axes[a]) for g in groups for a in g],
        "axis_value": [fmt(v) for g in groups for a in g for v in axes[a]],
        "axis_dim": [k for k, g in enumerate(groups) for _ in g],
    }
    return pts, job, grid_group


def write_results(path, points: Sequence[dict] | None = None, *, K: int = 10, layout_version: int = 1,
                  seed: int = 12345, rng_seed: int = 0, confidence: float = 0.95,
                  quantile_levels: Sequence[float] | None = None, extras: bool = False, int_pad: int = -1,
                  long_job: bool = False, omit: Sequence[str] = (), shard: str = "", job: str | None = None,
                  grid_group: dict | None = None, upper_bound: bool = False,
                  policy_attrs: dict | None = None) -> Expected:
    """Write a results file following docs/results-format.md; return what was written.

    ``job``: the job text (default a fake one without axes); ``grid_group``: datasets of a
    ``/grid`` group to write (as :func:`grid_points` returns); ``upper_bound``: also write
    ``/estimates/M/upper_bound`` (a rule-of-three bound where the mean is 0, NaN elsewhere);
    ``policy_attrs``: attributes for ``/points/policy_name`` (``allowed``, ...).
    """
    path = os.fspath(path)
    pts = list(points) if points is not None else default_points()
    P = len(pts)
    J = len(pts[0]["beta"]) if pts else 1
    if any(len(p["beta"]) != J for p in pts):
        raise ValueError("every point must have the same number of pools")
    R = max((p["replicas"] for p in pts), default=0)
    rng = np.random.default_rng(rng_seed)
    omit = set(omit)

    if job is None:
        job = "# lbmc job (fake)\nsystem:\n  pools:\n" + "".join(
            f"    - {{beta: {b}, mu: {m}}}\n" for b, m in zip(pts[0]["beta"], pts[0]["mu"])) if pts else "{}\n"
    if long_job:
        job += "".join(f"# padding line {i:06d} to exceed the 64 KiB attribute limit\n" for i in range(2000))
    root = {
        "lbmc_version": "0.1.0",
        "layout_version": int(layout_version),
        "created": _dt.datetime(2026, 11, 29, 17, 3, 0).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "job": job,
        "seed": np.int64(seed),
        "mpi_ranks": 2,
        "wall_seconds": 12.5,
        "confidence": float(confidence),
        "tail_k": int(K),
        "shard": shard,
        "complete": 1,
    }

    # ---- points
    pv: dict[str, Any] = {}
    pv["index"] = np.array([p.get("index", i) for i, p in enumerate(pts)], dtype=np.int64)
    for key, dt in (("n", np.int64), ("lambda", float), ("d", np.int64), ("routers", np.int64),
                    ("time", float), ("warmup", float), ("batches", np.int64), ("replicas", np.int64)):
        pv[key] = np.array([p[key] for p in pts], dtype=dt)
    for key in ("policy", "policy_name", "sampling", "stale", "status", "reason"):
        pv[key] = np.array([p[key] for p in pts], dtype=object)
    pv["beta"] = np.array([p["beta"] for p in pts], dtype=float).reshape(P, J)
    pv["mu"] = np.array([p["mu"] for p in pts], dtype=float).reshape(P, J)
    pv["buffer"] = np.array([p["buffer"] for p in pts], dtype=np.int64).reshape(P, J)
    pv["pool_servers"] = np.array([_pool_sizes(p["n"], p["beta"]) for p in pts], dtype=np.int64).reshape(P, J)
    pv["rho"] = pv["lambda"] / np.sum(pv["beta"] * pv["mu"], axis=1) if P else np.zeros(0)

    # ---- replicas and estimates
    shapes = {**{m: () for m in SCALAR}, **{m: (J,) for m in POOL}, "tail": (J, K)}
    reps = {m: np.full((P, R) + shapes[m], np.nan) for m in METRIC_ORDER}
    extra = {
        "warmup": np.full((P, R), np.nan),
        "events": np.full((P, R), int_pad, dtype=np.int64),
        "cpu_seconds": np.full((P, R), np.nan),
        "growth": np.full((P, R), np.nan),
        "unstable": np.full((P, R), int_pad, dtype=np.int8),
    }
    for i, p in enumerate(pts):
        r_i = p["replicas"]
        base = _base_values(p, K)
        for r in range(r_i):
            extra["warmup"][i, r] = p["warmup"] if not math.isnan(p["warmup"]) else 50.0 + r
            extra["events"][i, r] = int(2 * p["lambda"] * p["n"] * p["time"]) + r
            extra["cpu_seconds"][i, r] = 1e-7 * extra["events"][i, r]
            extra["unstable"][i, r] = 1 if p["status"] == "unstable" else 0
            extra["growth"][i, r] = 0.08 + 0.001 * r if p["status"] == "unstable" else 0.001 * (r - 1)
            if p["status"] == "unstable":
                continue
            for m in METRIC_ORDER:
                v = np.asarray(base[m], dtype=float)
                noise = rng.normal(0.0, 1.0, size=v.shape) * (0.01 * np.abs(v) + 1e-5 * (v != 0))
                reps[m][i, r] = np.maximum(v + noise, 0.0) if m != "mean_wait" else v + noise
    estimates = {}
    for m in METRIC_ORDER:
        mean = np.full((P,) + shapes[m], np.nan)
        se = np.full_like(mean, np.nan)
        hw = np.full_like(mean, np.nan)
        for i, p in enumerate(pts):
            r_i = p["replicas"]
            if p["status"] == "unstable" or r_i == 0:
                continue
            x = reps[m][i, :r_i]
            mean[i] = x.mean(axis=0)
            if r_i >= 2:
                se[i] = x.std(axis=0, ddof=1) / math.sqrt(r_i)
                hw[i] = stats.t.ppf(0.5 + confidence / 2, r_i - 1) * se[i]
            else:  # one replica: the writer uses batch means; fake a 1% interval
                se[i] = 0.01 * np.abs(mean[i]) / stats.norm.ppf(0.5 + confidence / 2)
                hw[i] = 0.01 * np.abs(mean[i])
        estimates[m] = {"mean": mean, "half_width": hw, "std_err": se}
        if upper_bound:  # none observed (mean 0 from replicas that ran): a bound from the arrivals
            arrivals = np.nansum(np.where(extra["events"] >= 0, extra["events"], 0), axis=1) / 2.0
            bound = -math.log(1 - confidence) / np.maximum(arrivals, 1.0)
            bound = bound.reshape((P,) + (1,) * (mean.ndim - 1))
            estimates[m]["upper_bound"] = np.where(mean == 0, bound, np.nan)
    est_replicas = pv["replicas"].copy()

    quantiles = {}
    if quantile_levels is not None:
        lev = np.asarray(quantile_levels, dtype=float)
        for name, src in (("sojourn_quantiles", "mean_sojourn"), ("wait_quantiles", "mean_wait")):
            q = np.outer(estimates[src]["mean"], -np.log1p(-lev))  # exponential-like quantiles
            quantiles[name] = (lev, q)

    # ---- write
    descr_pts = {
        "index": ("1", "the point's index in the full grid"),
        "n": ("1", "number of servers"),
        "lambda": ("1/time", "arrival rate per server"),
        "rho": ("1", "load lambda / sum_j beta_j mu_j"),
        "policy": ("1", "routing policy as written in the job"),
        "policy_name": ("1", "routing policy name"),
        "d": ("1", "policy parameter (d or c), 0 if none, n for full jsq"),
        "sampling": ("1", "sampling of jsq(d)"),
        "routers": ("1", "number of routers"),
        "stale": ("1", "pull stale-message option"),
        "beta": ("1", "pool fractions"),
        "mu": ("1/time", "service speeds"),
        "buffer": ("1", "buffer per server, -1 = infinite"),
        "pool_servers": ("1", "servers per pool"),
        "time": ("time", "measured time per replica"),
        "warmup": ("time", "requested warm-up time, NaN for auto"),
        "batches": ("1", "batches per replica"),
        "replicas": ("1", "replicas run for the point"),
        "status": ("1", "ok, precision_not_met or unstable"),
        "reason": ("1", "why the point is unstable; empty otherwise"),
    }
    tmp = path + ".tmp"
    with h5py.File(tmp, "w") as f:
        for k, v in root.items():
            if "@" + k in omit:
                continue
            if isinstance(v, str):
                f.attrs.create(k, v, dtype=STR)
            else:
                f.attrs[k] = v
        g = f.create_group("points")
        for k, v in pv.items():
            if f"points/{k}" in omit:
                continue
            d = _dset(g, k, v, *descr_pts[k], dtype=STR if v.dtype == object else None)
            if k == "policy_name":
                for a, val in (policy_attrs or {}).items():
                    d.attrs.create(a, val, dtype=STR)
        if grid_group is not None:
            gg = f.create_group("grid")
            for k, v in grid_group.items():
                arr = np.array(v, dtype=object if k in ("axis_name", "axis_value", "dim_name") else np.int64)
                gg.create_dataset(k, data=arr, dtype=STR if arr.dtype == object else None)
        e = f.create_group("estimates")
        for m in METRIC_ORDER:
            if f"estimates/{m}" in omit:
                continue
            gm = e.create_group(m)
            gm.attrs.create("units", UNITS[m], dtype=STR)
            gm.attrs.create("description", f"the metric {m}", dtype=STR)
            for part, arr in estimates[m].items():
                _dset(gm, part, arr, UNITS[m], f"{part} of {m}")
        if "estimates/replicas" not in omit:
            _dset(e, "replicas", est_replicas, "1", "replicas behind each estimate")
        for name, (lev, q) in quantiles.items():
            d = _dset(e, name, q, "time", f"{name.replace('_', ' ')} at the levels attribute")
            d.attrs["levels"] = lev
        rg = f.create_group("replicas")
        for k, v in extra.items():
            if f"replicas/{k}" in omit:
                continue
            _dset(rg, k, v, "time" if k == "warmup" else ("s" if k == "cpu_seconds" else "1"), f"per-replica {k}")
        for m in METRIC_ORDER:
            if f"replicas/{m}" in omit:
                continue
            _dset(rg, m, reps[m], UNITS[m], f"per-replica {m}")
        if extras:
            _dset(g, "new_param", np.arange(P, dtype=float), "1", "a parameter from a later layout")
            _dset(g, "odd_shape", np.zeros((P, 3, 2)), "1", "an unknown 3-D point dataset")
            gm = e.create_group("future_metric")
            gm.attrs.create("units", "1", dtype=STR)
            gm.attrs.create("description", "a metric of a later layout", dtype=STR)
            for part in ("mean", "half_width", "std_err"):
                _dset(gm, part, np.ones(P), "1", f"{part} of future_metric")
            go = e.create_group("odd_metric")
            _dset(go, "mean", np.ones((P, 7)), "1", "a metric of unknown shape")
            _dset(e, "loose_dataset", np.ones(P), "1", "an unknown dataset without levels")
            _dset(rg, "future_metric", np.ones((P, R)), "1", "per-replica future_metric")
            _dset(rg, "odd_replica", np.ones((P, R, 5)), "1", "unknown per-replica shape")
            ng = f.create_group("provenance")
            _dset(ng, "hosts", np.array(["node1", "node2"], dtype=object), "1", "hosts", dtype=STR)
    os.replace(tmp, path)

    reps_out = {**reps, **extra}
    return Expected(path=path, P=P, J=J, K=K, R=R, root=root, points=pv, estimates=estimates,
                    replicas=reps_out, estimate_replicas=est_replicas, quantiles=quantiles)


def write_not_hdf5(path, content: bytes = b"n,lambda,p_wait\n100,0.9,0.1\n") -> str:
    """A plain file that is not HDF5 (e.g. a CSV written by mistake)."""
    with open(path, "wb") as fh:
        fh.write(content)
    return os.fspath(path)


def write_foreign_hdf5(path) -> str:
    """A valid HDF5 file that is not an lbmc result (no layout_version)."""
    with h5py.File(path, "w") as f:
        f.attrs["creator"] = "someone else"
        f.create_dataset("data", data=np.arange(3))
    return os.fspath(path)
