"""One entry point: the n -> infinity limit (and the refined 1/n value) of every metric of a point.

:func:`reference` takes a point's parameters (JSON-friendly: the policy text, lambda, the
pools with beta, mu or mu_k, buffer and service law, K) and returns, for every metric of
the results file, its limit where one is known (NaN where not), with the formula's source,
its stated accuracy and whether it is exact at every n. :func:`refined` does the same with
``x* + V/n`` (Gast & Van Houdt 2017) for a given n. :func:`to_json` prints either as JSON
(NaN as null, infinities as the strings "inf"/"-inf"), which is what
``python3 -m lbmc_analysis limit --json '<point>'`` prints for the C program.

Which formula answers (docs/limits.md has the table with sources and accuracies):

=================  ==========================  ============================================
policy             service                     limit
=================  ==========================  ============================================
random             exponential                 M/M/1(/B) per server, exact at every n
                                               (:func:`lbmc_analysis.meanfield.random_routing`)
random             phase-type                  M/PH/1(/B) per server (the cavity chain with
                                               d = 1, a constant arrival rate), exact
random             other, unlimited buffers    Pollaczek-Khinchine means, exact; tails unknown
balanced(1)        as random                   rate-proportional routing: per pool an
                                               M/G/1 of load rho (exact)
jsq(d)             exponential, one pool       closed forms (Vvedenskaya et al. 1996)
jsq(d) / bal.(c)   phase-type (pools allowed)  queue at the cavity (:mod:`.cavity`)
jsq(d) / bal.(c)   exponential with slots      ODE fixed point (:mod:`.ode`)
jsq (full), pull   exponential, or any law     PULL fixed point (Stolyar 2015), one slot;
                   with one slot               with slots: ODE fixed point (exponential)
lwl(d)             any law, one pool           LL(d) workload fixed point (:mod:`.lwl`)
=================  ==========================  ============================================

Quantiles of phase-type laws and of the no-wait limits: :mod:`.quantiles`. ``mean_workload``
(units of requirement): from each formula where it gives it, else the customers per server
under exponential service (docs/limits.md).
"""

from __future__ import annotations

import functools
import json
import math
import numbers
from typing import Any, Mapping

import numpy as np
from scipy import special

from .. import meanfield as _mf
from . import _check
from .cavity import cavity_jsq
from .lwl import lwl_fixed_point
from .ode import OccupancyModel, fixed_point, jacobian, parse_policy
from .service import ServiceLaw, parse_service

__all__ = ["reference", "reference_for_point", "refined", "transient_for_point", "to_json", "normalize_point", "METRICS", "QUANTILE_LEVELS"]

SCALARS = ("p_wait", "p_block", "p_wait_or_block", "mean_sojourn", "mean_wait", "messages_per_arrival",
           "withdrawals_per_arrival", "throughput")
PER_POOL = ("mean_queue", "mean_workload", "utilization", "admitted_share")
QUANTILES = ("sojourn_quantiles", "wait_quantiles")
PAIRS = ("pair_tv", "pair_tv_scaled", "pair_corr", "pair_corr_scaled")  # (J,), (J,), (J, K), (J, K)
METRICS = SCALARS[:5] + PER_POOL + ("tail",) + SCALARS[5:] + QUANTILES + PAIRS
QUANTILE_LEVELS = (0.5, 0.9, 0.99, 0.999)


# ----------------------------------------------------------------------------------
# the point
# ----------------------------------------------------------------------------------


def _per_pool(point, name, J=None):
    """A per-pool parameter from ``pools[j][name]``, ``point[name]`` (array or scalar) or the
    frame columns ``name_1, name_2, ...``; None when absent."""
    if isinstance(point.get("pools"), (list, tuple)):
        vals = [p.get(name) if isinstance(p, dict) else None for p in point["pools"]]
        if any(v is not None for v in vals):
            return vals
    if name in point and point[name] is not None:
        v = point[name]
        if isinstance(v, (list, tuple, np.ndarray)):
            return list(v)
        return [v] if J is None else [v] * J
    cols = sorted((int(k[len(name) + 1:]), k) for k in point
                  if isinstance(k, str) and k.startswith(name + "_") and k[len(name) + 1:].isdigit())
    if cols:
        return [point[k] for _, k in cols]
    return None


def _missing(v):
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip())


def normalize_point(point):
    """Check and normalise a point's parameters (see :func:`reference`); returns a dict with
    ``policy``, ``name``, ``param``, ``lam``, ``n`` (int or None), ``beta``, ``mu`` (first
    speeds), ``slots``, ``mu_k`` (list per pool or None), ``buffer`` (int or inf), ``service``
    (ServiceLaw per pool), ``routers``, ``stale``, ``sampling``, ``K``, ``levels``
    (quantile levels). ValueError names the key, the value and what is allowed."""
    if not isinstance(point, dict):
        raise ValueError(f"point = {point!r} is not allowed; a mapping of parameters is required")
    lam = point.get("lambda", point.get("lam"))
    if lam is None:
        raise ValueError("point: 'lambda' is required (the arrival rate per server)")
    lam = _check.real("lambda", lam, lo=0, lo_open=True)
    policy = point.get("policy")
    name = point.get("policy_name")
    if not _missing(policy):
        name, param = parse_policy(str(policy))
    elif not _missing(name):
        param = point.get("d")
        param = None if _missing(param) or int(param) == 0 else int(param)
        policy = f"{name}({param})" if param is not None else str(name)
        name, param = parse_policy(policy)
    else:
        raise ValueError("point: 'policy' is required (e.g. 'jsq(2)', 'pull', 'random', 'balanced(2)', 'lwl(2)')")
    if name not in ("random", "jsq", "balanced", "pull", "jiq", "lwl"):
        raise ValueError(f"policy = {policy!r} is not allowed; one of random, jsq(d), jsq, balanced(c), pull, jiq, "
                         "lwl(d) is required")
    if name in ("balanced", "lwl") and param is None:
        raise ValueError(f"policy = {policy!r} is not allowed; {name} needs its parameter, e.g. '{name}(2)'")
    n = point.get("n")
    n = None if _missing(n) else _check.integer("n", n, lo=1)
    if name == "jsq" and param is not None and n is not None and param >= n:
        param = None  # d = n is full JSQ (the results file writes d = n)
    beta = _per_pool(point, "beta")
    if beta is None:
        raise ValueError("point: 'beta' is required (one fraction per pool; e.g. [1] for one pool)")
    J = len(beta)
    mu_k = _per_pool(point, "mu_k", J)
    mu = _per_pool(point, "mu", J)
    if mu is None and mu_k is None:
        raise ValueError("point: 'mu' (or 'mu_k') is required, one speed per pool")
    mu = [None] * J if mu is None else mu
    if mu_k is not None:
        lists = []
        for m_ in mu_k:
            if isinstance(m_, (list, tuple, np.ndarray)):
                vals = [float(v) for v in np.ravel(m_) if not math.isnan(float(v))]  # NaN pads k > L_j
                lists.append(vals or None)
            else:
                lists.append(None)
        mu_k = lists
        for j in range(J):
            if mu_k[j] is not None:
                mu[j] = mu_k[j][0]
    if any(_missing(m) for m in mu):
        raise ValueError(f"mu = {mu!r} is not allowed; one speed > 0 per pool is required")
    slots = _per_pool(point, "slots", J)
    buffer = _per_pool(point, "buffer", J)
    b, m, buf = _check.pools(beta, mu, buffer)
    L = np.ones(J, dtype=int)
    if mu_k is not None:
        for j, lst in enumerate(mu_k):
            if lst is None:
                continue
            r = np.asarray(lst, dtype=float)
            if np.any(r <= 0) or np.any(np.abs(r - r[0] * np.arange(1, r.size + 1)) > 1e-12 * r):
                if r.size > 1 and not np.allclose(r, r[0]):
                    raise ValueError(f"mu_k[{j + 1}] = {lst} is not allowed here; the limits need a constant "
                                     "speed or a linear list k mu (service slots)")
                lst = [r[0]]
                mu_k[j] = lst
            L[j] = len(lst)
    if slots is not None and mu_k is None:
        L = np.array([_check.integer(f"slots[{j + 1}]", s, lo=1) for j, s in enumerate(slots)])
    service = _per_pool(point, "service", J)
    if service is None:
        service = ["exponential"] * J
    if len(service) != J:
        raise ValueError(f"service = {service!r} is not allowed; one law or one per pool ({J}) is required")
    laws = [parse_service(None if _missing(s) else s) for s in service]
    routers = point.get("routers")
    routers = 1 if _missing(routers) else _check.integer("routers", routers, lo=1)
    stale = point.get("stale")
    stale = "withdraw" if _missing(stale) else str(stale)
    if name == "jiq":
        name, stale = "pull", "keep"
    if stale not in ("withdraw", "keep"):
        raise ValueError(f"stale = {stale!r} is not allowed; 'withdraw' or 'keep' is required")
    sampling = point.get("sampling")
    sampling = "distinct" if _missing(sampling) else str(sampling)
    if sampling not in ("distinct", "with_replacement"):
        raise ValueError(f"sampling = {sampling!r} is not allowed; 'distinct' or 'with_replacement' is required")
    K = point.get("K", point.get("tail_k"))
    K = 10 if _missing(K) else _check.integer("K", K, lo=1, hi=100000)
    levels = point.get("quantile_levels")
    levels = list(QUANTILE_LEVELS) if levels is None else [
        _check.real("quantile_levels", q, lo=0, lo_open=True, hi=1, hi_open=True) for q in levels]
    return {"policy": str(policy), "name": name, "param": param, "lam": lam, "n": n, "beta": b, "mu": m,
            "slots": L, "mu_k": mu_k, "buffer": buf, "service": laws, "routers": routers, "stale": stale,
            "sampling": sampling, "K": K, "levels": levels}


