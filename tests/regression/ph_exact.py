#!/usr/bin/python3
"""Exact stationary metrics of small load-balancing systems with phase-type service, and
the tests that hold lbmc's engines to them.

The model is lbmc's (docs/model.md): n <= 4 servers (the solver takes more where the
state space stays small) in pools of N_j servers of speed mu_j and buffer B_j (customers
at a server, the one in service included; None = unlimited), FCFS, Poisson arrivals of
total rate lambda n, one service law per pool given in lbmc's text form and read here by
an independent parser (exponential, erlang:k=K, hyperexponential, coxian, ph). A
requirement is the absorption time of the phase process (alpha, T); at speed mu_j a
server moves through the phases at rates mu_j T. The policies: random, jsq(d) with
`distinct` or `with_replacement` sampling, jsq (all n), balanced(c), pull (stale
withdraw or keep, any number of routers R; jiq = pull with keep).

The chain. A server's state is (q, p, messages): q customers, p the phase of the one in
service (none when idle), and for pull the messages it has out: with `withdraw` the
router holding its one message when idle (R >= 2; with R = 1 an idle server's message
needs no state), with `keep` the number of its messages at each router. Servers of a
pool are exchangeable under every policy here (sampling is uniform, balanced(c) weighs
by mu, equal within a pool, pull treats servers alike), so a state is, per pool, the
sorted tuple of its servers' states (the chain lumped by the permutations within pools,
exact). Transitions from a state:
  - phase change of a busy server of pool j from p to p': rate mu_j T[p][p'];
  - completion: rate mu_j t_p (t = -T 1); the next customer, if any, starts in phase p'
    w.p. alpha[p']; a server left idle sends a pull message to a router chosen uniformly;
  - arrival: rate lambda n, to router r w.p. 1/R, routed by the policy (probabilities by
    enumerating the samples: d-subsets, d-sequences, ordered mu-weighted c-draws, ties
    uniformly, as docs/model.md says); a customer sent to a full server is blocked.
Unlimited buffers are truncated at a total of Q customers (an arrival beyond is dropped)
and keep's messages at a total of M (a message beyond is not sent); the stationary mass on the truncation boundary is
reported (`mass_boundary`) and the tests require it below 1e-12. pi Q = 0 is solved by
SuperLU (scipy.sparse.linalg.spsolve; GMRES above 3000 states, where the factors of keep's
chains fill badly) with pi_0 = 1 fixed and the balance equation of state 0 left out (a
normalisation row of ones would fill the factors), then pi / sum pi; the residual
max |pi Q| is reported.

Metrics (lbmc's names; PASTA for the arrival averages, Little for the means):
p_wait, p_block, p_wait_or_block, mean_sojourn = L / admitted rate, mean_wait =
(customers waiting) / admitted rate, mean_queue[j], utilization[j], admitted_share[j],
tail[j][k] (fraction of pool j's servers with at least k customers),
messages_per_arrival (jsq(d) 2d, jsq 2n, balanced(c) 2c, pull: messages sent on idling
plus withdrawals), withdrawals_per_arrival, throughput (admitted per unit time / n), and
mean_workload[j]: the unfinished work per server in units of requirement, h_p + (q - 1)
for a server at (q, p) with h = (-T)^-1 1 the mean remaining requirement from phase p.

Usage:
  ph_exact.py solve  --n N --lambda L --pools beta:mu:B,... [--service S1;S2] [--policy P]
                     [--routers R] [--stale S] [--sampling S] [--tail-k K]   (prints JSON)
  ph_exact.py selftest [--refs cases.json]
        the solver against the exact exponential cases of tests/data/cases.json and
        against closed forms: Pollaczek-Khinchine (M/E_k/1, M/H2/1, M/Coxian/1 mean wait
        and workload), Erlang-B and M/G/1/1 insensitivity, and ph forms of one law equal
  ph_exact.py grid [--lbmc LBMC] [--engine E] [--grid default|slow] [--control C]
        [--replicas R] [--seed S] [--repeat K]
        lbmc sim (--engine E, 10 replicas; each case K times with seeds S, S+1, ...,
        seeds never shared between runs) on a grid of cases, every value within its
        interval at the Bonferroni level 1 - 0.01 / (values checked): exit 0 when all are.
        With --control swap-mu (the pools' speeds swapped in the simulation) or erlang-h2
        (Erlang service simulated as H2 of scv 2) the comparison must see the wrong model:
        exit 0 when some value falls outside, 1 when none does. It also reports the
        coverage of the plain 99% intervals (estimate +/- t std_err) over the grid.
"""
import argparse
import array
import itertools
import json
import math
import os
import subprocess
import sys
import time
from fractions import Fraction

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.stats import t as tdist

# ----------------------------------------------------------------------------------
# service laws (lbmc's text forms, include/lbmc/service.h), read independently
# ----------------------------------------------------------------------------------


def _num(text):
    t = text.strip()
    return float(Fraction(t)) if "/" in t else float(t)


