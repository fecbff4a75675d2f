"""Reference values for lbmc results: mean-field (n -> infinity) limits and exact formulas.

Every function states where its formula comes from and what kind of reference it is:

* **exact** for every n: random routing (each server is an independent M/M/1 or
  M/M/1/B queue, by Poisson thinning), Erlang-B for PULL with all buffers 1 in one
  pool and one router (an M/M/N/N system), the M/M/1 and M/M/1/B formulas;
* **limit** n -> infinity, proven in the cited paper: the JSQ(d) fixed point and
  ODE with mu = 1 (Vvedenskaya, Dobrushin & Karpelevich 1996; Mitzenmacher 2001),
  the single-router PULL fixed point (Stolyar 2015);
* **limit, partly derived here**: finite-buffer JSQ(d) fixed point (same ODE,
  truncated), multi-router PULL (see :func:`pull_multi_router`, whose docstring
  separates what the multi-router paper proves from what is derived here);
* **heavy-traffic limit** (fixed n, rho -> 1): balanced routing with c >= 2
  (:func:`balanced_heavy_traffic`, after Chen & Ye 2012); balanced(1) is exact
  (:func:`proportional_routing`);
* **necessary condition only**: :func:`jsq_stability`.

Notation follows docs/model.md: ``lam`` is the arrival rate per server (total ``lam * n``),
pool j holds a fraction ``beta[j]`` of the servers, each of speed ``mu[j]``, buffer
``buffer[j]`` (customers at a server, the one in service included; ``None``,
``inf`` or ``-1`` mean unlimited, as in the results file). ``x_k`` (or ``x_{k,j}``)
is the fraction of servers (of pool j) holding at least k customers, the ``tail``
metric of the results file. Functions returning several quantities return a ``dict``
whose keys are the results-file metric names (``p_wait``, ``p_block``,
``p_wait_or_block``, ``mean_sojourn``, ``mean_wait``, ``mean_queue``,
``utilization``, ``admitted_share``, ``tail``, ``messages_per_arrival``,
``withdrawals_per_arrival``, ``throughput``), so they compare directly with
:func:`lbmc_analysis.load` output.

References
----------
[VDK96] N. D. Vvedenskaya, R. L. Dobrushin, F. I. Karpelevich, "Queueing system with
    selection of the shortest of two queues: an asymptotic approach", Problems of
    Information Transmission 32(1), 1996.
[M01] M. Mitzenmacher, "The power of two choices in randomized load balancing",
    IEEE Trans. Parallel and Distributed Systems 12(10), 2001.
[S15] A. L. Stolyar, "Pull-based load distribution in large-scale heterogeneous
    service systems", Queueing Systems 80(4), 2015
    (text: /work/shared/seeds/pull-heterogeneous-paper.txt).
[S17] A. L. Stolyar, "Pull-based load distribution among heterogeneous parallel
    servers: the case of multiple routers", Queueing Systems, 2017
    (abstract: /work/shared/seeds/multi-router-pull-abstract.txt).
[L11] Y. Lu, Q. Xie, G. Kliot, A. Geller, J. R. Larus, A. Greenberg,
    "Join-Idle-Queue: a novel load balancing algorithm for dynamically scalable web
    services", Performance Evaluation 68(11), 2011.
[CY12] H. Chen, H.-Q. Ye, "Asymptotic optimality of balanced routing", Operations
    Research 60(1), 163-179, 2012 (abstract: /work/shared/seeds/balanced-routing-abstract.txt).
[K75] L. Kleinrock, Queueing Systems, Vol. 1: Theory, Wiley 1975, ch. 3 (M/M/1,
    M/M/1/K, M/M/m/m and the Erlang loss formula).
"""

from __future__ import annotations

import itertools
import math
import numbers
import re
from typing import Any, Mapping

import numpy as np
from scipy import integrate, optimize, special, stats

__all__ = [
    "jsq_tail",
    "jsq_mean_queue",
    "jsq_mean_sojourn",
    "jsq_fixed_point",
    "jsq_ode",
    "jsq_stability",
    "mm1",
    "mm1b",
    "random_routing",
    "random_routing_stable",
    "erlang_b",
    "mmnn",
    "pull_fixed_point",
    "pull_multi_router",
    "proportional_routing",
    "balanced_heavy_traffic",
    "workload_per_server",
    "pool_sizes",
    "parse_policy",
]

# ----------------------------------------------------------------------------------
# argument checking
# ----------------------------------------------------------------------------------


def _real(name, x, *, lo=None, lo_open=False, hi=None, hi_open=False, allow_inf=False):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {x!r} ({type(x).__name__})")
    v = float(x)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {x!r}")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError(f"{name} must be {'>' if lo_open else '>='} {lo}, got {x!r}")
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise ValueError(f"{name} must be {'<' if hi_open else '<='} {hi}, got {x!r}")
    return v


def _int(name, x, *, lo=None):
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got {x!r}")
    if isinstance(x, numbers.Integral):
        v = int(x)
    elif isinstance(x, numbers.Real) and float(x).is_integer():
        v = int(x)
    else:
        raise TypeError(f"{name} must be an integer, got {x!r} ({type(x).__name__})")
    if lo is not None and v < lo:
        raise ValueError(f"{name} must be >= {lo}, got {x!r}")
    return v


def _buffer_value(name, b):
    """One buffer entry: None, inf or -1 (the results file's code) mean unlimited."""
    if b is None:
        return math.inf
    if isinstance(b, (bool, np.bool_)) or not isinstance(b, numbers.Real):
        raise TypeError(f"{name} must be an integer >= 1, -1 or inf (unlimited), got {b!r}")
    v = float(b)
    if math.isinf(v) and v > 0:
        return math.inf
    if v == -1:
        return math.inf
    if not v.is_integer() or v < 1:
        raise ValueError(f"{name} must be an integer >= 1, -1 or inf (unlimited), got {b!r}")
    return v


