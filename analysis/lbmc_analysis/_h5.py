"""Low-level readers of lbmc results files shared by :mod:`lbmc_analysis.io`,
:mod:`lbmc_analysis.grid` and :mod:`lbmc_analysis.layout` (the layer below them): HDF5
values as plain Python, datasets as arrays (strings as str), the checksums of a file
(:func:`verify`, :func:`check_file`), and the errors and warnings of
:func:`lbmc_analysis.load`. A module private to the package: its names are public to the
package's modules."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
import threading

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


def open_hdf5(path) -> h5py.File:
    """``h5py.File(path, "r")`` of a file that starts as HDF5; an ``OSError`` of the library (a
    truncated or otherwise damaged file) becomes :class:`LbmcDamagedError` naming the file."""
    try:
        return h5py.File(path, "r")
    except OSError as exc:
        raise LbmcDamagedError(f"{path} is damaged: it starts as an HDF5 file, but the HDF5 library cannot "
                               f"open it ({exc}); rerun the job (or shard) that made it, or restore the file "
                               f"from a copy") from exc


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
    """Check the checksums of an open results file, reading every value once: True if it has them
    and they hold, False if it has none (written by an lbmc before checksums; its values are read
    all the same, nothing compared). Raises :class:`LbmcDamagedError` naming the first damaged
    dataset (a Fletcher32 failure, a value that cannot be read, a value or attribute that does not
    match its ``sha256``), or the root attributes."""
    try:
        sealed = ROOT_ATTR in f.attrs
        stored_root = _stored_hex(f, ROOT_ATTR) if sealed else None
    except (OSError, KeyError, RuntimeError) as exc:
        raise _damaged(path, f"its root attributes cannot be read ({exc})") from exc
    digests = {}
    try:
        paths = _object_paths(f)
    except (OSError, KeyError, RuntimeError) as exc:
        raise _damaged(path, f"the list of its groups and datasets cannot be read ({exc})") from exc
    for p in paths:
        try:
            obj = f[p]
            digests[p] = object_digest(obj)
            stored = _stored_hex(obj, SEAL_ATTR) if sealed else None
        except (OSError, KeyError, RuntimeError, ValueError, TypeError) as exc:
            text = str(exc).lower()
            what = "fails its Fletcher32 checksum" if "fletcher32" in text or "filter" in text else "cannot be read back"
            raise _damaged(path, f"/{p} {what} (HDF5: {exc})") from exc
        if not sealed:
            continue
        if stored is None:
            raise _damaged(path, f"/{p} has lost its {SEAL_ATTR} attribute")
        if digests[p].hex() != stored:
            raise _damaged(path, f"/{p} does not match its SHA-256 checksum (its values or attributes changed "
                                 f"after lbmc wrote them)")
    try:
        root = content_digest(f, digests).hex()
    except (OSError, KeyError, RuntimeError, ValueError, TypeError) as exc:
        raise _damaged(path, f"its root attributes cannot be read ({exc})") from exc
    if sealed and root != stored_root:
        raise _damaged(path, f"its root attributes (job, seed, ...) or its list of datasets changed after lbmc "
                             f"wrote it ({ROOT_ATTR} does not match)")
    return sealed


def check_file(path) -> bool | None:
    """:func:`verify` the file at ``path`` in a child process (where ``os.fork`` exists): the HDF5
    library trusts some structures that carry no checksum (the global heap of variable-length
    strings) and can crash on damaged ones; a crash of the child is reported as damage instead of
    ending this process. True: checksums hold; False: the file has none; None: it cannot be opened
    (the caller's own open says why). Raises :class:`LbmcDamagedError`."""

    def run():
        try:
            fh = h5py.File(path, "r")
        except OSError:
            return None
        with fh:
            return verify(fh, path)

    if not hasattr(os, "fork"):
        return run()
    if threading.active_count() > 1:  # fork is unsafe with threads (a Jupyter kernel): a new Python
        return _check_in_subprocess(path)
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            os.close(rd)
            result = run()
            code = {True: 0, False: 3, None: 4}[result]
        except LbmcDamagedError as exc:
            os.write(wr, str(exc).encode("utf-8", "replace"))
            code = 1
        except BaseException as exc:  # anything else: report it, do not run the parent's code
            os.write(wr, f"{path} is damaged: reading it failed ({type(exc).__name__}: {exc})".encode())
            code = 1
        finally:
            os._exit(code)
    os.close(wr)
    chunks = []
    while True:
        chunk = os.read(rd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(rd)
    _, status = os.waitpid(pid, 0)
    message = b"".join(chunks).decode("utf-8", "replace")
    if os.WIFSIGNALED(status):
        raise _damaged(path, f"the HDF5 library crashed reading it (signal {os.WTERMSIG(status)}), in a process "
                             f"of its own")
    code = os.WEXITSTATUS(status)
    if code == 1:
        raise LbmcDamagedError(message)
    return {0: True, 3: False, 4: None}.get(code)


def _check_in_subprocess(path) -> bool | None:
    """:func:`check_file` in a new Python process (where this one has threads)."""
    code = ("import sys\nfrom lbmc_analysis import _h5\ntry:\n    r = _h5.check_file(sys.argv[1])\n"
            "except _h5.LbmcDamagedError as exc:\n    sys.stderr.write(str(exc)); sys.exit(1)\n"
            "sys.exit({True: 0, False: 3, None: 4}[r])\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-c", code, os.fspath(path)], capture_output=True, text=True, env=env)
    if r.returncode < 0:
        raise _damaged(path, f"the HDF5 library crashed reading it (signal {-r.returncode}), in a process of its "
                             f"own")
    if r.returncode == 1:
        raise LbmcDamagedError(r.stderr.strip())
    if r.returncode not in (0, 3, 4):
        raise _damaged(path, f"checking it failed: {r.stderr.strip()[-300:]}")
    return {0: True, 3: False, 4: None}[r.returncode]
