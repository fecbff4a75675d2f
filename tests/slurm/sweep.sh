#!/usr/bin/env bash
# Sweeps through slurm/submit on a throw-away single-node Slurm cluster
# (tests/slurm/cluster.sh), in one cluster session:
#   (1) a 4-shard sweep of a small job (srun --mpi=pmix, 2 ranks per shard): all
#       tasks and the merge job complete; the merged file equals a plain mpirun
#       run bit for bit (tests/run/compare.py: /points, /estimates, /replicas);
#   (2) the same job as 2 shards with --launcher mpirun: the same;
#   (3) a bad job file: slurm/submit refuses it (exit 2, lbmc's message, nothing
#       submitted); with --no-check every shard task FAILS, the merge job is
#       CANCELLED, no merged file exists and each part's log shows lbmc's error;
#       after fixing the job copy, the shards rerun and merged by hand with the
#       rendered scripts (the README's recovery) give the plain run's results;
#   (4) time limit: 2 shards with --time 1 (one minute, Slurm's smallest), one of
#       which needs ~65 s of CPU (calibrated on this machine): it gets USR1 before
#       the limit, checkpoints, requeues itself (jobcomp and its log show the
#       attempts, SLURM_RESTART_COUNT >= 1), resumes and completes; the merged
#       file is complete, no checkpoint is left, and it equals a plain run;
#   (5) meanwhile, scancel of a running shard: lbmc stops on TERM, the checkpoint
#       is kept, nothing is requeued, the merge is cancelled; rerunning the shard
#       by hand (README) resumes and the merged file equals a plain run.
# Fails (never skips) if Slurm cannot start. Each check prints "ok" or "FAIL";
# the exit status is non-zero if any failed. Takes 2-4 minutes (more on a busy
# machine): (4) is a CPU-bound shard that gets ~24 s per attempt between
# slurmctld's 30 s timer ticks; (5) and the reference runs share the second CPU.
# Env: LBMC (the program), LBMC_SOURCE_DIR (the tree; default: from this path).
# KEEP_SLURM_DIR=1 keeps the cluster directory (logs, run directories).
# shellcheck disable=SC1091  # env.sh is generated
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/slurm/lib.sh
. "$here/lib.sh"

# ---- jobs: the small runner job, a broken copy, and a time-limit job whose
# first point (run.time axis) is costly and goes to shard 1 of 2.
small=$W/small.yaml
cp "$SRC/tests/run/small.yaml" "$small"
badjob=$W/broken.yaml
sed 's/^  lambda:/  lamda:/' "$small" > "$badjob"
tl_job() { # tl_job REPLICAS > file
    cat <<EOF
# slurm-sweep time-limit job: point 0 is long (shard 1), point 1 short (shard 2)
system:
  n: 1000
  lambda: 0.8
  pools:
    - {beta: 0.5, mu: 2}
    - {beta: 0.5, mu: 1/2, buffer: 5}
policy: pull
run:
  replicas: $1
  warmup: 50
  time: [12000, 100]
  batches: 10
  seed: 11
  tail_k: 4
EOF
}

# Calibrate while the cluster starts: CPU seconds of one replica of the long
# point, so that shard 1 needs ~65 s of CPU here, more than the first attempt
# of a one-minute task runs before its warning (20 to 50 s: USR1@10 and
# slurmctld's 30 s timer). CPU time, so a busy machine only makes it longer.
tl_job 2 > "$W/calib.yaml"
("$LBMC" run "$W/calib.yaml" --shard 1/2 -o "$W/calib.h5" --quiet > "$W/calib.log" 2>&1) &
calib_pid=$!
mpirun -np 2 "$LBMC" run "$small" -o "$W/small-ref.h5" --quiet > "$W/small-ref.log" 2>&1 &
ref_small_pid=$!

# ---- start (must not skip: a failed start is a failed test)
if ! "$C" start "$D" > "$W/start.log"; then
    bad "cluster start"; echo "$pass passed, $((fail)) failed"; exit 1
fi
. "$D/env.sh"
ok "cluster start ($SLURM_CONF)"
cd "$W" || exit 1

