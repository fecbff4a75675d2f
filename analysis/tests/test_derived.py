"""Derived metrics (lbmc_analysis.derived) and the notebook plumbing (lbmc_analysis.notebook)."""

import numpy as np
import pytest

import lbmc_analysis as la
from lbmc_analysis import meanfield as mf


def test_add_metric_reproduces_the_file_estimates(fake):
    ds = la.load(fake.path, grid=False)
    out = la.derived.add_metric(ds, "p_wait_again", ds["p_wait_replicas"], units="1", description="copy")
    two = ds["point_replicas"].values >= 2  # one replica: the file's interval comes from batch means
    np.testing.assert_allclose(out["p_wait_again"].values, ds["p_wait"].values, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(out["p_wait_again_std_err"].values[two], ds["p_wait_std_err"].values[two], rtol=1e-9)
    np.testing.assert_allclose(out["p_wait_again_half_width"].values[two], ds["p_wait_half_width"].values[two],
                               rtol=1e-9)
    assert np.isnan(out["p_wait_again_half_width"].values[~two]).all()
    assert out["p_wait_again"].attrs["units"] == "1" and "p_wait_again" in la.metric_names(out)
    # works through to_frame like a metric of the file
    df = la.to_frame(out, metrics=["p_wait_again"])
    assert len(df) == ds.sizes["point"]
    with pytest.raises(ValueError):
        la.derived.add_metric(out, "p_wait_again", ds["p_wait_replicas"], units="1", description="twice")


def test_add_metric_unstable_points(fake):
    ds = la.load(fake.path, grid=False)
    u = ds["status"].values == "unstable"
    msgs = ds["messages_per_arrival_replicas"].fillna(4.0)  # as if the runaway replicas had counted 4
    out = la.derived.add_metric(ds, "m", msgs, units="1", description="m")
    assert np.isnan(out["m"].values[u]).all()
    kept = la.derived.add_metric(ds, "m", msgs, units="1", description="m", include_unstable=True)
    np.testing.assert_allclose(kept["m"].values[u], 4.0)


def test_workload(fake):
    ds = la.load(fake.path, grid=False)
    out = la.derived.workload(ds)
    i = 0
    frac = ds["pool_servers"].values[i] / ds["n"].values[i]
    want = mf.workload_per_server(ds["mean_queue_replicas"].values[i], frac, ds["mu"].values[i])
    np.testing.assert_allclose(out["workload_replicas"].values[i], want)
    np.testing.assert_allclose(out["workload"].values[i], np.nanmean(want))
    assert out["workload"].attrs["units"] == "time"


def test_notebook_context(tmp_path, monkeypatch, capsys, fake):
    monkeypatch.delenv("LBMC_RESULTS", raising=False)
    monkeypatch.setenv("LBMC_SOURCE_DIR", str(tmp_path))
    monkeypatch.setenv("LBMC_RESULTS_DIR", "res")
    monkeypatch.setenv("LBMC_FIGURES", str(tmp_path / "figs"))
    ctx = la.notebook.context("some-notebook", "some-job")
    assert ctx.results == tmp_path / "res" / "some-job.h5"
    assert ctx.figures == tmp_path / "figs" and ctx.job_file == tmp_path / "jobs" / "some-job.yaml"
    with pytest.raises(FileNotFoundError, match="lbmc run jobs/some-job.yaml"):
        la.notebook.open_results(ctx)
    monkeypatch.setenv("LBMC_RESULTS", fake.path)
    ctx = la.notebook.context("some-notebook", "some-job")
    ds = la.notebook.open_results(ctx)
    assert ds.sizes["point"] == fake.P
    assert "NOT the text of jobs/some-job.yaml" in capsys.readouterr().out
    from matplotlib.figure import Figure
    fig = Figure()
    fig.add_subplot().plot([1, 2], [3, 4])
    path = la.notebook.save(ctx, fig, "line")
    assert path == tmp_path / "figs" / "some-notebook-line.png" and path.stat().st_size > 1000
