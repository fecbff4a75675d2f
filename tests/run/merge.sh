#!/usr/bin/env bash
# Shards: the parts of --shard 1/2 and 2/2 merged equal one run of the whole job; merge
# refuses a missing shard, a shard given twice, and parts of different jobs; parts of a
# job this lbmc cannot read any more, written before /grid existed, merge without an
# error message (the job text is a probe) into an incomplete file.
. "$(dirname "$0")/lib.sh"
check "whole job" mpi 2 run "$HERE/small.yaml" -o "$WORK/whole.h5" --quiet
check "shard 1/2" mpi 1 run "$HERE/small.yaml" --shard 1/2 -o "$WORK/p1.h5" --quiet
check "shard 2/2" mpi 2 run "$HERE/small.yaml" --shard 2/2 -o "$WORK/p2.h5" --quiet
check "merge" "$LBMC" merge "$WORK/merged.h5" "$WORK/p2.h5" "$WORK/p1.h5"
check "merged equals whole" compare "$WORK/whole.h5" "$WORK/merged.h5"
refuses() { # refuses PATTERN ARGS...: merge must fail with exit 2 (bad input) and the message
  local pat=$1 out rc
  shift
  out=$("$LBMC" merge "$@" 2>&1)
  rc=$?
  [ "$rc" -eq 2 ] && echo "$out" | grep -q -- "$pat" && [ ! -e "$1" ]
}
check "merge refuses a missing shard" refuses "shard 2/2 is missing" "$WORK/m1.h5" "$WORK/p1.h5"
check "merge refuses a shard twice" refuses "given twice" "$WORK/m2.h5" "$WORK/p1.h5" "$WORK/p1.h5" "$WORK/p2.h5"
check "other job" mpi 1 run "$HERE/precision.yaml" --shard 2/2 -o "$WORK/other.h5" --quiet
check "merge refuses parts of different jobs" refuses "come from different jobs" "$WORK/m3.h5" "$WORK/p1.h5" "$WORK/other.h5"
# parts without /grid whose job text no longer parses: merged, nothing said about the text
old_parts() {
  /usr/bin/python3 - "$WORK/p1.h5" "$WORK/p2.h5" "$WORK/o1.h5" "$WORK/o2.h5" <<'PY'
import shutil, sys, h5py
for src, dst in zip(sys.argv[1:3], sys.argv[3:5]):
    shutil.copy(src, dst)
    with h5py.File(dst, "a") as f:
        del f["grid"]
        f.attrs.modify("job", "policy: [\n")
PY
}
merges_quietly() { # merges_quietly OUT PARTS...: exit 0, no "lbmc: error", complete = 0
  local out
  out=$("$LBMC" merge "$@" 2>&1) || return 1
  ! echo "$out" | grep -q "lbmc: error" &&
    /usr/bin/python3 -c "import h5py, sys; sys.exit(int(h5py.File('$1', 'r').attrs['complete'] != 0))"
}
check "parts without /grid" old_parts
check "merge probes their job text quietly" merges_quietly "$WORK/m4.h5" "$WORK/o1.h5" "$WORK/o2.h5"
finish
