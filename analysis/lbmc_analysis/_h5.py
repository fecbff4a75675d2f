"""Low-level readers of lbmc results files shared by :mod:`lbmc_analysis.io` and
:mod:`lbmc_analysis.grid` (the layer below both): HDF5 values as plain Python, datasets
as arrays (strings as str), the checksums of a file (:func:`verify`), and the errors and
warnings of :func:`lbmc_analysis.load`."""

from __future__ import annotations

import hashlib
import struct

import h5py
import numpy as np

#: the attribute holding an object's SHA-256, and the root's of the whole content
#: (docs/results-format.md, "Checksums"; written by src/io/h5seal.c).
SEAL_ATTR = "sha256"
ROOT_ATTR = "content_sha256"


class GridWarning(UserWarning):
    """:func:`load` could not recover the job's grid and returned the flat form (the message says why)."""


class LbmcFormatError(ValueError):
    """A file is not an lbmc results file this reader can load (the message says why)."""


class LbmcDamagedError(LbmcFormatError):
    """A results file fails its checksums: its contents changed after lbmc wrote them (the message
    names the dataset)."""


class UnverifiedWarning(UserWarning):
    """The file has no checksums (written by an lbmc before they were added): loaded unchecked."""


def _py(value):
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


def _read_array(dset: h5py.Dataset) -> np.ndarray:
    """Read a dataset; strings (variable- or fixed-length) come back as object arrays of str."""
    if h5py.check_string_dtype(dset.dtype) is not None:
        # h5py >= 3 returns bytes for string *datasets* unless asked for str
        return np.asarray(dset.asstr(errors="replace")[()], dtype=object)
    arr = np.asarray(dset[()])
    if arr.dtype.kind == "S":
        return np.vectorize(lambda b: b.decode("utf-8", errors="replace"), otypes=[object])(arr)
    return arr


# ----------------------------------------------------------------------------------
# checksums (docs/results-format.md, "Checksums"; the same canonical form as src/io/h5seal.c)
# ----------------------------------------------------------------------------------


def _u64(n: int) -> bytes:
    return struct.pack("<Q", n)


def _string_bytes(arr, vlen: bool):
    for e in np.ravel(arr):
        if isinstance(e, str):
            e = e.encode("utf-8", "surrogateescape")
        b = bytes(e) if e is not None else b""
        if not vlen:
            b = b.split(b"\0", 1)[0]
        yield _u64(len(b)) + b


def _value_digest(h, tid, shape, read) -> None:
    """Add the canonical form of a value (an attribute or a dataset) to the hash ``h``: its kind,
    rank and dimensions, its elements; ``read(dtype)`` returns its values as an array of dtype."""
    cls = tid.get_class()
    kind = {h5py.h5t.FLOAT: b"f", h5py.h5t.INTEGER: b"i", h5py.h5t.STRING: b"s"}.get(cls, b"x")
    shape = tuple(shape or ())
    h.update(kind + _u64(len(shape)) + b"".join(_u64(d) for d in shape))
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return
    if kind == b"f":
        h.update(np.ascontiguousarray(read(np.dtype("<f8"))).tobytes())
    elif kind == b"i":
        h.update(np.ascontiguousarray(read(np.dtype("<i8"))).tobytes())
    elif kind == b"s":
        vlen = tid.is_variable_str()
        dt = h5py.special_dtype(vlen=bytes) if vlen else np.dtype(f"S{tid.get_size()}")
        for part in _string_bytes(read(dt), vlen):
            h.update(part)
    else:
        h.update(np.ascontiguousarray(read(None)).tobytes())


def _attr_reader(aid):
    def read(dtype):
        arr = np.empty(aid.shape, dtype=dtype if dtype is not None else aid.dtype)
        aid.read(arr)
        return arr
    return read


def _dset_reader(dset):
    def read(dtype):
        arr = np.empty(dset.shape, dtype=dtype if dtype is not None else dset.dtype)
        dset.id.read(h5py.h5s.ALL, h5py.h5s.ALL, arr)
        return arr
    return read


def _attrs_digest(h, obj, skip: str) -> None:
    for name in sorted(obj.attrs.keys(), key=lambda n: n.encode()):
        if name == skip:
            continue
        aid = h5py.h5a.open(obj.id, name.encode())
        h.update(b"A" + name.encode() + b"\0")
        _value_digest(h, aid.get_type(), aid.shape, _attr_reader(aid))


