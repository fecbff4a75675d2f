"""Low-level readers of lbmc results files shared by :mod:`lbmc_analysis.io`,
:mod:`lbmc_analysis.grid` and :mod:`lbmc_analysis.layout` (the layer below them): HDF5
values as plain Python, datasets as arrays (strings as str), and the warning
:func:`lbmc_analysis.load` gives when it falls back to the flat form. A module private
to the package: its names are public to the package's modules."""

from __future__ import annotations

import h5py
import numpy as np


class GridWarning(UserWarning):
    """:func:`load` could not recover the job's grid and returned the flat form (the message says why)."""


def py_value(value):
    """HDF5 attribute value -> plain Python (str, int, float) or numpy array."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "S" or value.dtype == object:
            return [v.decode("utf-8", errors="replace") if isinstance(v, bytes) else v for v in value.tolist()]
        if value.ndim == 0:
            return value.item()
        return value
    if isinstance(value, np.generic):
        return value.item()
    return value


def read_array(dset: h5py.Dataset) -> np.ndarray:
    """Read a dataset; strings (variable- or fixed-length) come back as object arrays of str."""
    if h5py.check_string_dtype(dset.dtype) is not None:
        # h5py >= 3 returns bytes for string *datasets* unless asked for str
        return np.asarray(dset.asstr(errors="replace")[()], dtype=object)
    arr = np.asarray(dset[()])
    if arr.dtype.kind == "S":
        return np.vectorize(lambda b: b.decode("utf-8", errors="replace"), otypes=[object])(arr)
    return arr
