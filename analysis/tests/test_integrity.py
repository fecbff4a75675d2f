"""Checksums of results files (docs/results-format.md, "Checksums"): the loader checks them
before reading, refuses a damaged file naming the dataset, loads a file without them (an older
lbmc's) with an UnverifiedWarning, and computes the digests exactly as lbmc does."""

import shutil
import subprocess
import warnings

import h5py
import numpy as np
import pytest

import fakefile
import lbmc_analysis as la
import realfiles
from lbmc_analysis import _h5


def _load_quietly(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return la.load(path, grid=False)


def test_sealed_file_loads_without_warning(tmp_path):
    e = fakefile.write_results(tmp_path / "sealed.h5", seal=True)
    ds = _load_quietly(e.path)
    assert "sha256" not in ds["p_wait"].attrs  # the checksum is not a variable's attribute
    assert len(ds.attrs["content_sha256"]) == 64
    assert la.check_file(e.path) == []


def test_unsealed_file_loads_with_a_note(tmp_path):
    e = fakefile.write_results(tmp_path / "old.h5")
    with pytest.warns(la.UnverifiedWarning, match="no checksums"):
        ds = la.load(e.path, grid=False)
    np.testing.assert_array_equal(ds["p_wait"].values, e.estimates["p_wait"]["mean"])


@pytest.mark.parametrize("target", ["estimates/p_wait/mean", "points/policy", "replicas/events"])
def test_changed_value_is_refused_naming_the_dataset(tmp_path, target):
    e = fakefile.write_results(tmp_path / "edit.h5", seal=True)
    with h5py.File(e.path, "a") as f:
        d = f[target]
        v = d[()]
        v.flat[0] = b"other" if v.dtype.kind == "O" else v.flat[0] + 1
        d[...] = v
    with pytest.raises(la.LbmcDamagedError, match=f"is damaged: /{target} does not match its SHA-256"):
        la.load(e.path, grid=False)
    assert any(f"/{target}" in p for p in la.check_file(e.path))


def test_root_attribute_change_is_refused(tmp_path):
    e = fakefile.write_results(tmp_path / "root.h5", seal=True)
    with h5py.File(e.path, "a") as f:
        f.attrs["seed"] = 54321
    with pytest.raises(la.LbmcDamagedError, match="root attributes"):
        la.load(e.path, grid=False)
    assert issubclass(la.LbmcDamagedError, la.LbmcFormatError)


def test_flipped_bytes_in_chunks_fail_fletcher32(tmp_path):
    path = tmp_path / "chunked.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(100.0), chunks=(100,), fletcher32=True)
        _h5.seal(f)
    with h5py.File(path, "r") as f:
        offset = f["x"].id.get_chunk_info(0).byte_offset
    data = bytearray(path.read_bytes())
    data[offset + 8] ^= 0x04
    path.write_bytes(bytes(data))
    with h5py.File(path, "r") as f, pytest.raises(la.LbmcDamagedError, match="/x fails its Fletcher32"):
        _h5.verify(f, str(path))


def test_digests_agree_with_lbmc(tmp_path):
    """A file written by the real lbmc verifies here; and a file sealed here verifies in lbmc."""
    path = realfiles._lbmc()
    job = tmp_path / "j.yaml"
    job.write_text("system:\n  n: [10, 20]\n  lambda: 0.7\n  pools: [{beta: 1, mu: 1, buffer: 4}]\n"
                   "policy: jsq(2)\nrun: {replicas: 2, time: 50, warmup: 5, batches: 4, seed: 3}\n")
    out = tmp_path / "r.h5"
    subprocess.run([path, "run", str(job), "-o", str(out), "--quiet"], check=True, timeout=300)
    with h5py.File(out, "r") as f:
        assert _h5.verify(f, str(out)) is True
    copy = tmp_path / "resealed.h5"
    shutil.copy(out, copy)
    with h5py.File(copy, "a") as f:  # drop lbmc's digests, compute them here
        del f.attrs["content_sha256"]
        f.visititems(lambda name, obj: obj.attrs.__delitem__("sha256"))
        _h5.seal(f)
    with h5py.File(copy, "r") as a, h5py.File(out, "r") as b:
        assert a.attrs["content_sha256"] == b.attrs["content_sha256"]
    r = subprocess.run([path, "info", str(copy)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "no checksums" not in r.stderr, r.stderr