def _pools(beta, mu, buffer=None):
    """Check and normalise pool parameters; returns float arrays (beta, mu, buffer)."""
    beta = np.atleast_1d(np.asarray(beta, dtype=float))
    mu = np.atleast_1d(np.asarray(mu, dtype=float))
    if beta.ndim != 1 or mu.ndim != 1:
        raise ValueError(f"beta and mu must be 1-D sequences (one entry per pool), got shapes {beta.shape} and {mu.shape}")
    if beta.size == 0:
        raise ValueError("at least one pool is needed (beta is empty)")
    if beta.shape != mu.shape:
        raise ValueError(f"beta and mu must have one entry per pool: got {beta.size} and {mu.size} entries")
    if not np.all(np.isfinite(beta)) or np.any(beta < 0):
        raise ValueError(f"beta must be finite and >= 0, got {beta.tolist()}")
    if abs(beta.sum() - 1.0) > 1e-6:
        raise ValueError(f"beta must sum to 1 (fractions of servers per pool), got sum {beta.sum()!r}")
    if not np.all(np.isfinite(mu)) or np.any(mu <= 0):
        raise ValueError(f"mu must be finite and > 0, got {mu.tolist()}")
    if buffer is None:
        buf = np.full(beta.shape, math.inf)
    else:
        b = np.atleast_1d(np.asarray(buffer, dtype=object))
        if b.size == 1:
            b = np.repeat(b, beta.size)
        if b.shape != beta.shape:
            raise ValueError(f"buffer must be a scalar or have one entry per pool ({beta.size}), got {b.size} entries")
        buf = np.array([_buffer_value(f"buffer[{j}]", v) for j, v in enumerate(b)], dtype=float)
    return beta, mu, buf


def _levels(K):
    return _int("K", K, lo=1)


# ----------------------------------------------------------------------------------
# JSQ(d), homogeneous servers
# ----------------------------------------------------------------------------------


def _jsq_args(lam, d, mu, *, require_stable=True):
    mu = _real("mu", mu, lo=0, lo_open=True)
    lam = _real("lam", lam, lo=0)
    d = _int("d", d, lo=1)
    if require_stable and lam >= mu:
        raise ValueError(
            f"JSQ(d) with infinite buffers has no stationary regime for lam >= mu "
            f"(got lam={lam}, mu={mu}, load {lam / mu:g} >= 1)"
        )
    return lam, d, mu


def _jsq_exponent(d, k):
    """(d^k - 1)/(d - 1) as floats (k for d = 1); overflows to inf harmlessly."""
    k = np.asarray(k, dtype=float)
    if d == 1:
        return k
    with np.errstate(over="ignore"):
        return (np.power(float(d), k) - 1.0) / (d - 1.0)


def jsq_tail(lam, d, K=10, *, mu=1.0):
    """Mean-field tail of JSQ(d): ``x_k = rho^((d^k - 1)/(d - 1))``, k = 1..K.

    ``rho = lam / mu``; for d = 1 (random routing) ``x_k = rho^k``. Homogeneous
    servers, infinite buffers, FCFS, exponential service, n -> infinity; the fixed
    point of the ODE of :func:`jsq_ode`, to which the stationary distribution
    converges [VDK96; M01]. With ``mu != 1`` time is rescaled
    by ``mu``, so ``lam`` enters only through ``rho``. Sampling with or without
    replacement give the same limit.

    Returns an array of length K (``x_1 .. x_K``). Raises ``ValueError`` unless
    ``0 <= lam < mu``.
    """
    lam, d, mu = _jsq_args(lam, d, mu)
    K = _levels(K)
    rho = lam / mu
    e = _jsq_exponent(d, np.arange(1, K + 1))
    with np.errstate(under="ignore"):
        return np.power(rho, e)


def _jsq_series(rho, d, offset):
    """sum_{i>=1} rho^((d^i - offset)/(d - 1)) for d >= 2 (double-exponential decay)."""
    total = 0.0
    i = 1
    while True:
        with np.errstate(over="ignore", under="ignore"):
            term = rho ** ((float(d) ** i - offset) / (d - 1))
        total += term
        if term <= 1e-17 * total or i > 2000:
            return total
        i += 1


def jsq_mean_queue(lam, d, *, mu=1.0):
    """Mean-field mean number of customers per server under JSQ(d): ``sum_{k>=1} x_k``.

    ``x_k = rho^((d^k - 1)/(d - 1))`` [VDK96; M01]; for d = 1 this is the M/M/1 value
    ``rho / (1 - rho)``. Equals ``lam * jsq_mean_sojourn`` (Little's law).
    """
    lam, d, mu = _jsq_args(lam, d, mu)
    rho = lam / mu
    if d == 1:
        return rho / (1.0 - rho)
    if rho == 0:
        return 0.0
    return _jsq_series(rho, d, 1.0)


def jsq_mean_sojourn(lam, d, *, mu=1.0):
    """Mean-field mean sojourn time under JSQ(d): ``(1/mu) sum_{i>=1} rho^((d^i - d)/(d - 1))``.

    [M01; VDK96]. With mu = 1, d = 2, lam = 0.9 this is
    2.61406 (Mitzenmacher 2001, table of JSQ(2) sojourn times). For d = 1 it is the M/M/1 value ``1/(mu - lam)``.
    Homogeneous servers, infinite buffers, n -> infinity.
    """
    lam, d, mu = _jsq_args(lam, d, mu)
    rho = lam / mu
    if d == 1:
        return 1.0 / (mu - lam)
    return _jsq_series(rho, d, float(d)) / mu