# ---- (1), (2), (3): submitted together; tasks queue for the two CPUs.
check "(1) submit: 4 shards x 2 ranks (srun)" \
    submit sweep "$small" --shards 4 --ntasks 2 --time 00:05:00 --progress 1
a1=$array_id m1=$merge_id
check "(2) submit: 2 shards x 2 ranks (--launcher mpirun)" \
    submit mpirun "$small" --shards 2 --ntasks 2 --time 5 --launcher mpirun --output "$W/mpirun-merged.h5"
a2=$array_id m2=$merge_id

submit precheck "$badjob" --shards 2 --ntasks 1 --time 1 --job-name lbmc-precheck > /dev/null
refused() {
    [ "$sub_rc" -eq 2 ] && grep -q "lbmc: error: .*broken.yaml:[0-9]*: system: 'lamda' is not a key" <<< "$sub_out" &&
        grep -q 'nothing submitted' <<< "$sub_out" && [ ! -e "$W/precheck" ] &&
        [ -z "$(squeue -h -t all -n lbmc-precheck 2>&1)" ]
}
check "(3) a bad job file is refused before submitting (exit 2, lbmc's message, no job)" refused ||
    echo "$sub_out"
check "(3) submit --no-check: 2 shards of a bad job file" \
    submit broken "$badjob" --shards 2 --ntasks 1 --time 1 --no-check
a3=$array_id m3=$merge_id

wait "$ref_small_pid" || { bad "plain mpirun run of the small job"; show "$W/small-ref.log"; }

r1=$(wj "$a1" 120); rm1=$(wj "$m1" 60)
check "(1) 4 shard tasks completed: ${r1//$'\n'/, }" tasks_are "$r1" 4 "COMPLETED 0:0" ||
    for i in 1 2 3 4; do show "$W/sweep/part-$i-of-4.log"; done
check "(1) merge job completed: $rm1" test "$rm1" = "$m1 COMPLETED 0:0" || show "$W/sweep/merge.log"
check "(1) merged file equals a plain mpirun run" compare "$W/small-ref.h5" "$W/sweep/small.h5"
check "(1) merge log shows the results table" grep -q '^point ' "$W/sweep/merge.log"
check "(1) 2 ranks per shard under srun" grep -q '2 task(s) on .* launcher srun' "$W/sweep/part-1-of-4.log"
# A finished shard that runs again (a requeue after a node failure, a resubmission)
# keeps its part instead of starting afresh.
sum1=$(md5sum < "$W/sweep/part-1-of-4.h5")
a1b=$(sbatch --parsable --array=1 "$W/sweep/shard.sbatch"); a1b=${a1b%%;*}
r1b=$(wj "$a1b" 60)
kept() {
    [ "$r1b" = "${a1b}_1 COMPLETED 0:0" ] && grep -q 'part-1-of-4.h5 is already complete; nothing to do' \
        "$W/sweep/part-1-of-4.log" && [ "$(md5sum < "$W/sweep/part-1-of-4.h5")" = "$sum1" ]
}
check "(1) a finished shard submitted again keeps its part" kept

r2=$(wj "$a2" 120); rm2=$(wj "$m2" 60)
check "(2) mpirun shard tasks completed: ${r2//$'\n'/, }" tasks_are "$r2" 2 "COMPLETED 0:0" ||
    for i in 1 2; do show "$W/mpirun/part-$i-of-2.log"; done
check "(2) merge job completed: $rm2" test "$rm2" = "$m2 COMPLETED 0:0" || show "$W/mpirun/merge.log"
check "(2) merged file (--output) equals a plain mpirun run" compare "$W/small-ref.h5" "$W/mpirun-merged.h5"

