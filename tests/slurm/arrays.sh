#!/usr/bin/env bash
# slurm/submit and lbmc under Slurm, the faults of launching under Slurm (lost tasks, arrays over MaxArraySize), on a throw-away
# single-node cluster with MaxArraySize=11 (tests/slurm/cluster.sh):
#   (1) MaxArraySize: 25 shards of a 26-point job go into 3 arrays (task numbers
#       1-10, 1-10 + 10, 1-5 + 20) feeding one merge job; every task and the merge
#       complete, shard I logs to part-I-of-25.log, and the merged file equals an
#       unsharded run bit for bit (tests/run/compare.py). With --no-split the same
#       submission is refused (exit 2) naming MaxArraySize and the limit.
#   (2) Requeue whoever gets the signal: 2 shards of a longer job (srun launcher);
#       shard 1 gets `scancel --signal=USR1` (the step's tasks, as with sbatch
#       --signal=USR1@S without B:), shard 2 `scancel --batch --signal=USR1` (the
#       batch script, as with --signal=B:USR1@S). Each checkpoints, requeues itself,
#       resumes and completes; the merged file equals a plain run.
#   (3) srun without PMI: `srun -n 2 --mpi=none lbmc run` and `srun -n 4
#       --overcommit --mpi=none lbmc run` stop before computing: exit 2, the advice
#       --mpi=pmix printed once, no results file.
# Fails (never skips) if Slurm cannot start. Each check prints "ok" or "FAIL"; the
# exit status is non-zero if any failed. Takes 1-2 minutes.
# Env: LBMC (the program), LBMC_SOURCE_DIR (the tree; default: from this path).
# KEEP_SLURM_DIR=1 keeps the cluster directory (logs, run directories).
# shellcheck disable=SC1091  # env.sh is generated
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/slurm/lib.sh
. "$here/lib.sh"

# ---- jobs: 26 cheap points for (1); 2 points of many short replicas for (2),
# calibrated so that each shard needs ~6 s of CPU here (a signal after its first
# finished replica always finds it running).
many=$W/many.yaml
cat > "$many" <<EOF
# 26 cheap points: more shards than MaxArraySize allows in one array
system:
  n: [$(seq -s ', ' 10 2 60)]
  lambda: 0.8
  pools:
    - {beta: 1, mu: 1}
policy: random
run:
  replicas: 2
  warmup: 10
  time: 200
  seed: 5
EOF
sig_job() { # sig_job REPLICAS TIME
    cat <<EOF
# two equal points (shard 1 and shard 2 of 2), many short replicas
system:
  n: [1000, 1001]
  lambda: 0.8
  pools:
    - {beta: 0.5, mu: 2}
    - {beta: 0.5, mu: 1/2, buffer: 5}
policy: pull
run:
  replicas: $1
  warmup: 50
  time: $2
  batches: 10
  seed: 11
EOF
}
sig_job 2 2000 | sed 's/n: \[1000, 1001\]/n: 1000/' > "$W/calib.yaml"
("$LBMC" run "$W/calib.yaml" -o "$W/calib.h5" --quiet > "$W/calib.log" 2>&1) &
calib_pid=$!
"$LBMC" run "$many" -o "$W/many-ref.h5" --quiet > "$W/many-ref.log" 2>&1 &
ref_many_pid=$!
bg_pids+=("$calib_pid" "$ref_many_pid")

# ---- start (must not skip: a failed start is a failed test)
if ! SLURM_TEST_CONF_EXTRA=MaxArraySize=11 "$C" start "$D" > "$W/start.log"; then
    bad "cluster start"; echo "$pass passed, $fail failed"; exit 1
fi
. "$D/env.sh"
ok "cluster start ($SLURM_CONF)"
cd "$W" || exit 1
check "the cluster's MaxArraySize is 11" sh -c "scontrol show config | grep -Eq '^MaxArraySize *= *11\$'"

# ---- (1) MaxArraySize
out=$("$SUBMIT" "$many" --shards 25 --ntasks 1 --time 5 --dir "$W/nosplit" --no-split 2>&1)
rc=$?
nosplit() {
    [ "$rc" -eq 2 ] && grep -q "MaxArraySize is 11 (task numbers 0 to 10" <<< "$out" &&
        [ -z "$(squeue -h -t all -n lbmc-many 2>&1)" ] && [ ! -e "$W/nosplit/shard.sbatch" ]
}
check "(1) --no-split --shards 25: refused, naming MaxArraySize 11 (rc=$rc)" nosplit || echo "$out"
out=$("$SUBMIT" "$many" --shards 25 --ntasks 1 --time 5 --dir "$W/split" --progress 1 2>&1)
rc=$?
mapfile -t ids < <(sed -n 's/^submitted shard arrays \([0-9 ]*\) (.*/\1/p' <<< "$out" | tr ' ' '\n')
merge_id=$(sed -n 's/^submitted merge job *\([0-9]*\) .*/\1/p' <<< "$out")
check "(1) --shards 25: 3 arrays (${ids[*]}) and a merge job ($merge_id)" \
    test "$rc" -eq 0 -a "${#ids[@]}" -eq 3 -a -n "$merge_id" || echo "$out"
echo "$out" | sed -n 's/^  array/    array/p'
r=() n=(10 10 5)
for j in 0 1 2; do
    r[j]=$(wj "${ids[j]:-0}" 300)
    check "(1) array $((j + 1)): ${n[j]} tasks completed" tasks_are "${r[j]}" "${n[j]}" "COMPLETED 0:0" ||
        echo "${r[j]}"