def _split_top(text):
    """Split at commas outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def _list(text):
    t = text.strip()
    if not t.startswith("["):
        return _num(t)
    inner = t[1:-1]
    return [_list(x) for x in _split_top(inner)]


class PH:
    """A phase-type law (alpha, T), mean 1: exit rates t = -T 1, h = (-T)^-1 1."""

    def __init__(self, alpha, T, text=""):
        self.alpha = np.asarray(alpha, dtype=float)
        self.T = np.asarray(T, dtype=float).reshape(len(self.alpha), len(self.alpha))
        self.m = len(self.alpha)
        self.exit = -self.T.sum(axis=1)
        self.exit[np.abs(self.exit) < 1e-12 * np.abs(np.diag(self.T))] = 0.0
        self.h = np.linalg.solve(-self.T, np.ones(self.m))
        self.mean = float(self.alpha @ self.h)
        self.m2 = float(2 * self.alpha @ np.linalg.solve(-self.T, self.h))
        self.scv = self.m2 / self.mean ** 2 - 1
        self.text = text
        if abs(self.mean - 1) > 1e-9:
            raise ValueError(f"{text}: mean {self.mean}, not 1")


def parse_service(text):
    """lbmc's text form of a phase-type law -> PH."""
    text = text.strip()
    name, _, rest = text.partition(":")
    kv = {}
    for piece in _split_top(rest):
        k, _, v = piece.partition("=")
        kv[k.strip()] = _list(v)
    if name == "exponential":
        return PH([1.0], [[-1.0]], text)
    if name == "erlang":
        k = int(kv["k"])
        T = np.zeros((k, k))
        for i in range(k):
            T[i, i] = -k
            if i + 1 < k:
                T[i, i + 1] = k
        return PH([1.0] + [0.0] * (k - 1), T, text)
    if name == "hyperexponential":
        if "scv" in kv:
            C = kv["scv"]
            p = 0.5 * (1 + math.sqrt((C - 1) / (C + 1)))  # balanced means
            r1, r2 = 2 * p, 2 * (1 - p)
        else:
            p, r1, r2 = kv["p"], kv["r1"], kv["r2"]
        return PH([p, 1 - p], [[-r1, 0], [0, -r2]], text)
    if name == "coxian":
        if "scv" in kv:
            C = kv["scv"]
            r, p = [2.0, 1.0 / C], [1.0 / (2 * C)]
        else:
            r = kv["r"] if isinstance(kv["r"], list) else [kv["r"]]
            p = kv.get("p", [])
            p = p if isinstance(p, list) else [p]
        m = len(r)
        T = np.zeros((m, m))
        for i in range(m):
            T[i, i] = -r[i]
            if i + 1 < m:
                T[i, i + 1] = p[i] * r[i]
        return PH([1.0] + [0.0] * (m - 1), T, text)
    if name == "ph":
        a = kv["alpha"] if isinstance(kv["alpha"], list) else [kv["alpha"]]
        T = kv["T"] if isinstance(kv["T"], list) else [[kv["T"]]]
        return PH(a, T, text)
    raise ValueError(f"{text}: not a phase-type law this solver reads")


# ----------------------------------------------------------------------------------
# the system
# ----------------------------------------------------------------------------------


class System:
    def __init__(self, n, lam, pools, services, policy="random", routers=1, stale="withdraw",
                 sampling="distinct", tail_k=4):
        """pools: list of (beta, mu, B) with B None for unlimited; services: one text per
        pool (or one for all)."""
        self.n, self.lam = n, lam
        self.J = len(pools)
        self.N = _pool_sizes(n, [b for b, _, _ in pools])
        self.mu = [float(m) for _, m, _ in pools]
        self.B = [b for _, _, b in pools]
        if isinstance(services, str):
            services = [services] * self.J
        self.svc_text = list(services)
        self.ph = [parse_service(s) for s in services]
        pol = policy.strip()
        self.d = None
        if pol.startswith("jsq(") or pol.startswith("balanced("):
            self.d = int(pol[pol.index("(") + 1:-1])
            pol = pol[:pol.index("(")]
        if pol == "jiq":
            pol, stale = "pull", "keep"
        self.policy, self.R, self.stale, self.sampling = pol, routers, stale, sampling
        self.tail_k = tail_k
        self.text = policy
        # flat server index -> pool
        self.pool_of = [j for j in range(self.J) for _ in range(self.N[j])]
        self.smu = [self.mu[j] for j in self.pool_of]


def _pool_sizes(n, beta):
    """Largest-remainder rounding of beta_j n (ties: the lower pool first)."""
    raw = [b * n for b in beta]
    N = [int(math.floor(x + 1e-9)) for x in raw]
    rem = sorted(range(len(beta)), key=lambda j: (-(raw[j] - N[j]), j))
    for j in rem[: n - sum(N)]:
        N[j] += 1
    return N


# A server's state: (q, phase, msg) with phase -1 when idle; msg: None (no message
# state), a router index (withdraw, R >= 2, idle), or a tuple of counts per router (keep).


