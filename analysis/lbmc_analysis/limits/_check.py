"""Argument checks shared by the limits modules: every error names the parameter, the value
and what is allowed (ValueError)."""

from __future__ import annotations

import math
import numbers

import numpy as np


def real(name, x, *, lo=None, lo_open=False, hi=None, hi_open=False, allow_inf=False):
    """A float from x, or ValueError naming ``name``, the value and the allowed range."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise ValueError(f"{name} = {x!r} is not allowed; a real number is required")
    v = float(x)
    rng = []
    if lo is not None:
        rng.append(f"{'>' if lo_open else '>='} {lo:g}")
    if hi is not None:
        rng.append(f"{'<' if hi_open else '<='} {hi:g}")
    allowed = "a " + ("finite " if not allow_inf else "") + "number" + (" " + " and ".join(rng) if rng else "")
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} = {x!r} is not allowed; {allowed} is required")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError(f"{name} = {x!r} is not allowed; {allowed} is required")
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise ValueError(f"{name} = {x!r} is not allowed; {allowed} is required")
    return v


def integer(name, x, *, lo=None, hi=None):
    """An int from x (integral floats accepted), or ValueError."""
    ok = not isinstance(x, (bool, np.bool_)) and isinstance(x, numbers.Real) and float(x).is_integer()
    if not ok or (lo is not None and x < lo) or (hi is not None and x > hi):
        rng = " ".join(s for s in ((f">= {lo}" if lo is not None else ""), (f"<= {hi}" if hi is not None else "")) if s)
        raise ValueError(f"{name} = {x!r} is not allowed; an integer {rng} is required".replace("  ", " "))
    return int(x)


def buffer_value(name, b):
    """One buffer: an int >= 1, or math.inf for None / inf / -1 (the results file's code)."""
    if b is None:
        return math.inf
    if isinstance(b, str) and b.strip().lower() in ("inf", "infinity", "-1"):
        return math.inf
    if isinstance(b, (bool, np.bool_)) or not isinstance(b, numbers.Real):
        raise ValueError(f"{name} = {b!r} is not allowed; an integer >= 1, or -1 / inf / None (unlimited) is required")
    v = float(b)
    if (math.isinf(v) and v > 0) or v == -1:
        return math.inf
    if not v.is_integer() or v < 1:
        raise ValueError(f"{name} = {b!r} is not allowed; an integer >= 1, or -1 / inf / None (unlimited) is required")
    return int(v)


def pools(beta, mu, buffer=None):
    """(beta, mu, buffer) as float arrays of one entry per pool; buffer entries int or inf.

    beta: fractions in (0, 1] summing to 1 (within 1e-6); mu > 0 finite; buffer: scalar or
    one per pool (None/inf/-1 = unlimited)."""
    b = np.atleast_1d(np.asarray(beta, dtype=float))
    m = np.atleast_1d(np.asarray(mu, dtype=float))
    if b.ndim != 1 or b.size == 0:
        raise ValueError(f"beta = {np.asarray(beta).tolist()} is not allowed; one fraction per pool is required")
    if m.size == 1 and b.size > 1:
        m = np.repeat(m, b.size)
    if m.shape != b.shape:
        raise ValueError(f"mu = {m.tolist()} is not allowed; one speed per pool ({b.size}) is required")
    if not np.all(np.isfinite(b)) or np.any(b <= 0) or np.any(b > 1) or abs(b.sum() - 1) > 1e-6:
        raise ValueError(f"beta = {b.tolist()} is not allowed; fractions in (0, 1] summing to 1 are required")
    if not np.all(np.isfinite(m)) or np.any(m <= 0):
        raise ValueError(f"mu = {m.tolist()} is not allowed; finite speeds > 0 are required")
    if buffer is None:
        buf = [math.inf] * b.size
    else:
        raw = list(buffer) if isinstance(buffer, (list, tuple, np.ndarray)) else [buffer]
        if len(raw) == 1 and b.size > 1:
            raw = raw * b.size
        if len(raw) != b.size:
            raise ValueError(f"buffer = {raw!r} is not allowed; a scalar or one entry per pool ({b.size}) is required")
        buf = [buffer_value(f"buffer[{j + 1}]", v) for j, v in enumerate(raw)]
    return b / b.sum(), m, buf
