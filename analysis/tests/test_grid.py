"""Grid-shaped datasets: the job's axes as dimensions, linked axes, missing cells, and back."""

import warnings

import numpy as np
import pytest
import xarray as xr

import fakefile
import lbmc_analysis as la
from lbmc_analysis import grid

AXES = {"n": [10, 100, 1000], "lambda": [0.7, 0.9], "policy": ["pull", "jsq(2)", "random"]}


def _grid_file(tmp_path, axes=AXES, name="g.h5", **kw):
    write_kw = {k: kw.pop(k) for k in ("grid_group", "upper_bound", "quantile_levels") if k in kw}
    pts, job, gg = fakefile.grid_points(axes, **kw)
    return fakefile.write_results(tmp_path / name, pts, job=job, **write_kw), pts, gg


def test_grid_dims_and_sel(tmp_path):
    e, pts, _ = _grid_file(tmp_path, beta=(0.5, 0.5), mu=(1.5, 0.5))
    ds = la.load(e.path)
    assert list(ds["mean_sojourn"].dims) == ["n", "lambda_", "policy"]
    assert dict(ds.sizes)["n"] == 3 and ds.sizes["lambda_"] == 2 and ds.sizes["policy"] == 3
    np.testing.assert_array_equal(ds["n"].values, [10, 100, 1000])
    assert ds["n"].dtype.kind == "i" and ds["lambda_"].dtype.kind == "f"
    # the example: one line per policy and lambda, against n
    line = ds.mean_sojourn.sel(policy="pull", lambda_=0.9)
    assert line.dims == ("n",)
    flat = la.load(e.path, grid=False)
    for i, n in enumerate((10, 100, 1000)):
        p = int(np.flatnonzero((flat["n"].values == n) & (flat["lambda"].values == 0.9)
                               & (flat["policy"].values == "pull"))[0])
        assert line.values[i] == flat["mean_sojourn"].values[p]
        assert ds["mean_sojourn_half_width"].sel(policy="pull", lambda_=0.9, n=n) == \
            flat["mean_sojourn_half_width"].values[p]
    # per-pool and per-replica variables keep their own dims after the grid's
    assert ds["tail"].dims == ("n", "lambda_", "policy", "pool", "k")
    assert ds["p_wait_replicas"].dims == ("n", "lambda_", "policy", "replica")
    # parameters that do not vary are reduced to the dims they vary along
    assert ds["rho"].dims == ("lambda_",) and ds["mu"].dims == ("pool",)
    assert ds["status"].dims == ("n", "lambda_", "policy")
    # units and descriptions from the file
    assert ds["lambda_"].attrs["units"] == "1/time" and ds["lambda_"].attrs["axis"] == "lambda"
    assert ds["mean_sojourn"].attrs["units"] == "time" and ds["mean_sojourn"].attrs["description"]
    assert ds["mean_sojourn_half_width"].attrs["confidence"] == 0.95
    line.plot(x="n")  # the xarray plot of the issue works


def test_round_trip_and_frames(tmp_path):
    e, _, _ = _grid_file(tmp_path, beta=(0.5, 0.5), mu=(1.5, 0.5), quantile_levels=[0.5, 0.99])
    flat = la.load(e.path, grid=False)
    ds = la.load(e.path)
    xr.testing.assert_identical(grid.flatten(ds), flat)
    pd_grid, pd_flat = la.to_frame(ds), la.to_frame(flat)
    assert pd_grid.equals(pd_flat)
    # a selection flattens to its points, in file order
    sub = grid.flatten(ds.sel(policy="pull"))
    xr.testing.assert_identical(sub, la.select_points(flat, policy="pull"))
    assert la.select_points(ds, policy="pull", n=100).sizes["point"] == 2
    one = grid.flatten(ds.sel(policy="pull", n=10, lambda_=0.7))
    assert one.sizes["point"] == 1 and one["lambda"].values[0] == 0.7


def test_missing_and_unstable_cells(tmp_path):
    e, pts, _ = _grid_file(tmp_path, status=lambda p: "unstable" if p["policy"] == "random" and p["lambda"] == 0.9
                           else "ok", skip=[0, 7])
    ds = la.load(e.path)
    assert ds.sizes["n"] == 3 and ds.sizes["policy"] == 3  # the grid of the job, not of the file
    cell = ds.sel(n=10, lambda_=0.7, policy="pull")  # grid cell 0: not in the file
    assert str(cell["status"].values) == "missing" and int(cell["point"]) == -1
    assert np.isnan(cell["p_wait"].values) and np.isnan(cell["replicas"].values)
    assert ds["replicas"].dtype.kind == "f"  # integers with missing cells become float
    u = ds.sel(policy="random", lambda_=0.9)
    assert (u["status"].values == "unstable").all() and np.isnan(u["mean_sojourn"].values).all()
    assert u["reason"].values[0]  # the reason is kept
    flat = la.load(e.path, grid=False)
    xr.testing.assert_identical(grid.flatten(ds), flat)  # missing cells drop out, ints come back


def test_column_names_next_to_dims(tmp_path):
    axes = {"n": [10, 100], "pools[1].buffer": [2, float("inf")], "policy": ["pull", "jsq(2)"],
            "stale": ["withdraw", "keep"]}
    e, _, _ = _grid_file(tmp_path, axes)
    ds = la.load(e.path)
    assert list(ds["p_block"].dims) == ["n", "buffer_1", "policy", "stale"]
    np.testing.assert_array_equal(ds["buffer_1"].values, [2, -1])  # -1 = unlimited, as in the file
    assert ds["buffer_1"].attrs["as_written"] == ["2", "inf"]
    # /points/stale is "" at jsq points: kept as stale_point, the dim keeps the job's values
    assert ds["stale_point"].sel(policy="jsq(2)", stale="keep") == ""
    assert ds["stale_point"].sel(policy="pull", stale="keep") == "keep"
    assert "n_point" not in ds and "policy_point" not in ds
    xr.testing.assert_identical(grid.flatten(ds), la.load(e.path, grid=False))


