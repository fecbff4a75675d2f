#!/usr/bin/env bash
# slurm/submit without a cluster: bad arguments exit 2 with a message and submit
# nothing; --dry-run renders runnable batch scripts; a failed merge submission
# cancels the array; shards beyond the cluster's MaxArraySize go into several
# arrays with offsets, or are refused with --no-split (sbatch, scancel and
# scontrol are stubs here). The real submissions are tested on a Slurm cluster by
# tests/slurm/sweep.sh and tests/slurm/arrays.sh.
# Env: LBMC (the program), LBMC_SOURCE_DIR (the tree; default: from this path).
# shellcheck disable=SC2016  # the stubs' code is single-quoted
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=${LBMC_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
LBMC=${LBMC:?set LBMC to the lbmc program}
export LBMC
SUBMIT=$SRC/slurm/submit
W=$(mktemp -d /tmp/lbmc-submit-test.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
fails=0
check() { local what=$1; shift; if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi; }

# Stubs: sbatch records its arguments and prints job ids (fails when asked),
# scancel records.
mkdir bin
cat > bin/sbatch <<'EOF'
#!/bin/sh
echo "sbatch $*" >> "$STUB_LOG"
n=$(grep -c '^sbatch' "$STUB_LOG")
[ "$n" -ge "${STUB_FAIL_AT:-99}" ] && { echo "sbatch: error: Batch job submission failed: stub" >&2; exit 1; }
echo "$((100 + n));cluster"
EOF
printf '#!/bin/sh\necho "scancel $*" >> "$STUB_LOG"\n' > bin/scancel
# scontrol show config: MaxArraySize from STUB_MAXARRAY (Slurm's default 1001)
printf '#!/bin/sh\nprintf "%%s\\n" "Configuration data as of now" "MaxArraySize            = ${STUB_MAXARRAY:-1001}" "MaxJobCount             = 10000"\n' > bin/scontrol
chmod +x bin/sbatch bin/scancel bin/scontrol
export PATH=$W/bin:$PATH STUB_LOG=$W/stub.log
: > "$STUB_LOG"

job=$W/small.yaml
cp "$SRC/tests/run/small.yaml" "$job"
base=(--shards 2 --ntasks 1 --time 5)

# refuses PATTERN ARGS...: exit 2, the message, no sbatch call, no run directory
refuses() {
    local pat=$1 out rc
    shift
    out=$("$SUBMIT" "$@" 2>&1)
    rc=$?
    if [ "$rc" -eq 2 ] && grep -q -- "$pat" <<< "$out" && [ ! -s "$STUB_LOG" ] && [ ! -e "$W/lbmc-runs" ]; then
        return 0
    fi
    echo "    rc=$rc: $out"
    return 1
}
check "no arguments" refuses "usage: slurm/submit"
check "no job file" refuses "the job file is missing" "${base[@]}"
check "missing file" refuses "nope.yaml: no such readable file" nope.yaml "${base[@]}"
check "two job files" refuses "one job file only" "$job" "$job" "${base[@]}"
check "--shards required" refuses "--shards is required" "$job" --ntasks 1 --time 5
check "--shards 0" refuses "--shards: '0' is not allowed" "$job" --shards 0 --ntasks 1 --time 5
check "--ntasks x" refuses "--ntasks: 'x' is not allowed" "$job" --shards 2 --ntasks x --time 5
check "--time required" refuses "--time is required" "$job" --shards 2 --ntasks 1
check "--time 2h" refuses "--time: '2h' is not allowed" "$job" --shards 2 --ntasks 1 --time 2h
check "--time 0" refuses "--time: '0' is not allowed" "$job" --shards 2 --ntasks 1 --time 0
check "--signal-seconds >= limit" refuses "it must be shorter than the time limit" "$job" "${base[@]}" --signal-seconds 300
check "--launcher" refuses "--launcher: 'mpiexec' is not allowed" "$job" "${base[@]}" --launcher mpiexec
check "a value is required" refuses "--partition: a value is required" "$job" "${base[@]}" --partition
check "unknown option" refuses "'--shard' is not an option" "$job" --shard 2 --ntasks 1 --time 5
check "--lbmc not executable" refuses "--lbmc: $job is not an executable file" "$job" "${base[@]}" --lbmc "$job"
check "blank in --partition" refuses "--partition: 'a b' contains a blank" "$job" "${base[@]}" --partition "a b"
check "blank in an sbatch option" refuses "sbatch option '--comment=a b' contains a blank" "$job" "${base[@]}" -- "--comment=a b"
mkdir full && touch full/x
check "--dir not empty" refuses "--dir: $W/full is not empty" "$job" "${base[@]}" --dir full
check "--output exists" refuses "--output: $W/full/x exists" "$job" "${base[@]}" --output full/x
sed 's/^  lambda:/  lamda:/' "$job" > broken.yaml
check "a bad job file (lbmc's message)" refuses "broken.yaml:[0-9]*: system: 'lamda' is not a key" broken.yaml "${base[@]}"
STUB_MAXARRAY=11 check "--no-split: 25 shards refused, naming MaxArraySize and the limit" refuses \
    "--shards 25 needs array task numbers 1 to 25, but this cluster's MaxArraySize is 11 (task numbers 0 to 10.*use --shards 10 or fewer, or drop --no-split to submit 3 arrays" \
    "$job" --shards 25 --ntasks 1 --time 5 --no-split --no-check

# --dry-run: scripts rendered, nothing submitted.
dry() {
    local out rc d=$W/dry
    out=$("$SUBMIT" "$job" --shards 8 --ntasks 3 --time 1-02:00 --partition p1 --account a1 --dir "$d" \
        --dry-run -- --qos=long --mail-type=END 2>&1)
    rc=$?
    [ "$rc" -eq 0 ] || { echo "    rc=$rc: $out"; return 1; }
    local s=$d/shard.sbatch m=$d/merge.sbatch
    [ ! -s "$STUB_LOG" ] && grep -q 'nothing submitted' <<< "$out" &&
        grep -q 'more than the job.s 6 grid points: 2 shard(s) will be empty' <<< "$out" &&
        cmp -s "$job" "$d/small.yaml" && bash -n "$s" && bash -n "$m" && [ -x "$s" ] && [ -x "$m" ] &&
        grep -qx '#SBATCH --array=1-8' "$s" && grep -qx '#SBATCH --ntasks=3' "$s" &&
        grep -qx '#SBATCH --time=1-02:00' "$s" && grep -qx '#SBATCH --signal=B:USR1@120' "$s" &&
        grep -qx "#SBATCH --output=$d/part-%a-of-8.log" "$s" && grep -qx '#SBATCH --partition=p1' "$s" &&
        grep -qx '#SBATCH --account=a1' "$s" && grep -qx '#SBATCH --qos=long --mail-type=END' "$s" &&
        grep -qx '#SBATCH --requeue' "$s" && grep -qx "JOB=$d/small.yaml" "$s" && grep -qx 'SHARDS=8' "$s" &&
        grep -qx "LBMC=$LBMC" "$s" && grep -qx '#SBATCH --time=00:30:00' "$m" &&
        grep -qx '#SBATCH --partition=p1' "$m" && grep -qx "OUTPUT=$d/small.h5" "$m" &&
        grep -qx '#SBATCH --kill-on-invalid-dep=yes' "$m" &&
        # the #SBATCH lines come before the first command
        [ "$(grep -n '^#SBATCH' "$s" | tail -n 1 | cut -d: -f1)" -lt "$(grep -n '^LBMC=' "$s" | cut -d: -f1)" ]
}
check "--dry-run renders the batch scripts and submits nothing" dry

# Submission: the array, then the merge with afterok on the array's id.
submitted() {
    local out rc
    out=$("$SUBMIT" "$job" "${base[@]}" 2>&1)
    rc=$?
    [ "$rc" -eq 0 ] || { echo "    rc=$rc: $out"; return 1; }
    grep -q "^submitted shard array 101 " <<< "$out" && grep -q "^submitted merge job   102 " <<< "$out" &&
        grep -q "^sbatch --parsable .*/lbmc-runs/small-[0-9-]*/shard.sbatch$" "$STUB_LOG" &&
        grep -q "^sbatch --parsable --dependency=afterok:101 .*/merge.sbatch$" "$STUB_LOG" &&
        grep -q "merged results: $W/lbmc-runs/small-[0-9-]*/small.h5" <<< "$out"
}
check "submit: array, then merge after it; default run directory" submitted
: > "$STUB_LOG"
merge_fails() {
    local out rc
    out=$(STUB_FAIL_AT=2 "$SUBMIT" "$job" "${base[@]}" 2>&1)
    rc=$?
    [ "$rc" -eq 1 ] && grep -q 'the shard array 101 was cancelled' <<< "$out" && grep -qx 'scancel 101' "$STUB_LOG"
}
check "a failed merge submission cancels the array (exit 1)" merge_fails

# ---- MaxArraySize: the stub cluster allows task numbers 0..10.
export STUB_MAXARRAY=11
: > "$STUB_LOG"
split_dry() { # split_dry K DIR PATTERN...: --dry-run prints exactly these sbatch lines
    local k=$1 d=$W/$2 out rc
    shift 2
    out=$("$SUBMIT" "$job" --shards "$k" --ntasks 1 --time 5 --dir "$d" --dry-run --no-check 2>&1)
    rc=$?
    local got; got=$(grep '^  sbatch' <<< "$out" | sed "s|$d|D|g; s/^  //")
    if [ "$rc" -eq 0 ] && [ "$got" = "$(printf '%s\n' "$@")" ] && [ ! -s "$STUB_LOG" ]; then return 0; fi
    echo "    rc=$rc: $out"
    return 1
}
check "10 shards fit into one array (task numbers 1-10)" split_dry 10 fit \
    "sbatch --parsable D/shard.sbatch" "sbatch --parsable --dependency=afterok:ARRAYID D/merge.sbatch"
check "... whose script says --array=1-10" grep -qx '#SBATCH --array=1-10' "$W/fit/shard.sbatch"
check "25 shards: 3 arrays of task numbers 1-10, 1-10 + 10, 1-5 + 20" split_dry 25 split \
    "sbatch --parsable D/shard.sbatch" \
    "sbatch --parsable --array=1-10 --output=D/slurm-%A_%a.out D/shard.sbatch 10" \
    "sbatch --parsable --array=1-5 --output=D/slurm-%A_%a.out D/shard.sbatch 20" \
    "sbatch --parsable --dependency=afterok:ARRAYID D/merge.sbatch"
check "... the first array's script says --array=1-10, the merge SHARDS=25" \
    sh -c "grep -qx '#SBATCH --array=1-10' '$W/split/shard.sbatch' && grep -qx 'SHARDS=25' '$W/split/merge.sbatch'"
check "11 shards: 2 arrays" split_dry 11 eleven "sbatch --parsable D/shard.sbatch" \
    "sbatch --parsable --array=1-1 --output=D/slurm-%A_%a.out D/shard.sbatch 10" \
    "sbatch --parsable --dependency=afterok:ARRAYID D/merge.sbatch"
STUB_MAXARRAY=1 check "MaxArraySize 1 (task number 0 only): one array per shard" split_dry 3 one \
    "sbatch --parsable --output=D/slurm-%A_%a.out D/shard.sbatch 1" \
    "sbatch --parsable --array=0-0 --output=D/slurm-%A_%a.out D/shard.sbatch 2" \
    "sbatch --parsable --array=0-0 --output=D/slurm-%A_%a.out D/shard.sbatch 3" \
    "sbatch --parsable --dependency=afterok:ARRAYID D/merge.sbatch"
no_arrays() {
    local out rc
    out=$(STUB_MAXARRAY=0 "$SUBMIT" "$job" --shards 2 --ntasks 1 --time 5 --no-check 2>&1)
    rc=$?
    [ "$rc" -eq 1 ] && grep -q 'job arrays are disabled on this cluster (MaxArraySize=0' <<< "$out" && [ ! -s "$STUB_LOG" ]
}
check "MaxArraySize 0: job arrays disabled (exit 1)" no_arrays
split_submitted() {
    local out rc
    out=$("$SUBMIT" "$job" --shards 25 --ntasks 1 --time 5 --dir "$W/split-sub" --no-check 2>&1)
    rc=$?
    [ "$rc" -eq 0 ] || { echo "    rc=$rc: $out"; return 1; }
    grep -q "^submitted shard arrays 101 102 103 (25 shards in 3 arrays: this cluster's MaxArraySize is 11" <<< "$out" &&
        grep -q "^  array 102: shards 11-20 (array tasks 1-10, shard = task + 10)" <<< "$out" &&
        grep -q "^  array 103: shards 21-25 (array tasks 1-5, shard = task + 20)" <<< "$out" &&
        grep -q "^submitted merge job   104 " <<< "$out" && grep -q "squeue -j 101,102,103,104" <<< "$out" &&
        grep -q "^sbatch --parsable --array=1-5 --output=$W/split-sub/slurm-%A_%a.out $W/split-sub/shard.sbatch 20$" "$STUB_LOG" &&
        grep -q "^sbatch --parsable --dependency=afterok:101:102:103 $W/split-sub/merge.sbatch$" "$STUB_LOG" &&
        grep -qx "array 101 102 103 merge 104" "$W/split-sub/submit.log" ||
        { echo "$out"; cat "$STUB_LOG"; return 1; }
}
: > "$STUB_LOG"
check "25 shards submitted as 3 arrays, the merge after all of them" split_submitted
: > "$STUB_LOG"
second_fails() {
    local out rc
    out=$(STUB_FAIL_AT=2 "$SUBMIT" "$job" --shards 25 --ntasks 1 --time 5 --no-check 2>&1)
    rc=$?
    [ "$rc" -eq 1 ] && grep -q 'sbatch of a shard array failed; the arrays 101 were cancelled' <<< "$out" &&
        grep -qx 'scancel 101' "$STUB_LOG" && [ "$(grep -c '^sbatch' "$STUB_LOG")" -eq 2 ]
}
check "a failed second array cancels the first (exit 1)" second_fails
unset STUB_MAXARRAY

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
