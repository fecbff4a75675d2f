#!/usr/bin/python3
"""Coverage of the rare-events rule (few_events, docs/model.md "Rare events") off its
first measured ground: one server with non-exponential service (H2 scv 5, Erlang-4, rho
0.8), M/M/1 near saturation (rho 0.95, 0.98), and the M/M/1 cell the rule was set on.

Run:  /usr/bin/python3 bench/rare_coverage.py LBMC CELL [SEED0 SEED1] [--cache DIR]
      /usr/bin/python3 bench/rare_coverage.py LBMC table CELL... [--cache DIR] [--rule R]
LBMC is the lbmc binary (build/src/lbmc); CELL one of the names in CELLS below. Each seed
runs `lbmc sim --n N --policy random --init meanfield ... --replicas 10 --json` (one
process at a time, niced) and keeps its tail estimates in DIR/CELL/SEED.json (default
/tmp/rare_coverage), so a second call only reads them (`table` does not run lbmc).
`--init meanfield` falls back to an empty start (with a note) where the mean-field ODE
does not settle within its budget, M/M/1 from rho 0.97 on: the rho 0.98 cell has a
warm-up of 40 relaxation times instead.
`table` prints, per cell, the coverage of the exact tail P(Q >= k) by the kept 95%
intervals, for the levels with a value below 1e-3 in the points called `ok`, binned by
the level's expected entries (lambda P(Q = k-1) x the measured server time), with Wilson
95% intervals (levels as independent) and a standard error clustered by run (the levels
of one run are correlated: one long excursion misses at many), the misses below/above,
the runs that kept an interval in the bin and those that missed, the withheld intervals,
the levels never visited, and the ratio of the engine's count (speed x time at level
exactly k, the rule's input) to the expected entries. Truths: M/PH/1 by the
matrix-geometric method (the queue length of M/G/1 with phase-type service), M/M/1 rho^k.
--rule: `engine` (default: the runs' own flags), `none` (every interval the runs give:
run them with a build whose lbmc_few_events returns at once), or an offline rule applied
to such runs: `entries:20` (the entries floor alone, lbmc's rule), `both:E:X@C` (the floor
and E (1 - r) >= X excursions, r the larger of the level's tail ratio and that of the
first level from k down with C entries), `clusters:X`, `eff:X`, `both:E:X#C` (see
withhold() and ratio()).
Cost (2 cores shared, one run at a time): e4 200 seeds ~1 min, h2 400 seeds ~4 min,
mm1-95 150 seeds ~3 min, mm1-98 100 seeds ~3 min, mm1-50 200 seeds ~3 min; table
seconds. Measured in docs/model.md ("Rare events", "Off that ground") with seeds h2 1-400,
e4 1-200, mm1-95 1-150, mm1-98 1-100.
"""
import json, math, os, subprocess, sys
import numpy as np

# name: (service, lambda, warmup, time, tail_k, phase-type law for the truth, n)
CELLS = {
    'h2': ('hyperexponential:scv=5', 0.8, 2000, 40000, 200, 'h2=5', 1),
    'e4': ('erlang:k=4', 0.8, 1000, 5000, 60, 'erlang=4', 1),
    'mm1-95': ('exponential', 0.95, 0, 70000, 220, 'exp', 1),
    # the mean-field start falls back to empty here: 40 relaxation times (4950) of warm-up
    'mm1-98': ('exponential', 0.98, 200000, 420000, 600, 'exp', 1),
    # the M/M/1 cell of docs/model.md (the rule's ground): 10^3 servers by random routing
    'mm1-50': ('exponential', 0.5, 0, 400, 30, 'exp', 1000),
}
R = 10
BINS = [(0, 1), (1, 3), (3, 10), (10, 20), (20, 50), (50, math.inf)]


def ph(law):
    """(alpha, T) of the laws used, mean 1 (include/lbmc/service.h)."""
    if law == 'exp':
        return np.array([1.0]), np.array([[-1.0]])
    if law.startswith('erlang='):
        k = int(law.split('=')[1])
        a = np.zeros(k)
        a[0] = 1
        return a, np.diag([-float(k)] * k) + np.diag([float(k)] * (k - 1), 1)
    if law.startswith('h2='):  # balanced means
        c = float(law.split('=')[1])
        p1 = (1 + math.sqrt((c - 1) / (c + 1))) / 2
        return np.array([p1, 1 - p1]), np.diag([-2 * p1, -2 * (1 - p1)])
    raise ValueError(law)


