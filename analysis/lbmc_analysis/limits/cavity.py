"""JSQ(d) (and balanced(c)) as n -> infinity with phase-type service: the queue at the cavity.

Source: M. Bramson, Y. Lu, B. Prabhakar, "Randomized load balancing with general service
time distributions", SIGMETRICS 2010, and "Asymptotic independence of queues under
randomized load balancing", Queueing Systems 71, 2012 (abstract in
/work/shared/seeds/asymptotic-independence-abstract.txt); the algorithm as in
T. Hellemans' thesis (repository THellemans/Thesis-Analysis-of-Large-Scale-Randomized-
Load-Balancing-Policies, ``SQ_PH.m``); /work/shared/notes/limits.md, section 1.

Under the ansatz that any fixed set of queues becomes independent as n -> infinity, one
queue (the *queue at the cavity*) sees Poisson arrivals whose rate depends on its own
length only. With ``u_{j,k}`` the fraction of pool j's servers holding at least k
customers and ``A_k = sum_j a_j u_{j,k}`` the probability that one draw holds at least
k (``a_j`` the probability that a draw lands in pool j: ``beta_j`` for uniform sampling,
``beta_j mu_j / sum_i beta_i mu_i`` for balanced(c)), an arrival's d draws all hold at
least k with probability ``A_k^d``; the arrival joins a sampled queue of the lowest
level, uniformly among the tied ones. So a server of pool j holding k customers gets
arrivals at rate

    ``lambda_{j,k} = lambda (a_j / beta_j) (A_k^d - A_{k+1}^d) / (A_k - A_{k+1})``

(``lambda`` per server; for one pool and uniform sampling this is the formula of
limits.md). The tagged queue with FCFS phase-type service (alpha_j, mu_j T_j) is a
level-dependent quasi-birth-death process on {0} u {(k, phase)}; it is solved here by
linear level reduction (the balance equations give ``pi_k = lambda_{k-1} pi_{k-1}
(-D_k)^-1`` with ``D_k = T - lambda_k I + R_k s alpha``, ``R_k = lambda_k (-D_{k+1})^-1``,
computed from the top level down: exact up to round-off, all matrices nonnegative).
The new ``u`` from the solution is mixed half and half with the old one (damping) and
the iteration repeats until the largest change is below ``tol`` (default 1e-12); the
truncation level doubles while the top level holds more than ``tail_tol`` (1e-15) of a
pool. Sampling with and without replacement give the same limit (the d draws are
distinct with probability -> 1).

Where it holds: the ansatz is proven for exponential service (Vvedenskaya, Dobrushin &
Karpelevich 1996; Mitzenmacher 2001), for FCFS service laws with a decreasing hazard
rate (e.g. hyperexponential) and, for any law with two moments, at small enough lambda
(Bramson, Lu & Prabhakar 2012). For other laws (Erlang) it is the standard conjecture
and agrees with simulation in the thesis above. Heterogeneous pools: the same
independence argument (each arrival's d draws fall in pool j with probability a_j) gives
the equations above; no proof is known to us, and the equations can have a solution while
the finite systems are unstable (see :func:`necessary_stability`): the iteration then
does not settle (it reports ``converged = False``).
"""

from __future__ import annotations

import math

import numpy as np

from . import _check
from ._metrics import occupancy_metrics
from .service import PhaseType, parse_service

__all__ = ["cavity_jsq", "necessary_stability", "as_phase_type"]

LEVELS0 = 64
LEVELS_MAX = 1 << 16


def as_phase_type(service, name="service") -> PhaseType:
    """A mean-1 :class:`PhaseType` from a service text, :class:`ServiceLaw` or PhaseType;
    ValueError for laws that are not phase-type (deterministic, lognormal, Weibull,
    Lomax)."""
    if isinstance(service, PhaseType):
        return service.normalized()
    law = parse_service(service)
    if law.ph is None:
        raise ValueError(f"{name} = '{law.text}' is not allowed here; the cavity method needs a phase-type law "
                         "(exponential, erlang, hyperexponential, or an explicit PhaseType such as a Coxian)")
    return law.ph


