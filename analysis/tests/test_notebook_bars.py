"""The notebooks draw their own intervals from the file's ``lower`` and ``upper``: every bar or
band they draw themselves goes through ``plot.interval_bars`` (whose ends test_plot_ends.py reads
back), never ``ax.errorbar`` by hand; a band (``fill_between``) only between the file's own
bounds (its arguments name a ``lower`` and an ``upper``, e.g. a transient run's ``band_lower`` and
``band_upper``); and no drawing call is given a
``half_width`` (a symmetric bar runs off a log axis where the interval is not symmetric). Checked
on the notebooks' code (their figures come from results files the test suite does not have at full
size; tests/analysis/run_notebooks.py executes them on small ones). balanced-heavy-traffic.ipynb is
left to its own change. A control: the check flags the hand-drawn half-width bars it replaced."""

import ast
import json
import pathlib

import pytest

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
SKIP = {"balanced-heavy-traffic.ipynb"}
BY_HAND = {"errorbar", "fill_between", "fill_betweenx"}
DRAWING = BY_HAND | {"interval_bars", "plot", "scatter", "vlines", "hlines", "metric_vs_n", "tail"}


def _code(path):
    nb = json.loads(path.read_text())
    cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    # IPython lines (magics, shell) are not Python
    return "\n".join(ln for c in cells for ln in c.splitlines() if not ln.lstrip().startswith(("%", "!")))


def _problems(code):
    out = []
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        name = node.func.attr
        text = ast.unparse(node)
        if name in BY_HAND and not (name.startswith("fill_between") and "lower" in text and "upper" in text):
            out.append(f"line {node.lineno}: {name}(...) by hand; use plot.interval_bars (the file's lower/upper)")
        if name in DRAWING and "half_width" in text:
            out.append(f"line {node.lineno}: {name}(...) is given a half_width")
    return out


@pytest.mark.parametrize("path", sorted(p for p in NOTEBOOKS.glob("*.ipynb") if p.name not in SKIP),
                         ids=lambda p: p.name)
def test_notebook_draws_intervals_from_lower_and_upper(path):
    assert _problems(_code(path)) == []


def test_the_check_flags_half_width_bars():
    old = ('ax.errorbar(scvs, [a for a, _ in m], yerr=np.nan_to_num([b for _, b in m]), capsize=3)\n'
           'plot.interval_bars(ax, x, y, y - ds["p_wait_half_width"], y + ds["p_wait_half_width"])\n')
    found = _problems(old)
    assert len(found) == 2 and "by hand" in found[0] and "half_width" in found[1], found
    # a band between the file's bounds passes; one around a mean +/- something does not
    band = ('ax.fill_between(t, e.sel(stat="band_lower").values, e.sel(stat="band_upper").values)\n'
            'ax.fill_between(t, m - 2 * s, m + 2 * s)\n')
    found = _problems(band)
    assert len(found) == 1 and "line 2" in found[0], found