def _jsq_finite_buffer_tail(rho, d, B):
    """Fixed point of the JSQ(d) ODE truncated at B: x_k = rho (x_{k-1}^d - x_B^d), x_0 = 1.

    Summing the stationary ODE equations for levels k..B gives
    ``mu x_k = lam (x_{k-1}^d - x_B^d)``; s = x_B solves s = x_B(s), found by
    bisection (x_B(s) - s is decreasing in s on the feasible range).
    """
    B = int(B)

    def xs(s):
        x = np.empty(B)
        prev = 1.0
        for k in range(B):
            prev = rho * (prev**d - s**d)
            if prev < 0:
                return None
            x[k] = prev
        return x

    def g(s):
        x = xs(s)
        return -1.0 if x is None else x[-1] - s

    if rho == 0:
        return np.zeros(B)
    s = optimize.brentq(g, 0.0, 1.0, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    x = xs(s)
    if x is None:  # numerically at the edge: step back
        x = xs(s * (1 - 1e-15))
    return x


def jsq_fixed_point(lam, d, *, mu=1.0, buffer=None, K=10):
    """Mean-field stationary regime of JSQ(d) with homogeneous servers; all metrics.

    Infinite buffers (``buffer=None``): ``x_k = rho^((d^k-1)/(d-1))`` [VDK96; M01];
    requires ``lam < mu``.

    Finite buffer B (derived here from the same ODE as in :func:`jsq_ode`, the
    arrivals that would create level B + 1 being blocked): the stationary equations
    summed over levels k..B give ``x_k = rho (x_{k-1}^d - x_B^d)`` with ``x_0 = 1``;
    ``x_B`` is the root of a scalar equation. Any ``lam >= 0`` is allowed. For d = 1
    this reproduces M/M/1/B exactly (checked in the tests).

    Returned metrics (per arrival / per server, n -> infinity):
    ``p_block = x_B^d`` (all d samples full), ``p_wait = x_1^d - x_B^d`` (all samples
    busy, not all full), ``throughput = lam (1 - p_block) = mu x_1``,
    ``mean_queue = sum_k x_k``, ``mean_sojourn = mean_queue / throughput`` (Little),
    ``mean_wait = mean_sojourn - 1/mu``, ``utilization = x_1``, ``tail`` (K levels,
    zero above B), ``messages_per_arrival = 2d``. Per-pool entries are arrays of
    length 1 (one pool).
    """
    B = _buffer_value("buffer", buffer)
    lam, d, mu = _jsq_args(lam, d, mu, require_stable=math.isinf(B))
    K = _levels(K)
    rho = lam / mu
    if math.isinf(B):
        tail = jsq_tail(lam, d, K, mu=mu)
        mean_queue = jsq_mean_queue(lam, d, mu=mu)
        p_block = 0.0
        x1 = rho
        p_wait = rho**d
    else:
        x = _jsq_finite_buffer_tail(rho, d, B)
        tail = np.zeros(K)
        m = min(K, len(x))
        tail[:m] = x[:m]
        mean_queue = float(x.sum())
        p_block = float(x[-1] ** d)
        x1 = float(x[0])
        p_wait = float(x1**d - p_block)
    throughput = lam * (1.0 - p_block)
    mean_sojourn = mean_queue / throughput if throughput > 0 else 1.0 / mu
    return {
        "p_wait": p_wait,
        "p_block": p_block,
        "p_wait_or_block": p_wait + p_block,
        "mean_sojourn": mean_sojourn,
        "mean_wait": mean_sojourn - 1.0 / mu,
        "mean_queue": np.array([mean_queue]),
        "utilization": np.array([x1]),
        "admitted_share": np.array([1.0]),
        "tail": tail[None, :],
        "messages_per_arrival": 2.0 * d,
        "withdrawals_per_arrival": 0.0,
        "throughput": throughput,
    }


def jsq_ode(lam, d, t, *, x0=None, K=None, mu=1.0, buffer=None, method="LSODA", rtol=1e-8, atol=1e-12):
    """Transient mean-field of JSQ(d): solve ``dx_k/dt = lam (x_{k-1}^d - x_k^d) - mu (x_k - x_{k+1})``.

    ``x_0 = 1``, k = 1..K, ``x_{K+1} = 0`` (the supermarket-model ODE of [VDK96] and
    [M01], there with mu = 1). Homogeneous servers. The trajectory ``x^n(t)`` of the n-server system
    converges to this solution on finite time intervals when ``x^n(0) -> x0``.

    Parameters
    ----------
    lam, d, mu : arrival rate per server, number of samples, service rate.
    t : increasing sequence of times >= 0 at which to report the solution (the
        integration starts at 0; a scalar T means ``linspace(0, T, 201)``).
    x0 : initial tail ``(x_1(0), x_2(0), ...)``, non-increasing in [0, 1]; ``None``
        (default) is the empty system. Padded with zeros to K.
    K : truncation level. With a finite ``buffer`` B, K = B and the truncation is
        exact (arrivals that would create level B + 1 are blocked). With infinite
        buffers and ``lam < mu`` the default is the smallest K whose stationary
        ``x_K`` is below 1e-13 (at least ``len(x0)`` and 10); with ``lam >= mu`` it
        must be given (the solution then grows without bound until it hits K).
    method, rtol, atol : passed to ``scipy.integrate.solve_ivp``.

    Returns
    -------
    xarray.DataArray with dims ``("t", "k")``, coordinates ``t`` and ``k = 1..K``:
    ``x_k(t)``.
    """
    import xarray as xr

    lam, d, mu = _jsq_args(lam, d, mu, require_stable=False)
    B = _buffer_value("buffer", buffer)
    t = np.asarray(t, dtype=float)
    if t.ndim == 0:
        t = np.linspace(0.0, float(t), 201)
    if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)) or t[0] < 0 or np.any(np.diff(t) <= 0):
        raise ValueError("t must be a non-empty, strictly increasing sequence of finite times >= 0")
    x0a = np.zeros(0) if x0 is None else np.asarray(x0, dtype=float).ravel()
    if x0a.size and (np.any(x0a < 0) or np.any(x0a > 1) or np.any(np.diff(x0a) > 1e-12)):
        raise ValueError("x0 must be a non-increasing sequence of fractions in [0, 1] (x_1, x_2, ...)")
    if not math.isinf(B):
        if K is not None and _int("K", K, lo=1) != int(B):
            raise ValueError(f"with a finite buffer the truncation K is the buffer ({int(B)}); got K={K}")
        K = int(B)
    elif K is None:
        rho = lam / mu
        if rho >= 1:
            raise ValueError(f"with lam >= mu (got lam={lam}, mu={mu}) and infinite buffers, give the truncation level K")
        K = 10
        if rho > 0:
            e_needed = math.log(1e-13) / math.log(rho)  # exponent with rho^e < 1e-13
            kk = 1
            while float(_jsq_exponent(d, kk)) < e_needed:
                kk += 1
            K = max(K, kk)
        K = max(K, x0a.size)
    else:
        K = _int("K", K, lo=1)
    if x0a.size > K:
        raise ValueError(f"x0 has {x0a.size} levels, more than the truncation K={K}")
    y0 = np.zeros(K)
    y0[: x0a.size] = x0a

    def rhs(_t, x):
        xp = np.empty(K + 2)
        xp[0] = 1.0
        xp[1 : K + 1] = np.clip(x, 0.0, 1.0)
        xp[K + 1] = 0.0
        xd = xp**d
        return lam * (xd[:-2] - xd[1:-1]) - mu * (xp[1:-1] - xp[2:])

    sol = integrate.solve_ivp(rhs, (0.0, float(t[-1])), y0, t_eval=t, method=method, rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"the JSQ(d) ODE solver failed: {sol.message}")
    return xr.DataArray(
        sol.y.T,
        dims=("t", "k"),
        coords={"t": sol.t, "k": np.arange(1, K + 1)},
        name="tail",
        attrs={
            "description": f"mean-field x_k(t) of JSQ({d}), lam={lam}, mu={mu}",
            "source": "Vvedenskaya, Dobrushin & Karpelevich 1996; Mitzenmacher 2001",
            "units": "1",
        },
    )


# ----------------------------------------------------------------------------------
# JSQ(d) stability with heterogeneous pools (necessary condition)
# ----------------------------------------------------------------------------------


