#!/usr/bin/env bash
# Disk full and write errors. A final write, a merge or a partial write (SIGUSR1) that
# fails says the system error (No space left on device, Disk quota exceeded,
# Input/output error), exits 1 without a crash (HDF5 used to segfault at exit after a
# failed close), leaves no temporary, and keeps the checkpoint whole: --resume then
# writes the same results. The start-up probe tells a full disk from missing locks and
# checks free space against an estimate of the output. Write errors come from an
# LD_PRELOAD shim ($LBMC_FAILWRITE: write/pwrite/fsync of matching files fail with the
# errno asked for); a real full file system from a small tmpfs, mounted where this test may
# (root in CI), else that part is skipped with a note. About 5 s of CPU.
. "$(dirname "$0")/lib.sh"
FAIL=$(preload "${LBMC_FAILWRITE:?set LBMC_FAILWRITE to the write-failure shim}")
job="$HERE/small.yaml"
check "reference run" "$LBMC" run "$job" -o "$WORK/ref.h5" --quiet
temporaries() { ls "$1" | grep -E '\.(tmp|probe|new)\.[0-9]+$'; }

says() { # says FILE TEXT...: stderr FILE holds every TEXT, and exactly one error line
  local f=$1
  shift
  for t in "$@"; do grep -qF -- "$t" "$f" || { echo "missing: $t"; cat "$f"; return 1; }; done
  [ "$(grep -c '^lbmc: error:' "$f")" -eq 1 ] || { cat "$f"; return 1; }
}

final_write_fails() { # failwrite ERRNO TEXT AFTER: the final write fails, then --resume
  local errno=$1 text=$2 after=$3 out="$WORK/$1-$3.h5" rc
  LD_PRELOAD=$FAIL LBMC_FAILWRITE_MATCH=".tmp." LBMC_FAILWRITE_ERRNO=$errno LBMC_FAILWRITE_AFTER=$after \
    "$LBMC" run "$job" -o "$out" --quiet 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 1 ] && says "$WORK/err" "$text" "$out.tmp." "the finished replicas are safe in $out.ckpt" &&
    ! grep -q "lock" "$WORK/err" && [ ! -e "$out" ] && [ -z "$(temporaries "$WORK")" ] &&
    "$LBMC" info "$out.ckpt" | grep -q "It holds 18 finished replicas of 6 points" ||
    { echo "exit $rc"; ls "$WORK"; return 1; }
  "$LBMC" run "$job" -o "$out" --resume --quiet && compare "$WORK/ref.h5" "$out" >/dev/null &&
    [ ! -e "$out.ckpt" ]
}
check "final write: EIO at the first byte: exit 1, 'Input/output error', checkpoint kept, resume" \
  final_write_fails EIO "Input/output error" 0
check "final write: ENOSPC in the middle of the file: exit 1, no crash, resume" \
  final_write_fails ENOSPC "No space left on device" 30000
check "final write: EDQUOT at the end of the file: exit 1, 'Disk quota exceeded', resume" \
  final_write_fails EDQUOT "Disk quota exceeded" 150000

