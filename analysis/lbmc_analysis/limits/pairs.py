"""The pair statistics as n -> infinity: ``n`` times the dependence of two servers' queues.

Two distinct servers of a pool become independent as n grows (asymptotic independence), their
joint law differing from the product of the marginals by ``O(1/n)``; ``n`` times that
difference has a limit given by the stationary fluctuations of the occupancy. With ``T(a)``
the fraction of pool j's ``N_j = beta_j n`` servers holding at least ``a`` customers and ``c(a,
b)`` the covariance of ``1{Q1 >= a}`` and ``1{Q2 >= b}`` for two distinct servers, exchangeability
gives

    ``Cov(T(a), T(b)) = (P(Q >= max(a, b)) - P(Q >= a) P(Q >= b)) / N_j + (1 - 1/N_j) c(a, b)``,

and the occupancy's covariance is ``S/n + o(1/n)`` where ``S`` solves the Lyapunov equation
``A S + S A^T + Q = 0`` of its linear-noise (diffusion) approximation around the fixed point
(``A`` the Jacobian of the drift, ``Q = sum_l rate_l l l^T`` over the jumps l; Kurtz 1978; Gast
& Van Houdt 2017, section 3, whose ``W`` it is), so

    ``n c(a, b) -> S_T[a, b] - (P(Q >= max(a, b)) - P(Q >= a) P(Q >= b)) / beta_j``

with ``S_T`` the covariance of the tails. Two routes to ``S``:

* exponential service: the tail coordinates of :class:`.ode.OccupancyModel` (random, jsq(d),
  balanced(c), finite buffers, slots), the ``W`` of :func:`.refined_mf.refined_stationary`;
* phase-type service, jsq(d) and balanced(c), one slot: the counts by level and phase in
  service ``y_j(k, p)``, whose fixed point is the queue at the cavity (:func:`.cavity.cavity_jsq`,
  ``pi``); the drift is rebuilt here from the same arrival rates ``lambda a_j sel_k`` per server
  of pool j at level k, the phase process ``mu_j T_j`` and completions restarting the next
  customer in ``alpha_j``. The drift vanishes at the cavity's solution (checked: ``residual``).

* pull and jiq with one router, and full jsq (every arrival joins an idle server while there
  is one, uniformly among the idle servers of all pools): as n -> infinity nobody waits
  (P(Q >= 2) is exponentially small in n), and the busy fractions ``z_j`` of the pools form a
  J-dimensional density-dependent chain with drift ``lambda (1 - z_j) / I(z) - mu_j z_j``,
  ``I = sum_k beta_k (1 - z_k)``, jumps ``+-1 / (beta_j n)``: its Lyapunov equation gives ``S``
  at level 1, and ``c(a, b) = 0`` beyond. Exponential service; with one pool any law, where the
  busy count is that of M/G/inf (Poisson, by insensitivity) and ``n c(1, 1) -> rho^2``.

Independent servers (random routing) give ``S_T`` equal to the one-server term, ``c = 0``
(tested), and the exponential law through the phase-type route equals the first route.
``pair_corr_scaled[j][k]`` is ``n c(k, k)``; ``pair_tv_scaled[j]`` is ``1/2 sum_{a,b} |n D(a,
b)|`` over the levels ``0 .. K`` (K lumped: "at least K") with ``D(a, b) = P(Q1 = a, Q2 = b) -
p(a) p(b)``, from ``1{Q = a} = 1{Q >= a} - 1{Q >= a + 1}``.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from ._result import _all_exponential, _phase_type
from .cavity import _selection, as_phase_type
from .expansion import expansion_of

__all__ = ["pair_covariances", "ph_pair_covariances", "idle_pair_covariances", "pair_deviations", "pair_limits"]

FLOOR = 1e-13  # levels whose mass is below this in every pool are dropped (as refined_mf's)


def _one_server(t, beta_j):
    """``(P(Q >= max(a, b)) - P(Q >= a) P(Q >= b)) / beta_j`` for the tails t (L,), a, b = 1..L."""
    idx = np.arange(t.size)
    return (t[np.maximum.outer(idx, idx)] - np.outer(t, t)) / beta_j


def _ainv_norm(A):
    return float(np.max(np.sum(np.abs(np.linalg.inv(A)), axis=1)))


def pair_covariances(rr):
    """``lim n c(a, b)`` per pool from the tail-coordinate expansion ``rr`` of
    :func:`.refined_mf.refined_stationary` (exponential service): an array (J, L, L), index
    ``a - 1`` for a = 1..L (the levels the expansion kept), and the absolute accuracy of its
    entries (the Lyapunov residual through ``|A^{-1}|``)."""
    m, x, W = rr["model"], rr["x"], rr["W"]
    J, L = x.shape
    out = np.zeros((J, L, L))
    for j in range(J):
        out[j] = W[j * L:(j + 1) * L, j * L:(j + 1) * L] - _one_server(x[j], m.b[j])
    return out, _ainv_norm(rr["A"]) * rr["residual"]


class _PhaseChain:
    """The counts by level and phase of jsq(d)/balanced(c) with phase-type service as a
    density-dependent chain: state ``y`` = the pools' ``y_j(k, p)`` (fractions of pool j's
    servers, k = 1..top_j), jumps of one server by ``(e_to - e_from) / beta_j`` per ``n``."""

    def __init__(self, lam, d, beta, a, phs, tops):
        self.lam, self.d, self.beta, self.a, self.phs, self.tops = lam, d, beta, a, phs, tops
        self.sizes = [t * ph.m for t, ph in zip(tops, phs)]
        self.offsets = np.concatenate(([0], np.cumsum(self.sizes)))

    def blocks(self, y):
        return [y[self.offsets[j]:self.offsets[j + 1]].reshape(self.tops[j], self.phs[j].m)
                for j in range(len(self.tops))]

    def _sel(self, Ys):
        K = max(self.tops)
        A = np.zeros(K + 2, dtype=Ys[0].dtype)
        A[0] = 1.0
        for j, Y in enumerate(Ys):
            mass = Y.sum(axis=1)
            A[1:self.tops[j] + 1] += self.a[j] * np.cumsum(mass[::-1])[::-1]
        return _selection(A, self.d)  # (K + 1,): level 0 .. K

    def transitions(self, y):
        """Per pool: (arrival flows (top, m) out of (k, p) up one level, level 0's flow into
        level 1 by phase (m,)), the per-n rates of every jump; complex-safe."""
        Ys = self.blocks(y)
        sel = self._sel(Ys)
        out = []
        for j, Y in enumerate(Ys):
            top = self.tops[j]
            up = self.lam * self.a[j] * sel[1:top + 1, None] * Y  # (top, m), from (k, p) to (k + 1, p)
            up[top - 1] = 0.0  # blocked at the buffer, or the truncation
            idle = 1.0 - Y.sum()
            enter = self.lam * self.a[j] * sel[0] * idle * self.phs[j].alpha  # level 0 -> (1, p)
            out.append((Y, up, enter))
        return out

    def drift(self, y):
        res = []
        for j, (Y, up, enter) in enumerate(self.transitions(y)):
            ph, b = self.phs[j], self.beta[j]
            dY = Y @ ph.T  # phase changes and the completions' outflow (speed mu_j in T)
            dY[:-1] += np.outer(Y[1:] @ ph.exit, ph.alpha)  # a completion at k + 1 starts the next one
            dY[0] += enter / b
            dY -= up / b
            dY[1:] += up[:-1] / b
            res.append(dY.ravel())
        return np.concatenate(res)

    def noise(self, y):
        """``Q = sum_l rate_l l l^T`` (per n)."""
        D = self.offsets[-1]
        Q = np.zeros((D, D))

        def add(rate, frm, to, b):
            # l = (e_to - e_from) / b; frm / to = -1: level 0 (outside the state)
            for i, si in ((frm, -1.0), (to, 1.0)):
                for k, sk in ((frm, -1.0), (to, 1.0)):
                    if i >= 0 and k >= 0:
                        Q[i, k] += rate * si * sk / b**2

        for j, (Y, up, enter) in enumerate(self.transitions(y)):
            ph, b, o, m = self.phs[j], self.beta[j], self.offsets[j], self.phs[j].m
            top = self.tops[j]
            T, s, alpha = ph.T, ph.exit, ph.alpha
            for p in range(m):
                add(enter[p], -1, o + p, b)
            for k in range(top):
                for p in range(m):
                    i = o + k * m + p
                    if k + 1 < top:
                        add(up[k, p], i, i + m, b)
                    for q in range(m):
                        if q != p and T[p, q] > 0:
                            add(b * T[p, q] * Y[k, p], i, o + k * m + q, b)
                    if s[p] > 0:
                        if k == 0:
                            add(b * s[p] * Y[k, p], i, -1, b)
                        else:
                            for q in range(m):
                                if alpha[q] > 0:
                                    add(b * s[p] * alpha[q] * Y[k, p], i, o + (k - 1) * m + q, b)
        return Q

    def jacobian(self, y):
        """The drift's Jacobian by the complex step (exact to round-off)."""
        D = y.size
        A = np.empty((D, D))
        h = 1e-30
        for i in range(D):
            z = y.astype(complex)
            z[i] += 1j * h
            A[:, i] = self.drift(z).imag / h
        return A


