#!/usr/bin/python3
"""CI test of the analysis notebooks (ctest: analysis-notebooks).

1. Runs the real ``lbmc run`` ($LBMC) on the reduced job files of
   tests/analysis/jobs/ (same axes as jobs/<job>.yaml, smaller n, shorter time, fewer
   replicas; a notebook may read companion jobs, COMPANIONS), two at a time, into a
   temporary folder.
2. Executes every notebook of analysis/notebooks/ headlessly with nbclient, on a
   python3 kernel registered in a temporary Jupyter path (Debian's /usr/bin/python3
   and ipykernel), with LBMC_RESULTS_DIR and LBMC_FIGURES pointing into the
   temporary folder, so nothing is written into the source tree. Any cell error
   fails the test.
3. Checks that every notebook loaded its results in the grid form with the job's axes as
   dimensions (the "grid:" line open_results prints) and selects cells with a grid-shaped
   ``.sel`` (GRID), and that every expected PNG was written (a real PNG of plausible size), that
   every notebook printed its computed verdict, and that the notebooks in the
   repository carry no outputs.

Environment: LBMC (the lbmc program) and LBMC_SOURCE_DIR (the source tree), as
set by lbmc_add_test. ``--keep DIR`` keeps the results, figures and executed
notebooks in DIR (to look at them); ``--only NAME`` runs one notebook;
``--results DIR`` uses DIR/<job>.h5 (e.g. the real results/) instead of running the
reduced jobs; ``--clear`` removes the outputs of the notebooks in the repository
(do it before committing) and exits.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

# notebook -> the figures it must save (<notebook>-<name>.png)
EXPECTED = {
    "pull-heterogeneous": ["p_wait_or_block", "messages", "pull_utilization"],
    "jsq-tails": ["tails", "tail_vs_n", "mean_sojourn"],
    "multi-router-pull": ["p_wait_or_block_vs_n", "messages_vs_n", "effect_of_R"],
    "finite-buffers": ["p_block", "p_wait_or_block"],
    "balanced-heavy-traffic": ["scaled_customers", "scaled_workload"],
    "general-service": ["mean_sojourn", "p_wait", "sojourn_p99"],
    "asymptotic-independence": ["vs_limit", "scaled_error", "pair_dependence"],
    "transient-and-refined": ["transient", "transient_scaled", "steady", "steady_scaled"],
}
# notebook -> further jobs whose results it reads (tests/analysis/jobs/<job>.yaml, results <job>.h5)
COMPANIONS = {
    "multi-router-pull": ["multi-router-pull-keep"],
    "transient-and-refined": ["transient-jsq2"],
}
# notebook -> the grid dimensions la.load gives its results (the job's axes; open_results prints them)
# and a grid-shaped selection its code must make (ds.sel on those dimensions); "scale" is n linked
# with run.warmup and run.time by the job's `together`
GRID = {
    "pull-heterogeneous": (["scale", "policy"], 'ds.sel(policy=policy)'),
    "jsq-tails": (["scale", "lambda_", "policy"], 'ds.sel(n=n, lambda_=lam, policy=pol)'),
    "multi-router-pull": (["scale", "routers", "stale"], 'data.sel(routers=R, stale=s)'),
    "finite-buffers": (["scale", "buffer_1", "policy"], 'ds.sel(policy=pol, buffer_1=B)'),
    "balanced-heavy-traffic": (["load", "policy"], 'dsh.sel(policy=f"balanced({c})")'),
    "general-service": (["scale", "service", "policy"], 'ds.sel(policy=policy, service=service, n=n)'),
    "asymptotic-independence": (["scale", "service", "policy"], 'ds.sel(service=svc, policy=pol)'),
    "transient-and-refined": (["scale", "policy"], 'ds.sel(policy=pol)'),
}
VERDICT = "CLAIM "  # every notebook's last cell prints "CLAIM HOLDS ..." or "CLAIM DOES NOT FULLY HOLD ..."
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    return 1


def run_jobs(lbmc, jobs_dir, out_dir, names):
    def one(name):
        job = jobs_dir / f"{name}.yaml"
        t0 = time.monotonic()
        p = subprocess.run([lbmc, "run", str(job), "-o", str(out_dir / f"{name}.h5"), "--quiet"],
                           capture_output=True, text=True, timeout=600)
        return name, p.returncode, p.stderr, time.monotonic() - t0

    errors = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for name, rc, err, dt in pool.map(one, names):
            if rc != 0:
                errors += fail(f"lbmc run {name}: exit status {rc}\n{err}")
            else:
                print(f"ok: lbmc run tests/analysis/jobs/{name}.yaml ({dt:.1f} s)", flush=True)
    return errors


def kernel_dir(root):
    """A Jupyter data dir with a kernel spec 'lbmc-python3' running this Python (Debian's)."""
    spec = root / "jupyter" / "kernels" / "lbmc-python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (lbmc test)",
        "language": "python",
    }))
    return root / "jupyter"