def _routing(sys_, qs, msgs, router):
    """Routing probabilities over the flat servers for an arrival at `router`, and the
    probability of a withdrawal with it. qs: queue lengths; msgs: per-server message
    state (pull only)."""
    n = len(qs)
    p = [0.0] * n
    withdraw = [0.0] * n
    pol = sys_.policy
    if pol == "random":
        return [1.0 / n] * n, withdraw

    def argmin_share(cands, weight):
        best = min(qs[i] for i in cands)
        at = [i for i in cands if qs[i] == best]
        for i in at:
            p[i] += weight / len(at)

    if pol == "jsq" and sys_.d is None:
        argmin_share(range(n), 1.0)
        return p, withdraw
    if pol == "jsq":
        d = sys_.d
        if sys_.sampling == "with_replacement":
            w = 1.0 / n ** d
            for seq in itertools.product(range(n), repeat=d):
                argmin_share(list(seq), w)  # positions: a server drawn twice counts twice
        else:
            subsets = list(itertools.combinations(range(n), d))
            for sub in subsets:
                argmin_share(sub, 1.0 / len(subsets))
        return p, withdraw
    if pol == "balanced":
        c = sys_.d
        for seq in itertools.permutations(range(n), c):
            w, left = 1.0, sum(sys_.smu)
            for i in seq:
                w *= sys_.smu[i] / left
                left -= sys_.smu[i]
            argmin_share(seq, w)
        return p, withdraw
    if pol == "pull":
        if sys_.stale == "keep":
            held = [msgs[i][router] for i in range(n)]
            tot = sum(held)
            if tot > 0:
                return [h / tot for h in held], withdraw
            return [1.0 / n] * n, withdraw
        if sys_.R == 1:
            idle = [i for i in range(n) if qs[i] == 0]
            if idle:
                for i in idle:
                    p[i] = 1.0 / len(idle)
                return p, withdraw
            return [1.0 / n] * n, withdraw
        here = [i for i in range(n) if qs[i] == 0 and msgs[i] == router]
        if here:
            for i in here:
                p[i] = 1.0 / len(here)
            return p, withdraw
        for i in range(n):  # uniform; an idle server hit withdraws its message elsewhere
            p[i] = 1.0 / n
            if qs[i] == 0:
                withdraw[i] = 1.0 / n
        return p, withdraw
    raise ValueError(f"policy {pol}")


def _gmres(A, b, M=None):
    kw = dict(restart=100, maxiter=4000, M=M)
    try:  # scipy >= 1.12 names the tolerance rtol
        return spla.gmres(A, b, rtol=1e-14, atol=0.0, **kw)[0]
    except TypeError:
        return spla.gmres(A, b, tol=1e-14, atol=0.0, **kw)[0]


def _solve_linear(A, b):
    """A x = b: SuperLU for small systems; GMRES (then with an incomplete-LU
    preconditioner, then SuperLU) for large ones, whose LU factors fill badly (the
    message counts of keep); accepted when the residual is at round-off."""
    if A.shape[0] <= 3000:
        return spla.spsolve(A, b)
    scale = max(float(np.abs(b).max()), 1e-300)
    x = _gmres(A, b)
    if np.abs(A @ x - b).max() <= 1e-13 * scale:
        return x
    ilu = spla.spilu(A, drop_tol=1e-6, fill_factor=20)
    x = _gmres(A, b, spla.LinearOperator(A.shape, ilu.solve))
    if np.abs(A @ x - b).max() <= 1e-13 * scale:
        return x
    return spla.spsolve(A, b)