fsync_fails() { # fsync DESCRIPTION MATCH TEXT: the flush before or after the rename fails
  local out="$WORK/sync/o.h5" rc
  mkdir -p "$WORK/sync" && rm -f "$WORK/sync"/*
  LD_PRELOAD=$FAIL LBMC_FAILWRITE_FSYNC="$2" LBMC_FAILWRITE_ERRNO=EIO \
    "$LBMC" run "$job" -o "$out" --quiet 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 1 ] && says "$WORK/err" "$3" "the finished replicas are safe in $out.ckpt" &&
    "$LBMC" info "$out.ckpt" | grep -q "It holds 18 finished replicas" || { echo "exit $rc"; return 1; }
}
check "the results file is synced to disk before its rename: a failed fsync is a failed write" \
  fsync_fails file ".tmp." "syncing it to disk: Input/output error"
check "and its directory: a failed fsync of the directory is reported" \
  fsync_fails dir "$WORK/sync\$" "syncing its directory $WORK/sync to disk: Input/output error"

merge_fails() {
  local rc
  LD_PRELOAD=$FAIL LBMC_FAILWRITE_MATCH=".tmp." LBMC_FAILWRITE_ERRNO=ENOSPC LBMC_FAILWRITE_AFTER=20000 \
    "$LBMC" merge "$WORK/m.h5" "$WORK/ref.h5" >/dev/null 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 1 ] && says "$WORK/err" "No space left on device" && [ ! -e "$WORK/m.h5" ] &&
    [ -z "$(temporaries "$WORK")" ] || { echo "exit $rc"; return 1; }
}
check "lbmc merge whose write fails: exit 1 with the system error, no crash, nothing left" merge_fails

partial_write_fails() { # SIGUSR1, and the partial results cannot be written
  local out="$WORK/usr1.h5" pid rc
  sed -e 's/n: \[10, 20, 50\]/n: [200, 500, 1000]/' -e 's/time: 400/time: 6000/' "$job" >"$WORK/long.yaml"
  LD_PRELOAD=$FAIL LBMC_FAILWRITE_MATCH=".tmp." LBMC_FAILWRITE_ERRNO=EIO \
    "$LBMC" run "$WORK/long.yaml" -o "$out" --quiet 2>"$WORK/err" &
  pid=$!
  for _ in $(seq 200); do [ -s "$out.ckpt" ] && break; sleep 0.05; done
  sleep 0.5
  kill -USR1 "$pid"
  wait "$pid"
  rc=$?
  [ "$rc" -eq 1 ] && says "$WORK/err" "Input/output error" && [ ! -e "$out" ] &&
    [ -z "$(temporaries "$WORK")" ] && "$LBMC" info "$out.ckpt" | grep -q "It holds" ||
    { echo "exit $rc"; return 1; }
}
check "SIGUSR1 whose partial write fails: exit 1 with the system error, checkpoint kept" partial_write_fails

ckpt_fills() { # the checkpoint's disk fills during the run: exit 1, its records kept
  local out="$WORK/ck.h5" rc
  LD_PRELOAD=$FAIL LBMC_FAILWRITE_MATCH="ck.h5.ckpt" LBMC_FAILWRITE_ERRNO=ENOSPC LBMC_FAILWRITE_AFTER=20000 \
    "$LBMC" run "$job" -o "$out" --quiet 2>"$WORK/err" >/dev/null
  rc=$?
  [ "$rc" -eq 1 ] && grep -qF "cannot append to the checkpoint $out.ckpt: No space left on device" "$WORK/err" &&
    "$LBMC" info "$out.ckpt" | grep -qE "It holds [1-9][0-9]* finished replicas" ||
    { echo "exit $rc"; cat "$WORK/err"; return 1; }
  "$LBMC" run "$job" -o "$out" --resume --quiet 2>/dev/null && compare "$WORK/ref.h5" "$out" >/dev/null
}
check "the checkpoint's disk fills during the run: exit 1, ENOSPC, the records kept, resume" ckpt_fills

# A real full file system: a tmpfs of 240 kB. The probe's estimate of the small job's
# results (about 100 kB) fits; its checkpoint (83 kB) and results (174 kB) do not both
# (at 256 kB they just fit: tmpfs counts 4 kB pages).
TFS="$WORK/tmpfs"
mkdir -p "$TFS"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=240k lbmc-test "$TFS" 2>/dev/null; then
  trap 'umount "$TFS" 2>/dev/null; rm -rf "$WORK"' EXIT
  tmpfs_final_write() {
    local rc
    "$LBMC" run "$job" -o "$TFS/o.h5" --quiet 2>"$WORK/err"
    rc=$?
    [ "$rc" -eq 1 ] && says "$WORK/err" "No space left on device" && [ ! -e "$TFS/o.h5" ] &&
      [ -z "$(temporaries "$TFS")" ] && "$LBMC" info "$TFS/o.h5.ckpt" | grep -q "It holds 18" ||
      { echo "exit $rc"; ls -la "$TFS"; return 1; }
    mount -o remount,size=1m "$TFS" && "$LBMC" run "$job" -o "$TFS/o.h5" --resume --quiet &&
      compare "$WORK/ref.h5" "$TFS/o.h5" >/dev/null
  }
  check "tmpfs full at the final write: exit 1, No space left on device, resume after making room" \
    tmpfs_final_write
  tmpfs_probe() { # a full file system: the probe says so, not that locks are missing
    local rc
    mount -o remount,size=240k "$TFS" && rm -f "$TFS"/* &&
      head -c 300000 /dev/zero >"$TFS/fill" 2>/dev/null
    "$LBMC" run "$job" -o "$TFS/p.h5" --quiet 2>"$WORK/err"
    rc=$?
    [ "$rc" -eq 1 ] && says "$WORK/err" "No space left on device" "$TFS/p.h5" &&
      ! grep -qi "lock" "$WORK/err" && [ -z "$(ls "$TFS" | grep -v '^fill$')" ] ||
      { echo "exit $rc"; return 1; }
    "$LBMC" merge "$TFS/m.h5" "$WORK/ref.h5" 2>"$WORK/err"
    [ $? -eq 1 ] && says "$WORK/err" "No space left on device" && ! grep -qi "lock" "$WORK/err"
  }
  check "tmpfs full before the run: the probe says no space (not locks), for run and merge" tmpfs_probe
  too_small() { # room for the checkpoint, not for the estimated results
    rm -f "$TFS"/* && mount -o remount,size=64k "$TFS" || return 1
    "$LBMC" run "$job" -o "$TFS/q.h5" --quiet 2>"$WORK/err"
    [ $? -eq 1 ] && says "$WORK/err" "not enough space for $TFS/q.h5" "needs about"
  }
  check "a file system smaller than the estimated results: refused before computing" too_small
else
  echo "note: cannot mount a tmpfs here (needs root): the tests on a real full file system are skipped"
fi
finish
