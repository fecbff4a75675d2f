"""lbmc_analysis: load lbmc results (HDF5) into xarray/pandas, mean-field references, figures.

Use with ``PYTHONPATH=analysis`` (no installation) and Debian's Python
(``/usr/bin/python3`` with python3-h5py, -numpy, -scipy, -pandas, -xarray,
-matplotlib).

* :func:`load` / :func:`to_frame` / :func:`to_replica_frame` / :func:`select_points`:
  read a results file, layout of ``docs/results-format.md`` (versions 1 and 2);
* :func:`check_file`: list the deviations of a file from that document;
* :func:`compare`: paired difference and ratio of two policies per scenario;
* :mod:`lbmc_analysis.grid`: the job's axes as dimensions (:func:`load`'s default),
  :func:`flatten` back to one row per point;
* :mod:`lbmc_analysis.metrics`: one spelling for metric entries (``tail[2][3]``,
  ``utilization[2]``, ``sojourn_quantiles[0.99]``): :func:`parse_metric`;
* :mod:`lbmc_analysis.meanfield`: JSQ(d) (Vvedenskaya, Dobrushin & Karpelevich 1996;
  Mitzenmacher 2001), PULL (Stolyar 2015, 2017), random routing, balanced routing
  (Chen & Ye 2012), Erlang-B, M/M/1(/B);
* :mod:`lbmc_analysis.plot`: figures (matplotlib, no pyplot state; Agg-safe);
* :mod:`lbmc_analysis.derived`: metrics computed from the per-replica values
  (e.g. the workload), with Student-t intervals like the file's own;
* :mod:`lbmc_analysis.notebook`: where the notebooks read results and save figures.

The model, metrics and references are described in docs/model.md and docs/results-format.md.
"""

from . import derived, grid, layout, meanfield, metrics, notebook, policies
from .compare import compare
from .conformance import check_file
from .grid import flatten, to_grid
from .io import (
    FLAG_NAMES,
    METRICS,
    SUPPORTED_LAYOUT_VERSIONS,
    GridWarning,
    LbmcFormatError,
    PartialResultsWarning,
    flag_names,
    load,
    metric_names,
    select_points,
    to_frame,
    to_replica_frame,
)
from .metrics import parse_metric

__version__ = "0.1.0"

__all__ = [
    "FLAG_NAMES",
    "GridWarning",
    "LbmcFormatError",
    "METRICS",
    "PartialResultsWarning",
    "SUPPORTED_LAYOUT_VERSIONS",
    "check_file",
    "flag_names",
    "compare",
    "derived",
    "flatten",
    "grid",
    "layout",
    "load",
    "meanfield",
    "notebook",
    "metric_names",
    "metrics",
    "parse_metric",
    "policies",
    "select_points",
    "to_frame",
    "to_grid",
    "to_replica_frame",
]
