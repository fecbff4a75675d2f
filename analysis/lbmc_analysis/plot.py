"""Figures of lbmc results (matplotlib; no pyplot state, safe under the Agg backend).

Every function takes a Dataset from :func:`lbmc_analysis.load` (grid or flat form, or
a selection such as ``ds.sel(policy="pull")``), a tidy DataFrame from
:func:`lbmc_analysis.to_frame` (possibly filtered) or a path, draws on ``ax`` if given
(else on a new :class:`matplotlib.figure.Figure`), and returns the Figure. Save it with
``fig.savefig(...)``; in a notebook ``lbmc_analysis.notebook.save(ctx, fig, name)``
saves the PNG and shows it. ``python3 -m lbmc_analysis plot FILE --metric p_block --x n
--by policy -o fig.png`` draws :func:`metric_vs_n` from the command line.

What every figure shows, so that it can be published as it is:

* axis labels in words with the symbol and the file's units (``arrival rate per
  server, λ [1/time]``; metric labels from :func:`lbmc_analysis.metrics.label`);
* the parameters that are the same for every drawn point on a line under the title
  (``n = 100, λ = 0.9, β = (0.5, 0.5), μ = (2, 0.333), 10 replicas``);
* a legend titled with the parameter(s) that tell the series apart, entries such as
  ``λ = 0.9`` (text values such as policies as they are);
* one colour, marker and line style per series, and series offset slightly along x
  (a few percent, on log axes) so that equal values and their bars stay visible;
* the interval of every estimate as a bar (or a band, ``bands=True``) from the file's
  ``lower`` to its ``upper`` end at its ``confidence`` (not symmetric for proportions
  and rare events; files without the ends: mean -/+ ``half_width``);
* **none observed**: an estimate of exactly 0 with half-width 0 (the event never
  happened in any replica), or any estimate the file gives an ``upper_bound`` for, is
  drawn as a hollow downward triangle at that bound, never joined to the line. Without
  a bound in the file, probabilities of an arrival (``p_wait``, ``p_block``,
  ``p_wait_or_block``) get the one-sided bound ``-ln(1 - confidence) / arrivals`` with
  the expected arrivals ``lambda n time replicas`` ("rule of three"); other metrics
  are marked in the strip above the data area (log scale) or at 0;
* unstable points (no estimate) as ``x`` in a strip above the data area (outside it, so
  that no such mark reads as a value); estimates whose status is
  neither ``ok`` nor ``unstable`` (``precision_not_met``, ``not_stationary``) with
  hollow markers, their status named in the legend;
* heat maps: zero cells white with a ``0``, unstable cells hatched, cells without a point
  grey and dotted, each named in a legend under the map.

Selection: ``where`` is a mapping column -> value, list of values or predicate,
applied to the tidy frame (per-pool parameters are columns ``beta_1``, ``mu_2``...).
``by`` names the column(s) that distinguish the series (default ``policy``).
When two points of one series share an x value, the functions raise ``ValueError``
naming the parameters that still vary, so a figure never silently mixes points.
Metrics are spelled as :mod:`lbmc_analysis.metrics` reads them (``tail[1][3]``,
``utilization[2]``, ``sojourn_quantiles[0.99]``); ``pool=``, ``k=``, ``level=`` do the
same.

Mean-field overlays use :func:`lbmc_analysis.limits.reference_for_point`
(JSQ(d): Vvedenskaya, Dobrushin & Karpelevich 1996, Mitzenmacher 2001; PULL:
Stolyar 2015; random routing: exact M/M/1(/B)), drawn dashed in the series' colour;
their Line2D objects have ``gid="reference"``.
"""

from __future__ import annotations

import math
import os
import textwrap
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr
from matplotlib import colors as mcolors
from matplotlib import patches, ticker, transforms
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from . import limits, meanfield, metrics, policies
from .io import FRAME_FIXED, to_frame

__all__ = ["metric_vs_n", "deviation_vs_n", "tail", "messages", "heatmap", "frame_of", "param_label", "fixed_parameters",
           "add_legend_entries", "interval_bars"]

_MARK_Y = 1.035  # axes fraction where "no value" markers sit: a strip above the data area
_MARK_STEP = 0.035  # and how much higher each further series' markers sit
_MARKERS = ("o", "s", "^", "D", "P", "X", "*", "h", "<", ">")
_LINES = ("-", "--", "-.", ":")
_DODGE = 0.025  # relative x offset between neighbouring series (log x), in decades / 10
_ARRIVAL_PROBABILITIES = ("p_wait", "p_block", "p_wait_or_block")

#: words and symbols of the point parameters (per-pool ones get the pool: beta_2 -> "β_2")
_PARAMS = {
    "n": ("servers", "n"),
    "lambda": ("arrival rate per server", "λ"),
    "rho": ("load", "ρ"),
    "routers": ("routers", "R"),
    "d": ("policy parameter", "d"),
    "beta": ("fraction of servers in pool {j}", "β_{j}"),
    "mu": ("speed of pool {j}", "μ_{j}"),
    "buffer": ("buffer of pool {j}", "B_{j}"),
    "pool_servers": ("servers in pool {j}", "N_{j}"),
    "service": ("service of pool {j}", ""),
    "time": ("measured time per replica", "t"),
    "warmup": ("warm-up", ""),
    "policy": ("policy", ""),
    "stale": ("stale messages", ""),
    "sampling": ("sampling", ""),
    "point_replicas": ("replicas", ""),
}
#: parameters named in the line under the title when they are the same for every drawn point
_CAPTION = ("policy", "n", "lambda", "rho", "routers", "stale", "sampling", "beta", "mu", "buffer", "service",
            "point_replicas")


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
    return [c for c in df.columns if c not in FRAME_FIXED and c != "point"]


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
        return limits.reference_for_point(params, K=max(int(K or 1), 1))
    except (KeyError, ValueError, TypeError):
        return None

