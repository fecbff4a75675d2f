"""The file's own tables (lbmc_analysis.layout): read from the attributes lbmc writes, the
documented ones for files written before them, and a real file read the same either way."""

from __future__ import annotations

import shutil

import h5py
import numpy as np
import xarray as xr

import fakefile
import lbmc_analysis as la
from lbmc_analysis import layout

#: the attributes that carry the tables (docs/results-format.md)
TABLE_ATTRS = {"points": ("columns", "shapes"), "estimates": ("metrics", "shapes", "flag_names"),
               "replicas": ("extras",)}


def _strip_tables(path):
    """Remove the table attributes: the file as lbmc wrote it before they existed."""
    with h5py.File(path, "a") as f:
        for group, names in TABLE_ATTRS.items():
            for a in names:
                if a in f[group].attrs:
                    del f[group].attrs[a]


def test_real_file_lists_its_tables(real):
    with h5py.File(real["heterogeneous"], "r") as f:
        metrics = layout.metrics_of(f)
        columns = layout.point_columns_of(f)
        assert list(metrics)[:len(layout.DOC_METRICS)] == list(layout.DOC_METRICS)  # the documented order
        assert metrics["sojourn_quantiles"] == "quantile" and metrics["tail"] == "pool_k"
        assert set(layout.DOC_POINTS) <= set(columns) and columns["mu_k"] == "P x J x L"
        assert columns["beta"] == "P x J" and columns["evidence"] == "P"
        assert layout.replica_extras_of(f) == layout.DOC_REPLICA_EXTRAS
        names = layout.flag_names_of(f)
        # the same names as each flags dataset lists (bit b = names[b])
        assert list(names) == list(f["estimates/p_wait/flags"].attrs["names"])
        assert names[:len(layout.DOC_FLAG_NAMES)] == layout.DOC_FLAG_NAMES
        for m in metrics:  # every listed metric is in the file
            assert m in f["estimates"] and m in f["replicas"], m


def test_old_file_reads_the_same(real, tmp_path):
    """A file without the table attributes (current files of earlier versions) loads into the
    same Dataset and frame, and still conforms."""
    old = tmp_path / "old.h5"
    shutil.copy(real["heterogeneous"], old)
    _strip_tables(old)
    with h5py.File(old, "r") as f:
        assert layout.metrics_of(f) == layout.DOC_METRICS
        assert layout.point_columns_of(f) == layout.DOC_POINTS
    new_ds, old_ds = la.load(real["heterogeneous"], grid=False), la.load(old, grid=False)
    assert set(new_ds.data_vars) == set(old_ds.data_vars) and set(new_ds.coords) == set(old_ds.coords)
    for v in new_ds.data_vars:
        xr.testing.assert_identical(new_ds[v].variable, old_ds[v].variable)
    assert la.metric_names(new_ds) == la.metric_names(old_ds)
    a, b = la.to_frame(new_ds), la.to_frame(old_ds)
    # the same frame; its parameter columns in the file's order (the documented order, then
    # the later columns by name, for a file without the table)
    assert sorted(a.columns) == sorted(b.columns) and len(a) == len(b)
    assert a.equals(b[list(a.columns)])
    first = list(layout.DOC_POINTS)[:10]  # index .. stale: one column each
    assert list(b.columns)[1:11] == first
    assert list(a.columns)[1:12] == ["index", "scenario", *first[1:]]  # the C table's order
    assert a.attrs["flag_names"] == b.attrs["flag_names"]
    assert la.check_file(old) == []


def test_tables_come_from_the_file(tmp_path):
    """A file that lists its own tables is read by them: the metric order, the point columns'
    order, its flag names; a listed metric or column that is missing is reported."""
    e = fakefile.write_results(tmp_path / "own.h5")
    order = ["throughput", "tail", *[m for m in layout.DOC_METRICS if m not in ("throughput", "tail")]]
    with h5py.File(e.path, "a") as f:
        f["estimates"].attrs.create("metrics", order, dtype=fakefile.STR)
        f["estimates"].attrs.create("shapes", [layout.DOC_METRICS[m] for m in order], dtype=fakefile.STR)
        f["estimates"].attrs.create("flag_names", ["first", "second"], dtype=fakefile.STR)
        cols = ["status", *[c for c in layout.DOC_POINTS if c != "status"]]
        f["points"].attrs.create("columns", cols, dtype=fakefile.STR)
        f["points"].attrs.create("shapes", [layout.DOC_POINTS[c] for c in cols], dtype=fakefile.STR)
    ds = la.load(e.path, grid=False)
    assert la.metric_names(ds)[:2] == ["throughput", "tail"]
    df = la.to_frame(ds)
    assert df.attrs["flag_names"] == ["first", "second"]
    assert list(df.columns)[1] == "status"  # point, then the columns in the file's order
    assert la.check_file(e.path) == []
    with h5py.File(e.path, "a") as f:  # a table naming something the file lacks
        f["estimates"].attrs.create("metrics", [*order, "later"], dtype=fakefile.STR)
        f["estimates"].attrs.create("shapes", [*(layout.DOC_METRICS[m] for m in order), "scalar"],
                                    dtype=fakefile.STR)
    assert "/estimates/later: missing group" in la.check_file(e.path)


def test_flag_names_default_and_file(real):
    ds = la.load(real["heterogeneous"], grid=False)
    assert ds.attrs["lbmc_flag_names"][1] == "none_observed"
    assert la.flag_names(2) == ["none_observed"]
    assert la.flag_names(np.int64(3), ds.attrs["lbmc_flag_names"]) == ["empty", "none_observed"]
