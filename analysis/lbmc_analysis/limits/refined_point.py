"""The refined mean field of a point (``x* + V/n``, Gast & Van Houdt 2017; order 2, Gast,
Bortolussi & Tribastone 2019) and the mean-field transient of a point, in the shape of
:func:`.reference.reference`'s result (:mod:`._result`)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from . import _check
from ._result import _Result, _acc_from_tail, _all_exponential, _exponential_workload, _messages, normalize_point
from .expansion import expansion_of as _expansion_of
from .pairs import pair_limits

# ----------------------------------------------------------------------------------
# refined mean field
# ----------------------------------------------------------------------------------


def refined(point, n, order=1) -> dict:
    """``x* + V/n`` (Gast & Van Houdt 2017) for every metric that is a function of the
    occupancy state, exponential service and the policies with a smooth occupancy drift
    (random, jsq(d), balanced(c)), heterogeneous pools, finite buffers and slots included. Same return shape as :func:`reference`, with
    ``kind = "refined"`` and ``n``; metrics without an expansion (quantiles) are NaN.

    ``E[g(X)] ~ g(x*) + (grad g . V + 1/2 D^2 g : W + g1)/n`` for ``tail``, ``mean_queue``,
    ``utilization`` (linear in x), ``p_wait``, ``p_block``, ``admitted_share`` (the routing
    law's mass on the busy / full / pool's classes, time-averaged: per arrival by PASTA),
    then ``throughput = lam (1 - p_block)``, ``mean_sojourn`` (Little, from the expanded
    means) and ``mean_wait``. ``accuracy`` is the numerical accuracy of the 1/n coefficient
    divided by n; the approximation itself is O(1/n^2) (measured in the tests: at n = 10,
    JSQ(2), lambda 0.9, buffer 3, the refined tails are within 0.009 of the exact ones, the
    mean field within 0.034).

    No refined value (NaN, with a note saying why) for pull, jiq and full jsq (their fixed
    point is on the boundary, where the drift is not differentiable: the expansion does not
    apply), for unstable points (no fixed point, or the point's key ``status`` is
    ``"unstable"``: the simulation found it so), lwl(d) and non-exponential service.
    balanced(c) draws c distinct servers: its law's own 1/n term is included, as for jsq(d)
    with distinct sampling (:meth:`.ode.OccupancyModel.law_correction`).

    ``order = 2`` adds the 1/n^2 term ``A/n^2`` (:func:`.refined_mf.refined_order2_jsq`) to
    ``tail``, ``mean_queue`` and ``utilization`` of homogeneous jsq(d) with sampling
    ``with_replacement`` (one pool, exponential service, any buffer); the other metrics,
    and other systems, stay at order 1 (their sources say which; a note says why).
    """
    from . import refined_mf as _rf

    n = _check.integer("n", n, lo=1)
    if order not in (1, 2):
        raise ValueError(f"order = {order!r} is not allowed; 1 or 2 is required")
    p = normalize_point(point)
    R = _Result(p, "refined", n)
    name, d = p["name"], p["param"]
    if not _all_exponential(p):
        R.note("the refined mean field here needs exponential service (the occupancy chain)")
        return R.done()
    if name == "lwl":
        R.note("lwl(d) has no occupancy form: no refined mean field")
        return R.done()
    if name == "pull" or (name == "jsq" and d is None):
        what = "jiq" if name == "pull" and p["stale"] == "keep" else ("jsq" if name == "jsq" else "pull")
        R.note(f"no refined value for {what}: its mean-field fixed point lies on the boundary of the state space "
               "(every arrival joins an idle server, the levels above are empty) and its drift is not "
               "differentiable there (the law jumps where the idle servers run out); the refined mean field "
               "(Gast & Van Houdt 2017) needs a drift twice differentiable at the fixed point; x* + V/n would "
               "be the n -> inf limit itself (p_wait 0), while the finite system waits (its waiting is not in "
               "the expansion)")
        return R.done()
    status = point.get("status") if isinstance(point, Mapping) else None
    if isinstance(status, bytes):
        status = status.decode()
    if isinstance(status, str) and status.strip().lower() == "unstable":
        R.note("no refined value: the point is unstable (status 'unstable'); the refined mean field expands a "
               "stationary regime around the mean-field fixed point")
        return R.done()
    try:
        rr = _expansion_of(p)
    except (RuntimeError, ValueError, np.linalg.LinAlgError) as exc:
        R.note(f"no refined mean field: {exc}")
        return R.done()
    m, x, V, W = rr["model"], rr["x"], rr["V"], rr["W"]
    J, Kx = x.shape
    Lv = m.levels
    kk = np.arange(Lv)
    B = np.array([math.inf if math.isinf(b) else b for b in m.buffer])
    blocked = kk[None, :] >= B[:, None]
    busy = (kk[None, :] >= m.L[:, None]) & ~blocked

    def g(X):
        s = m.s_from_x(X)
        law = m.law(s, clip=False)
        pb = np.sum(np.where(blocked, law, 0.0), axis=(-2, -1))
        pw = np.sum(np.where(busy, law, 0.0), axis=(-2, -1))
        adm = np.sum(np.where(blocked, 0.0, law), axis=-1)  # (..., J)
        return np.concatenate((pb[..., None], pw[..., None], adm), axis=-1)

    s_star = m.s_from_x(x)
    p1 = m.law_correction(s_star)
    g1 = np.concatenate(([np.sum(np.where(blocked, p1, 0.0))], [np.sum(np.where(busy, p1, 0.0))],
                         np.sum(np.where(blocked, 0.0, p1), axis=-1)))
    g0, c1 = _rf.expand(g, m, x, V, W, g1)
    val = g0 + c1 / n
    pb, pw, adm = val[0], val[1], val[2:]
    tails = x + V / n
    mean_queue = tails.sum(axis=1)
    thr = p["lam"] * (1 - pb)
    share = adm / adm.sum()
    soj = float(np.sum(m.b * mean_queue)) / thr
    a = rr["accuracy"] / n
    src = (f"refined mean field x* + V/n (Gast & Van Houdt 2017) at n = {n}, around the limit of "
           f"{p['policy']}; error O(1/n^2)")
    acc = _acc_from_tail(a, Kx, thr, p["lam"])
    R.put("tail", list(tails), src, acc["tail"])
    R.put("mean_queue", mean_queue, src, acc["mean_queue"])
    R.put("utilization", tails[:, 0], src, acc["utilization"])
    R.put("p_block", pb, src, acc["p_block"])
    R.put("p_wait", pw, src, acc["p_wait"])
    R.put("p_wait_or_block", pb + pw, src, acc["p_wait_or_block"])
    R.put("admitted_share", share, src, acc["admitted_share"])
    R.put("throughput", thr, src, acc["throughput"])
    R.put("mean_sojourn", soj, src + "; Little", acc["mean_sojourn"])
    R.put("mean_wait", soj - float(np.sum(share / m.mu)), src + "; Little", acc["mean_wait"])
    if order == 2:
        _refined_order2(R, p, n, tails, acc)
    if name in ("jsq", "balanced") and d is not None:
        _messages(R, p, 2.0 * d, "2d per arrival (counted)")
    elif name == "random":
        _messages(R, p, 0.0, "random routing sends no messages")
    R.details["refined"] = {"x": x.copy(), "V": V.copy(), "residual": rr["residual"], "accuracy": rr["accuracy"]}
    _exponential_workload(R, p)
    pair_limits(R, p, n=n)
    return R.done()


def _refined_order2(R, p, n, tails, acc):
    """x* + V/n + A/n^2 for tail, mean_queue and utilization of homogeneous jsq(d) with
    replacement (R's order-1 values replaced), else a note."""
    from . import refined_mf as _rf

    ok = (p["name"] == "jsq" and p["param"] is not None and p["beta"].size == 1 and p["sampling"] == "with_replacement"
          and np.all(p["slots"] == 1))
    if not ok:
        R.note("order 2 (+ A/n^2) is implemented for homogeneous jsq(d) with sampling with_replacement only: "
               "order 1 is given")
        return
    buf = float(p["buffer"][0])
    o2 = _rf.refined_order2_jsq(int(p["param"]), float(p["lam"]),
                                math.inf if (math.isinf(buf) or buf < 0) else int(buf), float(p["mu"][0]))
    t2 = np.array(tails, dtype=float).copy()
    m = min(t2.shape[1], o2["x"].size)
    t2[0, :m] = (o2["x"] + o2["V"] / n + o2["A"] / n**2)[:m]
    src = (f"refined mean field of order 2, x* + V/n + A/n^2 (Gast, Bortolussi & Tribastone 2019) at n = {n}, "
           f"around the limit of {p['policy']}; error O(1/n^3)")
    R.put("tail", list(t2), src, acc["tail"])
    R.put("mean_queue", t2.sum(axis=1), src, acc["mean_queue"])
    R.put("utilization", t2[:, 0], src, acc["utilization"])


# ----------------------------------------------------------------------------------
# transient
# ----------------------------------------------------------------------------------


def transient_for_point(point, t, x0=None, *, n=None, levels=None):
    """The mean-field ODE of a point from the start x0 on the times t, and with ``n`` the
    refined ``x(t) + V(t)/n`` (Gast, Bortolussi & Tribastone 2019), as a JSON-friendly dict.

    Parameters: ``point`` as for :func:`reference` (exponential service; the policies with an
    occupancy form); ``t`` increasing times >= 0 (model time); ``x0`` None / ``"empty"`` or
    ``"tail:F1,F2,...;G1,..."`` (rmf_tool's x0, per pool), or a list of per-pool tails;
    ``n``: servers for the refined curve (None: the ODE only; pull, jiq and full jsq get none,
    the source says why, as in :func:`refined`); ``levels``: levels of the
    truncated ODE (default: the start's levels + 12, at least K + 1, at most the largest
    buffer + 1).

    Returns ``{"time": (T,), "tail": (T, J, K), "mean_queue": (T, J), "tail_refined": (T, J, K)
    or None, "mean_queue_refined": ..., "source": str, "top": the largest mass the top level
    reached (truncation check; keep it below ~1e-12)}`` (numpy arrays; :func:`to_json` prints
    it). ``tail`` uses the limit laws (n -> infinity)."""
    from . import refined_mf as _rf
    from .ode import OccupancyModel, _start_state, parse_tail_start, transient

    p = normalize_point(point)
    if not _all_exponential(p):
        raise ValueError("service is not allowed here; the mean-field ODE needs exponential service")
    if p["name"] == "lwl":
        raise ValueError("policy = 'lwl(d)' is not allowed here; it has no occupancy form")
    J, K = p["beta"].size, p["K"]
    starts = parse_tail_start(x0, J) if isinstance(x0, str) else (None if x0 is None else list(x0))
    depth = max((len(s) for s in starts), default=0) if starts else 0
    if levels is None:
        levels = max(depth + 12, K + 1)
        if all(not math.isinf(b) for b in p["buffer"]):
            levels = min(levels, int(max(p["buffer"])) + 1)
    pol = p["policy"] if p["name"] != "pull" else "pull"
    model = OccupancyModel("jsq" if (p["name"] == "jsq" and p["param"] is None) else pol, p["lam"], p["beta"],
                           p["mu"], p["buffer"], slots=p["slots"], sampling=p["sampling"], routers=p["routers"],
                           stale=p["stale"], levels=levels)
    x_start = _start_state(model, starts)
    t = np.asarray(t, dtype=float)
    boundary = p["name"] == "pull" or (p["name"] == "jsq" and p["param"] is None)
    if n is None or boundary:
        xs = transient(model, t, x_start).values
        V = None
    else:
        n = _check.integer("n", n, lo=1)
        ds = _rf.refined_transient(model, t, x_start)
        xs, V = ds["x"].values, ds["V"].values
    Kx = xs.shape[2]

    def cut(a):
        out = np.zeros(a.shape[:2] + (K,))
        m = min(K, Kx)
        out[..., :m] = a[..., :m]
        return out

    res = {"time": t, "tail": cut(xs), "mean_queue": xs.sum(axis=2), "tail_refined": None,
           "mean_queue_refined": None, "top": float(np.max(xs[..., -1])),
           "source": "mean-field ODE with the C side's drift (src/engine/occ_meanfield.c), n -> infinity laws"}
    if V is not None:
        xr_ = xs + V / n
        res["tail_refined"] = cut(xr_)
        res["mean_queue_refined"] = xr_.sum(axis=2)
        res["source"] += f"; refined x(t) + V(t)/n at n = {n} (Gast, Bortolussi & Tribastone 2019)"
    elif n is not None:
        res["source"] += (f"; no refined x(t) + V(t)/n for {p['policy']}: its drift is not differentiable where "
                          "the idle servers run out (the expansion does not apply; docs/limits.md section 4)")
    return res