def pool_sizes(n, beta):
    """Servers per pool ``N_j``: largest-remainder rounding of ``beta_j n`` (docs/model.md, "System").

    The ``N_j`` sum to n. Ties between equal remainders go to the lower pool index
    (an assumption: the results file records the simulator's choice in
    ``/points/pool_servers``, which should be preferred when available).
    """
    n = _int("n", n, lo=1)
    beta = np.atleast_1d(np.asarray(beta, dtype=float))
    if abs(beta.sum() - 1) > 1e-6 or np.any(beta < 0):
        raise ValueError(f"beta must be >= 0 and sum to 1, got {beta.tolist()}")
    exact = beta * n
    base = np.floor(exact + 1e-9).astype(np.int64)
    rest = n - int(base.sum())
    order = sorted(range(beta.size), key=lambda j: (-(exact[j] - base[j]), j))
    for j in order[:rest]:
        base[j] += 1
    return base


def jsq_stability(lam, beta, mu, d, *, buffer=None, n=None, pool_servers=None, sampling="distinct"):
    """Necessary stability condition of JSQ(d) with heterogeneous pools.

    Argument (Stolyar 2015 [S15], introduction, the two-pool example): for a set S
    of pools with infinite buffers, an arrival whose d samples all fall in S must
    join a server of S. So S receives customers at rate at least
    ``lam * n * P(all d samples in S)`` while it can serve at most
    ``n * sum_{j in S} beta_j mu_j``. If for some S

        ``lam * P(all d samples in S) >= sum_{j in S} beta_j mu_j``

    the pools of S cannot all be stable (their total queue grows without bound; at
    equality the lower bound is strict, since mixed samples also choose S with
    positive probability). For n -> infinity (``n=None``),
    ``P(all in S) = (sum_{j in S} beta_j)^d`` for both sampling schemes. For a finite
    n, ``P = (N_S/n)^d`` with replacement and ``C(N_S, d)/C(n, d)`` for distinct
    samples, with pool sizes ``N_j`` from ``pool_servers`` or :func:`pool_sizes`.
    S = all pools gives the usual ``rho < 1``. Pools with finite buffers are left
    out of S (they block instead of growing).

    All subsets of the infinite-buffer pools are checked when there are at most 16
    of them, otherwise the nested sets of the slowest pools (sorted by mu).

    Returns ``(stable, details)``: ``stable`` is False when some set is provably
    overloaded (the system is unstable), True when the necessary condition holds
    (NOT a proof of stability: no sufficient condition is implemented).
    ``details`` has ``rho``, ``conclusive`` (True only when ``stable`` is False),
    ``sets`` (one dict per set: ``pools`` (1-based), ``beta``,
    ``p_all_samples``, ``min_arrival_rate`` and ``capacity`` per server of the
    system, ``margin = capacity - min_arrival_rate``), ``worst`` (the set of smallest
    margin) and ``overloaded`` (the sets with margin <= 0).

    Example: beta = (1/2, 1/2), mu = (2, 1/3), lam = 1, d = 2: pool 2 receives at
    least 1 * (1/2)^2 = 1/4 > (1/2)(1/3) = 1/6, so JSQ(2) is unstable although
    rho = 6/7 < 1 [S15].
    """
    lam = _real("lam", lam, lo=0)
    d = _int("d", d, lo=1)
    beta, mu, buf = _pools(beta, mu, buffer)
    if sampling not in ("distinct", "with_replacement"):
        raise ValueError(f"sampling must be 'distinct' or 'with_replacement', got {sampling!r}")
    J = beta.size
    if pool_servers is not None:
        Ns = np.asarray(pool_servers, dtype=np.int64).ravel()
        if Ns.size != J or np.any(Ns < 0):
            raise ValueError(f"pool_servers must give one count >= 0 per pool ({J}), got {list(Ns)}")
        if n is not None and int(Ns.sum()) != _int("n", n, lo=1):
            raise ValueError(f"pool_servers sum to {int(Ns.sum())}, not n={n}")
        n = int(Ns.sum())
    elif n is not None:
        n = _int("n", n, lo=1)
        Ns = pool_sizes(n, beta)
    else:
        Ns = None
    if n is not None and sampling == "distinct" and d > n:
        raise ValueError(f"cannot sample d={d} distinct servers out of n={n}")

    capacity_total = float(np.sum(beta * mu)) if Ns is None else float(np.sum(Ns * mu) / n)
    rho = lam / capacity_total
    inf_pools = [j for j in range(J) if math.isinf(buf[j])]
    if len(inf_pools) <= 16:
        candidates = [c for r in range(1, len(inf_pools) + 1) for c in itertools.combinations(inf_pools, r)]
    else:
        by_speed = sorted(inf_pools, key=lambda j: (mu[j], j))
        candidates = [tuple(sorted(by_speed[:r])) for r in range(1, len(by_speed) + 1)]

    sets = []
    for S in candidates:
        S = list(S)
        if Ns is None:
            share = float(beta[S].sum())
            p = share**d
            cap = float(np.sum(beta[S] * mu[S]))
        else:
            NS = int(Ns[S].sum())
            share = NS / n
            if sampling == "with_replacement":
                p = share**d
            else:
                p = float(special.comb(NS, d, exact=True) / special.comb(n, d, exact=True))
            cap = float(np.sum(Ns[S] * mu[S]) / n)
        arr = lam * p
        sets.append(
            {
                "pools": tuple(j + 1 for j in S),
                "beta": share,
                "p_all_samples": p,
                "min_arrival_rate": arr,
                "capacity": cap,
                "margin": cap - arr,
            }
        )
    overloaded = [s for s in sets if s["margin"] <= 0 and (s["min_arrival_rate"] > 0)]
    worst = min(sets, key=lambda s: s["margin"]) if sets else None
    stable = not overloaded
    details = {
        "rho": rho,
        "n": n,
        "d": d,
        "sampling": sampling if n is not None else "limit n->inf",
        "sets": sets,
        "worst": worst,
        "overloaded": overloaded,
        "conclusive": not stable,
        "note": "necessary condition only: True means no set of pools is provably overloaded",
    }
    return stable, details


# ----------------------------------------------------------------------------------
# Exact single-queue formulas and random routing
# ----------------------------------------------------------------------------------


