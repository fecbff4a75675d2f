"""Check a results file against docs/results-format.md (layout versions 1 and 2), item by item.

:func:`check_file` lists every deviation it finds instead of stopping at the first,
so a test on a file written by the real ``lbmc run`` can print them all:

    problems = check_file("out.h5")
    assert not problems, "\\n".join(problems)

It checks what the document states: root attributes and their types; the
``/points``, ``/estimates`` and ``/replicas`` datasets, shapes and types; strings
variable-length UTF-8 (datasets and attributes); ``units`` and ``description`` on
every dataset and every ``/estimates/<metric>`` group, with the units the document
gives (``"1/time"`` for rates, ``"time"``, ``"s"`` for CPU seconds); value domains
(``status``, ``sampling``, ``stale``; ``policy_name`` within the file's own list of
policies, the attribute ``allowed``, when it has one; ``buffer``, ``beta`` summing
to 1, ``pool_servers`` summing to ``n``, ``rho = lambda / sum beta mu``,
``complete`` 0 or 1); ``/points/replicas`` equal to ``/estimates/replicas``; a
non-empty ``reason`` exactly at unstable points; NaN estimates at unstable points;
padding of ``/replicas`` slots beyond a point's replicas (NaN in float datasets, -1
in integer ones) and ``unstable`` 0 or 1 in the slots that ran. Extra (unknown)
datasets are allowed, as the document says.

Which metrics, ``/points`` columns and other ``/replicas`` datasets a file must hold, and
their shapes, are the file's own tables (:mod:`lbmc_analysis.layout`; the documented ones
for files written before the tables); it must then hold every one it lists, and every
documented one. The units the document states for particular datasets are checked
(``DOC_UNITS``); every other dataset's units are ``"1"``, and a metric's are its group's.
"""

from __future__ import annotations

import os
import re

import h5py
import numpy as np

from .layout import (DOC_METRICS, DOC_POINTS, DOC_REPLICA_EXTRAS, SUPPORTED_LAYOUT_VERSIONS, metrics_of,
                     point_columns_of, replica_extras_of)
from .policies import allowed_policies, as_list

__all__ = ["check_file"]

# root attribute -> expected kind ("str", "int", "float")
ROOT_ATTRS = {
    "lbmc_version": "str",
    "layout_version": "int",
    "created": "str",
    "job": "str",
    "seed": "int",
    "mpi_ranks": "int",
    "wall_seconds": "float",
    "confidence": "float",
    "tail_k": "int",
    "shard": "str",
    "complete": "int",
}

# the units docs/results-format.md states for particular datasets ("1/time" for rates,
# "time" for model time, "s" for CPU seconds); every other /points, /replicas and metric
# dataset is "1"
DOC_UNITS = {"lambda": "1/time", "mu": "1/time", "time": "time", "warmup": "time", "warmup_used": "time",
             "time_used": "time", "time_run": "time", "suggested_time": "time", "mu_k": "1/time",
             "mean_sojourn": "time", "mean_wait": "time", "throughput": "1/time", "sojourn_quantiles": "time",
             "wait_quantiles": "time", "cpu_seconds": "s"}

_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$")


def _is_vlen_utf8(dtype):
    info = h5py.check_string_dtype(dtype)
    return info is not None and info.length is None and info.encoding == "utf-8"


def _kind_ok(dtype, kind):
    if kind == "s":
        return _is_vlen_utf8(dtype)
    if kind == "i":
        return dtype.kind in "iu"
    if kind == "f":
        return dtype.kind == "f" and dtype.itemsize == 8
    return False


def _attr_kind_ok(attrs, name, kind):
    dt = attrs.get_id(name).dtype
    if kind == "str":
        return _is_vlen_utf8(dt), "a variable-length UTF-8 string"
    if kind == "int":
        return (dt.kind in "iu" and np.ndim(attrs[name]) == 0), "a scalar integer"
    return (dt.kind == "f" and np.ndim(attrs[name]) == 0), "a scalar floating-point number"


