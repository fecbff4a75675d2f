"""``lbmc info --format csv|json`` on files written by the real ``lbmc run``: the CSV loads in
pandas as it is (columns, types, values equal to the file's), the JSON holds the same rows,
--where keeps the points asked for, and the default text table fits in 120 columns."""

import io
import json
import math
import subprocess

import numpy as np
import pandas as pd

import lbmc_analysis as la
import realfiles


def _info(*args):
    proc = subprocess.run([realfiles._lbmc(), "info", *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return proc.stdout


def test_csv_loads_in_pandas(real):
    path = real["linked"]
    df = pd.read_csv(io.StringIO(_info(path, "--format", "csv")), float_precision="round_trip")
    cols = list(df.columns)  # upper_bound only when some entry has none observed
    assert cols[:15] == ["point", "n", "buffer_1", "buffer_2", "policy", "metric", "entry", "pool", "k",
                         "level", "mean", "half_width", "std_err", "lower", "upper"]
    assert set(cols[15:-5]) <= {"upper_bound"}
    assert cols[-5:] == ["flags", "engine", "replicas", "status", "reason"]
    for col in ("point", "n", "buffer_1", "buffer_2", "replicas"):
        assert df[col].dtype == np.int64, col
    for col in ("pool", "k", "level", "mean", "half_width", "std_err"):
        assert df[col].dtype == np.float64, col
    assert df["policy"].dtype == object and set(df["policy"]) == {"jsq(2)", "random"}
    flat = la.load(path, grid=False)
    J, K = flat.sizes["pool"], flat.sizes["k"]
    per_point = 8 + 3 * J + J * K + 2 * 4  # scalars, per-pool metrics, tail, two quantile lists
    assert len(df) == flat.sizes["point"] * per_point
    # values as in the file, to the last bit
    blocks = df[df.metric == "p_block"].sort_values("point")
    np.testing.assert_array_equal(blocks["mean"].to_numpy(), flat["p_block"].values)
    np.testing.assert_array_equal(blocks["buffer_2"].to_numpy(), flat["buffer"].values[:, 1])
    tail = df[df.entry == "tail[2][3]"].sort_values("point")
    assert (tail["pool"] == 2).all() and (tail["k"] == 3).all()
    np.testing.assert_array_equal(tail["half_width"].to_numpy(), flat["tail_half_width"].values[:, 1, 2])
    q = df[df.entry == "sojourn_quantiles[0.99]"]
    assert (q["level"] == 0.99).all() and q["pool"].isna().all()
    # every entry name is one lbmc_analysis.metrics reads
    for name in df["entry"].unique():
        la.metrics.parse_metric(name)


def test_csv_infinite_buffer_and_unstable_points(real):
    df = pd.read_csv(io.StringIO(_info(real["buffers_routers"], "--format", "csv", "--metrics", "p_wait")), float_precision="round_trip")
    assert df["buffer_1"].dtype == np.float64 and math.isinf(df["buffer_1"].max())
    bad = df[df.status != "ok"]
    assert len(bad) > 0 and bad["mean"].isna().all() and (bad["reason"].str.len() > 0).all()


def test_json_same_rows(real):
    path = real["linked"]
    doc = json.loads(_info(path, "--format", "json", "--metrics", "p_block,utilization"))
    assert [a["name"] for a in doc["grid"]["axes"]] == ["n", "pools[1].buffer", "pools[2].buffer", "policy"]
    assert [a["dim"] for a in doc["grid"]["axes"]] == [0, 1, 1, 2]
    df = pd.read_csv(io.StringIO(_info(path, "--format", "csv", "--metrics", "p_block,utilization")), float_precision="round_trip")
    assert len(doc["rows"]) == len(df) == 12 * 3
    assert [r["entry"] for r in doc["rows"][:3]] == ["p_block", "utilization[1]", "utilization[2]"]
    np.testing.assert_array_equal([r["mean"] for r in doc["rows"]], df["mean"].to_numpy())


def test_where_keeps_the_points_asked_for(real):
    df = pd.read_csv(io.StringIO(_info(real["linked"], "--format", "csv", "--metrics", "p_wait",
                                       "--where", "policy=random,n=30", "--where", "buffer_2=3,buffer_2=6")))
    assert len(df) == 2 and set(df["policy"]) == {"random"} and set(df["n"]) == {30}
    assert sorted(df["buffer_1"]) == [2, 4]
    # the axis by its name in the job, the value as the same number
    df2 = pd.read_csv(io.StringIO(_info(real["linked"], "--format", "csv", "--metrics", "p_wait",
                                        "--where", "pools[2].buffer=6.0")))
    assert sorted(df2["buffer_2"].unique()) == [6]


def test_default_table_fits_120_columns(real):
    for name, path in real.items():
        for args in ((), ("--metrics", "tail,sojourn_quantiles")):
            lines = _info(path, *args).splitlines()
            assert max(len(line) for line in lines[1:]) <= 120, name  # line 1: the path