def ph_pair_covariances(res, lam, d, beta, mu, services, weights="uniform"):
    """``lim n c(a, b)`` per pool for jsq(d) (``weights="uniform"``) or balanced(c) (``"mu"``)
    with phase-type service, from the cavity solution ``res`` of :func:`.cavity.cavity_jsq`
    for the same parameters (its ``pi``: pool j's servers by level and phase).

    Returns (C, accuracy, residual): C a list of J arrays (L_j, L_j), index ``a - 1`` for a = 1..L_j
    (L_j the levels kept, mass above 1e-13); accuracy the Lyapunov solve's residual through
    ``|A^{-1}|``; residual the largest drift at the cavity's solution (0 up to the cavity's own
    accuracy: the two descriptions agree)."""
    beta = np.asarray(beta, dtype=float)
    mu = np.asarray(mu, dtype=float)
    a = beta.copy() if weights == "uniform" else beta * mu / float(np.sum(beta * mu))
    phs = [as_phase_type(s, f"service[{j + 1}]").scaled(float(mu[j])) for j, s in enumerate(services)]
    tops, ys = [], []
    for P in res["pi"]:
        mass = P.sum(axis=1)
        tail = np.cumsum(mass[::-1])[::-1]
        keep = max(int(np.sum(tail > FLOOR)), 1)
        tops.append(keep)
        ys.append(P[:keep].ravel())
    chain = _PhaseChain(float(lam), int(d), beta, a, phs, tops)
    y = np.concatenate(ys)
    residual = float(np.max(np.abs(chain.drift(y))))
    A = chain.jacobian(y)
    Q = chain.noise(y)
    S = linalg.solve_continuous_lyapunov(A, -Q)
    S = 0.5 * (S + S.T)
    lyap = float(np.max(np.abs(A @ S + S @ A.T + Q)))
    out = []
    for j in range(beta.size):
        o, m, top = chain.offsets[j], phs[j].m, tops[j]
        M = np.zeros((top, top * m))  # tails T(a) = sum_{k >= a, p} y(k, p)
        for k in range(top):
            M[:k + 1, k * m:(k + 1) * m] = 1.0
        Sj = S[o:o + top * m, o:o + top * m]
        t = M @ y[o:o + top * m]
        out.append(M @ Sj @ M.T - _one_server(t, beta[j]))
    return out, _ainv_norm(A) * lyap, residual


