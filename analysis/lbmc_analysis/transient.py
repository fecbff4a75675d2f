"""Transient runs (``lbmc sim --transient T0:T1:DT --json``) as xarray, and their bands.

``load_transient(source)`` reads the ``"transient"`` part of ``lbmc sim --json`` output
(a dict, a JSON text or a path) into an ``xarray.Dataset`` with a ``time`` dimension:
one variable per metric (``mean_queue`` (time, pool), ``tail`` (time, pool, k),
``customers``, ``p_wait``, ``p_block``, ``throughput``, ``messages_per_arrival`` (time)),
each with a ``stat`` dimension: ``mean``, ``lower``, ``upper`` (pointwise interval at the
run's confidence) and ``band_lower``, ``band_upper`` (the simultaneous Bonferroni band
over the grid; docs/model.md, "Transient runs"). Undefined entries (the interval metrics
at the first time) are NaN.

``plot_transient(ds, metric, ...)`` draws the mean, the pointwise interval and the band
of one entry over time, with optional references (such as the mean-field ODE from the
same start, ``limits.transient_for_point`` / ``python3 -m lbmc_analysis limit
--transient``)."""
from __future__ import annotations

import json
import os
from typing import Any, Mapping, Sequence

import numpy as np
import xarray as xr

STATS = ("mean", "lower", "upper", "band_lower", "band_upper")
_POOLED = {"mean_queue": ("pool",), "tail": ("pool", "k")}


def _transient_part(source: Any) -> Mapping[str, Any]:
    if isinstance(source, Mapping):
        data = source
    elif isinstance(source, (str, os.PathLike)) and os.path.exists(source):
        with open(source, encoding="utf-8") as f:
            data = json.load(f)
    else:
        data = json.loads(source)
    if "transient" in data:
        data = data["transient"]
    if "time" not in data or "estimates" not in data:
        raise ValueError("not a transient run's output: no 'transient' with 'time' and 'estimates'")
    return data


def _array(values) -> np.ndarray:
    return np.array(values, dtype=float)  # null (None) becomes NaN


def load_transient(source: Any) -> xr.Dataset:
    """The transient estimates of an ``lbmc sim --transient --json`` output as a Dataset
    (dims stat, time[, pool[, k]]); attrs: replicas, band, unstable_replicas."""
    data = _transient_part(source)
    time = _array(data["time"])
    out = {}
    for name, fields in data["estimates"].items():
        extra = _POOLED.get(name, ())
        arr = np.stack([_array(fields[s]) for s in STATS])
        if arr.ndim != 2 + len(extra):
            raise ValueError(f"transient metric {name}: shape {arr.shape[1:]} does not fit (time{', ' if extra else ''}{', '.join(extra)})")
        coords = {}
        if "k" in extra:
            coords["k"] = np.arange(1, arr.shape[3] + 1)
        out[name] = xr.DataArray(arr, dims=("stat", "time") + extra, coords=coords)
    ds = xr.Dataset(out, coords={"stat": list(STATS), "time": time})
    if "pool" in ds.dims:
        ds = ds.assign_coords(pool=np.arange(ds.sizes["pool"]))
    ds.attrs["replicas"] = int(data.get("replicas", 0))
    ds.attrs["band"] = data.get("band", "bonferroni")
    ds.attrs["unstable_replicas"] = int(data.get("unstable_replicas", 0))
    return ds


def entry(ds: xr.Dataset, metric: str, pool: int | None = None, k: int | None = None) -> xr.DataArray:
    """One entry (stat, time) of a metric: pool and k where the metric has them."""
    da = ds[metric]
    if "pool" in da.dims:
        da = da.sel(pool=0 if pool is None else pool)
    if "k" in da.dims:
        if k is None:
            raise ValueError(f"{metric}: give k (the level)")
        da = da.sel(k=k)
    return da


def outside_band(ds: xr.Dataset, metric: str, reference: Sequence[float], pool: int | None = None,
                 k: int | None = None) -> np.ndarray:
    """Times where a reference curve (one value per time) leaves the band."""
    e = entry(ds, metric, pool, k)
    ref = np.asarray(reference, dtype=float)
    lo, hi = e.sel(stat="band_lower").values, e.sel(stat="band_upper").values
    bad = (ref < lo) | (ref > hi)
    return ds["time"].values[bad]


def plot_transient(ds: xr.Dataset, metric: str, pool: int | None = None, k: int | None = None,
                   ax=None, references: Mapping[str, Sequence[float]] | None = None,
                   label: str = "simulation"):
    """The mean of one entry over time with its pointwise interval (darker) and its
    simultaneous band (lighter); each of ``references`` (name -> values per time, e.g.
    the ODE and ODE + V(t)/n) as a line. Returns the axes."""
    if ax is None:
        from matplotlib.figure import Figure

        ax = Figure(figsize=(6.4, 4.6)).subplots()
    e = entry(ds, metric, pool, k)
    t = ds["time"].values
    line, = ax.plot(t, e.sel(stat="mean").values, label=label)
    c = line.get_color()
    ax.fill_between(t, e.sel(stat="band_lower").values, e.sel(stat="band_upper").values, color=c,
                    alpha=0.15, lw=0, label=f"{ds.attrs.get('band', 'bonferroni')} band")
    ax.fill_between(t, e.sel(stat="lower").values, e.sel(stat="upper").values, color=c, alpha=0.35,
                    lw=0, label="pointwise interval")
    for name, values in (references or {}).items():
        ax.plot(t, np.asarray(values, dtype=float), ls="--", label=name)
    what = metric + (f"[{pool if pool is not None else 0}]" if "pool" in ds[metric].dims else "")
    what += f"[{k}]" if k is not None and "k" in ds[metric].dims else ""
    ax.set_xlabel("time")
    ax.set_ylabel(what)
    ax.set_title(f"{what} over time ({ds.attrs.get('replicas', '?')} replicas)")
    ax.legend(fontsize="small")
    return ax