def _metric_entry(df, metric, pool=None, k=None, level=None):
    """(name, pool, k, level) of a metric spelled ``tail[1][3]`` (or with pool=/k=/level=)."""
    ref = metrics.parse_metric(metric)
    rows = df[df["metric"] == ref.name]
    idx = list(ref.index)
    if idx and not rows.empty:
        if rows["pool"].notna().any():
            pool = idx.pop(0)
        if idx and rows["k"].notna().any():
            k = idx.pop(0)
        if idx and "level" in rows.columns and rows["level"].notna().any():
            level = idx.pop(0)
        if idx:
            raise ValueError(f"metric {metric!r}: {ref.name!r} has no entry {idx}; write e.g. "
                             f"{metrics.metric_text(ref.name, *(['j'] if rows['pool'].notna().any() else []))!r}")
    return ref.name, pool, k, level


def _metric_rows(df, metric, pool=None, k=None, level=None):
    rows = df[df["metric"] == metric]
    if rows.empty:
        raise ValueError(f"no metric {metric!r} in the data; it has: {', '.join(sorted(df['metric'].unique()))}")
    if pool is not None:
        pools = sorted(int(p) for p in rows["pool"].dropna().unique())
        if int(pool) not in pools:
            raise ValueError(f"metric {metrics.metric_text(metric, pool)!r}: pool {pool} does not exist; "
                             f"the pools are {pools}" if pools else f"metric {metric!r} is not per pool")
        rows = rows[rows["pool"] == int(pool)]
    if rows["k"].notna().any():
        if k is None:
            raise ValueError(f"metric {metric!r} has tail levels: pass k= or write '{metric}[j][k]' "
                             f"(1 <= k <= {int(rows['k'].max())})")
        rows = rows[rows["k"] == int(k)]
    if "level" in rows.columns and rows["level"].notna().any():
        if level is None:
            raise ValueError(f"metric {metric!r} has quantile levels: pass level= or write '{metric}[q]' "
                             f"(q in {sorted(rows['level'].unique())})")
        rows = rows[np.isclose(rows["level"].astype(float), float(level))]
    if rows.empty:
        raise ValueError(f"no rows for metric {metric!r} with pool={pool}, k={k}, level={level}")
    return rows


def _new_axes(ax, figsize=(6.4, 4.6)):
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _label_value(v):
    if isinstance(v, (float, np.floating)):
        return "∞" if math.isinf(v) else f"{v:.4g}"
    return str(v)


def _split_pool(col):
    """("beta", 2) for "beta_2"; (col, None) otherwise."""
    base, _, j = str(col).rpartition("_")
    if base in _PARAMS and j.isdigit():
        return base, int(j)
    return str(col), None


def _symbol(col):
    base, j = _split_pool(col)
    words, sym = _PARAMS.get(base, (None, None)) if base in _PARAMS else (None, None)
    if sym is None:
        return str(col)
    sym = sym.format(j=j) if j is not None else sym.replace("_{j}", "")
    return sym or (words or str(col)).format(j=j)


def param_label(col, df=None) -> str:
    """Axis label of a parameter column: words, symbol, units, e.g. ``arrival rate per server, λ [1/time]``."""
    base, j = _split_pool(col)
    words, sym = _PARAMS.get(base, (None, ""))
    if words is None:
        params = (getattr(df, "attrs", {}) or {}).get("params", {}) if df is not None else {}
        words = (params.get(base) or {}).get("description") or str(col)
    words = words.format(j=j) if j is not None else words.replace(" {j}", "s").replace("{j}", "j")
    sym = sym.format(j=j) if (sym and j is not None) else sym.replace("_{j}", "")
    params = (getattr(df, "attrs", {}) or {}).get("params", {}) if df is not None else {}
    units = (params.get(base) or {}).get("units")
    if units is None and base in ("lambda", "mu"):
        units = "1/time"
    return words + (f", {sym}" if sym else "") + metrics.units_text(units)


def _value_text(col, v):
    base, _ = _split_pool(col)
    if base == "buffer" and not isinstance(v, str) and float(v) < 0:
        return "∞"
    return _label_value(v)


