"""Plumbing shared by the notebooks in ``analysis/notebooks/``: where the data and figures are.

Environment variables (all optional):

``LBMC_RESULTS``
    the results file of the notebook (one notebook at a time);
``LBMC_RESULTS_DIR``
    the folder holding ``<job>.h5`` for every notebook (default ``results/`` of
    the source tree, where ``lbmc run jobs/<job>.yaml -o results/<job>.h5`` puts it);
``LBMC_FIGURES``
    the folder the PNG figures go to (default ``analysis/notebooks/figures/``),
    named ``<notebook>-<figure>.png``.

Relative paths are taken from the source tree's root.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib

import numpy as np
import xarray as xr

from .io import load

__all__ = ["Context", "context", "open_results", "save", "source_root"]


def source_root() -> pathlib.Path:
    """The source tree: ``LBMC_SOURCE_DIR`` if set, else the folder holding ``analysis/lbmc_analysis``."""
    env = os.environ.get("LBMC_SOURCE_DIR")
    if env:
        return pathlib.Path(env).resolve()
    return pathlib.Path(__file__).resolve().parents[2]


@dataclasses.dataclass
class Context:
    """Paths of one notebook run (see :func:`context`)."""

    notebook: str
    job: str
    root: pathlib.Path
    job_file: pathlib.Path
    results: pathlib.Path
    figures: pathlib.Path
    saved: list = dataclasses.field(default_factory=list)


def _path(value, root):
    p = pathlib.Path(value).expanduser()
    return p if p.is_absolute() else root / p


def context(notebook: str, job: str | None = None) -> Context:
    """Where the notebook ``notebook`` reads its data (job ``job``, default the same name) and saves figures."""
    job = job or notebook
    root = source_root()
    if os.environ.get("LBMC_RESULTS"):
        results = _path(os.environ["LBMC_RESULTS"], root)
    else:
        results = _path(os.environ.get("LBMC_RESULTS_DIR", "results"), root) / f"{job}.h5"
    figures = _path(os.environ.get("LBMC_FIGURES", "analysis/notebooks/figures"), root)
    return Context(notebook=notebook, job=job, root=root, job_file=root / "jobs" / f"{job}.yaml",
                   results=results, figures=figures)


def open_results(ctx: Context) -> xr.Dataset:
    """Load the notebook's results file (grid form) and print where it comes from and its grid.

    Raises ``FileNotFoundError`` with the command that produces the file when it
    is missing.
    """
    if not ctx.results.exists():
        raise FileNotFoundError(
            f"{ctx.results}: no results file. Produce it with\n"
            f"  mpirun -np 2 build/src/lbmc run jobs/{ctx.job}.yaml -o results/{ctx.job}.h5\n"
            f"(from {ctx.root}) or point LBMC_RESULTS / LBMC_RESULTS_DIR at an existing file."
        )
    ds = load(ctx.results)
    same = ctx.job_file.exists() and ds.attrs.get("job", "") == ctx.job_file.read_text()
    status = {s: int(np.sum(ds["status"].values == s)) for s in np.unique(ds["status"].values)}
    print(f"results:  {ctx.results}")
    print(f"written:  {ds.attrs.get('created')} by lbmc {ds.attrs.get('lbmc_version')}, "
          f"{ds.attrs.get('mpi_ranks')} MPI rank(s), {float(ds.attrs.get('wall_seconds', np.nan)):.0f} s wall, "
          f"seed {ds.attrs.get('seed')}, complete = {ds.attrs.get('complete')}")
    print(f"job:      {'jobs/' + ctx.job + '.yaml (identical text)' if same else 'NOT the text of jobs/' + ctx.job + '.yaml (e.g. a reduced test job): the conclusions below are about these data'}")
    if "point" in ds.dims:
        print(f"points:   {ds.sizes['point']} (flat: the grid could not be recovered), status {status}")
    else:
        dims = [d for d in ds["status"].dims]
        print(f"grid:     {' x '.join(f'{d} ({ds.sizes[d]})' for d in dims)}; "
              f"{int((ds['point'].values >= 0).sum())} points, status {status}")
    return ds


def save(ctx: Context, fig, name: str, dpi: int = 110, show: bool = True) -> pathlib.Path:
    """Save ``fig`` as ``<figures>/<notebook>-<name>.png``, show that PNG in a notebook, return the path."""
    ctx.figures.mkdir(parents=True, exist_ok=True)
    path = ctx.figures / f"{ctx.notebook}-{name}.png"
    fig.savefig(path, dpi=dpi)
    ctx.saved.append(path)
    print(f"saved {path}")
    if show:
        try:
            from IPython import get_ipython
            from IPython.display import Image, display
        except ImportError:  # pragma: no cover - IPython comes with ipykernel
            return path
        if get_ipython() is not None:
            display(Image(filename=str(path)))
    return path
