#!/usr/bin/env bash
# Files and locks. On a file system without locks (simulated
# by the LD_PRELOAD shim $LBMC_NOFLOCK, whose flock fails with ENOLCK), lbmc run stops
# before simulating with a message naming the file, the system error and the remedy
# HDF5_USE_FILE_LOCKING=FALSE, exit 1, and leaves nothing behind; lbmc info and merge
# say the same of a valid file, exit 1. A final write that fails leaves no temporary
# and keeps the checkpoint. A run that finishes removes the temporaries of its output
# left by processes no longer running (and keeps those of a live one).
. "$(dirname "$0")/lib.sh"
SHIM=$(preload "${LBMC_NOFLOCK:?set LBMC_NOFLOCK to the flock shim}")
job="$HERE/small.yaml"
check "reference run" "$LBMC" run "$job" -o "$WORK/ref.h5" --quiet
leftovers() { ls "$WORK" | grep -E '^out\.h5' ; }

says_locks() { # says_locks FILE: the lock message of lbmc's stderr in FILE
  grep -qF "No locks available" "$1" && grep -qF "HDF5_USE_FILE_LOCKING=FALSE" "$1" &&
    [ "$(grep -c '^lbmc: error:' "$1")" -eq 1 ] || { cat "$1"; return 1; }
}

no_locks_run() { # exit 1 before computing: no results, no checkpoint, no temporary
  LD_PRELOAD=$SHIM "$LBMC" run "$job" -o "$WORK/out.h5" --quiet 2>"$WORK/err"
  [ $? -eq 1 ] && says_locks "$WORK/err" && grep -qF "$WORK/out.h5" "$WORK/err" &&
    [ -z "$(leftovers)" ] || { cat "$WORK/err"; leftovers; return 1; }
}
check "no locks: lbmc run stops before simulating, exit 1, names file, error, remedy; nothing left" no_locks_run

no_locks_remedy() { # the remedy works
  LD_PRELOAD=$SHIM HDF5_USE_FILE_LOCKING=FALSE "$LBMC" run "$job" -o "$WORK/fixed.h5" --quiet &&
    compare "$WORK/ref.h5" "$WORK/fixed.h5" >/dev/null
}
check "no locks: with HDF5_USE_FILE_LOCKING=FALSE the run succeeds" no_locks_remedy

no_locks_read() { # lbmc info / merge of a valid file: exit 1 (environment), not 2
  LD_PRELOAD=$SHIM "$LBMC" info "$WORK/ref.h5" >/dev/null 2>"$WORK/err"
  [ $? -eq 1 ] && says_locks "$WORK/err" && grep -qF "$WORK/ref.h5" "$WORK/err" || return 1
  LD_PRELOAD=$SHIM HDF5_USE_FILE_LOCKING=FALSE "$LBMC" merge "$WORK/m.h5" "$WORK/ref.h5" \
    >/dev/null || return 1
  LD_PRELOAD=$SHIM "$LBMC" merge "$WORK/m2.h5" "$WORK/ref.h5" >/dev/null 2>"$WORK/err"
  [ $? -eq 1 ] && says_locks "$WORK/err" && [ ! -e "$WORK/m2.h5" ] &&
    [ -z "$(ls "$WORK" | grep -F 'm2.h5.')" ]
}
check "no locks: lbmc info and lbmc merge exit 1 with the system error and the remedy" no_locks_read

held_open() { # a file held open for writing by another program (h5py): exit 1, say so
  /usr/bin/python3 - "$LBMC" "$WORK/ref.h5" <<'PY'
import subprocess, sys, h5py
with h5py.File(sys.argv[2], "a"):
    r = subprocess.run([sys.argv[1], "info", sys.argv[2]], capture_output=True, text=True)
ok = r.returncode == 1 and "could not lock it" in r.stderr and "close it" in r.stderr
sys.exit(0 if ok else (print(r.returncode, r.stderr) or 1))
PY
}
check "a file held open by another program: lbmc info exits 1 and says so" held_open

final_write_fails() { # the probe passes, the final write cannot lock: no temporary left
  LD_PRELOAD=$SHIM LBMC_NOFLOCK_MATCH=".tmp." "$LBMC" run "$job" -o "$WORK/out.h5" --quiet \
    2>"$WORK/err"
  [ $? -eq 1 ] && says_locks "$WORK/err" && [ ! -e "$WORK/out.h5" ] &&
    [ -z "$(ls "$WORK" | grep -F 'out.h5.tmp.')" ] && [ -s "$WORK/out.h5.ckpt" ] ||
    { cat "$WORK/err"; leftovers; return 1; }
  "$LBMC" run "$job" -o "$WORK/out.h5" --resume --quiet && compare "$WORK/ref.h5" "$WORK/out.h5" \
    >/dev/null && [ -z "$(ls "$WORK" | grep -E '^out\.h5\.')" ]
}
check "a failed final write leaves no temporary; --resume finishes" final_write_fails

stale_removed() { # temporaries of dead processes are removed, a live one's kept
  local dead out
  dead=$(sh -c 'echo $$') # a process that has exited
  kill -0 "$dead" 2>/dev/null && return 0 # (reused already: nothing to test)
  head -c 4096 /dev/urandom >"$WORK/stale.h5.tmp.$dead"
  head -c 4096 /dev/urandom >"$WORK/stale.h5.probe.$dead"
  head -c 4096 /dev/urandom >"$WORK/stale.h5.tmp.$$" # this shell: alive
  : >"$WORK/stale.h5.tmp.x$dead"                    # not a temporary of lbmc's pattern
  out=$("$LBMC" run "$job" -o "$WORK/stale.h5" --quiet 2>&1) || { echo "$out"; return 1; }
  [ ! -e "$WORK/stale.h5.tmp.$dead" ] && [ ! -e "$WORK/stale.h5.probe.$dead" ] &&
    [ -e "$WORK/stale.h5.tmp.$$" ] && [ -e "$WORK/stale.h5.tmp.x$dead" ] &&
    echo "$out" | grep -qF "removed $WORK/stale.h5.tmp.$dead" &&
    echo "$out" | grep -qF "not running on this host" || { echo "$out"; ls "$WORK"; return 1; }
}
check "a finished run removes temporaries of its output left by dead processes" stale_removed
finish