def _entry_text(col, v):
    """Legend entry of one value: ``λ = 0.9`` for numbers, the text itself for text (``pull``);
    "" for no value (a setting the point's policy does not read: empty text, NaN)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, str):
        return v.strip()
    return f"{_symbol(col)} = {_value_text(col, v)}"


def _join_entries(parts, fallback="(no parameters)"):
    """Legend label from entry texts, without empty fields ("pull, withdraw, , pool 1" never)."""
    return ", ".join(p for p in parts if p) or fallback


def _group_label(keys, by):
    return _join_entries(_entry_text(b, v) for b, v in zip(by, keys))


def fixed_parameters(rows: pd.DataFrame, exclude: Sequence[str] = ()) -> str:
    """The parameters with one value over ``rows``, as a line: ``n = 100, λ = 0.9, β = (0.5, 0.5), ...``."""
    parts = []
    cols = [c for c in rows.columns if c not in FRAME_FIXED and c != "point"]
    for base in _CAPTION:
        if base in exclude:
            continue
        per_pool = sorted((c for c in cols if _split_pool(c)[0] == base and _split_pool(c)[1] is not None),
                          key=lambda c: _split_pool(c)[1])
        if per_pool:
            if any(c in exclude for c in per_pool) or any(rows[c].nunique(dropna=False) > 1 for c in per_pool):
                continue
            vals = [rows[c].iloc[0] for c in per_pool]
            if base == "buffer" and all(float(v) < 0 for v in vals):
                continue  # unlimited buffers: the default, not worth a mention
            if base == "service" and all(str(v) == "exponential" for v in vals):
                continue
            sym = _PARAMS[base][1].replace("_{j}", "") or _PARAMS[base][0].replace(" of pool {j}", "")
            txt = [_value_text(f"{base}_1", v) for v in vals]
            parts.append(f"{sym} = " + (txt[0] if len(txt) == 1 else "(" + ", ".join(txt) + ")"))
        elif base in cols and rows[base].nunique(dropna=False) == 1:
            v = rows[base].iloc[0]
            if (isinstance(v, str) and not v) or (base == "routers" and int(v) == 1):
                continue
            if base == "point_replicas":
                parts.append(f"{int(v)} replicas")
            elif base == "rho" and "lambda" in exclude:
                continue
            else:
                parts.append(_entry_text(base, v) if not isinstance(v, str) else
                             (v if base == "policy" else f"{_PARAMS.get(base, (base,))[0]}: {v}"))
    return ", ".join(parts)


def _wrap_parts(text, width=72):
    """Wrap a "a = 1, b = (2, 3), ..." line between its parts, never inside one."""
    lines, cur = [], ""
    for part in text.split(", ") if text else []:
        if cur and part[:1] not in "0123456789-∞" and len(cur) + 2 + len(part) > width:
            lines.append(cur)
            cur = part
        else:
            cur = f"{cur}, {part}" if cur else part
    return "\n".join(lines + ([cur] if cur else []))


def _title(ax, title, rows, exclude, caption=True):
    fig = ax.figure
    width_in = ax.get_position().width * fig.get_figwidth()
    chars = max(30, int(width_in * 11))  # about 11 characters per inch at the title's font size
    line = _wrap_parts(fixed_parameters(rows, exclude), chars) if caption else ""
    strip = getattr(ax, "_lbmc_strip_rows", 0)  # rows of markers above the data area (_mark_bottom)
    pad = 6 + (ax.bbox.height * (_MARK_Y - 1 + _MARK_STEP * strip) * 72 / fig.dpi + 6 if strip else 0)
    if title and line:
        ax.set_title(f"{title}\n{line}", fontsize="medium", pad=pad)
    elif title or line:
        ax.set_title(title or line, fontsize="medium", pad=pad)


_BOOKKEEPING = ("index", "point_replicas", "status", "reason", "replicas")


def _check_unique(g, x, by, params, what="series"):
    dup = g[x].duplicated(keep=False)
    if dup.any():
        clash = g[g[x] == g.loc[dup, x].iloc[0]]
        varying = [c for c in params if c not in (x, *by, *_BOOKKEEPING) and clash[c].astype(str).nunique() > 1]
        raise ValueError(
            f"several points of one {what} share {x} = {clash[x].iloc[0]!r}; the parameters "
            f"{varying or '(none: duplicated points)'} also vary: fix them (where=, --where) or tell the "
            f"series apart by them (by=, --by)"
        )


def _mark_bottom(ax, xs, marker, color, row=0, hollow=False):
    """Markers of points without a value to draw, in a strip above the data area (axes fraction > 1,
    outside it, so that none reads as a value), row r a little higher so series do not hide each
    other; the title moves up above the strip (_title)."""
    if len(xs) == 0:
        return
    trans = transforms.blended_transform_factory(ax.transData, ax.transAxes)
    ax.plot(xs, np.full(len(xs), _MARK_Y + _MARK_STEP * row), ls="none", marker=marker, color=color, ms=7,
            mew=1.5, mfc="none" if hollow else color, transform=trans, clip_on=False, zorder=5, gid="strip")
    ax._lbmc_strip_rows = max(getattr(ax, "_lbmc_strip_rows", 0), row + 1)


def _arrival_bound(g, metric, level):
    """One-sided bound for an arrival probability never observed: -ln(1 - level) / expected arrivals."""
    if metric not in _ARRIVAL_PROBABILITIES or not {"lambda", "n", "time"} <= set(g.columns):
        return np.full(len(g), np.nan)
    reps = g["point_replicas"] if "point_replicas" in g else g.get("replicas", pd.Series(1.0, index=g.index))
    arrivals = (g["lambda"].astype(float) * g["n"].astype(float) * g["time"].astype(float)
                * reps.astype(float)).to_numpy()
    return -math.log(1 - level) / np.where(arrivals > 0, arrivals, np.nan)


def _style(i):
    return f"C{i % 10}", _MARKERS[i % len(_MARKERS)], _LINES[(i // 2) % len(_LINES)]


def _dodge(xs, i, m, logx):
    """Series i of m shifted a little along x (multiplicatively on a log axis) so bars do not overlap."""
    if m <= 1:
        return xs
    off = (i - (m - 1) / 2) * _DODGE
    if logx:
        return xs * 10 ** (off / 4)
    span = (np.nanmax(xs) - np.nanmin(xs)) if xs.size > 1 else 1.0
    return xs + off * span / 4


# ----------------------------------------------------------------------------------
# the series plot behind metric_vs_n and messages
# ----------------------------------------------------------------------------------


class _Legend:
    """What the figure's legend needs besides the series: markers for unstable, none observed, ..."""

    def __init__(self):
        self.notes = {}
        self.series = []

    def note(self, key, handle):
        self.notes.setdefault(key, handle)

    def add(self, handle, label):
        self.series.append((handle, label))

    def draw(self, ax, title, ncols=1):
        handles = [h for h, _ in self.series]
        labels = [lab for _, lab in self.series]
        for h, lab in zip(*ax.get_legend_handles_labels()):  # artists labelled by the caller
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
        for key, h in self.notes.items():
            handles.append(h)
            labels.append(key)
        if not handles:
            return
        many = len(handles) > 8
        kw = dict(loc="upper left", bbox_to_anchor=(1.01, 1.0)) if many else dict(loc="best")
        ax.legend(handles, labels, title=title, fontsize="small", title_fontsize="small", ncols=ncols, **kw)


def add_legend_entries(ax, handles, labels, **kw):
    """Add entries to a legend drawn by these functions, keeping its title and entries (``kw``: legend options)."""
    leg = ax.get_legend()
    old_h = list(getattr(leg, "legend_handles", None) or getattr(leg, "legendHandles", [])) if leg else []
    old_l = [t.get_text() for t in leg.get_texts()] if leg else []
    title = leg.get_title().get_text() if leg else None
    opts = dict(fontsize="small", title_fontsize="small")
    opts.update(kw)
    ax.legend(old_h + list(handles), old_l + list(labels), title=title, **opts)


