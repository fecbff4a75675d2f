"""Waiting- and sojourn-time quantiles of the limits whose found-state law is known, for
service laws that are not exponential (the exponential ones are Erlang mixtures, in
:mod:`.reference`).

* **Phase-type service, a FCFS queue whose arrivals find (k, p)** (the queue at the cavity,
  random routing's M/PH/1): a customer joining a server that holds k customers, the one in
  service in phase p, waits the residual of the phase process from p plus k - 1 fresh
  requirements, and stays one more requirement. Both are absorption times of the
  *level-down chain* on (level l >= 1, phase q): the generator ``T`` (scaled by the speed)
  within a level, ``s alpha`` (exit rates times the initial law) from level l to l - 1, and
  absorption from level 1 (Neuts 1981, ch. 2: a phase-type law of order levels x phases).
  So ``P(W > t) = pi exp(G t) 1`` with ``pi`` the found-state law placed at (k, p) and
  ``P(sojourn > t)`` the same from (k + 1, p) (from (1, alpha) for k = 0); computed by
  ``scipy.sparse.linalg.expm_multiply`` and the quantile by Brent's method.
* **No waiting** (PULL, JIQ and full JSQ as n -> infinity, one slot): the sojourn time is
  the requirement at the joined pool's speed, ``P(S / mu_j > t)``, mixed over the pools by
  the admitted share; every waiting-time quantile is 0.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, sparse
from scipy.sparse.linalg import expm_multiply

__all__ = ["found_state_quantiles", "no_wait_sojourn_quantiles"]


def _level_down(ph, levels):
    """The sparse generator (levels * m square) of the level-down chain of a phase-type law
    ``ph`` (already at the server's speed): state (l, q) at index (l - 1) m + q."""
    m = ph.m
    T = sparse.csr_matrix(ph.T)
    down = sparse.csr_matrix(np.outer(ph.exit, ph.alpha))
    G = sparse.kron(sparse.eye(levels), T) + sparse.kron(sparse.eye(levels, k=-1), down)
    return G.tocsr() if levels * m > 0 else G


def law_quantiles(surv, atom, levels, scale):
    """Quantiles (len(levels),) of a law with an atom ``atom`` at 0 and survival ``surv``
    on (0, inf): 0 where q <= atom, else the root of ``surv(t) = 1 - q`` (Brent, xtol
    1e-12 relative). ``scale`` a time of the law's order (the first bracket)."""
    out = []
    for q in levels:
        if q <= atom:
            out.append(0.0)
            continue
        hi = scale
        while surv(hi) > 1 - q:
            hi *= 2
        out.append(optimize.brentq(lambda t: surv(t) - (1 - q), 0.0, hi, xtol=1e-14, rtol=1e-12))
    return np.array(out)


def _march_quantiles(chains, atoms, levels, dt):
    """Quantiles of absorption times of several chains at once, by marching.

    chains : list of ``(Gt, V)``: ``Gt`` the transposed generator (sparse, s x s), ``V``
        (s, c) initial masses of c laws (columns); the survival of law i at t is the sum
        over chains of ``1' exp(Gt t) V[:, i]``. atoms (c,) each law's mass at 0 (not in V).
    levels : quantile levels; dt : the marching step (time units).

    One sweep ``t = 0, dt, 2 dt ...`` with ``expm_multiply`` until every law's survival is
    below its smallest ``1 - q``; a level crossed within a step is found by Brent's method
    from the step's start (short propagations). Returns an array (c, len(levels))."""
    c = len(atoms)
    levels = np.asarray(levels, dtype=float)
    out = np.full((c, levels.size), np.nan)
    for i in range(c):
        out[i, levels <= atoms[i]] = 0.0
    vs = [V.copy() for _, V in chains]
    t = 0.0

    def surv_from(states, s):
        return sum(np.sum(expm_multiply(Gt * s, v), axis=0) if s > 0 else np.sum(v, axis=0)
                   for (Gt, _), v in zip(chains, states))

    now = surv_from(vs, 0.0)
    while np.any(np.isnan(out)):
        nxt_states = [expm_multiply(Gt * dt, v) for (Gt, _), v in zip(chains, vs)]
        nxt = sum(np.sum(v, axis=0) for v in nxt_states)
        for i in range(c):
            for j, q in enumerate(levels):
                if np.isnan(out[i, j]) and nxt[i] <= 1 - q:
                    f = lambda s, i=i, q=q: float(surv_from([v[:, i : i + 1] for v in vs], s)[0]) - (1 - q)
                    out[i, j] = t + (optimize.brentq(f, 0.0, dt, xtol=1e-14, rtol=1e-12) if now[i] > 1 - q else 0.0)
        vs, now, t = nxt_states, nxt, t + dt
    return out


def found_state_quantiles(pools, levels):
    """Wait and sojourn quantiles of admitted customers, FCFS, phase-type service.

    Parameters
    ----------
    pools : list of J pairs ``(ph, found)``: ``ph`` the :class:`.service.PhaseType` law of
        a requirement at the pool's speed (time units); ``found`` (top + 1, m) the admitted
        arrivals (any common unit: rates or probabilities) finding level k (row k, k = 0
        .. top) and, for k >= 1, the customer in service in phase p (column p; row 0
        holds the arrivals to an empty server in column 0, the other columns 0).
    levels : the quantile levels, each in (0, 1).

    Returns
    -------
    (sojourn, wait): two arrays (len(levels),) in the time units of the laws.
    """
    total = sum(float(np.sum(f)) for _, f in pools)
    if not total > 0:
        raise ValueError("found_state_quantiles: no admitted arrivals")
    chains = []
    atom = 0.0
    mean_sojourn = 0.0
    for ph, found in pools:
        f = np.asarray(found, dtype=float) / total
        top, m = f.shape[0] - 1, ph.m
        atom += float(np.sum(f[0]))
        V = np.zeros(((top + 1) * m, 2))
        V[m:, 0] = f[1:].ravel()  # found (k, p): stays from (k + 1, p)
        V[:m, 0] += float(np.sum(f[0])) * ph.alpha  # an empty server: the own requirement
        V[: top * m, 1] = f[1:].ravel()  # and waits from (k, p)
        r = ph.residual_means()
        k = np.arange(1, top + 1, dtype=float)
        mean_sojourn += float(np.sum(f[1:] * (r[None, :] + k[:, None] * ph.mean))) + float(np.sum(f[0])) * ph.mean
        chains.append((_level_down(ph, top + 1).T.tocsr(), V))
    q = _march_quantiles(chains, [0.0, atom], levels, dt=mean_sojourn / 4)
    return q[0], q[1]


def no_wait_sojourn_quantiles(share, laws, mu, levels):
    """Sojourn quantiles when nobody waits: ``sum_j share_j P(S_j / mu_j > t)``.

    share (J,) the admitted share (sums to 1); laws J :class:`.service.ServiceLaw` (mean 1);
    mu (J,) the speeds; levels the quantile levels. Returns an array (len(levels),), time
    units. A deterministic law gives the jump point (Brent's method on a step function)."""
    share = np.asarray(share, dtype=float)
    mu = np.asarray(mu, dtype=float)

    def surv(t):
        return float(sum(w * float(law.survival(np.array(mu[j] * t))) for j, (w, law) in enumerate(zip(share, laws))
                         if w > 0))

    return law_quantiles(surv, 0.0, levels, float(np.max(1.0 / mu)))


def _step_survival(w, surv):
    """Lower and upper bounds of a decreasing survival function known at the points w
    (increasing, w[0] = 0) with values surv: P(W > y) for y < 0 is 1; between two points the
    value of the right one (lower) or the left one (upper); beyond the last 0 (lower) or the
    last value (upper)."""
    def lower(y):
        y = np.asarray(y, dtype=float)
        i = np.searchsorted(w, y, side="right")  # w[i-1] <= y < w[i]
        out = np.where(i < w.size, surv[np.minimum(i, w.size - 1)], 0.0)
        return np.where(y < 0, 1.0, out)

    def upper(y):
        y = np.asarray(y, dtype=float)
        i = np.searchsorted(w, y, side="right") - 1
        out = surv[np.clip(i, 0, w.size - 1)]
        return np.where(y < 0, 1.0, out)

    return lower, upper


def wait_plus_service_quantiles(w, wait_surv, law, mu, levels, *, points=4000):
    """Quantiles of ``W + S / mu`` with W and S independent: the sojourn time of LL(d) in the
    limit (a customer's requirement does not depend on the workloads it reads), from W's
    survival ``wait_surv`` on the points ``w`` (time units, w[0] = 0) and the service law
    ``law`` (:class:`.service.ServiceLaw`, mean 1) at speed ``mu``.

    ``P(W + S' > x) = P(S' > x) + sum_i P(S' in (s_i, s_i+1]) P(W > x - s)`` over a partition of
    [0, x] in ``points`` parts; ``P(W > x - s)`` increases with s, so its values at the parts'
    ends bracket the sum, and W's survival between its points is bracketed as well. Returns
    (quantiles (len(levels),), accuracy): the midpoints of the two brackets' quantiles and the
    largest half-distance (NaN where W's points do not reach far enough: ``P(T > a + b) <=
    P(W > a) + P(S' > b)`` bounds the range needed)."""
    w = np.asarray(w, dtype=float)
    wait_surv = np.asarray(wait_surv, dtype=float)
    lo_w, hi_w = _step_survival(w, wait_surv)
    s_surv = lambda t: law.survival(np.asarray(t, dtype=float) * mu)  # noqa: E731
    out, acc = [], 0.0
    for q in levels:
        tail = (1 - q) / 2
        if tail < wait_surv[-1]:
            out.append(np.nan)
            continue
        a = float(w[int(np.argmax(wait_surv <= tail))])
        b = float(law_quantiles(lambda t: float(s_surv(t)), 0.0, [1 - tail], 1.0 / mu)[0])
        top = 2 * (a + b)  # P(T > a + b) <= 1 - q; twice that leaves room for the brackets
        xs = np.linspace(0.0, top, points + 1)
        gs = s_surv(xs)

        def bound(x, low):
            k = int(np.searchsorted(xs, x, side="right"))  # the partition of [0, x]: xs[:k] and x
            s = np.append(xs[:k], x)
            g = np.append(gs[:k], float(s_surv(x)))
            ends = s[:-1] if low else s[1:]  # P(W > x - s) is smallest at the left end
            fw = lo_w(x - ends) if low else hi_w(x - ends)
            return g[-1] + float(np.sum((g[:-1] - g[1:]) * fw))

        qs = [optimize.brentq(lambda x: bound(x, low) - (1 - q), 0.0, top, xtol=1e-12, rtol=1e-10)
              for low in (True, False)]
        out.append(0.5 * (qs[0] + qs[1]))
        acc = max(acc, 0.5 * abs(qs[1] - qs[0]))
    return np.array(out), acc
