"""The job's grid as xarray dimensions: axes from the results file, reshaping, and back.

A results file stores its points as rows (``/points``, docs/results-format.md); the job
that made them is a product of axes (docs/job-files.md, "The grid"), each point's
``/points/index`` its cell in that product, first axis slowest. :func:`to_grid` turns
the flat Dataset of :func:`lbmc_analysis.load` (``grid=False``) into one whose
dimensions are those axes, and :func:`flatten` turns it (or any selection of it) back.

Where the axes come from, first that applies:

1. the group ``/grid`` of the file, when the C side writes it (see :func:`read_grid_group`
   for the datasets read): axis names, lengths, values as written, and which axes are
   linked into one dimension;
2. only for a file written before ``/grid`` existed: the job text (root attribute
   ``job``), read with PyYAML (Debian's python3-yaml) the way docs/job-files.md says:
   every list at a key that may be an axis is one, in the order the keys appear in the
   file.

Either way the axes are checked against the points (every point's ``n``, ``lambda``,
``policy``, ... must equal its cell's axis values); a file that fails the check is not
reshaped (:func:`lbmc_analysis.load` then warns and returns the flat form), so a label
can never be attached to the wrong numbers.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from fractions import Fraction
from typing import Any

import h5py
import numpy as np
import xarray as xr

from ._h5 import GridWarning, read_array

__all__ = ["Axis", "Dim", "axes_from_job", "coord_name", "flatten", "read_grid_group", "to_grid", "grid_dims"]

#: /points columns that are results of a point rather than parameters: kept on every grid dimension.
PER_POINT = ("index", "status", "reason", "point_replicas")

#: the status of a grid cell that has no point in the file (a shard, an interrupted run, a ragged grid).
MISSING = "missing"

#: job axes whose /points column must equal the axis value at every point (the check of the grid);
#: ``stale``, ``sampling``, ``run.time`` and ``run.warmup`` are left out: the file stores "" (or the
#: simulated time, or NaN for ``auto``) where the setting does not apply.
_CHECKED = ("n", "lambda", "routers", "policy", "beta", "mu", "buffer", "service")


class NoGrid(ValueError):
    """The grid cannot be recovered from this file (the message says why)."""


@dataclasses.dataclass
class Axis:
    """One axis of the job: its name as in docs/job-files.md and its values as written.

    ``labels`` (set by :func:`to_grid`): the coordinate values, one per value, taken from
    the points' own columns where they agree (numbers as the simulator used them,
    ``-1`` for an infinite buffer as in ``/points/buffer``), else parsed from the text.
    """

    name: str
    values: list
    labels: Any = None

    @property
    def coord(self) -> str:
        return coord_name(self.name)

    def __len__(self):
        return len(self.values)


@dataclasses.dataclass
class Dim:
    """One grid dimension: a single axis, or a group of linked axes of equal length."""

    axes: list
    given_name: str | None = None

    @property
    def name(self) -> str:
        if len(self.axes) == 1:
            return self.axes[0].coord
        if self.given_name:
            return _identifier(self.given_name)
        return "+".join(a.coord for a in self.axes)

    @property
    def length(self) -> int:
        return len(self.axes[0])


def coord_name(axis: str) -> str:
    """Coordinate name of a job axis: ``lambda -> lambda_`` (a Python keyword),
    ``pools[2].mu -> mu_2`` (as the tidy frame's columns), ``run.time -> time``."""
    m = re.fullmatch(r"(?:system\.)?pools\[(\d+)\]\.(\w+)", axis)
    if m:
        return f"{m.group(2)}_{int(m.group(1))}"
    base = re.sub(r"^(system|run)\.", "", axis)
    return "lambda_" if base == "lambda" else _identifier(base)


def _identifier(text):
    out = re.sub(r"\W", "_", str(text))
    return out if out and not out[0].isdigit() else "_" + out


# ----------------------------------------------------------------------------------
# where the axes come from
# ----------------------------------------------------------------------------------


def read_grid_group(f: h5py.File) -> list | None:
    """The dimensions described by the file's ``/grid`` group, or None if it has none.

    Datasets read (all optional except the first three):

    ``/grid/axis_name`` (A, str)
        axis names as docs/job-files.md gives them (``n``, ``lambda``, ``pools[2].mu``,
        ``run.time``, ...), in grid order (first slowest);
    ``/grid/axis_length`` (A, int64)
        number of values of each axis;
    ``/grid/axis_value`` (sum of the lengths, str)
        the values as written, axis after axis;
    ``/grid/axis_dim`` (A, int64)
        the dimension (0-based, in grid order) of each axis: linked axes (varied together,
        not as a product) share one; absent: every axis is its own dimension;
    ``/grid/dim_name`` (D, str)
        a name per dimension (used for a dimension of several linked axes).

    ``/points/index`` numbers the cells of the product of the dimensions.
    """
    g = f.get("grid")
    if not isinstance(g, h5py.Group):
        return None
    try:
        names = [str(x) for x in read_array(g["axis_name"])]
        lengths = [int(x) for x in read_array(g["axis_length"])]
        values = [str(x) for x in read_array(g["axis_value"])]
    except KeyError as exc:
        raise NoGrid(f"the /grid group lacks {exc}") from None
    if len(lengths) != len(names) or sum(lengths) != len(values):
        raise NoGrid(f"/grid: {len(names)} axis names, {len(lengths)} lengths summing to {sum(lengths)}, "
                     f"{len(values)} values")
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    axes = [Axis(n, values[bounds[i]:bounds[i + 1]]) for i, n in enumerate(names)]
    dim_of = [int(x) for x in read_array(g["axis_dim"])] if "axis_dim" in g else list(range(len(axes)))
    dim_names = [str(x) for x in read_array(g["dim_name"])] if "dim_name" in g else []
    if len(dim_of) != len(axes):
        raise NoGrid(f"/grid/axis_dim has {len(dim_of)} entries for {len(axes)} axes")
    dims = []
    for d in sorted(set(dim_of)):
        members = [a for a, k in zip(axes, dim_of) if k == d]
        if len({len(a) for a in members}) != 1:
            raise NoGrid(f"/grid: the linked axes {[a.name for a in members]} have different lengths")
        dims.append(Dim(members, dim_names[d] if d < len(dim_names) else None))
    return dims


def _text(v) -> str:
    """A YAML value as lbmc writes an axis value: lists as ``[a, b]``, a service mapping as
    ``dist:key=value,...`` (docs/job-files.md)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_text(x) for x in v) + "]"
    if isinstance(v, dict):
        rest = ",".join(f"{k}={_text(x)}" for k, x in v.items() if k != "dist")
        return f"{_text(v.get('dist', ''))}:{rest}" if rest else _text(v.get("dist", ""))
    return str(v)


def _pool_axes(pools) -> list:
    axes = []
    for j, pool in enumerate(pools if isinstance(pools, list) else [], 1):
        for key, val in (pool.items() if isinstance(pool, dict) else ()):
            if not isinstance(val, list):
                continue
            if key == "mu_k" and not all(isinstance(x, list) for x in val):
                continue  # one speed list, not an axis
            axes.append(Axis(f"pools[{j}].{key}", [_text(x) for x in val]))
    return axes


def _system_axes(system) -> list:
    axes = []
    for key, val in (system.items() if isinstance(system, dict) else ()):
        if key == "pools":
            axes += _pool_axes(val)
        elif isinstance(val, list):
            if key == "beta" and not all(isinstance(x, list) for x in val):
                continue  # one beta vector, not an axis
            axes.append(Axis(key, [_text(x) for x in val]))
    return axes


def axes_from_job(text: str) -> list:
    """The dimensions of a job file's grid, from its text (docs/job-files.md, "The grid").

    Every list at a key that may be an axis (``system.n``, ``system.lambda``,
    ``system.routers``, ``system.beta`` as a list of vectors, ``system.service``,
    ``system.pools[j].{beta, mu, buffer, service, mu_k}``, ``policy``, ``stale``,
    ``sampling``, ``run.time``, ``run.warmup``) is one axis, in the order the keys
    appear. Raises :class:`NoGrid` when PyYAML is missing, the text is not a job, or it
    has a top-level key this reader does not know (a newer lbmc: linked axes, say,
    whose grid only the file's ``/grid`` group can describe).
    """
    try:
        import yaml
    except ImportError:
        raise NoGrid("the file has no /grid group and PyYAML (Debian's python3-yaml) is not installed "
                     "to read the axes from the job text") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise NoGrid(f"the job text is not YAML ({exc})") from None
    if not isinstance(doc, dict):
        raise NoGrid("the job text is not a mapping")
    axes = []
    for key, val in doc.items():
        if key == "system":
            axes += _system_axes(val)
        elif key in ("policy", "stale", "sampling"):
            if isinstance(val, list):
                axes.append(Axis(key, [_text(x) for x in val]))
        elif key == "run":
            for k, v in (val.items() if isinstance(val, dict) else ()):
                if k in ("time", "warmup") and isinstance(v, list):
                    axes.append(Axis(f"run.{k}", [_text(x) for x in v]))
        elif key != "output":
            raise NoGrid(f"the job has a top-level key {key!r} this reader does not know; without a /grid "
                         f"group in the file it cannot tell the grid")
    return [Dim([a]) for a in axes]


def grid_dims(f: h5py.File, flat: xr.Dataset, path: str):
    """The checked dimensions of an open file (``/grid``, else the job text), or None with a
    :class:`lbmc_analysis.GridWarning` saying why the flat form is returned."""
    import warnings

    try:
        dims = read_grid_group(f)
        if dims is None:
            if "job" not in flat.attrs:
                raise NoGrid("the file has neither a /grid group nor a job text")
            dims = axes_from_job(str(flat.attrs["job"]))
        _label_and_check(dims, flat)
        return dims
    except NoGrid as exc:
        warnings.warn(f"{path}: returning the flat form (one 'point' dimension; load(path, grid=False) "
                      f"asks for it): {exc}", GridWarning, stacklevel=3)
        return None


# ----------------------------------------------------------------------------------
# labels and the check of the axes against the points
# ----------------------------------------------------------------------------------


def _column_of(axis: str):
    """(/points column, pool index or None) holding an axis' value at each point, or None."""
    m = re.fullmatch(r"(?:system\.)?pools\[(\d+)\]\.(\w+)", axis)
    if m:
        return (m.group(2), int(m.group(1)) - 1) if m.group(2) in ("beta", "mu", "buffer", "service") else None
    base = re.sub(r"^(system|run)\.", "", axis)
    if base in ("service", "buffer", "mu"):  # a system-wide setting of every pool: pool 1 holds it
        return base, 0
    if base in ("n", "lambda", "routers", "policy", "stale", "sampling", "time", "warmup"):
        return base, None
    return None


def _number(text):
    """A value as written -> int, float (``1/3``, ``1e3``, ``inf``) or the text itself."""
    t = str(text).strip()
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    try:
        return float(Fraction(t))
    except (ValueError, ZeroDivisionError):
        return t


def _column_values(flat, axis):
    col = _column_of(axis.name)
    if col is None or col[0] not in flat.coords:
        return None, None
    c = flat[col[0]]
    if col[1] is None and c.dims == ("point",):
        return c.values, col[0]
    if col[1] is not None and c.dims == ("point", "pool") and col[1] < c.shape[1]:
        return c.values[:, col[1]], col[0]
    return None, None


def _blank(v):
    return v is None or (isinstance(v, str) and v == "") or (isinstance(v, float) and math.isnan(v))


def _axis_labels(axis, col, pos):
    """One label per axis value: the points' column value where they all agree, else the text."""
    labels = []
    for i, text in enumerate(axis.values):
        seen = [] if col is None else [v for v in col[pos == i].tolist() if not _blank(v)]
        uniq = list(dict.fromkeys(seen))
        if len(uniq) == 1:
            labels.append(uniq[0])
        else:
            v = _number(text)
            if col is not None and col.dtype.kind in "iu" and isinstance(v, float) and math.isinf(v):
                v = -1  # an infinite buffer, as /points/buffer stores it
            labels.append(v)
    numeric = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in labels)
    if numeric:
        ints = all(float(v).is_integer() for v in labels) and (col is None or col.dtype.kind in "iu")
        return np.asarray(labels, dtype=np.int64 if ints else np.float64)
    return np.asarray(labels, dtype=object)


def _positions(dims, flat):
    """Each point's position along every dimension, from /points/index; checks the index."""
    if "index" not in flat.coords:
        raise NoGrid("the file has no /points/index")
    index = np.asarray(flat["index"].values, dtype=np.int64)
    lengths = [d.length for d in dims]
    G = int(np.prod(lengths, dtype=np.int64)) if dims else 1
    if index.size and (index.min() < 0 or index.max() >= G):
        raise NoGrid(f"/points/index holds {int(index.max())}, outside the grid of {G} cells "
                     f"({' x '.join(map(str, lengths)) or 'no axes'})")
    if np.unique(index).size != index.size:
        raise NoGrid("/points/index holds a cell twice")
    return np.unravel_index(index, lengths) if dims else (), G


def _same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return bool(np.isclose(float(a), float(b), rtol=1e-12, atol=0))


def _label_and_check(dims, flat):
    """Set every axis' labels and check them against the points' columns (NoGrid if they differ)."""
    pos, _ = _positions(dims, flat)
    for d, p in zip(dims, pos):
        for axis in d.axes:
            col, cname = _column_values(flat, axis)
            axis.labels = _axis_labels(axis, col, p)
            if col is None or cname not in _CHECKED:
                continue
            for pt in range(col.size):
                want = axis.labels[p[pt]]
                if not _same(col[pt], want):
                    raise NoGrid(f"the job's axis {axis.name} says {want!r} at point {pt}, but its "
                                 f"/points/{cname} is {col[pt]!r}")


# ----------------------------------------------------------------------------------
# flat -> grid
# ----------------------------------------------------------------------------------


def _scatter(values, cells, G, shape, fill=None):
    """Rows of a (P, ...) array into the (shape..., ...) grid; empty cells get ``fill`` (NaN, "")."""
    values = np.asarray(values)
    rest = values.shape[1:]
    complete = np.unique(cells).size == G
    if values.dtype.kind in "iub" and not complete:
        values = values.astype(np.float64)
    if values.dtype == object:
        out = np.full((G,) + rest, "" if fill is None else fill, dtype=object)
    elif values.dtype.kind in "iub":
        out = np.zeros((G,) + rest, dtype=values.dtype)
    else:
        out = np.full((G,) + rest, np.nan, dtype=values.dtype)
    out[cells] = values
    return out.reshape(tuple(shape) + rest)


def _equal(a: xr.DataArray, b: xr.DataArray) -> xr.DataArray:
    eq = a == b
    if a.dtype.kind == "f":
        eq = eq | (a.isnull() & b.isnull())
    return eq


def _reduce(da: xr.DataArray, present: xr.DataArray, gdims) -> xr.DataArray:
    """Drop the grid dimensions along which ``da`` is constant over the cells that have a point."""
    for d in gdims:
        if d not in da.dims:
            continue
        first = present.argmax(d)
        ref = da.isel({d: first})
        if bool((_equal(da, ref) | ~present).all()):
            da, present = ref, present.any(d)
    order = [d for d in gdims if d in da.dims] + [d for d in da.dims if d not in gdims]
    return da.transpose(*order)


def _grid_coord_name(name):
    return "lambda_" if name == "lambda" else name


def to_grid(flat: xr.Dataset, dims) -> xr.Dataset:
    """Reshape a flat Dataset (:func:`lbmc_analysis.load` with ``grid=False``) onto the grid ``dims``.

    Dimensions
        One per job axis, in the job's order (first slowest), named after the axis:
        ``n``, ``lambda_`` (``lambda`` is a Python keyword: ``ds.sel(lambda_=0.9)``),
        ``routers``, ``policy``, ``stale``, ``sampling``, ``beta`` (a list of beta
        vectors; labels as written), ``service``, ``pools[j].mu`` -> ``mu_j`` (likewise
        ``beta_j``, ``buffer_j``, ``service_j``, ``mu_k_j``), ``run.time`` -> ``time``,
        ``run.warmup`` -> ``warmup``; then ``pool``, ``k``, ``replica``, ``level`` as in
        the flat form. An axis of one value is a dimension of length 1.

    Linked axes
        Axes the job varies together (one dimension in the file's ``/grid``) form one
        dimension, named by the file or ``"a+b"`` after its axes' names; each linked
        setting is a coordinate along it, the first one indexed, so ``ds.sel(buffer_1=2)``
        (or ``ds.sel(n=1e7)`` when the job links ``n`` with ``run.time``) and
        ``.plot(x="buffer_2")`` work. Only one of them is indexed because xarray cannot
        align (add, compare, ``where``) objects with several indexes along one
        dimension; select by another with ``ds.set_xindex("buffer_2").sel(buffer_2=3)``
        (that Dataset then does not combine with others).

    Coordinates
        Axis values (numbers as the points used them, ``-1`` for an infinite buffer as in
        the file, text where no number applies; the values as written in the dimension's
        ``as_written`` attribute). Every other ``/points`` column is a coordinate over
        the grid dimensions along which it varies (``rho`` over ``lambda_`` and the
        ``mu_j``, ``mu`` over ``pool``, ...); ``index``, ``status``, ``reason`` and
        ``point_replicas`` always span every grid dimension. ``point`` is the row of
        each cell in the file. A column named like a dimension is dropped when it
        equals the dimension's values (``n``), else kept as ``<name>_point``
        (``stale_point``: ``""`` where the policy has none) or, per pool,
        ``<name>_j`` (``beta_j`` next to a ``beta`` dimension).

    Missing cells
        A cell without a point in the file (a shard, an interrupted run, a grid that is
        not a full product) has ``point = -1``, ``status = "missing"`` and NaN values;
        integer variables that have such cells become float64. Unstable points keep
        their status and NaN estimates.

    Attributes
        Those of the flat Dataset (units and descriptions included), plus ``lbmc_grid``
        (JSON) that :func:`flatten` uses.
    """
    lengths = [d.length for d in dims]
    gdims = [d.name for d in dims]
    if len(set(gdims)) != len(gdims):
        raise NoGrid(f"two grid axes share a name: {gdims}")
    pos, G = _positions(dims, flat)
    cells = np.asarray(flat["index"].values, dtype=np.int64)
    if dims and any(a.labels is None for d in dims for a in d.axes):
        _label_and_check(dims, flat)
    present = np.zeros(G, dtype=bool)
    present[cells] = True
    present_da = xr.DataArray(present.reshape(lengths), dims=gdims)

    coords: dict[str, Any] = {}
    labels: dict[str, str] = {}  # label coordinate -> its dimension
    for d in dims:
        for a in d.axes:
            attrs = {"axis": a.name, "as_written": [str(v) for v in a.values]}
            col = _column_of(a.name)
            if col and col[0] in flat.coords:
                attrs = {**flat[col[0]].attrs, **attrs}
            coords[a.coord] = ((d.name,), a.labels, attrs)
            labels[a.coord] = d.name
    point_of_cell = np.full(G, -1, dtype=np.int64)
    point_of_cell[cells] = flat["point"].values
    coords["point"] = (gdims, point_of_cell.reshape(lengths),
                       {"units": "1", "description": "row of the cell's point in the file; -1: no point"})
    coords["index"] = (gdims, np.arange(G, dtype=np.int64).reshape(lengths), dict(flat["index"].attrs))

    columns, dropped, dtypes = {"index": "index"}, {}, {}
    for name, c in flat.coords.items():
        if c.dims[:1] != ("point",) or name in ("point", "index"):
            continue
        dtypes[name] = c.dtype.str
        arr = _scatter(c.values, cells, G, lengths, fill=MISSING if name == "status" else None)
        da = xr.DataArray(arr, dims=gdims + list(c.dims[1:]), attrs=dict(c.attrs))
        if name not in PER_POINT:
            da = _reduce(da, present_da, gdims)
        gname = _grid_coord_name(name)
        if gname in labels:
            if _matches_label(da, coords[gname], labels[gname], present_da):
                dropped[name] = gname
                continue
            gname = f"{gname}_j" if "pool" in da.dims else f"{gname}_point"
        coords[gname] = (da.dims, da.values, da.attrs)
        columns[gname] = name
    for name in ("pool", "k", "replica"):
        if name in flat.coords:
            coords[name] = flat[name].variable
    for name, c in flat.coords.items():
        if c.dims == (name,) and name.startswith("level"):
            coords[name] = c.variable

    data_vars = {}
    for name, v in flat.data_vars.items():
        dtypes[name] = v.dtype.str
        data_vars[name] = (gdims + list(v.dims[1:]), _scatter(v.values, cells, G, lengths), dict(v.attrs))
    info = {"dims": [{"name": d.name, "axes": [{"axis": a.name, "coord": a.coord} for a in d.axes]} for d in dims],
            "columns": columns, "dropped": dropped, "dtypes": dtypes}
    ds = xr.Dataset(data_vars, coords=coords, attrs={**flat.attrs, "lbmc_grid": json.dumps(info)})
    for d in dims:
        if len(d.axes) > 1:  # one index per dimension: xarray cannot align objects with several
            ds = ds.set_xindex(d.axes[0].coord)
    return ds


def _matches_label(da, label, dim, present):
    """Is the column ``da`` (reduced) the label coordinate ``label = (dims, values, attrs)`` of ``dim``?"""
    if any(x != dim for x in da.dims):
        return False
    lab = xr.DataArray(np.asarray(label[1]), dims=(dim,))
    here = present.any([x for x in present.dims if x != dim]) if present.ndim > 1 else present
    a, b = xr.broadcast(da, lab)
    for x, y, h in zip(a.values.tolist(), b.values.tolist(), here.values.tolist()):
        if h and not _same(x, y):
            return False
    return True


# ----------------------------------------------------------------------------------
# grid -> flat
# ----------------------------------------------------------------------------------


def flatten(ds: xr.Dataset) -> xr.Dataset:
    """The flat form (one ``point`` dimension, file rows in file order) of a grid Dataset.

    Works on any selection of a grid Dataset (``ds.sel(policy="pull")``: the points of
    that selection, cells without a point left out) and returns a flat Dataset
    unchanged. Names and types come back as the file has them (``lambda``, integer
    columns as integers); variables added to the grid Dataset are flattened too.
    """
    if "lbmc_grid" not in ds.attrs:
        if "point" in ds.dims:
            return ds
        raise ValueError("not a Dataset from lbmc_analysis.load: no 'point' dimension and no grid description")
    info = json.loads(ds.attrs["lbmc_grid"])
    gdims = [d["name"] for d in info["dims"] if d["name"] in ds.dims]
    label_coords = {a["coord"] for d in info["dims"] for a in d["axes"]}
    rows = ds["point"].variable.transpose(*gdims).values.ravel()
    keep = np.flatnonzero(rows >= 0)
    keep = keep[np.argsort(rows[keep], kind="stable")]
    pt_coords = {d: ds[d] for d in gdims if d in ds.coords}

    sizes = {d: ds.sizes[d] for d in gdims}

    def take(v):
        """A variable's values at the kept cells, dims ("point", its other dims)."""
        var = v.variable  # plain values: linked dimensions carry several indexes that must not align
        other = [d for d in var.dims if d not in gdims]
        var = var.set_dims({**sizes, **{d: var.sizes[d] for d in other}}).transpose(*gdims, *other)
        cells = int(np.prod([sizes[d] for d in gdims], dtype=np.int64))
        return ("point", *other), var.values.reshape((cells,) + var.shape[len(gdims):])[keep]

    coords, data_vars = {"point": ("point", rows[keep])}, {}
    for name in ds.coords:
        if name in label_coords or name in ("point",) or name in pt_coords:
            continue
        if name in info["columns"]:
            dims, arr = take(ds[name])
            fname = info["columns"][name]
            coords[fname] = (dims, _restore(arr, info["dtypes"].get(fname)), dict(ds[name].attrs))
        elif not set(ds[name].dims) & set(gdims) and name not in gdims:
            coords[name] = ds[name].variable
    for fname, label in info["dropped"].items():
        if label in ds.coords:
            dims, arr = take(ds[label])
            attrs = {k: v for k, v in ds[label].attrs.items() if k not in ("axis", "as_written")}
            coords[fname] = (dims, _restore(arr, info["dtypes"].get(fname)), attrs)
    for name, v in ds.data_vars.items():
        dims, arr = take(v)
        data_vars[name] = (dims, _restore(arr, info["dtypes"].get(name)), dict(v.attrs))
    attrs = {k: v for k, v in ds.attrs.items() if k != "lbmc_grid"}
    return xr.Dataset(data_vars, coords=coords, attrs=attrs)


def _restore(arr, dtype):
    """Back to the file's integer type when the grid made it float (cells without a point)."""
    if dtype is None:
        return arr
    dt = np.dtype(dtype)
    if dt.kind in "iub" and arr.dtype.kind == "f" and not np.isnan(arr).any():
        return arr.astype(dt)
    if dt == object and arr.dtype != object:
        return arr.astype(object)
    return arr