def solve(sys_, Q=None, M=None, verbose=False):
    """Stationary metrics of sys_. Q: truncation of the total customers when some buffer
    is unlimited (default 40); M: keep's cap on the total messages (default 12)."""
    t0 = time.time()
    J, n = sys_.J, sys_.n
    unlimited = any(b is None for b in sys_.B)
    Qcap = (Q or 40) if unlimited else None
    Mcap = M or 12
    pull, keep = sys_.policy == "pull", sys_.policy == "pull" and sys_.stale == "keep"
    R = sys_.R
    track_router = pull and not keep and R > 1

    def canon(servers):
        out, at = [], 0
        for j in range(J):
            out.append(tuple(sorted(servers[at:at + sys_.N[j]])))
            at += sys_.N[j]
        return tuple(out)

    def flat(state):
        return [s for pool in state for s in pool]

    if keep:
        start = canon([(0, -1, tuple([1] + [0] * (R - 1)))] * n)
    elif track_router:
        start = canon([(0, -1, 0)] * n)
    else:
        start = canon([(0, -1, None)] * n)

    index = {start: 0}
    states = [start]
    rows, cols, vals = array.array("l"), array.array("l"), array.array("d")
    # per-state rewards (arrival averages per unit arrival rate, time averages)
    rew = {k: [] for k in ("block", "wait", "trunc", "withdraw", "msg_rate", "boundary")}
    adm_pool = []
    rng_cache = {}
    Lam = sys_.lam * n
    head = 0
    while head < len(states):
        st = states[head]
        sv = flat(st)
        qs = [s[0] for s in sv]
        msgs = [s[2] for s in sv]
        out = {}

        def add(rate, servers):
            key = canon(servers)
            out[key] = out.get(key, 0.0) + rate

        msg_rate = 0.0
        # service: phase changes and completions
        for i, (q, ph, msg) in enumerate(sv):
            if q == 0:
                continue
            law, mu = sys_.ph[sys_.pool_of[i]], sys_.smu[i]
            for p2 in range(law.m):
                if p2 != ph and law.T[ph, p2] > 0:
                    new = list(sv)
                    new[i] = (q, p2, msg)
                    add(mu * law.T[ph, p2], new)
            ex = mu * law.exit[ph]
            if ex <= 0:
                continue
            if q > 1:
                for p2 in range(law.m):
                    if law.alpha[p2] > 0:
                        new = list(sv)
                        new[i] = (q - 1, p2, msg)
                        add(ex * law.alpha[p2], new)
            else:
                if pull:
                    msg_rate += ex
                for r in range(R if (track_router or keep) else 1):
                    new = list(sv)
                    if keep:
                        cnt = list(msg)
                        if sum(map(sum, msgs)) < Mcap:
                            cnt[r] += 1  # beyond the cap the message is dropped (boundary)
                        new[i] = (0, -1, tuple(cnt))
                        add(ex / R, new)
                    elif track_router:
                        new[i] = (0, -1, r)
                        add(ex / R, new)
                    else:
                        new[i] = (0, -1, None)
                        add(ex, new)
        # arrivals
        blk = wt = trn = wdr = 0.0
        adm = [0.0] * J
        total_q = sum(qs)
        for r in range(R if pull else 1):
            wr = 1.0 / (R if pull else 1)
            if keep:  # uses only the messages at router r (and n)
                key = (tuple(m_[r] for m_ in msgs), r)
            else:
                key = (tuple(qs), tuple(msgs), r) if pull else tuple(qs)
            if key not in rng_cache:
                rng_cache[key] = _routing(sys_, qs, msgs, r)
            probs, wd = rng_cache[key]
            for i, pi_ in enumerate(probs):
                if pi_ <= 0:
                    continue
                w = wr * pi_
                q, ph, msg = sv[i]
                j = sys_.pool_of[i]
                new = list(sv)
                nmsg = msg
                if Qcap is not None and total_q >= Qcap:
                    trn += w  # the truncation: the arrival is dropped, nothing changes
                    continue
                if keep and sum(m_[r] for m_ in msgs) > 0:
                    cnt = list(msg)
                    cnt[r] -= 1  # the message used is destroyed, whatever happens
                    nmsg = tuple(cnt)
                if track_router and q == 0:
                    nmsg = -1  # busy: no message (used, or withdrawn)
                    wdr += wr * wd[i]
                if sys_.B[j] is not None and q >= sys_.B[j]:
                    blk += w
                    if nmsg != msg:
                        new[i] = (q, ph, nmsg)
                        add(Lam * w, new)
                    continue
                adm[j] += w
                if q == 0:
                    law = sys_.ph[j]
                    for p2 in range(law.m):
                        if law.alpha[p2] > 0:
                            new = list(sv)
                            new[i] = (1, p2, nmsg)
                            add(Lam * w * law.alpha[p2], new)
                else:
                    wt += w
                    new[i] = (q + 1, ph, nmsg)
                    add(Lam * w, new)
        bnd = 0.0
        if Qcap is not None and total_q >= Qcap:
            bnd = 1.0
        if keep and sum(map(sum, msgs)) >= Mcap:
            bnd = 1.0
        rew["block"].append(blk)
        rew["wait"].append(wt)
        rew["trunc"].append(trn)
        rew["withdraw"].append(wdr)
        rew["msg_rate"].append(msg_rate)
        rew["boundary"].append(bnd)
        adm_pool.append(adm)
        for key, rate in out.items():
            if key == st:
                continue
            if key not in index:
                index[key] = len(states)
                states.append(key)
            rows.append(head)
            cols.append(index[key])
            vals.append(rate)
        head += 1
    S = len(states)
    Qm = sp.csr_matrix((np.frombuffer(vals, dtype=np.float64), (np.frombuffer(rows, dtype=np.int64),
                        np.frombuffer(cols, dtype=np.int64))), shape=(S, S))
    diag = np.asarray(Qm.sum(axis=1)).ravel()
    Qm = Qm - sp.diags(diag)
    # pi_0 = 1 fixed, the other balance equations solved (no dense normalisation row,
    # which would fill the LU factors), then normalised
    At = Qm.T.tocsc()
    pi = np.ones(S)
    if S > 1:
        pi[1:] = _solve_linear(At[1:, 1:].tocsc(), -At[1:, 0].toarray().ravel())
    pi /= pi.sum()
    resid = float(np.max(np.abs(At @ pi)))
    if pi.min() < -1e-12:
        raise RuntimeError(f"negative stationary probability {pi.min()}")
    pi = np.maximum(pi, 0.0)

    # metrics
    K = sys_.tail_k
    busy = np.zeros(J)
    queue = np.zeros(J)
    work = np.zeros(J)
    tail = np.zeros((J, K))
    L = Lq = 0.0
    for s_i, st in enumerate(states):
        w = pi[s_i]
        if w == 0:
            continue
        for j, pool in enumerate(st):
            for (q, ph, _) in pool:
                if q == 0:
                    continue
                busy[j] += w
                queue[j] += w * q
                work[j] += w * (sys_.ph[j].h[ph] + q - 1)
                for k in range(1, min(q, K) + 1):
                    tail[j, k - 1] += w
                L += w * q
                Lq += w * (q - 1)
    Nj = np.asarray(sys_.N, dtype=float)
    p_block = float(pi @ np.asarray(rew["block"]))
    p_trunc = float(pi @ np.asarray(rew["trunc"]))
    p_wait = float(pi @ np.asarray(rew["wait"]))
    adm = np.asarray(adm_pool).T @ pi  # per pool, per unit arrival rate
    adm_rate = Lam * adm.sum()
    res = {
        "p_wait": p_wait,
        "p_block": p_block,
        "p_wait_or_block": p_wait + p_block,
        "mean_sojourn": L / adm_rate,
        "mean_wait": Lq / adm_rate,
        "mean_queue": list(queue / Nj),
        "utilization": list(busy / Nj),
        "admitted_share": list(adm / adm.sum()),
        "tail": [list(tail[j] / Nj[j]) for j in range(J)],
        "throughput": adm_rate / n,
        "mean_workload": list(work / Nj),
        "withdrawals_per_arrival": float(pi @ np.asarray(rew["withdraw"])),
    }
    if sys_.policy == "random":
        res["messages_per_arrival"] = 0.0
    elif sys_.policy in ("jsq", "balanced"):
        res["messages_per_arrival"] = 2.0 * (sys_.d if sys_.d is not None else n)
    else:
        res["messages_per_arrival"] = (float(pi @ np.asarray(rew["msg_rate"])) / Lam
                                       + res["withdrawals_per_arrival"])
    res["_states"] = S
    res["_residual"] = resid
    res["_p_trunc"] = p_trunc
    res["_mass_boundary"] = float(pi @ np.asarray(rew["boundary"]))
    res["_seconds"] = time.time() - t0
    if verbose:
        print(f"  {S} states, residual {resid:.1e}, boundary mass {res['_mass_boundary']:.1e}, "
              f"{res['_seconds']:.1f} s", file=sys.stderr)
    return res


