"""Figures: rendered under Agg from grid or flat Datasets, frames and paths; labels, legend titles,
fixed parameters, none-observed bounds (never joined to a line), heat-map cells, the command line."""

import io
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from matplotlib.figure import Figure

import fakefile
import lbmc_analysis as la
from lbmc_analysis import plot

AXES = {"n": [10, 100, 1000], "lambda": [0.7, 0.9], "policy": ["pull", "jsq(2)", "random"]}
ANALYSIS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _render(fig):
    assert isinstance(fig, Figure)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.getvalue()[:4] == b"\x89PNG"
    return fig


def _legend(ax):
    leg = ax.get_legend()
    assert leg is not None, "no legend"
    return leg.get_title().get_text(), [t.get_text() for t in leg.get_texts()]


def _drawn_lines(ax):
    """Line2D objects that join points (a line style, at least 2 points)."""
    return [ln for ln in ax.get_lines() if ln.get_linestyle() not in ("None", "none", "") and len(ln.get_xdata()) > 1]


@pytest.fixture
def gridfile(tmp_path):
    pts, job, _ = fakefile.grid_points(AXES, beta=(0.5, 0.5), mu=(1.5, 0.5))
    return fakefile.write_results(tmp_path / "g.h5", pts, job=job)


def test_metric_vs_n_labels_legend_caption(gridfile):
    ds = la.load(gridfile.path)
    fig = _render(plot.metric_vs_n(ds.sel(lambda_=0.9), "p_wait"))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "servers, n"
    assert ax.get_ylabel().startswith("probability of waiting")
    title, entries = _legend(ax)
    assert title == "policy"
    assert {"pull", "jsq(2)", "random"} <= set(entries)
    caption = ax.get_title()
    assert "λ = 0.9" in caption and "β = (0.5, 0.5)" in caption and "μ = (1.5, 0.5)" in caption
    assert "3 replicas" in caption
    # every series its own marker and colour
    markers = {c.lines[0].get_marker() for c in ax.containers}
    assert len(markers) == 3


def test_metric_vs_n_numeric_series_and_units(gridfile):
    fig = _render(plot.metric_vs_n(gridfile.path, "mean_sojourn", by="lambda", where={"policy": "jsq(2)"},
                                   reference=None))
    ax = fig.axes[0]
    title, entries = _legend(ax)
    assert title == "arrival rate per server, λ"
    assert {"λ = 0.7", "λ = 0.9"} <= set(entries)
    assert ax.get_ylabel() == "mean sojourn time, $E[T]$ [time]"
    assert "jsq(2)" in ax.get_title()
    # x = lambda: its label has the units from the file
    fig = _render(plot.metric_vs_n(gridfile.path, "utilization[2]", x="lambda", by="n", logx=False, logy=False,
                                   where={"policy": "pull"}, bands=True))
    ax = fig.axes[0]
    assert ax.get_xlabel() == "arrival rate per server, λ [1/time]"
    assert ax.get_ylabel() == "busy fraction of pool 2, $u_2$"
    assert _legend(ax)[1][:3] == ["n = 10", "n = 100", "n = 1000"]
    assert ax.collections, "bands drawn"


def test_metric_spellings_and_errors(gridfile, fake):
    ds = la.load(gridfile.path)
    a = plot.metric_vs_n(ds, "tail[1][2]", where={"lambda": 0.7})
    b = plot.metric_vs_n(ds, "tail", pool=1, k=2, where={"lambda": 0.7})
    assert a.axes[0].get_ylabel() == b.axes[0].get_ylabel()
    with pytest.raises(ValueError, match="pass k="):
        plot.metric_vs_n(ds, "tail", where={"lambda": 0.7})
    with pytest.raises(ValueError, match="pool 3 does not exist"):
        plot.metric_vs_n(ds, "utilization[3]", where={"lambda": 0.7})
    with pytest.raises(ValueError, match="lambda"):  # two lambdas per series: refuse to mix
        plot.metric_vs_n(ds, "p_wait")
    # the flat form and a tidy frame give the same figure labels
    f = plot.metric_vs_n(la.to_frame(la.load(fake.path, grid=False)), "mean_queue",
                         where={"lambda": 0.7, "routers": 1})
    assert _legend(f.axes[0])[0] == "policy; pool"