def idle_pair_covariances(lam, beta, mu):
    """``lim n c(1, 1)`` per pool (a list of (1, 1) arrays) when every arrival joins a uniform
    idle server (pull or jiq with one router, full jsq), exponential service, ``lam <
    sum beta mu``; and the accuracy (the Lyapunov residual through ``|A^{-1}|``). The busy
    fractions' fixed point ``z_j = a / (a + mu_j)``, ``a sum_j beta_j mu_j / (a + mu_j) = lam``
    (the PULL fixed point, Stolyar 2015, in these coordinates)."""
    from scipy.optimize import brentq

    beta, mu = np.asarray(beta, dtype=float), np.asarray(mu, dtype=float)
    cap = float(np.sum(beta * mu))
    if not 0 < lam < cap:
        raise ValueError(f"lambda = {lam} is not below the capacity {cap}: no stationary regime")

    def excess(a):
        return a * float(np.sum(beta * mu / (a + mu))) - lam

    hi = 1.0
    while excess(hi) <= 0:
        hi *= 2
    a = brentq(excess, 0.0, hi, xtol=1e-15, rtol=1e-15)
    z = a / (a + mu)
    idle = float(np.sum(beta * (1 - z)))
    A = np.outer(lam * (1 - z), beta) / idle**2 - np.diag(lam / idle + mu)
    Q = np.diag(2 * mu * z / beta)
    S = linalg.solve_continuous_lyapunov(A, -Q)
    S = 0.5 * (S + S.T)
    lyap = float(np.max(np.abs(A @ S + S @ A.T + Q)))
    out = [np.array([[S[j, j] - z[j] * (1 - z[j]) / beta[j]]]) for j in range(beta.size)]
    return out, _ainv_norm(A) * lyap


