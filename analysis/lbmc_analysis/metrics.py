"""One spelling for a metric and its entry: ``p_wait``, ``utilization[2]``, ``tail[2][3]``,
``sojourn_quantiles[0.99]``.

The names are those of docs/results-format.md ("Metrics"), written as ``lbmc sim`` prints
them and as job files take them (``run.precision.metric``, docs/job-files.md): pools and
tail levels 1-based (``tail[j][k]``: pool j, at least k customers), quantile levels as
probabilities. :func:`parse_metric` reads the text, :func:`resolve` checks it against a
loaded Dataset (which entries exist comes from the file, not from a list here), and
:func:`select` returns the values. Every function of the package that takes a metric
takes this spelling. :func:`label` gives the axis label of a figure (words, symbol,
units from the file).
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import xarray as xr

__all__ = ["MetricRef", "parse_metric", "resolve", "select", "label", "metric_text"]

_SYNTAX = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*((?:\[[^\[\]]*\]\s*)*)$")


@dataclasses.dataclass(frozen=True)
class MetricRef:
    """A metric entry: ``name`` and the selectors of its entry (pool 1..J, k 1..K, quantile level).

    ``str(ref)`` is the canonical spelling (``tail[2][3]``). ``selectors`` maps the
    metric's own dimensions (``pool``, ``k``, ``level``) to the values to select.
    """

    name: str
    index: tuple = ()
    selectors: tuple = ()  # ((dim, value), ...), set by resolve()

    def __str__(self):
        return metric_text(self.name, *self.index)

    @property
    def pool(self):
        return dict(self.selectors).get("pool")

    @property
    def k(self):
        return dict(self.selectors).get("k")

    @property
    def level(self):
        return next((v for d, v in self.selectors if d.startswith("level")), None)


def metric_text(name, *index) -> str:
    """The canonical spelling: ``metric_text("tail", 2, 3) == "tail[2][3]"``."""
    return name + "".join(f"[{_fmt(i)}]" for i in index if i is not None)


def _fmt(v):
    if isinstance(v, (bool, str)):
        return str(v)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):g}"
    return str(v)


def _index_value(text, metric):
    t = text.strip()
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        raise ValueError(f"metric {metric!r}: {t!r} in brackets is not a number; write e.g. 'utilization[2]' "
                         f"(pool 2), 'tail[2][3]' (pool 2, k = 3) or 'sojourn_quantiles[0.99]'") from None


def parse_metric(text) -> MetricRef:
    """Read ``"tail[2][3]"`` into ``MetricRef("tail", (2, 3))`` (syntax only; see :func:`resolve`).

    A :class:`MetricRef` is returned unchanged. Raises ``ValueError`` naming the text
    when it is not a name followed by bracketed numbers.
    """
    if isinstance(text, MetricRef):
        return text
    m = _SYNTAX.match(str(text))
    if not m:
        raise ValueError(f"metric {text!r}: not a metric name; write e.g. 'p_wait', 'utilization[2]', "
                         f"'tail[2][3]' or 'sojourn_quantiles[0.99]'")
    index = tuple(_index_value(t, text) for t in re.findall(r"\[([^\[\]]*)\]", m.group(2)))
    return MetricRef(m.group(1), index)


def _entry_dims(da: xr.DataArray) -> list:
    """The metric's own dimensions (its entries): pool, tail level k, quantile level."""
    return [d for d in da.dims if d in ("pool", "k") or str(d).startswith("level")]


def _what(name, dims, ds):
    """How to write the entries of a metric with these dims (for messages)."""
    parts, ranges = [], []
    for d in dims:
        if d == "pool":
            parts.append("j")
            ranges.append(f"1 <= j <= {ds.sizes['pool']}")
        elif d == "k":
            parts.append("k")
            ranges.append(f"1 <= k <= {ds.sizes['k']}")
        else:
            parts.append("q")
            ranges.append("q in " + ", ".join(f"{v:g}" for v in ds[d].values))
    words = {("pool",): "one value per pool", ("pool", "k"): "one value per pool and tail level k"}
    kind = words.get(tuple(dims), "one value per quantile level" if dims else "one value per point")
    return kind, metric_text(name, *parts), ", ".join(ranges)


