"""Command line of lbmc_analysis: ``python3 -m lbmc_analysis plot|compare FILE ...`` and ``limit``.

``plot`` draws :func:`lbmc_analysis.plot.metric_vs_n` for the common case (``lbmc plot``
of the C program calls it):

    python3 -m lbmc_analysis plot out.h5 --metric p_block --x n --by policy -o fig.png
    python3 -m lbmc_analysis plot out.h5 --metric "tail[1][3]" --where lambda=0.9,policy=pull --by n -o t.pdf

``compare`` prints :func:`lbmc_analysis.compare` as CSV:

    python3 -m lbmc_analysis compare out.h5 --metric mean_sojourn pull "jsq(2)"

``limit`` prints :func:`lbmc_analysis.limits.reference` (or, with ``--refined N``,
:func:`lbmc_analysis.limits.refined` at n = N) of one point as JSON (NaN -> null, infinite
limits -> "inf"; the shape in docs/limits.md), for ``lbmc sim --limit`` to read; a JSON list
of points gives a list of results (one start-up for many points):

    python3 -m lbmc_analysis limit --json '{"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1]}'
    python3 -m lbmc_analysis limit --refined 20 --json '{"policy": "pull", "lambda": 1, "pools": [{"beta": 0.5, "mu": 2}, {"beta": 0.5, "mu": "1/3"}]}'
    python3 -m lbmc_analysis limit --refined n --json '[{"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1], "n": 20}, {"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1], "n": 50}]'
    python3 -m lbmc_analysis limit --transient 0:40:0.5 --init tail:1,1,0.8 --refined 10 --json '{"policy": "jsq(2)", "lambda": 0.9, "beta": [1], "mu": [1]}'

Exit status: 0 on success, 2 for bad input (unknown metric, column or value, a file that
is not an lbmc results file), with one message on stderr naming what is wrong and what is
allowed; 1 if the output cannot be written.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings


def _value(text):
    t = text.strip()
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t


def _where(text):
    """``"policy=pull,n=1000"`` -> {"policy": "pull", "n": 1000}; values may be lists: ``n=10|100``."""
    out = {}
    if not text:
        return out
    for item in text.split(","):
        if "=" not in item:
            raise ValueError(f"--where: {item!r} is not NAME=VALUE (e.g. --where policy=pull,n=1000)")
        k, v = item.split("=", 1)
        vals = [_value(x) for x in v.split("|")]
        out[k.strip()] = vals if len(vals) > 1 else vals[0]
    return out


def _parser():
    ap = argparse.ArgumentParser(prog="python3 -m lbmc_analysis",
                                 description="Figures and comparisons from lbmc results files (HDF5).")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plot", help="a metric against a parameter, one series per value of another")
    p.add_argument("file", help="lbmc results file (HDF5)")
    p.add_argument("--metric", required=True, help="e.g. p_block, utilization[2], tail[1][3], sojourn_quantiles[0.99]")
    p.add_argument("--x", default="n", help="parameter on the x axis (default n; e.g. lambda, routers, beta_1)")
    p.add_argument("--by", default="policy", help="parameter(s) telling the series apart, comma-separated "
                                                  "(default policy)")
    p.add_argument("--where", default="", help="fixed parameters, e.g. lambda=0.9,buffer_1=2 (a|b for several)")
    p.add_argument("-o", "--output", required=True, help="figure file (.png, .pdf, .svg)")
    p.add_argument("--linear-x", action="store_true", help="linear x axis (default log)")
    p.add_argument("--linear-y", action="store_true", help="linear y axis (default log)")
    p.add_argument("--bands", action="store_true", help="intervals as bands instead of bars")
    p.add_argument("--no-reference", action="store_true", help="no mean-field / exact reference lines")
    p.add_argument("--title", default=None, help="title above the line of fixed parameters")
    p.add_argument("--dpi", type=int, default=150)
    c = sub.add_parser("compare", help="paired difference and ratio of two policies per scenario (CSV)")
    c.add_argument("file")
    c.add_argument("--metric", required=True)
    c.add_argument("a", help="first policy (or value of --along)")
    c.add_argument("b", help="second policy (or value of --along)")
    c.add_argument("--along", default="policy", help="grid dimension the two values belong to (default policy)")
    lm = sub.add_parser("limit", help="the n -> infinity limit (or refined x* + V/n) of every metric of a point, JSON")
    lm.add_argument("--json", required=True, dest="point",
                    help="the point's parameters as a JSON object (or a list of them): policy, lambda, pools [{beta, mu or "
                         "mu_k, buffer, service}] (or arrays beta, mu, ...), optional n, routers, stale, sampling, K")
    lm.add_argument("--refined", default=None, metavar="N",
                    help="the refined mean field x* + V/N (Gast & Van Houdt 2017) instead of the limit; N = 'n': "
                         "each point's own n (its key n)")
    lm.add_argument("--order", type=int, default=1, choices=(1, 2),
                    help="with --refined: 2 adds A/N^2 to tail, mean_queue and utilization of homogeneous jsq(d) with "
                         "sampling with_replacement (Gast, Bortolussi & Tribastone 2019)")
    lm.add_argument("--transient", default=None, metavar="T0:T1:DT",
                    help="the mean-field ODE (and with --refined N, x(t) + V(t)/N) on the times T0, T0+DT, .., T1")
    lm.add_argument("--init", default="empty", metavar="X0",
                    help="start of --transient: empty, or tail:F1,F2,...[;G1,...] (fractions of each pool's servers "
                         "with at least k customers)")
    lm.add_argument("--details", action="store_true", help="keep the solvers' diagnostics")
    lm.add_argument("--indent", type=int, default=None)
    return ap


def _plot(args):
    from . import plot

    fig = plot.metric_vs_n(args.file, args.metric, x=args.x, by=[b.strip() for b in args.by.split(",")],
                           where=_where(args.where), logx=not args.linear_x, logy=not args.linear_y,
                           reference=None if args.no_reference else "auto", title=args.title, bands=args.bands)
    try:
        fig.savefig(args.output, dpi=args.dpi)
    except (OSError, ValueError) as exc:
        print(f"lbmc_analysis: error: cannot write {args.output}: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}")
    return 0


def _compare(args):
    from .compare import compare

    frame = compare(args.file, args.metric, _value(args.a), _value(args.b), along=args.along)
    frame.to_csv(sys.stdout, index=False, float_format=lambda v: "nan" if math.isnan(v) else f"{v:.6g}")
    return 0


def _number(v):
    """JSON values may write fractions as strings ("1/3"), as job files do."""
    if isinstance(v, str):
        t = v.strip()
        if "/" in t:
            a, b = t.split("/", 1)
            try:
                return float(a) / float(b)
            except (ValueError, ZeroDivisionError):
                return v
        try:
            return float(t) if t.lower() not in ("inf", "infinity") else v
        except ValueError:
            return v
    if isinstance(v, list):
        return [_number(x) for x in v]
    if isinstance(v, dict):
        return {k: (_number(x) if k in ("beta", "mu", "mu_k", "lambda") else x) for k, x in v.items()}
    return v


def _times(text):
    """``"T0:T1:DT"`` -> the grid T0, T0 + DT, ..., T1 (T1 included when on the grid)."""
    try:
        t0, t1, dt = (float(v) for v in text.split(":"))
    except ValueError:
        raise ValueError(f"--transient {text!r} is not allowed; T0:T1:DT with numbers is required") from None
    if not (0 <= t0 < t1 and dt > 0) or (t1 - t0) / dt > 1e6:
        raise ValueError(f"--transient {text!r} is not allowed; 0 <= T0 < T1, DT > 0, at most 1e6 steps are required")
    import numpy as np

    k = int(np.floor((t1 - t0) / dt + 1e-9))
    return t0 + dt * np.arange(k + 1)


def _refined_n(text, point):
    """``--refined``: None, an integer N, or ``n``: the point's own ``n`` (lbmc info --limit
    refined hands over points of several sizes in one call)."""
    if text is None:
        return None
    if str(text).strip() == "n":
        if not isinstance(point, dict) or point.get("n") is None:
            raise ValueError("--refined n: the point has no key 'n' (each point's number of servers); give the "
                             "point an integer 'n' >= 1, or --refined N")
        n = point.get("n")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"--refined n: the point's n = {n!r} is not allowed; an integer >= 1 is required")
        return n
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"--refined {text!r} is not allowed; an integer N >= 1 or 'n' (each point's n) "
                         "is required") from None


def _limit(args):
    import json

    from . import limits

    try:
        point = json.loads(args.point)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--json: not a JSON object ({exc})") from None
    many = isinstance(point, list)
    points = point if many else [point]
    if not points or not all(isinstance(p, dict) for p in points):
        raise ValueError("--json: a JSON object of the point's parameters (or a list of them) is required")
    out = []
    for i, p in enumerate(points):
        p = {k: (_number(v) if k in ("beta", "mu", "mu_k", "lambda", "pools") else v) for k, v in p.items()}
        if isinstance(p.get("pools"), list):
            p["pools"] = [_number(q) if isinstance(q, dict) else q for q in p["pools"]]
        try:
            n = _refined_n(args.refined, p)
            if args.transient is not None:
                res = limits.transient_for_point(p, _times(args.transient), None if args.init == "empty" else args.init,
                                                 n=n)
            elif n is not None:
                res = limits.refined(p, n, order=args.order)
            else:
                res = limits.reference(p)
        except ValueError as exc:
            raise ValueError(f"point {i + 1}: {exc}" if many else str(exc)) from None
        out.append(limits.to_json(res, details=args.details, indent=args.indent))
    print("[" + ",\n".join(out) + "]" if many else out[0])
    return 0


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    from .io import LbmcFormatError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # GridWarning etc.: the commands say what they need
            if args.command == "limit":
                return _limit(args)
            return _plot(args) if args.command == "plot" else _compare(args)
    except FileNotFoundError as exc:
        print(f"lbmc_analysis: error: {exc}", file=sys.stderr)
        return 2
    except (KeyError, ValueError, LbmcFormatError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"lbmc_analysis: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
