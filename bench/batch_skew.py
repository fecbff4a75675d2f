"""Why one replica of M/M/1 at rho 0.9 in 1000 batches covers a little under 95%
(docs/model.md, "Batch means of one replica"): a stationary M/M/1 queue-length chain of the
coverage cell's length (time 4e5, 1000 batches), uniformized at rate 1 + rho and written by
Skorokhod's reflection of a +-1 walk, so that many runs are cheap; then, per run, the lag-1
correlation of the batches before and after LBATCH's pair merging, the spread of the run
means against the standard errors, the Student statistic's tails, and the coverage of the
mean (exact rho / (1 - rho)) by non-overlapping batch means with and without Hall's
skewness correction (the run's sample skewness, or the one pooled over runs), by
overlapping batch means (Meketon and Schmeiser 1984, degrees of freedom 1.5 (m - 1)) and
by fewer batches.

Usage: /usr/bin/python3 bench/batch_skew.py [runs] (400: about 3 minutes, 1 GB)."""
import sys

import numpy as np
from scipy import stats

RHO, T, BATCHES = 0.9, 4e5, 1000
EXACT = RHO / (1 - RHO)


def batch_means(runs, seed=7):
    """runs x BATCHES batch means of a stationary uniformized M/M/1 chain."""
    rate = 1 + RHO
    steps = int(T * rate) // BATCHES * BATCHES
    rng = np.random.default_rng(seed)
    out = []
    for start in range(0, runs, 50):
        k = min(50, runs - start)
        walk = np.cumsum(np.where(rng.random((k, steps)) < RHO / rate, 1, -1).astype(np.int32),
                         axis=1)
        n0 = rng.geometric(1 - RHO, size=k) - 1  # the stationary law
        low = np.minimum(np.minimum.accumulate(walk, axis=1), 0)
        n = np.maximum(n0[:, None] + walk, walk - low)
        out.append(n.reshape(k, BATCHES, -1).mean(axis=2))
    return np.vstack(out)


def merge(b, most):
    """LBATCH's pair merging down to at most `most` batches (an odd one joins the last)."""
    while len(b) > most:
        h = len(b) // 2
        m = b[:2 * h].reshape(h, 2).mean(axis=1)
        if len(b) % 2:
            m[-1] = (2 * m[-1] + b[-1]) / 3
        b = m
    return b


def lag1(v):
    v = v - v.mean()
    return (v[1:] * v[:-1]).sum() / (v * v).sum()


def t_interval(m):
    n = len(m)
    return m.mean(), m.std(ddof=1) / np.sqrt(n), stats.t.ppf(0.975, n - 1)


def hall(m, g=None):
    """Hall's (1992) skewness-removing transformation, as lbmc_ratio_interval_skew."""
    r, se, t = t_interval(m)
    n = len(m)
    if g is None:
        g = stats.skew(m)
    a, b = g / (3 * np.sqrt(n)), g / (6 * np.sqrt(n))
    return r - se * (np.cbrt(1 + 3 * a * (t - b)) - 1) / a, r - se * (np.cbrt(1 + 3 * a * (-t - b)) - 1) / a


def obm(y, size):
    n = len(y)
    c = np.concatenate([[0], np.cumsum(y)])
    means = (c[size:] - c[:-size]) / size
    var = n * size / ((n - size + 1) * (n - size)) * ((means - y.mean()) ** 2).sum() / n
    return y.mean(), np.sqrt(var), stats.t.ppf(0.975, 1.5 * (n / size - 1))


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    B = batch_means(runs)
    print(f"{runs} runs; lag-1 of the {BATCHES} batches, mean per run: "
          f"{np.mean([lag1(b) for b in B]):.3f}")
    for most in (32, 16):
        M = [merge(b, most) for b in B]
        ts = np.array([(m.mean() - EXACT) / t_interval(m)[1] for m in M])
        pooled = stats.skew(np.concatenate([m - m.mean() for m in M]))
        cov = np.mean([abs(r - EXACT) <= t * se for r, se, t in map(t_interval, M)])
        line = (f"{len(M[0])} batches: lag-1 {np.mean([lag1(m) for m in M]):.3f}, spread of the "
                f"means {np.std([m.mean() for m in M], ddof=1):.4f} against mean se "
                f"{np.mean([t_interval(m)[1] for m in M]):.4f}, t at 2.5/97.5% "
                f"{np.quantile(ts, 0.025):.2f}/{np.quantile(ts, 0.975):.2f}, skewness of the "
                f"batch means {pooled:.2f} pooled, {np.mean([stats.skew(m) for m in M]):.2f} "
                f"per run; coverage t {100 * cov:.1f}%")
        for label, g in (("sample", None), ("pooled", pooled)):
            iv = [hall(m, g) for m in M]
            line += f", Hall ({label}) {100 * np.mean([lo <= EXACT <= hi for lo, hi in iv]):.1f}%"
        print(line)
    for size in (BATCHES // 32, BATCHES // 16):
        cov = np.mean([abs(r - EXACT) <= t * se for r, se, t in (obm(b, size) for b in B)])
        print(f"overlapping batches of {size} ({BATCHES // size} batch lengths): {100 * cov:.1f}%")


if __name__ == "__main__":
    main()