def interval_bars(ax, x, mean, lower, upper, bound=None, *, color=None, label=None, logy=None, **kw):
    """Estimates with their intervals drawn the way this module draws them, for a notebook's own
    figure: bars from the file's ``lower`` to its ``upper`` (asymmetric: the intervals of
    proportions, quantiles and rare events are not mean -/+ half_width), a lower end at 0 stopped
    just above it on a log axis; where an estimate is only a bound (``bound`` finite, e.g. the
    file's ``upper_bound`` of a probability whose event was never observed), a hollow downward
    triangle at the bound and no point; a NaN end draws no bar on that side.

    ``x``, ``mean``, ``lower``, ``upper`` and ``bound``: arrays of one length (``bound`` may be
    None: no bounds). ``kw`` goes to ``ax.errorbar`` (``marker``, ``ls``, ``capsize``, ...);
    ``logy`` defaults to the axis' scale. Returns the errorbar container (for a legend), or a
    Line2D of the style if no estimate is drawn."""
    x = np.asarray(x, dtype=float)
    mean, lower, upper = (np.asarray(v, dtype=float) for v in (mean, lower, upper))
    bound = np.full(len(x), np.nan) if bound is None else np.asarray(bound, dtype=float)
    if logy is None:
        logy = ax.get_yscale() == "log"
    only_bound = np.isfinite(bound)
    shown = np.isfinite(mean) & ~only_bound & ((mean > 0) if logy else True)
    up = np.clip(np.nan_to_num(upper - mean, nan=0.0), 0, None)
    down = np.clip(np.nan_to_num(mean - lower, nan=0.0), 0, None)
    if logy:
        down = np.minimum(down, mean * (1 - 1e-9))
    opts = dict(capsize=3)
    opts.update(kw)
    if color is not None:
        opts["color"] = color
    if shown.any():
        handle = ax.errorbar(x[shown], mean[shown], yerr=[down[shown], up[shown]], label=label, **opts)
        if handle.lines[0] is not None:  # fmt="none" draws bars only
            color = handle.lines[0].get_color()
        else:
            color = opts.get("ecolor", color)
    else:
        line_kw = {k: v for k, v in opts.items() if k in ("marker", "ls", "linestyle", "color", "ms")}
        handle, = ax.plot([], [], label=label, **line_kw)
        color = handle.get_color()
    keep = only_bound & (bound > 0 if logy else True)
    if keep.any():
        ax.plot(x[keep], bound[keep], ls="none", marker="v", ms=8, mfc="none", mew=1.5, color=color, zorder=5,
                gid="bound")
    return handle


def _reference_values(g, reference, metric, K):
    refs = []
    for _, row in g.iterrows():
        p = _row_params(row)
        pool = None if pd.isna(row.get("pool")) else row.get("pool")
        k = None if pd.isna(row.get("k")) else row.get("k")
        if callable(reference):
            val = reference(p)
            refs.append(_reference_value(val, metric, pool, k, p) if isinstance(val, dict)
                        else float(val) if val is not None else math.nan)
        else:  # "auto"
            refs.append(_reference_value(_auto_reference(p, K), metric, pool, k, p))
    return np.asarray(refs, dtype=float)


def _interval_ends(g, mean, hw):
    """The interval's ends: the file's ``lower`` and ``upper`` where it has them (intervals of
    proportions and quantiles are not symmetric), else mean -/+ half_width (files of layout 1)."""
    lo = g["lower"].to_numpy(dtype=float) if "lower" in g else np.full(len(g), np.nan)
    hi = g["upper"].to_numpy(dtype=float) if "upper" in g else np.full(len(g), np.nan)
    return np.where(np.isfinite(lo), lo, mean - hw), np.where(np.isfinite(hi), hi, mean + hw)


def _draw_series(ax, g, *, i, m, label, x, metric, logx, logy, bands, legend, level, style=None,
                 reference=None, K=10, reference_label="reference (dashed): mean field or exact"):
    """One series: estimates with intervals, none-observed bounds, unstable marks, reference."""
    color, marker, ls = _style(i)
    if style is not None:
        ls = style
    xs_true = g[x].to_numpy(dtype=float)
    xs = _dodge(xs_true, i, m, logx)
    mean = g["mean"].to_numpy(dtype=float)
    hw = g["half_width"].to_numpy(dtype=float)
    status = g["status"].astype(str).to_numpy() if "status" in g else np.full(len(g), "ok")
    bound = g["upper_bound"].to_numpy(dtype=float) if "upper_bound" in g else np.full(len(g), np.nan)
    est = np.isfinite(mean) & (status != "unstable") & (status != "missing")
    none_seen = est & (np.isfinite(bound) | ((mean == 0) & ~(np.nan_to_num(hw, nan=0.0) > 0)))
    bound = np.where(np.isfinite(bound), bound, _arrival_bound(g, metric, level))
    shown = est & ~none_seen & ((mean > 0) if logy else True)
    lo_end, hi_end = _interval_ends(g, mean, hw)
    up = np.clip(np.nan_to_num(hi_end - mean, nan=0.0), 0, None)
    down = np.clip(np.nan_to_num(mean - lo_end, nan=0.0), 0, None)
    lower = np.minimum(down, mean * (1 - 1e-9)) if logy else down  # a lower end at 0 stops above it on log y
    if shown.any():
        if bands:
            handle, = ax.plot(xs[shown], mean[shown], color=color, ls=ls, marker=marker, ms=5)
            ax.fill_between(xs[shown], (mean - lower)[shown], (mean + up)[shown], color=color, alpha=0.18, lw=0)
        else:
            handle = ax.errorbar(xs[shown], mean[shown], yerr=[lower[shown], up[shown]], color=color, ls=ls,
                                 marker=marker, ms=5, capsize=3, lw=1.4)
        legend.add(handle, label)
        flagged = shown & (status != "ok")
        for st in sorted(set(status[flagged])):
            sel = flagged & (status == st)
            ax.plot(xs[sel], mean[sel], ls="none", marker=marker, ms=9, mfc="white", color=color, zorder=4)
            legend.note(f"hollow: {st}", Line2D([], [], ls="none", marker="o", mfc="white", color="0.3"))
    else:  # the series still has its entry
        legend.add(Line2D([], [], color=color, ls=ls, marker=marker, ms=5), label)
    row = i % 6
    has_bound = none_seen & np.isfinite(bound) & (bound > 0)
    if has_bound.any():
        ax.plot(xs[has_bound], bound[has_bound], ls="none", marker="v", ms=8, mfc="none", mew=1.5, color=color,
                zorder=5)
        legend.note("none observed (upper bound)", Line2D([], [], ls="none", marker="v", mfc="none", mew=1.5,
                                                          color="0.3"))
    no_bound = none_seen & ~has_bound
    if no_bound.any():
        if logy:
            _mark_bottom(ax, xs[no_bound], "v", color, row, hollow=True)
        else:
            ax.plot(xs[no_bound], np.zeros(no_bound.sum()), ls="none", marker="v", ms=8, mfc="none", mew=1.5,
                    color=color, zorder=5)
        legend.note("none observed (0, no bound; above the plot on a log axis)", Line2D([], [], ls="none", marker="v", mfc="none", mew=1.5,
                                                          color="0.3"))
    bad = ~est
    if bad.any():
        _mark_bottom(ax, xs[bad], "x", color, row)
        legend.note("above the plot: unstable or missing (no estimate)", Line2D([], [], ls="none", marker="x", mew=1.5,
                                                                 color="0.3"))
    if reference is not None and reference is not False:
        refs = _reference_values(g, reference, metric, K)
        keep = np.isfinite(refs) & ((refs > 0) if logy else True)
        if keep.any():
            ax.plot(xs_true[keep], refs[keep], ls=(0, (4, 2)), color=color, lw=1.3, alpha=0.9, zorder=6,
                    gid="reference")  # above the series, so a reference equal to the data stays visible
            legend.note(reference_label, Line2D([], [], ls=(0, (4, 2)), color="0.3", lw=1))
    return {"shown": mean[shown], "lo": (mean - lower)[shown], "bound": bound[has_bound]}  # lo: the bars' lower ends