r3=$(wj "$a3" 60); rm3=$(wj "$m3" 60)
check "(3) every shard task failed: ${r3//$'\n'/, }" tasks_are "$r3" 2 "FAILED 2:0"
check "(3) merge job did not run: $rm3" test "$rm3" = "$m3 CANCELLED 0:0" -a ! -e "$W/broken/merge.log"
check "(3) no merged file" test ! -e "$W/broken/broken.h5"
err_visible() {
    local i
    for i in 1 2; do
        grep -q "lbmc: error: .*broken.yaml:[0-9]*: system: 'lamda' is not a key" "$W/broken/part-$i-of-2.log" &&
            grep -q 'FAILED: lbmc exited with status 2' "$W/broken/part-$i-of-2.log" || return 1
    done
}
check "(3) lbmc's error and the failure are in each part's log" err_visible || show "$W/broken/part-1-of-2.log"

# (3) continued: the README's recovery by hand: fix the job, rerun the shards with
# the rendered script, merge after them.
sed -i 's/^  lamda:/  lambda:/' "$W/broken/broken.yaml"
a3b=$(sbatch --parsable --array=1-2 "$W/broken/shard.sbatch"); a3b=${a3b%%;*}
m3b=$(sbatch --parsable --dependency="afterok:$a3b" "$W/broken/merge.sbatch"); m3b=${m3b%%;*}
r3b=$(wj "$a3b" 60); rm3b=$(wj "$m3b" 60)
check "(3) rerun by hand: sbatch --array=1-2 RUNDIR/shard.sbatch: ${r3b//$'\n'/, }" tasks_are "$r3b" 2 "COMPLETED 0:0"
check "(3) merge by hand: $rm3b" test "$rm3b" = "$m3b COMPLETED 0:0"
check "(3) merged file equals a plain mpirun run" compare "$W/small-ref.h5" "$W/broken/broken.h5"

# ---- (4) time limit
if wait "$calib_pid"; then
    unit=$(/usr/bin/python3 -c "import h5py, numpy as np; print(float(np.nanmean(h5py.File('$W/calib.h5')['replicas/cpu_seconds'][()])))")
    reps=$(/usr/bin/python3 -c "import math; print(min(400, max(8, math.ceil(65 / max($unit, 1e-3)))))")
    ok "(4) calibration: $unit CPU s per replica of the long point -> $reps replicas (~65 s)"
else
    bad "(4) calibration run"; show "$W/calib.log"; reps=60
fi
tl=$W/timelimit.yaml
tl_job "$reps" > "$tl"
check "(4) submit: 2 shards x 1 rank, --time 1 (USR1 10 s before the limit)" \
    submit timelimit "$tl" --shards 2 --ntasks 1 --time 1 --progress 10
a4=$array_id m4=$merge_id
check "(4) default --signal-seconds for --time 1 is 10" grep -q 'USR1 10s before the limit' <<< "$sub_out"
# The reference takes the CPU the short shard leaves free.
mpirun -np 1 "$LBMC" run "$tl" -o "$W/timelimit-ref.h5" --quiet > "$W/timelimit-ref.log" 2>&1 &
ref_tl_pid=$!
bg_pids+=("$ref_tl_pid")

# ---- (5) while (4) runs: scancel a running shard (TERM: lbmc stops, keeps its
# checkpoint, no requeue, the merge is cancelled), then rerun it by hand as the
# README says: it resumes and the merged file equals a plain run.
tl_job "$(/usr/bin/python3 -c "import math; print(max(4, math.ceil(10 / max(${unit:-1}, 1e-3))))")" |
    sed 's/time: \[12000, 100\]/time: 12000/' > "$W/cancel.yaml"
