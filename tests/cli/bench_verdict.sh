#!/usr/bin/env bash
# lbmc-bench --precision gives a cost per precision only from a point whose verdict is ok:
# a run from empty too short to leave its warm-up (lwl(2) on the lean engine: the policy
# has no occupancy form, hence no mean-field start, though --init meanfield is asked) is
# refused with its verdict and reason, and the note says the replicas started empty;
# jsq(2) on the occupancy engine from the mean-field point, long enough for the
# relaxation rules, is ok and gets its figure (the control). The speed table names each
# engine's verdict.
# Usage: bench_verdict.sh LBMC_BENCH
set -u
BENCH=${1:?usage: bench_verdict.sh LBMC_BENCH}
LBMC_TEST_NAME=bench-verdict
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
out=$("$BENCH" --precision --n 20000 --init meanfield --policies 'lwl(2)' --engine lean --events 4e5)
echo "$out"
check "not stationary: the row says so, with no p_wait and no cost" \
  grep -Eq "^lwl\(2\) +1 +20000 lean +not_stationary +- +- +[0-9.]+ +-$" <<<"$out"
check "not stationary: refused, with the reason" grep -q "^  refused: not_stationary: " <<<"$out"
check "the start asked for does not apply: said" \
  grep -q "^  note: replicas start empty: the mean-field start takes its queue lengths from the policy's occupancy form, and lwl(2) has none" <<<"$out"
out=$("$BENCH" --precision --n 1000 --init meanfield --policies 'jsq(2)' --engine occupancy --events 1e6)
echo "$out"
check "occupancy from the mean-field point: ok, with its figures" \
  grep -Eq "^jsq\(2\) +1 +1000 occupancy +ok +0\.[0-9]+ +[0-9.e+-]+ +[0-9.]+ +[0-9.e+-]+$" <<<"$out"
out=$("$BENCH" --n 1000 --policies 'jsq(2)' --engine occupancy,servers --events 2e5)
echo "$out"
check "speed table: each engine's verdict" \
  grep -Eq "^jsq\(2\) +1 +1000 +[0-9.e+]+ +[0-9.]+ (ok|not_stationary) +[0-9.e+]+ +[0-9.]+ (ok|not_stationary) " <<<"$out"
finish
