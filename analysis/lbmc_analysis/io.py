"""Read lbmc results files (HDF5, layout versions 1 and 2) into xarray and pandas.

The layout is the contract documented in ``docs/results-format.md`` of the lbmc
repository ("lbmc results file (HDF5), layout version 2"). This module reads it into
the *flat* form (one ``point`` dimension, the file's rows); :mod:`lbmc_analysis.grid`
reshapes that into the job's grid. Which metrics, columns and per-replica datasets a
file holds, their shapes and the names of the flag bits come from the file itself
(:mod:`lbmc_analysis.layout`). Where the reader had to choose (replica padding of
integer datasets, names that collide), the choice is written in :func:`load`.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from typing import Any, Iterable, Mapping

import h5py
import numpy as np
import pandas as pd
import xarray as xr

from ._h5 import (SEAL_ATTR, GridWarning, LbmcDamagedError, LbmcFormatError, UnverifiedWarning, open_hdf5, py_value,
                  read_array)
from ._h5 import check_file as _check_file
from .grid import flatten, grid_dims, to_grid
from .layout import (DOC_FLAG_NAMES, DOC_METRICS, DOC_POINTS, DOC_REPLICA_EXTRAS, SUPPORTED_LAYOUT_VERSIONS,
                     flag_names_of, metric_order, metrics_of, point_columns_of, replica_extras_of)

__all__ = [
    "GridWarning",
    "LbmcDamagedError",
    "LbmcFormatError",
    "PartialResultsWarning",
    "UnverifiedWarning",
    "SUPPORTED_LAYOUT_VERSIONS",
    "METRICS",
    "FLAG_NAMES",
    "flag_names",
    "load",
    "to_frame",
    "to_replica_frame",
    "select_points",
    "metric_names",
    "FRAME_FIXED",
]

#: the documented metrics and their shape after the point axis ("scalar" P, "pool" P x J,
#: "pool_k" P x J x K): what files that do not list their metrics hold. A file's own list
#: (with the quantiles) is :func:`lbmc_analysis.layout.metrics_of`; a loaded Dataset's
#: order is :func:`metric_names`.
METRICS = DOC_METRICS

#: names of the bits of /estimates/M/flags of files that do not list them; a loaded
#: Dataset's are ``ds.attrs["lbmc_flag_names"]`` (the file's), a frame's
#: ``frame.attrs["flag_names"]``.
FLAG_NAMES = DOC_FLAG_NAMES

#: value that integer /replicas datasets hold in a replica slot that was never run.
INT_PAD = -1

_CI_PARTS = ("half_width", "std_err")
#: datasets of a metric group besides ``mean``: the interval, and (layout 2) ``upper_bound``, a
#: one-sided bound for a metric whose event was never observed (NaN elsewhere), the interval's
#: ends ``lower`` and ``upper`` (it need not be symmetric) and ``flags`` (bits named by its
#: attribute ``names``: none_observed, upper_open, unreliable, ...).
_PARTS = _CI_PARTS + ("upper_bound", "lower", "upper", "flags")
#: the columns of :func:`to_frame` that are not point parameters
FRAME_FIXED = ("metric", "pool", "k", "level", "mean", "half_width", "std_err", "upper_bound", "lower",
               "upper", "flags", "replicas")


def flag_names(flags, names=None) -> list:
    """The names of the bits set in ``flags`` (an ``M_flags`` value, or a ``flags`` column of
    :func:`to_frame`): e.g. ``["none_observed"]`` for an event never observed (then the estimate
    is 0 and ``upper_bound`` a one-sided bound), ``["unreliable"]`` for a quantile without an
    interval. ``names``: the file's list (``frame.attrs["flag_names"]``,
    ``ds.attrs["lbmc_flag_names"]``, or the attribute ``names`` of the flags variable);
    default :data:`FLAG_NAMES`. NaN / <NA> gives []."""
    if flags is None or (isinstance(flags, float) and math.isnan(flags)) or flags is pd.NA:
        return []
    names = list(names) if names is not None else list(FLAG_NAMES)
    value = int(flags)
    return [n for b, n in enumerate(names) if value >> b & 1]


class PartialResultsWarning(UserWarning):
    """The file holds the partial results of an interrupted run (root attribute ``complete = 0``)."""


# ----------------------------------------------------------------------------------
# low-level readers
# ----------------------------------------------------------------------------------


def _dset_attrs(dset) -> dict:
    return {k: py_value(v) for k, v in dset.attrs.items() if k != SEAL_ATTR}


def _fail(path, msg):
    raise LbmcFormatError(f"{path}: {msg}")


# ----------------------------------------------------------------------------------
# load
# ----------------------------------------------------------------------------------


def load(path, grid: bool = True) -> xr.Dataset:
    """Load an lbmc results file into an :class:`xarray.Dataset`.

    Follows docs/results-format.md (layout versions 1 and 2).

    ``grid=True`` (the default) returns the *grid form*: the job's grid axes are the
    dimensions (``n``, ``lambda_``, ``policy``, ``mu_2`` for ``pools[2].mu``, ...), so
    ``ds.mean_sojourn.sel(policy="pull", lambda_=0.9).plot(x="n")`` works; it is
    described in :func:`lbmc_analysis.grid.to_grid` (naming, linked axes, missing
    cells). When the grid cannot be recovered from the file (no job text, or a job this
    reader does not understand), the flat form is returned with a
    :class:`lbmc_analysis.GridWarning` saying why.

    ``grid=False`` returns the *flat form*, one ``point`` per row of the file, which
    the rest of this docstring describes. :func:`lbmc_analysis.flatten` turns a grid
    Dataset (or any selection of it) back into this form, and :func:`to_frame`,
    :func:`select_points` and the plots accept either.

    Dimensions and coordinates
        ``point`` (0..P-1, the file's grid-point order), ``pool`` (1..J, numbered as
        pools are in the papers and the job file), ``k`` (1..K, tail levels),
        ``replica`` (0..R-1, replica slots), and ``level`` (quantile levels, from the
        ``levels`` attribute) when a ``*_quantiles`` dataset exists, e.g.
        ``/estimates/sojourn_quantiles`` (P x Q). Every ``/points`` dataset becomes a
        coordinate on ``point`` (1-D) or ``(point, pool)`` (P x J): ``n``,
        ``lambda``, ``rho``, ``policy``, ``d``, ``beta``, ``mu``, ``buffer``,
        ``status``, ``reason`` (why a point is unstable, ``""`` otherwise), ...
        (``ds["lambda"]``; ``lambda`` is a Python keyword, so not ``ds.lambda``).
        Exception: ``/points/replicas`` becomes the coordinate ``point_replicas``
        because ``replicas`` is the data variable below (the doc makes the two equal).

    Data variables
        For each metric M of ``/estimates``: ``M`` (the mean), ``M_half_width``,
        ``M_std_err``, ``M_upper_bound`` when the file has ``/estimates/M/upper_bound``
        (a bound for a metric whose event was never observed, NaN elsewhere) and,
        from ``/replicas/M``, ``M_replicas`` (dims ``point,
        replica`` then the metric's own). ``replicas``: ``/estimates/replicas``, the
        number of replicas behind each estimate. ``/replicas/{warmup, events,
        cpu_seconds, growth, unstable}`` become ``warmup_replicas``,
        ``events_replicas``, ``cpu_seconds_replicas``, ``growth_replicas``,
        ``unstable_replicas``. A ``*_quantiles`` dataset with a ``levels`` attribute
        becomes a variable of dims ``(point, level)``.

    Values
        NaN stays NaN (unstable points, unused replica slots). Integer ``/replicas``
        datasets (``events``, ``unstable``) mark a slot that was never run with -1
        in the file; they are returned as float64 with NaN there (and in every slot
        ``replica >= point_replicas``, whatever the file holds), so that all
        ``*_replicas`` variables are padded alike. Strings are Python ``str``.

    Attributes
        Root attributes go to ``ds.attrs`` (``lbmc_version``, ``layout_version``,
        ``job``, ``seed``, ``confidence``, ``tail_k``, ``shard``, ``complete``, ...)
        plus ``source_path`` and the file's tables (:mod:`lbmc_analysis.layout`):
        ``lbmc_metrics`` (the metrics in order), ``lbmc_point_columns`` (the /points
        columns in order) and ``lbmc_flag_names`` (bit b of a ``flags`` value is
        ``lbmc_flag_names[b]``). Each HDF5 dataset's attributes (``units``,
        ``description``) go to the variable's or coordinate's ``attrs``;
        ``M_half_width`` also gets ``confidence``; a metric group's own
        ``description`` (``/estimates/M``) becomes ``metric_description`` of ``M``.

    Partial results
        A file whose root attribute ``complete`` is 0 holds the points an
        interrupted run had finished (``lbmc run --resume`` completes it): it loads,
        with a :class:`PartialResultsWarning`.

    Forward compatibility
        Datasets and groups this reader does not know are ignored, as the doc asks
        ("a reader must ignore datasets it does not know"); unknown metric groups
        under ``/estimates`` whose shape is P, P x J or P x J x K are loaded like the
        known metrics.

    Checksums
        Every value is checked first against the file's checksums (docs/results-format.md,
        "Checksums": Fletcher32 on numeric datasets, a SHA-256 per dataset and of the
        whole content): a damaged file raises :class:`LbmcDamagedError` naming the
        dataset. A file without checksums (written by an lbmc before they were added)
        loads with an :class:`UnverifiedWarning`.

    Raises
        ``FileNotFoundError`` if ``path`` does not exist; :class:`LbmcDamagedError` (a
        :class:`LbmcFormatError`) if it fails its checksums; :class:`LbmcFormatError`
        (a ``ValueError``) if it is not an HDF5 file, not an lbmc results file (no
        root attribute ``layout_version``), has an unsupported ``layout_version``, or
        breaks the layout in a way that prevents loading. The message names the
        file and what was found.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if os.path.isdir(path):
        raise LbmcFormatError(f"{path}: is a directory, not an lbmc results file")
    if not h5py.is_hdf5(path):
        with open(path, "rb") as fh:
            head = fh.read(16)
        raise LbmcFormatError(
            f"{path}: not an HDF5 file (it starts with {head!r}); expected an lbmc results "
            f"file written by `lbmc run` or `lbmc merge`"
        )
    sealed = _check_file(path)  # every value read and checked, in a process of its own
    fh = open_hdf5(path)  # LbmcDamagedError where the library cannot open it (e.g. truncated)
    with fh:
        if not sealed:
            warnings.warn(UnverifiedWarning(f"{path} has no checksums (written by an lbmc before they were "
                                            f"added): its numbers cannot be verified"), stacklevel=2)
        flat = _read(fh, path)
        if not grid:
            return flat
        dims = grid_dims(fh, flat, path)
    return to_grid(flat, dims) if dims is not None else flat