def test_zero_only_series_gives_bound_markers_not_a_line(tmp_path):
    # infinite buffers: no arrival is ever blocked; p_block is 0 with half-width 0 everywhere
    pts, job, _ = fakefile.grid_points({"n": [10, 100, 1000], "policy": ["pull", "jsq(2)"]}, lam=0.9)
    e = fakefile.write_results(tmp_path / "z.h5", pts, job=job)
    ds = la.load(e.path)
    assert float(ds.p_block.max()) == 0.0
    fig = _render(plot.metric_vs_n(ds, "p_block", reference=None))
    ax = fig.axes[0]
    assert not _drawn_lines(ax), "zeros must not be joined by a line"
    assert not ax.containers, "no error bars for none-observed points"
    tri = [ln for ln in ax.get_lines() if ln.get_marker() == "v" and len(ln.get_xdata())]
    assert len(tri) == 2 and all(len(ln.get_xdata()) == 3 for ln in tri)
    # without an upper_bound in the file: the rule-of-three bound from the expected arrivals
    y = np.sort(np.concatenate([ln.get_ydata() for ln in tri]))
    want = -math.log(0.05) / (0.9 * np.array([10, 10, 100, 100, 1000, 1000]) * 1000.0 * 3)
    np.testing.assert_allclose(y, np.sort(want))
    assert "none observed (upper bound)" in _legend(ax)[1]
    # with the file's upper_bound: drawn exactly there
    e2 = fakefile.write_results(tmp_path / "zb.h5", pts, job=job, upper_bound=True)
    ds2 = la.load(e2.path)
    fig = _render(plot.metric_vs_n(ds2, "p_block", reference=None))
    tri = [ln for ln in fig.axes[0].get_lines() if ln.get_marker() == "v" and len(ln.get_xdata())]
    y = np.sort(np.concatenate([ln.get_ydata() for ln in tri]))
    np.testing.assert_allclose(y, np.sort(ds2["p_block_upper_bound"].values.ravel()))
    assert not _drawn_lines(fig.axes[0])
    # linear axes: at 0... no: at the bound, still unjoined
    fig = _render(plot.metric_vs_n(ds, "p_block", reference=None, logy=False))
    assert not _drawn_lines(fig.axes[0])


def test_unstable_marked_not_drawn(tmp_path):
    pts, job, _ = fakefile.grid_points(AXES, status=lambda p: "unstable" if p["policy"] == "random" and p["n"] == 1000
                                       else "ok")
    e = fakefile.write_results(tmp_path / "u.h5", pts, job=job)
    fig = _render(plot.metric_vs_n(e.path, "mean_sojourn", where={"lambda": 0.7}))
    assert "above the plot: unstable or missing (no estimate)" in _legend(fig.axes[0])[1]
    xs = [ln for ln in fig.axes[0].get_lines() if ln.get_marker() == "x"]
    assert len(xs) == 1 and len(xs[0].get_xdata()) == 1
    # the mark is outside the data area (above it, in axes fraction), where no value is read,
    # and the title sits above it
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    ax, canvas = fig.axes[0], FigureCanvasAgg(fig)
    canvas.draw()
    mark = xs[0].get_transform().transform(np.column_stack([xs[0].get_xdata(), xs[0].get_ydata()]))
    assert (mark[:, 1] > ax.transAxes.transform((0, 1))[1]).all()
    assert ax.title.get_window_extent(renderer=canvas.get_renderer()).y0 > mark[:, 1].max() + 3


def test_reference_overlay(tmp_path):
    # homogeneous JSQ(2): the mean-field reference is drawn dashed
    pts = [fakefile.point(n, 0.9, "jsq(2)", replicas=2) for n in (10, 100, 1000)]
    e = fakefile.write_results(tmp_path / "jsq.h5", pts)
    fig = _render(plot.metric_vs_n(e.path, "mean_sojourn"))
    refs = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == "reference"]
    assert refs and np.allclose(refs[0].get_ydata(), 2.614057377)
    assert refs
    assert "reference (dashed): mean field or exact" in _legend(fig.axes[0])[1]