def mm1(lam, mu, K=10):
    """M/M/1 (FCFS) stationary metrics [K75, ch. 3].

    ``rho = lam/mu < 1``; ``P(Q >= k) = rho^k``; mean queue ``rho/(1-rho)``; mean
    sojourn ``1/(mu - lam)``; mean wait ``rho/(mu - lam)``; ``p_wait = rho`` (PASTA).
    Returns a dict with scalars and ``tail`` (k = 1..K).
    """
    lam = _real("lam", lam, lo=0)
    mu = _real("mu", mu, lo=0, lo_open=True)
    K = _levels(K)
    if lam >= mu:
        raise ValueError(f"M/M/1 needs lam < mu, got lam={lam}, mu={mu}")
    rho = lam / mu
    return {
        "rho": rho,
        "p_wait": rho,
        "p_block": 0.0,
        "utilization": rho,
        "mean_queue": rho / (1 - rho),
        "mean_sojourn": 1 / (mu - lam),
        "mean_wait": rho / (mu - lam),
        "throughput": lam,
        "tail": rho ** np.arange(1, K + 1, dtype=float),
    }


def mm1b(lam, mu, B, K=None):
    """M/M/1/B (at most B customers, the one in service included; FCFS) [K75, ch. 3].

    ``pi_i = rho^i (1 - rho)/(1 - rho^(B+1))``, i = 0..B (uniform when rho = 1); any
    ``lam >= 0``. ``p_block = pi_B`` (PASTA), ``p_wait = 1 - pi_0 - pi_B`` (admitted
    and found the server busy, per arrival), ``utilization = 1 - pi_0``,
    ``throughput = lam (1 - pi_B)``, mean sojourn of admitted customers
    ``mean_queue / throughput`` (Little), mean wait ``mean_sojourn - 1/mu``.
    ``tail`` has K levels (default B; zero above B); ``pi`` is the distribution.
    """
    lam = _real("lam", lam, lo=0)
    mu = _real("mu", mu, lo=0, lo_open=True)
    B = _int("B", B, lo=1)
    K = B if K is None else _levels(K)
    rho = lam / mu
    i = np.arange(B + 1, dtype=float)
    if rho <= 1:
        w = rho**i
    else:  # scale by rho^-B to avoid overflow
        w = (1.0 / rho) ** (B - i)
    pi = w / w.sum()
    tail_full = np.cumsum(pi[::-1])[::-1][1:]  # P(Q >= k), k = 1..B
    tail = np.zeros(K)
    m = min(K, B)
    tail[:m] = tail_full[:m]
    L = float(np.dot(i, pi))
    thr = lam * (1 - pi[B])
    soj = L / thr if thr > 0 else 1.0 / mu
    return {
        "rho": rho,
        "pi": pi,
        "p_wait": float(1 - pi[0] - pi[B]),
        "p_block": float(pi[B]),
        "utilization": float(1 - pi[0]),
        "mean_queue": L,
        "mean_sojourn": soj,
        "mean_wait": soj - 1 / mu,
        "throughput": thr,
        "tail": tail,
    }


def random_routing_stable(lam, mu, buffer=None):
    """Stability of random routing: ``lam < mu_j`` for every pool j with infinite buffer.

    Each server receives a Poisson stream of rate lam whatever its pool (uniform
    routing thins the total Poisson stream ``lam n`` into n streams of rate lam), so
    each is an M/M/1 queue; finite-buffer pools are always stable [K75].
    """
    lam = _real("lam", lam, lo=0)
    mu = np.atleast_1d(np.asarray(mu, dtype=float))
    _, mu, buf = _pools(np.full(mu.size, 1.0 / mu.size), mu, buffer)
    return bool(np.all((lam < mu) | np.isfinite(buf)))


def random_routing(lam, beta, mu, buffer=None, K=10):
    """Random (uniform) routing: exact for EVERY n, not only in the limit.

    Poisson thinning: every server receives arrivals at rate lam independently of
    the others, so a server of pool j is an M/M/1 (``buffer[j]`` infinite) or
    M/M/1/B_j queue with arrival rate lam and service rate mu_j (:func:`mm1`,
    :func:`mm1b`, [K75]). Arrivals are spread over pools in proportion to beta (PASTA
    applies per server), hence the system metrics:

    * ``p_block = sum_j beta_j pi_{B_j,j}``, ``p_wait = sum_j beta_j p_wait_j``;
    * ``admitted_share_j = beta_j (1 - p_block_j) / (1 - p_block)``;
    * ``throughput = lam (1 - p_block)`` (per server of the system);
    * ``mean_sojourn = sum_j admitted_share_j W_j``, same for ``mean_wait``.

    Per-pool arrays (length J): ``utilization``, ``mean_queue``, ``admitted_share``,
    ``pool_p_block``, ``pool_mean_sojourn``, ``pool_mean_wait``; ``tail`` (J x K).
    ``stable`` is ``lam < mu_j`` for every infinite-buffer pool; an unstable pool has
    NaN entries (no stationary regime) and so do the system aggregates, as in an
    lbmc results file.
    """
    lam = _real("lam", lam, lo=0)
    beta, mu, buf = _pools(beta, mu, buffer)
    K = _levels(K)
    J = beta.size
    util = np.full(J, np.nan)
    queue = np.full(J, np.nan)
    pblock = np.full(J, np.nan)
    pwait = np.full(J, np.nan)
    soj = np.full(J, np.nan)
    wait = np.full(J, np.nan)
    tail = np.full((J, K), np.nan)
    for j in range(J):
        if math.isinf(buf[j]):
            if lam >= mu[j]:
                continue
            r = mm1(lam, mu[j], K)
        else:
            r = mm1b(lam, mu[j], int(buf[j]), K)
        util[j], queue[j], pblock[j] = r["utilization"], r["mean_queue"], r["p_block"]
        pwait[j], soj[j], wait[j] = r["p_wait"], r["mean_sojourn"], r["mean_wait"]
        tail[j] = r["tail"]
    stable = bool(np.all(np.isfinite(util)))
    p_block = float(np.sum(beta * pblock))
    p_wait = float(np.sum(beta * pwait))
    admitted = beta * (1 - pblock)
    share = admitted / admitted.sum() if stable and admitted.sum() > 0 else np.full(J, np.nan)
    mean_sojourn = float(np.nansum(share * soj)) if stable else math.nan
    mean_wait = float(np.nansum(share * wait)) if stable else math.nan
    return {
        "stable": stable,
        "p_wait": p_wait,
        "p_block": p_block,
        "p_wait_or_block": p_wait + p_block,
        "mean_sojourn": mean_sojourn,
        "mean_wait": mean_wait,
        "mean_queue": queue,
        "utilization": util,
        "admitted_share": share,
        "tail": tail,
        "messages_per_arrival": 0.0,
        "withdrawals_per_arrival": 0.0,
        "throughput": lam * (1 - p_block) if stable else math.nan,
        "pool_p_block": pblock,
        "pool_mean_sojourn": soj,
        "pool_mean_wait": wait,
    }