def _point_json(p):
    return {"policy": p["policy"], "lambda": p["lam"], "n": p["n"], "beta": p["beta"].tolist(),
            "mu": p["mu"].tolist(), "slots": p["slots"].tolist(),
            "buffer": [-1 if math.isinf(b) else int(b) for b in p["buffer"]],
            "service": [s.text for s in p["service"]], "routers": p["routers"], "stale": p["stale"],
            "sampling": p["sampling"], "K": p["K"], "quantile_levels": p["levels"]}


# ----------------------------------------------------------------------------------
# the result
# ----------------------------------------------------------------------------------


class _Result:
    """The result being filled: every metric NaN until a formula puts it, with its source,
    accuracy and exactness (the shape of :func:`reference`'s return value)."""

    def __init__(self, p, kind, n=None):
        J, K, Q = p["beta"].size, p["K"], len(p["levels"])
        shapes = {m: () for m in SCALARS}
        shapes.update({m: (J,) for m in PER_POOL})
        shapes["tail"] = (J, K)
        shapes.update({m: (Q,) for m in QUANTILES})
        shapes.update({"pair_tv": (J,), "pair_tv_scaled": (J,), "pair_corr": (J, K), "pair_corr_scaled": (J, K)})
        self.p = p
        self.out = {
            "kind": kind,
            "n": n,
            "point": _point_json(p),
            "metrics": {m: np.full(shapes[m], np.nan) for m in METRICS},
            "source": dict.fromkeys(METRICS),
            "accuracy": dict.fromkeys(METRICS),
            "exact": dict.fromkeys(METRICS, False),
            "notes": [],
        }
        self.details = {}

    def put(self, name, value, source, accuracy, exact=False):
        if name == "tail":
            v = np.full(self.out["metrics"]["tail"].shape, np.nan)
            K = v.shape[1]
            rows = value if isinstance(value, (list, tuple)) else list(np.asarray(value, dtype=float))
            for j, r in enumerate(rows):
                r = np.asarray(r, dtype=float).ravel()
                m = min(K, r.size)
                v[j, :m] = r[:m]
                if m < K:
                    v[j, m:] = 0.0 if r.size else np.nan
            value = v
        arr = np.asarray(value, dtype=float).reshape(self.out["metrics"][name].shape)
        self.out["metrics"][name] = arr
        self.out["source"][name] = source
        self.out["accuracy"][name] = None if accuracy is None else float(accuracy)
        self.out["exact"][name] = bool(exact)

    def put_all(self, values, source, acc, exact=False, skip=()):
        for name in METRICS:
            if name in values and name not in skip:
                a = acc.get(name) if isinstance(acc, dict) else acc
                self.put(name, values[name], source, a, exact)

    def note(self, text):
        self.out["notes"].append(text)

    def done(self):
        self.out["details"] = self.details
        return self.out


def _acc_from_tail(a, util_levels, thr, lam):
    """Propagate an absolute accuracy a of the tails to the other metrics (sums over the
    levels holding mass, division by the throughput)."""
    q = a * max(util_levels, 1)
    return {"tail": a, "utilization": a, "mean_queue": q, "p_wait": 2 * a, "p_block": 2 * a,
            "p_wait_or_block": 4 * a, "admitted_share": 4 * a, "throughput": 2 * a * lam,
            "mean_sojourn": q / max(thr, 1e-300), "mean_wait": q / max(thr, 1e-300),
            "messages_per_arrival": 0.0, "withdrawals_per_arrival": 0.0, "sojourn_quantiles": None,
            "wait_quantiles": None}


# ----------------------------------------------------------------------------------
# quantiles of Erlang mixtures (exponential service)
# ----------------------------------------------------------------------------------


def _erlang_mixture_quantiles(weights, shapes, rates, levels):
    """Quantiles of the law sum_i w_i Erlang(shapes_i, rates_i) (shape 0: the point 0), found
    by bisection on the survival function (brentq, xtol 1e-12 relative)."""
    w = np.asarray(weights, dtype=float)
    k = np.asarray(shapes, dtype=float)
    r = np.asarray(rates, dtype=float)
    keep = w > 0
    w, k, r = w[keep] / w[keep].sum(), k[keep], r[keep]
    atom = float(w[k == 0].sum())
    pos = k > 0

    def surv(x):
        return float(np.sum(w[pos] * special.gammaincc(k[pos], r[pos] * x)))

    from .quantiles import law_quantiles

    return law_quantiles(surv, atom, levels, 1.0 / r.min())


