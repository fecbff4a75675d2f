"""Exact finite-n occupancy chains (small n, finite buffers): stationary and transient means.

The state is the vector of counts ``c_j(k)`` (servers of pool j holding k customers,
k = 0..B_j). From state c an arrival (rate ``lam n``) goes to class (j, k) with the
probability ``p_j(k)`` of the C side's routing law at that state
(:meth:`lbmc_analysis.limits.ode.OccupancyModel.law` with the model's n), which is the exact
law of the policy at integer counts for random, jsq(d) with either sampling (``A^d`` with
replacement, ``prod_{i<d} (n A - i)/(n - i)`` without, ties uniform among the tied
servers), full jsq and pull with one router; a customer sent to a full server is blocked.
A server of pool j at level k completes at rate ``mu_j min(k, L_j)``. For balanced(c) the
C side's law is the n -> infinity law (draws with replacement) and the chain here is that
law's chain, not the finite system (which draws c distinct servers; the tests build its
exact chain with balanced(2)'s exact law).

Used to test the refined mean field (``E[X_n] - x* ~ V/n``) and the transient ODE, and as
exact values for small systems (cross-checked against /work/shared/refs/cases.json).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as splinalg

from .ode import OccupancyModel

__all__ = ["OccupancyChain"]


def _compositions(N, parts):
    """All count vectors of `parts` nonnegative integers summing to N, (S, parts)."""
    out = []
    for combo in itertools.combinations_with_replacement(range(parts), N):
        c = np.bincount(np.asarray(combo, dtype=int), minlength=parts) if N else np.zeros(parts, dtype=int)
        out.append(c)
    return np.array(out, dtype=np.int64).reshape(-1, parts)


class OccupancyChain:
    """The exact occupancy CTMC of a small system.

    Parameters
    ----------
    model : :class:`OccupancyModel` with a finite ``n`` and every buffer finite (its levels
        are ``max_j B_j + 1``).
    max_states : refuse larger chains (default 2 000 000).

    Attributes: ``states`` (S, J, levels) counts, ``Q`` (sparse generator, S x S), ``x``
    (S, J, levels-1) the tails of every state (fractions of each pool).
    """

    def __init__(self, model: OccupancyModel, max_states=2_000_000):
        if math.isinf(model.n):
            raise ValueError("model.n = inf is not allowed; the exact chain needs a finite n")
        if any(math.isinf(b) for b in model.buffer):
            raise ValueError(f"buffer = {model.buffer} is not allowed; the exact chain needs finite buffers")
        self.model = model
        n = int(model.n)
        N = np.rint(model.b * n).astype(int)
        Lv = model.levels
        per_pool = []
        for j in range(model.J):
            B = int(model.buffer[j])
            comp = _compositions(int(N[j]), B + 1)
            full = np.zeros((comp.shape[0], Lv), dtype=np.int64)
            full[:, : B + 1] = comp
            per_pool.append(full)
        S = int(np.prod([p.shape[0] for p in per_pool]))
        if S > max_states:
            raise ValueError(f"the chain has {S} states, more than max_states = {max_states}")
        idx = np.array(list(itertools.product(*[range(p.shape[0]) for p in per_pool])), dtype=np.int64)
        states = np.stack([per_pool[j][idx[:, j]] for j in range(model.J)], axis=1)  # (S, J, Lv)
        self.states = states
        self.N = N
        base = (max(N) + 1)
        self._weights = base ** np.arange(model.J * Lv, dtype=np.int64).reshape(model.J, Lv)
        codes = np.einsum("sjk,jk->s", states, self._weights)
        order = np.argsort(codes)
        self._codes = codes[order]
        self._order = order
        s = states / N[None, :, None]
        self.x = OccupancyModel.x_from_s(s)
        p = model.law(s)  # (S, J, Lv)
        lam_tot = model.lam * n
        rows, cols, vals = [], [], []
        for j in range(model.J):
            B = int(model.buffer[j])
            for kk in range(Lv):
                # arrival to (j, kk) admitted if kk < B
                if kk < B:
                    rate = lam_tot * p[:, j, kk]
                    ok = (states[:, j, kk] > 0) & (rate > 0)
                    if np.any(ok):
                        dst = states[ok].copy()
                        dst[:, j, kk] -= 1
                        dst[:, j, kk + 1] += 1
                        rows.append(np.nonzero(ok)[0])
                        cols.append(self._index(dst))
                        vals.append(rate[ok])
                if kk >= 1:
                    rate = states[:, j, kk] * model.mu[j] * min(kk, int(model.L[j]))
                    ok = rate > 0
                    if np.any(ok):
                        dst = states[ok].copy()
                        dst[:, j, kk] -= 1
                        dst[:, j, kk - 1] += 1
                        rows.append(np.nonzero(ok)[0])
                        cols.append(self._index(dst))
                        vals.append(rate[ok].astype(float))
        r = np.concatenate(rows)
        c = np.concatenate(cols)
        v = np.concatenate(vals)
        off = sparse.csr_matrix((v, (r, c)), shape=(S, S))
        diag = np.asarray(off.sum(axis=1)).ravel()
        self.Q = (off - sparse.diags(diag)).tocsr()
        self.S = S

    def _index(self, st):
        code = np.einsum("sjk,jk->s", st, self._weights)
        pos = np.searchsorted(self._codes, code)
        if np.any(pos >= self._codes.size) or np.any(self._codes[np.minimum(pos, self._codes.size - 1)] != code):
            raise RuntimeError("state outside the chain")
        return self._order[pos]

    def _solve_fixed(self, QT, i):
        idx = np.r_[0:i, i + 1:self.S]
        A = QT[idx][:, idx].tocsc()
        b = -np.asarray(QT[idx][:, [i]].todense()).ravel()
        rest = splinalg.spsolve(A, b, permc_spec="MMD_AT_PLUS_A")
        pi = np.maximum(np.insert(rest, i, 1.0), 0.0)
        return pi / pi.sum()

    def stationary(self):
        """Stationary distribution pi (S,) of ``pi Q = 0``, ``sum pi = 1``.

        One state's probability is fixed (the state nearest the mean-field fixed point of the
        chain's own law, so that it is not tiny) and the other balance equations are solved
        by sparse LU (SuperLU, minimum-degree ordering of A^T + A: the reduced matrix keeps
        the chain's sparsity); then normalised. If the residual ``max |pi Q|`` exceeds 1e-11
        times the largest rate, the solve is repeated from the most likely state found.
        The residual is kept in ``self.residual``."""
        QT = self.Q.T.tocsc()
        if self.S == 1:
            self.residual = 0.0
            return np.ones(1)
        from .ode import fixed_point

        try:
            _, xs = fixed_point(self.model)
            i = int(np.argmin(np.abs(self.x - xs[None, :, : self.x.shape[2]]).sum(axis=(1, 2))))
        except RuntimeError:
            i = 0
        scale = float(np.max(np.abs(self.Q.diagonal())))
        pi = self._solve_fixed(QT, i)
        self.residual = float(np.max(np.abs(QT @ pi)))
        if self.residual > 1e-11 * scale:
            pi = self._solve_fixed(QT, int(np.argmax(pi)))
            self.residual = float(np.max(np.abs(QT @ pi)))
        return pi

    def mean_tail(self, pi=None):
        """``E[x_{j,k}]`` (J, levels-1) under pi (default: stationary)."""
        pi = self.stationary() if pi is None else pi
        return np.einsum("s,sjk->jk", pi, self.x)

    def start(self, x0):
        """The point mass at the state with tails x0 (J, levels-1) (must be integral)."""
        counts = np.rint(OccupancyModel.s_from_x(np.asarray(x0, dtype=float)) * self.N[:, None]).astype(np.int64)
        if np.any(counts < 0) or np.any(counts.sum(axis=1) != self.N):
            raise ValueError("x0 is not a state of the chain (fractions of N_j servers)")
        i = self._index(counts[None])[0]
        p = np.zeros(self.S)
        p[i] = 1.0
        return p

    def transient_mean_tail(self, x0, t):
        """``E[x_{j,k}(t)]`` (len(t), J, levels-1) from the state x0, by
        ``scipy.sparse.linalg.expm_multiply`` (Al-Mohy & Higham's truncated Taylor scheme,
        accuracy about 1e-12), time after time."""
        p = self.start(x0)
        t = np.asarray(t, dtype=float)
        if t.ndim != 1 or t.size == 0 or t[0] < 0 or np.any(np.diff(t) < 0):
            raise ValueError("t must be non-decreasing times >= 0")
        QT = self.Q.T.tocsc()
        out = []
        prev = 0.0
        for tt in t:
            if tt > prev:
                p = splinalg.expm_multiply(QT * (tt - prev), p)
                prev = tt
            out.append(np.einsum("s,sjk->jk", p, self.x))
        return np.array(out)