def _layout_version(f, path):
    attrs = f.attrs
    if "layout_version" not in attrs:
        hint = ""
        if path.endswith(".ckpt"):
            hint = " (this looks like a checkpoint file; load the results file instead)"
        _fail(
            path,
            "not an lbmc results file: the root has no 'layout_version' attribute "
            f"(root attributes: {sorted(attrs.keys()) or 'none'}; top-level objects: "
            f"{sorted(f.keys()) or 'none'}){hint}",
        )
    raw = py_value(attrs["layout_version"])
    try:
        lv = int(raw)
        if lv != raw:
            raise ValueError
    except (TypeError, ValueError):
        _fail(path, f"layout_version {raw!r} is not an integer")
    if lv not in SUPPORTED_LAYOUT_VERSIONS:
        supported = ", ".join(map(str, SUPPORTED_LAYOUT_VERSIONS))
        _fail(
            path,
            f"unsupported layout_version {lv} (this lbmc_analysis reads layout version {supported}); "
            f"the file was written by lbmc {py_value(attrs.get('lbmc_version', 'of unknown version'))}: "
            f"update lbmc_analysis",
        )
    return lv


def _metric_dims(shape_after_point, J, K, levels, level_dim):
    """Dims after ``point`` for a metric of this shape, or None if it fits no known layout."""
    s = tuple(shape_after_point)
    if levels is not None and len(s) == 1 and s[0] == len(levels):
        return (level_dim,)
    if s == ():
        return ()
    if s == (J,):
        return ("pool",)
    if s == (J, K):
        return ("pool", "k")
    return None