def solve_converged(sys_, Q=None, M=None):
    """solve() with the truncation grown until the boundary mass is below 1e-12: the caps
    that bind (Q with an unlimited buffer, M with keep) grown from the geometric decay of
    the boundary mass between the last two caps, aiming at 1e-13 (x 1.3 to x 3 a step)."""
    Q, M = Q or 24, M or 8
    grow_q = any(x is None for x in sys_.B)
    grow_m = sys_.policy == "pull" and sys_.stale == "keep"
    prev = None
    while True:
        r = solve(sys_, Q, M)
        b = r["_mass_boundary"]
        if b < 1e-12:
            return r
        cap = Q if grow_q else M
        if Q > 4000 or M > 200:
            raise RuntimeError(f"truncation does not converge: boundary mass {b:.1e}")
        grow = 1.5
        if prev and 0 < b < prev[1]:  # log b ~ a + cap log(rate)
            need = cap + math.log(1e-13 / b) * (cap - prev[0]) / math.log(b / prev[1])
            grow = min(max(1.3, need / cap), 3.0)
        prev = (cap, b)
        Q = int(math.ceil(Q * grow)) if grow_q else Q
        M = int(math.ceil(M * grow)) if grow_m else M


# ----------------------------------------------------------------------------------
# self-test: the solver against known values
# ----------------------------------------------------------------------------------

_failures = []


def _check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        _failures.append(what)


def _close(a, b, tol):
    return abs(a - b) <= tol * max(1.0, abs(b))


def _flatten(name, v):
    """(entry name, value) pairs of one metric in lbmc's naming (1-based pools, levels)."""
    if isinstance(v, list) and v and isinstance(v[0], list):
        return [(f"{name}[{j + 1}][{k + 1}]", x) for j, row in enumerate(v) for k, x in enumerate(row)]
    if isinstance(v, list):
        return [(f"{name}[{j + 1}]", x) for j, x in enumerate(v)]
    return [(name, v)]


def _refs_system(inp, services=None):
    n = inp["N_total"]
    pools = [(p["N"] / n, p["mu"], None if p["B"] == "inf" else int(p["B"])) for p in inp["pools"]]
    pol = inp["policy"]
    if pol == "jsq":
        pol = "jsq" if inp["policy_param"] == n else f"jsq({inp['policy_param']})"
    elif pol == "balanced":
        pol = f"balanced({inp['policy_param']})"
    return System(n, inp["lambda"] / n, pools, services or "exponential", pol,
                  inp["routers"], inp["stale"] or "withdraw", "distinct")


