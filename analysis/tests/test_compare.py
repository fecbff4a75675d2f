"""Paired comparisons of two policies per scenario (lbmc_analysis.compare)."""

import h5py
import numpy as np
import pytest
from scipy import stats

import fakefile
import lbmc_analysis as la

AXES = {"n": [10, 100], "lambda": [0.7, 0.9], "policy": ["pull", "jsq(2)"]}


def test_compare_is_the_paired_t_interval(tmp_path):
    pts, job, _ = fakefile.grid_points(AXES, replicas=5)
    e = fakefile.write_results(tmp_path / "c.h5", pts, job=job)
    ds = la.load(e.path)
    out = la.compare(ds, "mean_sojourn", "pull", "jsq(2)")
    assert list(out.columns[:2]) == ["n", "lambda_"] and len(out) == 4
    row = out[(out.n == 100) & (out.lambda_ == 0.9)].iloc[0]
    x = ds["mean_sojourn_replicas"].sel(n=100, lambda_=0.9, policy="pull").values
    y = ds["mean_sojourn_replicas"].sel(n=100, lambda_=0.9, policy="jsq(2)").values
    d = x - y
    t = stats.t.ppf(0.975, 4)
    assert row["pairs"] == 5
    np.testing.assert_allclose(row["diff"], d.mean())
    np.testing.assert_allclose(row["diff_half_width"], t * d.std(ddof=1) / np.sqrt(5))
    np.testing.assert_allclose(row["ratio"], x.mean() / y.mean())
    assert row["mean_a"] == float(ds.mean_sojourn.sel(n=100, lambda_=0.9, policy="pull"))
    assert out.attrs["confidence"] == 0.95
    # metric entries use the one spelling
    u = la.compare(e.path, "utilization[1]", "jsq(2)", "pull")
    assert (u["metric"] == "utilization[1]").all()
    with pytest.raises(KeyError, match="policy = 'lwl"):
        la.compare(ds, "p_wait", "pull", "lwl(2)")
    with pytest.raises(KeyError, match="not a grid dimension"):
        la.compare(ds, "p_wait", "pull", "jsq(2)", along="routers")


def test_compare_pairing_removes_common_noise(tmp_path):
    # b's replicas are a's plus 0.01: the paired difference is exact, the unpaired interval is not
    pts, job, _ = fakefile.grid_points(AXES, replicas=4)
    e = fakefile.write_results(tmp_path / "crn.h5", pts, job=job)
    with h5py.File(e.path, "r+") as f:
        r = f["replicas/p_wait"][()]
        pol = f["points/policy"].asstr()[()]
        r[pol == "jsq(2)"] = r[pol == "pull"] + 0.01
        f["replicas/p_wait"][...] = r
    out = la.compare(e.path, "p_wait", "pull", "jsq(2)")
    np.testing.assert_allclose(out["diff"], -0.01)
    np.testing.assert_allclose(out["diff_half_width"], 0.0, atol=1e-12)
    assert (out["diff_half_width_unpaired"] > 0).all()


def test_compare_unstable_and_missing(tmp_path):
    pts, job, _ = fakefile.grid_points(AXES, status=lambda p: "unstable" if p["policy"] == "jsq(2)" and
                                       p["lambda"] == 0.9 else "ok", skip=[0])
    e = fakefile.write_results(tmp_path / "u.h5", pts, job=job)
    out = la.compare(e.path, "p_wait", "pull", "jsq(2)")
    bad = out[out.lambda_ == 0.9]
    assert bad["diff"].isna().all() and (bad["status_b"] == "unstable").all()
    first = out[(out.n == 10) & (out.lambda_ == 0.7)].iloc[0]
    assert first["status_a"] == "missing" and np.isnan(first["diff"])


def test_compare_real_single_server_covers_zero(real):
    # n = 1: every policy is the same M/M/1 queue; the exact difference is 0
    out = la.compare(real["single_server"], "mean_sojourn", "pull", "random")
    assert len(out) == 2 and (out["pairs"] == 8).all()
    assert (np.abs(out["diff"]) <= out["diff_half_width"]).all(), out
    assert (np.abs(out["ratio"] - 1) <= out["ratio_half_width"]).all(), out
