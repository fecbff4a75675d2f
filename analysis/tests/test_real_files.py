"""The loader on result files written by the REAL ``lbmc run`` during the test.

The program is ``$LBMC`` (ctest sets it to the built lbmc) or, outside ctest,
``build/src/lbmc`` of this source tree; without either the tests are skipped with
a message saying what to set. Each job is small (about a second): the points of
docs/results-format.md that a fake file cannot prove are checked on what the C
program really writes: ``check_file`` finds nothing, shapes and coordinates follow
the job's grid, unstable points (a runaway one and a ``rho >= 1`` one that is never
simulated) are NaN with a reason, replica slots never run are NaN after loading
(-1 in the file's integer datasets), strings are ``str``.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import textwrap

import h5py
import numpy as np
import pytest
from scipy import stats

import lbmc_analysis as la

from realfiles import JOBS  # noqa: E402,F401  (the fixture 'real' is in conftest.py)

STRING_COORDS = ("policy", "policy_name", "sampling", "stale", "status", "reason")


def _core_sizes(ds):
    """The dimensions of layout version 1 (later additions, e.g. quantile levels, may add more)."""
    return {d: ds.sizes[d] for d in ("point", "pool", "k", "replica")}


def test_real_files_conform(real):
    for name, path in real.items():
        problems = la.check_file(path)
        assert problems == [], f"{name}: " + "\n".join(problems)


def test_real_root_attributes(real):
    ds = la.load(real["heterogeneous"], grid=False)
    for key in ("lbmc_version", "created", "job", "shard"):
        assert type(ds.attrs[key]) is str, key
    assert ds.attrs["layout_version"] == 2 and ds.attrs["complete"] == 1 and ds.attrs["shard"] == ""
    assert ds.attrs["seed"] == 5 and ds.attrs["tail_k"] == 4 and ds.attrs["mpi_ranks"] == 1
    assert "policy: [pull, jsq(2), random]" in ds.attrs["job"]
    assert "job_sha256" not in ds.attrs
    if "heterogeneous-2ranks" in real:
        ds2 = la.load(real["heterogeneous-2ranks"], grid=False)
        assert ds2.attrs["mpi_ranks"] == 2
        # same job, same seed: the same per-replica values whatever the ranks
        np.testing.assert_array_equal(ds2["p_wait_replicas"].values, ds["p_wait_replicas"].values)


def test_real_shapes_and_coordinates(real):
    ds = la.load(real["heterogeneous"], grid=False)
    assert _core_sizes(ds) == {"point": 6, "pool": 2, "k": 4, "replica": 3}
    # grid order: n (first in the file) slowest, then policy
    assert list(ds["n"].values) == [10, 10, 10, 60, 60, 60]
    assert list(ds["policy"].values) == ["pull", "jsq(2)", "random"] * 2
    assert list(ds["policy_name"].values) == ["pull", "jsq", "random"] * 2
    assert list(ds["d"].values) == [0, 2, 0] * 2
    assert list(ds["stale"].values) == ["withdraw", "", ""] * 2
    np.testing.assert_allclose(ds["mu"].values, [[2, 1 / 3]] * 6)
    np.testing.assert_allclose(ds["rho"].values, 1 / (0.5 * 2 + 0.5 / 3))
    np.testing.assert_array_equal(ds["pool_servers"].sum("pool").values, ds["n"].values)
    assert ds["beta"].dims == ("point", "pool") and ds["buffer"].dims == ("point", "pool")
    assert (ds["buffer"].values == -1).all()
    assert ds["tail"].dims == ("point", "pool", "k") and ds["tail_replicas"].dims == ("point", "replica", "pool", "k")
    assert ds["mean_queue"].dims == ("point", "pool")
    np.testing.assert_array_equal(ds["replicas"].values, ds["point_replicas"].values)
    for name in STRING_COORDS:
        assert all(type(v) is str for v in ds[name].values), name
    # units and descriptions travel with the variables
    assert ds["lambda"].attrs["units"] == "1/time" and ds["throughput"].attrs["units"] == "1/time"
    assert ds["cpu_seconds_replicas"].attrs["units"] == "s" and ds["mean_sojourn"].attrs["units"] == "time"
    assert ds["p_wait"].attrs["metric_description"]
    # messages are counted by the simulator: JSQ(2) exactly 4 per arrival, random 0
    ok = ds["status"].values != "unstable"
    jsq = ok & (ds["policy"].values == "jsq(2)")
    np.testing.assert_allclose(ds["messages_per_arrival"].values[jsq], 4.0)
    rnd = ok & (ds["policy"].values == "random")
    np.testing.assert_allclose(ds["messages_per_arrival"].values[rnd], 0.0)


def test_real_unstable_points_are_nan(real):
    ds = la.load(real["heterogeneous"], grid=False)
    status = ds["status"].values
    unstable = status == "unstable"
    # random routing (n = 10 and 60) and JSQ(2) at n = 60 overload the slow pool: their
    # customers pass the job's max_customers (1000), the proof of instability; JSQ(2) and
    # PULL at n = 10 (critically loaded) are never ok
    assert list(status[4:]) == ["unstable", "unstable"] and status[2] == "unstable", list(status)
    assert set(status[:2]) <= {"unstable", "not_stationary"}, list(status)
    assert status[3] == "ok"
    for m in la.METRICS:  # the documented metrics (later additions are checked where documented)
        assert np.isnan(ds[m].values[unstable]).all(), m
        assert np.isnan(ds[f"{m}_half_width"].values[unstable]).all(), m
        assert np.isnan(ds[f"{m}_std_err"].values[unstable]).all(), m
    # proven by the customer cap, or by flow balance (JSQ(2) at n = 10: the slow pool
    # receives more than it can serve)
    bycap = np.array(["max_customers" in r for r in ds["reason"].values])
    assert all(c or "flow balance" in r for c, r in zip(bycap[unstable], ds["reason"].values[unstable]))
    assert all(r for r in ds["reason"].values[status != "ok"])
    assert not any(ds["reason"].values[status == "ok"])
    # a replica stopped at the cap says so; the others keep their growth statistic
    capped = ds["unstable_replicas"].values == 1
    assert capped[unstable & bycap].any(axis=-1).all()
    assert np.isfinite(ds["growth_replicas"].values[~capped]).all()
    # PULL at n = 60 is fine
    assert 0 < float(ds["p_wait_or_block"].values[3]) < 1


def test_real_never_simulated_point_and_padding(real):
    ds = la.load(real["buffers_routers"], grid=False)
    assert _core_sizes(ds) == {"point": 16, "pool": 1, "k": 3, "replica": 2}
    # axes in file order: lambda, routers, pools[1].buffer, stale (first slowest)
    assert list(ds["lambda"].values) == [0.6] * 8 + [1.2] * 8
    assert list(ds["routers"].values) == ([1] * 4 + [3] * 4) * 2
    assert list(ds["buffer"].sel(pool=1).values) == [2, 2, -1, -1] * 4
    assert list(ds["stale"].values) == ["withdraw", "keep"] * 8
    surely = (ds["lambda"].values == 1.2) & (ds["buffer"].sel(pool=1).values == -1)
    assert surely.sum() == 4
    assert (ds["status"].values[surely] == "unstable").all()
    assert all("rho" in r for r in ds["reason"].values[surely])
    assert (ds["point_replicas"].values[surely] == 0).all()
    with h5py.File(real["buffers_routers"], "r") as f:  # the file pads integers with -1 ...
        assert (f["replicas/events"][()][surely] == -1).all()
        assert (f["replicas/unstable"][()][surely] == -1).all()
    for v in ("events_replicas", "unstable_replicas", "warmup_replicas", "growth_replicas", "p_wait_replicas",
              "tail_replicas"):
        assert np.isnan(ds[v].values[surely]).all(), v  # ... the loader gives NaN
    for m in la.METRICS:
        assert np.isnan(ds[m].values[surely]).all(), m
    # buffer 2 at lambda 1.2: stable, blocks
    finite = (ds["lambda"].values == 1.2) & (ds["buffer"].sel(pool=1).values == 2)
    assert (ds["status"].values[finite] == "ok").all()
    assert (ds["p_block"].values[finite] > 0.05).all()
    # the other slots are real values
    assert (ds["events_replicas"].values[~surely] > 0).all()
    assert set(np.unique(ds["unstable_replicas"].values[~surely])) == {0.0}


def test_real_sequential_padding_and_estimates(real):
    ds = la.load(real["sequential"], grid=False)
    reps = ds["point_replicas"].values
    R = ds.sizes["replica"]
    assert R == reps.max() and reps.min() >= 2 and R <= 12
    assert len(set(reps.tolist())) > 1, f"expected different replica counts, got {reps}"
    t = stats.t.ppf(0.5 + ds.attrs["confidence"] / 2, reps - 1)
    for m in ("p_wait", "mean_sojourn", "utilization", "tail"):
        v = ds[f"{m}_replicas"]
        w = ds[f"{m}_weight_replicas"]
        for p in range(ds.sizes["point"]):
            assert np.isnan(v.values[p, reps[p]:]).all() and np.isfinite(v.values[p, :reps[p]]).all(), (m, p)
        # the estimate is the ratio of sums over the replicas (numerator value x weight)
        y, x = (v * w).sum("replica", skipna=True), w.sum("replica", skipna=True)
        r = y / x
        np.testing.assert_allclose(r.values, ds[m].values, rtol=1e-9, atol=1e-15)
        if m == "mean_sojourn":  # a ratio: the delta-method standard error, Student t made asymmetric
            # by Hall's skewness-removing transformation (docs/model.md, "One estimator")
            e = v * w - r * w
            se = np.sqrt((e ** 2).sum("replica", skipna=True) / (reps * (reps - 1))) / (x / reps)
            np.testing.assert_allclose(ds[f"{m}_std_err"].values, se.values, rtol=1e-7, atol=1e-15)
            m2 = (e ** 2).sum("replica", skipna=True).values / reps
            m3 = (e ** 3).sum("replica", skipna=True).values / reps
            with np.errstate(invalid="ignore", divide="ignore"):
                a, b = m3 / m2 ** 1.5 / (3 * np.sqrt(reps)), m3 / m2 ** 1.5 / (6 * np.sqrt(reps))
            with np.errstate(invalid="ignore", divide="ignore"):
                lo = r.values - se.values * (np.cbrt(1 + 3 * a * (t - b)) - 1) / a
                hi = r.values - se.values * (np.cbrt(1 + 3 * a * (-t - b)) - 1) / a
            plain = (reps < 3) | ~(a != 0)  # two replicas or no skewness: the symmetric interval
            lo = np.where(plain, r.values - t * se.values, lo)
            hi = np.where(plain, r.values + t * se.values, hi)
            np.testing.assert_allclose(ds[f"{m}_lower"].values, lo, rtol=1e-7)
            np.testing.assert_allclose(ds[f"{m}_upper"].values, hi, rtol=1e-7)
            np.testing.assert_allclose(ds[f"{m}_half_width"].values, np.maximum(r.values - lo, hi - r.values),
                                       rtol=1e-7, atol=1e-15)
        else:  # proportions: Korn-Graubard, an interval inside [0, 1] around the estimate
            lo, hi = ds[f"{m}_lower"].values, ds[f"{m}_upper"].values
            ok = np.isfinite(lo)
            assert ok.any(), m
            assert (lo[ok] >= 0).all() and (hi[ok] <= 1).all(), m
            assert (lo[ok] <= ds[m].values[ok] + 1e-15).all() and (ds[m].values[ok] <= hi[ok] + 1e-15).all(), m
    # random routing at n = 40 loads the slow pool to 0.875 (relaxation about 300 time units):
    # precision mode doubles its run up to max_time and may end it not_stationary, with a reason
    status = ds["status"].values
    assert set(status) <= {"ok", "precision_not_met", "not_stationary"}
    assert all(r for r in ds["reason"].values[status != "ok"])
    assert list(ds["sampling"].values) == ["with_replacement"] * 4 or \
        list(ds["sampling"].values) == ["", "with_replacement"] * 2


def test_real_to_frame(real):
    for name in ("heterogeneous", "buffers_routers", "sequential"):
        ds = la.load(real[name], grid=False)
        df = la.to_frame(real[name])
        P, J, K = ds.sizes["point"], ds.sizes["pool"], ds.sizes["k"]
        assert len(df[df.metric.isin(list(la.METRICS))]) == P * (8 + 4 * J + J * K), name
        assert set(la.METRICS) <= set(df.metric)
        for c in ("n", "lambda", "rho", "policy", "status", "reason", "beta_1", "mu_1", "buffer_1",
                  "metric", "pool", "k", "mean", "half_width", "std_err", "replicas"):
            assert c in df.columns, (name, c)
        for c in ("policy", "status", "reason", "stale", "sampling", "metric"):
            assert all(type(v) is str for v in df[c]), (name, c)
        bad = (df["status"] == "unstable") & df.metric.isin(list(la.METRICS))
        assert bad.any() or name == "sequential"
        assert df.loc[bad, "mean"].isna().all()
        s = df[df.metric == "p_wait_or_block"].set_index("point")["mean"]
        w = df[df.metric == "p_wait"].set_index("point")["mean"]
        b = df[df.metric == "p_block"].set_index("point")["mean"]
        np.testing.assert_allclose(s.to_numpy(), (w + b).to_numpy(), rtol=1e-9, equal_nan=True)
        q = df[(df.metric == "tail") & (df.k == 1)].set_index(["point", "pool"])["mean"]
        u = df[df.metric == "utilization"].set_index(["point", "pool"])["mean"]
        np.testing.assert_allclose(q.to_numpy(), u.loc[q.index].to_numpy(), rtol=1e-9, equal_nan=True)
        assert df.attrs["units"]["throughput"] == "1/time"
        rf = la.to_replica_frame(ds, metrics="p_wait")
        assert len(rf) == int(ds["point_replicas"].sum())
    assert not math.isnan(df["mean"].iloc[0])
