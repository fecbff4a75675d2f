"""The refined mean field's expansion of a normalised point (``x*``, ``V``, ``W``, ...), cached:
it does not depend on n, so the points of a grid that differ only in n share one (``lbmc info
--limit refined``). Used by :mod:`.refined_point` (``x* + V/n``) and :mod:`.pairs` (``W``)."""

from __future__ import annotations

import functools

import numpy as np

from .ode import OccupancyModel

__all__ = ["expansion_of"]


@functools.lru_cache(maxsize=64)
def _expansion(pol, lam, beta, mu, buffer, slots, sampling, routers, stale):
    """:func:`.refined_mf.refined_stationary` of one system (read only: cached)."""
    from . import refined_mf as _rf

    model = OccupancyModel(pol, lam, np.array(beta), np.array(mu), np.array(buffer), slots=np.array(slots),
                           sampling=sampling, routers=routers, stale=stale)
    return _rf.refined_stationary(model)


def expansion_of(p):
    """The cached expansion of a point normalised by :func:`._result.normalize_point`."""
    return _expansion(p["policy"], p["lam"], tuple(p["beta"]), tuple(p["mu"]), tuple(p["buffer"]),
                      tuple(p["slots"]), p["sampling"], p["routers"], p["stale"])