def _levels_of(obj):
    for holder in (obj, obj.get("mean") if isinstance(obj, h5py.Group) else None):
        if holder is not None and "levels" in holder.attrs:
            return np.atleast_1d(np.asarray(holder.attrs["levels"], dtype=float))
    return None


class _Shape:
    """Sizes of a file: P points, J pools, K tail levels, R replica slots (None: no /replicas);
    and its tables (:mod:`lbmc_analysis.layout`): ``metrics`` and ``points`` ({name: shape}),
    ``extras`` (the /replicas datasets that are not metrics)."""

    def __init__(self, P, J, K):
        self.P, self.J, self.K, self.R = P, J, K, None
        self.metrics, self.points, self.extras = dict(DOC_METRICS), dict(DOC_POINTS), DOC_REPLICA_EXTRAS

    def read_tables(self, f):
        """The tables of the open file ``f`` (the documented ones for files without them)."""
        self.metrics, self.points, self.extras = metrics_of(f), point_columns_of(f), replica_extras_of(f)


class _Levels:
    """Quantile-level dimensions met so far: equal level lists share one dimension."""

    def __init__(self):
        self.coords: dict[str, np.ndarray] = {}

    def dim_for(self, metric, levels, n_values):
        """Dim name for ``levels`` (shared when equal); None if ``n_values`` does not fit them."""
        if levels is None or n_values != len(levels):
            return None
        for dim, lev in self.coords.items():
            if len(lev) == len(levels) and np.allclose(lev, levels):
                return dim
        return "level" if "level" not in self.coords else f"level_{metric}"

    def size(self, dim):
        return len(self.coords[dim])