def resolve(ds: xr.Dataset, text) -> MetricRef:
    """Check a metric spelling against a loaded Dataset; return it with its selectors.

    The entries a metric has come from its variable's dimensions in ``ds`` (``pool``,
    ``k``, a quantile ``level``). Raises ``KeyError`` for a metric the Dataset does not
    have (listing those it has) and ``ValueError`` for a wrong number of brackets or a
    pool, level or quantile that does not exist, saying what to write, e.g.
    ``'utilization' has one value per pool: write 'utilization[j]' with 1 <= j <= 2``.
    """
    from .io import metric_names

    ref = parse_metric(text)
    if ref.name not in ds.data_vars:
        raise KeyError(f"metric {str(ref)!r}: no metric {ref.name!r} in the data; it has: "
                       f"{', '.join(metric_names(ds))}")
    dims = _entry_dims(ds[ref.name])
    kind, spelled, ranges = _what(ref.name, dims, ds)
    if len(ref.index) != len(dims):
        raise ValueError(f"metric {str(ref)!r}: {ref.name!r} has {kind}: write {spelled!r}"
                         + (f" with {ranges}" if ranges else ""))
    sel = []
    for d, v in zip(dims, ref.index):
        if d in ("pool", "k"):
            if not float(v).is_integer() or int(v) not in set(ds[d].values.tolist()):
                raise ValueError(f"metric {str(ref)!r}: {d} {v!r} does not exist; write {spelled!r} with {ranges}")
            sel.append((d, int(v)))
        else:
            levels = ds[d].values
            hit = np.flatnonzero(np.isclose(levels, float(v), rtol=1e-9, atol=1e-12))
            if hit.size != 1:
                raise ValueError(f"metric {str(ref)!r}: no quantile level {v:g}; write {spelled!r} with {ranges}")
            sel.append((d, float(levels[hit[0]])))
    return MetricRef(ref.name, ref.index, tuple(sel))


def select(ds: xr.Dataset, text, part: str = "") -> xr.DataArray:
    """The values of a metric entry: ``part=""`` the mean, else ``"half_width"``, ``"std_err"``,
    ``"upper_bound"`` or ``"replicas"`` (``ds[f"{name}_{part}"]``), with the entry selected.

    Raises ``KeyError`` if the Dataset has no such part (e.g. no ``upper_bound``).
    """
    ref = resolve(ds, text)
    var = ref.name if not part else f"{ref.name}_{part}"
    if var not in ds:
        raise KeyError(f"metric {str(ref)!r}: the data have no {var!r}")
    da = ds[var]
    return da.sel({d: v for d, v in ref.selectors}) if ref.selectors else da


#: words and symbol (matplotlib mathtext) of the metrics of docs/results-format.md; {j}, {k}, {q}
#: are the entry (other braces doubled, as str.format wants). A metric not listed here is labelled with its description from the file.
_WORDS = {
    "p_wait": ("probability of waiting", r"$P(\mathrm{{wait}})$"),
    "p_block": ("blocking probability", r"$P(\mathrm{{block}})$"),
    "p_wait_or_block": ("probability of waiting or blocking", r"$P(\mathrm{{wait\ or\ block}})$"),
    "mean_sojourn": ("mean sojourn time", r"$E[T]$"),
    "mean_wait": ("mean waiting time", r"$E[W]$"),
    "mean_queue": ("mean customers at a server of pool {j}", r"$E[Q_{j}]$"),
    "utilization": ("busy fraction of pool {j}", r"$u_{j}$"),
    "admitted_share": ("share of admitted customers sent to pool {j}", r"$a_{j}$"),
    "tail": ("fraction of pool {j}'s servers with ≥ {k} customers", r"$x_{{{k}}}$"),
    "messages_per_arrival": ("messages per arrival", ""),
    "withdrawals_per_arrival": ("withdrawals per arrival", ""),
    "throughput": ("throughput per server", ""),
    "sojourn_quantiles": ("{q} quantile of the sojourn time", r"$T_{{{q}}}$"),
    "wait_quantiles": ("{q} quantile of the waiting time", r"$W_{{{q}}}$"),
}


def units_text(units) -> str:
    """`` [time]`` for the file's units ``time``; ``""`` for dimensionless (``1``) or none."""
    return f" [{units}]" if units and str(units) != "1" else ""


def label(ds: xr.Dataset | None, text, *, symbol: bool = True, units: bool = True) -> str:
    """Axis label of a metric entry: words, symbol and units, e.g. ``busy fraction of pool 2, $u_2$``
    or ``mean sojourn time, $E[T]$ [time]`` (units from the file's ``units`` attribute)."""
    ref = resolve(ds, text) if ds is not None else parse_metric(text)
    sel = dict(ref.selectors) if ref.selectors else {}
    j = sel.get("pool", ref.index[0] if ref.index and ref.name in ("mean_queue", "utilization",
                                                                   "admitted_share", "tail") else "j")
    k = sel.get("k", ref.index[1] if len(ref.index) > 1 else "k")
    q = ref.level if ref.level is not None else (ref.index[0] if ref.index else "q")
    fill = {"j": _fmt(j), "k": _fmt(k), "q": _fmt(q)}
    if ref.name in _WORDS:
        words, sym = (t.format(**fill) for t in _WORDS[ref.name])
    else:
        desc = ds[ref.name].attrs.get("metric_description") if ds is not None and ref.name in ds else None
        words, sym = (desc or str(ref)), ""
    out = words + (f", {sym}" if symbol and sym else "")
    if units and ds is not None and ref.name in ds:
        out += units_text(ds[ref.name].attrs.get("units"))
    return out