def _series(ax, rows, *, x, by, metric, pool, logx, logy, reference, bands, legend, level, start=0, style=None,
            suffix="", **kw):
    params = _param_columns(rows)
    K = int(rows["k"].max()) if rows["k"].notna().any() else 10
    per_pool = pool is None and rows["pool"].notna().any() and rows["pool"].nunique() > 1
    varying = [c for c in by if rows[c].nunique(dropna=False) > 1]  # a by-column with one value goes to the caption
    group_cols = (varying or ([] if per_pool else list(by[:1]))) + (["pool"] if per_pool else [])
    grouper = group_cols[0] if len(group_cols) == 1 else group_cols
    rows = rows.sort_values("point", kind="stable") if "point" in rows else rows
    groups = list(rows.groupby(grouper, sort=False, dropna=False))  # series in the file's (the job's) order
    drawn = []
    for i, (keys, g) in enumerate(groups):
        keys = keys if isinstance(keys, tuple) else (keys,)
        _check_unique(g, x, group_cols, params)
        g = g.sort_values(x)
        label = _group_label(keys, group_cols) + suffix
        drawn.append(_draw_series(ax, g, i=start + i, m=len(groups), label=label, x=x, metric=metric, logx=logx,
                                  logy=logy, bands=bands, legend=legend, level=level, style=style,
                                  reference=reference, K=K, **kw))
    return group_cols, drawn


def _log_limits(ax, drawn):
    """Log y limits from the estimates and bounds (lower bars that reach towards 0 are cut); plain tick
    labels (0.6, 0.8 rather than 6 x 10^-1) when the range is under two decades."""
    vals = np.concatenate([np.concatenate([d["shown"], d["bound"]]) for d in drawn]) if drawn else np.array([])
    vals = vals[np.isfinite(vals) & (vals > 0)]
    ends = np.concatenate([d["lo"] for d in drawn]) if drawn else np.array([])
    ends = ends[np.isfinite(ends) & (ends > 0)]
    if vals.size:  # room for the bars' lower ends, down to 1/100 of the smallest estimate
        lo = min(vals.min() / 4, max(ends.min() / 1.5, vals.min() / 100) if ends.size else np.inf)
        ax.set_ylim(bottom=max(lo, ax.get_ylim()[0]) if ax.get_ylim()[0] > 0 else lo)
    bottom, top = ax.get_ylim()
    if bottom > 0 and top / bottom < 100:
        plain = ticker.FuncFormatter(lambda v, _: f"{v:.3g}")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain if top / bottom < 10 else ticker.NullFormatter())


def _legend_title_of(cols):
    out = []
    for c in cols:
        base, j = _split_pool(c)
        if c == "pool":
            out.append("pool")
        elif base in ("policy", "stale", "sampling") or (base in _PARAMS and not _PARAMS[base][1]):
            out.append(_PARAMS[base][0].format(j=j) if base in _PARAMS else c)
        else:
            out.append(param_label(c).split(" [")[0])
    return "; ".join(out)


def metric_vs_n(data, metric: str, *, by: str | Sequence[str] = "policy", x: str = "n", pool=None, k=None,
                level=None, where: Mapping[str, Any] | None = None, ax=None, logx: bool = True,
                logy: bool = True, reference: str | Callable | None = "auto", title: str | None = None,
                caption: bool = True, bands: bool = False) -> Figure:
    """A metric against ``x`` (default n, log-log), one series per ``by`` value, with intervals.

    ``metric`` is spelled as :mod:`lbmc_analysis.metrics` reads it (``p_block``,
    ``utilization[2]``, ``tail[1][3]``, ``sojourn_quantiles[0.99]``); ``pool=``, ``k=``,
    ``level=`` do the same. A per-pool metric without a pool gives one series per pool.
    Bars (``bands=True``: bands) are the file's half-widths. ``reference="auto"`` draws
    the mean-field / exact value of each point dashed (see
    :func:`lbmc_analysis.limits.reference_for_point`); a callable receives the
    point's parameters (dict) and returns a number or a reference dict; ``None`` draws
    none. ``x`` may name another numeric parameter (``lambda``, ``routers``,
    ``beta_1``). ``title`` goes above the line of fixed parameters (``caption=False``
    leaves that line out). See the module's docstring for what else is drawn.
    """
    df = _apply_where(frame_of(data), where)
    name, pool, k, level = _metric_entry(df, metric, pool, k, level)
    rows = _metric_rows(df, name, pool, k, level)
    by = [by] if isinstance(by, str) else list(by)
    for c in by + [x]:
        if c not in rows.columns:
            raise KeyError(f"no column {c!r}; parameter columns: {_param_columns(rows)}")
    fig, ax = _new_axes(ax)
    legend = _Legend()
    conf = float((df.attrs or {}).get("confidence") or 0.95)
    cols, drawn = _series(ax, rows, x=x, by=by, metric=name, pool=pool, logx=logx, logy=logy, reference=reference,
                          bands=bands, legend=legend, level=conf)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log", nonpositive="mask")
        _log_limits(ax, drawn)
    ax.set_xlabel(param_label(x, df))
    entry = metrics.metric_text(name, *[v for v in (pool, k, level) if v is not None])
    units = (df.attrs or {}).get("units", {}).get(name)
    ax.set_ylabel(metrics.label(None, entry, units=False) + metrics.units_text(units))
    _title(ax, title, rows, exclude=[x, *by] + (["pool"] if "pool" in cols else []), caption=caption)
    ax.grid(True, which="both", alpha=0.25)
    legend.draw(ax, _legend_title_of(cols))
    return fig