# ----------------------------------------------------------------------------------
# Erlang-B
# ----------------------------------------------------------------------------------


def erlang_b(servers, load):
    """Erlang-B blocking probability of M/M/N/N with offered load A (Erlang's loss formula).

    ``B(N, A) = (A^N / N!) / sum_{i=0}^N A^i / i!`` [K75, ch. 3], computed by the
    stable recursion ``B(0) = 1``, ``B(i) = A B(i-1) / (i + A B(i-1))`` for
    N <= 100000, and as ``Poisson pmf(N; A) / cdf(N; A)`` in log space above. Known
    value: B(10, 5) = 0.018384.

    In lbmc, ``pull`` with one router, one pool and all buffers 1 is exactly this
    system with N = n and A = lam n / mu (an arrival is lost iff every server is
    busy); see :func:`mmnn`.
    """
    N = _int("servers", servers, lo=0)
    A = _real("load", load, lo=0)
    if A == 0:
        return 1.0 if N == 0 else 0.0
    if N <= 100_000:
        b = 1.0
        for i in range(1, N + 1):
            b = A * b / (i + A * b)
        return b
    return float(np.exp(stats.poisson.logpmf(N, A) - stats.poisson.logcdf(N, A)))


def mmnn(n, lam, mu):
    """M/M/N/N loss system with N = n servers, arrival rate ``lam n``, service rate mu.

    The lbmc model ``pull``, one router, one pool, buffer 1 (also ``jsq`` with full
    information and buffer 1) [K75, ch. 3]: ``p_block = erlang_b(n, lam n / mu)``,
    ``p_wait = 0``, ``utilization = mean_queue = lam (1 - p_block) / mu``,
    ``mean_sojourn = 1/mu``, ``throughput = lam (1 - p_block)`` per server; for
    pull, ``messages_per_arrival = 1 - p_block`` (one message per departure).
    """
    n = _int("n", n, lo=1)
    lam = _real("lam", lam, lo=0)
    mu = _real("mu", mu, lo=0, lo_open=True)
    pb = erlang_b(n, lam * n / mu)
    util = lam * (1 - pb) / mu
    return {
        "p_wait": 0.0,
        "p_block": pb,
        "p_wait_or_block": pb,
        "mean_sojourn": 1 / mu,
        "mean_wait": 0.0,
        "mean_queue": np.array([util]),
        "utilization": np.array([util]),
        "admitted_share": np.array([1.0]),
        "tail": np.array([[util]]),
        "messages_per_arrival": 1 - pb,
        "withdrawals_per_arrival": 0.0,
        "throughput": lam * (1 - pb),
    }


# ----------------------------------------------------------------------------------
# PULL
# ----------------------------------------------------------------------------------


