"""Refined mean field, order 1/n: ``E[X] = x* + V/n + O(1/n^2)``, stationary and transient.

Source: N. Gast, B. Van Houdt, "A refined mean field approximation", POMACS 1(2), 2017
(Theorem 3.1 and section 3.2); transient version: N. Gast, L. Bortolussi, M. Tribastone,
"Size expansions of mean field approximation: transient and steady-state analysis",
Performance Evaluation 129, 2019; heterogeneous pools: S. Allmeier, N. Gast, POMACS 2022;
/work/shared/notes/limits.md, section 3. rmf_tool (github ngast/rmf_tool) implements the
same for homogeneous models; this is a derivation from the formulas, not a copy.

The occupancy chain of :class:`lbmc_analysis.limits.ode.OccupancyModel` in tail
coordinates ``x_{j,k}`` (fraction of pool j's servers holding at least k customers,
k = 1..K) is density dependent: it jumps by ``+e_{j,k}/(n b_j)`` at rate ``n up_{j,k}(x)``
(an arrival joins a server of pool j at level k-1) and by ``-e_{j,k}/(n b_j)`` at rate
``n down_{j,k}(x)`` (a departure from level k). With the drift ``f = (up - down)/b``,
its fixed point x*, ``A = Df(x*)``, the Hessian ``B = D^2 f(x*)`` and ``Q = sum_l l l^T
beta_l(x*) = diag((up + down)/b^2)``:

* ``W`` solves ``A W + W A^T + Q = 0`` (``Cov(X) ~ W/n``; scipy's Bartels-Stewart solver);
* ``V = -A^{-1} (1/2 B:W + f1(x*))`` with ``(B:W)_i = sum_{j,k} B[i,j,k] W[j,k]`` and
  ``f1 = lim n (f_n - f)``, the 1/n term of the drift itself (nonzero only for jsq(d) with
  distinct sampling, whose finite-n law is ``prod_{i<d} (n A - i)/(n - i)``, and balanced(c),
  which always draws c distinct servers: :meth:`~.ode.OccupancyModel.law_correction`; the expansion
  with an n-dependent drift adds ``-A^{-1} f1``: Gast & Van Houdt 2017, section 6.1 on
  "1/n terms in the drift", and a one-line consequence of their Theorem 3.1).

A function of the state (a metric) ``g`` gets ``E[g(X)] = g(x*) + (grad g . V + 1/2
D^2 g : W + g1(x*)) / n``.

Derivatives: A by the complex step (exact to round-off); ``B:W`` as
``sum_m lambda_m D^2 f[v_m, v_m]`` over the eigenpairs of W, each second directional
derivative by a central difference of complex-step first derivatives with Richardson
extrapolation, the step in each direction 1e-3 of the smallest fraction ``s*_{j,k}`` it
moves (so that the laws' rational parts stay far from their poles): relative error about
1e-10 (measured against the analytic Hessian of homogeneous JSQ(d): see the tests).
The state is restricted to the levels where some pool holds more than 1e-13 (the rest
changes V by less than that).

Where it applies: smooth drifts at the fixed point, i.e. random, jsq(d), balanced(c).
pull/jiq and full jsq have their fixed point on the boundary (all arrivals go to idle
servers, the levels above are empty), where the drift is not differentiable:
:func:`refined_stationary` still computes V for their tails (at low load the exact chains
approach it), but the expansion misses their waiting entirely, and
:func:`lbmc_analysis.limits.refined` gives no value for them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, linalg

from . import ode as _ode

__all__ = ["refined_stationary", "refined_transient", "refined_order2_jsq", "expand", "second_directional"]

FLOOR = 1e-13


def _f(model):
    """The drift without clipping (derivatives at the fixed point), for batches of states."""

    def f(X):
        return model.drift(X, clip=False)
    return f


def _cs_jac(fun, x, eps=1e-30):
    """Complex-step Jacobian of fun: (..., J, K) -> (..., M), at x (J, K): (M, D)."""
    J, K = x.shape
    D = J * K
    X = np.repeat(x.reshape(1, D).astype(complex), D, axis=0)
    X[np.arange(D), np.arange(D)] += 1j * eps
    F = np.asarray(fun(X.reshape(D, J, K))).reshape(D, -1)
    return (F.imag / eps).T


def second_directional(fun, x, V, h, eps=1e-30):
    """``D^2 fun(x)[v, v]`` for the columns v of V (D, M) with steps h (M,): complex-step
    derivative along v at ``x +- h v`` and ``x +- h v / 2``, central differences, Richardson.
    Returns (M, out) and an error estimate (M, out) (the Richardson correction)."""
    J, K = x.shape
    D, M = V.shape
    xv = x.reshape(1, D)
    out = []
    for hh in (h, h / 2):
        Xp = (xv + hh[:, None] * V.T).astype(complex) + 1j * eps * V.T
        Xm = (xv - hh[:, None] * V.T).astype(complex) + 1j * eps * V.T
        Fp = np.asarray(fun(Xp.reshape(M, J, K))).reshape(M, -1).imag / eps
        Fm = np.asarray(fun(Xm.reshape(M, J, K))).reshape(M, -1).imag / eps
        out.append((Fp - Fm) / (2 * hh[:, None]))
    g1, g2 = out
    return (4 * g2 - g1) / 3, np.abs(g2 - g1) / 3


def _steps(model, x, V, rel=1e-3):
    """Per-direction steps: rel times the smallest fraction s*_{j,k} > 0 a unit move along v
    changes (fractions at exactly 0, e.g. above a buffer, are not limiting)."""
    s = model.s_from_x(x)  # (J, K+1)
    J, K = x.shape
    # a move dx changes s_{j,k} by dx_{j,k} - dx_{j,k+1} and s_{j,0} by -dx_{j,1}
    out = np.empty(V.shape[1])
    for m in range(V.shape[1]):
        dx = V[:, m].reshape(J, K)
        ds = model.s_from_x(dx) - model.s_from_x(np.zeros_like(dx))
        ok = (np.abs(ds) > 1e-300) & (s > 0)
        lim = np.min(s[ok] / np.abs(ds[ok])) if np.any(ok) else 1.0
        out[m] = rel * min(lim, 1.0)
    return out


def _bw(fun, model, x, W):
    """``(B:W)`` for the vector function fun at x: ``sum_m lambda_m D^2 fun[v_m, v_m]``, with
    an error estimate."""
    lam, U = np.linalg.eigh(0.5 * (W + W.T))
    keep = np.abs(lam) > 1e-14 * max(np.max(np.abs(lam)), 1e-300)
    lam, U = lam[keep], U[:, keep]
    if lam.size == 0:
        out = np.asarray(fun(x.astype(complex)[None]))
        return np.zeros(out.reshape(-1).size), 0.0
    h = _steps(model, x, U)
    d2, err = second_directional(fun, x, U, h)
    return lam @ d2, float(np.abs(lam) @ np.max(err, axis=1))


def _q_diag(model, x):
    up, down = model.jump_rates(x, clip=False)
    return ((up + down) / model.b[:, None] ** 2).ravel()


def expand(g, model, x, V, W, g1=None):
    """First-order expansion of ``E[g(X)]``: ``(g(x*), grad g . V + 1/2 D^2 g : W + g1)``.

    g : function of tails (..., J, K) -> (..., M) (complex-safe); V (J, K); W (D, D);
    g1 : the 1/n term of g itself at x* (M,) or None. Returns (g0 (M,), c1 (M,))."""
    g0 = np.asarray(g(x[None].astype(complex))).reshape(-1).real
    grad = _cs_jac(g, x)
    hw, _ = _bw(g, model, x, W)
    c1 = grad @ V.ravel() + 0.5 * hw
    if g1 is not None:
        c1 = c1 + np.asarray(g1).reshape(-1)
    return g0, c1


def refined_stationary(model, *, x=None):
    """Order-1/n expansion of the stationary occupancy chain around its mean-field fixed point.

    Parameters
    ----------
    model : :class:`~lbmc_analysis.limits.ode.OccupancyModel` with ``n = None`` (the limit
        laws; the 1/n term of jsq(d) distinct is added through ``f1``).
    x : the fixed point if already known (tails (J, K) for ``model.levels``); else found
        with :func:`lbmc_analysis.limits.ode.fixed_point`.

    Returns
    -------
    dict: ``model`` (restricted to the levels kept), ``x`` (J, K) fixed point, ``V`` (J, K),
    ``W`` (J*K, J*K), ``A``, ``Q`` (diagonal as a vector), ``f1`` (J, K), ``residual``
    (``max |A W + W A^T + Q|``), ``accuracy`` (estimated absolute error of V from the
    finite differences of the Hessian term, propagated through ``|A^{-1}|``).
    """
    if not math.isinf(model.n):
        raise ValueError(f"model.n = {model.n:g} is not allowed; the refined expansion is around the limit laws "
                         "(build the model with n = None)")
    if x is None:
        model, x = _ode.fixed_point(model)
    m, xt = _ode.trim(model, np.asarray(x, dtype=float), floor=FLOOR)
    J, K = xt.shape
    A = _cs_jac(_f(m), xt)
    q = _q_diag(m, xt)
    W = linalg.solve_continuous_lyapunov(A, -np.diag(q))
    W = 0.5 * (W + W.T)
    res = float(np.max(np.abs(A @ W + W @ A.T + np.diag(q))))
    bw, bw_err = _bw(_f(m), m, xt, W)
    f1 = m.drift_correction(xt).ravel()
    rhs = 0.5 * bw + f1
    V = -np.linalg.solve(A, rhs)
    Ainv_norm = float(np.max(np.sum(np.abs(np.linalg.inv(A)), axis=1)))
    return {
        "model": m,
        "x": xt,
        "V": V.reshape(J, K),
        "W": W,
        "A": A,
        "Q": q,
        "f1": f1.reshape(J, K),
        "residual": res,
        "accuracy": 0.5 * bw_err * Ainv_norm + Ainv_norm * res,
    }


def refined_transient(model, t, x0=None, *, rtol=1e-8, atol=1e-11):
    """``x(t)``, ``V(t)`` and ``W(t)`` from a deterministic start (V(0) = W(0) = 0):

        ``x' = f(x)``, ``W' = A(x) W + W A(x)^T + Q(x)``, ``V' = A(x) V + 1/2 B(x):W + f1(x)``

    (Gast, Bortolussi & Tribastone 2019, section 3; limits.md section 3), integrated with
    scipy's RK45 (rtol 1e-8). ``E[X(t)] ~ x(t) + V(t)/n``, ``Cov(X(t)) ~ W(t)/n``.

    Parameters: ``model`` (n = None; its ``levels`` are kept: choose them so that the top
    level stays below ~1e-12 over the horizon), ``t`` (increasing times, model time units),
    ``x0`` (as in :func:`lbmc_analysis.limits.ode.transient`).

    Returns an xarray.Dataset with ``x`` and ``V`` (dims time, pool, k) and ``W`` (time,
    i, j over the flattened (pool, k) index).
    """
    import xarray as xr

    if not math.isinf(model.n):
        raise ValueError(f"model.n = {model.n:g} is not allowed; build the model with n = None")
    t = np.asarray(t, dtype=float)
    if t.ndim == 0:
        t = np.linspace(0.0, float(t), 201)
    if t.ndim != 1 or t.size == 0 or t[0] < 0 or np.any(np.diff(t) <= 0):
        raise ValueError("t must be increasing times >= 0")
    x = _ode._start_state(model, x0)
    J, K = x.shape
    D = J * K
    fun = _f(model)

    def rhs(_t, y):
        xx = y[:D].reshape(J, K)
        Vv = y[D:2 * D]
        Ww = y[2 * D:].reshape(D, D)
        A = _cs_jac(fun, xx)
        q = _q_diag(model, xx)
        dW = A @ Ww + Ww @ A.T + np.diag(q)
        bw, _ = _bw(fun, model, np.clip(xx, 0, 1), Ww) if np.any(Ww) else (np.zeros(D), 0.0)
        dV = A @ Vv + 0.5 * bw + model.drift_correction(xx).ravel()
        dx = model.drift(xx, clip=False).ravel()
        return np.concatenate((dx, dV, dW.ravel()))

    y0 = np.concatenate((x.ravel(), np.zeros(D), np.zeros(D * D)))
    sol = integrate.solve_ivp(rhs, (0.0, float(t[-1])), y0, t_eval=t, method="RK45", rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"the refined transient failed: {sol.message}")
    Y = sol.y.T
    coords = {"time": sol.t, "pool": np.arange(1, J + 1), "k": np.arange(1, K + 1)}
    return xr.Dataset(
        {
            "x": (("time", "pool", "k"), Y[:, :D].reshape(-1, J, K)),
            "V": (("time", "pool", "k"), Y[:, D:2 * D].reshape(-1, J, K)),
            "W": (("time", "i", "j"), Y[:, 2 * D:].reshape(-1, D, D)),
        },
        coords=coords,
        attrs={"source": "Gast, Bortolussi & Tribastone 2019 (transient refined mean field)",
               "policy": model.policy, "lam": model.lam},
    )


def refined_order2_jsq(d, lam, buffer=math.inf, mu=1.0, *, floor=1e-13):
    """Order 1/n^2 of the stationary refined mean field of homogeneous JSQ(d) with sampling
    with replacement: ``E[X] = x* + V/n + A/n^2 + O(1/n^3)`` (Gast, Bortolussi & Tribastone,
    "Size expansions of mean field approximation", Performance Evaluation 129, 2019, the
    expansion to the second order; rmf_tool's order-2 term, derived here from the moment
    equations, not copied).

    The chain: x_k (fraction of servers with at least k customers, k = 1..D) jumps by +1/n
    at rate ``n lam (x_{k-1}^d - x_k^d)`` and by -1/n at rate ``n mu (x_k - x_{k+1})`` (x_0 = 1,
    x_{D+1} = 0; D = the buffer, or for unlimited buffers the levels above ``floor``).
    Writing delta = X - x*, e = E[delta] = V/n + A/n^2, C = E[delta delta^T] = W/n + W2/n^2,
    M3 = E[delta^3] = T/n^2 and, at leading order, M4 = Isserlis(W)/n^2, the stationary
    equations ``E[L g] = 0`` for g = delta_i, delta_i delta_j and delta_i delta_j delta_k at
    orders 1/n and 1/n^2 give, in turn: W (Lyapunov), V, T (a Sylvester equation with the
    Kronecker sum of A three times; the third jump moment R_kkk = f_k(x*) = 0), W2 (Lyapunov)
    and A. The drift here is a sum of functions of one coordinate each (x_{k-1}^d and x_k^d),
    so every derivative tensor is "pure": the contractions are sums over levels.

    Returns dict: ``x`` (D,), ``V`` (D,), ``A`` (D,), ``W`` (D, D), ``W2`` (D, D), ``T``
    (D, D, D). Raises ValueError for d < 1, lam outside (0, mu) with an unlimited buffer, or
    a buffer < 1. Distinct sampling (lbmc's default) has 1/n and 1/n^2 terms in the law
    itself: not covered here."""
    from scipy.optimize import brentq

    d = int(d)
    if d < 1:
        raise ValueError(f"d = {d} is not allowed; an integer >= 1 is required")
    if not (lam > 0 and mu > 0 and (lam < mu or not math.isinf(buffer))):
        raise ValueError(f"lam = {lam:g} is not allowed; 0 < lam < mu = {mu:g} is required (or a finite buffer)")
    if not math.isinf(buffer) and (buffer < 1 or buffer != int(buffer)):
        raise ValueError(f"buffer = {buffer!r} is not allowed; an integer >= 1 or inf is required")
    rho = lam / mu
    if math.isinf(buffer):  # x_k = rho^((d^k - 1)/(d - 1)) (rho^k for d = 1) down to floor
        D, xk = 0, 1.0
        while True:
            xk = rho ** (((d ** (D + 1)) - 1) / (d - 1)) if d > 1 else rho ** (D + 1)
            D += 1
            if xk < floor or D >= 200:
                break
    else:
        D = int(buffer)

    def pw(y, m):  # m-th derivative of lam * y^d
        c = lam
        for i in range(m):
            c *= d - i
        return c * y ** (d - m) if d >= m else 0.0

    # the fixed point: x_{k+1} = x_k - (lam / mu) (x_{k-1}^d - x_k^d) from x_1, x_1 by the
    # balance of the last level (arrivals blocked at level D); unlimited: the closed form
    def run(x1):
        xs = [1.0, x1]
        for k in range(1, D):
            xs.append(xs[k] - rho * (xs[k - 1] ** d - xs[k] ** d))
        return xs

    if math.isinf(buffer):
        x = np.array([rho ** (((d ** k) - 1) / (d - 1)) if d > 1 else rho ** k for k in range(1, D + 1)])
    else:
        x1 = brentq(lambda v: (lambda xs: rho * (xs[D - 1] ** d - xs[D] ** d) - xs[D])(run(v)), 0.0, 1.0,
                    xtol=1e-16, rtol=1e-15, maxiter=500)
        x = np.array(run(x1)[1:])
    xp = np.concatenate(([1.0], x))  # x_0 .. x_D

    def g(j, m):  # m-th derivative of lam x_j^d at x* (j = 0: x_0 = 1 is not a coordinate)
        return 0.0 if j == 0 and m > 0 else pw(xp[j], m)

    def pure(i, m):  # (coordinate, coefficient) of the pure m-th derivatives of f_i (0-based i)
        k = i + 1
        return ([(k - 2, g(k - 1, m))] if k >= 2 else []) + [(k - 1, -g(k, m))]

    def contract(m, diag):  # sum over pure m-th derivatives of f against diag (per level)
        return np.array([sum(c * diag[l] for l, c in pure(i, m)) for i in range(D)])

    A = np.zeros((D, D))
    DQ = np.zeros((D, D))  # gradient of Q_ii = arrivals + departures of level i
    for i in range(D):
        k = i + 1
        if k >= 2:
            A[i, i - 1] += g(k - 1, 1)
            DQ[i, i - 1] += g(k - 1, 1)
        A[i, i] += -g(k, 1) - mu
        DQ[i, i] += -g(k, 1) + mu
        if k < D:
            A[i, i + 1] += mu
            DQ[i, i + 1] -= mu
    q = np.array([g(k - 1, 0) - g(k, 0) + mu * (xp[k] - (xp[k + 1] if k < D else 0.0)) for k in range(1, D + 1)])
    W = linalg.solve_continuous_lyapunov(A, -np.diag(q))
    W = 0.5 * (W + W.T)
    V = -np.linalg.solve(A, 0.5 * contract(2, np.diag(W)))

    dW = np.diag(W)
    # M4 at leading order (Isserlis): M4(l, l, j, k) = W_ll W_jk + 2 W_lj W_lk
    M4llj = lambda l, j, k: dW[l] * W[j, k] + 2 * W[l, j] * W[l, k]  # noqa: E731
    rhs = np.zeros((D, D, D))
    for i in range(D):
        for j in range(D):
            for k in range(D):
                t2 = sum(0.5 * c * M4llj(l, r1, r2) for s, r1, r2 in ((i, j, k), (j, i, k), (k, i, j))
                         for l, c in pure(s, 2))
                t3 = sum(q[p] * V[r] + DQ[p] @ W[:, r] for p, pp, r in ((i, j, k), (i, k, j), (j, k, i)) if p == pp)
                rhs[i, j, k] = -(t2 + t3)
    lam_A, U = np.linalg.eig(A)
    Ui = np.linalg.inv(U)
    # (A (+) A (+) A) vec T = rhs, solved in A's eigenbasis (A is diagonalisable here)
    R = np.einsum("ai,bj,ck,ijk->abc", Ui, Ui, Ui, rhs)
    R = R / (lam_A[:, None, None] + lam_A[None, :, None] + lam_A[None, None, :])
    T = np.real(np.einsum("ai,bj,ck,ijk->abc", U, U, U, R))
    S = np.array([[sum(0.5 * c * T[l, l, j] for l, c in pure(i, 2))
                   + sum(c / 6.0 * 3.0 * dW[l] * W[l, j] for l, c in pure(i, 3)) for j in range(D)] for i in range(D)])
    Qterm = np.diag(DQ @ V + 0.5 * contract(2, dW))
    W2 = linalg.solve_continuous_lyapunov(A, -(S + S.T + Qterm))
    rhs1 = (0.5 * contract(2, np.diag(W2)) + contract(3, np.array([T[l, l, l] for l in range(D)])) / 6.0
            + contract(4, 3.0 * dW ** 2) / 24.0)
    Acoef = -np.linalg.solve(A, rhs1)
    return {"x": x, "V": V, "A": Acoef, "W": W, "W2": 0.5 * (W2 + W2.T), "T": T}
