#!/usr/bin/env bash
# Smoke test of the local Slurm test cluster (tests/slurm/cluster.sh):
#   (a) a batch job, (b) a 3-task array, (c) afterok dependency on an array
#   with one failing task (dependent must not run), (d) requeue from a USR1
#   trap sent by --signal=B:USR1@50 (job must run twice, then complete),
#   (e) MPI hello world with `srun --mpi=pmix` and with `mpirun`.
# Fails (never skips) if Slurm cannot start. Prints "N passed, N failed".
# The cluster is stopped on exit. Takes ~40 s: (d) waits for slurmctld's
# 30 s time-limit tick, so it is submitted early and overlaps (a)-(c).
# shellcheck disable=SC1091,SC2016  # env.sh is generated; job scripts use single quotes
set -uo pipefail

# shellcheck source=tests/slurm/cluster_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/cluster_lib.sh"

# Build the MPI program while the cluster starts.
cat > "$W/hello.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("hello rank %d of %d\n", rank, size);
    MPI_Finalize();
    return 0;
}
EOF
mpicc -o "$W/hello" "$W/hello.c" > "$W/mpicc.log" 2>&1 &
cc_pid=$!

# ---- start (must not skip: a failed start is a failed test)
if ! "$C" start "$D" > "$W/start.log"; then
    bad "cluster start"; echo "0 passed, 1 failed"; exit 1
fi
. "$D/env.sh"
ok "cluster start ($SLURM_CONF)"
cd "$W" || exit 1

# ---- (e) MPI first: it needs both CPUs.
if wait "$cc_pid"; then
    cat > mpi.sh <<'EOF'
#!/bin/bash
echo "== srun"
srun --mpi=pmix -n 2 ./hello
echo "srun rc=$?"
echo "== mpirun"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun ./hello
echo "mpirun rc=$?"
EOF
    je=$(sbatch --parsable -J mpi -n 2 -o mpi.out mpi.sh)
    re=$(wj "$je" 60)
    mpi_ok() {
        [[ $re == "$je COMPLETED 0:0" ]] &&
        [ "$(sed -n '/== srun/,/srun rc=0/p' mpi.out | grep -Ec 'hello rank [01] of 2')" = 2 ] &&
        [ "$(sed -n '/== mpirun/,/mpirun rc=0/p' mpi.out | grep -Ec 'hello rank [01] of 2')" = 2 ]
    }
    check "(e) MPI hello: srun --mpi=pmix -n 2 and mpirun in one allocation" mpi_ok || show mpi.out
else
    bad "(e) mpicc"; show mpicc.log
fi

# ---- (d) requeue on USR1 before the time limit; submitted now so that its
# wait for the signal (slurmctld checks limits every 30 s) overlaps (a)-(c).
cat > requeue.sh <<'EOF'
#!/bin/bash
echo "start restart=${SLURM_RESTART_COUNT-unset} t=$(date +%s)" >> requeue.marker
if [ "${SLURM_RESTART_COUNT:-0}" -ge 1 ]; then echo "done t=$(date +%s)" >> requeue.marker; exit 0; fi
# bash runs traps only between commands: sleep in the background and wait.
trap 'echo "usr1 t=$(date +%s)" >> requeue.marker; scontrol requeue $SLURM_JOB_ID; exit 0' USR1
sleep 120 & wait
EOF
jd=$(sbatch --parsable -J requeue -o requeue.out --time=00:01:00 --signal=B:USR1@50 --requeue requeue.sh)

# ---- (a) a single batch job
ja=$(sbatch --parsable -J single -o single.out --wrap='echo "single on $SLURMD_NODENAME"')
ra=$(wj "$ja" 30)
check "(a) batch job: $ra" test "$ra" = "$ja COMPLETED 0:0" -a -s single.out

# ---- (b) 3-task array, all succeed
jb=$(sbatch --parsable -J arr -o 'arr_%a.out' --array=0-2 --wrap='echo "task $SLURM_ARRAY_TASK_ID"')
rb=$(wj "$jb" 30)
check "(b) array: ${rb//$'\n'/ }" test "$rb" = "$(printf '%s_%d COMPLETED 0:0\n' "$jb" 0 "$jb" 1 "$jb" 2)" \
    -a "$(cat arr_*.out | sort | tr '\n' ' ')" = "task 0 task 1 task 2 "

# ---- (c) afterok on an array where task 1 fails: the dependent is cancelled
jc=$(sbatch --parsable -J arrfail -o /dev/null --array=0-2 --wrap='[ "$SLURM_ARRAY_TASK_ID" != 1 ]')
jc2=$(sbatch --parsable -J dependent -o dep.out --dependency="afterok:$jc" --kill-on-invalid-dep=yes \
    --wrap='touch dep.ran')
rc=$(wj "$jc" 30)
rc2=$(wj "$jc2" 30)
check "(c) failing array: ${rc//$'\n'/ }" test "$rc" = "$(printf '%s\n' "${jc}_0 COMPLETED 0:0" "${jc}_1 FAILED 1:0" "${jc}_2 COMPLETED 0:0")"
check "(c) dependent did not run: $rc2" test "$rc2" = "$jc2 CANCELLED 0:0" -a ! -e dep.ran

# ---- (d) results
rd=$(wj "$jd" 150)
requeue_ok() {
    [ "$rd" = "$jd COMPLETED 0:0" ] &&
    [ "$(grep -c '^start' requeue.marker)" = 2 ] &&
    grep -q '^start restart=unset' requeue.marker &&
    grep -q '^usr1' requeue.marker &&
    grep -q '^start restart=1 ' requeue.marker &&
    grep -q '^done' requeue.marker &&
    [ "$(grep -c "^JobId=$jd " "$D/jobcomp.txt")" = 2 ]
}
check "(d) USR1 -> requeue -> ran twice, completed: $rd" requeue_ok
show requeue.marker

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
