"""lbmc_analysis.transient: the time dimension of `lbmc sim --transient --json` output and
its bands, on a real run when the lbmc binary is available (LBMC), else on a small
hand-made output whose values are known."""
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
    assert ds["tail"].sel(stat="mean", time=1.0, pool=1, k=2).item() == 0.8
    assert ds["mean_queue"].sel(stat="upper", time=0.0, pool=1).item() == 1.0
    assert np.isnan(ds["p_wait"].sel(stat="mean", time=0.0).item())
    assert ds.attrs["replicas"] == 3
    # a curve on the band's edge is inside; one above it is outside
    assert list(transient.outside_band(ds, "customers", [3.0, 3.4])) == []
    assert list(transient.outside_band(ds, "customers", [3.0, 3.5])) == [1.0]


def test_bad_input():
    with pytest.raises(ValueError):
        transient.load_transient({"estimates": {}})


LBMC = os.environ.get("LBMC")


@pytest.mark.skipif(not LBMC or not os.path.exists(LBMC), reason="no lbmc binary (LBMC)")
def test_real_run_and_plot():
    out = subprocess.run(
        [LBMC, "sim", "--n", "10", "--lambda", "0.9", "--pools", "1:1:inf", "--policy", "jsq(2)",
         "--init", "tail:1,1,0.8", "--transient", "0:4:1", "--replicas", "200", "--json"],
        capture_output=True, text=True, check=True)
    ds = transient.load_transient(out.stdout)
    assert list(ds["time"].values) == [0, 1, 2, 3, 4]
    start = ds["tail"].sel(stat="mean", time=0.0, pool=0).values[:3]
    assert list(start) == [1.0, 1.0, 0.8]
    e = transient.entry(ds, "customers")
    assert (e.sel(stat="band_lower") <= e.sel(stat="lower")).all()
    assert (e.sel(stat="upper") <= e.sel(stat="band_upper")).all()
    ax = transient.plot_transient(ds, "tail", pool=0, k=2,
                                  references={"constant": [1.0] * 5})
    assert len(ax.collections) == 2 and len(ax.lines) == 2
