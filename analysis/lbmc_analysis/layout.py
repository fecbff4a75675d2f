"""The tables a results file carries about itself, read from the file, not kept here.

lbmc's C side defines the metrics (``LBMC_METRIC_LIST``), the ``/points`` columns, the
``/replicas`` datasets that are not metrics (``src/io/results_columns.c``) and the
interval flags (``LBMC_IV_FLAG_LIST``) once; a results file carries them as attributes
(docs/results-format.md):

``/estimates`` ``metrics``, ``shapes``
    the metrics in their order, each one's shape after the point axis: ``scalar``,
    ``pool`` (J), ``pool_k`` (J x K) or ``quantile`` (one entry per quantile level);
``/estimates`` ``flag_names``
    the names of the bits of ``/estimates/M/flags`` (bit b is ``flag_names[b]``);
``/points`` ``columns``, ``shapes``
    the columns in their order, each one's shape: ``P``, ``P x J`` or ``P x J x L``;
``/replicas`` ``extras``
    the datasets of ``/replicas`` that are not metrics (``warmup``, ``events``, ...).

Files written before these attributes existed (layout 1, and layout 2 up to lbmc
0.1.0) are read with the tables of docs/results-format.md as they stood then
(``DOC_*`` below), as :mod:`lbmc_analysis.policies` does for the policies: those tables
are frozen, never extended; a newer file brings its own.
"""

from __future__ import annotations

from typing import Mapping

import h5py

from ._h5 import py_value

__all__ = [
    "LAYOUT_VERSION",
    "SUPPORTED_LAYOUT_VERSIONS",
    "DOC_METRICS",
    "DOC_POINTS",
    "DOC_REPLICA_EXTRAS",
    "DOC_FLAG_NAMES",
    "metrics_of",
    "point_columns_of",
    "replica_extras_of",
    "flag_names_of",
    "metric_order",
]

#: the layout version lbmc writes (root attribute ``layout_version``; docs/results-format.md)
LAYOUT_VERSION = 2
#: layout versions this reader understands
SUPPORTED_LAYOUT_VERSIONS = (1, 2)

#: metrics of files without ``/estimates`` attribute ``metrics`` (docs/results-format.md,
#: "Metrics", as it stood then; the quantiles were read as extra datasets with ``levels``).
DOC_METRICS = {
    "p_wait": "scalar",
    "p_block": "scalar",
    "p_wait_or_block": "scalar",
    "mean_sojourn": "scalar",
    "mean_wait": "scalar",
    "mean_queue": "pool",
    "mean_workload": "pool",
    "utilization": "pool",
    "admitted_share": "pool",
    "tail": "pool_k",
    "messages_per_arrival": "scalar",
    "withdrawals_per_arrival": "scalar",
    "throughput": "scalar",
}

#: /points columns of files without ``/points`` attribute ``columns``: the ones every such
#: file has, in the doc's order, with their shapes.
DOC_POINTS = {
    "index": "P",
    "n": "P",
    "lambda": "P",
    "rho": "P",
    "policy": "P",
    "policy_name": "P",
    "d": "P",
    "sampling": "P",
    "routers": "P",
    "stale": "P",
    "beta": "P x J",
    "mu": "P x J",
    "buffer": "P x J",
    "pool_servers": "P x J",
    "time": "P",
    "warmup": "P",
    "batches": "P",
    "replicas": "P",
    "status": "P",
    "reason": "P",
}

#: /replicas datasets that are not metrics, for files without ``/replicas`` attribute ``extras``.
DOC_REPLICA_EXTRAS = ("warmup", "events", "cpu_seconds", "growth", "unstable")

#: names of the bits of /estimates/M/flags for files without ``/estimates`` attribute
#: ``flag_names`` (each flags dataset of layout 2 also lists them, attribute ``names``).
DOC_FLAG_NAMES = ("empty", "none_observed", "all_observed", "no_interval", "correlated", "below_range",
                  "above_range", "upper_open", "lower_open", "unreliable", "infinite", "heavy_tail",
                  "start_bias_unbounded", "start_bias_widened",
                  "few_events")


def _strings(attrs: Mapping, name: str):
    """A list-of-strings attribute as a list of str, None if absent."""
    if name not in attrs:
        return None
    v = py_value(attrs[name])
    return [str(x) for x in (v if isinstance(v, (list, tuple)) else [v])]


def _table(group, names_attr: str, shapes_attr: str, fallback: Mapping) -> dict:
    """{name: shape} from a group's two attributes (equal lengths), else the fallback."""
    if isinstance(group, h5py.Group):
        names, shapes = _strings(group.attrs, names_attr), _strings(group.attrs, shapes_attr)
        if names is not None and shapes is not None and len(names) == len(shapes):
            return dict(zip(names, shapes))
    return dict(fallback)


def metrics_of(f: h5py.File) -> dict:
    """{metric: shape} of an open results file, in the file's order (``/estimates``
    attributes ``metrics`` and ``shapes``; :data:`DOC_METRICS` for files without them)."""
    return _table(f.get("estimates"), "metrics", "shapes", DOC_METRICS)


def point_columns_of(f: h5py.File) -> dict:
    """{column: shape} of the ``/points`` of an open results file, in the file's order
    (attributes ``columns`` and ``shapes``; :data:`DOC_POINTS` for files without them)."""
    return _table(f.get("points"), "columns", "shapes", DOC_POINTS)


def replica_extras_of(f: h5py.File) -> tuple:
    """The ``/replicas`` datasets of an open results file that are not metrics (attribute
    ``extras``; :data:`DOC_REPLICA_EXTRAS` for files without it)."""
    rep = f.get("replicas")
    extras = _strings(rep.attrs, "extras") if isinstance(rep, h5py.Group) else None
    return tuple(extras) if extras is not None else DOC_REPLICA_EXTRAS


def flag_names_of(f: h5py.File) -> tuple:
    """The names of the flag bits of an open results file (``/estimates`` attribute
    ``flag_names``; :data:`DOC_FLAG_NAMES` for files without it)."""
    est = f.get("estimates")
    names = _strings(est.attrs, "flag_names") if isinstance(est, h5py.Group) else None
    return tuple(names) if names is not None else DOC_FLAG_NAMES


def metric_order(attrs: Mapping) -> list:
    """The metrics in their order from a loaded Dataset's attributes (``lbmc_metrics``, set
    by :func:`lbmc_analysis.load` from the file), :data:`DOC_METRICS`' order without it."""
    names = _strings(attrs, "lbmc_metrics")
    return names if names is not None else list(DOC_METRICS)