def test_deviation_vs_n(tmp_path):
    # |estimate - reference| on log-log, the half-widths dashed, deviation 0 on the edge, unstable as x
    pts, job, _ = fakefile.grid_points(AXES, status=lambda p: "unstable" if p["policy"] == "random" and p["n"] == 1000
                                       else "ok")
    e = fakefile.write_results(tmp_path / "d.h5", pts, job=job)
    ds = la.load(e.path).sel(lambda_=0.9)
    frame = plot.frame_of(ds)
    rows = frame[(frame["metric"] == "mean_sojourn")].sort_values("point")
    ref = {pol: float(rows[(rows["policy"] == pol) & (rows["n"] == 10)]["mean"].iloc[0]) for pol in AXES["policy"]}
    fig = _render(plot.deviation_vs_n(ds, "mean_sojourn", reference=lambda p: ref[p["policy"]]))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_ylabel().startswith("|mean sojourn") and ax.get_ylabel().endswith("- limit|")
    title, entries = _legend(ax)
    assert title == "policy" and {"pull", "jsq(2)", "random", "dotted: slope 1/n"} <= set(entries)
    assert "hollow above the plot: deviation 0" in entries and "above the plot: unstable or missing (no estimate)" in entries
    solid = [ln for ln in ax.get_lines() if ln.get_linestyle() == "-"]
    pull = rows[rows["policy"] == "pull"].sort_values("n")
    want = np.abs(pull["mean"].to_numpy() - ref["pull"])[1:]  # n = 10 is the reference itself: 0
    np.testing.assert_allclose(solid[0].get_ydata(), want)
    np.testing.assert_allclose(solid[0].get_xdata(), [100, 1000])
    assert len(solid[2].get_xdata()) == 1  # random: n = 10 is 0, n = 1000 unstable
    # a series without a reference is left out; an estimate 0 without interval (none observed) has no deviation
    ds2 = ds.copy()
    ds2["mean_sojourn"] = ds2["mean_sojourn"].where(~((ds2["policy"] == "pull") & (ds2["n"] == 1000)), 0.0)
    ds2["mean_sojourn_half_width"] = ds2["mean_sojourn_half_width"].where(ds2["mean_sojourn"] != 0, 0.0)
    fig = _render(plot.deviation_vs_n(ds2, "mean_sojourn", guide=False,
                                      reference=lambda p: None if p["policy"] == "random" else ref[p["policy"]]))
    _, entries = _legend(fig.axes[0])
    assert "random" not in entries and "jsq(2)" in entries and "dotted: slope 1/n" not in entries
    assert "none observed (no deviation to draw)" in entries
    solid = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "-"]
    np.testing.assert_allclose(solid[0].get_xdata(), [100])  # pull: n = 10 is 0, n = 1000 none observed

def test_tail_plot(fake, gridfile):
    fig = _render(plot.tail(fake.path, where={"n": 1000, "policy": ["pull", "jsq(2)"]}))
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel() == "customers at a server, k"
    assert "$x_k$" in ax.get_ylabel()
    title, entries = _legend(ax)
    assert "policy" in title and "pool" in title
    assert "mean field (dashed)" in entries
    # one point, one pool: entries name the pool, the caption the point
    fig = _render(plot.tail(la.load(gridfile.path).sel(n=1000, lambda_=0.9, policy="jsq(2)"), pool=1))
    assert "n = 1000" in fig.axes[0].get_title() and "jsq(2)" in fig.axes[0].get_title()
    # unstable point: listed, not drawn
    fig = _render(plot.tail(fake.path, where={"status": "unstable"}))
    assert "above the plot: unstable or missing (no estimate)" in _legend(fig.axes[0])[1]
    with pytest.raises(ValueError, match="max_series"):
        plot.tail(fake.path)


def test_tail_plot_homogeneous_meanfield(tmp_path):
    e = fakefile.write_results(tmp_path / "h.h5", [fakefile.point(1000, 0.9, "jsq(2)")], K=6)
    fig = _render(plot.tail(e.path))
    mf_lines = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == "reference"]
    np.testing.assert_allclose(mf_lines[0].get_ydata()[:3], [0.9, 0.729, 0.4782969])


def test_messages_plot(fake):
    fig = _render(plot.messages(fake.path, by=["policy", "routers"], where={"lambda": 0.7}))
    ax = fig.axes[0]
    assert ax.get_ylabel() == "router-server messages per arrival"
    title, entries = _legend(ax)
    assert title == "policy; routers, R"
    assert "pull, R = 4" in entries and "expected for the policy (dashed)" in entries
    refs = sorted({round(float(ln.get_ydata()[0]), 9) for ln in ax.get_lines() if ln.get_gid() == "reference"})
    assert refs == [0.0, 1.0, 4.0]