def _quantiles_from_cavity(res, beta, mu, levels):
    """Sojourn and wait quantiles of admitted customers from a cavity solution with
    exponential service: an arrival joining a pool-j server at level k waits Erlang(k, mu_j)
    and stays Erlang(k + 1, mu_j)."""
    w, kk, rr = [], [], []
    for j in range(beta.size):
        rates, P = res["rates"][j], res["pi"][j]
        mass = np.concatenate(([1 - P.sum()], P.sum(axis=1)))
        adm = beta[j] * rates * mass
        for k in range(adm.size):
            if adm[k] > 0:
                w.append(adm[k])
                kk.append(k)
                rr.append(mu[j])
    w, kk, rr = np.array(w), np.array(kk), np.array(rr)
    return (_erlang_mixture_quantiles(w, kk + 1, rr, levels), _erlang_mixture_quantiles(w, kk, rr, levels))


# ----------------------------------------------------------------------------------
# the policies
# ----------------------------------------------------------------------------------


def _all_exponential(p):
    """Every pool's service law is exponential."""
    return all(s.is_exponential for s in p["service"])


def _phase_type(p):
    """Every pool's service law is phase-type."""
    return all(s.ph is not None for s in p["service"])


def _ph_quantiles_from_cavity(res, p):
    """Sojourn and wait quantiles of admitted customers from a cavity solution with
    phase-type service (:func:`.quantiles.found_state_quantiles`): the arrivals of pool j
    finding level k and phase q are ``beta_j lambda_{j,k} pi_j(k, q)``."""
    from .quantiles import found_state_quantiles

    pools = []
    for j, law in enumerate(p["service"]):
        ph = law.ph.scaled(float(p["mu"][j]))
        rates, P = np.asarray(res["rates"][j]), np.asarray(res["pi"][j])
        found = np.zeros((P.shape[0] + 1, ph.m))
        found[0, 0] = rates[0] * max(1.0 - float(P.sum()), 0.0)
        found[1:] = rates[1 : P.shape[0] + 1, None] * P
        pools.append((ph, p["beta"][j] * found))
    return found_state_quantiles(pools, p["levels"])


def _cavity(R, p, d, weights, source, exact=False):
    """Fill R from :func:`cavity_jsq` (after the necessary stability check); Erlang-mixture
    quantiles when every law is exponential."""
    a = p["beta"] if weights == "uniform" else p["beta"] * p["mu"] / float(np.sum(p["beta"] * p["mu"]))
    from .cavity import necessary_stability

    ok, margin = necessary_stability(p["lam"], d, p["beta"], p["mu"], p["buffer"], a)
    if not ok:
        R.note(f"no stationary regime as n -> infinity: a set of pools receives more than its capacity "
               f"(margin {margin:.4g} per server; Stolyar 2015's flow bound)")
        return
    res = cavity_jsq(p["lam"], d, beta=p["beta"], mu=p["mu"], service=p["service"], buffer=p["buffer"],
                     weights=weights)
    if not res["stable"]:
        R.note(f"no stationary regime as n -> infinity: a set of pools receives more than its capacity "
               f"(margin {res['stability_margin']:.4g})")
        return
    if not res["converged"]:
        R.note("the cavity iteration did not settle (unstable, or the tail does not decay within "
               f"{res['levels']} levels)")
        return
    lev = max(int(np.sum(t > 1e-15)) for t in res["tail"])
    acc = _acc_from_tail(res["accuracy"], lev, res["throughput"], p["lam"])
    vals = {k: res[k] for k in ("p_wait", "p_block", "p_wait_or_block", "mean_sojourn", "mean_wait",
                                "mean_queue", "utilization", "admitted_share", "throughput", "tail")}
    R.put_all(vals, source, acc, exact)
    # the cavity's workload is in time units (time to clear a server): lbmc's is in units of
    # requirement (mean 1), so times the pool's speed; no error bound is derived for it
    R.put("mean_workload", np.asarray(res["mean_workload"]) * p["mu"],
          source + "; the expected work left given the level and the phase in service", None, exact)
    if _all_exponential(p) and np.all(p["slots"] == 1):
        soj, wait = _quantiles_from_cavity(res, p["beta"], p["mu"], p["levels"])
        R.put("sojourn_quantiles", soj, source + "; Erlang mixture by level found", 1e-10, exact)
        R.put("wait_quantiles", wait, source + "; Erlang mixture by level found", 1e-10, exact)
    elif np.all(p["slots"] == 1):
        soj, wait = _ph_quantiles_from_cavity(res, p)
        src = source + "; phase-type absorption times from the level and phase found (limits.quantiles)"
        R.put("sojourn_quantiles", soj, src, None, exact)
        R.put("wait_quantiles", wait, src, None, exact)
    R.details["cavity"] = {k: res[k] for k in ("iterations", "residual", "accuracy", "levels", "mean_workload")}


def _ode(R, p, policy, source):
    """Exponential service with slots (or laws only the ODE has): the ODE fixed point."""
    try:
        model = OccupancyModel(policy, p["lam"], p["beta"], p["mu"], p["buffer"], slots=p["slots"],
                               sampling=p["sampling"], routers=p["routers"], stale=p["stale"])
        model, x = fixed_point(model)
    except (RuntimeError, ValueError) as exc:
        R.note(f"no mean-field fixed point: {exc}")
        return
    from .ode import trim

    mt, xt = trim(model, x, floor=1e-30)
    r = float(np.max(np.abs(mt.drift(xt))))
    try:
        Ainv = np.linalg.inv(jacobian(mt, xt, clip=True))
        a = float(np.max(np.sum(np.abs(Ainv), axis=1))) * max(r, 1e-16)
    except np.linalg.LinAlgError:
        a = math.nan
    met = model.metrics(x, p["K"])
    lev = int(np.sum(np.max(x, axis=0) > 1e-15))
    R.put_all(met, source, _acc_from_tail(a, lev, met["throughput"], p["lam"]))
    R.details["ode"] = {"levels": model.levels, "residual": r}


def _messages(R, p, value, source, exact=True, withdrawals=None):
    """The counted message rates; withdrawals 0, with their own source (``withdrawals``,
    default: the policy never withdraws a message)."""
    R.put("messages_per_arrival", value, source, 0.0, exact)
    R.put("withdrawals_per_arrival", 0.0,
          withdrawals or "no withdrawals (only pull with stale: withdraw withdraws)", 0.0, exact)


