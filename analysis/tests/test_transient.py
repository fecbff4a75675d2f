"""lbmc_analysis.transient: the time dimension of `lbmc sim --transient --json` output and
its bands, on a real run when the lbmc binary is available (LBMC), else on a small
hand-made output whose values are known; and /transient of a results file of `lbmc run`
against the JSON of the same point (bit for bit, with controls that must differ)."""
import json
import os
import subprocess

import numpy as np
import pytest

from lbmc_analysis import transient

HAND = {"transient": {
    "time": [0.0, 1.0], "replicas": 3, "band": "bonferroni",
    "estimates": {
        "mean_queue": {s: [[0.5, 1.0], [0.6, 1.1]] for s in transient.STATS},
        "tail": {s: [[[1.0, 0.5], [1.0, 1.0]], [[0.9, 0.4], [1.0, 0.8]]] for s in transient.STATS},
        "customers": {s: [3.0, 3.4] for s in transient.STATS},
        "p_wait": {s: [None, 0.2] for s in transient.STATS},
    }}}


def test_hand_made_layout():
    ds = transient.load_transient(HAND)
    assert ds["tail"].dims == ("stat", "time", "pool", "k")
    assert list(ds["k"].values) == [1, 2]
    assert ds["tail"].sel(stat="mean", time=1.0, pool=2, k=2).item() == 0.8
    assert ds["mean_queue"].sel(stat="upper", time=0.0, pool=2).item() == 1.0
    assert np.isnan(ds["p_wait"].sel(stat="mean", time=0.0).item())
    assert ds.attrs["replicas"] == 3
    # a curve on the band's edge is inside; one above it is outside
    assert list(transient.outside_band(ds, "customers", [3.0, 3.4])) == []
    assert list(transient.outside_band(ds, "customers", [3.0, 3.5])) == [1.0]


def test_bad_input():
    with pytest.raises(ValueError):
        transient.load_transient({"estimates": {}})


def test_pools_numbered_from_one():
    # as lbmc_analysis.load and the docs: pool 1 is the first pool (they were numbered from 0, so
    # .sel(pool=1) picked the second pool here and the first in load)
    ds = transient.load_transient(HAND)
    assert list(ds["pool"].values) == [1, 2]
    assert ds["mean_queue"].sel(stat="mean", time=0.0, pool=1).item() == 0.5  # the JSON's first list entry
    assert transient.entry(ds, "mean_queue").sel(stat="mean", time=0.0).item() == 0.5  # default: the first
    assert transient.entry(ds, "mean_queue", pool=2).sel(stat="mean", time=0.0).item() == 1.0
    with pytest.raises(ValueError, match="numbered from 1"):
        transient.entry(ds, "mean_queue", pool=0)
    assert "ds[\"tail\"]" in transient.load_transient.__doc__


def _hdf5_file(path):
    import h5py

    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(4096.0))
    return path