def necessary_stability(lam, d, beta, mu, buffer, weights):
    """Necessary condition for a stationary regime, n -> infinity, as ``(ok, worst)``.

    A set S of unlimited-buffer pools receives every arrival whose d draws all fall in S:
    at least ``lam (sum_{j in S} a_j)^d`` per server of the system, against a capacity of
    ``sum_{j in S} beta_j mu_j`` (Stolyar 2015, introduction; the example beta = (1/2, 1/2),
    mu = (2, 1/3), lam = 1, d = 2 fails with S = {2}). S = all unlimited pools gives rho < 1
    when every buffer is unlimited. ``worst`` is the smallest margin (capacity minus that
    rate) over the sets checked (all subsets up to 12 pools, nested by speed beyond)."""
    inf_pools = [j for j in range(len(beta)) if math.isinf(buffer[j])]
    if not inf_pools:
        return True, math.inf
    if len(inf_pools) <= 12:
        import itertools

        sets = [c for r in range(1, len(inf_pools) + 1) for c in itertools.combinations(inf_pools, r)]
    else:
        order = sorted(inf_pools, key=lambda j: mu[j])
        sets = [tuple(order[:r]) for r in range(1, len(order) + 1)]
    worst = math.inf
    for S in sets:
        S = list(S)
        margin = float(np.sum(beta[S] * mu[S])) - lam * float(np.sum(weights[S])) ** d
        worst = min(worst, margin)
    return worst > 0, worst


def _selection(A, d):
    """(A_k^d - A_{k+1}^d)/(A_k - A_{k+1}) = sum_i A_k^i A_{k+1}^(d-1-i), no division."""
    a, b = A[:-1], A[1:]
    out = np.zeros_like(a)
    for i in range(d):
        out += a**i * b ** (d - 1 - i)
    return out


def _solve_tagged(rates, ph: PhaseType):
    """Stationary law of the tagged queue: levels 0..top, arrival rate rates[k] at level k
    (rates[top] = 0: blocked or truncated), FCFS phase-type service ph (already scaled).

    Returns (p0, P) with P (top, m): P[k-1] = probability of level k by phase."""
    top = rates.size - 1
    m = ph.m
    T, s, alpha = ph.T, ph.exit, ph.alpha
    eye = np.eye(m)
    N = np.empty((top + 1, m, m))  # N[k] = (-D_k)^-1, k = 1..top
    R_s = np.zeros(m)  # R_k s for the level above
    for k in range(top, 0, -1):
        D = T - rates[k] * eye + np.outer(R_s, alpha)
        N[k] = np.linalg.inv(-D)
        R_s = rates[k - 1] * (N[k] @ s)
    P = np.empty((top, m))
    v = rates[0] * (alpha @ N[1])
    P[0] = v
    scale = 1.0  # p0 in the running units (rescaled against overflow)
    for k in range(2, top + 1):
        v = rates[k - 1] * (v @ N[k])
        P[k - 1] = v
        big = v.max()
        if big > 1e250:
            P[:k] /= big
            scale /= big
            v = P[k - 1]
    total = scale + P.sum()
    return scale / total, P / total


