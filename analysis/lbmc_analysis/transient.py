"""Transient runs (``lbmc sim --transient T0:T1:DT --json``, or ``lbmc run`` with
``run.transient``) as xarray, and their bands.

``load_transient(source)`` reads the ``"transient"`` part of ``lbmc sim --json`` output
(a dict, a JSON text or a path), or the ``/transient`` group of a results file
(docs/results-format.md; ``point=`` picks a grid point, else a ``point`` dimension
leads), into an ``xarray.Dataset`` with a ``time`` dimension:
one variable per metric (``mean_queue`` (time, pool), ``tail`` (time, pool, k),
``customers``, ``p_wait``, ``p_block``, ``throughput``, ``messages_per_arrival`` (time);
``pool`` and ``k`` numbered from 1, as in :func:`lbmc_analysis.load`: ``.sel(pool=1)`` is
the first pool; read the tails as ``ds["tail"]``, since ``ds.tail`` is xarray's method),
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


def _transient_part(data: Any, where: str) -> Mapping[str, Any]:
    from ._h5 import LbmcFormatError

    if isinstance(data, Mapping) and "transient" in data:
        data = data["transient"]
    if not isinstance(data, Mapping) or "time" not in data or "estimates" not in data:
        raise LbmcFormatError(f"{where}: not a transient run's output: no 'transient' with 'time' and 'estimates' "
                              "(the output of lbmc sim --transient T0:T1:DT --json)")
    return data


def _json_text(text: str, where: str) -> Any:
    from ._h5 import LbmcFormatError

    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LbmcFormatError(f"{where}: not valid JSON ({exc}); expected the output of lbmc sim --transient "
                              "T0:T1:DT --json") from None


def _read_json_file(path: str) -> Any:
    """A file that is not HDF5: the JSON of ``lbmc sim --transient --json``, or an error
    saying what the file starts with (as :func:`lbmc_analysis.load` does)."""
    from ._h5 import LbmcFormatError

    with open(path, "rb") as fh:
        raw = fh.read()
    if not raw.strip():
        raise LbmcFormatError(f"{path}: an empty file; expected an lbmc results file (HDF5) or the output of "
                              "lbmc sim --transient T0:T1:DT --json")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise LbmcFormatError(f"{path}: neither an HDF5 file nor JSON text (it starts with {raw[:16]!r}); "
                              "expected an lbmc results file or the output of lbmc sim --transient --json") from None
    return _json_text(text, path)


def _array(values) -> np.ndarray:
    return np.array(values, dtype=float)  # null (None) becomes NaN


def _dataset(arrays: Mapping[str, np.ndarray], time: np.ndarray, lead: tuple = ()) -> xr.Dataset:
    """The Dataset of the estimates ``arrays`` (name -> values of dims stat, *lead, time, then
    the metric's pools and levels): pool and k numbered from 1, as in :func:`lbmc_analysis.load`,
    the docs and lbmc's tables (the JSON's lists are 0-based positions)."""
    out = {}
    for name, arr in arrays.items():
        extra = _POOLED.get(name, ())
        if arr.ndim != 2 + len(lead) + len(extra) or arr.shape[0] != len(STATS):
            raise ValueError(f"transient metric {name}: shape {arr.shape[1:]} does not fit "
                             f"({', '.join(lead + ('time',) + extra)})")
        coords = {}
        if "k" in extra:
            coords["k"] = np.arange(1, arr.shape[-1] + 1)
        out[name] = xr.DataArray(arr, dims=("stat",) + lead + ("time",) + extra, coords=coords)
    ds = xr.Dataset(out, coords={"stat": list(STATS), "time": time})
    if "pool" in ds.dims:
        ds = ds.assign_coords(pool=np.arange(1, ds.sizes["pool"] + 1))
    return ds


def load_transient(source: Any, point: int | None = None) -> xr.Dataset:
    """The transient estimates of an ``lbmc sim --transient --json`` output, or of a results
    file's ``/transient`` group, as a Dataset (dims stat, time[, pool[, k]]; ``pool`` and
    ``k`` numbered from 1, as in :func:`lbmc_analysis.load`); attrs: replicas, band,
    unstable_replicas. The tails are ``ds["tail"]`` (``ds.tail`` is xarray's method, not the
    variable).

    ``source``: a dict (the parsed JSON), a JSON text (a ``str`` starting with ``{``), or a
    path (``str`` or ``os.PathLike``) to a results file or to the saved JSON output.

    From a results file (a path to an HDF5 file; its checksums are checked first, as
    :func:`lbmc_analysis.load` does): ``point`` is the grid index (``/points/index``) of the
    point to read, which gives the same Dataset as the JSON of that point (attrs also
    ``point`` and the point's ``/points`` values as ``point_n``, ``point_policy``, ...);
    without it, a file of one point gives that point, and a file of several points a Dataset
    with a leading ``point`` dimension (coordinate: the grid index, and ``n``, ``policy``,
    ``replicas``, ... along it): ``ds.sel(point=i)`` is then one point. Raises, as
    :func:`lbmc_analysis.load` does: ``FileNotFoundError`` for a missing path;
    ``LbmcFormatError`` for a directory, a file that is neither HDF5 nor JSON (or empty),
    JSON without a transient part, a file without ``/transient`` (not a transient run) or a
    point it does not hold; ``LbmcDamagedError`` for a damaged HDF5 file (checksums, or one
    the HDF5 library cannot open, e.g. truncated); ``TypeError`` for another type."""
    data = _source(source, point)
    if isinstance(data, xr.Dataset):
        return data
    arrays = {name: np.stack([_array(fields[s]) for s in STATS]) for name, fields in data["estimates"].items()}
    ds = _dataset(arrays, _array(data["time"]))
    ds.attrs["replicas"] = int(data.get("replicas", 0))
    ds.attrs["band"] = data.get("band", "bonferroni")
    ds.attrs["unstable_replicas"] = int(data.get("unstable_replicas", 0))
    return ds


def _source(source: Any, point: int | None) -> Any:
    """Decide what ``source`` is, as :func:`lbmc_analysis.load` does for paths: a mapping is
    the parsed JSON; a ``str`` starting with ``{`` (after blanks) is JSON text; any other
    ``str`` or ``os.PathLike`` is a path (missing: ``FileNotFoundError``; a directory or a
    file that is neither HDF5 nor JSON: ``LbmcFormatError``; a damaged HDF5 file:
    ``LbmcDamagedError``). Returns the transient part, or the Dataset of an HDF5 file."""
    from ._h5 import LbmcFormatError

    if isinstance(source, Mapping):
        return _transient_part(source, "the output")
    if isinstance(source, bytes):
        source = source.decode("utf-8", "replace")
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return _transient_part(_json_text(source, "the JSON text"), "the JSON text")
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"source = {source!r} is not allowed; a path (results file or JSON output), a JSON text or "
                        "the dict of lbmc sim --transient T0:T1:DT --json is required")
    path = os.fspath(source)
    if not path.strip():
        raise LbmcFormatError("source = '' is not allowed; a path or the JSON text of lbmc sim --transient --json is "
                              "required")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if os.path.isdir(path):
        raise LbmcFormatError(f"{path}: is a directory, not an lbmc results file")
    import h5py

    if h5py.is_hdf5(path):
        return _load_file(path, point)
    return _transient_part(_read_json_file(path), path)


def _load_file(path: str, point: int | None) -> xr.Dataset:
    """:func:`load_transient` of a results file."""
    import warnings

    import h5py

    from ._h5 import LbmcFormatError, UnverifiedWarning, check_file, open_hdf5, py_value, read_array

    sealed = check_file(path)  # raises LbmcDamagedError; False: no checksums; None: cannot be opened
    fh = open_hdf5(path)  # LbmcDamagedError where the library cannot open it (e.g. truncated)
    if sealed is False:
        warnings.warn(UnverifiedWarning(f"{path} has no checksums: its numbers cannot be verified"),
                      stacklevel=4)
    with fh as f:
        g = f.get("transient")
        if not isinstance(g, h5py.Group):
            raise LbmcFormatError(f"{path}: no /transient group: not the results of a transient run "
                                  f"(run.transient in the job file)")
        index = np.asarray(f["points/index"][()])
        names = [str(m) for m in py_value(g.attrs["metrics"])]
        arrays = {m: np.stack([np.asarray(g[m][s][()], dtype=float) for s in STATS]) for m in names}
        time = np.asarray(g["time"][()], dtype=float)
        replicas = np.asarray(g["replicas"][()])
        unstable = np.asarray(g["unstable_replicas"][()])
        columns = {name: read_array(d) for name, d in f["points"].items()
                   if isinstance(d, h5py.Dataset) and d.ndim == 1 and name not in ("index", "replicas")}
        band = str(py_value(g.attrs.get("band", "bonferroni")))
    if point is None and len(index) == 1:
        point = int(index[0])
    if point is not None:
        rows = np.flatnonzero(index == point)
        if len(rows) != 1:
            raise LbmcFormatError(f"{path}: no grid point {point} in the file; its points: "
                                  f"{', '.join(map(str, index.tolist()))}")
        row = int(rows[0])
        ds = _dataset({m: a[:, row] for m, a in arrays.items()}, time)
        ds.attrs.update(replicas=int(replicas[row]), unstable_replicas=int(unstable[row]), band=band,
                        point=int(point))
        for name, values in columns.items():
            ds.attrs[f"point_{name}"] = py_value(values[row])
        return ds
    ds = _dataset(arrays, time, lead=("point",))
    ds = ds.assign_coords(point=index, replicas=("point", replicas), unstable_replicas=("point", unstable),
                          **{name: ("point", values) for name, values in columns.items() if name not in ds.coords})
    ds.attrs["band"] = band
    return ds


def entry(ds: xr.Dataset, metric: str, pool: int | None = None, k: int | None = None) -> xr.DataArray:
    """One entry (stat, time) of a metric: pool (from 1; default the first) and k where the
    metric has them."""
    da = ds[metric]
    if "pool" in da.dims:
        pools = [int(v) for v in da["pool"].values]
        p = pools[0] if pool is None else pool
        if p not in pools:
            raise ValueError(f"pool = {pool!r} is not allowed; pools are numbered from 1: {pools}")
        da = da.sel(pool=p)
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
    what = metric + (f"[{pool if pool is not None else 1}]" if "pool" in ds[metric].dims else "")
    what += f"[{k}]" if k is not None and "k" in ds[metric].dims else ""
    ax.set_xlabel("time")
    ax.set_ylabel(what)
    reps = ds.attrs.get("replicas", ds.coords["replicas"].item() if "replicas" in ds.coords else "?")
    ax.set_title(f"{what} over time ({reps} replicas)")
    ax.legend(fontsize="small")
    return ax