def deviation_vs_n(data, metric: str, *, by: str | Sequence[str] = "policy", pool=None, k=None, level=None,
                   where: Mapping[str, Any] | None = None, ax=None, reference: str | Callable = "auto",
                   guide: bool = True, title: str | None = None, caption: bool = True) -> Figure:
    """How far a metric is from its limit against n: ``|estimate - reference|``, log-log.

    One series per ``by`` value (and per pool for a per-pool metric without ``pool``):
    markers joined by a line are the absolute deviations of the estimates from the
    reference (``"auto"``: the mean-field value of each point, as in
    :func:`metric_vs_n`; or a callable of the point's parameters returning a number or
    a reference dict), the thin dashed line of the same colour is the file's half-width
    of each estimate: a deviation below it is within the noise of the estimate (the
    estimate's interval covers the reference), one above it is a real difference at that
    n. A deviation of exactly 0 is marked in the strip above the data area. ``guide=True`` adds a
    grey dotted line proportional to 1/n through the largest deviation at the smallest n, the
    order at which finite-n corrections of mean-field limits usually vanish.
    An estimate of exactly 0 with no interval (none observed) has no deviation to draw
    (hollow triangle above the data area); unstable or missing points are left out
    (``x`` above the data area); a series
    without any reference (the callable returns None) is not drawn.
    """
    df = _apply_where(frame_of(data), where)
    name, pool, k, level = _metric_entry(df, metric, pool, k, level)
    rows = _metric_rows(df, name, pool, k, level)
    by = [by] if isinstance(by, str) else list(by)
    for c in by + ["n"]:
        if c not in rows.columns:
            raise KeyError(f"no column {c!r}; parameter columns: {_param_columns(rows)}")
    K = int(rows["k"].max()) if rows["k"].notna().any() else 10
    per_pool = pool is None and rows["pool"].notna().any() and rows["pool"].nunique() > 1
    varying = [c for c in by if rows[c].nunique(dropna=False) > 1]
    cols = (varying or ([] if per_pool else list(by[:1]))) + (["pool"] if per_pool else [])
    grouper = cols[0] if len(cols) == 1 else cols
    rows = rows.sort_values("point", kind="stable") if "point" in rows else rows
    groups = list(rows.groupby(grouper, sort=False, dropna=False))
    fig, ax = _new_axes(ax)
    legend = _Legend()
    starts = []  # (n, deviation) of each series' first drawn point
    refs = [_reference_values(g.sort_values("n"), reference, name, K) for _, g in groups]
    # series keep their place (colour, marker) of metric_vs_n even when others have no reference
    groups = [(i, keys, g, r) for i, ((keys, g), r) in enumerate(zip(groups, refs)) if np.isfinite(r).any()]
    for i, keys, g, ref in groups:
        keys = keys if isinstance(keys, tuple) else (keys,)
        _check_unique(g, "n", cols, _param_columns(rows))
        g = g.sort_values("n")
        color, marker, _ = _style(i)
        xs = g["n"].to_numpy(dtype=float)
        status = g["status"].astype(str).to_numpy() if "status" in g else np.full(len(g), "ok")
        ok = np.isfinite(g["mean"].to_numpy(dtype=float)) & ~np.isin(status, ("unstable", "missing"))
        mean, hw = g["mean"].to_numpy(dtype=float), g["half_width"].to_numpy(dtype=float)
        none_seen = ok & (mean == 0) & ~(np.nan_to_num(hw, nan=0.0) > 0)  # its deviation is the reference
        ok &= ~none_seen
        dev = np.abs(mean - ref)
        shown = ok & np.isfinite(dev) & (dev > 0)
        handle, = ax.plot(xs[shown], dev[shown], color=color, marker=marker, ms=5, lw=1.4)
        legend.add(handle, _group_label(keys, cols))
        noise = ok & np.isfinite(hw) & (hw > 0)
        if noise.any():
            ax.plot(xs[noise], hw[noise], color=color, ls=(0, (4, 2)), lw=1, alpha=0.85)
            legend.note("dashed: half-width of the estimate", Line2D([], [], ls=(0, (4, 2)), color="0.3", lw=1))
        zero = ok & (dev == 0)
        if zero.any():
            _mark_bottom(ax, xs[zero], marker, color, i % 6, hollow=True)
            legend.note("hollow above the plot: deviation 0", Line2D([], [], ls="none", marker="o", mfc="none",
                                                                   color="0.3"))
        if none_seen.any():
            _mark_bottom(ax, xs[none_seen], "v", color, i % 6, hollow=True)
            legend.note("none observed (no deviation to draw)", Line2D([], [], ls="none", marker="v", mfc="none",
                                                                       mew=1.5, color="0.3"))
        bad = ~ok & ~none_seen
        if bad.any():
            _mark_bottom(ax, xs[bad], "x", color, i % 6)
            legend.note("above the plot: unstable or missing (no estimate)", Line2D([], [], ls="none", marker="x", mew=1.5,
                                                                     color="0.3"))
        if shown.any():
            starts.append((xs[shown][0], dev[shown][0]))
    if guide and starts:
        x0, d0 = min(starts, key=lambda t: (t[0], -t[1]))  # the largest deviation at the smallest n
        xg = np.array([x0, rows["n"].max()], dtype=float)
        ax.plot(xg, d0 * x0 / xg, color="0.45", ls=":", lw=1.2)
        legend.note("dotted: slope 1/n", Line2D([], [], ls=":", color="0.45", lw=1.2))
    ax.set_xscale("log")
    ax.set_yscale("log", nonpositive="mask")
    ax.set_xlabel(param_label("n", df))
    entry = metrics.metric_text(name, *[v for v in (pool, k, level) if v is not None])
    ax.set_ylabel("|" + metrics.label(None, entry, units=False) + " - limit|")
    _title(ax, title, rows, exclude=["n", *by] + (["pool"] if "pool" in cols else []), caption=caption)
    ax.grid(True, which="both", alpha=0.25)
    legend.draw(ax, _legend_title_of(cols))
    return fig