def pull_fixed_point(lam, beta, mu, buffer=None, K=10):
    """Single-router PULL, n -> infinity, sub-critical load: the fixed point x* of [S15].

    When idle servers exist, PULL sends every arrival to an idle server chosen
    uniformly among all idle servers, so at the fixed point the flow into the idle
    servers of pool j, ``lam (beta_j - x_j) / Y`` with ``Y = sum_i (beta_i - x_i)``,
    balances their departures ``mu_j x_j`` (``x_j`` = fraction of ALL servers that
    are busy servers of pool j; no server holds 2 customers in the limit). With
    ``a = lam / Y`` this gives the busy fraction inside pool j

        ``x_j / beta_j = a / (a + mu_j)``,  ``a > 0`` solving
        ``sum_j beta_j mu_j a / (a + mu_j) = lam``

    (the left side increases from 0 to ``sum_j beta_j mu_j``, so the root exists and
    is unique iff ``rho < 1``; found with ``scipy.optimize.brentq``). [S15, Theorem 2]
    proves that the stationary distribution of the fluid-scaled state converges to
    x*, hence ``p_wait_or_block -> 0``, for all buffer sizes ``B_j >= 1``; its
    fluid-sample-path analysis shows that x* is the limit of the fluid path started
    from the idle state.

    Returned limits: ``utilization_j = a/(a + mu_j)``, ``mean_queue_j`` = the same,
    ``tail`` (J x K, only k = 1 nonzero), ``admitted_share_j = beta_j mu_j
    utilization_j / lam``, ``p_wait = p_block = 0``, ``mean_wait = 0``,
    ``mean_sojourn = sum_j admitted_share_j / mu_j``, ``messages_per_arrival = 1``
    (one pull-message per service completion, all arrivals admitted),
    ``throughput = lam``; also ``a`` and ``idle_fraction`` Y = lam / a.

    Example [S15]: beta = (1/2, 1/2), mu = (2, 1/3), lam = 1: a = 5 + sqrt(29),
    utilization = (0.83852, 0.96890), shares (0.83852, 0.16148).

    Raises ``ValueError`` unless ``0 < lam`` and ``rho = lam / sum_j beta_j mu_j < 1``.
    """
    lam = _real("lam", lam, lo=0, lo_open=True)
    beta, mu, buf = _pools(beta, mu, buffer)
    K = _levels(K)
    cap = float(np.sum(beta * mu))
    rho = lam / cap
    if rho >= 1:
        raise ValueError(
            f"the PULL fixed point needs rho < 1; got rho = lam / sum(beta mu) = {lam}/{cap:g} = {rho:g}"
        )
    pos = beta > 0

    def f(a):
        return float(np.sum(beta[pos] * mu[pos] * a / (a + mu[pos]))) - lam

    hi = 1.0
    while f(hi) <= 0:
        hi *= 2.0
        if hi > 1e300:  # pragma: no cover - cannot happen when rho < 1
            raise RuntimeError("no root for the PULL fixed point")
    a = optimize.brentq(f, 0.0, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
    util = a / (a + mu)
    share = beta * mu * util / lam
    tail = np.zeros((beta.size, K))
    tail[:, 0] = util
    return {
        "a": a,
        "rho": rho,
        "idle_fraction": lam / a,
        "p_wait": 0.0,
        "p_block": 0.0,
        "p_wait_or_block": 0.0,
        "mean_sojourn": float(np.sum(share / mu)),
        "mean_wait": 0.0,
        "mean_queue": util.copy(),
        "utilization": util,
        "admitted_share": share,
        "tail": tail,
        "messages_per_arrival": 1.0,
        "withdrawals_per_arrival": 0.0,
        "throughput": lam,
    }


def pull_multi_router(lam, beta, mu, routers, stale="withdraw", buffer=None, K=10):
    """Multi-router PULL (R routers, fixed R, n -> infinity): limits, with their status.

    Returns the single-router fixed point of :func:`pull_fixed_point` (same keys)
    plus ``proven`` (dict: which returned limits are theorems), ``basis`` (text) and
    ``routers``/``stale``.

    **Proven** [S17] (abstract: /work/shared/seeds/multi-router-pull-abstract.txt):
    Markov model (Poisson arrivals split equally among a fixed number R of routers,
    exponential service), heterogeneous pools with finite or infinite buffers,
    sub-critical load ``rho < 1``: the steady-state probability that an arrival is
    blocked or waits vanishes (``p_wait_or_block -> 0``), and the router-server
    message rate is one message per customer. The abstract does not say how a
    router's message to a server that was meanwhile assigned at random by another
    router is handled; lbmc's ``stale: withdraw`` (docs/model.md, "Policies") is the variant in which every
    router message points to an idle server, which is the natural reading.

    **Derived here, with ``stale: withdraw``** (rigorous given the theorem above):

    1. Invariant: every idle server holds exactly one message, at one router; a busy
       server holds none. By induction over events: a server that becomes idle was
       busy (no message) and sends one; an arrival routed by a message makes that
       idle server busy and destroys its only message; an arrival routed at random
       to an idle server makes it busy and its message is withdrawn; other events
       change neither. (This needs the initial state to respect it: an idle server
       at time 0 must hold one message, e.g. at a uniformly chosen router.) So the
       total number of messages is the number of idle servers.
    2. Random assignments happen only at a router with no message. A random
       assignment hits a busy server (so the customer waits or is blocked) with
       probability ``1 - Y`` (Y = idle fraction, which tends to ``lam/a < 1``), so
       ``P(router empty at an arrival) <= p_wait_or_block / (1 - Y) -> 0``, and
       withdrawals (one per random assignment to an idle server) satisfy
       ``withdrawals_per_arrival -> 0``; pull-messages are sent at departures that
       leave the server idle, i.e. at every departure but those that start a waiting
       customer, so ``messages_per_arrival -> 1``.

    **Derived here, NOT proven** (heuristic): the per-pool limits (utilization,
    admitted share, mean sojourn) equal the single-router x*. Argument: if the
    message stock of every router is of order n (which the vanishing of
    ``P(router empty)`` suggests), each router receives pull-messages of pool j at
    rate ``mu_j x_j / R`` and uses them at rate ``(lam/R) c_{r,j}``, where ``c_{r,j}``
    is the share of pool j among router r's messages; the fixed point is
    ``c_{r,j} = mu_j x_j / lam`` at every router, so the idle servers of pool j number
    ``beta_j - x_j = c_j Y`` and ``x_j = beta_j a/(a + mu_j)`` with ``a = lam / Y``:
    exactly the single-router equations, whatever the split of Y among routers
    (the split has zero drift in the fluid scale: each non-empty router receives and
    uses messages at the same rate ``lam/R``). From a symmetric initial condition
    (e.g. the empty system, messages placed at uniform routers) the R routers carry
    identical fluid states and the aggregate fluid equations are those of the
    single-router fluid paths of [S15] (section on fluid sample paths); so, for fixed R, the fluid limit
    equals that of single-router PULL on finite time intervals. The split of the
    message stock among routers is neutral at fluid scale and fluctuates
    diffusively, so at finite n a router can run empty: expect larger
    ``p_wait_or_block`` and ``withdrawals_per_arrival > 0`` than with R = 1, both
    vanishing as n grows; their rate of decay in n (and its dependence on R) is not
    derived here and is a question for simulation.

    **``stale: keep`` (JIQ, [L11])**: the invariant fails (a server can have
    several messages out, a message can point to a busy server), so a customer
    routed by a message may wait. Stale messages are created only by random
    assignments to idle servers, which happen only at empty routers; it is a
    CONJECTURE (not proven here, not covered by the [S17] abstract) that the same
    limits hold for fixed R. [L11] analyses JIQ in a different regime (n and R
    both large with n/R fixed), where waiting does not vanish. ``proven`` is all
    False for ``keep`` with R > 1. With R = 1 both variants are single-router PULL.
    """
    R = _int("routers", routers, lo=1)
    if stale == "jiq":
        stale = "keep"
    if stale not in ("withdraw", "keep"):
        raise ValueError(f"stale must be 'withdraw' or 'keep' (or 'jiq'), got {stale!r}")
    out = pull_fixed_point(lam, beta, mu, buffer=buffer, K=K)
    if R == 1:
        proven = dict.fromkeys(
            ("p_wait_or_block", "messages_per_arrival", "withdrawals_per_arrival", "fixed_point"), True
        )
        basis = "single router: Stolyar 2015 (stale handling irrelevant with R = 1)"
    elif stale == "withdraw":
        proven = {
            "p_wait_or_block": True,
            "messages_per_arrival": True,
            "withdrawals_per_arrival": True,
            "fixed_point": False,
        }
        basis = (
            "Stolyar 2017 (multiple routers): p_wait_or_block -> 0 and one message per "
            "customer; withdrawals -> 0 derived from it; per-pool fixed point = single-router "
            "x* derived heuristically (see docstring)"
        )
    else:
        proven = dict.fromkeys(
            ("p_wait_or_block", "messages_per_arrival", "withdrawals_per_arrival", "fixed_point"), False
        )
        basis = "stale: keep (JIQ) with R > 1: all limits conjectured by analogy, not proven"
    out.update({"routers": R, "stale": stale, "proven": proven, "basis": basis})
    return out


# ----------------------------------------------------------------------------------
# Balanced routing (Chen & Ye 2012)
# ----------------------------------------------------------------------------------


def workload_per_server(mean_queue, beta, mu):
    """Workload per server from per-pool mean queues: ``W = sum_j beta_j mean_queue_j / mu_j``.

    The definition used with balanced routing: the unfinished work in the system,
    in model time, per server, i.e. the time the servers would need to clear what
    they hold if no one else arrived, summed over the servers and divided by n. A
    server of pool j works at speed ``mu_j`` and service requirements are Exp(1),
    so each customer at it (the one in service too, by memorylessness) needs
    ``1/mu_j`` time on average, hence ``W = (1/n) sum_j N_j mean_queue_j / mu_j``
    with ``N_j / n = beta_j`` (pass the realised ``pool_servers / n`` as ``beta``
    for a finite n). Broadcasts over leading axes: ``mean_queue`` (..., J).
    """
    q = np.asarray(mean_queue, dtype=float)
    beta = np.asarray(beta, dtype=float)
    mu = np.asarray(mu, dtype=float)
    return np.sum(beta * q / mu, axis=-1)


def proportional_routing(lam, beta, mu, K=10):
    """Rate-proportional random routing (= ``balanced(1)``): exact for every n.

    ``balanced(1)`` samples one server with probability ``mu_i / sum_k mu_k`` and
    sends the customer there. By Poisson thinning a server of pool j receives a
    Poisson stream of rate ``lam n mu_j / (n sum_k beta_k mu_k) = rho mu_j`` and is
    an independent M/M/1 queue of load ``rho`` [K75], whatever its speed: every
    server has ``mean_queue = rho/(1 - rho)``, ``utilization = rho``, mean sojourn
    ``1/(mu_j (1 - rho))``; ``admitted_share_j = beta_j mu_j / sum_k beta_k mu_k``;
    the system's mean sojourn is ``sum_j share_j / (mu_j (1 - rho))``; ``p_wait = rho``.
    Workload per server (:func:`workload_per_server`):
    ``W = rho/(1 - rho) sum_j beta_j / mu_j``. Unlimited buffers; needs ``rho < 1``.
    Returns the metric dict (results-file names) plus ``rho`` and ``workload``.
    """
    lam = _real("lam", lam, lo=0)
    beta, mu, _ = _pools(beta, mu, None)
    K = _levels(K)
    rho = lam / float(np.sum(beta * mu))
    if rho >= 1:
        raise ValueError(f"proportional routing needs rho < 1; got rho = {rho:g}")
    J = beta.size
    q = rho / (1 - rho)
    share = beta * mu / float(np.sum(beta * mu))
    soj = float(np.sum(share / (mu * (1 - rho))))
    return {
        "rho": rho,
        "p_wait": rho,
        "p_block": 0.0,
        "p_wait_or_block": rho,
        "mean_sojourn": soj,
        "mean_wait": soj - float(np.sum(share / mu)),
        "mean_queue": np.full(J, q),
        "utilization": np.full(J, rho),
        "admitted_share": share,
        "tail": np.tile(rho ** np.arange(1, K + 1, dtype=float), (J, 1)),
        "messages_per_arrival": 2.0,
        "withdrawals_per_arrival": 0.0,
        "throughput": lam,
        "workload": q * float(np.sum(beta / mu)),
    }


def balanced_heavy_traffic(lam, beta, mu, c, n, K=10):
    """Balanced routing ``balanced(c)`` with n servers as ``rho -> 1`` (fixed n): workload.

    **c = 1** is exact for every rho (:func:`proportional_routing`):
    ``W = rho/(1 - rho) sum_j beta_j / mu_j`` (per server), so
    ``(1 - rho) W -> sum_j beta_j / mu_j``.

    **c >= 2**: heavy-traffic limit, after [CY12]. Chen & Ye show that the diffusion
    limits of the queue lengths and workloads are the same for every c >= 2 and
    that this limit minimises the workload; its form is derived here from their
    statement (not copied from the paper, whose full text we do not have):
    state-space collapse to equal queue lengths (a server with a strictly longer
    queue than the others gets no arrivals in the fluid scale once c >= 2, while
    the set of shortest queues receives at least its capacity share, because the
    first draw is proportional to mu) and complete resource pooling, so the total
    number of customers behaves like a single queue served at the total rate
    ``n sum_j beta_j mu_j``: ``E[customers] ~ rho/(1 - rho)`` (M/M/1 of load rho,
    the correct first order as rho -> 1). Hence each server holds about
    ``rho/((1 - rho) n)`` customers and

        ``W ~ rho/(1 - rho) (1/n) sum_j beta_j / mu_j``,
        ``(1 - rho) W -> (1/n) sum_j beta_j / mu_j``,

    n times less than with c = 1. Only the limit of ``(1 - rho) W`` is claimed;
    at rho < 1 the c >= 2 value is a first-order approximation (the true workload
    is larger by O(1): e.g. at least the busy servers' work).

    ``beta`` may be the realised fractions ``pool_servers / n``. Returns a dict with
    ``rho``, ``c``, ``n``, ``exact`` (True for c = 1), ``workload`` (per server),
    ``scaled_workload`` (``(1 - rho) W``), ``scaled_limit`` (its rho -> 1 limit),
    ``mean_customers`` (per server), ``basis``.
    """
    lam = _real("lam", lam, lo=0)
    beta, mu, _ = _pools(beta, mu, None)
    c = _int("c", c, lo=1)
    n = _int("n", n, lo=1)
    if c > n:
        raise ValueError(f"balanced(c) needs c <= n; got c = {c}, n = {n}")
    rho = lam / float(np.sum(beta * mu))
    if rho >= 1:
        raise ValueError(f"no stationary regime for rho >= 1; got rho = {rho:g}")
    inv = float(np.sum(beta / mu))
    if c == 1:
        limit = inv
        basis = "balanced(1) = rate-proportional random routing: independent M/M/1 queues of load rho (exact)"
        per_server_customers = rho / (1 - rho)
    else:
        limit = inv / n
        basis = ("balanced(c >= 2), heavy traffic (Chen & Ye 2012): equal queues, resource pooling; "
                 "first order in 1/(1 - rho)")
        per_server_customers = rho / ((1 - rho) * n)
    W = rho / (1 - rho) * limit
    return {
        "rho": rho,
        "c": c,
        "n": n,
        "exact": c == 1,
        "workload": W,
        "scaled_workload": (1 - rho) * W,
        "scaled_limit": limit,
        "mean_customers": per_server_customers,
        "basis": basis,
    }


# ----------------------------------------------------------------------------------
# choosing a reference for a grid point
# ----------------------------------------------------------------------------------

_POLICY_RE = re.compile(r"^\s*([a-z_]+)\s*(?:\(\s*(\d+)\s*\))?\s*$")


def parse_policy(policy):
    """Split a policy string as written in a job/results file into ``(name, param)``.

    ``"jsq(2)" -> ("jsq", 2)``, ``"jsq" -> ("jsq", None)`` (full JSQ),
    ``"pull" -> ("pull", None)``, ``"jiq" -> ("pull", None)`` (pull with stale keep,
    docs/model.md "Policies"; for text only: a results file's ``policy_name`` and
    ``stale`` columns already say so), ``"balanced(3)" -> ("balanced", 3)``.
    """
    if not isinstance(policy, str):
        raise TypeError(f"policy must be a string, got {policy!r}")
    m = _POLICY_RE.match(policy.lower())
    if not m:
        raise ValueError(f"cannot parse policy {policy!r} (expected e.g. 'jsq(2)', 'pull', 'random')")
    name, param = m.group(1), m.group(2)
    if name == "jiq":
        name = "pull"
    return name, (int(param) if param is not None else None)

