"""The mean-field ODE of the occupancy chain, exactly as the C side integrates it.

The drift is that of ``src/engine/occ_meanfield.c`` (the occupancy engine's mean-field
start) with the routing laws of ``src/policies/occ_laws.c`` (``lbmc_occ_law_min_of``,
``lbmc_occ_law_lowest``) and ``src/policies/pull.c`` (``lbmc_pull_occ_law``); see
docs/occupancy.md. For the fractions ``s_j(k)`` of pool j's servers at level k
(k = 0 .. levels-1):

    ``d s_j(k)/dt = lambda/b_j (p_j(k-1) - p_j(k))
                   + mu_j (min(k+1, L_j) s_j(k+1) - min(k, L_j) s_j(k))``

with ``p_j(k)`` the policy's routing law (the probability that an arrival is sent to a
server of pool j at level k; arrivals to a server at its buffer ``B_j`` are blocked, and
at the top level ``levels - 1`` they are dropped: the C side adds levels until the top
holds less than 1e-15), ``b_j = N_j / n`` and ``L_j`` the pool's service slots (speeds
``mu_j min(k, L_j)``, the linear speed lists the occupancy engine takes). Laws:

* ``random``: ``p_j(k) = b_j s_j(k)``;
* ``jsq(d)``: with ``A_k = sum_j b_j x_j(k)`` (``x_j(k) = sum_{l >= k} s_j(l)``), all d
  draws at level >= k with probability ``A_k^d`` (with replacement, and the n -> infinity
  limit of both samplings) or ``prod_{i<d} (n A_k - i)/(n - i)`` (distinct, finite n);
  ``p_j(k) = (P_k - P_{k+1}) b_j s_j(k) / sum_i b_i s_i(k)``;
* ``balanced(c)``: the same with draws weighted by ``mu_j`` (``a_j = b_j mu_j / sum``),
  ``P_k = A_k^c``;
* ``jsq`` (full): the lowest occupied level k0 takes everything, shared in proportion to
  the counts ``n b_j s_j(k0)``; at finite n a level with fewer than one server takes only
  that fraction of the arrivals (the C side's interpolation between integer counts);
* ``pull`` / ``jiq`` (any R, ``withdraw``; ``keep`` with R = 1): an idle slot (pool j,
  level k < L_j, weight ``(L_j - k) s_j(k)``) while there is one, else a uniform server;
  ``q = min(1, I)`` with ``I`` the number of idle slots (``n sum_j b_j ...``).

With ``n = None`` (the default) every law is its n -> infinity limit (jsq(d) ``A^d`` for
both samplings; full jsq and pull route all arrivals to the lowest level / an idle slot
whenever one has positive mass). A finite n reproduces the C side's law at that n, which
is the exact law of the finite chain for jsq(d) (both samplings), jsq, random and pull
with one router (:mod:`lbmc_analysis.limits.exact` builds that chain).

The ODE is integrated with ``scipy.integrate.solve_ivp`` (LSODA, rtol 1e-10, atol 1e-13);
fixed points are refined by Newton's method with a complex-step Jacobian to a residual
below 1e-14 (rates per unit time). Tested against the closed forms of
:mod:`lbmc_analysis.meanfield` (JSQ(d) with and without buffers, PULL, random and
rate-proportional routing) to 1e-8.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate

from .. import meanfield as _mf
from . import _check
from ._metrics import occupancy_metrics

__all__ = ["OccupancyModel", "parse_tail_start", "transient", "fixed_point", "POLICIES"]

POLICIES = ("random", "jsq(d)", "jsq", "balanced(c)", "pull", "jiq")
LEVELS0 = 32
LEVELS_MAX = 16384
TOP_TOL = 1e-15

def parse_policy(text):
    """``"jsq(2)" -> ("jsq", 2)``, ``"jsq" -> ("jsq", None)``, ``"jiq" -> ("jiq", None)`` (the
    syntax of :func:`lbmc_analysis.meanfield.parse_policy`, which folds jiq into pull; here
    jiq stays apart because it sets ``stale: keep``)."""
    if not isinstance(text, str) or not _mf._POLICY_RE.match(text.lower()):
        raise ValueError(f"policy = {text!r} is not allowed; e.g. 'jsq(2)', 'jsq', 'random', 'pull', 'jiq', "
                         "'balanced(2)', 'lwl(2)' is required")
    m = _mf._POLICY_RE.match(text.lower())
    return m.group(1), (int(m.group(2)) if m.group(2) is not None else None)


def _pos(x, clip):
    if not clip:
        return x
    return np.where(np.real(x) > 0, x, 0)


def _slots(mu, mu_k, slots, J):
    """(mu, L): per-slot speed and slot count per pool, from mu_k lists or slots."""
    L = np.ones(J, dtype=int)
    mu = np.array(mu, dtype=float)
    if mu_k is not None:
        if len(mu_k) != J:
            raise ValueError(f"mu_k = {mu_k!r} is not allowed; one speed list (or None) per pool ({J}) is required")
        for j, lst in enumerate(mu_k):
            if lst is None:
                continue
            r = np.atleast_1d(np.asarray(lst, dtype=float))
            if r.size < 1 or np.any(~np.isfinite(r)) or np.any(r <= 0):
                raise ValueError(f"mu_k[{j + 1}] = {r.tolist()} is not allowed; speeds > 0 are required")
            lin = r[0] * np.arange(1, r.size + 1)
            if np.any(np.abs(r - lin) > 1e-12 * r):
                raise ValueError(f"mu_k[{j + 1}] = {r.tolist()} is not allowed here; the occupancy form (and its "
                                 "ODE) needs linear speed lists mu_k = k mu_k[1] (the C side's occupancy engine "
                                 "has the same limit)")
            mu[j] = r[0]
            L[j] = r.size
    if slots is not None:
        s = np.atleast_1d(np.asarray(slots))
        if s.size == 1:
            s = np.repeat(s, J)
        if s.size != J:
            raise ValueError(f"slots = {slots!r} is not allowed; a scalar or one count per pool is required")
        L = np.array([_check.integer(f"slots[{j + 1}]", v, lo=1, hi=64) for j, v in enumerate(s.tolist())])
    return mu, L


class OccupancyModel:
    """One lbmc model in occupancy form: the C side's mean-field drift and jump rates.

    Parameters
    ----------
    policy : ``"random"``, ``"jsq(d)"``, ``"jsq"``, ``"balanced(c)"``, ``"pull"``, ``"jiq"``.
    lam : arrival rate per server (per unit time).
    beta, mu : per pool fractions (sum 1) and speeds (per-slot speed with slots).
    buffer : None / scalar / per pool (-1, inf, None = unlimited).
    mu_k : optional per-pool speed lists ``[mu(1), .., mu(L)]``; must be linear (k mu).
    slots : optional per-pool slot counts L_j (``mu`` is then the per-slot speed).
    n : servers; None (default) for the n -> infinity laws. With a finite n the pools get
        ``N_j`` servers by largest-remainder rounding and ``b_j = N_j / n`` (as in C).
    sampling : ``"distinct"`` or ``"with_replacement"`` (jsq(d)).
    routers, stale : pull only; ``keep`` with more than one router has no occupancy form.
    levels : levels 0 .. levels-1 per pool; default ``max_j B_j + 1`` when every buffer is
        finite, else 32 (grown by :func:`fixed_point` like the C side).

    The state is given either as ``s`` (..., J, levels) fractions at each level, or as
    tails ``x`` (..., J, levels-1) (``x_j(k)``, k = 1..levels-1), the coordinates used by
    :mod:`lbmc_analysis.limits.refined_mf`. Every method accepts complex arrays (complex-step
    derivatives) and leading batch axes.
    """

    def __init__(self, policy, lam, beta=(1.0,), mu=(1.0,), buffer=None, *, mu_k=None, slots=None, n=None,
                 sampling="distinct", routers=1, stale="withdraw", levels=None):
        name, param = parse_policy(policy)
        if name == "lwl":
            raise ValueError("policy = 'lwl(d)' has no occupancy form (it reads workloads); use "
                             "lbmc_analysis.limits.lwl_fixed_point")
        if name not in ("random", "jsq", "balanced", "pull", "jiq"):
            raise ValueError(f"policy = {policy!r} is not allowed; one of {', '.join(POLICIES)} is required")
        if name in ("random", "pull", "jiq") and param is not None:
            raise ValueError(f"policy = {policy!r} is not allowed; {name} takes no parameter")
        if name == "balanced" and param is None:
            raise ValueError(f"policy = {policy!r} is not allowed; balanced needs its c, e.g. 'balanced(2)'")
        if sampling not in ("distinct", "with_replacement"):
            raise ValueError(f"sampling = {sampling!r} is not allowed; 'distinct' or 'with_replacement' is required")
        if stale not in ("withdraw", "keep"):
            raise ValueError(f"stale = {stale!r} is not allowed; 'withdraw' or 'keep' is required")
        self.routers = _check.integer("routers", routers, lo=1)
        if name == "jiq":
            name, stale = "pull", "keep"
        if name == "pull" and stale == "keep" and self.routers > 1:
            raise ValueError("pull with stale = 'keep' and routers > 1 has no occupancy form (stale messages name "
                             "servers that may be busy: the state is per server); no ODE")
        self.lam = _check.real("lam", lam, lo=0)
        beta, mu, buf = _check.pools(beta, mu, buffer)
        self.J = beta.size
        self.mu, self.L = _slots(mu, mu_k, slots, self.J)
        if name == "pull" and self.routers > 1 and np.any(self.L > 1):
            raise ValueError("pull with a speed list and routers > 1 has no occupancy form; no ODE")
        self.buffer = buf
        if n is None or (isinstance(n, float) and math.isinf(n)):
            self.n = math.inf
            self.b = beta.copy()
        else:
            self.n = float(_check.integer("n", n, lo=1))
            from ..meanfield import pool_sizes

            N = pool_sizes(int(self.n), beta)
            if np.any(N < 1):
                raise ValueError(f"n = {n} is not allowed with beta = {beta.tolist()}; every pool needs a server")
            self.b = N / self.n
        self.beta = beta
        self.name = name
        self.d = 1 if name in ("random",) else (param if param is not None else None)
        if name == "jsq" and param is not None:
            self.d = _check.integer("d", param, lo=1)
        self.full = name == "jsq" and param is None
        self.sampling = sampling
        self.stale = stale
        self.policy = policy
        finite = all(not math.isinf(x) for x in buf)
        if levels is None:
            levels = int(max(buf)) + 1 if finite else LEVELS0
        self.levels = _check.integer("levels", levels, lo=2, hi=LEVELS_MAX)
        cap = float(np.sum(self.b * self.mu * self.L))
        self.rho = self.lam / cap

    # ---- laws -----------------------------------------------------------------------

    def _weights(self):
        if self.name == "balanced":
            a = self.b * self.mu
        else:
            a = self.b.copy()
        return a / a.sum()

    def _min_of(self, s, d, exact_distinct, clip, n=None):
        """lbmc_occ_law_min_of: (..., J, Lv) -> (..., J, Lv)."""
        n = self.n if n is None else n
        a = self._weights()
        sp = _pos(s, clip)
        tot = sp.sum(axis=-1, keepdims=True)
        if clip:
            tot = np.where(np.real(tot) > 0, tot, 1.0)
        frac = sp / tot  # (..., J, Lv)
        G = np.flip(np.cumsum(np.flip(frac, -1), axis=-1), -1)  # tails x_j(k), k = 0..Lv-1
        A = np.einsum("j,...jk->...k", a, G)
        A = np.concatenate((A, np.zeros(A.shape[:-1] + (1,), dtype=A.dtype)), axis=-1)  # A[Lv] = 0
        if exact_distinct and math.isfinite(n) and d <= 64:
            P = np.ones_like(A)
            for i in range(int(d)):
                P = P * _pos(n * A - i, clip) / (n - i)
        else:
            Ac = np.where(np.real(A) < 1, A, 1.0) if clip else A
            P = Ac**d
        mass = _pos(P[..., :-1] - P[..., 1:], clip)  # (..., Lv)
        if self.J == 1:  # the share of the one pool is 1 (C: 0 where den = 0, and then mass = 0 too)
            return mass[..., None, :]
        den = np.einsum("j,...jk->...k", a, frac)
        ok = np.real(den) > 0 if clip else np.real(den) != 0
        ratio = np.where(ok, mass / np.where(ok, den, 1.0), 0.0)
        return a[:, None] * frac * ratio[..., None, :]

    def _lowest(self, s, clip):
        """lbmc_occ_law_lowest (full JSQ)."""
        sp = _pos(s, clip)
        Lv = s.shape[-1]
        out = np.zeros_like(sp)
        left = np.ones(s.shape[:-2], dtype=s.dtype)
        for k in range(Lv):
            cnt_frac = np.einsum("j,...j->...", self.b, sp[..., :, k])  # servers at level k / n
            if math.isinf(self.n):
                share = np.where(np.real(cnt_frac) > 0, 1.0, 0.0) * left
            else:
                cnt = self.n * cnt_frac
                share = np.where(np.real(cnt) < 1, cnt, 1.0) * left
            ok = np.real(cnt_frac) > 0
            out[..., :, k] = np.where(ok[..., None], share[..., None] * self.b * sp[..., :, k]
                                      / np.where(ok, cnt_frac, 1.0)[..., None], 0.0)
            left = left - share
        return out

    def _pull(self, s, clip):
        """lbmc_pull_occ_law."""
        sp = _pos(s, clip)
        Lv = s.shape[-1]
        k = np.arange(Lv)
        idle_w = np.where(k[None, :] < self.L[:, None], self.L[:, None] - k[None, :], 0.0)  # (J, Lv)
        idle = self.b[:, None] * idle_w * sp  # per n
        I_frac = idle.sum(axis=(-2, -1))
        if math.isinf(self.n):
            q = np.where(np.real(I_frac) > 0, 1.0, 0.0)
        else:
            I = self.n * I_frac
            q = np.where(np.real(I) < 1, I, 1.0)
        uni = self._random(s, clip)
        ok = np.real(I_frac) > 0
        pref = np.where(ok[..., None, None], idle / np.where(ok, I_frac, 1.0)[..., None, None], 0.0)
        return (1 - q)[..., None, None] * uni + q[..., None, None] * pref

    def _random(self, s, clip):
        """lbmc_occ_law_min_of with d = 1: ``p_j(k) = a_j s_j(k) / tot_j`` (a_j = b_j, or the
        mu-weighted draw of balanced(1)), written without the ratio of the general case (the
        same numbers; derivatives stay exact at empty levels)."""
        a = self._weights()
        sp = _pos(s, clip)
        tot = sp.sum(axis=-1, keepdims=True)
        if clip:
            tot = np.where(np.real(tot) > 0, tot, 1.0)
        return a[:, None] * sp / tot

    def law(self, s, *, clip=True, n=None):
        """Routing law p (..., J, Lv) for the state s (..., J, Lv) (sums to 1 over classes).

        ``clip=False`` drops the C side's clipping of negative fractions (for derivatives
        at states on the boundary); ``n`` overrides the model's n (jsq(d) distinct only)."""
        if self.name == "random" or (self.name == "balanced" and self.d == 1):
            return self._random(s, clip)
        if self.name == "balanced":
            return self._min_of(s, self.d, False, clip)
        if self.name == "jsq" and not self.full:
            return self._min_of(s, self.d, self.sampling == "distinct", clip, n=n)
        if self.full:
            return self._lowest(s, clip)
        return self._pull(s, clip)

    def law_correction(self, s):
        """``lim n (p_n - p_inf)``: the 1/n term of the law (jsq(d) distinct and balanced(c);
        0 for the other laws, which do not depend on n near a fixed point with idle servers).

        jsq(d) distinct: ``prod_{i<d} (A - i/n)/(1 - i/n) = A^d + (d(d-1)/2) A^(d-1) (A - 1) / n
        + O(1/n^2)``. balanced(c) always draws c distinct servers (docs/model.md; the sampling
        key does not apply): see :meth:`_balanced_correction`."""
        if self.name == "balanced" and self.d > 1:
            return self._balanced_correction(s)
        if not (self.name == "jsq" and not self.full and self.sampling == "distinct" and self.d > 1):
            return np.zeros_like(s)
        d = self.d
        a = self._weights()
        frac = s
        G = np.flip(np.cumsum(np.flip(frac, -1), axis=-1), -1)
        A = np.einsum("j,...jk->...k", a, G)
        A = np.concatenate((A, np.zeros(A.shape[:-1] + (1,), dtype=A.dtype)), axis=-1)
        P1 = 0.5 * d * (d - 1) * A ** (d - 1) * (A - 1)
        mass = P1[..., :-1] - P1[..., 1:]
        if self.J == 1:
            return mass[..., None, :]
        den = np.einsum("j,...jk->...k", a, frac)
        ok = np.real(den) != 0
        ratio = np.where(ok, mass / np.where(ok, den, 1.0), 0.0)
        return a[:, None] * frac * ratio[..., None, :]

    def _balanced_correction(self, s):
        """The 1/n term of balanced(c)'s law: c distinct servers drawn one after another, each
        with probability proportional to its speed among those not yet drawn (src/policies/
        balanced.c), the fewest customers, ties uniform among the drawn positions.

        Derivation (a first-order expansion of the exact law, no further approximation): in
        classes (pool i, level l) the exact probability of an ordered draw sequence is
        ``prod_r (N_{c_r} - m_r) mu_{c_r} / (W - sigma_r)`` (m_r: earlier draws of class c_r,
        sigma_r: their speeds' sum, W = n wbar the total speed, wbar = sum_i b_i mu_i), i.e.
        the i.i.d. law pi_{i,l} = b_i mu_i s_i(l) / wbar times ``1 + (1/n) sum_{r<r'}
        (mu_{c_r} / wbar - 1{c_r = c_r'} / (b s)_{c_r}) + O(1/n^2)``. The routing outcome is
        symmetric in the draws, so each of the c(c-1)/2 pairs gives the same term and

            ``p1 = c(c-1)/2 / wbar (G_1 - G_2)``, ``G_t = E[mu_{c_1} f(c_1 x t, c_{t+1}, .., c_c)]``

        (f the routing outcome, the first class drawn t times, the rest i.i.d. pi). With q =
        pi-mass at level k, A' = pi-mass above k and M the other draws at level k:
        ``G_t[j, k] = pi_{j,k} (t mu_j S0 + Mk S1 + H S2)``, ``Mk = sum_i mu_i pi_{i,k}``, ``H =
        sum_{i, l > k} mu_i pi_{i,l}``, ``S0 = sum_M C(m,M) q^M A'^(m-M) / (t+M)``, ``S1 =
        sum_M C(m,M) M q^(M-1) A'^(m-M) / (t+M)``, ``S2 = sum_{M>=1} C(m,M) q^(M-1) A'^(m-M)``,
        m = c - t. Equal speeds give jsq(c) distinct's term (tested; and against the exact
        finite-n law at n = 10^5 for unequal speeds)."""
        c = int(self.d)
        a = self._weights()  # b_j mu_j / wbar
        wbar = float(np.sum(self.b * self.mu))
        G = np.flip(np.cumsum(np.flip(s, -1), axis=-1), -1)
        A = np.einsum("j,...jk->...k", a, G)
        A = np.concatenate((A, np.zeros(A.shape[:-1] + (1,), dtype=A.dtype)), axis=-1)
        q, Ap = A[..., :-1] - A[..., 1:], A[..., 1:]  # (..., Lv)
        pi = a[:, None] * s  # (..., J, Lv)
        Mk = np.einsum("j,...jk->...k", self.mu, pi)
        H = np.einsum("j,...jk->...k", self.mu * a, G)
        H = np.concatenate((H[..., 1:], np.zeros(H.shape[:-1] + (1,), dtype=H.dtype)), axis=-1)

        def G_t(t):
            m = c - t
            S0 = sum(math.comb(m, M) * q**M * Ap ** (m - M) / (t + M) for M in range(m + 1))
            S1 = sum(math.comb(m, M) * M * q ** (M - 1) * Ap ** (m - M) / (t + M) for M in range(1, m + 1))
            S2 = sum(math.comb(m, M) * q ** (M - 1) * Ap ** (m - M) for M in range(1, m + 1))
            return pi * (t * self.mu[:, None] * S0[..., None, :] + (Mk * S1 + H * S2)[..., None, :])

        return 0.5 * c * (c - 1) / wbar * (G_t(1) - G_t(2))

    # ---- coordinates --------------------------------------------------------------

    @staticmethod
    def s_from_x(x):
        """Tails x (..., J, K) -> fractions s (..., J, K+1)."""
        one = np.ones(x.shape[:-1] + (1,), dtype=x.dtype)
        xe = np.concatenate((one, x, np.zeros_like(one)), axis=-1)
        return xe[..., :-1] - xe[..., 1:]

    @staticmethod
    def x_from_s(s):
        """Fractions s (..., J, Lv) -> tails x (..., J, Lv-1)."""
        return np.flip(np.cumsum(np.flip(s, -1), axis=-1), -1)[..., 1:]

    # ---- drift --------------------------------------------------------------------

    def _open(self):
        """(Lv,) masks per pool: arrivals admitted at level k (k < B_j and k + 1 < Lv)."""
        Lv = self.levels
        k = np.arange(Lv)
        B = np.array([math.inf if math.isinf(b) else b for b in self.buffer])
        return (k[None, :] < B[:, None]) & (k[None, :] + 1 < Lv)

    def _service(self):
        Lv = self.levels
        k = np.arange(Lv)
        return self.mu[:, None] * np.minimum(k[None, :], self.L[:, None])  # (J, Lv)

    def drift_s(self, s, *, clip=True, n=None):
        """The C side's drift in the fractions s (..., J, Lv) (lbmc_mf_drift)."""
        p = self.law(s, clip=clip, n=n)
        up = self.lam / self.b[:, None]
        flow = np.where(self._open(), up * p, 0.0)  # admitted to level k -> k + 1
        dep = self._service() * s  # leaving level k -> k - 1
        f = -flow - dep
        f[..., 1:] += flow[..., :-1]
        f[..., :-1] += dep[..., 1:]
        return f

    def drift(self, x, *, clip=True, n=None):
        """The drift in tail coordinates x (..., J, K): ``dx_j(k)/dt = lam/b_j p_j(k-1) 1{k-1 < B_j}
        - mu_j min(k, L_j) s_j(k)``, K = levels - 1."""
        s = self.s_from_x(x)
        p = self.law(s, clip=clip, n=n)
        up = self.lam / self.b[:, None]
        flow = np.where(self._open(), up * p, 0.0)
        dep = self._service() * s
        return flow[..., :-1] - dep[..., 1:]

    def drift_correction(self, x):
        """``lim n (f_n - f_inf)`` in tail coordinates (see :meth:`law_correction`)."""
        s = self.s_from_x(x)
        p1 = self.law_correction(s)
        up = self.lam / self.b[:, None]
        flow = np.where(self._open(), up * p1, 0.0)
        return flow[..., :-1]

    def jump_rates(self, x, *, clip=True, n=None):
        """Rates per server of the two kinds of jumps, in tail coordinates (J, K):
        ``up[j, k-1]``: arrivals creating level k at a server of pool j (the jump
        ``+e_{j,k}/(n b_j)``, rate ``n up``); ``down[j, k-1]``: departures from level k (the
        jump ``-e_{j,k}/(n b_j)``, rate ``n down``). ``drift = (up - down) / b``."""
        s = self.s_from_x(x)
        p = self.law(s, clip=clip, n=n)
        flow = np.where(self._open(), self.lam * p, 0.0)
        dep = self.b[:, None] * self._service() * s
        return flow[..., :-1], dep[..., 1:]

    def empty(self):
        """The empty state as tails (J, levels-1)."""
        return np.zeros((self.J, self.levels - 1))

    def with_levels(self, levels):
        """A copy with another number of levels."""
        import copy

        c = copy.copy(self)
        c.levels = _check.integer("levels", levels, lo=2, hi=LEVELS_MAX)
        return c

    # ---- metrics of a state ----------------------------------------------------------

    def metrics(self, x, K=10):
        """Results-file metrics of the mean-field state x (J, levels-1), n -> infinity (or the
        model's n for the routing law): ``tail`` (J, K), ``mean_queue``, ``utilization``,
        ``admitted_share`` (J,), ``p_wait`` (admitted to a server with every slot busy),
        ``p_block``, ``p_wait_or_block``, ``throughput`` (``lam (1 - p_block)``),
        ``mean_sojourn`` (Little) and ``mean_wait`` (``mean_sojourn`` minus the mean service
        time ``sum_j share_j / mu_j``: exact for one slot; with slots a customer's service
        takes ``1 / mu_j`` too, as every slot serves at speed mu_j)."""
        x = np.asarray(x, dtype=float)
        s = self.s_from_x(x)
        p = self.law(s)
        Lv = self.levels
        k = np.arange(Lv)
        B = np.array([math.inf if math.isinf(b) else b for b in self.buffer])
        blocked = (k[None, :] >= B[:, None])
        busy = (k[None, :] >= self.L[:, None]) & ~blocked
        p_block = float(np.sum(np.where(blocked, p, 0.0)))
        p_wait = float(np.sum(np.where(busy, p, 0.0)))
        adm = np.sum(np.where(blocked, 0.0, p), axis=1)
        thr = self.lam * (1 - p_block)
        share = adm / adm.sum() if adm.sum() > 0 else self.b.copy()
        mean_queue = np.sum(x, axis=1)
        util = x[:, 0]
        Q = float(np.sum(self.b * mean_queue))
        soj = Q / thr if thr > 0 else float(np.sum(share / self.mu))
        tail = np.zeros((self.J, K))
        m = min(K, Lv - 1)
        tail[:, :m] = x[:, :m]
        return occupancy_metrics(tail=tail, mean_queue=mean_queue, utilization=util, share=share, p_wait=p_wait,
                                 p_block=p_block, throughput=thr, mean_sojourn=soj, mu=self.mu)