def mph1(law, lam, K):
    """P(Q = k) for k = 0..K+1 and P(Q >= k) for k = 0..K+1 of the M/PH/1 queue (unit
    mean service, rate lam): QBD on (level, phase), pi_{k+1} = pi_k R."""
    a, T = ph(law)
    m = len(a)
    t = -T.sum(1)
    I = np.eye(m)
    A0, A1, A2 = lam * I, T - lam * I, np.outer(t, a)
    Rm = np.zeros((m, m))
    A1i = np.linalg.inv(A1)
    for _ in range(10**6):
        Rn = -(A0 + Rm @ Rm @ A2) @ A1i
        if np.abs(Rn - Rm).max() < 1e-17:
            Rm = Rn
            break
        Rm = Rn
    x1 = -lam * a @ np.linalg.inv(A1 + Rm @ A2)
    geo = np.linalg.inv(I - Rm) @ np.ones(m)
    tot = 1 + x1 @ geo
    x = x1 / tot
    p, ge = [1 / tot], [1.0]
    for _ in range(1, K + 2):
        p.append(x.sum())
        ge.append(x @ geo)  # P(Q >= k) without cancellation
        x = x @ Rm
    return np.array(p), np.array(ge)


def run(lbmc, cell, seed, cache):
    path = os.path.join(cache, cell, '%d.json' % seed)
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    svc, lam, warm, time, K, _, n = CELLS[cell]
    cmd = ['nice', '-n', '5', lbmc, 'sim', '--n', str(n), '--policy', 'random', '--lambda', str(lam),
           '--service', svc, '--init', 'meanfield', '--warmup', str(warm), '--time', str(time),
           '--replicas', str(R), '--tail-k', str(K), '--seed', str(seed), '--json']
    d = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    keep = {'status': d['status'], 'engine': d['engine'], 'tail': d['estimates']['tail']}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump(keep, f)
    return keep


def wilson(c, n, z=1.959964):
    if n == 0:
        return math.nan, math.nan
    p = c / n
    d = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / d
    hw = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return mid, hw


def withhold(rule, cnt, r):
    """Whether an offline rule withholds an interval resting on the engine's count cnt at
    a level whose tail ratio (tail[k] / tail[k-1] of the estimates) is r."""
    kind, _, x_text = rule.split('@')[0].split('#')[0].partition(':')
    x = float(x_text) if x_text and kind != 'both' else 0
    if kind == 'entries':  # the rule of main: LBMC_FEW_EVENTS_MIN entries
        return cnt < x
    if kind == 'clusters':  # entries x (1 - r): excursions, return chance r
        return cnt * (1 - r) < x
    if kind == 'both':  # the entries of main and the excursions: both:ENTRIES:EXCURSIONS
        e, c = x_text.split(':')
        return cnt < float(e) or cnt * (1 - r) < float(c)
    if kind == 'eff':  # entries x (1 - r) / (1 + r)
        return cnt * (1 - r) / (1 + r) < x
    return False  # none


def ratio(rule, mean, k, tt):
    """The return chance the rule scales the count by: the tail ratio tail[k] / tail[k-1] at
    level k, or with rule '...@C' the larger of it and the ratio at the deepest level j <= k
    whose count (tt x time share at level exactly j) is C or more."""
    tl = [1.0] + list(mean) + [0.0]  # tl[j] = tail[j], tl[0] = 1
    r = tl[k] / tl[k - 1] if tl[k - 1] > 0 else 0
    if '@' in rule or '#' in rule:  # @C: C entries; #C: C excursions (entries x (1 - ratio))
        c = float(rule.split('@' if '@' in rule else '#')[1])
        for j in range(k, 0, -1):
            rj = tl[j] / tl[j - 1] if tl[j - 1] > 0 else 0
            if (tl[j] - tl[j + 1]) * tt * (1 if '@' in rule else 1 - rj) >= c:
                return max(r, rj)
    return r


