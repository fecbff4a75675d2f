"""The notebooks draw their own intervals from the file's ``lower`` and ``upper``: every bar or
band they draw themselves goes through ``plot.interval_bars`` (whose ends test_plot_ends.py reads
back), never ``ax.errorbar``/``fill_between`` by hand, and no drawing call is given a
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
        if name in BY_HAND:
            out.append(f"line {node.lineno}: {name}(...) by hand; use plot.interval_bars (the file's lower/upper)")
        if name in DRAWING and "half_width" in ast.unparse(node):
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