# ----------------------------------------------------------------------------------
# start states
# ----------------------------------------------------------------------------------


def parse_tail_start(text, J):
    """``"tail:F1,F2,...;G1,..."`` (rmf_tool's x0: per pool, separated by ';', the fraction of
    the pool's servers holding at least k customers, k = 1, 2, ..., non-increasing in [0, 1])
    -> list of J arrays. One list for several pools applies to every pool. ``"empty"`` gives
    zeros."""
    if isinstance(text, str) and text.strip() == "empty":
        return [np.zeros(0) for _ in range(J)]
    if not isinstance(text, str) or not text.strip().startswith("tail:"):
        raise ValueError(f"start = {text!r} is not allowed; 'empty' or 'tail:F1,F2,...' (pools separated by ';') "
                         "is required")
    parts = text.strip()[5:].split(";")
    if len(parts) == 1 and J > 1:
        parts = parts * J
    if len(parts) != J:
        raise ValueError(f"start = {text!r} is not allowed; one tail list or one per pool ({J}) is required")
    out = []
    for j, p in enumerate(parts):
        try:
            v = np.array([float(t) for t in p.split(",") if t.strip()], dtype=float)
        except ValueError:
            raise ValueError(f"start = {text!r} is not allowed; pool {j + 1}: numbers are required") from None
        if np.any(~np.isfinite(v)) or np.any(v < 0) or np.any(v > 1) or np.any(np.diff(v) > 1e-12):
            raise ValueError(f"start = {text!r} is not allowed; pool {j + 1}: fractions in [0, 1], non-increasing, "
                             "are required")
        out.append(v)
    return out


