"""Loader tests on small files written by fakefile.py following docs/results-format.md."""


import h5py
import numpy as np
import pytest
import xarray as xr

import fakefile
import lbmc_analysis as la
from lbmc_analysis import LbmcFormatError


def test_fake_file_conforms_to_the_doc(fake, fake_extended):
    # the fixture writer itself must follow the contract (so the loader tests test the contract)
    assert la.check_file(fake.path) == []
    assert la.check_file(fake_extended.path) == []


def test_load_dims_coords_attrs(fake):
    ds = la.load(fake.path, grid=False)
    assert isinstance(ds, xr.Dataset)
    assert dict(ds.sizes) == {"point": fake.P, "pool": fake.J, "k": fake.K, "replica": fake.R}
    np.testing.assert_array_equal(ds["pool"].values, [1, 2])
    np.testing.assert_array_equal(ds["k"].values, np.arange(1, fake.K + 1))
    # every /points dataset is a coordinate; 2-D ones on (point, pool)
    for name, v in fake.points.items():
        cname = "point_replicas" if name == "replicas" else name
        assert cname in ds.coords, cname
        assert ds[cname].dims == (("point",) if v.ndim == 1 else ("point", "pool"))
        if v.dtype == object:
            assert list(ds[cname].values) == list(v)
            assert all(type(s) is str for s in ds[cname].values)  # str, not bytes
        else:
            np.testing.assert_array_equal(ds[cname].values, v)
    assert ds["lambda"].attrs["units"] == "1/time"
    assert ds["beta"].attrs["description"] == "pool fractions"
    # root attributes
    for k, v in fake.root.items():
        assert ds.attrs[k] == v, k
    assert ds.attrs["layout_version"] == 1 and isinstance(ds.attrs["job"], str)


def test_load_estimates_and_replicas(fake):
    ds = la.load(fake.path, grid=False)
    for m, parts in fake.estimates.items():
        np.testing.assert_array_equal(ds[m].values, parts["mean"])
        np.testing.assert_array_equal(ds[f"{m}_half_width"].values, parts["half_width"])
        np.testing.assert_array_equal(ds[f"{m}_std_err"].values, parts["std_err"])
        np.testing.assert_array_equal(ds[f"{m}_replicas"].values, fake.replicas[m])
        assert ds[m].attrs["units"] == fakefile.UNITS[m]
        assert ds[m].attrs["description"] == f"mean of {m}"
        assert ds[f"{m}_half_width"].attrs["confidence"] == 0.95
    assert ds["p_wait"].dims == ("point",)
    assert ds["mean_queue"].dims == ("point", "pool")
    assert ds["tail"].dims == ("point", "pool", "k")
    assert ds["tail_replicas"].dims == ("point", "replica", "pool", "k")
    np.testing.assert_array_equal(ds["replicas"].values, fake.estimate_replicas)
    # the mean is the mean of the per-replica values (the fake writer's construction)
    np.testing.assert_allclose(ds["p_wait_replicas"].mean("replica", skipna=True).values, ds["p_wait"].values)


def test_nan_padding_and_unstable(fake):
    ds = la.load(fake.path, grid=False)
    # point 4 (pull, n = 100) ran 2 of R = 3 replicas: slot 2 is NaN in float datasets ...
    assert int(ds["point_replicas"][4]) == 2
    assert np.isnan(ds["p_wait_replicas"].values[4, 2])
    assert np.all(np.isnan(ds["tail_replicas"].values[4, 2]))
    assert np.isfinite(ds["p_wait_replicas"].values[4, :2]).all()
    # ... and in the integer ones, which the file pads with an arbitrary value
    assert ds["events_replicas"].dtype == np.float64
    assert np.isnan(ds["events_replicas"].values[4, 2]) and np.isnan(ds["unstable_replicas"].values[9, 1:]).all()
    assert ds["events_replicas"].values[4, 0] == fake.replicas["events"][4, 0]
    # the unstable point: NaN estimates, unstable flags 1
    u = int(np.flatnonzero(ds["status"].values == "unstable")[0])
    for m in fake.estimates:
        assert np.all(np.isnan(ds[m].values[u]))
    assert np.all(ds["unstable_replicas"].values[u] == 1)


def test_forward_compatible_and_quantiles(fake_extended):
    ds = la.load(fake_extended.path, grid=False)
    assert "level" in ds.dims and ds.sizes["level"] == 3
    np.testing.assert_allclose(ds["level"].values, [0.5, 0.9, 0.99])
    for name in ("sojourn_quantiles", "wait_quantiles"):
        assert ds[name].dims == ("point", "level")
        np.testing.assert_array_equal(ds[name].values, fake_extended.quantiles[name][1])
        assert ds[name].attrs["units"] == "time"
    # unknown datasets: ignored, or loaded when they look like a metric; never an error
    assert "odd_shape" not in ds and "odd_metric" not in ds and "loose_dataset" not in ds
    assert "odd_replica_replicas" not in ds and "hosts" not in ds
    assert "new_param" in ds.coords
    assert "future_metric" in ds and "future_metric_replicas" in ds
    # integer padding -7 is masked
    assert np.isnan(ds["events_replicas"].values[4, 2])
    # job text over 64 KiB survives
    assert len(ds.attrs["job"]) > 65536


