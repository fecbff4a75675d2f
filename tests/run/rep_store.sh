#!/usr/bin/env bash
# Where the replicas' rows are held does not change a number: the results of lbmc sim -o,
# lbmc run on 1 and 2 ranks, shards merged (their files read back), lbmc info --compare,
# with every row in the replica store's
# file (LBMC_REP_STORE_BYTES=0, src/sim/rep_store.h) equal those held in memory; the
# threshold variable is checked.
. "$(dirname "$0")/lib.sh"
mem() ( # mem CMD...: CMD (a program or a function) with the default threshold
  unset LBMC_REP_STORE_BYTES
  "$@"
)
file() ( # file CMD...: CMD with every row in the store's file
  export LBMC_REP_STORE_BYTES=0
  "$@"
)
SIM=(sim --n 10 --lambda 0.8 --pools 1:1:inf --policy 'jsq(2)' --replicas 40 --time 50 --warmup 5)
sim() { "$LBMC" "${SIM[@]}" -o "$1" > /dev/null; }
check "sim, rows in memory" mem sim "$WORK/sim_mem.h5"
check "sim, rows in the file" file sim "$WORK/sim_file.h5"
check "sim: the same" compare "$WORK/sim_mem.h5" "$WORK/sim_file.h5"
check "run, 1 rank, rows in memory" mem mpi 1 run "$HERE/small.yaml" -o "$WORK/mem.h5" --quiet
check "run, 1 rank, rows in the file" file mpi 1 run "$HERE/small.yaml" -o "$WORK/file1.h5" --quiet
check "run, 2 ranks, rows in the file" file mpi 2 run "$HERE/small.yaml" -o "$WORK/file2.h5" --quiet
check "run 1 rank: the same" compare "$WORK/mem.h5" "$WORK/file1.h5"
check "run 2 ranks: the same" compare "$WORK/mem.h5" "$WORK/file2.h5"
check "shard 1/2, rows in the file" file mpi 1 run "$HERE/small.yaml" --shard 1/2 -o "$WORK/p1.h5" --quiet
check "shard 2/2, rows in the file" file mpi 2 run "$HERE/small.yaml" --shard 2/2 -o "$WORK/p2.h5" --quiet
check "merge, rows in the file" file "$LBMC" merge "$WORK/merged.h5" "$WORK/p1.h5" "$WORK/p2.h5"
check "merged: the same" compare "$WORK/mem.h5" "$WORK/merged.h5"
# 9000 replicas of one point: the writer and the reader take them in blocks of 4096
BIG=(sim --n 1 --lambda 0.5 --pools 1:1:inf --policy random --replicas 9000 --time 2 --warmup 0.5)
big() { "$LBMC" "${BIG[@]}" -o "$1" > /dev/null; }
check "9000 replicas, rows in memory" mem big "$WORK/big_mem.h5"
check "9000 replicas, rows in the file" file big "$WORK/big_file.h5"
check "9000 replicas: the same" compare "$WORK/big_mem.h5" "$WORK/big_file.h5"
check "9000 replicas read back and written again" file "$LBMC" merge "$WORK/big_again.h5" "$WORK/big_file.h5"
check "9000 replicas again: the same" compare "$WORK/big_mem.h5" "$WORK/big_again.h5"
compare_policies() { "$LBMC" info "$WORK/mem.h5" --compare 'pull,jsq(2)' > "$1" && grep -q mean_sojourn "$1"; }
check "--compare, rows in memory" mem compare_policies "$WORK/cmp_mem.txt"
check "--compare, rows in the file" file compare_policies "$WORK/cmp_file.txt"
check "--compare: the same" cmp "$WORK/cmp_mem.txt" "$WORK/cmp_file.txt"
bad_threshold() {
  local out
  out=$(env LBMC_REP_STORE_BYTES=12x "$LBMC" "${SIM[@]}" 2>&1)
  [ $? -eq 2 ] && echo "$out" | grep -q "LBMC_REP_STORE_BYTES=12x: not a count of bytes"
}
check "a bad threshold refused" bad_threshold
finish