def _read(f: h5py.File, path: str) -> xr.Dataset:
    """The flat Dataset of an open results file (see :func:`load`, ``grid=False``)."""
    root_attrs = {k: py_value(v) for k, v in f.attrs.items()}
    root_attrs["layout_version"] = _layout_version(f, path)
    pts = _group(f, "points")
    if pts is None:
        _fail(path, f"no /points group (top-level objects: {sorted(f.keys()) or 'none'})")
    est, rep = _group(f, "estimates"), _group(f, "replicas")
    shape = _file_shape(pts, est, root_attrs, path)
    shape.read_tables(f)
    root_attrs["lbmc_metrics"] = list(shape.metrics)
    root_attrs["lbmc_point_columns"] = list(shape.points)
    root_attrs["lbmc_flag_names"] = list(flag_names_of(f))
    levels = _Levels()
    coords = _point_coords(pts, shape, path)
    data_vars, metric_dims = _estimate_vars(est, shape, levels, root_attrs, path)
    n_run = coords["point_replicas"][1] if "point_replicas" in coords else (
        data_vars["replicas"][1] if "replicas" in data_vars else None)
    data_vars.update(_replica_vars(rep, shape, levels, metric_dims, n_run, path))
    return _assemble(coords, data_vars, shape, levels, root_attrs, path)


def _group(f, name):
    obj = f.get(name)
    return obj if isinstance(obj, h5py.Group) else None


def _file_shape(pts, est, root_attrs, path) -> _Shape:
    """P from /points/n, J from /points/beta, K from ``tail_k`` and /estimates/tail (they must agree)."""
    if not isinstance(pts.get("n"), h5py.Dataset) or pts["n"].ndim != 1:
        _fail(path, f"/points has no 1-D dataset 'n' (found: {sorted(pts.keys())})")
    P = pts["n"].shape[0]
    beta = pts.get("beta")
    if not (isinstance(beta, h5py.Dataset) and beta.ndim == 2 and beta.shape[0] == P):
        _fail(path, f"/points/beta must be a P x J dataset (P = {P}); found {None if beta is None else beta.shape}")
    J = beta.shape[1]
    K = None
    if "tail_k" in root_attrs:
        try:
            K = int(root_attrs["tail_k"])
        except (TypeError, ValueError):
            _fail(path, f"root attribute tail_k {root_attrs['tail_k']!r} is not an integer")
    if est is not None and isinstance(est.get("tail"), h5py.Group) and "mean" in est["tail"]:
        shp = est["tail"]["mean"].shape
        if len(shp) != 3 or shp[:2] != (P, J):
            _fail(path, f"/estimates/tail/mean has shape {shp}, expected (P, J, K) = ({P}, {J}, K)")
        if K is not None and shp[2] != K:
            _fail(path, f"/estimates/tail/mean has K = {shp[2]} levels but the root attribute tail_k is {K}")
        K = shp[2]
    return _Shape(P, J, K if K is not None else 0)


def _point_coords(pts, shape, path) -> dict:
    """/points datasets of shape P or P x J -> coordinates on ``point`` or ``(point, pool)``."""
    P, J = shape.P, shape.J
    coords = {}
    for name, obj in pts.items():
        if not isinstance(obj, h5py.Dataset):
            continue
        arr = read_array(obj)
        if arr.shape == (P,):
            dims = ("point",)
        elif arr.shape == (P, J):
            dims = ("point", "pool")
        elif shape.points.get(name) in ("P", "P x J"):
            want = "(P,)" if shape.points[name] == "P" else "(P, J)"
            _fail(path, f"/points/{name} has shape {arr.shape}, expected {want} with P = {P}, J = {J}")
        else:
            continue  # unknown and of unknown shape (e.g. mu_k, P x J x L): ignore
        cname = "point_replicas" if name == "replicas" else name
        coords[cname] = (dims, arr, _dset_attrs(obj))
    return coords


def _metric_parts(name, obj, levels):
    """{suffix: dataset} of one /estimates entry ("" = mean), or None if it is not a metric."""
    if isinstance(obj, h5py.Group) and isinstance(obj.get("mean"), h5py.Dataset):
        parts = {"": obj["mean"]}
        parts.update({"_" + c: obj[c] for c in _PARTS if isinstance(obj.get(c), h5py.Dataset)})
        return parts
    if isinstance(obj, h5py.Dataset) and levels is not None:
        return {"": obj}  # e.g. /estimates/sojourn_quantiles, P x Q, no interval
    return None


