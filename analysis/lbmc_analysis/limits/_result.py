"""The point and the result shared by the limit entry points (:mod:`.reference`, :mod:`.refined_point`).

:func:`normalize_point` checks and normalises a point's parameters; :class:`_Result` is the
result being filled (every metric NaN until a formula puts it, with its source, accuracy and
exactness); the small helpers every formula uses (accuracy propagation, message rates, the
exponential workload); :func:`to_json` prints a result.
"""

from __future__ import annotations

import json
import math
import numbers

import numpy as np

from . import _check
from .ode import parse_policy
from .service import ServiceLaw, parse_service

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
        self.work = {}  # intermediate solutions shared between formulas (not part of the result)

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


def _all_exponential(p):
    """Every pool's service law is exponential."""
    return all(s.is_exponential for s in p["service"])


def _phase_type(p):
    """Every pool's service law is phase-type."""
    return all(s.ph is not None for s in p["service"])


def _messages(R, p, value, source, exact=True, withdrawals=None):
    """The counted message rates; withdrawals 0, with their own source (``withdrawals``,
    default: the policy never withdraws a message)."""
    R.put("messages_per_arrival", value, source, 0.0, exact)
    R.put("withdrawals_per_arrival", 0.0,
          withdrawals or "no withdrawals (only pull with stale: withdraw withdraws)", 0.0, exact)


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
