"""Figures build under Agg, from a Dataset, a tidy frame or a path, and cope with unstable points."""

import io

import numpy as np
import pytest
from matplotlib.figure import Figure

import fakefile
import lbmc_analysis as la
from lbmc_analysis import plot


def _render(fig):
    assert isinstance(fig, Figure)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.getvalue()[:4] == b"\x89PNG"
    return fig


def _labels(fig):
    return [t for ax in fig.axes for t in ax.get_legend_handles_labels()[1]]


def test_metric_vs_n(fake):
    ds = la.load(fake.path, grid=False)
    fig = _render(plot.metric_vs_n(ds, "p_wait", where={"lambda": 0.7, "routers": 1}))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert {"jsq(2)", "pull", "random"} <= set(_labels(fig))
    # per-pool metric: one series per pool; the same from a frame and from a path
    _render(plot.metric_vs_n(la.to_frame(ds), "mean_queue", where={"lambda": 0.7, "routers": 1}))
    _render(plot.metric_vs_n(fake.path, "tail", k=2, pool=1, where={"lambda": 0.7, "routers": 1}))
    with pytest.raises(ValueError, match="pass k="):
        plot.metric_vs_n(ds, "tail")


def test_metric_vs_n_unstable_marked(fake):
    # jsq(2) at n = 100 has one ok point (lambda 0.7) and one unstable point (lambda 1.0): separate series
    fig = _render(plot.metric_vs_n(fake.path, "mean_sojourn", by=["policy", "lambda"], where={"routers": 1}))
    assert any(label.endswith(": unstable / no estimate") for label in _labels(fig))


def test_metric_vs_n_refuses_mixed_points(fake):
    with pytest.raises(ValueError, match="lambda"):
        plot.metric_vs_n(fake.path, "p_wait", where={"policy": "jsq(2)"})


def test_reference_overlay(tmp_path):
    # homogeneous JSQ(2): the mean-field reference is drawn
    pts = [fakefile.point(n, 0.9, "jsq(2)", replicas=2) for n in (10, 100, 1000)]
    e = fakefile.write_results(tmp_path / "jsq.h5", pts)
    fig = _render(plot.metric_vs_n(e.path, "mean_sojourn"))
    lines = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "--"]
    assert lines and np.allclose(lines[0].get_ydata(), 2.614057377)


def test_tail_plot(fake):
    fig = _render(plot.tail(fake.path, where={"n": 1000, "policy": ["pull", "jsq(2)"]}))
    assert fig.axes[0].get_yscale() == "log"
    assert any("mean field" in lbl for lbl in _labels(fig))  # PULL x_1 reference
    # unstable point: listed, not drawn
    fig = _render(plot.tail(fake.path, where={"status": "unstable"}))
    assert any("unstable" in lbl for lbl in _labels(fig))
    with pytest.raises(ValueError, match="max_series"):
        plot.tail(fake.path)


def test_tail_plot_homogeneous_meanfield(tmp_path):
    e = fakefile.write_results(tmp_path / "h.h5", [fakefile.point(1000, 0.9, "jsq(2)")], K=6)
    fig = _render(plot.tail(e.path))
    mf_lines = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "--"]
    np.testing.assert_allclose(mf_lines[0].get_ydata()[:3], [0.9, 0.729, 0.4782969])


def test_messages_plot(fake):
    fig = _render(plot.messages(fake.path, by=["policy", "routers"], where={"lambda": 0.7}))
    refs = {ln.get_label(): ln.get_ydata()[0] for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "--"}
    assert refs["policy=jsq(2), routers=1 (reference)"] == 4.0
    assert refs["policy=pull, routers=1 (reference)"] == 1.0
    assert refs["policy=random, routers=1 (reference)"] == 0.0


def test_heatmap(tmp_path):
    # PULL over lambda x beta_1 with mu = (2, 1/3): capacity 2 b + (1 - b)/3; lambda >= capacity -> unstable
    pts = []
    for lam in (0.4, 0.8, 1.2):
        for b in (0.25, 0.5, 0.75):
            cap = 2 * b + (1 - b) / 3
            pts.append(fakefile.point(500, lam, "pull", (b, 1 - b), (2.0, 1 / 3),
                                      status="unstable" if lam >= cap else "ok"))
    e = fakefile.write_results(tmp_path / "grid.h5", pts)
    ds = la.load(e.path, grid=False)
    fig = _render(plot.heatmap(ds, "mean_sojourn", "lambda", ("beta", 1)))
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "unstable" in texts  # lambda = 1.2, beta_1 = 0.25: capacity 0.75
    assert len(fig.axes) == 2  # with colour bar
    _render(plot.heatmap(ds, "utilization", "lambda", "beta_1", pool=2, log=True))
    with pytest.raises(ValueError, match="per pool"):
        plot.heatmap(ds, "utilization", "lambda", "beta_1")
    with pytest.raises(ValueError, match="share a"):
        plot.heatmap(ds, "mean_sojourn", "lambda", "n")


def test_draw_on_given_axes(fake):
    fig = Figure()
    ax1, ax2 = fig.subplots(1, 2)
    out = plot.metric_vs_n(fake.path, "p_wait", where={"lambda": 0.7, "routers": 1}, ax=ax1)
    assert out is fig
    assert plot.messages(fake.path, where={"lambda": 0.7, "routers": 1}, ax=ax2) is fig
    _render(fig)
