#!/usr/bin/env bash
# One run per output: a run holds an exclusive lock on OUT.h5.ckpt for its life. A second
# run, or --resume, of an output a live run is writing is refused (exit 2) naming the
# holder's PID and host, and not told that the first "did not finish"; lbmc info on the
# checkpoint says a run is writing it. A run killed with SIGKILL leaves its lock free:
# --resume takes over with a note naming the dead process and finishes with the same
# results. On a file system without locks (the flock shim $LBMC_NOFLOCK, with
# HDF5_USE_FILE_LOCKING=FALSE) a run goes on with a warning, and a second run on this
# host is still refused by the PID the first recorded. About 4 s of CPU.
. "$(dirname "$0")/lib.sh"
SHIM=$(preload "${LBMC_NOFLOCK:?set LBMC_NOFLOCK to the flock shim}")
job="$WORK/long.yaml" # several seconds per replica: a run stays live while tested
sed -e 's/n: \[10, 20, 50\]/n: [200, 500, 1000]/' -e 's/time: 400/time: 6000/' \
  "$HERE/small.yaml" >"$job"
host=$(hostname)

start() { # start OUT [env...]: a run of the job in the background; waits for its checkpoint
  local out=$1
  shift
  env "$@" "$LBMC" run "$job" -o "$out" --quiet 2>>"$WORK/first.err" &
  pid=$!
  for _ in $(seq 400); do
    [ -s "$out.ckpt" ] && grep -q "pid=$pid" "$out.ckpt" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

refused_live() { # refused_live OUT ARGS...: exit 2, the holder named, no "did not finish"
  local out=$1 rc
  shift
  "$LBMC" run "$job" -o "$out" --quiet "$@" 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 2 ] && grep -qF "$out.ckpt is in use" "$WORK/err" &&
    grep -qF "PID $pid on host $host" "$WORK/err" && ! grep -q "did not finish" "$WORK/err" ||
    { echo "exit $rc"; cat "$WORK/err"; return 1; }
}

start "$WORK/a.h5" || echo "FAIL: the first run did not start"
check "a second fresh run of a live output is refused naming the holder" refused_live "$WORK/a.h5"
check "--resume of a live output is refused naming the holder" refused_live "$WORK/a.h5" --resume
check "lbmc info says a run is writing the checkpoint" \
  sh -c "'$LBMC' info '$WORK/a.h5.ckpt' | grep -qF 'A run is writing it now (pid=$pid host=$host'"
dead=$pid
kill -KILL "$pid"
wait "$pid" 2>/dev/null
takeover() { # the dead run's checkpoint is taken over with a note; a short job finishes it
  local rc
  "$LBMC" run "$job" -o "$WORK/a.h5" --resume --quiet 2>"$WORK/err" &
  pid=$!
  for _ in $(seq 400); do grep -q "taking it over" "$WORK/err" && break; sleep 0.05; done
  kill -USR1 "$pid"
  wait "$pid"
  rc=$?
  [ "$rc" -eq 3 ] && grep -qF "left by a run that stopped without closing it (PID $dead on host $host" \
    "$WORK/err" || { echo "exit $rc"; cat "$WORK/err"; return 1; }
  # stopped in order: the owner slot is cleared, no note the next time
  "$LBMC" info "$WORK/a.h5.ckpt" | grep -q "stopped without closing" && return 1
  return 0
}
check "after SIGKILL, --resume takes the checkpoint over with a note naming the dead run" takeover

small_takeover() { # the same with a short job that completes: equal to a plain run
  local rc
  "$LBMC" run "$HERE/small.yaml" -o "$WORK/ref.h5" --quiet || return 1
  LD_PRELOAD=$SHIM LBMC_NOFLOCK_MATCH=".tmp." "$LBMC" run "$HERE/small.yaml" -o "$WORK/b.h5" \
    --quiet 2>/dev/null
  /usr/bin/python3 -c "
import sys
p = sys.argv[1]; d = bytearray(open(p, 'rb').read())
s = b'pid=999999999 host=' + sys.argv[2].encode() + b' since=2026-01-01T00:00:00Z'
d[8:8 + len(s)] = s  # the owner slot of a run that died
open(p, 'wb').write(d)" "$WORK/b.h5.ckpt" "$host"
  "$LBMC" run "$HERE/small.yaml" -o "$WORK/b.h5" --resume --quiet 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 0 ] && grep -qF "(PID 999999999 on host $host" "$WORK/err" &&
    compare "$WORK/ref.h5" "$WORK/b.h5" >/dev/null || { echo "exit $rc"; cat "$WORK/err"; return 1; }
}
check "a stale owner is taken over and the resumed run equals a plain one" small_takeover

no_locks() { # a file system without flock: runs with a warning; a second run here refused
  local rc first=$pid
  : >"$WORK/first.err"
  start "$WORK/c.h5" LD_PRELOAD="$SHIM" HDF5_USE_FILE_LOCKING=FALSE || return 1
  first=$pid
  LD_PRELOAD=$SHIM HDF5_USE_FILE_LOCKING=FALSE "$LBMC" run "$job" -o "$WORK/c.h5" --resume \
    --quiet 2>"$WORK/err"
  rc=$?
  kill -USR1 "$first"
  wait "$first"
  grep -qF "cannot lock $WORK/c.h5.ckpt (No locks available" "$WORK/first.err" &&
    [ "$rc" -eq 2 ] && grep -qF "PID $first on host $host" "$WORK/err" ||
    { echo "exit $rc"; cat "$WORK/first.err" "$WORK/err"; return 1; }
}
check "without file locks: a warning, and a second run on this host refused by the recorded PID" no_locks
finish