def messages(data, *, by: str | Sequence[str] = "policy", where: Mapping[str, Any] | None = None, ax=None,
             withdrawals: bool = True, references: bool = True, logx: bool = True, logy: bool = False,
             title: str | None = None, caption: bool = True) -> Figure:
    """Messages per arrival against n, one series per ``by`` value, with intervals.

    Dashed: the rate each policy should use, from the file's policy table
    (:func:`lbmc_analysis.policies.message_rules`; docs/model.md "Policies" for older
    files): 2d for JSQ(d) and lwl(d), 2c for balanced(c), 2n for full JSQ, 0 for
    random, and 1 for PULL, its n -> infinity limit (Stolyar 2015; several routers:
    Stolyar 2017). With ``withdrawals=True`` the ``withdrawals_per_arrival`` of series
    where it is not identically 0 is drawn dotted in the same colour.
    """
    df = _apply_where(frame_of(data), where)
    rows = _metric_rows(df, "messages_per_arrival")
    by = [by] if isinstance(by, str) else list(by)
    rules = (df.attrs or {}).get("policy_messages") or policies.DOC_MESSAGES

    def expected(p):
        name = p.get("policy_name") or meanfield.parse_policy(p["policy"])[0]
        return policies.expected_messages(name, p.get("d"), p.get("n"), rules)

    fig, ax = _new_axes(ax)
    legend = _Legend()
    conf = float((df.attrs or {}).get("confidence") or 0.95)
    cols, drawn = _series(ax, rows, x="n", by=by, metric="messages_per_arrival", pool=None, logx=logx, logy=logy,
                          reference=expected if references else None, bands=False, legend=legend, level=conf,
                          reference_label="expected for the policy (dashed)")
    if withdrawals and (df["metric"] == "withdrawals_per_arrival").any():
        w = df[df["metric"] == "withdrawals_per_arrival"]
        keep = w.groupby(by, dropna=False)["mean"].transform(
            lambda s: bool(np.nanmax(np.abs(s.to_numpy(dtype=float)), initial=0) > 0))
        w = w[keep.astype(bool)]
        if not w.empty:
            gkey = cols[0] if len(cols) == 1 else cols
            order = [k if isinstance(k, tuple) else (k,) for k, _ in
                     rows.sort_values("point", kind="stable").groupby(gkey, sort=False, dropna=False)]
            for keys, g in w.sort_values("point", kind="stable").groupby(gkey, sort=False, dropna=False):
                keys = keys if isinstance(keys, tuple) else (keys,)
                i = order.index(keys) if keys in order else len(order)
                _draw_series(ax, g.sort_values("n"), i=i, m=len(order), label=_group_label(keys, cols) + ": withdrawals",
                             x="n", metric="withdrawals_per_arrival", logx=logx, logy=logy, bands=False,
                             legend=legend, level=conf, style=":")
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log", nonpositive="mask")
    ax.set_xlabel(param_label("n", df))
    ax.set_ylabel("router-server messages per arrival")
    _title(ax, title, rows, exclude=["n", *by], caption=caption)
    ax.grid(True, which="both", alpha=0.25)
    legend.draw(ax, _legend_title_of(cols))
    return fig


