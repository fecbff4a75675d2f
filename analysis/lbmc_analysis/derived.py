"""Metrics derived from the per-replica values of a loaded results file.

A derived metric gets the same four variables as a metric of the file (``M``,
``M_half_width``, ``M_std_err``, ``M_replicas``), so :func:`lbmc_analysis.to_frame`
and :mod:`lbmc_analysis.plot` treat it like any other. Its interval comes from the
replicas, as the file's own (docs/model.md, "Estimation"): the mean of the replica
values, the standard error of that mean and the two-sided Student-t half-width on
``replicas - 1`` degrees of freedom at the file's ``confidence`` (symmetric: the file's
own ratio intervals are made asymmetric by Hall's skewness correction, so a derived
metric equal to a file metric has the same estimate and standard error but may have
other ends). A point with one
replica gets a NaN interval (the batch means behind the file's one-replica
intervals are not in the file); a point whose ``status`` is ``unstable`` gets NaN
estimates, as in the file.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr
from scipy import stats

from . import meanfield

__all__ = ["add_metric", "workload"]


def _ran(ds: xr.Dataset) -> xr.DataArray:
    """Mask of the replica slots that were run (point or grid dims, replica)."""
    n_run = ds["point_replicas"] if "point_replicas" in ds.coords else ds["replicas"]
    return ds["replica"] < n_run


def add_metric(ds: xr.Dataset, name: str, replica_values: xr.DataArray, *, units: str, description: str,
               include_unstable: bool = False) -> xr.Dataset:
    """A copy of ``ds`` with the metric ``name`` computed from per-replica values.

    ``replica_values`` has the dims of an ``M_replicas`` variable of
    :func:`lbmc_analysis.load`: ``(point, replica, ...)`` in the flat form, the grid's
    dimensions then ``replica`` in the grid form (slots never run are ignored). ``include_unstable``
    keeps estimates at unstable points (e.g. the message rate of a run that was
    stopped as unstable; the ``status`` coordinate still says ``unstable``).
    """
    if "replica" not in replica_values.dims:
        raise ValueError(f"replica_values must have a 'replica' dimension (like M_replicas); got {replica_values.dims}")
    if name in ds.data_vars:
        raise ValueError(f"the dataset already has a variable {name!r}")
    v = replica_values.where(_ran(ds))
    count = v.count("replica")
    with warnings.catch_warnings():  # points without replicas (or one): NaN, no warning
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = v.mean("replica", skipna=True)
        se = v.std("replica", skipna=True, ddof=1) / np.sqrt(count.where(count > 1))
    level = float(ds.attrs.get("confidence", 0.95))
    tq = xr.apply_ufunc(lambda c: stats.t.ppf(0.5 + level / 2, np.where(c > 1, c - 1, np.nan)), count)
    hw = tq * se
    if not include_unstable and "status" in ds.coords:
        bad = ds["status"] == "unstable"
        mean, se, hw = (x.where(~bad) for x in (mean, se, hw))
    attrs = {"units": units, "description": description, "derived": "lbmc_analysis.derived.add_metric"}
    out = ds.copy()
    out[name] = mean.assign_attrs(attrs)
    out[f"{name}_half_width"] = hw.assign_attrs(units=units, confidence=level,
                                               description=f"half-width of the Student-t interval of {name}")
    out[f"{name}_std_err"] = se.assign_attrs(units=units, description=f"standard error of {name}")
    out[f"{name}_replicas"] = v.assign_attrs(units=units, description=f"per-replica values of {name}")
    return out


def workload(ds: xr.Dataset, name: str = "workload") -> xr.Dataset:
    """Add the workload per server ``W = (1/n) sum_j N_j mean_queue_j / mu_j`` (model time).

    The unfinished work per server (see
    :func:`lbmc_analysis.meanfield.workload_per_server`), computed per replica from
    ``mean_queue_replicas`` with the realised pool sizes ``N_j = pool_servers_j``.
    """
    frac = ds["pool_servers"] / ds["n"]
    per_rep = xr.apply_ufunc(meanfield.workload_per_server, ds["mean_queue_replicas"], frac, ds["mu"],
                             input_core_dims=[["pool"], ["pool"], ["pool"]])
    return add_metric(ds, name, per_rep, units="time",
                      description="unfinished work per server: (1/n) sum_j N_j mean_queue_j / mu_j")
