"""The drawn interval bars end at the file's ``lower`` and ``upper`` (not mean -/+ half_width:
the intervals of proportions and of rare events are not symmetric), read back from the
artists of each plot that draws bars: metric_vs_n, tail, messages and the command line's
plot (``lbmc plot``); on a real results file of ``lbmc run`` whose p_wait intervals are
asymmetric. A control: the symmetric ends mean -/+ half_width do not match them."""

import textwrap

import numpy as np
import pytest
from matplotlib.figure import Figure

import lbmc_analysis as la
import realfiles
from lbmc_analysis import __main__ as cli
from lbmc_analysis import plot

JOB = """
system:
  n: [10, 100, 1000]
  lambda: 0.9
  pools: [{beta: 1, mu: 1}]
policy: [jsq(2), pull]
run: {replicas: 3, warmup: 20, time: 100, seed: 2, tail_k: 4}
"""


@pytest.fixture(scope="module")
def asym(tmp_path_factory):
    work = tmp_path_factory.mktemp("ends")
    job, path = work / "job.yaml", work / "ends.h5"
    job.write_text(textwrap.dedent(JOB).lstrip())
    realfiles._run([realfiles._lbmc(), "run", str(job), "-o", str(path), "--quiet"])
    return str(path)


def _bars(ax):
    """(mean, bar bottom, bar top) of every error bar drawn on ax."""
    out = []
    for c in ax.containers:
        line, _, cols = c.lines
        ys = np.asarray(line.get_ydata(), dtype=float)
        segs = cols[0].get_segments()
        assert len(segs) == len(ys)
        for y, seg in zip(ys, segs):
            out.append((y, min(seg[0][1], seg[1][1]), max(seg[0][1], seg[1][1])))
    return out


def _check(bars, rows, logy):
    """Each bar is one row's interval: matched by its mean, its ends lower and upper."""
    assert bars, "no bars drawn"
    rows = rows[np.isfinite(rows["mean"].astype(float)) & (rows["mean"].astype(float) > 0)]
    asymmetric = 0
    for y, bottom, top in bars:
        row = rows.iloc[int(np.argmin(np.abs(rows["mean"].to_numpy(dtype=float) - y)))]
        mean, lo, hi, hw = (float(row[c]) for c in ("mean", "lower", "upper", "half_width"))
        assert y == pytest.approx(mean, rel=1e-12)
        assert top == pytest.approx(hi, rel=1e-9)
        if logy and lo <= 0:  # a lower end at 0 stops just above it on a log axis
            assert 0 < bottom <= mean * 1e-8
        else:
            assert bottom == pytest.approx(lo, rel=1e-9, abs=1e-15)
        asymmetric += abs((hi - mean) - (mean - lo)) > 1e-3 * hw
        # the control: the symmetric bar of the half-width is not what is drawn here
        if abs((hi - mean) - (mean - lo)) > 1e-3 * hw:
            assert not (top == pytest.approx(mean + hw, rel=1e-9) and bottom == pytest.approx(mean - hw, rel=1e-9))
    assert asymmetric, "the test file should have asymmetric intervals"


def _rows(path, metric, **where):
    df = la.to_frame(path)
    df = df[df["metric"] == metric]
    for k, v in where.items():
        df = df[df[k].astype(str) == str(v)]
    return df


def test_metric_vs_n_bars_are_the_files_interval(asym):
    fig = plot.metric_vs_n(asym, "p_wait", reference=None)
    _check(_bars(fig.axes[0]), _rows(asym, "p_wait"), logy=True)
    fig = plot.metric_vs_n(asym, "p_wait", reference=None, logy=False)
    _check(_bars(fig.axes[0]), _rows(asym, "p_wait"), logy=False)


def test_metric_vs_n_bands_are_the_files_interval(asym):
    fig = plot.metric_vs_n(asym, "p_wait", reference=None, logy=False, bands=True)
    rows = _rows(asym, "p_wait")
    ys = np.concatenate([p.get_paths()[0].vertices[:, 1] for p in fig.axes[0].collections])
    ends = np.concatenate([rows["lower"].astype(float).to_numpy(), rows["upper"].astype(float).to_numpy()])
    # every vertex of a band is an end of an interval in the file, and every end is a vertex
    assert np.isclose(ys[:, None], ends[None, :], rtol=1e-9, atol=1e-15).any(axis=1).all()
    assert np.isclose(ys[:, None], ends[None, :], rtol=1e-9, atol=1e-15).any(axis=0).all()


