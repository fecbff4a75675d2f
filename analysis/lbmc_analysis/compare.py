"""Paired comparison of two policies (or two values of another routing axis) per scenario.

A *scenario* is a grid cell without its routing axis: the same ``n``, ``lambda``, pools,
... The per-replica values of the metric (``/replicas/M``) are paired replica by
replica, replica r of policy ``a`` with replica r of policy ``b`` at the same scenario,
and the difference and ratio get Student-t intervals from the pairs (paired t; the
ratio of means by the delta method, Law & Kelton, *Simulation Modeling and Analysis*,
section 10.2 on comparing two systems). When lbmc gives every policy of a scenario the
same random numbers (common random numbers, docs/model.md "Random streams"), the pairs
are positively correlated and the paired interval is narrower than the unpaired one
(also returned); without them the pairing is still correct, only no narrower.
"""

from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from . import metrics

__all__ = ["compare"]

_OUT = ["metric", "a", "b", "mean_a", "mean_b", "pairs", "diff", "diff_half_width", "diff_std_err", "ratio",
        "ratio_half_width", "diff_half_width_unpaired", "status_a", "status_b"]


def _grid_of(data) -> xr.Dataset:
    from .io import load

    ds = load(data) if isinstance(data, (str, os.PathLike)) else data
    if not isinstance(ds, xr.Dataset) or "lbmc_grid" not in ds.attrs:
        raise ValueError("compare() pairs the points through the job's grid; this dataset is in the flat form "
                         "(load the file with grid=True; see the GridWarning for why it could not be)")
    return ds


def _scenario_columns(ds: xr.Dataset, gdims, info) -> dict:
    """One column per label coordinate of the remaining grid dimensions, over all scenarios."""
    shape = [ds.sizes[d] for d in gdims]
    idx = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), dtype=int)
    cols = {}
    for d_info in info["dims"]:
        if d_info["name"] not in gdims:
            continue
        k = gdims.index(d_info["name"])
        for a in d_info["axes"]:
            cols[a["coord"]] = np.asarray(ds[a["coord"]].values)[idx[k]]
    return cols


def _pair_stats(x, y, level):
    """diff, its half-width and std error, ratio and half-width, unpaired half-width, pairs."""
    ok = np.isfinite(x) & np.isfinite(y)
    m = int(ok.sum())
    out = dict(pairs=m, diff=math.nan, diff_half_width=math.nan, diff_std_err=math.nan, ratio=math.nan,
               ratio_half_width=math.nan, diff_half_width_unpaired=math.nan)
    if m == 0:
        return out
    xp, yp = x[ok], y[ok]
    out["diff"] = float(np.mean(xp - yp))
    out["ratio"] = float(np.mean(xp) / np.mean(yp)) if np.mean(yp) != 0 else math.nan
    if m < 2:
        return out
    t = stats.t.ppf(0.5 + level / 2, m - 1)
    se = float(np.std(xp - yp, ddof=1) / math.sqrt(m))
    out["diff_std_err"], out["diff_half_width"] = se, t * se
    if np.mean(yp) != 0:
        z = xp - out["ratio"] * yp  # delta method for a ratio of means
        out["ratio_half_width"] = t * float(np.std(z, ddof=1) / math.sqrt(m) / abs(np.mean(yp)))
    xa, ya = x[np.isfinite(x)], y[np.isfinite(y)]
    if xa.size >= 2 and ya.size >= 2:
        va, vb = np.var(xa, ddof=1) / xa.size, np.var(ya, ddof=1) / ya.size
        if va + vb > 0:
            df = (va + vb) ** 2 / (va**2 / (xa.size - 1) + vb**2 / (ya.size - 1))  # Welch
            out["diff_half_width_unpaired"] = float(stats.t.ppf(0.5 + level / 2, df) * math.sqrt(va + vb))
        else:
            out["diff_half_width_unpaired"] = 0.0
    return out


def _ratio_pair_stats(va, wa, vb, wb, level):
    """The same from the replicas' values and weights (layout 2): ratio-of-sums estimators.

    A replica's numerator is value x weight and its denominator its weight; each side's
    estimate is the ratio of the sums over the pairs, as the point's own estimate is, and
    the paired difference and log-ratio get delta-method intervals (Cochran, *Sampling
    Techniques*, 6.4; the C side's lbmc_ratio_paired_difference and _ratio)."""
    ok = np.isfinite(wa) & np.isfinite(wb)
    m = int(ok.sum())
    out = dict(pairs=m, diff=math.nan, diff_half_width=math.nan, diff_std_err=math.nan, ratio=math.nan,
               ratio_half_width=math.nan, diff_half_width_unpaired=math.nan)
    if m == 0:
        return out
    xa, xb = np.where(wa[ok] > 0, wa[ok], 0.0), np.where(wb[ok] > 0, wb[ok], 0.0)
    ya = np.where((xa > 0) & np.isfinite(va[ok]), va[ok] * xa, 0.0)
    yb = np.where((xb > 0) & np.isfinite(vb[ok]), vb[ok] * xb, 0.0)
    if xa.sum() <= 0 or xb.sum() <= 0:
        return out
    ra, rb = ya.sum() / xa.sum(), yb.sum() / xb.sum()
    out["diff"] = float(ra - rb)
    out["ratio"] = float(ra / rb) if rb != 0 else math.nan
    if m < 2:
        return out
    t = stats.t.ppf(0.5 + level / 2, m - 1)
    ea, eb = (ya - ra * xa) / xa.mean(), (yb - rb * xb) / xb.mean()
    se = math.sqrt(float(np.sum((ea - eb) ** 2)) / (m * (m - 1)))
    out["diff_std_err"], out["diff_half_width"] = se, t * se
    if ra > 0 and rb > 0:
        sl = math.sqrt(float(np.sum((ea / ra - eb / rb) ** 2)) / (m * (m - 1)))
        lo, hi = out["ratio"] * math.exp(-t * sl), out["ratio"] * math.exp(t * sl)
        out["ratio_half_width"] = max(out["ratio"] - lo, hi - out["ratio"])
    va_, vb_ = np.sum(ea**2) / (m * (m - 1)), np.sum(eb**2) / (m * (m - 1))
    if va_ + vb_ > 0:
        df = (va_ + vb_) ** 2 / (va_**2 / (m - 1) + vb_**2 / (m - 1))  # Welch
        out["diff_half_width_unpaired"] = float(stats.t.ppf(0.5 + level / 2, df) * math.sqrt(va_ + vb_))
    else:
        out["diff_half_width_unpaired"] = 0.0
    return out