def _pk(R, p, a_weights):
    """Random (a_weights = beta) or rate-proportional (beta mu) routing, general service,
    unlimited buffers: every server an M/G/1 queue; Pollaczek-Khinchine means (exact)."""
    beta, mu, lam = p["beta"], p["mu"], p["lam"]
    lam_j = lam * a_weights / beta  # arrivals per server of pool j
    rho = lam_j / mu
    if np.any(rho >= 1):
        R.note(f"no stationary regime: a pool has load >= 1 ({rho.tolist()})")
        return
    ES2 = np.array([s.moment(2) for s in p["service"]])
    wait_j = lam_j * ES2 / (2 * mu**2 * (1 - rho))  # Pollaczek-Khinchine
    soj_j = wait_j + 1 / mu
    share = beta * lam_j / lam
    src = "every server an M/G/1 queue (Poisson thinning); Pollaczek-Khinchine (exact for every n)"
    R.put("utilization", rho, src, 1e-15, True)
    R.put("mean_queue", lam_j * soj_j, src, 1e-12, True)
    R.put("admitted_share", share, src, 1e-15, True)
    R.put("p_wait", float(np.sum(share * rho)), src + "; PASTA", 1e-15, True)
    R.put("p_block", 0.0, src, 0.0, True)
    R.put("p_wait_or_block", float(np.sum(share * rho)), src, 1e-15, True)
    R.put("throughput", lam, src, 0.0, True)
    R.put("mean_wait", float(np.sum(share * wait_j)), src, 1e-12, True)
    R.put("mean_sojourn", float(np.sum(share * soj_j)), src, 1e-12, True)
    # FCFS and Poisson arrivals: the time-average work equals an arrival's wait (PASTA), in
    # units of requirement times the speed
    R.put("mean_workload", mu * wait_j, src + "; time-average work = mean wait (PASTA)", 1e-12, True)
    if np.any(~np.isfinite(ES2)):
        R.note("E[S^2] is infinite: mean waiting and sojourn times and mean queues are infinite "
               "(Pollaczek-Khinchine)")


def _random_like(R, p, weights, label):
    """random (uniform draws) or balanced(1) (draws proportional to mu): independent queues."""
    beta, mu, lam = p["beta"], p["mu"], p["lam"]
    if np.any(p["slots"] > 1):
        if _all_exponential(p):
            _ode(R, p, "random" if weights == "uniform" else "balanced(1)",
                 f"{label} with service slots: independent birth-death queues, the fixed point of the C side's "
                 "ODE (exact for every n: Poisson thinning)")
            for k in R.out["exact"]:
                R.out["exact"][k] = R.out["source"][k] is not None
        else:
            R.note(f"{label} with slots and general service: no formula here")
        return
    if _all_exponential(p):
        if weights == "uniform":
            r = _mf.random_routing(lam, beta, mu, [-1 if math.isinf(b) else b for b in p["buffer"]], p["K"])
            if not r["stable"]:
                R.note("no stationary regime: a pool with unlimited buffers has lam >= mu_j")
                return
            src = "random routing: independent M/M/1(/B) queues, exact for every n [meanfield.random_routing]"
        else:
            if any(not math.isinf(b) for b in p["buffer"]) or lam >= float(np.sum(beta * mu)):
                _cavity(R, p, 1, "mu", "balanced(1): independent M/M/1/B queues by Poisson thinning (exact)",
                        exact=True)
                return
            r = _mf.proportional_routing(lam, beta, mu, p["K"])
            src = "balanced(1): rate-proportional routing, independent M/M/1 queues, exact [meanfield]"
        R.put_all(r, src, 1e-14, exact=True, skip=("messages_per_arrival", "withdrawals_per_arrival"))
        R.details["meanfield"] = {k: v for k, v in r.items() if k not in METRICS}
        # quantiles: M/M/1 sojourn Exp(mu - lam_j), wait 0 w.p. 1 - rho_j (unlimited buffers)
        if all(math.isinf(b) for b in p["buffer"]):
            a = beta if weights == "uniform" else beta * mu / float(np.sum(beta * mu))
            lam_j = lam * a / beta
            share = a
            w, k, rr = [], [], []
            for j in range(beta.size):
                rho_j = lam_j[j] / mu[j]
                for kk in range(0, 2000):  # geometric number found: P(k) = (1 - rho) rho^k
                    pk = share[j] * (1 - rho_j) * rho_j**kk
                    if pk < 1e-18:
                        break
                    w.append(pk)
                    k.append(kk)
                    rr.append(mu[j])
            w, k, rr = np.array(w), np.array(k), np.array(rr)
            R.put("sojourn_quantiles", _erlang_mixture_quantiles(w, k + 1, rr, p["levels"]), src, 1e-10, True)
            R.put("wait_quantiles", _erlang_mixture_quantiles(w, k, rr, p["levels"]), src, 1e-10, True)
        return
    if _phase_type(p):
        _cavity(R, p, 1, weights, f"{label}: independent M/PH/1(/B) queues (the tagged-queue chain with a "
                "constant arrival rate), exact for every n", exact=True)
        return
    if all(math.isinf(b) for b in p["buffer"]):
        _pk(R, p, beta if weights == "uniform" else beta * mu / float(np.sum(beta * mu)))
        return
    R.note("finite buffers with a non-phase-type law under random routing: no formula here (M/G/1/B)")


def _pull_like(R, p, full):
    """pull / jiq, and full jsq (all arrivals to idle servers in the limit)."""
    beta, mu, lam = p["beta"], p["mu"], p["lam"]
    cap = float(np.sum(beta * mu * p["slots"]))
    if lam >= cap:
        R.note(f"rho = {lam / cap:.4g} >= 1: no stationary regime")
        return
    name = "full JSQ" if full else "PULL"
    if np.all(p["slots"] == 1):
        r = _mf.pull_multi_router(lam, beta, mu, 1 if full else p["routers"], "withdraw" if full else p["stale"],
                                  [-1 if math.isinf(b) else b for b in p["buffer"]], p["K"])
        if full:
            src = "full JSQ: every arrival finds an idle server as n -> infinity; the PULL fixed point (heuristic)"
        elif p["routers"] == 1 or p["stale"] == "withdraw":
            src = "PULL fixed point (Stolyar 2015" + (", 2017: multiple routers" if p["routers"] > 1 else "") + ")"
        else:
            src = "PULL fixed point; stale keep with R > 1: conjectured by analogy, not proven"
        if not _all_exponential(p):
            src += ("; general service: the balance of idle servers (arrivals in, completions at mean rate "
                    "mu_j out) only involves means: derived here, not proven")
        R.put_all(r, src, 1e-13, skip=("messages_per_arrival", "withdrawals_per_arrival"))
        R.details["meanfield"] = {k: v for k, v in r.items() if k not in METRICS and k != "proven"}
        # nobody waits in the limit: a busy server's work is the remaining requirement of the
        # service in progress, E[S^2] / (2 E[S]) with E[S] = 1 (renewal theory)
        m2 = np.array([s.moment(2) for s in p["service"]])
        R.put("mean_workload", np.asarray(r["utilization"], dtype=float) * m2 / 2,
              src + "; the work of a busy server is the residual requirement E[S^2]/2", 1e-13)
        # no waiting: sojourn = service time of the pool joined (exponential: Exp(mu_j))
        if _all_exponential(p):
            share = np.asarray(r["admitted_share"])
            R.put("sojourn_quantiles", _erlang_mixture_quantiles(share, np.ones_like(share), mu, p["levels"]),
                  src, 1e-10)
            R.put("wait_quantiles", np.zeros(len(p["levels"])), src, 0.0)
        else:
            from .quantiles import no_wait_sojourn_quantiles

            q = no_wait_sojourn_quantiles(r["admitted_share"], p["service"], mu, p["levels"])
            R.put("sojourn_quantiles", q, src + "; nobody waits: the requirement at the joined pool's speed", None)
            R.put("wait_quantiles", np.zeros(len(p["levels"])), src, 0.0)
    elif _all_exponential(p):
        _ode(R, p, "jsq" if full else "pull", f"{name} with service slots: the mean-field ODE's fixed point "
             "(the C side's drift)")
    else:
        R.note(f"{name} with slots and general service: no formula here")
        return
    if full:
        _messages(R, p, 2.0 * p["n"] if p["n"] is not None else math.inf, "2n per arrival (counted)")
    else:
        _messages(R, p, 1.0, "one message per customer as n -> infinity (Stolyar 2015, 2017)", exact=False,
                      withdrawals="0 as n -> infinity: one message per customer, no withdrawal (Stolyar 2015, 2017)")