def object_digest(obj) -> bytes:
    """The SHA-256 of a group or dataset: its attributes but ``sha256`` in name order ('A', the name,
    a NUL, the value), then for a dataset 'D' and its values."""
    h = hashlib.sha256()
    _attrs_digest(h, obj, SEAL_ATTR)
    if isinstance(obj, h5py.Dataset):
        h.update(b"D")
        _value_digest(h, obj.id.get_type(), obj.shape, _dset_reader(obj))
    return h.digest()


def _stored_hex(obj, name):
    if name not in obj.attrs:
        return None
    v = obj.attrs[name]
    return v.decode("ascii", "replace") if isinstance(v, (bytes, np.bytes_)) else str(v)


def _object_paths(f) -> list:
    """Every group and dataset below the root by path, sorted: a walk of the links by name
    (H5Lvisit, as src/io/h5seal.c does; h5py's visititems also reads each object's header
    information, which the digests do not cover)."""
    paths = []

    def visit(name):
        if f.id.links.get_info(name).type == h5py.h5l.TYPE_HARD:
            paths.append(name.decode("utf-8", "surrogateescape"))

    f.id.links.visit(visit)
    return sorted(paths, key=lambda p: p.encode("utf-8", "surrogateescape"))


def content_digest(f, digests: dict) -> bytes:
    """The SHA-256 of the whole file: the root's attributes but ``content_sha256``, then 'O', the
    path, a NUL and the digest of each object (``digests``: path -> digest) in path order."""
    h = hashlib.sha256()
    _attrs_digest(h, f, ROOT_ATTR)
    for p in sorted(digests, key=lambda p: p.encode()):
        h.update(b"O" + p.encode() + b"\0" + digests[p])
    return h.digest()


def seal(f) -> None:
    """Write the checksums of an open, writable file as ``lbmc run`` does (for tests that build
    files by hand; a damaged file must not be sealed again)."""
    digests = {p: object_digest(f[p]) for p in _object_paths(f)}
    dt = h5py.string_dtype("ascii", 64)
    for p, d in digests.items():
        f[p].attrs.create(SEAL_ATTR, np.array(d.hex().encode(), dtype=dt))
    f.attrs.create(ROOT_ATTR, np.array(content_digest(f, digests).hex().encode(), dtype=dt))


def _damaged(path, what):
    return LbmcDamagedError(f"{path} is damaged: {what}; rerun the job (or shard) that made it, or restore "
                            f"the file from a copy")


def verify(f, path) -> bool:
    """Check the checksums of an open results file (every value is read once): True if it has them
    and they hold, False if it has none (written by an lbmc before checksums). Raises
    :class:`LbmcDamagedError` naming the first damaged dataset (a Fletcher32 failure, a value or
    attribute that does not match its ``sha256``), or the root attributes."""
    try:
        if ROOT_ATTR not in f.attrs:
            return False
    except (OSError, KeyError, RuntimeError) as exc:
        raise _damaged(path, f"its root attributes cannot be read ({exc})") from exc
    stored_root = _stored_hex(f, ROOT_ATTR)
    digests = {}
    try:
        paths = _object_paths(f)
    except (OSError, KeyError, RuntimeError) as exc:
        raise _damaged(path, f"the list of its groups and datasets cannot be read ({exc})") from exc
    for p in paths:
        try:
            obj = f[p]
            digests[p] = object_digest(obj)
        except (OSError, KeyError, RuntimeError) as exc:
            what = ("fails its Fletcher32 checksum" if "fletcher32" in str(exc).lower() or "filter" in str(exc).lower()
                    else "cannot be read back")
            raise _damaged(path, f"/{p} {what} (HDF5: {exc})") from exc
        stored = _stored_hex(obj, SEAL_ATTR)
        if stored is None:
            raise _damaged(path, f"/{p} has lost its {SEAL_ATTR} attribute")
        if digests[p].hex() != stored:
            raise _damaged(path, f"/{p} does not match its SHA-256 checksum (its values or attributes changed "
                                 f"after lbmc wrote them)")
    if content_digest(f, digests).hex() != stored_root:
        raise _damaged(path, f"its root attributes (job, seed, ...) or its list of datasets changed after lbmc "
                             f"wrote it ({ROOT_ATTR} does not match)")
    return True