def test_tail_bars_are_the_files_interval(asym):
    fig = plot.tail(asym, where={"policy": "jsq(2)", "n": 100})
    _check(_bars(fig.axes[0]), _rows(asym, "tail", policy="jsq(2)", n=100), logy=True)


def test_messages_bars_are_the_files_interval(asym):
    fig = plot.messages(asym, references=False)
    rows = _rows(asym, "messages_per_arrival")
    bars = _bars(fig.axes[0])
    assert bars
    for y, bottom, top in bars:
        row = rows.iloc[int(np.argmin(np.abs(rows["mean"].to_numpy(dtype=float) - y)))]
        assert top == pytest.approx(float(row["upper"]), rel=1e-9)
        assert bottom == pytest.approx(float(row["lower"]), rel=1e-9)


def test_command_line_plot_bars_are_the_files_interval(asym, tmp_path, monkeypatch):
    drawn = []
    monkeypatch.setattr(Figure, "savefig", lambda fig, *a, **k: drawn.append(fig))
    assert cli.main(["plot", asym, "--metric", "p_wait", "--x", "n", "--by", "policy", "--no-reference",
                     "-o", str(tmp_path / "f.png")]) == 0
    assert len(drawn) == 1
    _check(_bars(drawn[0].axes[0]), _rows(asym, "p_wait"), logy=True)


LEGEND_JOB = """
system:
  n: 10
  lambda: 0.8
  pools: [{beta: 1, mu: 1}]
policy: [pull, jsq(2)]
stale: [withdraw, keep]
run: {replicas: 2, warmup: 10, time: 100, tail_k: 3}
"""


def test_tail_legend_has_no_empty_fields_and_names_only_drawn_lines(tmp_path):
    # stale varies for pull and is empty for jsq(2) (it does not read it)
    job, path = tmp_path / "leg.yaml", tmp_path / "leg.h5"
    job.write_text(textwrap.dedent(LEGEND_JOB).lstrip())
    realfiles._run([realfiles._lbmc(), "run", str(job), "-o", str(path), "--quiet"])
    ax = plot.tail(str(path)).axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert not [lab for lab in labels if ", ," in lab or lab.endswith(", ") or lab.startswith(", ") or not lab]
    assert len(set(labels)) == len(labels), labels  # the same system twice is told apart by its point
    assert {"pull, withdraw", "pull, keep"} <= set(labels)
    refs = [ln for ln in ax.get_lines() if ln.get_gid() == "reference"]
    assert ("mean field (dashed)" in labels) == bool(refs)
    for ln in refs:  # drawn, and above the series it belongs to
        assert np.isfinite(np.asarray(ln.get_ydata(), dtype=float)).any()
        assert ln.get_zorder() > max(c.lines[0].get_zorder() for c in ax.containers)


def test_interval_bars_are_the_files_interval(asym):
    # the helper the notebooks draw their own figures with: the same ends as the plots above
    rows = _rows(asym, "p_wait").sort_values("n")
    args = [rows[c].astype(float).to_numpy() for c in ("n", "mean", "lower", "upper")]
    for logy in (True, False):
        fig = Figure()
        ax = fig.add_subplot()
        if logy:
            ax.set_yscale("log")
        plot.interval_bars(ax, *args, marker="o")
        _check(_bars(ax), rows, logy=logy)


def test_interval_bars_draw_a_bound_as_a_one_sided_marker():
    fig = Figure()
    ax = fig.add_subplot()
    ax.set_yscale("log")
    x, mean = np.array([1.0, 2.0, 3.0]), np.array([0.2, 0.0, 0.1])
    lower, upper = np.array([0.1, 0.0, np.nan]), np.array([0.4, np.nan, np.nan])
    bound = np.array([np.nan, 3e-4, np.nan])  # point 2: none observed, below 3e-4
    plot.interval_bars(ax, x, mean, lower, upper, bound, marker="o")
    bars = _bars(ax)
    assert [y for y, _, _ in bars] == [0.2, 0.1]  # the bound is not drawn as an estimate
    assert bars[0][1:] == (pytest.approx(0.1), pytest.approx(0.4))
    assert bars[1][1] == bars[1][2] == 0.1  # NaN ends: no bar
    marks = [ln for ln in ax.get_lines() if ln.get_gid() == "bound"]
    assert len(marks) == 1 and marks[0].get_marker() == "v" and marks[0].get_mfc() == "none"
    assert list(marks[0].get_xdata()) == [2.0] and list(marks[0].get_ydata()) == [3e-4]