def _jsq_like(R, p, d, weights):
    """jsq(d) (uniform draws) or balanced(c) (draws proportional to mu), c = d >= 2."""
    beta, mu, lam = p["beta"], p["mu"], p["lam"]
    label = f"JSQ({d})" if weights == "uniform" else f"balanced({d})"
    homog = beta.size == 1 or (np.allclose(mu, mu[0]) and len({b for b in p["buffer"]}) == 1
                               and len({s.text for s in p["service"]}) == 1 and np.all(p["slots"] == p["slots"][0]))
    if np.any(p["slots"] > 1):
        if _all_exponential(p):
            _ode(R, p, f"{'jsq' if weights == 'uniform' else 'balanced'}({d})",
                 f"{label} with service slots: the mean-field ODE's fixed point (the C side's drift)")
        else:
            R.note(f"{label} with slots and general service: no formula here")
        return
    if _all_exponential(p) and homog:
        b0 = p["buffer"][0]
        if math.isinf(b0) and lam >= mu[0]:
            R.note("rho >= 1 with unlimited buffers: no stationary regime")
            return
        r = _mf.jsq_fixed_point(lam, d, mu=float(mu[0]), buffer=None if math.isinf(b0) else int(b0), K=p["K"])
        J = beta.size
        for key in ("mean_queue", "utilization"):
            r[key] = np.repeat(r[key], J)
        r["admitted_share"] = beta.copy()
        r["tail"] = np.repeat(r["tail"], J, axis=0)
        src = ("JSQ(d) mean field, closed form (Vvedenskaya, Dobrushin & Karpelevich 1996; Mitzenmacher 2001)"
               if math.isinf(b0) else "JSQ(d) mean field with buffer B (fixed point of the truncated ODE) [meanfield]")
        R.put_all(r, src, 1e-13, skip=("messages_per_arrival", "withdrawals_per_arrival"))
        if math.isinf(b0):
            res = cavity_jsq(lam, d, beta=[1.0], mu=[mu[0]], weights="uniform")
            soj, wait = _quantiles_from_cavity(res, np.ones(1), mu[:1], p["levels"])
            R.put("sojourn_quantiles", soj, src + "; Erlang mixture by level found", 1e-10)
            R.put("wait_quantiles", wait, src + "; Erlang mixture by level found", 1e-10)
    elif _phase_type(p):
        src = (f"{label}: queue at the cavity (Bramson, Lu & Prabhakar 2010, 2012)"
               + ("" if homog else "; heterogeneous pools: derived here (same independence ansatz), not proven")
               + ("" if _all_exponential(p) else "; phase-type service"))
        _cavity(R, p, d, weights, src)
    else:
        R.note(f"{label} with service '{p['service'][0].text}': the cavity method here needs phase-type laws; "
               "no limit")
        return
    _messages(R, p, 2.0 * d, f"2{'d' if weights == 'uniform' else 'c'} per arrival (counted)")


def _lwl(R, p, d):
    """lwl(d), d >= 2: the LL(d) workload fixed point (one pool or identical pools)."""
    beta, mu = p["beta"], p["mu"]
    homog = np.allclose(mu, mu[0]) and len({s.text for s in p["service"]}) == 1
    if not homog:
        R.note("lwl(d) with heterogeneous pools: not derived here (no limit)")
        return
    if any(not math.isinf(b) for b in p["buffer"]) or np.any(p["slots"] > 1):
        R.note("lwl(d) with finite buffers or slots: not derived here (no limit)")
        return
    if p["lam"] >= mu[0]:
        R.note("rho >= 1: no stationary regime")
        return
    r = lwl_fixed_point(p["lam"], d, mu=float(mu[0]), service=p["service"][0], K=p["K"])
    src = (f"LL({d}) workload fixed point (Hellemans & Van Houdt, POMACS 2018), "
           f"{'initial-value problem (phase-type)' if r['method'] == 'ph' else 'integral equation on a grid'}")
    J = beta.size
    a = r["accuracy"]
    lam = p["lam"]
    vals = {"p_wait": r["p_wait"], "p_block": 0.0, "p_wait_or_block": r["p_wait"], "mean_wait": r["mean_wait"],
            "mean_sojourn": r["mean_sojourn"], "mean_queue": np.repeat(r["mean_queue"], J),
            "utilization": np.repeat(r["utilization"], J), "admitted_share": beta.copy(), "throughput": lam}
    acc = {"p_wait": 1e-15, "p_block": 0.0, "p_wait_or_block": 1e-15, "mean_wait": a, "mean_sojourn": a,
           "mean_queue": lam * a, "utilization": 1e-15, "admitted_share": 1e-15, "throughput": 0.0}
    R.put_all(vals, src, acc)
    # Brumelle's H = lambda G (1971): the time-average work of a server is lambda (E[S] E[W]
    # + E[S^2]/2), the joining customer's requirement independent of its wait (lwl(d) reads
    # the workloads, not the new requirement); in units of requirement (times mu)
    m2 = p["service"][0].moment(2)
    R.put("mean_workload", np.repeat(lam * (r["mean_wait"] + m2 / (2 * mu[0])), J),
          src + "; H = lambda G (Brumelle 1971)", lam * a)
    if not r["finite"]:
        R.note(f"the mean waiting time of LL({d}) is infinite for '{p['service'][0].text}' (Lomax needs "
               f"d (shape - 1) > 1): time and queue means are inf")
    # waiting-time quantiles: P(W > w) = F(w)^d
    w, F = r["w"], r["F"]
    if r["finite"] and w.size > 2:
        surv = F**d
        wq = []
        for q in p["levels"]:
            if 1 - q >= surv[0]:
                wq.append(0.0)
            elif 1 - q < surv[-1]:
                wq.append(math.nan)
            else:
                i = int(np.argmax(surv <= 1 - q))
                # linear interpolation in log survival between w[i-1] and w[i]
                l0, l1 = math.log(surv[i - 1]), math.log(surv[i])
                t = (math.log(1 - q) - l0) / (l1 - l0) if l1 != l0 else 0.0
                wq.append(w[i - 1] + t * (w[i] - w[i - 1]))
        R.put("wait_quantiles", wq, src + "; P(W > w) = F(w)^d on the grid (linear interpolation)",
              float(np.max(np.diff(w))) if w.size > 1 else None)
    _messages(R, p, 2.0 * d, "2d per arrival (counted)")
    R.details["lwl"] = {"method": r["method"], "accuracy": a, "finite": r["finite"]}


