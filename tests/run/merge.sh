#!/usr/bin/env bash
# Shards: the parts of --shard 1/2 and 2/2 merged equal one run of the whole job; merge
# refuses a missing shard, a shard given twice, and parts of different jobs.
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
finish