def _estimate_vars(est, shape, levels, root_attrs, path):
    """/estimates -> ({variable: (dims, array, attrs)}, {metric: dims after point})."""
    P = shape.P
    data_vars: dict[str, Any] = {}
    metric_dims: dict[str, tuple] = {}
    if est is None:
        return data_vars, metric_dims
    for name, obj in est.items():
        if name == "replicas" and isinstance(obj, h5py.Dataset):
            arr = read_array(obj)
            if arr.shape != (P,):
                _fail(path, f"/estimates/replicas has shape {arr.shape}, expected ({P},)")
            data_vars["replicas"] = (("point",), arr, _dset_attrs(obj))
            continue
        lev = _levels_of(obj)
        parts = _metric_parts(name, obj, lev)
        if parts is None:
            continue
        mshape = parts[""].shape
        known = shape.metrics.get(name)
        if len(mshape) == 0 or mshape[0] != P:
            if known:
                _fail(path, f"/estimates/{name}: mean has shape {mshape}, first axis must be P = {P}")
            continue
        ldim = levels.dim_for(name, lev, mshape[1] if len(mshape) == 2 else -1)
        dims = _metric_dims(mshape[1:], shape.J, shape.K, lev if ldim else None, ldim)
        if dims is None or (known and dims != _expected_dims(known, ldim)):
            if known:
                _fail(path, f"/estimates/{name}/mean has shape {mshape}, expected "
                            f"{_expected_shape(known, P, shape.J, shape.K)}")
            continue
        if ldim:
            levels.coords[ldim] = lev
        metric_dims[name] = dims
        for suffix, dset in parts.items():
            arr = read_array(dset)
            if arr.shape != mshape:
                _fail(path, f"/estimates/{name}/{suffix[1:]} has shape {arr.shape}, but mean has {mshape}")
            data_vars[name + suffix] = (("point",) + dims, arr, _estimate_attrs(obj, dset, suffix, root_attrs))
    return data_vars, metric_dims


def _estimate_attrs(obj, dset, suffix, root_attrs):
    """A dataset's attributes; the mean also gets its group's units and description."""
    attrs = _dset_attrs(dset)
    if suffix == "" and isinstance(obj, h5py.Group) and "description" in obj.attrs:
        attrs.setdefault("metric_description", py_value(obj.attrs["description"]))
        attrs.setdefault("units", py_value(obj.attrs.get("units", "")))
    if suffix == "_half_width" and "confidence" in root_attrs:
        attrs.setdefault("confidence", root_attrs["confidence"])
    return attrs


def _replica_count(rep, P):
    """R: the second axis of the first P x R dataset of /replicas (None if there is none)."""
    for key in ("warmup", "p_wait", *rep.keys()):
        obj = rep.get(key)
        if isinstance(obj, h5py.Dataset) and obj.ndim >= 2 and obj.shape[0] == P:
            return obj.shape[1]
    return None


def _replica_dims(name, obj, shape, levels, metric_dims, path):
    """Dims after (point, replica) of /replicas/name, or None to skip it."""
    if name in metric_dims:
        dims = metric_dims[name]
        want = tuple(_dim_size(d, shape.J, shape.K, levels) for d in dims)
        if tuple(obj.shape[2:]) != want:
            _fail(path, f"/replicas/{name} has shape {obj.shape}, inconsistent with /estimates/{name}")
        return dims
    lev = _levels_of(obj)
    ldim = levels.dim_for(name, lev, obj.shape[2] if obj.ndim == 3 else -1)
    dims = _metric_dims(obj.shape[2:], shape.J, shape.K, lev if ldim else None, ldim)
    if dims is not None and ldim:
        levels.coords[ldim] = lev
    return dims


def _mask_unrun(arr, n_run, R):
    """Integer per-replica data -> float64, NaN in the -1 padding and in every slot >= the point's replicas."""
    pad = arr == INT_PAD if arr.dtype.kind == "i" else np.zeros(arr.shape, dtype=bool)
    arr = np.where(pad, np.nan, arr.astype(np.float64))
    if n_run is not None:
        # slots a point never ran; a NaN count marks all its slots unused
        unused = ~(np.arange(R)[None, :] < np.asarray(n_run, dtype=float)[:, None])
        unused = unused.reshape(unused.shape + (1,) * (arr.ndim - 2))
        arr = np.where(np.broadcast_to(unused, arr.shape), np.nan, arr)
    return arr


def _replica_vars(rep, shape, levels, metric_dims, n_run, path) -> dict:
    """/replicas/M -> ``M_replicas`` of dims (point, replica, ...); sets ``shape.R``."""
    out: dict[str, Any] = {}
    if rep is None:
        return out
    P = shape.P
    R = shape.R = _replica_count(rep, P)
    if R is None:
        return out
    for name, obj in rep.items():
        if not isinstance(obj, h5py.Dataset) or obj.ndim < 2:
            continue
        if obj.shape[0] != P or obj.shape[1] != R:
            if name in shape.metrics or name in shape.extras:
                _fail(path, f"/replicas/{name} has shape {obj.shape}, expected (P, R, ...) = ({P}, {R}, ...)")
            continue
        dims = _replica_dims(name, obj, shape, levels, metric_dims, path)
        if dims is None:
            continue
        arr = read_array(obj)
        if arr.dtype.kind in "iub":
            arr = _mask_unrun(arr, n_run, R)
        out[f"{name}_replicas"] = (("point", "replica") + dims, arr, _dset_attrs(obj))
    return out