def table(cell, cache, rule='engine'):
    """Print the coverage table of a cell. rule: 'engine' (the flags of the runs), 'none'
    (every interval the runs give; use with a build without the rule) or an offline rule
    of withhold() applied to the runs' intervals."""
    svc, lam, warm, time, K, law, n = CELLS[cell]
    p, ge = mph1(law, lam, K)
    tt = time * R * n  # server time measured
    seeds = sorted(int(f[:-5]) for f in os.listdir(os.path.join(cache, cell)))
    acc = {b: dict(lv=0, kept=0, cov=0, held=0, none=0, low=0, high=0, cnt=0.0, exp=0.0, ms=set(), ks=set(), per={})
           for b in BINS}
    ok = mism = 0
    for s in seeds:
        d = run(None, cell, s, cache)
        if d['status'] != 'ok':
            continue
        ok += 1
        t = d['tail']
        mean = t['mean'][0]
        for k in range(1, K + 1):
            truth = ge[k]
            if truth >= 1e-3:
                continue
            ent = lam * p[k - 1] * tt  # expected entries into level k
            b = next(b for b in BINS if b[0] <= ent < b[1])
            a = acc[b]
            a['lv'] += 1
            # the engine's count (the rule's input): speed x time at level exactly k
            cnt = (mean[k - 1] - (mean[k] if k < K else 0)) * tt
            a['cnt'] += cnt
            a['exp'] += ent
            fl, lo, hi = t['flags'][0][k - 1], t['lower'][0][k - 1], t['upper'][0][k - 1]
            special = set(fl) & {'empty', 'none_observed', 'all_observed'}
            if rule == 'engine' and 'few_events' in fl:
                a['held'] += 1
                mism += cnt >= 20
                continue
            if lo is None or hi is None:
                a['none'] += 1
                continue
            if rule == 'engine':
                mism += cnt < 20 and not special
            elif not special and withhold(rule, cnt, ratio(rule, mean, k, tt)):
                a['held'] += 1
                continue
            a['kept'] += 1
            a['ks'].add(s)
            ps = a['per'].setdefault(s, [0, 0])  # kept, covered in this run
            ps[0] += 1
            ps[1] += lo <= truth <= hi
            if lo <= truth <= hi:
                a['cov'] += 1
            else:
                a['low' if hi < truth else 'high'] += 1
                a['ms'].add(s)
    print('cell %s (%s, lambda %g, n %d, %d x %g, warmup %g), rule %s: %d seeds %d-%d, %d ok%s'
          % (cell, svc, lam, n, R, time, warm, rule, len(seeds), seeds[0], seeds[-1], ok,
             '; flags vs count < 20: %d differ' % mism if rule == 'engine' else ''))
    print('| cell | expected entries | levels x ok runs | kept | coverage % [Wilson 95%] +- run-clustered s.e. | '
          'misses low/high | runs kept/missing | withheld | none visited | count / entries |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for b in BINS:
        a = acc[b]
        if not a['lv']:
            continue
        mid, hw = wilson(a['cov'], a['kept'])
        cov = ('%.1f [%.1f, %.1f] (%d/%d)' % (100 * a['cov'] / a['kept'], 100 * (mid - hw),
                                               100 * (mid + hw), a['cov'], a['kept'])
               if a['kept'] else 'none kept')
        # the levels of one run are correlated: a standard error clustered by run
        S = len(a['per'])
        if S > 1:
            phat = a['cov'] / a['kept']
            v = sum((c - phat * m) ** 2 for m, c in a['per'].values()) * S / (S - 1)
            cov += ' +- %.1f' % (100 * math.sqrt(v) / a['kept'])
        name = '%g-%g' % b if b[1] < math.inf else '%g and more' % b[0]
        print('| %s | %s | %d | %d | %s | %d/%d | %d/%d | %d | %d | %.3f |' %
              (cell, name, a['lv'], a['kept'], cov, a['low'], a['high'], len(a['ks']), len(a['ms']),
               a['held'], a['none'],
               a['cnt'] / a['exp']))


def main():
    args = sys.argv[1:]
    cache = '/tmp/rare_coverage'
    if '--cache' in args:
        i = args.index('--cache')
        cache = args[i + 1]
        del args[i:i + 2]
    lbmc = args[0]
    rule = 'engine'
    if '--rule' in args:
        i = args.index('--rule')
        rule = args[i + 1]
        del args[i:i + 2]
    if args[1] == 'table':
        for c in args[2:]:
            table(c, cache, rule)
        return
    cell = args[1]
    s0, s1 = (int(args[2]), int(args[3])) if len(args) > 3 else (1, 200)
    for s in range(s0, s1 + 1):
        run(lbmc, cell, s, cache)


if __name__ == '__main__':
    main()