def selftest(refs, max_states):
    """The solver against exact values computed elsewhere, and closed forms; refs cases of
    more than max_states states (as the refs count them) are left out."""
    # 1. exponential service: the refs' CTMC (another solver, exact to round-off); the
    # cases with at most 4 servers, or more where the state space is small.
    data = json.load(open(refs))
    for c in data["cases"]:
        inp = c["input"]
        if c["result"]["n_states"] > max_states:
            continue
        sys_ = _refs_system(inp)
        want = c["result"]["spec_metrics"]
        sys_.tail_k = len(want["tail"][0])
        # the refs truncate each unlimited queue (here: the total, grown until the
        # boundary mass is below 1e-12); keep's messages as the refs do (msg_trunc)
        if inp["trunc"]:
            got = solve_converged(sys_)
        else:
            got = solve(sys_, M=inp.get("msg_trunc"))
        worst, what = 0.0, ""
        for name in ("p_wait", "p_block", "mean_sojourn", "mean_wait", "mean_queue",
                     "utilization", "admitted_share", "tail", "messages_per_arrival",
                     "withdrawals_per_arrival"):
            for (e, x), (_, y) in zip(_flatten(name, got[name]), _flatten(name, want[name])):
                err = abs(x - y) / max(1.0, abs(y))
                if err > worst:
                    worst, what = err, f"{e} {x:.12g} vs {y:.12g}"
        _check(worst < 1e-8, f"refs {c['case_id']} ({inp['policy']} {inp['pools_spec']} R "
                             f"{inp['routers']} {inp['stale']}): {got['_states']} states, worst "
                             f"relative difference {worst:.1e} ({what})")

    # 2. Pollaczek-Khinchine: M/G/1 (n = 1), mean wait W = lam E[S^2] / (2 mu^2 (1 - rho)),
    # E[S^2] = 1 + scv; the mean workload (in requirement) mu W; mean queue by Little.
    for svc, lam, mu in (("erlang:k=4", 0.7, 1.0), ("erlang:k=2", 0.5, 2.0),
                         ("hyperexponential:scv=5", 0.5, 1.0), ("hyperexponential:p=0.25,r1=0.5,r2=1.5", 0.6, 1.0),
                         ("coxian:scv=3", 0.5, 1.0), ("coxian:r=[2,1],p=[0.5]", 0.5, 1.0)):
        sys_ = System(1, lam, [(1.0, mu, None)], svc)
        law = sys_.ph[0]
        got = solve_converged(sys_)
        rho = lam / mu
        W = lam * (1 + law.scv) / (2 * mu * mu * (1 - rho))
        _check(_close(got["mean_wait"], W, 1e-9) and _close(got["mean_workload"][0], mu * W, 1e-9)
               and _close(got["mean_sojourn"], W + 1 / mu, 1e-9)
               and _close(got["utilization"][0], rho, 1e-10),
               f"M/G/1 {svc} lambda {lam} mu {mu}: W {got['mean_wait']:.12g} vs P-K {W:.12g}, "
               f"workload {got['mean_workload'][0]:.12g} vs {mu * W:.12g} ({got['_states']} "
               f"states, boundary {got['_mass_boundary']:.0e})")

    # 3. Insensitivity: n servers with buffer 1 under jsq (an arrival takes an idle server
    # if any) is Erlang's loss system, p_block = Erlang-B(n, lambda n / mu) for every
    # service law; under random routing every server is an M/G/1/1: rho / (1 + rho).
    for svc in ("exponential", "erlang:k=4", "hyperexponential:scv=20", "coxian:scv=0.7"):
        for n, lam in ((3, 0.8), (4, 1.1)):
            a = lam * n
            eb = a ** n / math.factorial(n) / sum(a ** k / math.factorial(k) for k in range(n + 1))
            got = solve(System(n, lam, [(1.0, 1.0, 1)], svc, "jsq"))
            _check(_close(got["p_block"], eb, 1e-10),
                   f"Erlang-B n {n} a {a:.2f} {svc}: {got['p_block']:.12g} vs {eb:.12g}")
        got = solve(System(2, 0.6, [(1.0, 1.5, 1)], svc, "random"))
        rho = 0.6 / 1.5
        _check(_close(got["p_block"], rho / (1 + rho), 1e-10),
               f"M/G/1/1 {svc}: {got['p_block']:.12g} vs {rho / (1 + rho):.12g}")

    # 4. One law in several forms gives the same numbers: Erlang-3 as erlang, coxian, ph;
    # H2 as hyperexponential and ph; and a Coxian equal in law to Exp(1) against the
    # exponential (JSQ(2), 3 servers, two pools, finite buffers: a law-level identity).
    forms = [("erlang:k=3", "coxian:r=[3,3,3],p=[1,1]", "ph:alpha=[1,0,0],T=[[-3,3,0],[0,-3,3],[0,0,-3]]"),
             ("hyperexponential:p=0.25,r1=0.5,r2=1.5", "ph:alpha=[0.25,0.75],T=[[-0.5,0],[0,-1.5]]"),
             ("exponential", "coxian:r=[2,1],p=[0.5]")]
    for group in forms:
        ref = None
        for svc in group:
            got = solve(System(3, 0.7, [(2 / 3, 1.0, 3), (1 / 3, 1.5, 2)], svc, "jsq(2)"))
            vals = [x for name in ("p_wait", "p_block", "mean_sojourn", "mean_queue", "tail")
                    for _, x in _flatten(name, got[name])]
            if ref is None:
                ref = vals
            else:
                worst = max(abs(x - y) for x, y in zip(vals, ref))
                _check(worst < 1e-10, f"{svc} as {group[0]}: largest difference {worst:.1e}")
    return not _failures


# ----------------------------------------------------------------------------------
# the grid: lbmc sim against the solver
# ----------------------------------------------------------------------------------

H2 = {c: f"hyperexponential:scv={c}" for c in (2, 5, 20)}
COX = "coxian:r=[2.5,5/3,1.25],p=[0.6,0.5]"  # 3 phases: mean 0.4 + 0.36 + 0.24 = 1
# 3 phases, feedback between phases 1 and 2, absorption from each (tests/unit/test_service.c)
PHF = "ph:alpha=[1/2,1/2,0],T=[[-73/22,73/44,73/88],[73/88,-73/44,0],[73/44,0,-73/11]]"


def _case(n, lam, pools, service, policy, **kw):
    return dict(n=n, lam=lam, pools=pools, service=service, policy=policy, **kw)