def _check_dset_attrs(dset, where, problems, units=None):
    for a in ("units", "description"):
        if a not in dset.attrs:
            problems.append(f"{where}: missing attribute '{a}'")
        elif not _is_vlen_utf8(dset.attrs.get_id(a).dtype):
            problems.append(f"{where}: attribute '{a}' is not a variable-length UTF-8 string")
        elif a == "description" and not str(dset.attrs[a]).strip():
            problems.append(f"{where}: attribute 'description' is empty")
    if units is not None and "units" in dset.attrs and dset.attrs["units"] != units:
        problems.append(f"{where}: units {dset.attrs['units']!r}, the doc says {units!r}")


def _check_policy_attrs(pts, problems):
    """The optional policy attributes of /points/policy_name (lbmc_analysis.policies) are consistent."""
    d = pts.get("policy_name")
    if not isinstance(d, h5py.Dataset):
        return
    names = allowed_policies(dict(d.attrs))
    rules = as_list(d.attrs.get("messages_per_arrival"))
    if rules is not None:
        if names is None or len(rules) != len(names):
            problems.append(f"/points/policy_name: attribute 'messages_per_arrival' has {len(rules)} entries, "
                            f"'allowed' {'is missing' if names is None else f'has {len(names)}'}")


def _kind(dtype):
    """The layout's type of a dataset: "i" (int64), "f" (double), "s" (variable-length UTF-8),
    or None for any other."""
    if _is_vlen_utf8(dtype):
        return "s"
    if dtype.kind == "i" and dtype.itemsize == 8:
        return "i"
    return "f" if dtype.kind == "f" and dtype.itemsize == 8 else None


def _shape_ok(shape, table_shape, P, J):
    """Does a /points dataset's shape fit its table shape ("P", "P x J", "P x J x L")?"""
    if table_shape == "P x J x L":
        return len(shape) == 3 and shape[:2] == (P, J) and shape[2] >= 1
    return shape == ((P,) if table_shape == "P" else (P, J))


def _check_points(pts, columns, P, J, problems) -> dict:
    """Every column the file lists (and every documented one) exists with its shape, one of
    the layout's types, units and description; returns {name: values}."""
    vals = {}
    for name, table_shape in {**DOC_POINTS, **columns}.items():
        d = pts.get(name)
        where = f"/points/{name}"
        if not isinstance(d, h5py.Dataset):
            problems.append(f"{where}: missing")
            continue
        if not _shape_ok(d.shape, table_shape, P, J):
            problems.append(f"{where}: shape {d.shape}, expected {table_shape} with P = {P}, J = {J}")
        kind = _kind(d.dtype)
        if kind is None:
            problems.append(f"{where}: dtype {d.dtype} ({h5py.check_string_dtype(d.dtype)}), expected int64, "
                            f"double or a variable-length UTF-8 string")
        _check_dset_attrs(d, where, problems, DOC_UNITS.get(name, "1"))
        vals[name] = d.asstr()[()] if h5py.check_string_dtype(d.dtype) else d[()]
    return vals


