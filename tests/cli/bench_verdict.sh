#!/usr/bin/env bash
# lbmc-bench --precision gives a cost per precision only from a point whose verdict is ok:
# a run from empty too short to leave its warm-up (servers engine, which has no mean-field
# start, asked for --init meanfield) is refused with its verdict and reason, and the note
# says the replicas started empty; the same system on the occupancy engine from the
# mean-field point is ok and gets its figure (the control). The speed table names each
# engine's verdict.
# Usage: bench_verdict.sh LBMC_BENCH
set -u
BENCH=${1:?usage: bench_verdict.sh LBMC_BENCH}
LBMC_TEST_NAME=bench-verdict
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
out=$("$BENCH" --precision --n 20000 --init meanfield --policies 'jsq(2)' --events 4e5)
echo "$out"
check "not stationary: the row says so, with no p_wait and no cost" \
  grep -Eq "^jsq\(2\) +1 +20000 servers +not_stationary +- +- +[0-9.]+ +-$" <<<"$out"
check "not stationary: refused, with the reason" grep -q "^  refused: not_stationary: " <<<"$out"
check "the start asked for does not apply: said" \
  grep -q "^  note: replicas start empty: the servers engine has no mean-field start" <<<"$out"
out=$("$BENCH" --precision --n 10000 --init meanfield --policies 'jsq(2)' --engine occupancy --events 1e6)
echo "$out"
check "occupancy from the mean-field point: ok, with its figures" \
  grep -Eq "^jsq\(2\) +1 +10000 occupancy +ok +0\.[0-9]+ +[0-9.e+-]+ +[0-9.]+ +[0-9.e+-]+$" <<<"$out"
out=$("$BENCH" --n 1000 --policies 'jsq(2)' --engine occupancy,servers --events 2e5)
echo "$out"
check "speed table: each engine's verdict" \
  grep -Eq "^jsq\(2\) +1 +1000 +[0-9.e+]+ +[0-9.]+ (ok|not_stationary) +[0-9.e+]+ +[0-9.]+ (ok|not_stationary) " <<<"$out"
finish