def _start_state(model, x0):
    """x0 (None, text, list of per-pool tails, or (J, K) array) -> tails (J, levels-1)."""
    K = model.levels - 1
    x = np.zeros((model.J, K))
    if x0 is None:
        return x
    if isinstance(x0, str):
        x0 = parse_tail_start(x0, model.J)
    if isinstance(x0, np.ndarray) and x0.ndim == 2:
        rows = list(x0)
    elif isinstance(x0, (list, tuple)) and len(x0) and np.ndim(x0[0]) == 0:
        rows = [np.asarray(x0, dtype=float)] * model.J
    else:
        rows = list(x0)
    if len(rows) != model.J:
        raise ValueError(f"x0 has {len(rows)} pools, the model {model.J}")
    for j, r in enumerate(rows):
        r = np.asarray(r, dtype=float)
        if r.size > K:
            raise ValueError(f"x0 pool {j + 1} has {r.size} levels, more than the model's {K}; raise levels")
        B = model.buffer[j]
        if not math.isinf(B) and np.any(r[int(B):] > 0):
            raise ValueError(f"x0 pool {j + 1} holds servers above its buffer {int(B)}")
        x[j, : r.size] = r
    return x


# ----------------------------------------------------------------------------------
# integration and fixed points
# ----------------------------------------------------------------------------------