# Each case: n, lambda (per server), pools (beta, mu, B or None), service (one text, or
# one per pool), policy, and optional routers, stale, sampling, time (per replica).
# Loads are moderate where a buffer is unlimited, so that the truncation converges and
# replicas hold enough regeneration cycles. The default grid solves in seconds; the slow
# one adds larger chains (unlimited buffers at n = 2, 3; keep's message counts).
DEFAULT_GRID = [
    _case(1, 0.6, [(1, 1, None)], "erlang:k=4", "random"),  # M/E4/1
    _case(1, 0.5, [(1, 1, None)], H2[5], "random", time=40000),  # M/H2/1
    _case(1, 0.5, [(1, 1, None)], H2[20], "random", time=100000),
    _case(2, 0.6, [(1, 1, None)], H2[2], "jsq(2)"),
    _case(2, 0.5, [(1, 1, None)], "erlang:k=4", "random"),
    _case(2, 0.7, [(1, 1, 3)], "erlang:k=2", "random"),
    _case(2, 0.6, [(0.5, 1, None), (0.5, 2, None)], H2[2], "balanced(1)"),
    _case(2, 0.6, [(0.5, 1, None), (0.5, 2, None)], H2[5], "jsq(2)", time=40000),
    _case(2, 0.6, [(0.5, 1, None), (0.5, 2, None)], COX, "balanced(2)"),
    _case(2, 0.5, [(1, 1, None)], H2[2], "pull"),
    _case(2, 0.7, [(0.5, 1, 2), (0.5, 1.5, 2)], H2[2], "pull", routers=2),
    _case(3, 0.7, [(2 / 3, 1, 3), (1 / 3, 2, 2)], [H2[5], "erlang:k=2"], "jsq(2)"),
    _case(3, 0.8, [(1, 1, 2)], H2[20], "pull", time=40000),
    _case(3, 0.5, [(1, 1, None)], "erlang:k=2", "jsq"),
    _case(3, 0.6, [(1, 1, None)], "erlang:k=2", "jsq(2)"),
    _case(3, 0.8, [(1, 1, 3)], H2[5], "jsq(2)", sampling="with_replacement"),
    _case(3, 0.7, [(1, 1, 2)], "erlang:k=2", "pull", routers=2),
    _case(3, 0.9, [(1, 1, 4)], H2[20], "random", time=60000),
    _case(3, 0.75, [(1, 1, 3)], "erlang:k=4", "jsq(2)", sampling="with_replacement"),
    _case(4, 0.8, [(0.5, 1, 2), (0.5, 2, 2)], "erlang:k=2", "balanced(2)"),
    _case(4, 0.7, [(1, 1, 3)], COX, "jsq(2)", sampling="with_replacement"),
    _case(4, 0.9, [(1, 1, 1)], "erlang:k=4", "jsq"),  # Erlang's loss system
    _case(4, 0.7, [(1, 1, 3)], PHF, "jsq(2)"),
    _case(4, 0.8, [(0.5, 1, 2), (0.5, 2, 2)], H2[5], "random"),
    _case(4, 0.8, [(0.5, 1, 3), (0.5, 2, 3)], [H2[2], "erlang:k=4"], "jsq(2)"),
    _case(4, 0.7, [(0.75, 1, 2), (0.25, 3, 2)], H2[5], "balanced(2)"),
    _case(4, 0.9, [(1, 1, 2)], "erlang:k=4", "balanced(4)"),
    _case(4, 0.8, [(1, 1, 2)], H2[5], "jsq(3)"),
    _case(4, 0.9, [(0.5, 1, 2), (0.5, 2, 2)], COX, "pull"),
    _case(4, 0.8, [(1, 1, 2)], PHF, "pull", routers=2),
    _case(4, 0.6, [(0.5, 1, 1), (0.5, 1, 1)], [H2[20], "erlang:k=2"], "random", time=40000),
    _case(4, 1.2, [(1, 1, 1)], H2[5], "jsq"),
]
# keep's chains (message counts per router) take a minute each to solve
SLOW_GRID = DEFAULT_GRID + [
    _case(2, 2.0, [(1, 1, 1)], H2[2], "jiq", routers=2),
    _case(2, 2.0, [(0.5, 1, 1), (0.5, 2, 1)], "erlang:k=2", "pull", routers=2, stale="keep"),
]

METRICS = ("p_wait", "p_block", "mean_sojourn", "mean_wait", "mean_queue", "utilization",
           "admitted_share", "tail", "messages_per_arrival", "withdrawals_per_arrival",
           "throughput", "mean_workload")


def _pools_arg(pools):
    return ",".join(f"{b:.17g}:{mu:.17g}:{'inf' if B is None else B}" for b, mu, B in pools)


def _system(c, tail_k):
    return System(c["n"], c["lam"], c["pools"], c["service"], c["policy"], c.get("routers", 1),
                  c.get("stale", "withdraw"), c.get("sampling", "distinct"), tail_k)


def _sim_args(c, engine, control, replicas, tail_k, confidence, seed):
    pools = list(c["pools"])
    svc = c["service"]
    if control == "swap-mu" and len(pools) > 1:
        pools = [(b, pools[len(pools) - 1 - j][1], B) for j, (b, _, B) in enumerate(pools)]
    if control == "erlang-h2":
        svc = [H2[2] if s.startswith("erlang") else s for s in
               (svc if isinstance(svc, list) else [svc])]
    svc = ";".join(svc) if isinstance(svc, list) else svc
    args = ["--n", str(c["n"]), "--lambda", f"{c['lam']:.17g}", "--pools", _pools_arg(pools),
            "--service", svc, "--policy", c["policy"], "--engine", engine,
            "--replicas", str(replicas), "--time", str(c.get("time", 20000)), "--warmup", "200",
            "--tail-k", str(tail_k), "--confidence", f"{confidence:.12g}", "--seed", str(seed)]
    if c.get("routers", 1) > 1:
        args += ["--routers", str(c["routers"])]
    if c.get("stale") and c["policy"] == "pull":
        args += ["--stale", c["stale"]]
    if c.get("sampling"):
        args += ["--sampling", c["sampling"]]
    return args


