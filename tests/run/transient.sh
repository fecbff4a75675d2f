#!/usr/bin/env bash
# Transient runs in results files (/transient, docs/results-format.md): the same job on
# 1, 2 and 4 ranks, in two shards merged, and resumed from a checkpoint cut in the middle
# gives bit-identical /transient (with /points, /estimates, /replicas); point 0 equals
# `lbmc sim --transient --json` (and the file of lbmc sim -o) of the same model, seed and
# replicas bit for bit, and the
# comparison catches a run of one replica fewer or another time axis (its controls);
# lbmc info --transient in CSV gives the file's values, in text and JSON its rows; a
# changed /transient value is refused by its checksum.
. "$(dirname "$0")/lib.sh"
FAIL=$(preload "${LBMC_FAILWRITE:?set LBMC_FAILWRITE to the write-failure shim}")
job="$HERE/transient.yaml"
tcheck() { /usr/bin/python3 "$HERE/transient_check.py" "$@"; }
all=points,estimates,replicas,transient
for np in 1 2 4; do
  check "run on $np rank(s)" mpi "$np" run "$job" -o "$WORK/r$np.h5" --quiet
done
check "1 vs 2 ranks identical, /transient included" compare "$WORK/r1.h5" "$WORK/r2.h5" --groups $all
check "1 vs 4 ranks identical, /transient included" compare "$WORK/r1.h5" "$WORK/r4.h5" --groups $all
check "layout: P x T, then J, then K; chunked, Fletcher32, digests" tcheck layout "$WORK/r1.h5"

# the file against lbmc sim --json of point 0 (scenario 0: the same streams)
sim() { # sim REPLICAS TRANSIENT [FLAGS...] > JSON
  "$LBMC" sim --n 10 --lambda 0.8 --pools 0.5:1.5:inf,0.5:0.5:inf --policy 'jsq(2)' \
    --replicas "$1" --seed 11 --tail-k 4 --init 'tail:1,1,0.8;1,0.5' --transient "$2" --json "${@:3}"
}
sim 30 0:6:0.5 -o "$WORK/sim.h5" >"$WORK/s30.json" 2>/dev/null
sim 29 0:6:0.5 >"$WORK/s29.json"
sim 30 0:6:1 >"$WORK/coarse.json"
differs() { ! tcheck json "$@" >/dev/null; }
check "point 0 equals lbmc sim --json bit for bit" tcheck json "$WORK/r2.h5" 0 "$WORK/s30.json"
check "lbmc sim -o writes the same /transient" tcheck file "$WORK/r2.h5" 0 "$WORK/sim.h5"
check "lbmc sim -o: one complete point" sh -c "'$LBMC' info '$WORK/sim.h5' --width 0 | grep -q '1 point; 1 in the file'"
check "control: one replica fewer differs" differs "$WORK/r2.h5" 0 "$WORK/s29.json"
check "control: another time axis differs" differs "$WORK/r2.h5" 0 "$WORK/coarse.json"
check "control: point 1 (another scenario) differs" differs "$WORK/r2.h5" 1 "$WORK/s30.json"

# shards
check "shard 1/2" mpi 1 run "$job" --shard 1/2 -o "$WORK/p1.h5" --quiet
check "shard 2/2" mpi 2 run "$job" --shard 2/2 -o "$WORK/p2.h5" --quiet
check "merge" "$LBMC" merge "$WORK/merged.h5" "$WORK/p2.h5" "$WORK/p1.h5"
check "merged equals whole" compare "$WORK/r1.h5" "$WORK/merged.h5" --groups $all