def _rhs(model):
    J, K = model.J, model.levels - 1

    def f(_t, y):
        return model.drift(y.reshape(J, K)).ravel()

    return f


def jacobian(model, x, *, clip=False, n=None, eps=1e-30):
    """Jacobian of the drift at x (J, K) in tail coordinates, (J*K, J*K), by the complex step
    ``Im f(x + i eps e_k) / eps`` (exact to round-off for the analytic parts of the laws;
    Squire & Trapp, SIAM Review 40(1), 1998)."""
    J, K = x.shape
    D = J * K
    X = np.repeat(x.reshape(1, D).astype(complex), D, axis=0)
    X[np.arange(D), np.arange(D)] += 1j * eps
    F = model.drift(X.reshape(D, J, K), clip=clip, n=n).reshape(D, D)
    return (F.imag / eps).T


def trim(model, x, floor=1e-30):
    """(model, x) restricted to the levels up to the last one where some pool holds more than
    ``floor`` (at least 2 levels): the copy's drift differs by less than ``floor`` rates."""
    keep = np.nonzero(np.max(x, axis=0) > floor)[0]
    K = int(keep[-1]) + 2 if keep.size else 1
    K = min(max(K, 1), x.shape[1])
    if K == x.shape[1]:
        return model, x
    return model.with_levels(K + 1), x[:, :K].copy()