def _dispatch(p):
    """The limit of a normalised point: the formula of its policy and service laws."""
    R = _Result(p, "limit")
    name, d = p["name"], p["param"]
    if name == "random":
        _random_like(R, p, "uniform", "random routing")
        _messages(R, p, 0.0, "random routing sends no messages")
    elif name == "balanced" and d == 1:
        _random_like(R, p, "mu", "balanced(1)")
        _messages(R, p, 2.0, "2c per arrival (counted)")
    elif name == "balanced":
        _jsq_like(R, p, d, "mu")
    elif name == "jsq" and d is None:
        _pull_like(R, p, full=True)
    elif name == "jsq":
        if d == 1:
            _random_like(R, p, "uniform", "jsq(1) = random routing")
            _messages(R, p, 2.0, "2d per arrival (counted)")
        else:
            _jsq_like(R, p, d, "uniform")
    elif name == "pull":
        _pull_like(R, p, full=False)
    elif name == "lwl":
        if d == 1:
            _random_like(R, p, "uniform", "lwl(1) = random routing")
            _messages(R, p, 2.0, "2d per arrival (counted)")
        else:
            _lwl(R, p, d)
    _exponential_workload(R, p)
    if (name == "random" or (name in ("jsq", "lwl", "balanced") and d == 1)) and R.out["source"]["utilization"]:
        _independent_pairs(R)
    return R.done()


def _independent_pairs(R):
    """The pair statistics of routing that ignores the state (random, jsq(1), lwl(1),
    balanced(1)): each server receives its own Poisson stream (Poisson splitting), so the
    servers' queues are independent at every n and the joint law of two is the product of
    the marginals: every deviation, and n times it, is 0 in the stationary regime."""
    src = "0: state-blind routing gives each server its own Poisson stream, independent queues at every n"
    for m in PAIRS:
        R.put(m, np.zeros(R.out["metrics"][m].shape), src, 0.0, True)


def _exponential_workload(R, p):
    """Exponential service, where no formula put the workload: every customer present holds
    a remaining requirement of mean 1 (memoryless), so the work per server in units of
    requirement is the number of customers per server."""
    if not _all_exponential(p) or np.any(~np.isnan(R.out["metrics"]["mean_workload"])):
        return
    if R.out["source"]["mean_queue"] is None:
        return
    R.put("mean_workload", R.out["metrics"]["mean_queue"],
          R.out["source"]["mean_queue"] + "; exponential service: work = customers (memoryless)",
          R.out["accuracy"]["mean_queue"], R.out["exact"]["mean_queue"])


@functools.lru_cache(maxsize=256)
def _cached(key):
    return _dispatch(normalize_point(json.loads(key)))


def _key(point):
    def conv(v):
        if isinstance(v, np.ndarray):
            return v.tolist()
        if isinstance(v, (np.integer,)):
            return int(v)
        if isinstance(v, (np.floating,)):
            return float(v)
        if isinstance(v, ServiceLaw):
            return v.text
        return str(v)

    return json.dumps(point, sort_keys=True, default=conv)


def _copy(out):
    o = dict(out)
    o["metrics"] = {k: v.copy() for k, v in out["metrics"].items()}
    for k in ("source", "accuracy", "exact", "point"):
        o[k] = dict(out[k])
    o["notes"] = list(out["notes"])
    return o


def reference(point) -> dict:
    """The n -> infinity limit of every metric of a point, with its source and accuracy.

    Parameters
    ----------
    point : mapping (JSON-friendly) with
        ``policy`` (``"jsq(2)"``, ``"jsq"``, ``"random"``, ``"pull"``, ``"jiq"``,
        ``"balanced(2)"``, ``"lwl(2)"``; or ``policy_name`` and ``d`` as in a results
        file), ``lambda`` (arrival rate per server), the pools, either as ``pools``:
        ``[{beta, mu or mu_k, buffer, service}, ...]`` (the job file's form) or as arrays
        ``beta``, ``mu``, ``buffer``, ``service``, ``mu_k``/``slots`` (or the frame columns
        ``beta_1, mu_1, buffer_1, ...``); optional ``n`` (full jsq's message count; ``d = n``
        means full jsq), ``routers``, ``stale``, ``sampling``, ``K`` (tail levels, default
        10) and ``quantile_levels`` (default 0.5, 0.9, 0.99, 0.999). Buffers: integer >= 1,
        or -1 / ``"inf"`` / null for unlimited. Service: lbmc's text per pool or one for all
        (default exponential).

    Returns
    -------
    dict with
        ``metrics``: metric name (lbmc's names) -> numpy array of the metric's shape
        (scalar: shape (); per pool (J,); ``tail`` (J, K); quantiles (Q,)), NaN where no
        limit is known; ``inf`` where the limit is infinite;
        ``source``: name -> the formula and its reference (None where unknown);
        ``accuracy``: name -> estimated absolute error of the computed value (None where
        unknown or not stated);
        ``exact``: name -> True when the value is exact at every n (random and
        rate-proportional routing), not only as n -> infinity;
        ``notes``: why a metric is unknown or infinite, what is conjectured;
        ``kind`` = ``"limit"``, ``n`` = None, ``point`` (the normalised parameters),
        ``details`` (solver diagnostics and the extra outputs of the formulas used).

    Raises ValueError for bad parameters (naming the key, the value and what is allowed).
    Results are cached per point (the plots call this for every metric).
    """
    return _copy(_cached(_key(point)))


# ----------------------------------------------------------------------------------
# refined mean field
# ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _refined_expansion(pol, lam, beta, mu, buffer, slots, sampling, routers, stale):
    """The expansion (x*, V, W, ...) of one system, which does not depend on n: computed once
    for the points of a grid that differ only in n (lbmc info --limit refined). Read only."""
    from . import refined_mf as _rf

    model = OccupancyModel(pol, lam, np.array(beta), np.array(mu), np.array(buffer), slots=np.array(slots),
                           sampling=sampling, routers=routers, stale=stale)
    return _rf.refined_stationary(model)