def compare(data, metric: str, a, b, *, along: str = "policy") -> pd.DataFrame:
    """Per scenario, ``metric`` under ``a`` minus (and divided by) ``metric`` under ``b``.

    ``data``: a grid Dataset from :func:`lbmc_analysis.load` (or a selection of it) or a
    path. ``metric``: a metric entry as :mod:`lbmc_analysis.metrics` spells it
    (``p_wait``, ``utilization[2]``, ``tail[1][3]``). ``a``, ``b``: two values of the
    grid dimension ``along`` (default ``policy``; e.g. ``along="stale"``).

    Returns a DataFrame, one row per scenario (the other grid dimensions' values as
    columns, then ``metric``, ``a``, ``b``, ``mean_a``, ``mean_b`` (the file's
    estimates), ``pairs`` (replica pairs where both values exist), ``diff`` =
    mean of a - b over the pairs, ``diff_half_width``, ``diff_std_err`` (paired
    Student-t at the file's ``confidence``), ``ratio`` = mean(a)/mean(b) over the pairs
    and ``ratio_half_width`` (delta method), ``diff_half_width_unpaired`` (Welch, all
    replicas: what the pairing saves), ``status_a``, ``status_b``). With the replicas'
    weights (layout 2, ``M_weight_replicas``) each side is the ratio of its pairs' summed
    numerators (value x weight) and denominators, as lbmc pools a point, and the intervals
    come from the delta method (``frame.attrs["estimator"]`` says which). A scenario where
    either point is unstable or missing has NaN numbers (its statuses say why); one
    pair gives NaN intervals. ``frame.attrs``: ``confidence``,
    ``common_random_numbers`` (the file's root attribute of that name, None if absent).

    Raises ``KeyError`` when ``along`` is not a grid dimension or ``a``/``b`` not among
    its values, ``ValueError`` for a flat dataset or a bad metric.
    """
    ds = _grid_of(data)
    info = json.loads(ds.attrs["lbmc_grid"])
    if along not in ds.dims:
        dims = [d["name"] for d in info["dims"] if d["name"] in ds.dims]
        raise KeyError(f"compare: {along!r} is not a grid dimension of the data; they are {dims}")
    values = list(ds[along].values)
    for v in (a, b):
        if v not in values:
            raise KeyError(f"compare: {along} = {v!r} is not in the data; {along} has {values}")
    ref = metrics.resolve(ds, metric)
    if f"{ref.name}_replicas" not in ds:
        raise ValueError(f"compare: the data have no per-replica values of {ref.name!r}")
    level = float(ds.attrs.get("confidence", 0.95))
    gdims = [d["name"] for d in info["dims"] if d["name"] in ds.dims and d["name"] != along]

    weighted = f"{ref.name}_weight_replicas" in ds  # layout 2: ratio-of-sums estimators

    def side(v):
        s = ds.sel({along: v})
        cells = int(np.prod([ds.sizes[d] for d in gdims], dtype=np.int64))

        def per_replica(part):
            return metrics.select(s, ref, part).variable.set_dims(
                {**{d: ds.sizes[d] for d in gdims}, "replica": ds.sizes["replica"]}).transpose(
                    *gdims, "replica").values.reshape(cells, -1)

        reps = per_replica("replicas")
        weights = per_replica("weight_replicas") if weighted else None
        mean = metrics.select(s, ref).variable.set_dims({d: ds.sizes[d] for d in gdims}).transpose(*gdims)
        status = s["status"].variable.set_dims({d: ds.sizes[d] for d in gdims}).transpose(*gdims)
        return reps, weights, mean.values.reshape(cells), status.values.reshape(cells)

    (ra, wa, ma, sa), (rb, wb, mb, sb) = side(a), side(b)
    rows = []
    for s in range(ra.shape[0]):
        row = {"metric": str(ref), "a": a, "b": b, "mean_a": float(ma[s]), "mean_b": float(mb[s]),
               "status_a": str(sa[s]), "status_b": str(sb[s])}
        bad = {"unstable", "missing"} & {row["status_a"], row["status_b"]}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            if weighted:
                row.update(_ratio_pair_stats(ra[s], wa[s], rb[s], wb[s], level) if not bad else
                           _ratio_pair_stats(ra[s][:0], wa[s][:0], rb[s][:0], wb[s][:0], level))
            else:
                row.update(_pair_stats(ra[s], rb[s], level) if not bad else _pair_stats(ra[s][:0], rb[s][:0], level))
        rows.append(row)
    frame = pd.concat([pd.DataFrame(_scenario_columns(ds, gdims, info)), pd.DataFrame(rows)[_OUT]], axis=1)
    frame.attrs["confidence"] = level
    frame.attrs["common_random_numbers"] = ds.attrs.get("common_random_numbers")
    frame.attrs["estimator"] = "ratio of sums (delta method)" if weighted else "mean of replica values (paired t)"
    return frame
