#!/usr/bin/env bash
# lbmc sim stopped by Ctrl-C at known moments, on every engine: before the first replica
# (nothing to show, exit 130), after exactly one replica (the batch means of that one,
# exit 130; this once crashed in the reduction), after two, and during the reduction of
# the first round of a point that asks for more (the round's replicas, exit 130), and after
# a doubling of a run not stationary (the shorter round's replicas, or the longer run's
# finished ones). The moment is set by LBMC_TEST_STOP (lbmc sim raises SIGINT itself
# there, through the real handler), so nothing depends on timing.
# Usage: sim_stop.sh LBMC
set -u
LBMC=${1:?usage: sim_stop.sh LBMC}
LBMC_TEST_NAME=sim-stop
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
# The engines from lbmc sim --help (the registry's list), auto excepted.
engines=$("$LBMC" sim --help | awk '/^  --engine/ {on = 1; next} on && /^  --/ {exit}
  on && substr($0, 1, 24) ~ /^ +$/ && substr($0, 25, 1) ~ /[a-z]/ {print $1}')
[ -n "$engines" ] || { echo "FAIL: no engines in lbmc sim --help"; exit 1; }
# stop NAME WHEN ARGS...: lbmc sim stopped at WHEN; its JSON, stderr and exit status.
stop() {
  local name=$1 when=$2
  shift 2
  LBMC_TEST_STOP=$when "$LBMC" sim --n 100 --lambda 0.5 --pools 1:1:inf --policy 'jsq(2)' \
    --time 200 --warmup 20 --replicas 3 --precision p_wait:0.0001 --max-replicas 50 --json "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
  echo $? >"$WORK/$name.rc"
}
# partial NAME R: interrupted, exactly R replicas, finite estimates with intervals.
partial() {
  /usr/bin/python3 - "$WORK/$1.out" "$WORK/$1.err" "$2" <<'PY'
import json, math, sys
text, err, R = open(sys.argv[1]).read(), open(sys.argv[2]).read(), int(sys.argv[3])
if not text:
    print("  no results: " + err.strip())
    sys.exit(1)
d = json.loads(text)
p = d["estimates"]["p_wait"]
print("  %s after %d replicas: p_wait %s +- %s" % (d["status"], d["replicas"], p["mean"],
                                                  p["half_width"]))
sys.exit(0 if d.get("interrupted") and d["replicas"] == R and "partial results" in err
         and math.isfinite(p["mean"]) and math.isfinite(p["half_width"]) else 1)
PY
}
for e in $engines; do
  stop "$e-0" replicas=0 --engine "$e"
  check "$e, before the first replica: exit 130" test "$(cat "$WORK/$e-0.rc")" -eq 130
  check "$e, before the first replica: nothing to show" \
    grep -q "interrupted before a replica finished: nothing to show" "$WORK/$e-0.err"
  check "$e, before the first replica: no output" test ! -s "$WORK/$e-0.out"
  for R in 1 2; do
    stop "$e-$R" "replicas=$R" --engine "$e"
    check "$e, after $R replica(s): exit 130" test "$(cat "$WORK/$e-$R.rc")" -eq 130
    check "$e, after $R replica(s): partial results" partial "$e-$R" "$R"
  done
  stop "$e-auto" replicas=1 --engine "$e" --warmup auto
  check "$e, after 1 replica, warmup auto: exit 130" test "$(cat "$WORK/$e-auto.rc")" -eq 130
  check "$e, after 1 replica, warmup auto: partial results" partial "$e-auto" 1
  stop "$e-red" reduction=1 --engine "$e"
  check "$e, during the first round's reduction: exit 130" test "$(cat "$WORK/$e-red.rc")" -eq 130
  check "$e, during the first round's reduction: its 3 replicas" partial "$e-red" 3
done
# After a doubling (a round not stationary: the run lengthens, 20 -> 40): stopped before a
# replica of the longer run finished, the shorter round's 3 replicas (their estimates and
# verdict, marked interrupted); after one longer replica finished, that one.
doubled() {
  local name=$1 when=$2
  shift 2
  LBMC_TEST_STOP=$when "$LBMC" sim --n 100 --lambda 0.95 --pools 1:1:inf --policy 'jsq(2)' \
    --time 20 --warmup 0 --replicas 3 --precision p_wait:0.01 --json "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
  echo $? >"$WORK/$name.rc"
}
# shorter NAME: the 3 replicas of time 20, not stationary, the longer run's time 40 named.
shorter() {
  /usr/bin/python3 - "$WORK/$1.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["verdict"]
print("  %s, %d replicas of time %g, interrupted at time %s" % (d["status"], d["replicas"], v["time_used"],
                                                              d.get("interrupted_time")))
sys.exit(0 if d["status"] == "not_stationary" and d["replicas"] == 3 and v["time_used"] == 20
         and d.get("interrupted_time") == 40 and d["events"] > 0 else 1)
PY
}
for e in $engines; do
  doubled "$e-dbl" reduction=1 --engine "$e"
  check "$e, after a doubling, before a longer replica: exit 130" \
    test "$(cat "$WORK/$e-dbl.rc")" -eq 130
  check "$e, after a doubling, before a longer replica: says so" \
    grep -q "partial results from the 3 finished replicas of the shorter run" "$WORK/$e-dbl.err"
  check "$e, after a doubling, before a longer replica: the shorter round's results" \
    shorter "$e-dbl"
  check "$e, after a doubling, before a longer replica: the shorter round's estimates" \
    partial "$e-dbl" 3
  doubled "$e-dbl1" replicas=4 --engine "$e"
  check "$e, after a doubling and one longer replica: exit 130" \
    test "$(cat "$WORK/$e-dbl1.rc")" -eq 130
  check "$e, after a doubling and one longer replica: that replica" partial "$e-dbl1" 1
done
# The table says which run the estimates are of.
LBMC_TEST_STOP=reduction=1 "$LBMC" sim --n 100 --lambda 0.95 --pools 1:1:inf --time 20 \
  --warmup 0 --replicas 3 --precision p_wait:0.01 >"$WORK/dbl.out" 2>"$WORK/dbl.err"
check "after a doubling, the table: exit 130" test $? -eq 130
check "after a doubling, the table: names the shorter run" \
  grep -q "these are the 3 replicas of the shorter run (time 20)" "$WORK/dbl.out"
# During the last reduction: the point is complete, so are its results (exit 0).
LBMC_TEST_STOP=reduction=1 "$LBMC" sim --n 100 --lambda 0.9 --pools 1:1:inf --time 200 \
  --warmup 20 --replicas 3 >"$WORK/last.out" 2>"$WORK/last.err"
check "during the last reduction: exit 0" test $? -eq 0
check "during the last reduction: complete, not marked partial" \
  grep -Eq "^run: 3 replicas.*start [a-z]+$" "$WORK/last.out"

finish
