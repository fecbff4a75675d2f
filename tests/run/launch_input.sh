#!/usr/bin/env bash
# lbmc run's start-up checks and numbers on its command line:
#  - Slurm's srun without PMI (srun -n 4 --mpi=none): Slurm says the step has several
#    tasks, MPI one rank each; lbmc refuses before computing (exit 2, task 0 prints
#    the remedy --mpi=pmix, the other tasks nothing; no results or checkpoint). Both
#    checks: before MPI_Init (no PMI variables: what Open MPI 4 would abort on) and
#    after it (a singleton world: what Open MPI 5 starts silently). A batch script's
#    environment (SLURM_NTASKS, no step) and a real MPI world of the step's size run.
#    The real srun is in tests/slurm/arrays.sh; here Slurm's variables are set by hand.
#  - --shard and --progress read by the one number reader (whole text, range,
#    underflow); lbmc info says "1 MPI rank" and reads --metrics indices whole.
#  - the README's note on mpirun as root and with more ranks than cores.
. "$(dirname "$0")/lib.sh"
cp "$HERE/small.yaml" "$WORK/job.yaml"
cd "$WORK" || exit 1
# refuses STATUS PATTERN COMMAND...: exit STATUS, stderr matches PATTERN (or is
# empty for PATTERN ''), nothing written
refuses() {
  local want=$1 pat=$2 rc
  shift 2
  "$@" >"$WORK/out" 2>"$WORK/err"
  rc=$?
  if [ "$rc" -eq "$want" ] && { [ -z "$pat" ] && [ ! -s "$WORK/err" ] || grep -q -- "$pat" "$WORK/err"; } &&
    [ ! -e "$WORK/x.h5" ] && [ ! -e "$WORK/x.h5.ckpt" ]; then
    return 0
  fi
  echo "  exit $rc (want $want): $(cat "$WORK/err")"
  return 1
}
msg="Slurm started this step with 4 tasks (SLURM_STEP_NUM_TASKS=4) but MPI sees one rank per task"
check "srun --mpi=none, task 0: refused before MPI_Init, names --mpi=pmix" \
  refuses 2 "$msg.*nothing was computed. Launch with srun --mpi=pmix" \
  env SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=4 SLURM_PROCID=0 "$LBMC" run job.yaml -o x.h5
check "srun --mpi=none, task 3: refused silently (one message per step)" \
  refuses 2 '' env SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=4 SLURM_PROCID=3 "$LBMC" run job.yaml -o x.h5
check "no SLURM_STEP_NUM_TASKS (old Slurm): SLURM_NTASKS of the step" \
  refuses 2 "with 3 tasks (SLURM_NTASKS=3)" env SLURM_STEP_ID=0 SLURM_NTASKS=3 "$LBMC" run job.yaml -o x.h5
# A PMI variable that MPI does not use: MPI_Init starts a singleton (as Open MPI 5
# does under srun --mpi=none); the check after MPI_Init refuses it.
check "a singleton MPI world in a 4-task step: refused after MPI_Init" \
  refuses 2 "$msg" env SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=4 OMPI_COMM_WORLD_LBMC_TEST=1 \
  "$LBMC" run job.yaml -o x.h5
check "a batch script's environment (SLURM_NTASKS=3, no step): one process runs" \
  env SLURM_NTASKS=3 SLURM_PROCID=0 "$LBMC" run job.yaml -o one.h5 --quiet
check "a 2-task step with 2 MPI ranks runs" \
  mpirun --oversubscribe -np 2 -x SLURM_STEP_ID=0 -x SLURM_STEP_NUM_TASKS=2 "$LBMC" run job.yaml -o two.h5 --quiet
check "a 1-task step runs" env SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=1 "$LBMC" run job.yaml -o x1.h5 --quiet
check "the same results" compare one.h5 two.h5
rm -f x1.h5

# numbers on the command line
check "--shard 1/2x" refuses 2 "--shard: '1/2x' is not allowed; write I/K" "$LBMC" run job.yaml -o x.h5 --shard 1/2x
check "--shard 1/99999999999999999999" refuses 2 "--shard: '1/99999999999999999999' is not allowed" \
  "$LBMC" run job.yaml -o x.h5 --shard 1/99999999999999999999
check "--progress 1e-400" refuses 2 "--progress: '1e-400' is not allowed; allowed: auto, always, never, or the seconds between two progress lines (a number >= 0); as a number: '1e-400' is not allowed; a number is 0 or of magnitude" \
  "$LBMC" run job.yaml -o x.h5 --progress 1e-400
check "lbmc info: 1 MPI rank" sh -c "'$LBMC' info one.h5 | head -n 1 | grep -q ', 1 MPI rank, '"
check "lbmc info: 2 MPI ranks" sh -c "'$LBMC' info two.h5 | head -n 1 | grep -q ', 2 MPI ranks, '"
check "lbmc info --metrics 'utilization[1]x'" refuses 2 "--metrics: 'utilization\[1\]x' is not a metric" \
  "$LBMC" info one.h5 --metrics 'utilization[1]x'
check "lbmc info --metrics 'utilization[99999999999999999999]'" refuses 2 "is not allowed; utilization has one value per pool" \
  "$LBMC" info one.h5 --metrics 'utilization[99999999999999999999]'
check "lbmc info --metrics 'utilization[2]'" sh -c "'$LBMC' info one.h5 --metrics 'utilization[2]' >/dev/null"

# The README's note on running as root and oversubscribing: it is
# there, and its spellings start more ranks than cores on this Open MPI without the
# oversubscription setting the tests otherwise export.
np=$(($(nproc) + 2))
readme_note() {
  local r=$SRC/README.md
  grep -q 'OMPI_ALLOW_RUN_AS_ROOT=1' "$r" && grep -q 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1' "$r" &&
    grep -q -- '--oversubscribe' "$r" && grep -q -- '--map-by :OVERSUBSCRIBE' "$r"
}
check "README: the root variables, --oversubscribe and --map-by :OVERSUBSCRIBE" readme_note
for spelling in "--map-by :OVERSUBSCRIBE" --oversubscribe; do
  # shellcheck disable=SC2086
  check "mpirun $spelling -np $np (more ranks than cores) as the README says" \
    env -u OMPI_MCA_rmaps_base_oversubscribe OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun $spelling -np "$np" "$LBMC" run job.yaml -o "np$np.h5" --quiet
done
check "... the same results" compare one.h5 "np$np.h5"
finish