def tail(data, *, where: Mapping[str, Any] | None = None, pool=None, meanfield_curve: Any = "auto", ax=None,
         max_series: int = 12, title: str | None = None, caption: bool = True) -> Figure:
    """Tail ``x_k`` (fraction of a pool's servers with at least k customers) against k, log y.

    One series per selected point and pool, with intervals; the mean-field curve of
    each point is overlaid dashed (``meanfield_curve="auto"``: JSQ(d)
    ``x_k = lambda^((d^k-1)/(d-1))`` [VDK96, M01], PULL ``x_1`` = busy fraction of
    [S15] and 0 beyond, random routing M/M/1(/B) ``(lambda/mu_j)^k``), or a callable
    ``f(params) -> array (J x K or K)``, an array (same curve for all), or ``None``.
    Levels never observed (estimate 0) are hollow triangles at the file's upper bound,
    or above the data area without one; a point without estimates (unstable) is listed
    in the legend as such. Series entries name only the parameters that differ
    between the series; the others are in the line under the title.
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
    legend = _Legend()
    conf = float((df.attrs or {}).get("confidence") or 0.95)
    per_point = rows.drop_duplicates("point")
    varying = [c for c in ("policy", "n", "lambda", "routers", "stale", "sampling") if c in rows
               and per_point[c].nunique() > 1]
    varying += [c for c in _param_columns(rows) if _split_pool(c)[1] is not None and c not in varying
                and _split_pool(c)[0] in ("beta", "mu", "buffer", "service") and per_point[c].nunique() > 1]
    multi_pool = rows["pool"].nunique() > 1
    K = int(rows["k"].max())
    curves, drawn = [], []
    groups = list(rows.groupby(["point", "pool"], sort=True))
    labels = [_join_entries([_entry_text(c, _row_params(g.iloc[0]).get(c)) for c in varying]
                            + ([f"pool {int(pl)}"] if multi_pool else []), f"pool {int(pl)}") for (pt, pl), g in groups]
    for i, ((pt, pl), g) in enumerate(groups):
        g = g.sort_values("k")
        first = _row_params(g.iloc[0])
        label = labels[i] + (f" (point {int(pt)})" if labels.count(labels[i]) > 1 else "")  # the same system twice
        drawn.append(_draw_series(ax, g, i=i, m=len(groups), label=label, x="k", metric="tail", logx=False, logy=True,
                                  bands=False, legend=legend, level=conf))
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
            curves.append((np.arange(1, curve.size + 1, dtype=float), curve, _style(i)[0]))
    shown = np.concatenate([d["shown"] for d in drawn]) if drawn else np.array([])
    shown = shown[np.isfinite(shown) & (shown > 0)]
    floor = shown.min() * 1e-3 if shown.size else 1e-15
    for kk, curve, color in curves:
        keep = np.isfinite(curve) & (curve > 0)
        # cut (not clip) the curve where it falls below the floor, so it does not squash the data
        c = np.where(curve >= floor, curve, np.nan)
        if np.isfinite(c[keep]).any():  # named in the legend only when something of it is drawn
            single = np.isfinite(c[keep]).sum() == 1  # e.g. PULL: only x_1 > 0; draw a tick mark
            ax.plot(kk[keep], c[keep], ls=(0, (4, 2)), color=color, lw=1.3, marker="_" if single else None, ms=16,
                    mew=2, zorder=6, gid="reference")  # above the data: never hidden under a series
            legend.note("mean field (dashed)", Line2D([], [], ls=(0, (4, 2)), color="0.3", lw=1.3))
    ax.set_yscale("log", nonpositive="mask")
    _log_limits(ax, drawn)
    ax.set_xlabel("customers at a server, k")
    ax.set_ylabel("fraction of the pool's servers with ≥ k customers, $x_k$")
    ax.xaxis.get_major_locator().set_params(integer=True)
    _title(ax, title, rows.drop_duplicates("point"), exclude=varying, caption=caption)
    ax.grid(True, which="both", alpha=0.25)
    legend.draw(ax, "; ".join(_legend_title_of([c]) for c in varying) + ("; pool" if multi_pool else ""))
    return fig


def heatmap(data, metric: str, x: str | tuple, y: str | tuple, *, pool=None, k=None, level=None,
            where: Mapping[str, Any] | None = None, ax=None, log: bool = False, cmap: str = "viridis",
            annotate: bool | None = None, fmt: str = ".3g", title: str | None = None,
            caption: bool = True) -> Figure:
    """Heat map of a metric over a 2-D grid of two parameters (e.g. ``lambda`` x ``beta_1``).

    ``metric`` as in :func:`metric_vs_n` (``utilization[2]``). ``x`` and ``y`` are columns
    of the tidy frame; a per-pool parameter is ``"beta_1"`` or ``("beta", 1)``. The grid
    is drawn by rank (cells of equal size, ticks labelled with the values), so uneven
    grids stay readable. Cells: a value in colour; exactly 0 ("none observed") white
    with "0", so a log colour scale does not hide it; unstable points hatched grey
    ("unstable"); cells of the grid without a point (missing, not run) light grey and
    dotted; a legend under the map names each kind that occurs. ``log`` uses a
    logarithmic colour scale. ``annotate`` (default: grids of at most 100 cells)
    writes the value in each cell. All other parameters must be fixed by ``where``
    (else ``ValueError``).
    """
    x, y = _col_name(x), _col_name(y)
    df = _apply_where(frame_of(data), where)
    name, pool, k, level = _metric_entry(df, metric, pool, k, level)
    rows = _metric_rows(df, name, pool, k, level)
    for c in (x, y):
        if c not in rows.columns:
            raise KeyError(f"no column {c!r}; parameter columns: {_param_columns(rows)}")
    if pool is None and rows["pool"].notna().any():
        raise ValueError(f"metric {name!r} is per pool: pass pool= or write '{name}[j]'")
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
    kind = np.full(Z.shape, "missing", dtype=object)
    xi = {v: i for i, v in enumerate(xs)}
    yi = {v: i for i, v in enumerate(ys)}
    for _, r in rows.iterrows():
        i, j = yi[r[y]], xi[r[x]]
        v = float(r["mean"])
        st = str(r.get("status"))
        if st in ("unstable",) or (not np.isfinite(v) and st != "missing"):
            kind[i, j] = "unstable"
        elif st == "missing" or not np.isfinite(v):
            kind[i, j] = "missing"
        elif v == 0:
            kind[i, j] = "zero"
        else:
            kind[i, j], Z[i, j] = "value", v
    fig, ax = _new_axes(ax, figsize=(6.4, 5.4))
    Zm = np.ma.masked_where(~(kind == "value") | (~(Z > 0) if log else False), Z)
    norm = mcolors.LogNorm(vmin=Zm.min(), vmax=Zm.max()) if log and Zm.count() else None
    mesh = ax.pcolormesh(np.arange(xs.size + 1) - 0.5, np.arange(ys.size + 1) - 0.5, Zm, cmap=cmap, norm=norm,
                         shading="flat")
    styles = {"zero": dict(facecolor="white", edgecolor="0.6", hatch=None, text="0"),
              "unstable": dict(facecolor="0.82", edgecolor="0.45", hatch="//", text="unstable"),
              "missing": dict(facecolor="0.93", edgecolor="0.6", hatch="..", text="")}
    for kd, st in styles.items():
        for i, j in zip(*np.nonzero(kind == kd)):
            ax.add_patch(patches.Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=st["facecolor"], edgecolor=st["edgecolor"],
                                           hatch=st["hatch"], lw=0.5))
            if st["text"]:
                ax.text(j, i, st["text"], ha="center", va="center", fontsize=7, color="0.2")
    if annotate is None:
        annotate = Z.size <= 100
    if annotate:
        cm = mesh.cmap
        for i, j in zip(*np.nonzero(kind == "value")):
            rgba = cm(mesh.norm(Z[i, j])) if mesh.norm is not None else (1, 1, 1, 1)
            lum = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2]
            ax.text(j, i, format(Z[i, j], fmt), ha="center", va="center", fontsize=7,
                    color="black" if lum > 0.5 else "white")
    ax.set_xticks(np.arange(xs.size), [_value_text(x, v) for v in xs])
    ax.set_yticks(np.arange(ys.size), [_value_text(y, v) for v in ys])
    ax.set_xlim(-0.5, xs.size - 0.5)
    ax.set_ylim(-0.5, ys.size - 0.5)
    ax.set_xlabel(param_label(x, df))
    ax.set_ylabel(param_label(y, df))
    entry = metrics.metric_text(name, *[v for v in (pool, k, level) if v is not None])
    units = (df.attrs or {}).get("units", {}).get(name)
    what = metrics.label(None, entry, units=False) + metrics.units_text(units)
    if Zm.count():
        fig.colorbar(mesh, ax=ax, label="\n".join(textwrap.wrap(what, 40)))
    names = {"zero": "0: none observed", "unstable": "unstable (no estimate)", "missing": "no point in the file"}
    handles = [patches.Patch(facecolor=styles[kd]["facecolor"], edgecolor=styles[kd]["edgecolor"],
                             hatch=styles[kd]["hatch"], label=names[kd]) for kd in styles if (kind == kd).any()]
    if handles:
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncols=len(handles),
                  fontsize="small", frameon=False)
    _title(ax, title if title is not None else what, rows, exclude=[x, y], caption=caption)
    return fig