def _assemble(coords, data_vars, shape, levels, root_attrs, path) -> xr.Dataset:
    """The Dataset from its parts, with the index coordinates; warns on partial results."""
    coords["point"] = ("point", np.arange(shape.P))
    coords["pool"] = ("pool", np.arange(1, shape.J + 1))
    coords["k"] = ("k", np.arange(1, shape.K + 1))
    if shape.R is not None:
        coords["replica"] = ("replica", np.arange(shape.R))
    for dim, lev in levels.coords.items():
        coords[dim] = (dim, lev, {"description": "quantile level (probability)", "units": "1"})
    ds = xr.Dataset(
        {k: xr.Variable(*v) for k, v in data_vars.items()},
        coords={k: xr.Variable(*v) if isinstance(v, tuple) else v for k, v in coords.items()},
        attrs=root_attrs,
    )
    ds.attrs["source_path"] = os.path.abspath(path)
    if "complete" in root_attrs and root_attrs["complete"] in (0, False):
        warnings.warn(
            f"{path}: partial results (root attribute complete = 0): the run that wrote it was "
            f"interrupted; finish it with `lbmc run JOB --resume`",
            PartialResultsWarning,
            stacklevel=4,
        )
    return ds


def _expected_dims(kind, level_dim=None):
    """Dims after ``point`` of a metric of shape ``kind`` (a quantile metric: its level dim)."""
    return {"scalar": (), "pool": ("pool",), "pool_k": ("pool", "k"), "quantile": (level_dim,)}.get(kind)


def _expected_shape(kind, P, J, K):
    return {"scalar": f"({P},)", "pool": f"({P}, {J})", "pool_k": f"({P}, {J}, {K})",
            "quantile": f"({P}, Q) with a 'levels' attribute of Q levels"}.get(kind, "?")


def _dim_size(dim, J, K, levels):
    if dim == "pool":
        return J
    if dim == "k":
        return K
    return levels.size(dim)


# ----------------------------------------------------------------------------------
# helpers on a loaded dataset
# ----------------------------------------------------------------------------------


def _as_dataset(obj) -> xr.Dataset:
    """The flat form of ``obj``: a path, or a Dataset from :func:`load` (grid or flat)."""
    if isinstance(obj, xr.Dataset):
        return flatten(obj)
    if isinstance(obj, (str, os.PathLike)):
        return load(obj, grid=False)
    raise TypeError(f"expected an xarray.Dataset from lbmc_analysis.load or a path, got {type(obj).__name__}")


def metric_names(ds: xr.Dataset) -> list[str]:
    """Names of the metrics in a loaded dataset (variables with a mean), in the file's order.

    These are the base names; :func:`lbmc_analysis.metrics.parse_metric` reads a name with
    its pool, level or quantile (``tail[2][3]``)."""
    suffixes = tuple("_" + c for c in _PARTS) + ("_replicas",)
    names = [v for v in ds.data_vars if v != "replicas" and not str(v).endswith(suffixes)]
    order = {m: i for i, m in enumerate(metric_order(ds.attrs))}
    return sorted(names, key=lambda m: (order.get(m, len(order)), m))


def _point_params(ds: xr.Dataset) -> pd.DataFrame:
    """One row per point: every point coordinate; (point, pool) ones as name_1..name_J."""
    cols: dict[str, Any] = {"point": ds["point"].values}
    columns = ds.attrs.get("lbmc_point_columns", list(DOC_POINTS))
    rank = {("point_replicas" if k == "replicas" else k): i for i, k in enumerate(columns)}
    names = sorted((str(k) for k in ds.coords), key=lambda k: (rank.get(k, len(rank)), k))
    for name in names:
        c = ds.coords[name]
        if name in ("point",) or c.dims == ():
            continue
        if c.dims == ("point",):
            cols[name] = c.values
        elif c.dims == ("point", "pool"):
            for i, j in enumerate(ds["pool"].values):
                cols[f"{name}_{int(j)}"] = c.values[:, i]
    return pd.DataFrame(cols)


