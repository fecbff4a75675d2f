#!/usr/bin/env bash
# Read errors of the replica store's file (src/sim/rep_store.h: with LBMC_REP_STORE_BYTES=0
# every replica's row is in an unlinked file in $TMPDIR, read back by the reduction and by
# the writer). Every failed read reaches the user: lbmc sim and lbmc run (1 rank) exit 1
# with one error line naming the system error (Input/output error), write no results file
# (nor a JSON report) and, for lbmc run, keep the checkpoint whole (--resume writes the
# reference results). Reads fail through an LD_PRELOAD shim ($LBMC_FAILREAD: every read of
# the store's file from the K-th on, or the K-th only, a transient error that a dropped
# error would hide); the shim counts the reads a run makes, and the test fails reads spread
# over them. A few seconds of CPU.
. "$(dirname "$0")/lib.sh"
SHIM=$(preload "${LBMC_FAILREAD:?set LBMC_FAILREAD to the read-failure shim}")
export LBMC_REP_STORE_BYTES=0 TMPDIR="$WORK/store"
mkdir -p "$TMPDIR"
job="$HERE/small.yaml"
SIM=(sim --n 10 --lambda 0.8 --pools 1:1:inf --policy 'jsq(2)' --replicas 40 --time 50 --warmup 5)

failing() { # failing AFTER ONCE CMD...: CMD with the store's reads failing from read AFTER on
  LD_PRELOAD=$SHIM LBMC_FAILREAD_MATCH="$TMPDIR/" LBMC_FAILREAD_AFTER=$1 LBMC_FAILREAD_ONCE=$2 \
    LBMC_FAILREAD_COUNT="$WORK/count" "${@:3}"
}
reads() { # reads CMD...: the count of the store's reads CMD makes (none failed)
  rm -f "$WORK/count"
  failing 1000000000 0 "$@" >/dev/null 2>&1 || return 1
  cat "$WORK/count" 2>/dev/null || echo 0
}
spread() { # spread T: read indices spread over 0 .. T - 1
  echo 0 1 $(($1 / 4)) $(($1 / 2)) $((3 * $1 / 4)) $(($1 - 1)) | tr ' ' '\n' | sort -nu
}
says_eio() { # says_eio FILE: one error line, naming the read of the store's file and EIO
  grep -q "^lbmc: error: cannot read the temporary file of the replicas' rows in $TMPDIR: Input/output error" "$1" &&
    [ "$(grep -c '^lbmc: error:' "$1")" -eq 1 ] || { cat "$1"; return 1; }
}

check "reference sim (rows in the store's file)" "$LBMC" "${SIM[@]}" -o "$WORK/sim_ref.h5"
T=$(reads "$LBMC" "${SIM[@]}" -o "$WORK/sim_count.h5")
check "lbmc sim reads the store's file ($T reads)" test "$T" -gt 10
sim_fails() { # sim_fails K ONCE: read K fails (and the later ones unless ONCE): exit 1, no file
  local out="$WORK/sim-$1-$2.h5" rc
  failing "$1" "$2" "$LBMC" "${SIM[@]}" -o "$out" >/dev/null 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 1 ] && says_eio "$WORK/err" && [ ! -e "$out" ] && [ -z "$(ls "$WORK" | grep '\.tmp\.')" ] ||
    { echo "read $1 (once $2): exit $rc"; return 1; }
}
for k in $(spread "$T"); do
  check "lbmc sim -o: read $k of $T fails, and every one after: exit 1, EIO, no file" sim_fails "$k" 0
  check "lbmc sim -o: read $k of $T fails alone: exit 1, EIO, no file" sim_fails "$k" 1
done
sim_json_fails() { # the totals and the JSON report read the rows too: no half report
  local rc
  failing "$1" 1 "$LBMC" "${SIM[@]}" --json >"$WORK/out.json" 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 1 ] && says_eio "$WORK/err" && [ ! -s "$WORK/out.json" ] || { echo "exit $rc"; return 1; }
}
TJ=$(reads "$LBMC" "${SIM[@]}" --json)
for k in $(spread "$TJ"); do
  check "lbmc sim --json: read $k of $TJ fails: exit 1, EIO, no report" sim_json_fails "$k"
done
check "every read let through: the same results" failing "$T" 0 "$LBMC" "${SIM[@]}" -o "$WORK/sim_all.h5"
check "every read let through: the same results (compared)" compare "$WORK/sim_ref.h5" "$WORK/sim_all.h5"

# The mean-field start's rule reads the target entry's terms of every replica (blocks of
# 1024 rows: 1030 replicas): the reads just after LBMC_DEBUG_RELAX's "mf rule" and "mf
# entry" lines are its own; each failing alone stops the run (its error was once cleared,
# and the rule took the fallback standard error: exit 0, another reason).
MF=(sim --n 100 --lambda 0.9 --policy 'jsq(2)' --init meanfield --replicas 1030 --max-replicas 1030
  --max-time 0.05 --warmup 0 --time 0.05 --seed 36 --precision mean_sojourn:0.5 --json)
LBMC_DEBUG_RELAX=1 LBMC_FAILREAD_TRACE=1 failing 1000000000 0 "$LBMC" "${MF[@]}" >/dev/null 2>"$WORK/trace"
mf_reads=$(awk '/^mf (rule|entry)/ { in_mf = 1; next } in_mf && /^failread: read/ { print $3; n++; if (n == 4) exit; next }
  in_mf { exit }' "$WORK/trace")
check "the mean-field rule reads the store's file" test -n "$mf_reads"
mf_fails() {
  local rc
  failing "$1" 1 "$LBMC" "${MF[@]}" >"$WORK/out.json" 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 1 ] && says_eio "$WORK/err" && [ ! -s "$WORK/out.json" ] || { echo "exit $rc"; return 1; }
}
for k in $mf_reads; do
  check "the mean-field rule: read $k fails alone: exit 1, EIO" mf_fails "$k"
done

# lbmc run on 1 rank: rank 0 reduces the points from their stores, then writes
check "reference run" "$LBMC" run "$job" -o "$WORK/ref.h5" --quiet
TR=$(reads "$LBMC" run "$job" -o "$WORK/run_count.h5" --quiet)
check "lbmc run reads the store's file ($TR reads)" test "$TR" -gt 10
run_fails() { # run_fails K: exit 1, EIO, no results, the checkpoint whole: --resume
  local out="$WORK/run-$1.h5" rc
  failing "$1" 1 "$LBMC" run "$job" -o "$out" --quiet 2>"$WORK/err" >/dev/null
  rc=$?
  [ "$rc" -eq 1 ] && grep -q "^lbmc: error: cannot read .* rows in $TMPDIR: Input/output error" "$WORK/err" &&
    [ ! -e "$out" ] && "$LBMC" info "$out.ckpt" | grep -q "It holds [1-9][0-9]* finished replicas" ||
    { echo "read $1: exit $rc"; return 1; }
  "$LBMC" run "$job" -o "$out" --resume --quiet && compare "$WORK/ref.h5" "$out" >/dev/null
}
for k in $(spread "$TR"); do
  check "lbmc run: read $k of $TR fails: exit 1, EIO, no results, checkpoint kept, resume" run_fails "$k"
done
finish
