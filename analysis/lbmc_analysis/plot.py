"""Figures of lbmc results (matplotlib; no pyplot state, safe under the Agg backend).

Every function takes a Dataset from :func:`lbmc_analysis.load`, a tidy DataFrame
from :func:`lbmc_analysis.to_frame` (possibly filtered) or a path, draws on ``ax``
if given (else on a new :class:`matplotlib.figure.Figure`), and returns the
Figure. Save it with ``fig.savefig(...)``; in a notebook,
``lbmc_analysis.notebook.save(ctx, fig, name)`` saves the PNG and shows it (a
Figure made without pyplot is shown by ``display(fig)`` only once ``%matplotlib
inline`` is active).

Points without an estimate (``status == "unstable"``, NaN means) are never drawn as
values: they are marked with an ``x`` on the bottom edge of the axes, each series a
little higher than the previous one and labelled "<series>: unstable / no estimate"
(heat map: hatched cells labelled "unstable"). On a log y scale, values <= 0 are
marked with a ``v`` the same way, and interval bars that would cross 0 are cut just
above 0.
Points whose status is ``precision_not_met`` are drawn with hollow markers.

Selection: ``where`` is a mapping column -> value, list of values or predicate,
applied to the tidy frame (per-pool parameters are columns ``beta_1``, ``mu_2``...).
``by`` names the column(s) that distinguish the series (default ``policy``).
When two points of one series share an x value, the functions raise ``ValueError``
naming the parameters that still vary, so a figure never silently mixes points.

Mean-field overlays use :func:`lbmc_analysis.meanfield.reference_for_point`
(JSQ(d): Vvedenskaya, Dobrushin & Karpelevich 1996, Mitzenmacher 2001; PULL:
Stolyar 2015; random routing: exact M/M/1(/B)).
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr
from matplotlib import colors as mcolors
from matplotlib import patches, transforms
from matplotlib.figure import Figure

from . import meanfield
from .io import _FRAME_FIXED, load, to_frame

__all__ = ["metric_vs_n", "tail", "messages", "heatmap", "frame_of"]

_MARK_Y = 0.015  # axes fraction where "no value" markers sit
_MARK_STEP = 0.03  # and how much higher each further series' markers sit


# ----------------------------------------------------------------------------------
# data plumbing
# ----------------------------------------------------------------------------------


def frame_of(data) -> pd.DataFrame:
    """The tidy frame of ``data`` (Dataset, DataFrame from ``to_frame``, or path)."""
    if isinstance(data, pd.DataFrame):
        if "metric" not in data.columns or "mean" not in data.columns:
            raise ValueError("expected a tidy frame from lbmc_analysis.to_frame (columns 'metric', 'mean', ...)")
        return data
    if isinstance(data, xr.Dataset):
        return to_frame(data)
    if isinstance(data, (str, os.PathLike)):
        return to_frame(data)
    raise TypeError(f"expected an xarray.Dataset, a pandas.DataFrame or a path, got {type(data).__name__}")


def _param_columns(df):
    return [c for c in df.columns if c not in _FRAME_FIXED and c != "point"]


def _col_name(c):
    if isinstance(c, tuple) and len(c) == 2:
        return f"{c[0]}_{int(c[1])}"
    return c


def _apply_where(df, where):
    if not where:
        return df
    mask = np.ones(len(df), dtype=bool)
    for key, cond in where.items():
        key = _col_name(key)
        if key not in df.columns:
            raise KeyError(f"where: no column {key!r}; columns: {list(df.columns)}")
        numeric = pd.api.types.is_numeric_dtype(df[key])
        vals = df[key].astype("float64").to_numpy() if numeric else df[key].to_numpy()
        if callable(cond):
            m = np.array([bool(cond(v)) for v in vals], dtype=bool)
        else:
            conds = list(cond) if isinstance(cond, (list, tuple, set, np.ndarray)) else [cond]
            m = np.zeros(len(df), dtype=bool)
            for c in conds:
                if isinstance(c, (int, float, np.number)) and not isinstance(c, bool) and numeric:
                    m |= np.isclose(vals, float(c), rtol=1e-12, atol=0)
                else:
                    m |= vals == c
        mask &= m
    return df[mask]


def _metric_rows(df, metric, pool=None, k=None, level=None):
    rows = df[df["metric"] == metric]
    if rows.empty:
        raise ValueError(f"no rows for metric {metric!r}; metrics present: {sorted(df['metric'].unique())}")
    if pool is not None:
        rows = rows[rows["pool"] == int(pool)]
    if rows["k"].notna().any():
        if k is None:
            raise ValueError(f"metric {metric!r} has tail levels: pass k= (1..{int(rows['k'].max())})")
        rows = rows[rows["k"] == int(k)]
    if "level" in rows.columns and rows["level"].notna().any():
        if level is None:
            raise ValueError(f"metric {metric!r} has quantile levels: pass level= ({sorted(rows['level'].unique())})")
        rows = rows[np.isclose(rows["level"].astype(float), float(level))]
    if rows.empty:
        raise ValueError(f"no rows for metric {metric!r} with pool={pool}, k={k}, level={level}")
    return rows


def _new_axes(ax, figsize=(6.4, 4.4)):
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _label_value(v):
    if isinstance(v, (float, np.floating)):
        return f"{v:g}"
    return str(v)


def _group_label(keys, by):
    if len(by) == 1:
        return _label_value(keys[0])
    return ", ".join(f"{b}={_label_value(v)}" for b, v in zip(by, keys))


def _check_unique(g, x, by, params, what="series"):
    dup = g[x].duplicated(keep=False)
    if dup.any():
        varying = [c for c in params if c not in (x, *by) and g.loc[dup, c].astype(str).nunique() > 1]
        raise ValueError(
            f"several points of one {what} share {x} = {g.loc[dup, x].iloc[0]!r}; the parameters "
            f"{varying or '(none: duplicated points)'} also vary: select with where={{...}} or add them to by="
        )


def _units(df, metric):
    u = (getattr(df, "attrs", {}) or {}).get("units", {}).get(metric)
    return f" [{u}]" if u and u != "1" else ""


def _mark_bottom(ax, xs, marker, color, label=None, row=0):
    """Markers on the bottom edge (axes fraction), row r a little higher so series do not hide each other."""
    if len(xs) == 0:
        return
    trans = transforms.blended_transform_factory(ax.transData, ax.transAxes)
    ax.plot(xs, np.full(len(xs), _MARK_Y + _MARK_STEP * row), ls="none", marker=marker, color=color, ms=7,
            mew=1.5, transform=trans, clip_on=False, label=label, zorder=5)


def _reference_value(ref, metric, pool, k, params):
    """Pick a metric's reference from a mean-field dict (or a callable's return value)."""
    if ref is None:
        return math.nan
    if isinstance(ref, dict):
        if metric not in ref:
            return math.nan
        v = np.asarray(ref[metric], dtype=float)
    else:
        v = np.asarray(ref, dtype=float)
    if v.ndim >= 1 and v.size > 1 and pool is not None:
        v = v[int(pool) - 1]
    if v.ndim >= 1 and v.size > 1 and k is not None:
        v = v[int(k) - 1]
    v = np.ravel(v)
    return float(v[0]) if v.size else math.nan


def _row_params(row: Mapping[str, Any]) -> dict:
    return {k: (None if (isinstance(v, float) and math.isnan(v)) else v) for k, v in dict(row).items()}


def _auto_reference(params, K):
    try:
        return meanfield.reference_for_point(params, K=max(int(K or 1), 1))
    except (KeyError, ValueError, TypeError):
        return None


# ----------------------------------------------------------------------------------
# the series plot behind metric_vs_n and messages
# ----------------------------------------------------------------------------------


def _series(ax, rows, *, x, by, metric, pool, k, logy, reference, colors, style="-", label_suffix="",
            marks_done=None):
    params = _param_columns(rows)
    marks_done = marks_done if marks_done is not None else set()
    K = int(rows["k"].max()) if rows["k"].notna().any() else 10
    group_cols = list(by) + (["pool"] if pool is None and rows["pool"].notna().any() else [])
    grouper = group_cols[0] if len(group_cols) == 1 else group_cols
    for keys, g in rows.groupby(grouper, sort=True, dropna=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        _check_unique(g, x, group_cols, params)
        g = g.sort_values(x)
        ckey = _group_label(keys, group_cols)
        if ckey not in colors:  # one colour per series, shared by later calls (withdrawals)
            colors[ckey] = f"C{len(colors) % 10}"
        color = colors[ckey]
        label = ckey + label_suffix
        xs = g[x].to_numpy(dtype=float)
        mean = g["mean"].to_numpy(dtype=float)
        hw = np.nan_to_num(g["half_width"].to_numpy(dtype=float), nan=0.0)
        status = g["status"].astype(str).to_numpy() if "status" in g else np.full(len(g), "ok")
        ok = np.isfinite(mean) & (status != "unstable")
        if logy:
            pos = ok & (mean > 0)
            zero = ok & ~pos
        else:
            pos, zero = ok, np.zeros_like(ok)
        lower = np.minimum(hw, mean * (1 - 1e-3)) if logy else hw  # bars stop above 0 on log y
        if pos.any():
            ax.errorbar(xs[pos], mean[pos], yerr=[lower[pos], hw[pos]], color=color, ls=style, marker="o",
                        ms=4, capsize=3, label=label)
            hollow = pos & (status == "precision_not_met")
            if hollow.any():
                ax.plot(xs[hollow], mean[hollow], ls="none", marker="o", ms=6, mfc="white", color=color, zorder=4)
        bad = ~ok
        row = list(colors).index(ckey) % 6
        _mark_bottom(ax, xs[bad], "x", color, f"{label}: unstable / no estimate", row)
        if bad.any():
            marks_done.add("unstable")
        _mark_bottom(ax, xs[zero], "v", color, f"{label}: 0 (off the log scale)", row)
        if zero.any():
            marks_done.add("zero")
        if reference is not None and reference is not False:
            refs = []
            for _, row in g.iterrows():
                p = _row_params(row)
                if callable(reference):
                    val = reference(p)
                    refs.append(_reference_value(val, metric, row.get("pool"), row.get("k"), p)
                                if isinstance(val, dict) else float(val) if val is not None else math.nan)
                else:  # "auto"
                    refs.append(_reference_value(_auto_reference(p, K), metric,
                                                 None if pd.isna(row.get("pool")) else row.get("pool"),
                                                 None if pd.isna(row.get("k")) else row.get("k"), p))
            refs = np.asarray(refs, dtype=float)
            show = np.isfinite(refs) & ((refs > 0) if logy else True)
            if show.any():
                ax.plot(xs[show], refs[show], ls="--", color=color, lw=1, alpha=0.8,
                        label=f"{label} (reference)")
    return colors


def metric_vs_n(data, metric: str, *, by: str | Sequence[str] = "policy", x: str = "n", pool=None, k=None,
                level=None, where: Mapping[str, Any] | None = None, ax=None, logx: bool = True,
                logy: bool = True, reference: str | Callable | None = "auto", title: str | None = None) -> Figure:
    """A metric against n (log-log by default), one series per ``by`` value, with interval bars.

    Bars are the half-widths of the file (Student-t intervals at the file's
    ``confidence``). A per-pool metric without ``pool=`` gives one series per pool;
    ``tail`` needs ``k=``; quantiles need ``level=``. ``reference="auto"`` draws
    the mean-field / exact value of each point as a dashed line (see
    :func:`lbmc_analysis.meanfield.reference_for_point`); a callable receives the
    point's parameters (dict) and returns a number or a reference dict; ``None``
    draws none. ``x`` may name another numeric parameter (``lambda``, ``routers``).
    """
    df = _apply_where(frame_of(data), where)
    rows = _metric_rows(df, metric, pool, k, level)
    by = [by] if isinstance(by, str) else list(by)
    for c in by + [x]:
        if c not in rows.columns:
            raise KeyError(f"no column {c!r}; parameter columns: {_param_columns(rows)}")
    fig, ax = _new_axes(ax)
    _series(ax, rows, x=x, by=by, metric=metric, pool=pool, k=k, logy=logy, reference=reference, colors={})
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log", nonpositive="mask")
    what = metric + (f", pool {pool}" if pool is not None else "") + (f", k = {k}" if k is not None else "")
    what += f", level {level:g}" if level is not None else ""
    ax.set_xlabel(x)
    ax.set_ylabel(what + _units(df, metric))
    ax.set_title(title if title is not None else f"{what} against {x}")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    return fig


def _expected_messages(params):
    """Messages per arrival each policy is expected to use (docs/model.md, "Policies"; PULL: [S15], [S17])."""
    name = params.get("policy_name")
    if name is None and params.get("policy"):
        name = meanfield.parse_policy(params["policy"])[0]
    d = params.get("d")
    if name == "pull":
        return 1.0
    if name == "random":
        return 0.0
    if name in ("jsq", "balanced", "lwl") and d is not None:
        return 2.0 * float(d)
    return math.nan


def messages(data, *, by: str | Sequence[str] = "policy", where: Mapping[str, Any] | None = None, ax=None,
             withdrawals: bool = True, references: bool = True, logx: bool = True, logy: bool = False,
             title: str | None = None) -> Figure:
    """Messages per arrival against n, one series per ``by`` value, with interval bars.

    Dashed lines: the rate each policy should use (docs/model.md, "Policies"): 2d for
    JSQ(d) and lwl(d), 2c for balanced(c), 2n for full JSQ, 0 for random, and 1 for
    PULL, its n -> infinity limit (Stolyar 2015; for several routers Stolyar 2017).
    With ``withdrawals=True`` the ``withdrawals_per_arrival`` of series where it is
    not identically 0 is drawn dotted in the same colour.
    """
    df = _apply_where(frame_of(data), where)
    rows = _metric_rows(df, "messages_per_arrival")
    by = [by] if isinstance(by, str) else list(by)
    fig, ax = _new_axes(ax)
    colors: dict = {}
    marks: set = set()
    _series(ax, rows, x="n", by=by, metric="messages_per_arrival", pool=None, k=None, logy=logy,
            reference=_expected_messages if references else None, colors=colors, marks_done=marks)
    if withdrawals and (df["metric"] == "withdrawals_per_arrival").any():
        w = df[df["metric"] == "withdrawals_per_arrival"]
        keep = w.groupby(by, dropna=False)["mean"].transform(lambda s: bool(np.nanmax(np.abs(s.to_numpy(dtype=float)), initial=0) > 0))
        w = w[keep.astype(bool)]
        if not w.empty:
            _series(ax, w, x="n", by=by, metric="withdrawals_per_arrival", pool=None, k=None, logy=logy,
                    reference=None, colors=colors, style=":", label_suffix=" withdrawals", marks_done=marks)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log", nonpositive="mask")
    ax.set_xlabel("n")
    ax.set_ylabel("messages per arrival")
    ax.set_title(title if title is not None else "router-server messages per arrival")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    return fig


def tail(data, *, where: Mapping[str, Any] | None = None, pool=None, meanfield_curve: Any = "auto", ax=None,
         max_series: int = 12, title: str | None = None) -> Figure:
    """Tail ``x_k`` (fraction of a pool's servers with at least k customers) against k, log y.

    One series per selected point and pool, with interval bars; the mean-field
    curve of each point is overlaid dashed (``meanfield_curve="auto"``:
    JSQ(d) ``x_k = lambda^((d^k-1)/(d-1))`` [VDK96, M01], PULL ``x_1`` = busy
    fraction of [S15] and 0 beyond, random routing M/M/1(/B) ``(lambda/mu_j)^k``),
    or a callable ``f(params) -> array (J x K or K)``, an array (same curve for all),
    or ``None``. Zeros are not drawn (log scale). A point without estimates
    (unstable) is listed in the legend as such.
    """
    df = _apply_where(frame_of(data), where)
    rows = df[df["metric"] == "tail"]
    if rows.empty:
        raise ValueError("no 'tail' rows (after where=)")
    if pool is not None:
        rows = rows[rows["pool"] == int(pool)]
    keys = rows[["point", "pool"]].drop_duplicates()
    if len(keys) > max_series:
        raise ValueError(f"{len(keys)} series (points x pools) selected, more than max_series={max_series}: "
                         f"narrow with where= or pool=")
    fig, ax = _new_axes(ax)
    K = int(rows["k"].max()) if not rows.empty else 10
    curves = []
    data_min = math.inf  # smallest value drawn from the data: mean-field curves are cut 3 decades below
    for i, ((pt, pl), g) in enumerate(rows.groupby(["point", "pool"], sort=True)):
        g = g.sort_values("k")
        color = f"C{i % 10}"
        first = _row_params(g.iloc[0])
        label = f"{first.get('policy', '?')}, n={first.get('n', '?')}, λ={_label_value(first.get('lambda'))}, pool {pl}"
        ks = g["k"].to_numpy(dtype=float)
        mean = g["mean"].to_numpy(dtype=float)
        hw = np.nan_to_num(g["half_width"].to_numpy(dtype=float), nan=0.0)
        pos = np.isfinite(mean) & (mean > 0)
        if not np.isfinite(mean).any() or str(first.get("status")) == "unstable":
            ax.plot([], [], ls="none", marker="x", color=color, label=label + " (unstable, no estimate)")
        elif pos.any():
            lower = np.minimum(hw, mean * (1 - 1e-3))
            data_min = min(data_min, float(np.min(mean[pos])))
            ax.errorbar(ks[pos], mean[pos], yerr=[lower[pos], hw[pos]], color=color, marker="o", ms=4,
                        capsize=3, label=label)
        curve = None
        if isinstance(meanfield_curve, str) and meanfield_curve == "auto":
            ref = _auto_reference(first, K)
            if ref is not None and "tail" in ref:
                curve = np.asarray(ref["tail"], dtype=float)
        elif callable(meanfield_curve):
            curve = meanfield_curve(first)
        elif meanfield_curve is not None and meanfield_curve is not False:
            curve = meanfield_curve
        if curve is not None:
            curve = np.asarray(curve, dtype=float)
            if curve.ndim == 2:
                curve = curve[int(pl) - 1]
            curves.append((np.arange(1, curve.size + 1, dtype=float), curve, color, f"{label}: mean field"))
    floor = data_min * 1e-3 if math.isfinite(data_min) else 1e-15
    for kk, curve, color, label in curves:
        show = np.isfinite(curve) & (curve > 0)
        if show.any():
            # cut (not clip) the curve where it falls below the floor, so it does not squash the data
            c = np.where(curve >= floor, curve, np.nan)
            single = np.isfinite(c[show]).sum() == 1  # e.g. PULL: only x_1 > 0; draw a tick mark
            ax.plot(kk[show], c[show], ls="--", color=color, lw=1, label=label,
                    marker="_" if single else None, ms=16, mew=2)
    ax.set_yscale("log", nonpositive="mask")
    ax.set_xlabel("k")
    ax.set_ylabel("x_k: fraction of servers with ≥ k customers")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_title(title if title is not None else "queue-length tail")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    return fig


def heatmap(data, metric: str, x: str | tuple, y: str | tuple, *, pool=None, k=None, level=None,
            where: Mapping[str, Any] | None = None, ax=None, log: bool = False, cmap: str = "viridis",
            annotate: bool | None = None, fmt: str = ".3g", title: str | None = None) -> Figure:
    """Heat map of a metric over a 2-D grid of two parameters (e.g. ``lambda`` x ``beta_1``).

    ``x`` and ``y`` are columns of the tidy frame; a per-pool parameter is
    ``"beta_1"`` or ``("beta", 1)``. The grid is drawn by rank (cells of equal size,
    ticks labelled with the values), so uneven grids stay readable. Unstable points
    are hatched grey cells labelled "unstable"; grid cells without a point are left
    blank. ``log`` uses a logarithmic colour scale (values <= 0 left blank).
    ``annotate`` (default: grids of at most 100 cells) writes the value in each cell.
    All other parameters must be fixed by ``where`` (else ``ValueError``).
    """
    x, y = _col_name(x), _col_name(y)
    df = _apply_where(frame_of(data), where)
    rows = _metric_rows(df, metric, pool, k, level)
    for c in (x, y):
        if c not in rows.columns:
            raise KeyError(f"no column {c!r}; parameter columns: {_param_columns(rows)}")
    if pool is None and rows["pool"].notna().any():
        raise ValueError(f"metric {metric!r} is per pool: pass pool=")
    params = _param_columns(rows)
    key = rows[x].astype(str) + "\x00" + rows[y].astype(str)
    if key.duplicated().any():
        dup = key.duplicated(keep=False)
        varying = [c for c in params if c not in (x, y) and rows.loc[dup, c].astype(str).nunique() > 1]
        raise ValueError(f"several points share a ({x}, {y}) cell; {varying or 'duplicated points'} also "
                         f"vary: fix them with where={{...}}")
    xs = np.sort(rows[x].unique())
    ys = np.sort(rows[y].unique())
    Z = np.full((ys.size, xs.size), np.nan)
    unstable = np.zeros(Z.shape, dtype=bool)
    present = np.zeros(Z.shape, dtype=bool)
    xi = {v: i for i, v in enumerate(xs)}
    yi = {v: i for i, v in enumerate(ys)}
    for _, r in rows.iterrows():
        i, j = yi[r[y]], xi[r[x]]
        present[i, j] = True
        v = float(r["mean"])
        if str(r.get("status")) == "unstable" or not np.isfinite(v):
            unstable[i, j] = True
        else:
            Z[i, j] = v
    fig, ax = _new_axes(ax, figsize=(6.4, 5.0))
    Zm = np.ma.masked_invalid(Z)
    norm = None
    if log:
        Zm = np.ma.masked_where(~(Z > 0), Z)
        if Zm.count():
            norm = mcolors.LogNorm(vmin=Zm.min(), vmax=Zm.max())
    mesh = ax.pcolormesh(np.arange(xs.size + 1) - 0.5, np.arange(ys.size + 1) - 0.5, Zm, cmap=cmap, norm=norm,
                         shading="flat")
    for i, j in zip(*np.nonzero(unstable)):
        ax.add_patch(patches.Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="0.85", edgecolor="0.5", hatch="//",
                                       lw=0.5))
        ax.text(j, i, "unstable", ha="center", va="center", fontsize=7, color="0.2")
    if annotate is None:
        annotate = Z.size <= 100
    if annotate:
        cm = mesh.cmap
        for i, j in zip(*np.nonzero(np.isfinite(Z))):
            rgba = cm(mesh.norm(Z[i, j])) if mesh.norm is not None else (1, 1, 1, 1)
            lum = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2]
            ax.text(j, i, format(Z[i, j], fmt), ha="center", va="center", fontsize=7,
                    color="black" if lum > 0.5 else "white")
    ax.set_xticks(np.arange(xs.size), [_label_value(v) for v in xs])
    ax.set_yticks(np.arange(ys.size), [_label_value(v) for v in ys])
    ax.set_xlim(-0.5, xs.size - 0.5)
    ax.set_ylim(-0.5, ys.size - 0.5)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    what = metric + (f", pool {pool}" if pool is not None else "") + (f", k = {k}" if k is not None else "")
    if Zm.count():
        fig.colorbar(mesh, ax=ax, label=what + _units(df, metric))
    ax.set_title(title if title is not None else what)
    return fig
