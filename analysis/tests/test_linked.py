"""Linked axes (the job key ``together``) in files written by the real ``lbmc run``: the
file's ``/grid`` group makes them one dimension, loaded grid-shaped without a warning."""

import warnings

import h5py
import numpy as np
import xarray as xr

import lbmc_analysis as la
from lbmc_analysis import grid


def _load_quietly(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a GridWarning (flat form) or any other warning fails
        return la.load(path)


def test_linked_buffers_form_one_dimension(real):
    path = real["linked"]
    with h5py.File(path, "r") as f:
        g = f["grid"]
        assert [x.decode() for x in g["axis_name"][()]] == ["n", "pools[1].buffer", "pools[2].buffer", "policy"]
        assert g["axis_length"][()].tolist() == [2, 3, 3, 2]
        assert g["axis_dim"][()].tolist() == [0, 1, 1, 2]
        assert [x.decode() for x in g["axis_value"][()]] == ["10", "30", "1", "2", "4", "2", "3", "6", "jsq(2)",
                                                             "random"]
        assert [x.decode() for x in g["dim_name"][()]] == ["n", "", "policy"]
        assert f["points/index"][()].tolist() == list(range(12))  # 2 x 3 x 2, not 2 x 3 x 3 x 2
    ds = _load_quietly(path)
    assert ds["p_block"].dims == ("n", "buffer_1+buffer_2", "policy")
    assert ds["p_block"].shape == (2, 3, 2)
    np.testing.assert_array_equal(ds["buffer_1"].values, [1, 2, 4])
    np.testing.assert_array_equal(ds["buffer_2"].values, [2, 3, 6])
    flat = la.load(path, grid=False)
    for p in range(flat.sizes["point"]):
        pt = flat.isel(point=p)
        cell = ds.set_xindex("buffer_2").sel(n=int(pt["n"]), policy=str(pt["policy"].values),
                                             buffer_2=int(pt["buffer"].values[1]))
        assert int(cell["buffer_1"]) == int(pt["buffer"].values[0])
        assert float(cell["p_block"]) == float(pt["p_block"])
    xr.testing.assert_identical(grid.flatten(ds), flat)


def test_shared_buffer_named_dimension(real):
    ds = _load_quietly(real["shared_buffer"])
    assert ds["p_block"].dims == ("load",)
    np.testing.assert_array_equal(ds["lambda_"].values, [0.5, 0.9])
    np.testing.assert_array_equal(ds["buffer"].values, [1, 3])
    flat = la.load(real["shared_buffer"], grid=False)
    assert flat["buffer"].values.tolist() == [[1, 1], [3, 3]]  # every pool's buffer
    assert float(ds.p_block.sel(lambda_=0.9)) == float(flat["p_block"].values[1])
    assert float(ds.p_block.set_xindex("buffer").sel(buffer=3)) == float(flat["p_block"].values[1])
    assert float((ds.p_block + ds.p_block).sel(lambda_=0.9)) == 2 * float(flat["p_block"].values[1])