@pytest.mark.parametrize("case", ["flipped", "truncated", "missing", "empty", "directory", "blank"])
def test_damaged_or_missing_sources(case, tmp_path):
    # the errors of lbmc_analysis.load for the same inputs (they were raw: UnicodeDecodeError,
    # OSError after a bogus UnverifiedWarning, JSONDecodeError, IsADirectoryError)
    import warnings

    import lbmc_analysis as la
    from lbmc_analysis import LbmcDamagedError, LbmcFormatError

    path = tmp_path / "f.h5"
    if case == "flipped":  # byte 0 of an HDF5 file changed
        raw = bytearray(_hdf5_file(path).read_bytes())
        raw[0] ^= 0xFF
        path.write_bytes(bytes(raw))
        want = LbmcFormatError
    elif case == "truncated":
        raw = _hdf5_file(path).read_bytes()
        path.write_bytes(raw[:2048])
        want = LbmcDamagedError
    elif case == "missing":
        path = tmp_path / "nope.h5"
        want = FileNotFoundError
    elif case == "empty":
        path.write_bytes(b"")
        want = LbmcFormatError
    elif case == "directory":
        path = tmp_path
        want = LbmcFormatError
    else:  # only blanks: not JSON
        path.write_text("  \n")
        want = LbmcFormatError
    for src in (path, str(path)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no UnverifiedWarning on the way
            with pytest.raises(want) as got:
                transient.load_transient(src)
        assert type(got.value) is want and str(path) in str(got.value)
    if case != "blank":
        with pytest.raises(want):  # the same type as load's
            la.load(path)


def test_json_text_and_type_errors(tmp_path):
    from lbmc_analysis import LbmcFormatError

    text = json.dumps(HAND)
    assert transient.load_transient(text).attrs["replicas"] == 3
    saved = tmp_path / "sim.json"
    saved.write_text(text)
    assert transient.load_transient(saved).attrs["replicas"] == 3  # a path to the JSON output
    with pytest.raises(LbmcFormatError, match="not valid JSON"):
        transient.load_transient('{"transient": ')
    with pytest.raises(LbmcFormatError, match="not a transient run"):
        transient.load_transient('{"estimates": {}}')
    with pytest.raises(TypeError, match="source = None is not allowed"):
        transient.load_transient(None)
    with pytest.raises(FileNotFoundError, match="nope.h5"):
        transient.load_transient("nope.h5")


LBMC = os.environ.get("LBMC")


@pytest.mark.skipif(not LBMC or not os.path.exists(LBMC), reason="no lbmc binary (LBMC)")
def test_real_run_and_plot():
    out = subprocess.run(
        [LBMC, "sim", "--n", "10", "--lambda", "0.9", "--pools", "1:1:inf", "--policy", "jsq(2)",
         "--init", "tail:1,1,0.8", "--transient", "0:4:1", "--replicas", "200", "--json"],
        capture_output=True, text=True, check=True)
    ds = transient.load_transient(out.stdout)
    assert list(ds["time"].values) == [0, 1, 2, 3, 4]
    start = ds["tail"].sel(stat="mean", time=0.0, pool=1).values[:3]
    assert list(start) == [1.0, 1.0, 0.8]
    e = transient.entry(ds, "customers")
    assert (e.sel(stat="band_lower") <= e.sel(stat="lower")).all()
    assert (e.sel(stat="upper") <= e.sel(stat="band_upper")).all()
    ax = transient.plot_transient(ds, "tail", pool=1, k=2,
                                  references={"constant": [1.0] * 5})
    assert len(ax.collections) == 2 and len(ax.lines) == 2


# ---- from a results file (lbmc run with run.transient: /transient) ----

JOB = """system:
  n: [10, 20]
  lambda: 0.9
  pools:
    - {beta: 0.5, mu: 1.5}
    - {beta: 0.5, mu: 0.5}
policy: jsq(2)
run:
  replicas: 25
  seed: 5
  tail_k: 3
  init: "tail:1,0.8;1,1,0.5"
  transient: "0:3:0.5"
"""
SIM = ["sim", "--n", "10", "--lambda", "0.9", "--pools", "0.5:1.5:inf,0.5:0.5:inf", "--policy", "jsq(2)",
       "--seed", "5", "--tail-k", "3", "--init", "tail:1,0.8;1,1,0.5", "--transient", "0:3:0.5", "--json"]


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    if not LBMC or not os.path.exists(LBMC):
        pytest.skip("no lbmc binary (LBMC)")
    d = tmp_path_factory.mktemp("transient")
    (d / "job.yaml").write_text(JOB)
    subprocess.run([LBMC, "run", str(d / "job.yaml"), "-o", str(d / "t.h5"), "--quiet"], check=True,
                   capture_output=True)
    sims = {r: subprocess.run([LBMC] + SIM + ["--replicas", str(r)], capture_output=True, text=True,
                              check=True).stdout for r in (25, 24)}
    return d / "t.h5", sims


def _same(a, b):
    return set(a.data_vars) == set(b.data_vars) and all(
        a[v].dims == b[v].dims and np.array_equal(a[v].values, b[v].values, equal_nan=True) for v in a.data_vars)


def test_file_point_equals_json(run_file):
    path, sims = run_file
    f = transient.load_transient(path, point=0)
    j = transient.load_transient(sims[25])
    assert _same(f, j)  # the same Dataset, bit for bit: dims stat, time, pool, k
    assert list(f["time"].values) == list(j["time"].values)
    assert f.attrs["replicas"] == j.attrs["replicas"] == 25
    assert f.attrs["point_n"] == 10 and f.attrs["point"] == 0
    # controls: one replica fewer, or another point (other streams), is not the same
    assert not _same(f, transient.load_transient(sims[24]))
    assert not _same(transient.load_transient(path, point=1), j)


def test_file_points_dimension_and_plot(run_file):
    import lbmc_analysis as la

    path, _ = run_file
    ds = transient.load_transient(path)
    assert list(ds["pool"].values) == list(la.load(path)["pool"].values) == [1, 2]  # numbered alike
    assert ds["tail"].dims == ("stat", "point", "time", "pool", "k")
    assert list(ds["point"].values) == [0, 1] and list(ds["n"].values) == [10, 20]
    assert list(ds["replicas"].values) == [25, 25]
    one = ds.sel(point=1)
    assert _same(one.drop_vars([c for c in one.coords if c not in ("stat", "time", "pool", "k")]),
                 transient.load_transient(path, point=1))
    # the start as asked at time 0 (pool 1 has 5 servers: tail:1,0.8 is exact)
    assert list(one["tail"].sel(stat="mean", time=0.0, pool=1).values) == [1.0, 0.8, 0.0]
    ax = transient.plot_transient(one, "mean_queue", pool=2)
    assert "25 replicas" in ax.get_title() and len(ax.collections) == 2


def test_file_errors(run_file, tmp_path):
    import h5py
    import shutil

    from lbmc_analysis import LbmcDamagedError, LbmcFormatError, UnverifiedWarning

    path, _ = run_file
    with pytest.raises(LbmcFormatError, match="no grid point 7"):
        transient.load_transient(path, point=7)
    bad = tmp_path / "bad.h5"
    shutil.copy(path, bad)
    with h5py.File(bad, "a") as f:
        d = f["transient/customers/upper"]
        x = d[()]
        x[1, 2] += 1e-9
        d[...] = x
    with pytest.raises(LbmcDamagedError, match="transient/customers/upper"):
        transient.load_transient(bad, point=0)
    steady = tmp_path / "steady.h5"
    shutil.copy(path, steady)
    with h5py.File(steady, "a") as f:  # a file without the group (its digests no longer matter here)
        del f["transient"]
        for a in [a for a in f.attrs if a == "content_sha256"]:
            del f.attrs[a]
        f.visititems(lambda name, obj: obj.attrs.__delitem__("sha256") if "sha256" in obj.attrs else None)
    with pytest.raises(LbmcFormatError, match="no /transient group"), pytest.warns(UnverifiedWarning):
        transient.load_transient(steady)