def _levels_for(model, x):
    """Grow the levels (doubling) while a pool's top level holds more than 1e-15."""
    top = max((float(x[j, -1]) for j in range(model.J) if model.buffer[j] >= model.levels), default=0.0)
    if top <= TOP_TOL or model.levels >= LEVELS_MAX:
        return None
    finite = all(not math.isinf(b) for b in model.buffer)
    if finite and model.levels >= int(max(model.buffer)) + 1:
        return None
    new = min(2 * model.levels, LEVELS_MAX)
    if finite:
        new = min(new, int(max(model.buffer)) + 1)
    return new


def fixed_point(model: OccupancyModel, x0=None, *, tol=1e-14, t_max=1e5):
    """Stationary point of the ODE, as the C side finds it (integrate from the empty state or
    x0, adding levels while the top holds more than 1e-15), then Newton steps on the drift
    (complex-step Jacobian, clipping off) until ``max |f| < tol`` (rates per unit time).

    ``t_max`` bounds the ODE time in units of the fastest rate (lam + the largest speed), as
    the C side's budget does.

    Returns (model, x): the model with its final number of levels and the tails (J, K).
    Raises RuntimeError when the ODE does not settle (queues growing linearly, or not
    stationary within the budget: unstable or too close to saturation; the C side then
    starts its replicas empty)."""
    m = model
    x = _start_state(m, x0)
    if m.name in ("jsq", "balanced") and not m.full and m.d > 1:
        from .cavity import necessary_stability

        a = m._weights()
        ok, margin = necessary_stability(m.lam, m.d, m.b, m.mu * m.L, m.buffer, a)
        if not ok:
            raise RuntimeError(f"the mean-field ODE does not settle: a set of pools receives more than its "
                               f"capacity (margin {margin:.4g} per server; Stolyar 2015's flow bound): unstable")
    cap = m.mu * m.L
    if all(math.isinf(b) for b in m.buffer) and m.rho >= 1:
        raise RuntimeError(f"the mean-field ODE does not settle: rho = {m.rho:.4g} >= 1 with unlimited buffers")
    if m.name == "random" or (m.name == "balanced" and m.d == 1):
        per = m.lam * m._weights() / m.b
        bad = [j + 1 for j in range(m.J) if math.isinf(m.buffer[j]) and per[j] >= cap[j]]
        if bad:
            raise RuntimeError(f"the mean-field ODE does not settle: pool(s) {bad} receive at least their capacity")
    rate = m.lam + float(np.max(cap))
    T = 50.0 / max(min(np.min(m.mu), m.lam if m.lam > 0 else 1.0), 1e-3)
    t_done, last_q, last_rate, steady = 0.0, 0.0, 0.0, 0
    while True:
        f = _rhs(m)
        while True:
            # LSODA (stiffness detection) for small systems; explicit Runge-Kutta, as the C side
            # uses, for many levels (LSODA's dense Jacobians would dominate)
            meth = "LSODA" if x.size <= 256 else "RK45"
            sol = integrate.solve_ivp(f, (0.0, T), x.ravel(), method=meth, rtol=1e-10, atol=1e-13)
            if not sol.success:
                raise RuntimeError(f"the mean-field ODE failed: {sol.message}")
            x = sol.y[:, -1].reshape(m.J, m.levels - 1)
            t_done += T
            r = float(np.max(np.abs(m.drift(x))))
            # runaway, as the C side judges it over long chunks: customers per server grow by
            # more than 1e-3 lam per time unit, the growth not slowing (a stable system relaxes,
            # at worst like sqrt(t): its rate falls by 1/sqrt(2) when the chunk doubles), 3 chunks
            # in a row. The chunks are at least 50 times the slowest mean time (1/lam, 1/mu_j),
            # the C side's 10 (src/engine/occ_meanfield.c, LBMC_MF_GROWTH_SPAN): over shorter
            # ones a stable system can fill at a steady rate for a long while (the C side's
            # phase-type ODE, JSQ(2) with H2 scv 20: 10-40% idle servers, growth not slowing
            # from ODE time 7 to 60); the C side's other rule, a saturated pool, is not needed
            # here (the flow bounds above refuse the overloaded pools first).
            q = float(np.sum(m.b[:, None] * x))
            g = (q - last_q) / T
            steady = steady + 1 if (g > 1e-3 * m.lam and g >= 0.95 * last_rate) else 0
            last_q, last_rate = q, g
            if steady >= 3:
                raise RuntimeError(f"the mean-field ODE does not settle: its queues keep growing ({g:.3g} "
                                   f"customers per server and time unit at ODE time {t_done:.3g}): unstable")
            if r < 1e-7 or t_done * rate > t_max:
                break
            T *= 2
            if _levels_for(m, x) is not None:
                break
        new = _levels_for(m, x)
        if new is None:
            break
        xn = np.zeros((m.J, new - 1))
        xn[:, : x.shape[1]] = x
        m = m.with_levels(new)
        x = xn
    # Newton (on the C side's drift, clipping included: the derivative of the branch taken)
    # on the levels that hold more than 1e-30 (complex arithmetic near the smallest
    # doubles is not reliable; the levels above change the drift by less than 1e-30)
    x = np.clip(x, 0.0, 1.0)
    mt, xt = trim(m, x)
    for _ in range(50):
        fx = mt.drift(xt).ravel()
        r = float(np.max(np.abs(fx)))
        if r < tol:
            break
        Jm = jacobian(mt, xt, clip=True)
        try:
            dx = np.linalg.solve(Jm, -fx)
        except np.linalg.LinAlgError:
            dx = np.linalg.lstsq(Jm, -fx, rcond=None)[0]
        xt = np.clip(xt + dx.reshape(xt.shape), 0.0, 1.0)
    x = np.zeros_like(x)
    x[:, : xt.shape[1]] = xt
    r = float(np.max(np.abs(m.drift(x))))
    top = max((float(x[j, -1]) for j in range(m.J) if m.buffer[j] >= m.levels), default=0.0)
    if not r < max(tol, 1e-10) or top > 1e-6:
        raise RuntimeError(f"the mean-field ODE does not settle (largest drift {r:.3g}, top level "
                           f"{top:.3g}): unstable, or too close to saturation")
    return m, x