done
rm1=$(wj "$merge_id" 120)
check "(1) merge job completed: $rm1" test "$rm1" = "$merge_id COMPLETED 0:0" || show "$W/split/merge.log"
logs_ok() {
    local i
    for i in $(seq 25); do
        grep -q "shard $i/25: finished" "$W/split/part-$i-of-25.log" || { echo "    part-$i-of-25.log"; return 1; }
    done
    grep -q "shard 23/25: job ${ids[2]}_3 " "$W/split/part-23-of-25.log"
}
check "(1) shard I logs to part-I-of-25.log (shard 23 = task 3 of the third array)" logs_ok
if wait "$ref_many_pid"; then
    check "(1) merged file equals an unsharded run" compare "$W/many-ref.h5" "$W/split/many.h5"
else
    bad "(1) unsharded run"; show "$W/many-ref.log"
fi

# ---- (2) requeue whoever gets the signal
if wait "$calib_pid"; then
    unit=$(/usr/bin/python3 -c "import h5py, numpy as np; print(float(np.nanmean(h5py.File('$W/calib.h5')['replicas/cpu_seconds'][()])))")
else
    bad "(2) calibration run"; show "$W/calib.log"; unit=1
fi
# replicas of ~0.5 s CPU, ~6 s per shard
time=$(/usr/bin/python3 -c "print(max(200, round(2000 * 0.5 / max($unit, 1e-3))))")
sig_job 12 "$time" > "$W/sig.yaml"
ok "(2) calibration: $unit CPU s per replica of time 2000 -> time $time, 12 replicas"
out=$("$SUBMIT" "$W/sig.yaml" --shards 2 --ntasks 1 --time 5 --dir "$W/sig" --progress 1 2>&1)
a2=$(sed -n 's/^submitted shard array \([0-9]*\) .*/\1/p' <<< "$out")
m2=$(sed -n 's/^submitted merge job *\([0-9]*\) .*/\1/p' <<< "$out")
check "(2) submit: 2 shards (array $a2, merge $m2)" test -n "$a2" -a -n "$m2" || echo "$out"
# The reference takes the CPU time the shards leave while they wait to requeue.
"$LBMC" run "$W/sig.yaml" -o "$W/sig-ref.h5" --quiet > "$W/sig-ref.log" 2>&1 &
ref_sig_pid=$!
bg_pids+=("$ref_sig_pid")
# requeued_states "STATES": >= 1 requeued record (PENDING) before the final COMPLETED
requeued_states() { [[ $1 =~ ^(PENDING )+COMPLETED\ $ ]]; }
progressed() { grep -q 'lbmc run: [1-9][0-9]* units done' "$1" 2>/dev/null; }
for i in 1 2; do
    for _ in $(seq 1200); do progressed "$W/sig/part-$i-of-2.log" && break; sleep 0.1; done
    check "(2) shard $i has finished replicas" progressed "$W/sig/part-$i-of-2.log"
done
scancel --signal=USR1 "${a2}_1"
scancel --batch --signal=USR1 "${a2}_2"
r2=$(wj "$a2" 600); rm2=$(wj "$m2" 120)
check "(2) both tasks completed: ${r2//$'\n'/, }" tasks_are "$r2" 2 "COMPLETED 0:0"
for i in 1 2; do
    log=$W/sig/part-$i-of-2.log
    states=$(jobcomp_states "$a2" "$i" | tr '\n' ' ')
    check "(2) shard $i was requeued (jobcomp: $states)" requeued_states "$states"
    case $i in
        1) who="the step's tasks" sig='lbmc checkpointed on a signal sent to the step' ;;
        2) who="the batch script" sig='USR1: stopping lbmc to checkpoint' ;;
    esac
    requeued() {
        grep -q "$sig" "$log" && grep -q 'checkpointed ([0-9]* -> [0-9]* bytes); requeueing' "$log" &&
            grep -q 'attempt 2 (SLURM_RESTART_COUNT=1)' "$log" && grep -q 'resuming from' "$log" &&
            grep -q 'finished: ' "$log" && ! grep -q 'FAILED' "$log"
    }
    check "(2) shard $i: USR1 to $who: checkpoint, requeue, attempt 2 resumes, finishes" requeued || show "$log"
done
check "(2) merge job completed: $rm2" test "$rm2" = "$m2 COMPLETED 0:0" || show "$W/sig/merge.log"
check "(2) no checkpoint left" test ! -e "$W/sig/part-1-of-2.h5.ckpt" -a ! -e "$W/sig/part-2-of-2.h5.ckpt"
if wait "$ref_sig_pid"; then
    check "(2) merged file equals a plain run" compare "$W/sig-ref.h5" "$W/sig/sig.h5"
else
    bad "(2) plain run"; show "$W/sig-ref.log"
fi

# ---- (3) srun without PMI
for args in "-n 2" "-n 4 --overcommit"; do
    # shellcheck disable=SC2086
    out=$(srun $args --mpi=none "$LBMC" run "$many" -o "$W/none.h5" 2>&1)
    rc=$?
    tasks=${args#-n }; tasks=${tasks%% *}
    refused() {
        [ "$rc" -eq 2 ] && [ "$(grep -c 'Launch with srun --mpi=pmix' <<< "$out")" -eq 1 ] &&
            grep -q "Slurm started this step with $tasks tasks (SLURM_STEP_NUM_TASKS=$tasks) but MPI sees one rank per task" <<< "$out" &&
            [ ! -e "$W/none.h5" ] && [ ! -e "$W/none.h5.ckpt" ] && ! grep -q 'units done' <<< "$out"
    }
    check "(3) srun $args --mpi=none lbmc run: refused before computing (rc=$rc)" refused || echo "$out"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