def check_file(path) -> list[str]:
    """Return the list of deviations of ``path`` from docs/results-format.md (empty if none)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        return [f"{path}: no such file"]
    if not h5py.is_hdf5(path):
        return [f"{path}: not an HDF5 file"]
    problems: list[str] = []
    with h5py.File(path, "r") as f:
        _check(f, problems)
    return problems


def _check(f, problems):
    attrs = f.attrs
    for name, kind in ROOT_ATTRS.items():
        if name not in attrs:
            problems.append(f"root: missing attribute '{name}'")
            continue
        ok, what = _attr_kind_ok(attrs, name, kind)
        if not ok:
            problems.append(f"root: attribute '{name}' should be {what}, found dtype {attrs.get_id(name).dtype}")
    if "layout_version" in attrs and attrs["layout_version"] not in SUPPORTED_LAYOUT_VERSIONS:
        problems.append(f"root: layout_version is {attrs['layout_version']!r}, expected one of "
                        f"{SUPPORTED_LAYOUT_VERSIONS}")
    if "created" in attrs and isinstance(attrs["created"], str) and not _ISO.match(attrs["created"]):
        problems.append(f"root: 'created' = {attrs['created']!r} is not ISO 8601 date-time (e.g. 2026-11-29T17:03:00Z)")
    if "confidence" in attrs and not (0 < float(attrs["confidence"]) < 1):
        problems.append(f"root: confidence {attrs['confidence']!r} not in (0, 1)")
    if "shard" in attrs and isinstance(attrs["shard"], str) and attrs["shard"] and not re.fullmatch(r"\d+/\d+", attrs["shard"]):
        problems.append(f"root: shard {attrs['shard']!r} is neither '' nor 'i/k'")
    if "mpi_ranks" in attrs and int(attrs["mpi_ranks"]) < 1:
        problems.append("root: mpi_ranks < 1")
    if "complete" in attrs and np.ndim(attrs["complete"]) == 0 and attrs["complete"] not in (0, 1):
        problems.append(f"root: complete is {attrs['complete']!r}, expected 0 or 1")

    pts = f.get("points")
    if not isinstance(pts, h5py.Group):
        problems.append("missing group /points")
        return
    if "n" not in pts:
        problems.append("/points: missing dataset 'n'")
        return
    P = pts["n"].shape[0] if pts["n"].ndim == 1 else -1
    J = pts["beta"].shape[1] if isinstance(pts.get("beta"), h5py.Dataset) and pts["beta"].ndim == 2 else -1
    K = int(attrs["tail_k"]) if "tail_k" in attrs else -1
    vals = _check_points(pts, point_columns_of(f), P, J, problems)

    def domain(name, doc_values):
        """Values of /points/name within its ``allowed`` attribute (the program's own list) if the
        file has one, else within the values the doc gives (None: any identifier)."""
        if name not in vals:
            return
        listed = allowed_policies(dict(pts[name].attrs)) if "allowed" in pts[name].attrs else None
        if listed is not None:
            allowed = set(listed)
            source = "its 'allowed' attribute"
        elif doc_values is not None:
            allowed = set(doc_values)
            source = "the doc's values"
        else:
            bad = sorted({str(v) for v in np.ravel(vals[name]) if not re.fullmatch(r"[a-z][a-z0-9_]*", str(v))})
            if bad:
                problems.append(f"/points/{name}: values {bad} are not names (lower-case identifiers)")
            return
        bad = sorted({str(v) for v in np.ravel(vals[name])} - allowed)
        if bad:
            problems.append(f"/points/{name}: values {bad} not in {sorted(allowed)} ({source})")

    domain("status", {"ok", "precision_not_met", "unstable", "not_stationary"})
    domain("policy_name", None)  # the program's policy table is the one list (attribute 'allowed')
    domain("sampling", {"distinct", "with_replacement", ""})
    domain("stale", {"withdraw", "keep", ""})
    _check_policy_attrs(pts, problems)
    try:
        if "beta" in vals and np.any(np.abs(np.sum(vals["beta"], axis=1) - 1) > 1e-9):
            problems.append("/points/beta: rows do not sum to 1")
        if "buffer" in vals and np.any((vals["buffer"] < 1) & (vals["buffer"] != -1)):
            problems.append("/points/buffer: values other than -1 (infinite) below 1")
        if "pool_servers" in vals and "n" in vals and np.any(np.sum(vals["pool_servers"], axis=1) != vals["n"]):
            problems.append("/points/pool_servers: rows do not sum to n")
        if all(k in vals for k in ("rho", "lambda", "beta", "mu")):
            rho = vals["lambda"] / np.sum(vals["beta"] * vals["mu"], axis=1)
            if not np.allclose(rho, vals["rho"], rtol=1e-9, atol=0):
                problems.append("/points/rho: differs from lambda / sum_j beta_j mu_j")
    except (TypeError, ValueError) as exc:  # shapes already reported
        problems.append(f"/points: cannot check values ({exc})")
    status = np.asarray(vals.get("status", np.array([], dtype=object)))
    unstable = status == "unstable"
    needs_reason = unstable | (status == "not_stationary")
    if "reason" in vals and np.shape(vals["reason"]) == unstable.shape:
        has_reason = np.array([bool(str(r).strip()) for r in np.ravel(vals["reason"])], dtype=bool)
        for p in np.flatnonzero(needs_reason & ~has_reason)[:1]:
            problems.append(f"/points/reason: point {p} is {status[p]} but its reason is empty")
        for p in np.flatnonzero((status == "ok") & has_reason)[:1]:
            problems.append(f"/points/reason: point {p} has status 'ok' but a reason "
                            f"({vals['reason'][p]!r}); the doc keeps reasons for the other statuses")

    metrics = {**DOC_METRICS, **metrics_of(f)}
    _check_estimates(f.get("estimates"), metrics, P, J, K, vals, unstable, problems)
    _check_replicas(f.get("replicas"), metrics, f.get("estimates"), replica_extras_of(f), P, J, K, vals,
                    unstable, problems)


def _metric_shape(kind, est, m, P, J, K):
    """The shape of /estimates/m/mean for a metric of shape ``kind`` (a quantile metric: one
    entry per level of its ``levels`` attribute), None if it cannot be told."""
    if kind == "quantile":
        g = est.get(m) if isinstance(est, h5py.Group) else None
        holder = g.get("mean") if isinstance(g, h5py.Group) and "levels" not in g.attrs else g
        levels = holder.attrs.get("levels") if holder is not None else None
        return None if levels is None else (P, int(np.size(levels)))
    return {"scalar": (P,), "pool": (P, J), "pool_k": (P, J, K)}.get(kind)


def _check_estimate_replicas(est, P, vals, problems):
    """/estimates/replicas: P int64 values equal to /points/replicas."""
    r = est.get("replicas")
    if not isinstance(r, h5py.Dataset):
        problems.append("/estimates/replicas: missing")
        return
    if r.shape != (P,) or r.dtype.kind not in "iu":
        problems.append(f"/estimates/replicas: shape {r.shape} dtype {r.dtype}, expected ({P},) int64")
    elif "replicas" in vals and np.shape(vals["replicas"]) == (P,) and not np.array_equal(r[()], vals["replicas"]):
        bad = int(np.flatnonzero(r[()] != vals["replicas"])[0])
        problems.append(f"/estimates/replicas differs from /points/replicas (first at point {bad}: "
                        f"{int(r[bad])} vs {int(vals['replicas'][bad])})")
    _check_dset_attrs(r, "/estimates/replicas", problems, "1")


def _check_estimates(est, metrics, P, J, K, vals, unstable, problems):
    """Every metric's group: mean, half_width and std_err of its shape, doubles, with units
    (the doc's) and description; NaN estimates at unstable points."""
    if not isinstance(est, h5py.Group):
        problems.append("missing group /estimates")
        return
    _check_estimate_replicas(est, P, vals, problems)
    for m, kind in metrics.items():
        g = est.get(m)
        units = DOC_UNITS.get(m, "1")
        if not isinstance(g, h5py.Group):
            problems.append(f"/estimates/{m}: missing group")
            continue
        want = _metric_shape(kind, est, m, P, J, K)
        if want is None:
            problems.append(f"/estimates/{m}: shape {kind!r} unknown, or its attribute 'levels' missing")
            continue
        _check_dset_attrs(g, f"/estimates/{m} (group)", problems, units)
        for part in ("mean", "half_width", "std_err"):
            d = g.get(part)
            where = f"/estimates/{m}/{part}"
            if not isinstance(d, h5py.Dataset):
                problems.append(f"{where}: missing")
                continue
            if d.shape != want:
                problems.append(f"{where}: shape {d.shape}, expected {want}")
            if not _kind_ok(d.dtype, "f"):
                problems.append(f"{where}: dtype {d.dtype}, expected double")
            _check_dset_attrs(d, where, problems)
            if part == "mean" and "units" in d.attrs and d.attrs["units"] != units:
                problems.append(f"{where}: units {d.attrs['units']!r}, the doc says {units!r}")
            if part == "mean" and d.shape == want and unstable.shape == (P,) and unstable.any():
                if not np.all(np.isnan(d[()][unstable])):
                    problems.append(f"{where}: unstable points must have NaN estimates")


def _check_int_padding(name, a, n_run, R, vals, unstable, problems):
    """An integer /replicas dataset: -1 beyond each point's replicas; unstable 0 or 1 (and 1
    only at unstable points); events not negative."""
    where = f"/replicas/{name}"
    for p in range(a.shape[0]):
        r_p = max(int(n_run[p]), 0)
        if r_p < R and not np.all(a[p, r_p:] == -1):
            problems.append(f"{where}: point {p} has {r_p} replicas but slots beyond are not -1")
            return
        if name == "unstable" and not np.all((a[p, :r_p] == 0) | (a[p, :r_p] == 1)):
            problems.append(f"{where}: point {p}: values {sorted(set(a[p, :r_p].tolist()))}, expected 0 or 1 "
                            f"in the slots that ran")
            return
        if name == "unstable" and np.any(a[p, :r_p] == 1) and unstable.shape == (a.shape[0],) and not unstable[p]:
            problems.append(f"{where}: point {p} has a replica stopped as unstable but status "
                            f"{vals['status'][p]!r}")
            return
        if name == "events" and np.any(a[p, :r_p] < 0):
            problems.append(f"{where}: point {p}: negative event counts in slots that ran")
            return


def _check_float_padding(name, a, n_run, R, problems):
    """A double /replicas dataset: NaN beyond each point's replicas."""
    for p in range(a.shape[0]):
        if int(n_run[p]) < R and not np.all(np.isnan(a[p, int(n_run[p]):])):
            problems.append(f"/replicas/{name}: point {p} has {int(n_run[p])} replicas but slots beyond are not NaN")
            return


def _check_replicas(rep, metrics, est, extras, P, J, K, vals, unstable, problems):
    """/replicas: every metric (doubles, P x R then its shape) and every other dataset the
    file lists (P x R, doubles or integers) with units, description and padding."""
    if not isinstance(rep, h5py.Group):
        problems.append("missing group /replicas")
        return
    R = None
    for name in ("warmup", *metrics):
        d = rep.get(name)
        if isinstance(d, h5py.Dataset) and d.ndim >= 2:
            R = d.shape[1]
            break
    if R is None:
        problems.append("/replicas: no P x R dataset found")
        return
    n_run = vals.get("replicas")
    runs = n_run is not None and np.shape(n_run) == (P,)
    if runs and P > 0 and int(np.max(n_run)) != R:
        problems.append(f"/replicas: R = {R} but the largest /points/replicas is {int(np.max(n_run))}")
    for name in list(dict.fromkeys([*DOC_REPLICA_EXTRAS, *extras])) + list(metrics):
        d = rep.get(name)
        where = f"/replicas/{name}"
        if not isinstance(d, h5py.Dataset):
            problems.append(f"{where}: missing")
            continue
        shape = _metric_shape(metrics[name], est, name, P, J, K) if name in metrics else (P,)
        want = (P, R) + tuple(shape[1:]) if shape is not None else None
        if d.shape != want:
            problems.append(f"{where}: shape {d.shape}, expected {want}")
        integer = d.dtype.kind in "iu"
        if not (_kind_ok(d.dtype, "f") or (integer and name not in metrics)):
            problems.append(f"{where}: dtype {d.dtype}, expected {'double' if name in metrics else 'double or integer'}")
        _check_dset_attrs(d, where, problems, DOC_UNITS.get(name, "1"))
        if d.shape == want and runs:
            if integer:
                _check_int_padding(name, d[()], n_run, R, vals, unstable, problems)
            else:
                _check_float_padding(name, d[()], n_run, R, problems)