def to_frame(data, metrics: Iterable[str] | None = None) -> pd.DataFrame:
    """Tidy table of the estimates: one row per point and metric component.

    ``data`` is a path or a Dataset from :func:`load` (grid or flat form, or a
    selection of either). Columns: ``point`` (row of
    the file), every point parameter (``index``, ``n``, ``lambda``, ``rho``,
    ``policy``, ``policy_name``, ``d``, ``sampling``, ``routers``, ``stale``,
    ``time``, ``warmup``, ``batches``, ``point_replicas``, ``status`` (ok, not_stationary,
    unstable, precision_not_met), ``reason``, ``evidence``, ``warmup_used``, ...; the per-pool
    ones as ``beta_1 .. beta_J``, ``mu_1 ..``, ``buffer_1 ..``, ``pool_servers_1 ..``),
    then ``metric``, ``pool`` (1-based; <NA> for scalar metrics), ``k`` (tail level;
    <NA> otherwise), ``level`` (only when quantiles exist; NaN otherwise), ``mean``,
    ``half_width``, ``std_err`` (NaN where the file has none, e.g. quantiles),
    ``upper_bound`` (only when the file has one: a bound for a metric whose event was
    never observed, NaN elsewhere), ``lower``, ``upper`` and ``flags`` (layout 2: the
    interval's ends, NaN where an end does not exist, and its flag bits, named by
    :func:`lbmc_analysis.flag_names`) and ``replicas`` (number behind the estimate); a metric
    that is infinite (a mean wait with a service law of infinite variance) has ``mean`` inf,
    flag ``infinite`` and no interval, and one whose estimator has an infinite variance flag
    ``heavy_tail`` and no interval. ``metrics`` restricts the metrics.
    Units per metric are in ``frame.attrs["units"]``, their one-sentence
    descriptions in ``frame.attrs["descriptions"]``; ``frame.attrs["params"]`` holds
    the units and description of each point column, ``frame.attrs["confidence"]`` the
    level of the intervals, ``frame.attrs["flag_names"]`` the names of the flag bits, ``frame.attrs["policy_messages"]`` the message rule of each
    policy family (:func:`lbmc_analysis.policies.message_rules`). ``status`` and ``reason`` say
    why an unstable point's ``mean`` is NaN, or why a not_stationary point's numbers are not
    to be trusted (run longer: ``suggested_time``).
    """
    ds = _as_dataset(data)
    names = metric_names(ds)
    if metrics is not None:
        wanted = [metrics] if isinstance(metrics, str) else list(metrics)
        unknown = [m for m in wanted if m not in names]
        if unknown:
            raise KeyError(f"no metric(s) {unknown} in the dataset; it has {names}")
        names = wanted
    params = _point_params(ds)
    frames = []
    for m in names:
        parts = {"mean": ds[m].variable}
        for c in _PARTS:
            if f"{m}_{c}" in ds:
                parts[c] = ds[f"{m}_{c}"].variable
        dims = ds[m].dims
        sub = xr.Dataset(parts, coords={d: ds[d].values for d in dims})
        df = sub.to_dataframe().reset_index()
        for d in dims:
            if d.startswith("level_"):
                df = df.rename(columns={d: "level"})
        df.insert(1, "metric", m)
        frames.append(df)
    has_level = any(d.startswith("level") for m in names for d in ds[m].dims)
    has_bound = any(f"{m}_upper_bound" in ds for m in names)
    has_ends = [c for c in ("lower", "upper", "flags") if any(f"{m}_{c}" in ds for m in names)]
    cols = (["point", "metric", "pool", "k"] + (["level"] if has_level else []) + ["mean", "half_width", "std_err"]
            + (["upper_bound"] if has_bound else []) + has_ends)
    if frames:
        long = pd.concat(frames, ignore_index=True, sort=False)
    else:
        long = pd.DataFrame(columns=cols)
    for c in cols:
        if c not in long.columns:
            long[c] = np.nan
    long = long[cols]
    long["pool"] = long["pool"].astype("Int64")
    long["k"] = long["k"].astype("Int64")
    for c in ("mean", "half_width", "std_err") + (("level",) if has_level else ()) + (("upper_bound",) if has_bound else ()) \
            + tuple(c for c in has_ends if c != "flags"):
        long[c] = long[c].astype(float)
    if "flags" in has_ends:
        long["flags"] = long["flags"].astype("Int64")
    order = {m: i for i, m in enumerate(names)}
    long["_m"] = long["metric"].map(order)
    long = long.sort_values(["point", "_m"], kind="stable").drop(columns="_m")
    out = params.merge(long, on="point", how="right", validate="one_to_many")
    if "replicas" in ds:
        out["replicas"] = out["point"].map(dict(zip(ds["point"].values, ds["replicas"].values)))
    else:
        out["replicas"] = np.nan
    out = out.reset_index(drop=True)
    out.attrs["units"] = {m: ds[m].attrs.get("units") for m in names}
    out.attrs["descriptions"] = {m: ds[m].attrs.get("metric_description", ds[m].attrs.get("description"))
                                 for m in names}
    out.attrs["source_path"] = ds.attrs.get("source_path")
    out.attrs["confidence"] = ds.attrs.get("confidence")
    out.attrs["flag_names"] = list(ds.attrs.get("lbmc_flag_names", FLAG_NAMES))
    out.attrs["params"] = {("point_replicas" if k == "replicas" else k): {a: ds[k].attrs.get(a) for a in
                                                                          ("units", "description")}
                           for k in ds.coords if ds[k].dims[:1] == ("point",)}
    from .policies import message_rules

    out.attrs["policy_messages"] = message_rules(ds["policy_name"].attrs) if "policy_name" in ds.coords else None
    return out