# resume: the final write fails (the checkpoint is kept), the checkpoint is cut in the
# middle of a record, and the resumed run simulates what is missing
cut_and_resume() {
  local out="$WORK/cut.h5" size
  LD_PRELOAD=$FAIL LBMC_FAILWRITE_MATCH=".tmp." LBMC_FAILWRITE_ERRNO=EIO \
    "$LBMC" run "$job" -o "$out" --quiet 2>/dev/null && return 1
  [ -s "$out.ckpt" ] && [ ! -e "$out" ] || return 1
  size=$(stat -c %s "$out.ckpt")
  truncate -s $((size * 11 / 20)) "$out.ckpt"
  "$LBMC" info "$out.ckpt" | grep -q "finished replica" || return 1
  mpi 2 run "$job" -o "$out" --resume --quiet 2>/dev/null && [ ! -e "$out.ckpt" ] &&
    compare "$WORK/r1.h5" "$out" --groups $all
}
check "checkpoint cut in the middle, resumed on 2 ranks: identical" cut_and_resume

# lbmc info --transient
check "info --transient csv: the file's values, every one" \
  sh -c "'$LBMC' info '$WORK/r1.h5' --transient --format csv >'$WORK/info.csv'"
check "info csv equals the file" tcheck csv "$WORK/r1.h5" "$WORK/info.csv"
info_text() {
  local out
  out=$("$LBMC" info "$WORK/r1.h5" --transient --metrics 'tail[2][1],customers') || return 1
  echo "$out" | grep -q "Bonferroni" && echo "$out" | grep -q "tail\[2\]\[1\]" &&
    [ "$(echo "$out" | grep -c '^ *[01] ')" -eq $((2 * 13 * 2)) ]
}
check "info --transient text: the chosen entries at every time" info_text
check "plain info of a transient file points to --transient" \
  sh -c "'$LBMC' info '$WORK/r1.h5' --width 0 | grep -q 'are in /transient: lbmc info .* --transient'"
info_json() {
  "$LBMC" info "$WORK/r1.h5" --transient --format json --metrics 'mean_queue' |
    /usr/bin/python3 -c "
import json, sys
rows = json.load(sys.stdin)['rows']
assert len(rows) == 2 * 13 * 2, len(rows)
assert {r['entry'] for r in rows} == {'mean_queue[1]', 'mean_queue[2]'}
assert all(r['band_lower'] <= r['lower'] <= r['mean'] <= r['upper'] <= r['band_upper'] for r in rows)
"
}
check "info --transient json: rows, intervals inside the band" info_json
refused() { # refused PATTERN ARGS...: lbmc exits 2 and says PATTERN
  local pat=$1 out rc
  shift
  out=$("$LBMC" "$@" 2>&1)
  rc=$?
  [ "$rc" -eq 2 ] && echo "$out" | grep -qF -- "$pat"
}
"$LBMC" run "$HERE/small.yaml" -o "$WORK/steady.h5" --quiet
check "info --transient of a steady-state file is refused, naming the key" \
  refused "not the results of a transient run (run.transient" info "$WORK/steady.h5" --transient
check "info --transient: an unknown metric names the allowed ones" \
  refused "allowed with --transient: mean_queue, tail, customers" info "$WORK/r1.h5" --transient --metrics p_wait_or_block
check "info --transient: a pool out of range" \
  refused "'mean_queue[3]' is not allowed" info "$WORK/r1.h5" --transient --metrics 'mean_queue[3]'
for idx in ' 1' '+1' '1 ' '1e0'; do
  check "info --transient: an index '$idx' (digits only) is refused" \
    refused "'mean_queue[$idx]' is not allowed; mean_queue takes a pool from 1" \
    info "$WORK/r1.h5" --transient --metrics "mean_queue[$idx]"
done

# a changed value of /transient is refused by its checksum, naming the dataset
damaged() {
  cp "$WORK/r1.h5" "$WORK/bad.h5"
  /usr/bin/python3 -c "
import h5py
with h5py.File('$WORK/bad.h5', 'a') as f:
    d = f['transient/customers/mean']
    x = d[()]
    x[0, 3] += 1e-9
    d[...] = x
"
  local out
  out=$("$LBMC" info "$WORK/bad.h5" --transient 2>&1)
  [ $? -eq 1 ] && echo "$out" | grep -q "transient/customers/mean"
}
check "a changed /transient value is refused, naming the dataset" damaged
finish