def test_linked_axes_from_grid_group(tmp_path):
    axes = {"n": [10, 100], "pools[1].buffer": [1, 2, 3], "pools[2].buffer": [1, 2, 3], "policy": ["pull", "jsq(2)"]}
    linked = [("pools[1].buffer", "pools[2].buffer")]
    pts, job, gg = fakefile.grid_points(axes, beta=(0.5, 0.5), mu=(1.0, 1.0), linked=linked)
    assert len(pts) == 2 * 3 * 2  # linked: 12 points, not the 36 of a product
    e = fakefile.write_results(tmp_path / "linked.h5", pts, job=job, grid_group=gg)
    ds = la.load(e.path)
    assert ds["p_block"].dims == ("n", "buffer_1+buffer_2", "policy")
    np.testing.assert_array_equal(ds["buffer_2"].values, [1, 2, 3])
    a = ds.set_xindex("buffer_2").p_block.sel(buffer_2=2, policy="pull")
    assert a.dims == ("n",)
    np.testing.assert_array_equal(a.values, ds.p_block.sel(buffer_1=2, policy="pull").values)  # the same cells
    # one index per dimension: arrays along the linked dimension combine (xarray refuses several indexes)
    assert ((ds.p_block >= 0) & (ds.p_block <= 1)).dims == ds.p_block.dims
    xr.testing.assert_allclose(ds.p_block - ds.p_block.where(ds.status == "ok"), 0 * ds.p_block)
    flat = la.load(e.path, grid=False)
    p = int(np.flatnonzero((flat["n"].values == 100) & (flat["buffer"].values[:, 1] == 2)
                           & (flat["policy"].values == "pull"))[0])
    assert a.sel(n=100) == flat["p_block"].values[p]
    xr.testing.assert_identical(grid.flatten(ds), flat)
    # without the /grid group the job text reads as a product, which the points contradict: flat form
    e2 = fakefile.write_results(tmp_path / "linked-nogroup.h5", pts, job=job)
    with pytest.warns(la.GridWarning, match="the job.s axis"):
        ds2 = la.load(e2.path)
    assert "point" in ds2.dims


def test_grid_group_named_dimension(tmp_path):
    axes = {"n": [10, 100], "lambda": [0.5, 0.9]}
    pts, job, gg = fakefile.grid_points(axes, linked=[("n", "lambda")])
    gg["dim_name"] = ["scale"]
    e = fakefile.write_results(tmp_path / "named.h5", pts, job=job, grid_group=gg)
    ds = la.load(e.path)
    assert ds["p_wait"].dims == ("scale",)
    assert float(ds.p_wait.set_xindex("lambda_").sel(lambda_=0.9)) == float(ds.p_wait.sel(n=100))


def test_no_grid_warns_and_gives_flat(fake, tmp_path):
    with pytest.warns(la.GridWarning, match="outside the grid"):
        ds = la.load(fake.path)  # the default fake job has no axes but 11 points
    assert "point" in ds.dims
    pts, job, _ = fakefile.grid_points({"n": [10, 100]})
    e = fakefile.write_results(tmp_path / "zip.h5", pts, job=job + "together: [[n, lambda]]\n")
    with pytest.warns(la.GridWarning, match="together"):
        la.load(e.path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", la.GridWarning)
        la.load(fake.path, grid=False)  # asked for flat: no GridWarning


def test_axes_from_job_text():
    dims = grid.axes_from_job(
        "policy: [pull, jsq(2)]\nsystem:\n  lambda: [0.5, 1/3]\n  beta: [[0.5, 0.5], [0.25, rest]]\n"
        "  pools:\n    - {mu: [1, 2], buffer: [1, inf]}\n    - {mu: 1, service: [exponential, "
        "{dist: lognormal, scv: 4}], mu_k: [1, 2]}\n  n: [10, 20]\nrun: {time: [100, 200], seed: 3}\n")
    names = [d.axes[0].name for d in dims]
    assert names == ["policy", "lambda", "beta", "pools[1].mu", "pools[1].buffer", "pools[2].service", "n",
                     "run.time"]
    assert [d.name for d in dims] == ["policy", "lambda_", "beta", "mu_1", "buffer_1", "service_2", "n", "time"]
    assert dims[2].axes[0].values == ["[0.5, 0.5]", "[0.25, rest]"]
    assert dims[5].axes[0].values == ["exponential", "lognormal:scv=4"]


def test_real_grids(real):
    """Grid form of files written by the real lbmc run (fixture of test_real_files)."""
    ds = la.load(real["buffers_routers"])
    assert list(ds["p_wait"].dims) == ["lambda_", "routers", "buffer_1", "stale"]
    # lambda 1.2 with an unlimited buffer: rho >= 1, never simulated, status kept
    u = ds.sel(lambda_=1.2, buffer_1=-1)
    assert (u["status"].values == "unstable").all() and np.isnan(u["p_wait"].values).all()
    ok = ds.p_block.sel(lambda_=1.2, buffer_1=2, routers=1, stale="withdraw")
    assert float(ok) > 0
    xr.testing.assert_identical(grid.flatten(ds), la.load(real["buffers_routers"], grid=False))
    h = la.load(real["heterogeneous"])
    assert list(h["mean_sojourn"].dims) == ["n", "policy"]
    assert h.mean_sojourn.sel(policy="pull").dims == ("n",)
    s = la.load(real["sequential"])
    assert list(s["p_wait"].dims) == ["n", "policy"] and s["point_replicas"].dims == ("n", "policy")