def grid(lbmc, engine, which, control, replicas, seed, repeat=1):
    cases = DEFAULT_GRID if which == "default" else SLOW_GRID
    tail_k = 3
    # the exact values first: they fix the number of checks (Bonferroni)
    t0 = time.time()
    exact = []
    for c in cases:
        r = solve_converged(_system(c, tail_k))
        if r["_mass_boundary"] >= 1e-12 or r["_residual"] > 1e-9:
            raise SystemExit(f"case {c}: boundary mass {r['_mass_boundary']}, residual {r['_residual']}")
        exact.append(r)
    t_exact = time.time() - t0
    checks = []
    for c, r in zip(cases, exact):
        for name in METRICS:
            for e, x in _flatten(name, r[name]):
                checks.append((c, name, e, x))
    K = len(checks) * repeat
    confidence = 1 - 0.01 / K
    t99 = float(tdist.ppf(0.995, replicas - 1))  # the 99% interval of a replica mean
    print(f"{len(cases)} cases x {repeat} seeds, {K} values checked at the Bonferroni level "
          f"1 - 0.01/{K} = "
          f"{confidence:.7f}; exact values in {t_exact:.1f} s", flush=True)
    bad = covered99 = n99 = 0
    t_sim = 0.0
    at = 0
    for ci, (c, r) in enumerate([x for x in zip(cases, exact) for _ in range(repeat)]):
        args = _sim_args(c, engine, control, replicas, tail_k, confidence, seed + ci)
        t1 = time.time()
        out = subprocess.run([lbmc, "sim", "--json", *args], capture_output=True, text=True)
        t_sim += time.time() - t1
        if out.returncode != 0:
            raise SystemExit(f"lbmc sim {' '.join(args)}: exit {out.returncode}: {out.stderr}")
        js = json.loads(out.stdout)
        if js.get("engine") != engine:
            raise SystemExit(f"lbmc sim ran engine {js.get('engine')}, not {engine}")
        label = (f"n {c['n']} lambda {c['lam']} pools {_pools_arg(c['pools'])} {c['service']} "
                 f"{c['policy']} R {c.get('routers', 1)} {c.get('stale', '')} {c.get('sampling', '')}")
        print(f"case {ci}: {label} ({r['_states']} states; status {js['status']})", flush=True)
        for name in METRICS:
            if name not in js["estimates"]:
                continue  # a metric this lbmc does not have (mean_workload before it exists)
            est = js["estimates"][name]
            means = _flatten(name, est["mean"])
            lows = _flatten(name, est["lower"])
            ups = _flatten(name, est["upper"])
            ses = _flatten(name, est["std_err"])
            for (e, x), (_, m), (_, lo), (_, hi), (_, se) in zip(_flatten(name, r[name]), means,
                                                                  lows, ups, ses):
                at += 1
                lo = m if lo is None else lo
                hi = m if hi is None else hi
                tol = 1e-12 * max(1.0, abs(x))
                ok = lo - tol <= x <= hi + tol
                if se is not None and se > 0:
                    n99 += 1
                    covered99 += abs(m - x) <= t99 * se
                elif m is not None and abs(m - x) <= tol:
                    n99 += 1
                    covered99 += 1
                if not ok:
                    bad += 1
                    print(f"  OUT: {e}: exact {x:.6g}, simulated {m:.6g} [{lo:.6g}, {hi:.6g}]")
    print(f"{bad} of {at} values outside their Bonferroni intervals; coverage of the 99% "
          f"intervals (estimate +/- t(0.995, {replicas - 1}) std_err = {t99:.3f} std_err): "
          f"{covered99}/{n99} = {covered99 / max(n99, 1):.4f}; lbmc sim {t_sim:.1f} s wall, "
          f"{t_exact:.1f} s for the exact values")
    return control_status(bad, control) == 0


def control_status(bad, control):
    """Exit status of a check of `bad` values against their references: with a control (a
    wrong model, control != "none") the check must see it (0 if bad > 0), else 0 if none is
    bad. Prints the control's outcome."""
    if control != "none":
        print(f"control {control}: " + ("detected (as it must be)" if bad else
                                         "NOT detected: the comparison cannot fail"))
        return 0 if bad else 1
    return 0 if bad == 0 else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("solve")
    s.add_argument("--n", type=int, required=True)
    s.add_argument("--lambda", dest="lam", type=float, required=True)
    s.add_argument("--pools", required=True)
    s.add_argument("--service", default="exponential")
    s.add_argument("--policy", default="random")
    s.add_argument("--routers", type=int, default=1)
    s.add_argument("--stale", default="withdraw")
    s.add_argument("--sampling", default="distinct")
    s.add_argument("--tail-k", type=int, default=4)
    t = sub.add_parser("selftest")
    t.add_argument("--refs", default=os.path.join(os.environ.get("LBMC_SOURCE_DIR", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..")), "tests", "data", "cases.json"))
    t.add_argument("--max-states", type=int, default=5000)
    g = sub.add_parser("grid")
    g.add_argument("--lbmc", default=os.environ.get("LBMC", "lbmc"))
    g.add_argument("--engine", default="general")
    g.add_argument("--grid", choices=("default", "slow"), default="default")
    g.add_argument("--control", choices=("none", "swap-mu", "erlang-h2"), default="none")
    g.add_argument("--replicas", type=int, default=10)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--repeat", type=int, default=1,
                   help="simulate each case with this many seeds (coverage measurements)")
    a = ap.parse_args()
    if a.cmd == "solve":
        pools = []
        for p in a.pools.split(","):
            b, m, B = p.split(":")
            pools.append((_num(b), _num(m), None if B == "inf" else int(B)))
        svc = a.service.split(";")
        sys_ = System(a.n, a.lam, pools, svc if len(svc) > 1 else svc[0], a.policy, a.routers,
                      a.stale, a.sampling, a.tail_k)
        print(json.dumps(solve_converged(sys_), indent=1))
        return 0
    if a.cmd == "selftest":
        ok = selftest(a.refs, a.max_states)
        print("selftest: " + ("every check holds" if ok else f"{len(_failures)} checks fail"))
        return 0 if ok else 1
    return 0 if grid(a.lbmc, a.engine, a.grid, a.control, a.replicas, a.seed, a.repeat) else 1


if __name__ == "__main__":
    sys.exit(main())