def refined(point, n, order=1) -> dict:
    """``x* + V/n`` (Gast & Van Houdt 2017) for every metric that is a function of the
    occupancy state, exponential service and the policies with a smooth occupancy drift
    (random, jsq(d), balanced(c)), heterogeneous pools, finite buffers and slots included. Same return shape as :func:`reference`, with
    ``kind = "refined"`` and ``n``; metrics without an expansion (quantiles) are NaN.

    ``E[g(X)] ~ g(x*) + (grad g . V + 1/2 D^2 g : W + g1)/n`` for ``tail``, ``mean_queue``,
    ``utilization`` (linear in x), ``p_wait``, ``p_block``, ``admitted_share`` (the routing
    law's mass on the busy / full / pool's classes, time-averaged: per arrival by PASTA),
    then ``throughput = lam (1 - p_block)``, ``mean_sojourn`` (Little, from the expanded
    means) and ``mean_wait``. ``accuracy`` is the numerical accuracy of the 1/n coefficient
    divided by n; the approximation itself is O(1/n^2) (measured in the tests: at n = 10,
    JSQ(2), lambda 0.9, buffer 3, the refined tails are within 0.009 of the exact ones, the
    mean field within 0.034).

    No refined value (NaN, with a note saying why) for pull, jiq and full jsq (their fixed
    point is on the boundary, where the drift is not differentiable: the expansion does not
    apply), for unstable points (no fixed point, or the point's key ``status`` is
    ``"unstable"``: the simulation found it so), lwl(d) and non-exponential service.
    balanced(c) draws c distinct servers: its law's own 1/n term is included, as for jsq(d)
    with distinct sampling (:meth:`.ode.OccupancyModel.law_correction`).

    ``order = 2`` adds the 1/n^2 term ``A/n^2`` (:func:`.refined_mf.refined_order2_jsq`) to
    ``tail``, ``mean_queue`` and ``utilization`` of homogeneous jsq(d) with sampling
    ``with_replacement`` (one pool, exponential service, any buffer); the other metrics,
    and other systems, stay at order 1 (their sources say which; a note says why).
    """
    from . import refined_mf as _rf

    n = _check.integer("n", n, lo=1)
    if order not in (1, 2):
        raise ValueError(f"order = {order!r} is not allowed; 1 or 2 is required")
    p = normalize_point(point)
    R = _Result(p, "refined", n)
    name, d = p["name"], p["param"]
    if not _all_exponential(p):
        R.note("the refined mean field here needs exponential service (the occupancy chain)")
        return R.done()
    if name == "lwl":
        R.note("lwl(d) has no occupancy form: no refined mean field")
        return R.done()
    if name == "pull" or (name == "jsq" and d is None):
        what = "jiq" if name == "pull" and p["stale"] == "keep" else ("jsq" if name == "jsq" else "pull")
        R.note(f"no refined value for {what}: its mean-field fixed point lies on the boundary of the state space "
               "(every arrival joins an idle server, the levels above are empty) and its drift is not "
               "differentiable there (the law jumps where the idle servers run out); the refined mean field "
               "(Gast & Van Houdt 2017) needs a drift twice differentiable at the fixed point; x* + V/n would "
               "be the n -> inf limit itself (p_wait 0), while the finite system waits (its waiting is not in "
               "the expansion)")
        return R.done()
    status = point.get("status") if isinstance(point, Mapping) else None
    if isinstance(status, bytes):
        status = status.decode()
    if isinstance(status, str) and status.strip().lower() == "unstable":
        R.note("no refined value: the point is unstable (status 'unstable'); the refined mean field expands a "
               "stationary regime around the mean-field fixed point")
        return R.done()
    pol = p["policy"]
    try:
        rr = _refined_expansion(pol, p["lam"], tuple(p["beta"]), tuple(p["mu"]), tuple(p["buffer"]),
                                tuple(p["slots"]), p["sampling"], p["routers"], p["stale"])
    except (RuntimeError, ValueError, np.linalg.LinAlgError) as exc:
        R.note(f"no refined mean field: {exc}")
        return R.done()
    m, x, V, W = rr["model"], rr["x"], rr["V"], rr["W"]
    J, Kx = x.shape
    Lv = m.levels
    kk = np.arange(Lv)
    B = np.array([math.inf if math.isinf(b) else b for b in m.buffer])
    blocked = kk[None, :] >= B[:, None]
    busy = (kk[None, :] >= m.L[:, None]) & ~blocked

    def g(X):
        s = m.s_from_x(X)
        law = m.law(s, clip=False)
        pb = np.sum(np.where(blocked, law, 0.0), axis=(-2, -1))
        pw = np.sum(np.where(busy, law, 0.0), axis=(-2, -1))
        adm = np.sum(np.where(blocked, 0.0, law), axis=-1)  # (..., J)
        return np.concatenate((pb[..., None], pw[..., None], adm), axis=-1)

    s_star = m.s_from_x(x)
    p1 = m.law_correction(s_star)
    g1 = np.concatenate(([np.sum(np.where(blocked, p1, 0.0))], [np.sum(np.where(busy, p1, 0.0))],
                         np.sum(np.where(blocked, 0.0, p1), axis=-1)))
    g0, c1 = _rf.expand(g, m, x, V, W, g1)
    val = g0 + c1 / n
    pb, pw, adm = val[0], val[1], val[2:]
    tails = x + V / n
    mean_queue = tails.sum(axis=1)
    thr = p["lam"] * (1 - pb)
    share = adm / adm.sum()
    soj = float(np.sum(m.b * mean_queue)) / thr
    a = rr["accuracy"] / n
    src = (f"refined mean field x* + V/n (Gast & Van Houdt 2017) at n = {n}, around the limit of "
           f"{p['policy']}; error O(1/n^2)")
    acc = _acc_from_tail(a, Kx, thr, p["lam"])
    R.put("tail", list(tails), src, acc["tail"])
    R.put("mean_queue", mean_queue, src, acc["mean_queue"])
    R.put("utilization", tails[:, 0], src, acc["utilization"])
    R.put("p_block", pb, src, acc["p_block"])
    R.put("p_wait", pw, src, acc["p_wait"])
    R.put("p_wait_or_block", pb + pw, src, acc["p_wait_or_block"])
    R.put("admitted_share", share, src, acc["admitted_share"])
    R.put("throughput", thr, src, acc["throughput"])
    R.put("mean_sojourn", soj, src + "; Little", acc["mean_sojourn"])
    R.put("mean_wait", soj - float(np.sum(share / m.mu)), src + "; Little", acc["mean_wait"])
    if order == 2:
        _refined_order2(R, p, n, tails, acc)
    if name in ("jsq", "balanced") and d is not None:
        _messages(R, p, 2.0 * d, "2d per arrival (counted)")
    elif name == "random":
        _messages(R, p, 0.0, "random routing sends no messages")
    R.details["refined"] = {"x": x.copy(), "V": V.copy(), "residual": rr["residual"], "accuracy": rr["accuracy"]}
    _exponential_workload(R, p)
    return R.done()


def _refined_order2(R, p, n, tails, acc):
    """x* + V/n + A/n^2 for tail, mean_queue and utilization of homogeneous jsq(d) with
    replacement (R's order-1 values replaced), else a note."""
    from . import refined_mf as _rf

    ok = (p["name"] == "jsq" and p["param"] is not None and p["beta"].size == 1 and p["sampling"] == "with_replacement"
          and np.all(p["slots"] == 1))
    if not ok:
        R.note("order 2 (+ A/n^2) is implemented for homogeneous jsq(d) with sampling with_replacement only: "
               "order 1 is given")
        return
    buf = float(p["buffer"][0])
    o2 = _rf.refined_order2_jsq(int(p["param"]), float(p["lam"]),
                                math.inf if (math.isinf(buf) or buf < 0) else int(buf), float(p["mu"][0]))
    t2 = np.array(tails, dtype=float).copy()
    m = min(t2.shape[1], o2["x"].size)
    t2[0, :m] = (o2["x"] + o2["V"] / n + o2["A"] / n**2)[:m]
    src = (f"refined mean field of order 2, x* + V/n + A/n^2 (Gast, Bortolussi & Tribastone 2019) at n = {n}, "
           f"around the limit of {p['policy']}; error O(1/n^3)")
    R.put("tail", list(t2), src, acc["tail"])
    R.put("mean_queue", t2.sum(axis=1), src, acc["mean_queue"])
    R.put("utilization", t2[:, 0], src, acc["utilization"])