def to_replica_frame(data, metrics: Iterable[str] | None = None) -> pd.DataFrame:
    """Tidy table of per-replica values (for bootstrapping or re-weighting).

    Like :func:`to_frame` but one row per point, metric component and replica slot,
    with columns ``replica`` and ``value`` instead of the interval columns. Slots a
    point never ran (``replica >= point_replicas``) are dropped; NaN values of
    replicas that ran (e.g. stopped as unstable) are kept.
    """
    ds = _as_dataset(data)
    names = [m for m in metric_names(ds) if f"{m}_replicas" in ds]
    if metrics is not None:
        wanted = [metrics] if isinstance(metrics, str) else list(metrics)
        unknown = [m for m in wanted if m not in names]
        if unknown:
            raise KeyError(f"no per-replica values for {unknown}; available: {names}")
        names = wanted
    params = _point_params(ds)
    frames = []
    for m in names:
        da = ds[f"{m}_replicas"]
        sub = xr.Dataset({"value": da.variable}, coords={d: ds[d].values for d in da.dims})
        df = sub.to_dataframe().reset_index()
        for d in da.dims:
            if d.startswith("level_"):
                df = df.rename(columns={d: "level"})
        df.insert(1, "metric", m)
        frames.append(df)
    if not frames:
        return params.iloc[0:0].assign(metric=[], replica=[], value=[])
    long = pd.concat(frames, ignore_index=True, sort=False)
    for c in ("pool", "k"):
        long[c] = (long[c] if c in long else pd.Series(np.nan, index=long.index)).astype("Int64")
    if "point_replicas" in ds.coords:
        runs = dict(zip(ds["point"].values, ds["point_replicas"].values))
        long = long[long["replica"] < long["point"].map(runs)]
    out = params.merge(long, on="point", how="right")
    front = list(params.columns) + ["metric", "pool", "k"] + (["level"] if "level" in out else []) + ["replica", "value"]
    return out[front].reset_index(drop=True)


def _match(values, cond):
    values = np.asarray(values)
    if callable(cond):
        return np.asarray([bool(cond(v)) for v in values])
    conds = list(cond) if isinstance(cond, (list, tuple, set, np.ndarray)) and not isinstance(cond, str) else [cond]
    mask = np.zeros(values.shape, dtype=bool)
    for c in conds:
        if isinstance(c, (int, float, np.number)) and not isinstance(c, bool) and values.dtype.kind in "iuf":
            mask |= np.isclose(values.astype(float), float(c), rtol=1e-12, atol=0) | (values == c)
        else:
            mask |= values == c
    return mask


def select_points(ds: xr.Dataset, conditions: Mapping[str, Any] | None = None, **kw) -> xr.Dataset:
    """The points of ``ds`` whose coordinates match every condition, as a flat Dataset.

    ``ds`` may be in the grid form (it is flattened first; on a grid Dataset
    ``ds.sel(...)`` is the usual way). A condition is a value (floats compared to 1e-12 relative), a list of values,
    or a predicate. Per-pool coordinates are addressed as ``name_j`` (``beta_1``).
    ``lambda`` is a Python keyword, so pass it in the mapping:
    ``select_points(ds, {"lambda": 0.9}, policy="pull")``.
    """
    ds = _as_dataset(ds)
    conds = dict(conditions or {})
    conds.update(kw)
    mask = np.ones(ds.sizes["point"], dtype=bool)
    for key, cond in conds.items():
        if key in ds.coords and ds[key].dims == ("point",):
            values = ds[key].values
        else:
            m = re.fullmatch(r"(.+)_(\d+)", key)
            if not (m and m.group(1) in ds.coords and ds[m.group(1)].dims == ("point", "pool")):
                raise KeyError(f"no point coordinate {key!r}; available: {sorted(str(c) for c in ds.coords)}")
            values = ds[m.group(1)].sel(pool=int(m.group(2))).values
        mask &= _match(values, cond)
    return ds.isel(point=np.flatnonzero(mask))