def test_messages_rule_from_file(tmp_path):
    pts = [fakefile.point(n, 0.5, "jsq(2)") for n in (10, 100)]
    attrs = {"allowed": ["random", "jsq", "pull", "balanced", "lwl"],
             "messages_per_arrival": ["0", "2*d + 1", "1", "2*d", "2*d"]}  # a changed rule: 5 for jsq(2)
    e = fakefile.write_results(tmp_path / "m.h5", pts, policy_attrs=attrs)
    ax = _render(plot.messages(e.path)).axes[0]
    refs = {float(ln.get_ydata()[0]) for ln in ax.get_lines() if ln.get_gid() == "reference"}
    assert refs == {5.0}


def test_heatmap_zero_unstable_missing_cells(tmp_path):
    # PULL over lambda x beta_1 with mu = (2, 1/3): capacity 2 b + (1 - b)/3; lambda >= capacity -> unstable
    pts = []
    for lam in (0.4, 0.8, 1.2):
        for b in (0.25, 0.5, 0.75):
            cap = 2 * b + (1 - b) / 3
            pts.append(fakefile.point(500, lam, "pull", (b, 1 - b), (2.0, 1 / 3),
                                      status="unstable" if lam >= cap else "ok"))
    pts = [p for p in pts if not (p["lambda"] == 0.4 and p["beta"][0] == 0.75)]  # one cell without a point
    e = fakefile.write_results(tmp_path / "grid.h5", pts)
    ds = la.load(e.path, grid=False)
    fig = _render(plot.heatmap(ds, "p_block", "lambda", ("beta", 1), log=True))  # p_block is 0 everywhere
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert "unstable" in texts and "0" in texts
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["0: none observed", "unstable (no estimate)", "no point in the file"]
    faces = {tuple(np.round(p.get_facecolor()[:3], 2)) for p in ax.patches}
    assert (1.0, 1.0, 1.0) in faces and len(faces) == 3  # zero, unstable and missing cells look different
    assert ax.get_xlabel() == "arrival rate per server, λ [1/time]"
    assert ax.get_ylabel() == "fraction of servers in pool 1, β_1"
    fig = _render(plot.heatmap(ds, "mean_sojourn", "lambda", ("beta", 1)))
    assert len(fig.axes) == 2  # with colour bar
    assert fig.axes[1].get_ylabel().startswith("mean sojourn time")
    _render(plot.heatmap(ds, "utilization[2]", "lambda", "beta_1", log=True))
    with pytest.raises(ValueError, match="per pool"):
        plot.heatmap(ds, "utilization", "lambda", "beta_1")
    with pytest.raises(ValueError, match="share a"):
        plot.heatmap(ds, "mean_sojourn", "lambda", "n")


def test_draw_on_given_axes(gridfile):
    fig = Figure()
    ax1, ax2 = fig.subplots(1, 2)
    out = plot.metric_vs_n(gridfile.path, "p_wait", where={"lambda": 0.7}, ax=ax1)
    assert out is fig
    assert plot.messages(gridfile.path, where={"lambda": 0.7}, ax=ax2) is fig
    _render(fig)


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=ANALYSIS, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "lbmc_analysis", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_command_line_plot_and_compare(gridfile, tmp_path):
    out = tmp_path / "fig.png"
    p = _cli("plot", gridfile.path, "--metric", "p_wait", "--x", "n", "--by", "policy", "--where", "lambda=0.9",
             "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:4] == b"\x89PNG"
    p = _cli("plot", gridfile.path, "--metric", "p_wait", "--by", "policy", "-o", str(out))
    assert p.returncode == 2 and "['lambda', 'rho'] also vary" in p.stderr and "--where" in p.stderr
    p = _cli("plot", gridfile.path, "--metric", "utilisation", "-o", str(out))
    assert p.returncode == 2 and "no metric 'utilisation'" in p.stderr
    p = _cli("plot", str(tmp_path / "nope.h5"), "--metric", "p_wait", "-o", str(out))
    assert p.returncode == 2 and "no such file" in p.stderr
    p = _cli("compare", gridfile.path, "--metric", "mean_sojourn", "pull", "jsq(2)")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("n,lambda_,metric,a,b,mean_a,mean_b,pairs,diff,diff_half_width")
    assert len(lines) == 1 + 6