check "(5) submit: 1 shard, to be cancelled" submit cancel "$W/cancel.yaml" --shards 1 --ntasks 1 --time 5 --progress 1
a5=$array_id m5=$merge_id
mpirun -np 1 "$LBMC" run "$W/cancel.yaml" -o "$W/cancel-ref.h5" --quiet > "$W/cancel-ref.log" 2>&1 &
ref_cancel_pid=$!
bg_pids+=("$ref_cancel_pid")
log5=$W/cancel/part-1-of-1.log
for _ in $(seq 600); do grep -q 'lbmc run: [1-9][0-9]* units done' "$log5" 2>/dev/null && break; sleep 0.1; done
scancel "${a5}_1"
r5=$(wj "$a5" 60); rm5=$(wj "$m5" 60)
cancelled() {
    [ "$r5" = "${a5}_1 CANCELLED 0:0" ] && [ "$rm5" = "$m5 CANCELLED 0:0" ] &&
        grep -q 'TERM: stopping lbmc' "$log5" && grep -q 'stopped by a signal (checkpoint [0-9]* bytes kept)' "$log5" &&
        ! grep -q requeueing "$log5" && [ -s "$W/cancel/part-1-of-1.h5.ckpt" ] && [ ! -e "$W/cancel/cancel.h5" ]
}
check "(5) scancel: task and merge CANCELLED, checkpoint kept, no requeue ($r5; $rm5)" cancelled || show "$log5"
a5b=$(sbatch --parsable --array=1 "$W/cancel/shard.sbatch"); a5b=${a5b%%;*}
m5b=$(sbatch --parsable --dependency="afterok:$a5b" "$W/cancel/merge.sbatch"); m5b=${m5b%%;*}
r5b=$(wj "$a5b" 300); rm5b=$(wj "$m5b" 60)
resumed() {
    [ "$r5b" = "${a5b}_1 COMPLETED 0:0" ] && [ "$rm5b" = "$m5b COMPLETED 0:0" ] &&
        grep -q 'resuming from' "$log5" && is_complete "$W/cancel/cancel.h5"
}
check "(5) rerun by hand resumes from the checkpoint and completes ($r5b; $rm5b)" resumed || show "$log5"
if wait "$ref_cancel_pid"; then
    check "(5) merged file equals a plain mpirun run" compare "$W/cancel-ref.h5" "$W/cancel/cancel.h5"
else
    bad "(5) plain mpirun run of the cancelled job"; show "$W/cancel-ref.log"
fi

r4=$(wj "$a4" 900); rm4=$(wj "$m4" 120)
log4=$W/timelimit/part-1-of-2.log
states=$(jobcomp_states "$a4" 1 | tr '\n' ' ')
echo "    shard 1 jobcomp records: $states"
check "(4) shard tasks completed: ${r4//$'\n'/, }" tasks_are "$r4" 2 "COMPLETED 0:0" || show "$log4"
requeued() { # jobcomp: >= 1 requeued record (PENDING) before the final COMPLETED
    [[ $states =~ ^(PENDING )+COMPLETED\ $ ]]
}
check "(4) shard 1 was requeued (jobcomp: $states)" requeued
attempts() {
    grep -q 'USR1: stopping lbmc to checkpoint' "$log4" && grep -q 'requeueing' "$log4" &&
        grep -q 'attempt 2 (SLURM_RESTART_COUNT=1)' "$log4" && grep -q 'resuming from' "$log4" &&
        grep -q 'finished: ' "$log4"
}
check "(4) its log shows USR1, checkpoint, requeue, attempt 2 resuming, finish" attempts || show "$log4"
echo "    shard 1: $(grep -c 'requeueing' "$log4") requeue(s):"
grep -E '^\[[^]]*\] shard 1/2: (job|USR1|checkpointed|finished)' "$log4" | sed -E 's/^\[[0-9-]+ ([0-9:]+)\] shard 1\/2: /      \1 /; s/ \(id [0-9]+\)//; s/, 1 task.*//'

check "(4) shard 2 ran once" test "$(jobcomp_states "$a4" 2 | tr '\n' ' ')" = "COMPLETED "
check "(4) merge job completed: $rm4" test "$rm4" = "$m4 COMPLETED 0:0" || show "$W/timelimit/merge.log"
done_clean() { is_complete "$W/timelimit/timelimit.h5" && [ ! -e "$W/timelimit/part-1-of-2.h5.ckpt" ]; }
check "(4) merged file is complete, no checkpoint left" done_clean
if wait "$ref_tl_pid"; then
    check "(4) merged file equals a plain mpirun run" compare "$W/timelimit-ref.h5" "$W/timelimit/timelimit.h5"
else
    bad "(4) plain mpirun run of the time-limit job"; show "$W/timelimit-ref.log"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
