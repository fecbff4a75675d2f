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
from typing import Any, Mapping

import numpy as np
from scipy import special

from .. import meanfield as _mf
from ._result import (METRICS, PAIRS, QUANTILE_LEVELS, _acc_from_tail, _all_exponential, _exponential_workload,
                      _messages, _phase_type, _Result, normalize_point, to_json)
from .cavity import cavity_jsq
from .lwl import lwl_fixed_point
from .ode import OccupancyModel, fixed_point, jacobian
from .pairs import pair_limits
from .quantiles import wait_plus_service_quantiles
from .refined_point import refined, transient_for_point
from .service import ServiceLaw

__all__ = ["reference", "reference_for_point", "refined", "transient_for_point", "to_json", "normalize_point",
           "METRICS", "QUANTILE_LEVELS"]


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
    R.work["cavity"] = res


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


def _grid_quantiles(w, surv, levels):
    """Quantiles of a law whose survival ``surv`` is known on the increasing points ``w``
    (w[0] = 0; surv[0] = P(X > 0)): 0 below the atom at 0, NaN beyond the last point, else
    linear interpolation of log surv between the two points around the level."""
    out = []
    for q in levels:
        if 1 - q >= surv[0]:
            out.append(0.0)
        elif 1 - q < surv[-1]:
            out.append(math.nan)
        else:
            i = int(np.argmax(surv <= 1 - q))
            l0, l1 = math.log(surv[i - 1]), math.log(surv[i])
            t = (math.log(1 - q) - l0) / (l1 - l0) if l1 != l0 else 0.0
            out.append(w[i - 1] + t * (w[i] - w[i - 1]))
    return out


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
        return
    same = np.allclose(lam_j, lam_j[0]) and np.allclose(mu, mu[0]) and len({s.text for s in p["service"]}) == 1
    if not same:
        R.note("quantiles of M/G/1 queues that differ between pools: not derived here")
        return
    # the wait of M/G/1 (FCFS) is its workload found by the arrival (PASTA): LL(1)'s fixed point
    r = lwl_fixed_point(float(lam_j[0]), 1, mu=float(mu[0]), service=p["service"][0])
    w, surv = r["w"], r["F"]
    if w.size > 2:
        qsrc = src + "; the wait = the workload found (the M/G/1 workload, LL(1)'s integral equation)"
        R.put("wait_quantiles", _grid_quantiles(w, surv, p["levels"]), qsrc, float(np.max(np.diff(w))), True)
        sq, sacc = wait_plus_service_quantiles(w, surv, p["service"][0], float(mu[0]), p["levels"])
        R.put("sojourn_quantiles", sq, qsrc + "; sojourn = W + S/mu (bracketed convolution)", sacc + r["accuracy"],
              True)


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
        wq = _grid_quantiles(w, surv, p["levels"])
        R.put("wait_quantiles", wq, src + "; P(W > w) = F(w)^d on the grid (linear interpolation)",
              float(np.max(np.diff(w))) if w.size > 1 else None)
        # the sojourn: the wait plus the customer's own requirement at speed mu, independent
        # of the workloads the arrival read
        sq, sacc = wait_plus_service_quantiles(w, surv, p["service"][0], float(mu[0]), p["levels"])
        R.put("sojourn_quantiles", sq, src + "; sojourn = W + S/mu, S independent of W (bracketed convolution)",
              sacc + a)
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
    elif R.out["source"]["utilization"]:  # pair_limits knows which policies have a route
        pair_limits(R, p)
    return R.done()


def _independent_pairs(R):
    """The pair statistics of routing that ignores the state (random, jsq(1), lwl(1),
    balanced(1)): each server receives its own Poisson stream (Poisson splitting), so the
    servers' queues are independent at every n and the joint law of two is the product of
    the marginals: every deviation, and n times it, is 0 in the stationary regime."""
    src = "0: state-blind routing gives each server its own Poisson stream, independent queues at every n"
    for m in PAIRS:
        R.put(m, np.zeros(R.out["metrics"][m].shape), src, 0.0, True)


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
