#!/usr/bin/env bash
# lbmc sim interrupted: SIGINT or SIGTERM during a long run prints
# the estimates of the replicas finished so far, marked interrupted, with exit status
# 130, for a fixed warm-up and for warmup auto (whose point decides its warm-up from
# the replicas in when the first round was cut short). A replica takes a few hundredths
# of a CPU second, so several have finished when the signal comes after 2 s.
# Usage: sim_interrupt.sh LBMC
set -u
LBMC=${1:?usage: sim_interrupt.sh LBMC}
WORK=$(mktemp -d /tmp/lbmc-sim-interrupt.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fails=0
check() {
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
# interrupt NAME SIGNAL ARGS...: lbmc sim ARGS in the background, SIGNAL after 2 s.
interrupt() {
  local name=$1 sig=$2
  shift 2
  "$LBMC" sim --n 1000 --lambda 0.9 --pools 1:1:inf --engine servers --time 100 \
    --replicas 100000 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  local pid=$!
  sleep 2
  kill "-$sig" "$pid"
  wait "$pid"
  echo $? >"$WORK/$name.rc"
}
# partial NAME: the JSON says interrupted, with 0 < replicas < 100000 and estimates.
partial() {
  /usr/bin/python3 - "$WORK/$1.out" "$WORK/$1.err" <<'PY'
import json, sys
text, err = open(sys.argv[1]).read(), open(sys.argv[2]).read()
if not text:
    print("  no results: " + err.strip())
    sys.exit(1)
d = json.loads(text)
p = d["estimates"]["p_wait"]
print("  %s after %d replicas: p_wait %s" % (d["status"], d["replicas"], p.get("mean", p)))
sys.exit(0 if d.get("interrupted") and 0 < d["replicas"] < 100000
         and "partial results" in err else 1)
PY
}
interrupt fixed INT --warmup 50 --json
check "SIGINT, fixed warm-up: exit 130" test "$(cat "$WORK/fixed.rc")" -eq 130
check "SIGINT, fixed warm-up: partial results" partial fixed
interrupt auto INT --warmup auto --json
check "SIGINT, warmup auto: exit 130" test "$(cat "$WORK/auto.rc")" -eq 130
check "SIGINT, warmup auto: partial results" partial auto
interrupt table TERM --warmup 50
check "SIGTERM: exit 130" test "$(cat "$WORK/table.rc")" -eq 130
check "SIGTERM: the run line says interrupted" grep -Eq \
  "^run: [0-9]+ replicas.*\(interrupted: partial results\)" "$WORK/table.out"

[ "$fails" -eq 0 ] && echo "all passed" || echo "$fails failure(s)"
exit $((fails > 0))