def cavity_jsq(lam, d, *, beta=(1.0,), mu=(1.0,), service="exponential", buffer=None, weights="uniform",
               tol=1e-12, tail_tol=1e-15, damping=0.5, anderson=8, max_iter=5000, levels_max=LEVELS_MAX,
               start="exponential"):
    """Stationary regime of JSQ(d) (or balanced(d) with ``weights="mu"``) as n -> infinity.

    Parameters
    ----------
    lam : arrival rate per server (rate per unit time; the total is ``lam n``).
    d : number of servers sampled per arrival, integer >= 1.
    beta : (J,) fractions of the servers per pool, summing to 1.
    mu : (J,) speeds (requirement units per unit time); a customer takes ``S / mu_j``.
    service : one service law for every pool or a list of J: lbmc's text
        (``"erlang:k=4"``, ``"hyperexponential:scv=5"``), a :class:`ServiceLaw`, or a
        :class:`PhaseType` (normalised to mean 1). Phase-type laws only.
    buffer : None (unlimited), a scalar or (J,): customers a server holds, the one in
        service included (-1 / inf = unlimited). Arrivals choosing a full server are
        blocked (lbmc's model).
    weights : ``"uniform"`` (jsq(d): draws uniform over the servers) or ``"mu"``
        (balanced(d): draws proportional to the speed; the n -> infinity law of draws
        without replacement).
    tol : stop when the sup-norm residual ``|F(u) - u|`` of the undamped update is below this.
    tail_tol : truncation: the top level holds at most this fraction of every pool.
    damping : weight of the new iterate (0 < damping <= 1).
    anderson : memory of the Anderson mixing that accelerates the damped iteration (0: the
        plain damped iteration of limits.md, which needs ~ 1/(1 - rho) iterations).
    start : first iterate: ``"exponential"`` (the closed form of exponential service at
        the system's load, the default) or ``"geometric"`` (``rho^k``: for tests of the
        iteration itself).

    Returns
    -------
    dict with the results-file metric names (per server / per arrival, n -> infinity):
    ``tail`` (list of J arrays ``u_{j,k}``, k = 1..top; a list because the pools'
    truncation levels differ), ``mean_queue`` (J,), ``utilization`` (J,),
    ``admitted_share`` (J,), ``p_wait`` (an arrival is admitted to a busy server),
    ``p_block``, ``p_wait_or_block``, ``throughput`` (``lam (1 - p_block)``),
    ``mean_sojourn`` (Little: customers per server / throughput), ``mean_wait``
    (``mean_sojourn - sum_j share_j / mu_j``), ``messages_per_arrival`` (2d),
    ``withdrawals_per_arrival`` (0); and ``mean_workload`` (J,) (time to clear a server of
    pool j, model time), ``mean_sojourn_direct`` (the arrivals' mean sojourn computed from
    the levels and phases they find: equals ``mean_sojourn`` at the fixed point, a check),
    ``rates`` (list of J arrays lambda_{j,k}), ``pi`` (list of J (top, m) arrays),
    ``iterations``, ``residual`` (last sup-norm change), ``contraction`` (estimated rate),
    ``accuracy`` (estimated sup-norm error of u: ``residual c/(1-c)`` plus the truncated
    mass), ``levels`` (truncation), ``converged`` (bool) and ``stable`` (the necessary
    condition of :func:`necessary_stability`).

    Raises ValueError for bad parameters (naming them), for non-phase-type laws and when
    the necessary stability condition fails (no stationary regime).
    Exponential service gives ``u_k = rho^((d^k - 1)/(d - 1))`` (tested to 1e-10).
    """
    lam = _check.real("lam", lam, lo=0)
    d = _check.integer("d", d, lo=1)
    beta, mu, buf = _check.pools(beta, mu, buffer)
    J = beta.size
    svc = list(service) if isinstance(service, (list, tuple)) else [service] * J
    if len(svc) != J:
        raise ValueError(f"service = {service!r} is not allowed; one law or one per pool ({J}) is required")
    phs = [as_phase_type(s, f"service[{j + 1}]").scaled(mu[j]) for j, s in enumerate(svc)]
    if weights == "uniform":
        a = beta.copy()
    elif weights == "mu":
        a = beta * mu / float(np.sum(beta * mu))
    else:
        raise ValueError(f"weights = {weights!r} is not allowed; 'uniform' (jsq(d)) or 'mu' (balanced(c)) is required")
    damping = _check.real("damping", damping, lo=0, lo_open=True, hi=1)
    tol = _check.real("tol", tol, lo=0, lo_open=True)
    if start not in ("exponential", "geometric"):
        raise ValueError(f"start = {start!r} is not allowed; 'exponential' or 'geometric' is required")
    stable, margin = necessary_stability(lam, d, beta, mu, buf, a)
    if not stable:
        raise ValueError(f"lam = {lam:g} is not allowed with these pools: a set of pools receives more than its "
                         f"capacity as n -> infinity (margin {margin:.4g} per server; necessary_stability), so "
                         "there is no stationary regime")

    # first guess: the exponential closed form at the system's load
    rho = min(lam / float(np.sum(beta * mu)), 0.999)
    levels = LEVELS0
    cap = [math.inf if math.isinf(b) else int(b) for b in buf]
    tops = [int(min(c, levels)) for c in cap]

    def guess(top):
        k = np.arange(top + 2, dtype=float)
        with np.errstate(over="ignore", under="ignore"):
            e = k if d == 1 or start == "geometric" else (np.power(float(d), k) - 1) / (d - 1)
            g = np.power(rho, e)
        g[top + 1:] = 0.0
        return g

    u = [guess(t) for t in tops]  # u[j][k], k = 0..top+1 (u[top+1] = 0)
    def fmap(u):
        """One cavity update: the tails of the tagged queues given the pooled u."""
        A = np.zeros(max(tops) + 3)
        for j in range(J):
            A[: u[j].size] += a[j] * u[j]
        sel = _selection(A, d)
        out = []
        for j in range(J):
            top = tops[j]
            rates = lam * (a[j] / beta[j]) * sel[: top + 1].copy()
            rates[top] = 0.0  # blocked at the buffer, or the truncation
            p0, P = _solve_tagged(rates, phs[j])
            mass = np.concatenate(([p0], P.sum(axis=1)))
            tail = np.concatenate((np.cumsum(mass[::-1])[::-1], [0.0]))
            tail[0] = 1.0
            out.append(tail)
        return out

    it = 0
    steps = []
    converged = False
    while True:
        sizes = [x.size for x in u]
        split = np.cumsum(sizes)[:-1]
        x = np.concatenate(u)
        hist_x, hist_f = [], []
        for _ in range(max_iter):
            it += 1
            g = np.concatenate(fmap(np.split(x, split)))
            f = g - x
            step = float(np.max(np.abs(f)))
            steps.append(step)
            if not np.isfinite(step):
                break
            if step < tol:
                x = g
                converged = True
                break
            # Anderson mixing (Walker & Ni, SIAM J. Numer. Anal. 49(4), 2011) on the damped
            # map, memory `anderson`; 0 = plain damped iteration
            hist_x.append(x.copy())
            hist_f.append(f.copy())
            if len(hist_x) > anderson + 1:
                hist_x.pop(0)
                hist_f.pop(0)
            xn = x + damping * f
            if anderson and len(hist_x) > 1:
                dX = np.diff(np.array(hist_x), axis=0).T
                dF = np.diff(np.array(hist_f), axis=0).T
                gamma, *_ = np.linalg.lstsq(dF, f, rcond=None)
                xa = xn - (dX + damping * dF) @ gamma
                if np.all(np.isfinite(xa)):
                    xn = xa
            x = np.clip(xn, 0.0, 1.0)
        u = np.split(x, split)
        for j in range(J):
            u[j][0] = 1.0
        top_mass = max((float(u[j][tops[j]]) for j in range(J) if tops[j] < cap[j]), default=0.0)
        if not converged or top_mass <= tail_tol or levels >= levels_max:
            break
        # more levels for the truncated pools; keep the iterate
        levels *= 2
        for j in range(J):
            if tops[j] < cap[j]:
                old = u[j]
                tops[j] = int(min(cap[j], levels))
                ext = np.zeros(tops[j] + 2)
                ext[: old.size] = old
                u[j] = ext
        converged = False
    top_mass = max((float(u[j][tops[j]]) for j in range(J) if tops[j] < cap[j]), default=0.0)
    if top_mass > tail_tol:
        converged = False
    # the undamped map contracts at about rho near the fixed point (measured: 0.42, 0.84,
    # 0.98 at rho = 0.5, 0.9, 0.99): the error of u is about residual / (1 - rho); twice that
    # is stated, plus the mass beyond the truncation
    c = min(rho, 0.999)
    accuracy = 2 * steps[-1] / (1 - c) + top_mass if steps else math.nan

    # metrics at the fixed point (from the last solve)
    mean_queue = np.empty(J)
    util = np.empty(J)
    admitted = np.empty(J)
    waited = np.empty(J)
    blocked = np.empty(J)
    workload = np.empty(J)
    soj_direct = np.empty(J)
    tails, rates_out, pis = [], [], []
    A = np.zeros(max(tops) + 3)
    for j in range(J):
        A[: u[j].size] += a[j] * u[j]
    sel = _selection(A, d)
    for j in range(J):
        top = tops[j]
        rates_raw = lam * (a[j] / beta[j]) * sel[: top + 1]
        rates = rates_raw.copy()
        rates[top] = 0.0
        p0, P = _solve_tagged(rates, phs[j])
        mass = np.concatenate(([p0], P.sum(axis=1)))
        tail = np.cumsum(mass[::-1])[::-1]
        tails.append(tail[1:].copy())
        mean_queue[j] = float(tail[1:].sum())
        util[j] = float(tail[1])
        adm = rates * mass  # admitted arrivals per server of pool j, by level
        admitted[j] = float(adm.sum())
        waited[j] = float(adm[1:].sum())
        blocked[j] = float(rates_raw[top] * mass[top]) if top == cap[j] else 0.0
        r = phs[j].residual_means()
        k = np.arange(1, top + 1, dtype=float)
        workload[j] = float(np.sum(P @ r) + np.sum(mass[1:] * (k - 1)) / mu[j])
        # an arrival finding k >= 1 customers in phase i waits r_i + (k-1)/mu, then its own 1/mu
        soj = rates[0] * p0 / mu[j] + float(np.sum(rates[1:, None] * P * (r[None, :] + (k[:, None] - 1) / mu[j]))) \
            + float(np.sum(rates[1:] * mass[1:])) / mu[j]
        soj_direct[j] = soj
        rates_out.append(rates)
        pis.append(P)
    p_block = float(np.sum(beta * blocked)) / lam if lam > 0 else 0.0
    p_wait = float(np.sum(beta * waited)) / lam if lam > 0 else 0.0
    thr = float(np.sum(beta * admitted))
    share = beta * admitted / thr if thr > 0 else beta.copy()
    mean_sojourn = float(np.sum(beta * mean_queue)) / thr if thr > 0 else float(np.sum(share / mu))
    return occupancy_metrics(tail=tails, mean_queue=mean_queue, utilization=util, share=share, p_wait=p_wait,
                             p_block=p_block, throughput=thr, mean_sojourn=mean_sojourn, mu=mu) | {
        "messages_per_arrival": 2.0 * d,
        "withdrawals_per_arrival": 0.0,
        "mean_workload": workload,
        "mean_sojourn_direct": float(np.sum(beta * soj_direct)) / thr if thr > 0 else math.nan,
        "rates": rates_out,
        "pi": pis,
        "iterations": it,
        "residual": steps[-1] if steps else math.nan,
        "contraction": c,
        "accuracy": accuracy,
        "levels": max(tops),
        "converged": bool(converged),
        "stable": bool(stable),
        "stability_margin": margin,
    }