# ----------------------------------------------------------------------------------
# JSON
# ----------------------------------------------------------------------------------


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer, int)):
        return int(v)
    if isinstance(v, (numbers.Real, np.floating)):
        f = float(v)
        if math.isnan(f):
            return None
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(v, ServiceLaw):
        return v.text
    if v is None or isinstance(v, str):
        return v
    return str(v)


def to_json(result, *, details=False, indent=None) -> str:
    """JSON text of a :func:`reference` / :func:`refined` result: NaN -> null (unknown),
    +-inf -> the strings "inf" / "-inf" (an infinite limit), arrays -> nested lists.
    ``details`` keeps the solver diagnostics (dropped by default)."""
    r = dict(result)
    if not details:
        r.pop("details", None)
    return json.dumps(_jsonable(r), indent=indent, allow_nan=False)


# ----------------------------------------------------------------------------------
# transient
# ----------------------------------------------------------------------------------


def transient_for_point(point, t, x0=None, *, n=None, levels=None):
    """The mean-field ODE of a point from the start x0 on the times t, and with ``n`` the
    refined ``x(t) + V(t)/n`` (Gast, Bortolussi & Tribastone 2019), as a JSON-friendly dict.

    Parameters: ``point`` as for :func:`reference` (exponential service; the policies with an
    occupancy form); ``t`` increasing times >= 0 (model time); ``x0`` None / ``"empty"`` or
    ``"tail:F1,F2,...;G1,..."`` (rmf_tool's x0, per pool), or a list of per-pool tails;
    ``n``: servers for the refined curve (None: the ODE only; pull, jiq and full jsq get none,
    the source says why, as in :func:`refined`); ``levels``: levels of the
    truncated ODE (default: the start's levels + 12, at least K + 1, at most the largest
    buffer + 1).

    Returns ``{"time": (T,), "tail": (T, J, K), "mean_queue": (T, J), "tail_refined": (T, J, K)
    or None, "mean_queue_refined": ..., "source": str, "top": the largest mass the top level
    reached (truncation check; keep it below ~1e-12)}`` (numpy arrays; :func:`to_json` prints
    it). ``tail`` uses the limit laws (n -> infinity)."""
    from . import refined_mf as _rf
    from .ode import OccupancyModel, _start_state, parse_tail_start, transient

    p = normalize_point(point)
    if not _all_exponential(p):
        raise ValueError("service is not allowed here; the mean-field ODE needs exponential service")
    if p["name"] == "lwl":
        raise ValueError("policy = 'lwl(d)' is not allowed here; it has no occupancy form")
    J, K = p["beta"].size, p["K"]
    starts = parse_tail_start(x0, J) if isinstance(x0, str) else (None if x0 is None else list(x0))
    depth = max((len(s) for s in starts), default=0) if starts else 0
    if levels is None:
        levels = max(depth + 12, K + 1)
        if all(not math.isinf(b) for b in p["buffer"]):
            levels = min(levels, int(max(p["buffer"])) + 1)
    pol = p["policy"] if p["name"] != "pull" else "pull"
    model = OccupancyModel("jsq" if (p["name"] == "jsq" and p["param"] is None) else pol, p["lam"], p["beta"],
                           p["mu"], p["buffer"], slots=p["slots"], sampling=p["sampling"], routers=p["routers"],
                           stale=p["stale"], levels=levels)
    x_start = _start_state(model, starts)
    t = np.asarray(t, dtype=float)
    boundary = p["name"] == "pull" or (p["name"] == "jsq" and p["param"] is None)
    if n is None or boundary:
        xs = transient(model, t, x_start).values
        V = None
    else:
        n = _check.integer("n", n, lo=1)
        ds = _rf.refined_transient(model, t, x_start)
        xs, V = ds["x"].values, ds["V"].values
    Kx = xs.shape[2]

    def cut(a):
        out = np.zeros(a.shape[:2] + (K,))
        m = min(K, Kx)
        out[..., :m] = a[..., :m]
        return out

    res = {"time": t, "tail": cut(xs), "mean_queue": xs.sum(axis=2), "tail_refined": None,
           "mean_queue_refined": None, "top": float(np.max(xs[..., -1])),
           "source": "mean-field ODE with the C side's drift (src/engine/occ_meanfield.c), n -> infinity laws"}
    if V is not None:
        xr_ = xs + V / n
        res["tail_refined"] = cut(xr_)
        res["mean_queue_refined"] = xr_.sum(axis=2)
        res["source"] += f"; refined x(t) + V(t)/n at n = {n} (Gast, Bortolussi & Tribastone 2019)"
    elif n is not None:
        res["source"] += (f"; no refined x(t) + V(t)/n for {p['policy']}: its drift is not differentiable where "
                          "the idle servers run out (the expansion does not apply; docs/limits.md section 4)")
    return res

def reference_for_point(params: Mapping[str, Any], K=10):
    """The reference of one grid point as a flat dict, or ``None`` when no limit is known.

    A thin wrapper of the :func:`reference` above (the one entry point: every
    policy, service laws, heterogeneous pools), kept for the plots and the existing
    callers. ``params`` holds the point's parameters as in a results file / :func:`to_frame`
    row: ``lambda``, ``policy`` (or ``policy_name`` and ``d``), ``beta``, ``mu``,
    ``buffer``, ``service`` (arrays, or columns ``beta_1, beta_2, ...``), optional ``n``,
    ``routers``, ``stale``, ``sampling``.

    Returns the metric values under their results-file names (NaN where that metric has no
    known limit), the extra outputs of the exponential formulas used (e.g. ``a`` of the PULL
    fixed point, ``workload`` of balanced(1), ``stable`` of random routing), ``reference``
    (the source of the main metrics), and ``source`` / ``accuracy`` per metric; ``None``
    when no metric but the counted message rates has a limit (e.g. unstable points).
    """
    point = dict(params)
    point["K"] = max(int(K), 1)
    try:
        r = reference(point)
    except (KeyError, ValueError, TypeError):
        return None
    values = r["metrics"]
    structural = ("messages_per_arrival", "withdrawals_per_arrival", "sojourn_quantiles", "wait_quantiles")
    if not any(np.any(~np.isnan(v)) for k, v in values.items() if k not in structural):
        return None
    out = dict(r["details"].get("meanfield", {}))
    for k, v in values.items():
        out[k] = float(v) if np.ndim(v) == 0 else v
    main = [r["source"][k] for k in ("mean_sojourn", "p_wait", "utilization") if r["source"][k]]
    out["reference"] = main[0] if main else next((s for s in r["source"].values() if s), "")
    out["source"] = r["source"]
    out["accuracy"] = r["accuracy"]
    out["notes"] = r["notes"]
    return out