def outputs_of(nb):
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=pathlib.Path, help="keep results, figures and executed notebooks here")
    ap.add_argument("--only", help="run only this notebook (name without .ipynb)")
    ap.add_argument("--results", type=pathlib.Path, help="use the results files in this folder (no lbmc run)")
    ap.add_argument("--clear", action="store_true", help="clear the outputs of analysis/notebooks/*.ipynb and exit")
    args = ap.parse_args()

    src = pathlib.Path(os.environ.get("LBMC_SOURCE_DIR") or pathlib.Path(__file__).resolve().parents[2])
    lbmc = os.environ.get("LBMC") or str(src / "build" / "src" / "lbmc")
    nb_dir = src / "analysis" / "notebooks"
    notebooks = sorted(p.stem for p in nb_dir.glob("*.ipynb"))
    if args.clear:
        for name in notebooks:
            path = nb_dir / f"{name}.ipynb"
            nb = nbformat.read(path, as_version=4)
            for c in nb.cells:
                if c.cell_type == "code":
                    c.outputs, c.execution_count = [], None
                c.get("metadata", {}).pop("execution", None)
            nbformat.write(nb, path)
            print(f"cleared {path}")
        return 0
    errors = 0
    missing = sorted(set(EXPECTED) - set(notebooks))
    if missing:
        errors += fail(f"notebooks missing from analysis/notebooks/: {missing}")
    unknown = sorted(set(notebooks) - set(EXPECTED))
    if unknown:
        errors += fail(f"notebooks without an entry in EXPECTED of {__file__}: {unknown}")
    if args.only:
        notebooks = [args.only]

    # committed notebooks carry no outputs
    for name in notebooks:
        nb = nbformat.read(nb_dir / f"{name}.ipynb", as_version=4)
        if outputs_of(nb) or any(c.get("execution_count") for c in nb.cells if c.cell_type == "code"):
            errors += fail(f"analysis/notebooks/{name}.ipynb has outputs: clear them before committing")
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        if name in GRID and GRID[name][1] not in code:
            errors += fail(f"analysis/notebooks/{name}.ipynb: no grid-shaped selection {GRID[name][1]!r}")
        first = nb.cells[0] if nb.cells else None
        if first is None or first.cell_type != "markdown" or f"jobs/{name}.yaml" not in first.source:
            errors += fail(f"analysis/notebooks/{name}.ipynb must open with a markdown cell naming jobs/{name}.yaml")

    tmp_obj = None
    if args.keep:
        work = args.keep.resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        tmp_obj = tempfile.TemporaryDirectory(prefix="lbmc-notebooks-")
        work = pathlib.Path(tmp_obj.name)
    results = args.results.resolve() if args.results else work / "results"
    figures = work / "figures"
    executed = work / "executed"
    for d in (results, figures, executed):
        d.mkdir(parents=True, exist_ok=True)

    t0 = time.monotonic()
    if not args.results:
        if not os.access(lbmc, os.X_OK):
            return fail(f"no lbmc program at {lbmc}: set LBMC")
        jobs = notebooks + [c for name in notebooks for c in COMPANIONS.get(name, [])]
        errors += run_jobs(lbmc, src / "tests" / "analysis" / "jobs", results, jobs)
    t_jobs = time.monotonic() - t0

    os.environ.update({
        "LBMC_SOURCE_DIR": str(src),
        "LBMC_RESULTS_DIR": str(results),
        "LBMC_FIGURES": str(figures),
        "JUPYTER_PATH": str(kernel_dir(work) if not (work / "jupyter").exists() else work / "jupyter"),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    })
    os.environ.pop("LBMC_RESULTS", None)
    for name in notebooks:
        t1 = time.monotonic()
        nb = nbformat.read(nb_dir / f"{name}.ipynb", as_version=4)
        client = NotebookClient(nb, kernel_name="lbmc-python3", timeout=600, allow_errors=False,
                                resources={"metadata": {"path": str(nb_dir)}})
        try:
            client.execute()
        except CellExecutionError as exc:
            errors += fail(f"notebook {name}: a cell failed:\n{exc}")
            continue
        except Exception as exc:  # kernel died, timeout, ...
            errors += fail(f"notebook {name}: {type(exc).__name__}: {exc}")
            continue
        finally:
            nbformat.write(nb, executed / f"{name}.ipynb")
        text = "".join(o.get("text", "") for o in outputs_of(nb) if o.get("output_type") == "stream")
        verdict = [line for line in text.splitlines() if line.startswith(VERDICT)]
        grid = [line for line in text.splitlines() if line.startswith("grid:")]
        want = " x ".join(GRID[name][0]) if name in GRID else None
        got = " x ".join(part.split(" (")[0] for part in grid[0][len("grid:"):].split(";")[0].strip().split(" x ")) \
            if grid else None
        if want and got != want:
            errors += fail(f"notebook {name}: results not loaded as the grid {want} (printed: {grid or 'no grid line'})")
        if not verdict:
            errors += fail(f"notebook {name}: no printed verdict line starting with {VERDICT!r}")
        for fig in EXPECTED.get(name, []):
            png = figures / f"{name}-{fig}.png"
            if not png.exists():
                errors += fail(f"notebook {name}: figure {png.name} was not saved")
            elif png.read_bytes()[:8] != PNG_MAGIC or png.stat().st_size < 5000:
                errors += fail(f"notebook {name}: {png.name} is not a plausible PNG ({png.stat().st_size} bytes)")
        extra = sorted(p.name for p in figures.glob(f"{name}-*.png") if p.stem[len(name) + 1:] not in EXPECTED[name])
        if extra:
            errors += fail(f"notebook {name}: unexpected figures {extra} (add them to EXPECTED)")
        print(f"ok: notebook {name} ({time.monotonic() - t1:.1f} s): {verdict[0] if verdict else '-'}", flush=True)

    print(f"lbmc runs {t_jobs:.1f} s, total {time.monotonic() - t0:.1f} s; {errors} failure(s)")
    if args.keep:
        print(f"kept in {work}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
