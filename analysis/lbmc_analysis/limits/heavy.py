"""Heavy traffic with a fixed number of servers (rho -> 1): scaled metrics, their limits, exact cases.

Source: H. Chen, H.-Q. Ye, "Asymptotic optimality of balanced routing", Operations Research
60(1), 2012 (abstract: /work/shared/seeds/balanced-routing-abstract.txt); H.-Q. Ye,
Operations Research 73(1), 2025; /work/shared/notes/limits.md, section 5.

Under complete resource pooling (balanced(c) with c >= 2, JSQ) the total workload of n
servers of total capacity ``C = sum_j N_j mu_j`` (requirement units per unit time) behaves
in heavy traffic like that of one server of capacity C: a reflected Brownian motion whose
stationary mean gives, for arrivals with squared coefficient of variation ``c_a^2``
(Poisson: 1) and requirements of mean ``m`` and scv ``c_s^2``,

* ``(1 - rho) E[customers in system] -> (c_a^2 + c_s^2) / 2``;
* ``(C - lambda_tot m) E[V] -> C m (c_a^2 + c_s^2) / 2`` with ``V`` the total remaining
  requirement in the system (requirement units; in lbmc ``m = 1``).

Rate-proportional random routing (``balanced(1)``) does not pool: every server is an
M/G/1 queue of load rho, so both scaled metrics tend to n times these values.

The approach is slow and not monotone (limits.md): :func:`two_server_exact` gives the
exact values of a small case (two exponential servers of different speeds, JSQ) to see it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as splinalg

from . import _check
from .service import parse_service

__all__ = ["diffusion_limits", "add_heavy_traffic_metrics", "two_server_exact", "total_workload"]


def diffusion_limits(cs2=1.0, *, ca2=1.0, capacity=1.0, m=1.0):
    """The complete-resource-pooling limits of limits.md section 5 (Chen & Ye 2012):

    ``{"customers": (ca2 + cs2)/2, "workload": capacity m (ca2 + cs2)/2}`` for
    ``(1 - rho) E[customers]`` and ``(C - lambda m) E[V]`` (V in requirement units, C in
    requirement units per unit time). ``cs2 = inf`` gives inf (no diffusion limit)."""
    cs2 = _check.real("cs2", cs2, lo=0, allow_inf=True)
    ca2 = _check.real("ca2", ca2, lo=0)
    capacity = _check.real("capacity", capacity, lo=0, lo_open=True)
    m = _check.real("m", m, lo=0, lo_open=True)
    h = (ca2 + cs2) / 2
    return {"customers": h, "workload": capacity * m * h}


def total_workload(mean_queue, utilization, pool_servers, scv):
    """Mean total remaining requirement ``E[V] = sum_j N_j [(q_j - u_j) + u_j (1 + c_s,j^2)/2]``
    (requirement units; lbmc's requirements have mean 1), from the per-pool mean customers
    per server ``q_j``, busy fractions ``u_j`` and the requirement scv of each pool.

    Why: with FCFS and routing that does not look at the requirements (every policy but
    lwl; lwl looks at the work already queued, not at the arriving requirement), a waiting
    customer still holds its whole requirement (mean 1), and the customer in service holds
    the residual of a requirement drawn in a renewal sequence, whose time average over busy
    time is ``E[S^2]/(2 E[S]) = (1 + c_s^2)/2`` (the inspection paradox). One service slot
    per server (speed lists: not covered). Broadcasts over leading axes (..., J)."""
    q = np.asarray(mean_queue, dtype=float)
    u = np.asarray(utilization, dtype=float)
    N = np.asarray(pool_servers, dtype=float)
    c = np.asarray(scv, dtype=float)
    with np.errstate(invalid="ignore"):
        per = (q - u) + u * (1 + c) / 2
    return np.sum(N * per, axis=-1)


def _scv_of(ds):
    """Per-pool scv from the dataset's ``service`` coordinate (exponential when absent)."""
    if "service" not in ds.coords and "service" not in ds:
        return None
    svc = ds["service"]
    import xarray as xr

    return xr.apply_ufunc(np.vectorize(lambda t: parse_service(str(t) if t else None).scv, otypes=[float]), svc)


def add_heavy_traffic_metrics(ds, *, ca2=1.0):
    """A copy of a loaded results Dataset (:func:`lbmc_analysis.load`) with

    * ``ht_customers = (1 - rho) E[customers in system]`` (``E[customers] = sum_j N_j
      mean_queue_j``, N_j = ``pool_servers``);
    * ``ht_workload = (C - lambda n) E[V]`` (``C = sum_j N_j mu_j``; V from
      :func:`total_workload`, requirement units; exponential service: the scv is 1);
    * ``ht_customers_limit`` and ``ht_workload_limit``: the complete-resource-pooling
      limits (``(ca2 + cs2)/2`` and ``C (ca2 + cs2)/2``, cs2 the servers' requirement scv
      when all pools share one law; NaN otherwise).

    Intervals: rho, n, N_j and C are constants of the point, so the scaled metrics are
    linear in the per-replica means: each replica's value is scaled and summed over the
    pools, and the interval is the Student-t interval over the replicas, exactly as
    :func:`lbmc_analysis.derived.add_metric` builds it (a linear map of an estimate: no
    delta method needed; the interval's half-width is the scaled half-width of the sum).
    A point with one replica has no interval here (its batch means are not in the file).
    Speed lists (slots > 1) and infinite scv give NaN / inf.
    """
    import xarray as xr

    from ..derived import add_metric

    n = ds["n"]
    N = ds["pool_servers"].astype(float)
    mu = ds["mu"]
    rho = ds["rho"]
    # the flat form names the arrival rate ``lambda``, the grid form ``lambda_`` (a Python keyword)
    lam_tot = ds["lambda" if "lambda" in ds.variables else "lambda_"] * n
    C = (N * mu).sum("pool")
    q = ds["mean_queue_replicas"]
    u = ds["utilization_replicas"]
    cust = (N * q).sum("pool", skipna=False)
    out = add_metric(ds, "ht_customers", (1 - rho) * cust, units="1",
                     description="(1 - rho) x mean customers in system (heavy-traffic scaling, Chen & Ye 2012)")
    scv = _scv_of(ds)
    if scv is None:
        scv = xr.ones_like(mu)
    V = xr.apply_ufunc(total_workload, q, u, N, scv, input_core_dims=[["pool"], ["pool"], ["pool"], ["pool"]])
    out = add_metric(out, "ht_workload", (C - lam_tot) * V, units="1",
                     description="(C - lambda n) x mean total remaining requirement (C = sum_j N_j mu_j)")
    same = (scv == scv.isel(pool=0)).all("pool")
    cs2 = scv.isel(pool=0).where(same)
    out["ht_customers_limit"] = ((ca2 + cs2) / 2).assign_attrs(
        description="complete-resource-pooling limit (c_a^2 + c_s^2)/2", units="1")
    out["ht_workload_limit"] = (C * (ca2 + cs2) / 2).assign_attrs(
        description="complete-resource-pooling limit C m (c_a^2 + c_s^2)/2, m = 1", units="1")
    return out


# ----------------------------------------------------------------------------------
# two heterogeneous exponential servers, exactly
# ----------------------------------------------------------------------------------


def two_server_exact(lam, mu1, mu2, policy="jsq", *, ties="random", tail_tol=1e-13, diff_max=None):
    """Two exponential servers of speeds mu1, mu2 with Poisson arrivals of total rate lam:
    the exact stationary mean number of customers, workload and their heavy-traffic scalings.

    Parameters
    ----------
    lam : total arrival rate (per unit time), ``lam < mu1 + mu2``.
    mu1, mu2 : service rates.
    policy : ``"jsq"`` (join the shorter queue; = jsq(2) = balanced(2) with two servers) or
        ``"proportional"`` (= balanced(1): server i with probability mu_i / (mu1 + mu2);
        two independent M/M/1 queues of load rho, closed form, exact).
    ties : JSQ ties: ``"random"`` (1/2 each, lbmc's rule) or ``"fast"`` (the faster server).

    The JSQ chain on (q1, q2) is truncated at ``q1 + q2 <= N_max`` (N_max with
    ``rho^N_max < tail_tol``) and ``|q1 - q2| <= D`` (default 60; JSQ pulls the queues
    together, so the difference stays small) and solved by sparse LU. ``truncation`` is the
    stationary mass on the truncation's boundary, a bound on the error's order.

    Returns dict: ``rho = lam/(mu1 + mu2)``, ``customers`` (E[q1 + q2]),
    ``scaled_customers`` ((1 - rho) E[customers]), ``workload`` (E[V], V the remaining
    requirement: each customer holds Exp(1), so E[V] = E[customers] for exponential
    requirements), ``scaled_workload`` ((C - lam) E[V], C = mu1 + mu2), ``limits``
    (:func:`diffusion_limits` with c_s^2 = 1: 1 and C), ``states``, ``truncation``.
    """
    lam = _check.real("lam", lam, lo=0, lo_open=True)
    mu1 = _check.real("mu1", mu1, lo=0, lo_open=True)
    mu2 = _check.real("mu2", mu2, lo=0, lo_open=True)
    C = mu1 + mu2
    rho = lam / C
    if rho >= 1:
        raise ValueError(f"lam = {lam:g} is not allowed with mu1 + mu2 = {C:g}; rho < 1 is required")
    if policy not in ("jsq", "proportional"):
        raise ValueError(f"policy = {policy!r} is not allowed; 'jsq' or 'proportional' is required")
    if ties not in ("random", "fast"):
        raise ValueError(f"ties = {ties!r} is not allowed; 'random' or 'fast' is required")
    lims = diffusion_limits(1.0, capacity=C)
    if policy == "proportional":
        L = 2 * rho / (1 - rho)
        return {"rho": rho, "customers": L, "scaled_customers": (1 - rho) * L, "workload": L,
                "scaled_workload": (C - lam) * L, "limits": lims, "states": 0, "truncation": 0.0,
                "source": "two independent M/M/1 queues of load rho (exact)"}
    Nmax = int(math.ceil(math.log(tail_tol) / math.log(rho))) + 20
    D = 60 if diff_max is None else _check.integer("diff_max", diff_max, lo=1)
    # states (q1, q2) with q1 + q2 <= Nmax, |q1 - q2| <= D
    q1, q2 = [], []
    for N in range(Nmax + 1):
        lo = max(0, (N - D + 1) // 2)
        hi = min(N, (N + D) // 2)
        a = np.arange(lo, hi + 1)
        a = a[np.abs(2 * a - N) <= D]
        q1.append(a)
        q2.append(N - a)
    q1 = np.concatenate(q1)
    q2 = np.concatenate(q2)
    S = q1.size
    key = {(int(a), int(b)): i for i, (a, b) in enumerate(zip(q1, q2))}
    rows, cols, vals = [], [], []

    def add(src, a, b, rate):
        j = key.get((a, b))
        if j is not None and rate > 0:
            rows.append(src)
            cols.append(j)
            vals.append(rate)

    fast_is_1 = mu1 >= mu2
    for i in range(S):
        a, b = int(q1[i]), int(q2[i])
        if a + b < Nmax:
            if a < b:
                add(i, a + 1, b, lam)
            elif b < a:
                add(i, a, b + 1, lam)
            elif ties == "random":
                add(i, a + 1, b, lam / 2)
                add(i, a, b + 1, lam / 2)
            else:
                add(i, a + 1, b, lam) if fast_is_1 else add(i, a, b + 1, lam)
        if a > 0:
            add(i, a - 1, b, mu1)
        if b > 0:
            add(i, a, b - 1, mu2)
    off = sparse.csr_matrix((vals, (rows, cols)), shape=(S, S))
    Q = off - sparse.diags(np.asarray(off.sum(axis=1)).ravel())
    QT = Q.T.tocsc()
    # fix the probability of the empty state (1 - rho is its order), solve the rest
    i0 = key[(0, 0)]
    idx = np.r_[0:i0, i0 + 1:S]
    A = QT[idx][:, idx].tocsc()
    rhs = -np.asarray(QT[idx][:, [i0]].todense()).ravel()
    rest = splinalg.spsolve(A, rhs, permc_spec="MMD_AT_PLUS_A")
    pi = np.maximum(np.insert(rest, i0, 1.0), 0)
    pi /= pi.sum()
    L = float(np.sum(pi * (q1 + q2)))
    edge = float(np.sum(pi[(q1 + q2 == Nmax) | (np.abs(q1 - q2) == D)]))
    return {"rho": rho, "customers": L, "scaled_customers": (1 - rho) * L, "workload": L,
            "scaled_workload": (C - lam) * L, "limits": lims, "states": S, "truncation": edge,
            "residual": float(np.max(np.abs(QT @ pi))),
            "source": f"exact CTMC of two exponential servers under JSQ (ties {ties}), truncated"}