def pair_deviations(C, K):
    """``lim n D(a, b)`` at the levels a, b = 0 .. K (level K: at least K) from the tail
    covariances C (L, L) of :func:`pair_covariances`."""
    L = C.shape[0]
    full = np.zeros((K + 2, K + 2))  # tail indices 0 .. K + 1; 1{Q >= 0} = 1 has no covariance
    m = min(L, K + 1)
    full[1:m + 1, 1:m + 1] = C[:m, :m]
    lump = np.zeros((K + 1, K + 2))
    for a in range(K):
        lump[a, a], lump[a, a + 1] = 1.0, -1.0
    lump[K, K] = 1.0
    return lump @ full @ lump.T


def _covariances(p, work):
    """(list of per-pool C, accuracy, route) for a normalised point; None where no route applies
    (policies other than jsq(d)/balanced(c) with d, c >= 2, full jsq and one-router pull/jiq;
    service neither exponential nor phase-type with one slot; no cavity solution in ``work``)."""
    name, d = p["name"], p["param"]
    if (name == "jsq" and d is None) or (name == "pull" and p["routers"] == 1):
        return _idle_covariances(p)
    if name not in ("jsq", "balanced") or d is None or d < 2:
        return None
    if _all_exponential(p):
        C, acc = pair_covariances(expansion_of(p))
        return list(C), acc, "the occupancy's tail coordinates"
    if not _phase_type(p) or np.any(p["slots"] > 1) or "cavity" not in work:
        return None
    res = work["cavity"]
    weights = "uniform" if name == "jsq" else "mu"
    C, acc, resid = ph_pair_covariances(res, p["lam"], d, p["beta"], p["mu"], p["service"], weights)
    return C, acc + resid, "the counts by level and phase around the queue at the cavity"


def _idle_covariances(p):
    """Full jsq and one-router pull/jiq (see :func:`idle_pair_covariances`); None with slots,
    speeds that depend on the queue, or several pools of a law that is not exponential."""
    if np.any(p["slots"] > 1) or p["mu_k"] is not None and any(m is not None and len(m) > 1 for m in p["mu_k"]):
        return None
    if _all_exponential(p):
        C, acc = idle_pair_covariances(p["lam"], p["beta"], p["mu"])
        return C, acc, "the busy fractions when every arrival joins an idle server (nobody waits)"
    if p["beta"].size != 1:
        return None
    rho = p["lam"] / float(p["mu"][0])
    if not rho < 1:
        raise ValueError(f"rho = {rho:.4g} >= 1: no stationary regime")
    return ([np.array([[rho * rho]])], 1e-15,
            "the busy count of M/G/inf (Poisson by insensitivity: n c(1, 1) = rho^2) when every arrival joins "
            "an idle server (nobody waits)")


def pair_limits(R, p, *, n=None):
    """Put into R the pair statistics' limits (``n`` None: ``pair_corr``, ``pair_tv`` 0 and
    the scaled ones ``lim n c``) or their values at ``n`` (``lim n c / n``, error O(1/n^2)),
    for the points :func:`_covariances` covers; nothing otherwise (a note if a solve failed)."""
    try:
        got = _covariances(p, R.work)
    except (RuntimeError, ValueError, np.linalg.LinAlgError) as exc:
        R.note(f"no limit of the pair statistics: {exc}")
        return
    if got is None:
        return
    C, acc, route = got
    J, K = len(C), p["K"]
    corr = np.zeros((J, K))
    tv = np.zeros(J)
    for j in range(J):
        m = min(K, C[j].shape[0])
        corr[j, :m] = np.diag(C[j])[:m]
        tv[j] = 0.5 * float(np.sum(np.abs(pair_deviations(C[j], K))))
    src = (f"n x the two-server covariance from the occupancy's fluctuations ({route}): n c(a, b) -> S[a, b] - "
           "(P(Q >= max(a, b)) - P(Q >= a) P(Q >= b)) / beta_j, A S + S A^T + Q = 0 (Gast & Van Houdt 2017, "
           "section 3)")
    tv_src = src + "; tv = 1/2 sum |D(a, b)| over the levels lumped at K"
    tv_acc = acc * (K + 1) ** 2
    R.put("pair_corr_scaled", corr, src, acc)
    R.put("pair_tv_scaled", tv, tv_src, tv_acc)
    if n is None:
        zero = "0 as n -> inf: asymptotic independence (propagation of chaos), the deviation is O(1/n)"
        R.put("pair_corr", np.zeros((J, K)), zero, 0.0)
        R.put("pair_tv", np.zeros(J), zero, 0.0)
    else:
        R.put("pair_corr", corr / n, src + f"; divided by n = {n}, error O(1/n^2)", acc / n)
        R.put("pair_tv", tv / n, tv_src + f"; divided by n = {n}, error O(1/n^2)", tv_acc / n)