def transient(model: OccupancyModel, t, x0=None, *, rtol=1e-10, atol=1e-13, method="LSODA"):
    """The mean-field ODE from x0 on the times t, as an xarray.DataArray ``tail`` with dims
    ``("time", "pool", "k")`` (k = 1..levels-1; pools numbered from 1).

    Parameters
    ----------
    model : an :class:`OccupancyModel` (its ``levels`` are kept: give enough of them for
        the start and the horizon; unlimited buffers: the top level's mass is reported in
        ``attrs["top_max"]``).
    t : increasing times >= 0 (unit: the model's time); the integration starts at 0.
    x0 : start: None (empty), ``"tail:F1,F2,...;..."`` (rmf_tool's x0, per pool), a list
        of per-pool tails, or an array (J, K).
    """
    import xarray as xr

    t = np.asarray(t, dtype=float)
    if t.ndim == 0:
        t = np.linspace(0.0, float(t), 201)
    if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)) or t[0] < 0 or np.any(np.diff(t) <= 0):
        raise ValueError(f"t = {t.tolist()[:5]}... is not allowed; increasing finite times >= 0 are required")
    x = _start_state(model, x0)
    sol = integrate.solve_ivp(_rhs(model), (0.0, float(t[-1])), x.ravel(), t_eval=t, method=method, rtol=rtol,
                              atol=atol)
    if not sol.success:
        raise RuntimeError(f"the mean-field ODE failed: {sol.message}")
    y = sol.y.T.reshape(t.size, model.J, model.levels - 1)
    return xr.DataArray(
        y, dims=("time", "pool", "k"),
        coords={"time": sol.t, "pool": np.arange(1, model.J + 1), "k": np.arange(1, model.levels)},
        name="tail",
        attrs={"description": f"mean-field tails x_j(k)(t) of {model.policy}, lam = {model.lam}",
               "source": "the C side's drift (src/engine/occ_meanfield.c)", "units": "1",
               "top_max": float(np.max(y[:, :, -1]))},
    )