def test_to_frame_tidy(fake):
    ds = la.load(fake.path, grid=False)
    df = la.to_frame(ds)
    P, J, K = fake.P, fake.J, fake.K
    n_scalar, n_pool = len(fakefile.SCALAR), len(fakefile.POOL)
    assert len(df) == P * (n_scalar + n_pool * J + J * K)
    for c in ["n", "lambda", "rho", "policy", "d", "routers", "stale", "status", "beta_1", "mu_2", "buffer_1",
              "metric", "pool", "k", "mean", "half_width", "std_err", "replicas"]:
        assert c in df.columns, c
    assert "level" not in df.columns
    s = df[(df.metric == "p_wait")]
    assert s["pool"].isna().all() and s["k"].isna().all()
    np.testing.assert_array_equal(s["mean"].to_numpy(), fake.estimates["p_wait"]["mean"])
    t = df[(df.metric == "tail") & (df.point == 1) & (df.pool == 2) & (df.k == 3)]
    assert len(t) == 1
    assert t["mean"].iloc[0] == fake.estimates["tail"]["mean"][1, 1, 2]
    assert t["half_width"].iloc[0] == fake.estimates["tail"]["half_width"][1, 1, 2]
    q = df[(df.metric == "mean_queue") & (df.pool == 1)]
    np.testing.assert_array_equal(q["mean"].to_numpy(), fake.estimates["mean_queue"]["mean"][:, 0])
    assert df["replicas"].iloc[0] == fake.estimate_replicas[0]
    assert df.attrs["units"]["mean_sojourn"] == "time"
    # same from a path; metric selection
    df2 = la.to_frame(fake.path, metrics=["tail"])
    assert set(df2.metric) == {"tail"} and len(df2) == P * J * K
    with pytest.raises(KeyError):
        la.to_frame(ds, metrics=["nope"])


def test_to_frame_with_quantiles(fake_extended):
    df = la.to_frame(fake_extended.path)
    q = df[df.metric == "sojourn_quantiles"]
    assert len(q) == fake_extended.P * 3
    assert set(q["level"]) == {0.5, 0.9, 0.99}
    assert q["half_width"].isna().all()
    assert df[df.metric == "p_wait"]["level"].isna().all()


def test_replica_frame_and_select(fake):
    ds = la.load(fake.path, grid=False)
    rf = la.to_replica_frame(ds, metrics="p_wait")
    # slots that never ran are dropped: sum of replicas over points
    assert len(rf) == int(fake.points["replicas"].sum())
    sub = la.select_points(ds, {"lambda": 0.7}, policy="pull", routers=1)
    assert list(sub["n"].values) == [10, 100, 1000]
    sub = la.select_points(ds, beta_1=0.5, n=[10, 1000])
    assert set(sub["n"].values) == {10, 1000}
    assert la.select_points(ds, n=lambda v: v > 500).sizes["point"] == 3
    with pytest.raises(KeyError):
        la.select_points(ds, nosuch=1)


# ------------------------------------------------------------------- errors


def test_not_hdf5(tmp_path):
    p = fakefile.write_not_hdf5(tmp_path / "results.h5")
    with pytest.raises(LbmcFormatError, match="not an HDF5 file") as ei:
        la.load(p, grid=False)
    assert str(p) in str(ei.value)
    assert isinstance(ei.value, ValueError)


def test_foreign_hdf5(tmp_path):
    p = fakefile.write_foreign_hdf5(tmp_path / "other.h5")
    with pytest.raises(LbmcFormatError, match="no 'layout_version'") as ei:
        la.load(p, grid=False)
    assert str(p) in str(ei.value) and "creator" in str(ei.value)


def test_checkpoint_hint(tmp_path):
    p = fakefile.write_foreign_hdf5(tmp_path / "out.h5.ckpt")
    with pytest.raises(LbmcFormatError, match="checkpoint"):
        la.load(p, grid=False)


def test_unsupported_layout_version(tmp_path):
    e = fakefile.write_results(tmp_path / "future.h5", layout_version=99)
    with pytest.raises(LbmcFormatError, match="unsupported layout_version 99") as ei:
        la.load(e.path, grid=False)
    assert e.path in str(ei.value)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        la.load(tmp_path / "nope.h5", grid=False)


def test_broken_layout_is_a_clear_error(tmp_path):
    e = fakefile.write_results(tmp_path / "broken.h5")
    with h5py.File(e.path, "a") as f:
        del f["estimates/tail/mean"]
        f["estimates/tail"].create_dataset("mean", data=np.zeros((e.P, e.J)))
    with pytest.raises(LbmcFormatError, match="tail"):
        la.load(e.path, grid=False)
    problems = la.check_file(e.path)
    assert any("/estimates/tail/mean: shape" in p for p in problems)


