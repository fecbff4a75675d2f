"""LL(d) = lwl(d) (join the least workload of d sampled servers) as n -> infinity, any service law.

Source: T. Hellemans, B. Van Houdt, "On the power-of-d-choices with least loaded server
selection", Proc. ACM Meas. Anal. Comput. Syst. (POMACS) 2(2), 2018, arXiv 1802.05420,
sections 3-5; T. Hellemans' thesis (``LL_analysis_general.m``);
/work/shared/notes/limits.md, section 2. The queue at the cavity is proven exact for
LL(d) with any service law (Bramson, Lu & Prabhakar, Queueing Systems 71, 2012).

``F(w) = P(workload > w)`` of one server (the time it needs to clear what it holds), ``G``
the survival function of the service time, ``rho = lam E[S]``. Equivalent forms:

* ``F(w) = rho - lam int_0^w (1 - F(u)^d) G(w - u) du``  [HV18, eq. (3)];
* ``F(w) = lam Gbar1(w) + lam int_0^w F(u)^d G(w - u) du`` with ``Gbar1(w) = int_w^inf G``
  (the same equation, subtracting ``lam int_0^w G(w - u) du``; the form integrated here,
  because ``F^d`` is small where the convolution is long);
* phase-type ``(alpha, T)``, ``s = -T 1``: the initial-value problem
  ``F' = -lam [(1 - F^d) - alpha xi]``, ``xi' = (1 - F^d) s + T xi``, ``F(0) = rho``,
  ``xi(0) = 0`` [HV18, section 5].

An arrival waits iff all d sampled servers have work (``F(0)^d = rho^d``) and then waits
the least of d workloads: FCFS waiting time ``P(W > w) = F(w)^d``, ``E[W] = int_0^inf F^d``,
``E[R] = E[S] + E[W]``; customers per server by Little, ``lam E[R]``.
Exponential service (rate 1): ``F(w) = (lam + (lam^(1-d) - lam) e^((d-1) w))^(1/(1-d))``
[HV18, section 4], and for d = 2 ``E[Q] = -log(1 - lam^2)/lam``.

Finite means. At large w, ``F(w) ~ lam Gbar1(w)`` (the convolution term is smaller), so
``E[W] = int F^d`` is finite iff ``int (Gbar1)^d < inf``. Lomax (shape a): ``Gbar1(w) ~
w^(1-a)``, finite iff ``d (a - 1) > 1``, i.e. a > 1 + 1/d: LL(2) has a finite mean
response time for a > 1.5 although ``E[S^2] = inf`` for a <= 2 (the M/G/1, d = 1, needs
a > 2, Pollaczek-Khinchine). Lognormal, Weibull, deterministic and phase-type laws have
all moments: always finite. Where infinite, the functions return ``inf``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate

from . import _check
from .service import ServiceLaw, parse_service

__all__ = ["lwl_fixed_point", "lwl_exponential_F", "lwl_mean_wait_finite"]


def lwl_mean_wait_finite(service, d) -> bool:
    """True iff the LL(d) mean waiting time is finite (see the module doc): Lomax needs
    ``d (shape - 1) > 1``; every other law lbmc knows has all moments."""
    law = parse_service(service)
    d = _check.integer("d", d, lo=1)
    if law.kind == "lomax":
        return d * (law.shape - 1) > 1
    return True


def lwl_exponential_F(lam, d, w):
    """Closed form of ``F(w)`` for Exp(1) requirements and speed 1 [HV18, section 4]:
    ``(lam + (lam^(1-d) - lam) e^((d-1) w))^(1/(1-d))`` (d >= 2), ``lam e^-(1-lam) w`` (d = 1)."""
    lam = _check.real("lam", lam, lo=0, lo_open=True, hi=1, hi_open=True)
    d = _check.integer("d", d, lo=1)
    w = np.asarray(w, dtype=float)
    if d == 1:
        return lam * np.exp(-(1 - lam) * w)
    with np.errstate(over="ignore"):
        return np.power(lam + (lam ** (1 - d) - lam) * np.exp((d - 1) * w), 1.0 / (1 - d))


# ----------------------------------------------------------------------------------
# phase-type: the initial-value problem
# ----------------------------------------------------------------------------------


GRID, GRID_POINTS = 0.01, 4096  # the returned F's spacing (requirement units) and points per piece


def _lwl_ph(lam, d, ph, rtol, wmax):
    """E[W] = int F^d for requirement law ph (mean 1, speed 1) by the IVP of [HV18, sec. 5].

    Integrated in pieces of doubling length until the remaining int_W^inf F^d,
    estimated as F(W)^d / (d theta) with theta = -F'/F at W, is below 1e-15 (1 + E[W]).
    Returns (E[W], accuracy, w grid, F on it)."""
    m = ph.m
    T, s, alpha = ph.T, ph.exit, ph.alpha

    def rhs(_w, y):
        F, xi = y[0], y[1: m + 1]
        Fd = F**d if F > 0 else 0.0
        dF = -lam * ((1 - Fd) - alpha @ xi)
        dxi = (1 - Fd) * s + T @ xi
        return np.concatenate(([dF], dxi, [Fd]))

    y = np.zeros(m + 2)
    y[0] = lam
    w0, L = 0.0, 8.0
    ws, Fs = [0.0], [lam]
    rest = math.inf
    while w0 < wmax:
        sol = integrate.solve_ivp(rhs, (w0, w0 + L), y, method="DOP853", rtol=rtol, atol=1e-18, dense_output=True)
        if not sol.success:
            raise RuntimeError(f"LL(d) initial-value problem failed: {sol.message}")
        # F on a uniform grid of the piece (the solver's own steps are up to 0.5 apart, too
        # coarse for the quantiles read from F): spacing GRID, at most GRID_POINTS a piece
        t = np.linspace(w0, w0 + L, min(GRID_POINTS, max(64, math.ceil(L / GRID))) + 1)[1:]
        ws.extend(t.tolist())
        Fs.extend(sol.sol(t)[0].tolist())
        y = sol.y[:, -1]
        w0 += L
        F = y[0]
        slope = rhs(w0, y)[0]
        theta = -slope / F if F > 0 else math.inf
        rest = F**d / (d * theta) if F > 0 and theta > 0 else (0.0 if F <= 0 else math.inf)
        if rest < 1e-15 * (1 + y[-1]):
            break
        L *= 2
    EW = float(y[-1]) + (rest if math.isfinite(rest) else 0.0)
    # rtol on the integral, plus what is left beyond the end
    acc = rtol * 10 * (1 + EW) + (rest if math.isfinite(rest) else math.inf)
    return EW, acc, np.array(ws), np.array(Fs)


# ----------------------------------------------------------------------------------
# any law: the Volterra equation on a grid (product trapezoid)
# ----------------------------------------------------------------------------------

_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)
_CLOSED_M = 8  # intervals near 0 (t < 8 h) use the closed forms


def _weights(law: ServiceLaw, h, N):
    """Product-trapezoid weights for int_0^{w_i} psi(u) G(w_i - u) du with psi piecewise
    linear on the grid: interval offset m (t = w_i - u in [m h, (m+1) h]) contributes
    psi_{i-1-m} W1[m] + psi_{i-m} W2[m], ``W1 = int (t/h - m) G``, ``W2 = int (m+1 - t/h) G``.

    Exact integrals of G (closed forms of G1 = int G and H = int t G) where there is no
    cancellation (m < 8) or G jumps (deterministic); 8-point Gauss-Legendre of G (smooth
    away from 0) elsewhere, which avoids the cancellation of the closed forms at large m."""
    m = np.arange(N, dtype=float)
    W1 = np.empty(N)
    W2 = np.empty(N)
    k = N if not law.smooth else min(N, _CLOSED_M)
    a, b = m[:k] * h, (m[:k] + 1) * h
    I0 = law.int_survival(b) - law.int_survival(a)
    I1 = law.int_t_survival(b) - law.int_t_survival(a)
    W1[:k] = I1 / h - m[:k] * I0
    W2[:k] = (m[:k] + 1) * I0 - I1 / h
    if k < N:
        mm = m[k:, None]
        x = (mm + 0.5 + 0.5 * _GL_X[None, :])  # t/h at the nodes
        g = law.survival(x * h) * (0.5 * h) * _GL_W[None, :]
        W1[k:] = np.sum((x - mm) * g, axis=1)
        W2[k:] = np.sum((mm + 1 - x) * g, axis=1)
    return np.maximum(W1, 0.0), np.maximum(W2, 0.0)


def _march(lam, d, law, h, N, stop=1e-17):
    """F on the grid w_i = i h, i = 0..N-1 at most, by marching the Volterra equation
    (Newton on the one unknown of each step); stops early once F^d < stop."""
    W1, W2 = _weights(law, h, N)
    w = np.arange(N) * h
    base = lam * law.tail_int(w)
    F = np.empty(N)
    psi = np.empty(N)
    F[0] = lam  # Gbar1(0) = E[S] = 1
    psi[0] = lam**d
    c0 = lam * W2[0]
    n = N
    for i in range(1, N):
        conv = np.dot(psi[i - 1::-1], W1[:i])
        if i > 1:
            conv += np.dot(psi[i - 1:0:-1], W2[1:i])
        c = base[i] + lam * conv
        x = F[i - 1]
        for _ in range(30):  # x = c + c0 x^d, monotone: Newton from the previous value
            fx = x - c - c0 * x**d
            dx = fx / (1 - c0 * d * x ** (d - 1))
            x -= dx
            if abs(dx) <= 1e-16 * max(x, 1e-300):
                break
        F[i] = x
        psi[i] = x**d
        if psi[i] < stop:
            n = i + 1
            break
    return w[:n], F[:n]


def _trapz(y, h):
    return float(h * (y.sum() - 0.5 * (y[0] + y[-1])))


def _subexponential(law) -> bool:
    """Laws whose tail is heavier than every exponential (Lomax, lognormal, Weibull shape < 1)."""
    return law.kind in ("lomax", "lognormal") or (law.kind == "weibull" and law.shape < 1)


def _tail_heavy(lam, d, law, W, F_W, M_psi):
    """int_W^inf F^d for a subexponential law, from the asymptotics of the integral equation:
    ``F(w) = lam Gbar1(w) + lam int_0^w F^d(u) G(w - u) du ~ lam Gbar1(w) + lam G(w) M + lam F(w)^d``
    (M = int_0^inf F^d; the convolution splits into its two ends, u small and w - u small).

    Returns (value, uncertainty): the uncertainty is the larger of the change when the
    G(w) M term is dropped and d times the relative mismatch of the asymptotic form with
    the computed F(W), times the value."""
    if law.kind == "lomax" and d * (law.shape - 1) <= 1:
        return math.inf, math.inf

    def F_asym(w, M):
        c = lam * (law.tail_int(w) + law.survival(w) * M)
        x = c
        for _ in range(50):  # x = c + lam x^d (x small): fixed point
            x = c + lam * x**d
        return x

    v2 = integrate.quad(lambda w: F_asym(w, M_psi) ** d, W, math.inf, limit=400, epsabs=0, epsrel=1e-10)[0]
    v1 = integrate.quad(lambda w: F_asym(w, 0.0) ** d, W, math.inf, limit=400, epsabs=0, epsrel=1e-10)[0]
    mismatch = abs(float(F_asym(W, M_psi)) - F_W) / F_W if F_W > 0 else 0.0
    return v2, max(abs(v2 - v1), d * mismatch * v2)


def _tail_light(d, w, F):
    """int_W^inf F^d for a light-tailed law: F decays exponentially; its rate theta from the
    log-slope over the last tenth of the grid; value F(W)^d / (d theta), uncertainty half
    of it (0 when F^d has already reached 1e-17)."""
    if F[-1] ** d < 1e-17 or F.size < 20:
        return 0.0, 0.0
    j = int(F.size * 0.9)
    theta = -(math.log(F[-1]) - math.log(F[j])) / (w[-1] - w[j])
    if not theta > 0:
        return math.inf, math.inf
    v = F[-1] ** d / (d * theta)
    return v, 0.5 * v


def _lwl_grid(lam, d, law, h, n_max):
    """E[W] by the grid at steps h and 2h (the difference is the discretisation error
    estimate) plus the tail beyond the grid (:func:`_tail_light` or :func:`_tail_heavy`).
    The grid runs until F^d < 1e-17 or for n_max points."""
    heavy = _subexponential(law)
    w, F = _march(lam, d, law, h, n_max)
    N = F.size
    w2, F2 = _march(lam, d, law, 2 * h, (N + 1) // 2, stop=0.0)
    res = []
    for ww, FF, hh in ((w2, F2, 2 * h), (w, F, h)):
        body = _trapz(FF**d, hh)
        if heavy:
            tail, err = _tail_heavy(lam, d, law, ww[-1], FF[-1], body)
            if math.isfinite(tail):
                tail, err = _tail_heavy(lam, d, law, ww[-1], FF[-1], body + tail)
        else:
            tail, err = _tail_light(d, ww, FF)
        res.append((body + tail, err))
    (E2, _), (E1, e1) = res
    if not math.isfinite(E1):
        return math.inf, math.inf, w, F
    return E1, abs(E1 - E2) + e1, w, F


def lwl_fixed_point(lam, d, *, mu=1.0, service="exponential", method="auto", h=0.01, n_max=1 << 14,
                    rtol=1e-12, K=10):
    """LL(d) (lbmc's ``lwl(d)``), one pool of speed mu, unlimited buffers, n -> infinity.

    Parameters
    ----------
    lam : arrival rate per server (per unit time), ``0 < lam < mu``.
    d : servers sampled per arrival (integer >= 1; d = 1 is random routing, an M/G/1).
    mu : speed (requirement units per unit time); times scale by 1/mu.
    service : lbmc's text (``"lognormal:scv=4"``), a :class:`ServiceLaw` or a
        :class:`PhaseType`; mean 1.
    method : ``"ph"`` (the initial-value problem; phase-type laws only), ``"grid"`` (the
        integral equation on a grid, any law) or ``"auto"`` (``"ph"`` when the law is
        phase-type).
    h : grid step in requirement units (``"grid"``); the result at h is compared with 2h.
    n_max : most grid points (the rest of the range is covered by the asymptotic tail).
    rtol : relative tolerance of the ODE solver (``"ph"``).
    K : tail levels of the returned ``tail`` (all NaN: the queue-length law of LL(d) is not
        computed here).

    Returns
    -------
    dict with the results-file names: ``p_wait = rho^d``, ``p_block = 0``,
    ``mean_wait = int F^d`` (time), ``mean_sojourn = 1/mu + mean_wait``,
    ``mean_queue`` (1,) = ``lam mean_sojourn`` (Little), ``utilization`` (1,) = rho,
    ``throughput = lam``, ``admitted_share`` (1,) = 1, ``messages_per_arrival = 2d``,
    ``withdrawals_per_arrival = 0``, ``tail`` (1, K) NaN; and ``w`` and ``F`` (the
    workload survival function on the points computed, time units), ``method``,
    ``accuracy`` (absolute, time units, on ``mean_wait``: ODE tolerance plus the tail for
    ``"ph"``; ``|E_h - E_2h|`` plus the tail's uncertainty for ``"grid"``),
    ``finite`` (False: the mean wait is infinite and every time/queue metric is ``inf``).
    """
    mu = _check.real("mu", mu, lo=0, lo_open=True)
    lam = _check.real("lam", lam, lo=0, lo_open=True)
    d = _check.integer("d", d, lo=1)
    K = _check.integer("K", K, lo=1)
    law = parse_service(service)
    rho = lam / mu
    if rho >= 1:
        raise ValueError(f"lam = {lam:g} is not allowed with mu = {mu:g}; LL(d) with unlimited buffers needs "
                         f"lam < mu (rho = {rho:g})")
    if method == "auto":
        method = "ph" if law.ph is not None else "grid"
    if method not in ("ph", "grid"):
        raise ValueError(f"method = {method!r} is not allowed; 'auto', 'ph' or 'grid' is required")
    h = _check.real("h", h, lo=0, lo_open=True)
    n_max = _check.integer("n_max", n_max, lo=16)
    finite = lwl_mean_wait_finite(law, d)
    if not finite:
        EW, acc, w, F = math.inf, 0.0, np.array([0.0]), np.array([rho])
    elif method == "ph":
        if law.ph is None:
            raise ValueError(f"method = 'ph' is not allowed for service '{law.text}'; it is not phase-type "
                             "(use method 'grid')")
        EW, acc, w, F = _lwl_ph(rho, d, law.ph, rtol, wmax=1e7)
    else:
        EW, acc, w, F = _lwl_grid(rho, d, law, h, n_max)
    EW /= mu
    acc /= mu
    sojourn = 1.0 / mu + EW
    return {
        "p_wait": rho**d,
        "p_block": 0.0,
        "p_wait_or_block": rho**d,
        "mean_wait": EW,
        "mean_sojourn": sojourn,
        "mean_queue": np.array([lam * sojourn]),
        "utilization": np.array([rho]),
        "admitted_share": np.array([1.0]),
        "throughput": lam,
        "messages_per_arrival": 2.0 * d,
        "withdrawals_per_arrival": 0.0,
        "tail": np.full((1, K), np.nan),
        "w": np.asarray(w) / mu,
        "F": np.asarray(F),
        "method": method,
        "accuracy": acc,
        "finite": finite,
    }