def test_check_file_reports_deviations(tmp_path):
    e = fakefile.write_results(tmp_path / "dev.h5", omit=["points/rho", "@complete"])
    with h5py.File(e.path, "a") as f:
        # a fixed-length byte string where the doc wants variable-length UTF-8
        f["points"].create_dataset("rho", data=np.array([b"x"] * e.P))
        f["estimates/p_wait/mean"].attrs["units"] = np.bytes_(b"1")
    problems = la.check_file(e.path)
    assert any("complete" in p for p in problems)
    assert any(p.startswith("/points/rho: dtype") for p in problems)
    assert any("/estimates/p_wait/mean: attribute 'units'" in p for p in problems)
    # the loader still copes with fixed-length strings
    ds = la.load(e.path, grid=False)
    assert ds["rho"].values[0] == "x"


def test_empty_grid(tmp_path):
    e = fakefile.write_results(tmp_path / "empty.h5", points=[])
    ds = la.load(e.path, grid=False)
    assert ds.sizes["point"] == 0
    df = la.to_frame(ds)
    assert len(df) == 0 and "mean" in df.columns


# ------------------------------------------------- updates of the layout document


def test_reason_growth_and_int_padding(fake):
    ds = la.load(fake.path, grid=False)
    assert ds["reason"].dims == ("point",)
    assert all(type(r) is str for r in ds["reason"].values)
    u = ds["status"].values == "unstable"
    assert all(r for r in ds["reason"].values[u]) and not any(ds["reason"].values[~u])
    assert ds["growth_replicas"].dims == ("point", "replica")
    assert np.isnan(ds["growth_replicas"].values[4, 2])  # slot never run
    np.testing.assert_array_equal(ds["growth_replicas"].values[:4], fake.replicas["growth"][:4])
    # -1 in the file (no replica) -> NaN, the other values unchanged
    assert fake.replicas["events"][4, 2] == -1 and fake.replicas["unstable"][4, 2] == -1
    assert np.isnan(ds["events_replicas"].values[4, 2]) and np.isnan(ds["unstable_replicas"].values[4, 2])
    assert ds["unstable_replicas"].values[0, 0] == 0
    # metric groups carry units/description: the loader keeps the group's description
    assert ds["p_wait"].attrs["metric_description"] == "the metric p_wait"
    df = la.to_frame(ds, metrics=["p_wait"])
    assert df.attrs["descriptions"]["p_wait"] == "the metric p_wait"
    assert "reason" in df.columns


def test_other_integer_padding_is_masked_and_reported(tmp_path):
    e = fakefile.write_results(tmp_path / "pad.h5", int_pad=-7)
    ds = la.load(e.path, grid=False)
    assert np.isnan(ds["events_replicas"].values[4, 2]) and np.isnan(ds["unstable_replicas"].values[9, 1:]).all()
    problems = la.check_file(e.path)
    assert any(p.startswith("/replicas/events: point 4") and "not -1" in p for p in problems), problems
    assert any(p.startswith("/replicas/unstable: point 4") for p in problems), problems


def test_partial_results_warn(tmp_path):
    e = fakefile.write_results(tmp_path / "part.h5")
    with h5py.File(e.path, "a") as f:
        f.attrs["complete"] = 0
    with pytest.warns(la.PartialResultsWarning, match="--resume"):
        ds = la.load(e.path, grid=False)
    assert ds.attrs["complete"] == 0
    assert la.check_file(e.path) == []  # a partial file is still a valid file
    with h5py.File(e.path, "a") as f:
        f.attrs["complete"] = 3
    assert any("complete is 3" in p for p in la.check_file(e.path))


def test_check_file_new_rules(tmp_path):
    e = fakefile.write_results(tmp_path / "rules.h5", omit=["replicas/growth"])
    u = int(np.flatnonzero(e.points["status"] == "unstable")[0])
    with h5py.File(e.path, "a") as f:
        r = f["estimates/replicas"]
        r[0] = r[0] + 1                                    # no longer equal to /points/replicas
        del f["points/reason"]
        reason = e.points["reason"].copy()
        reason[u] = ""                                     # unstable without a reason
        reason[0] = "spurious"                             # a reason at an ok point
        d = f["points"].create_dataset("reason", data=reason, dtype=fakefile.STR)
        d.attrs.create("units", "1", dtype=fakefile.STR)
        d.attrs.create("description", "why", dtype=fakefile.STR)
        f["replicas/cpu_seconds"].attrs.create("units", "time", dtype=fakefile.STR)
        del f["estimates/tail"].attrs["description"]
        f["points/lambda"].attrs.create("units", "1", dtype=fakefile.STR)
    problems = la.check_file(e.path)
    want = ["/replicas/growth: missing", "/estimates/replicas differs from /points/replicas",
            f"/points/reason: point {u} is unstable but its reason is empty",
            "/points/reason: point 0 has status 'ok' but a reason",
            "/replicas/cpu_seconds: units 'time', the doc says 's'",
            "/estimates/tail (group): missing attribute 'description'",
            "/points/lambda: units '1', the doc says '1/time'"]
    for w in want:
        assert any(p.startswith(w) for p in problems), (w, problems)
