#!/usr/bin/env bash
# A run killed with SIGKILL half way, started again with --resume, recomputes only what
# was missing and gives the same results as an uninterrupted run. A run stopped with
# SIGUSR1 writes its finished points (complete = 0), exits 3, and resumes the same way.
. "$(dirname "$0")/lib.sh"
job="$WORK/long.yaml"
# about 6 s of simulation on 2 cores, in 24 units
sed -e 's/n: \[10, 20, 50\]/n: [200, 500, 1000]/' -e 's/time: 400/time: 6000/' -e 's/replicas: 3/replicas: 4/' \
  "$HERE/small.yaml" >"$job"
check "reference run" mpi 2 run "$job" -o "$WORK/ref.h5" --quiet

records() { # checkpoint size in bytes (0 if absent)
  stat -c %s "$1" 2>/dev/null || echo 0
}
# SIGKILL: start, wait until the checkpoint holds some records, kill everything.
(exec mpirun --oversubscribe -np 2 "$LBMC" run "$job" -o "$WORK/killed.h5" --quiet) &
pid=$!
header=$(( $(wc -c <"$job") + 40 )) # checkpoint header; each record is a few hundred bytes
for _ in $(seq 600); do
  [ "$(records "$WORK/killed.h5.ckpt")" -gt $((header + 200)) ] && break
  sleep 0.05
done
pkill -KILL -P "$pid" 2>/dev/null # the ranks, then mpirun
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
check "killed run left a checkpoint and no results" test -s "$WORK/killed.h5.ckpt" -a ! -e "$WORK/killed.h5"
refuses_restart() { # without --resume: exit 2, a message saying to resume, nothing written
  local out rc
  out=$("$LBMC" run "$job" -o "$WORK/killed.h5" --quiet 2>&1)
  rc=$?
  [ "$rc" -eq 2 ] && echo "$out" | grep -q 'continue it with --resume' && [ ! -e "$WORK/killed.h5" ]
}
check "without --resume the run refuses to start over" refuses_restart
check "resume after SIGKILL" mpi 2 run "$job" -o "$WORK/killed.h5" --resume --quiet
check "resumed equals uninterrupted" compare "$WORK/ref.h5" "$WORK/killed.h5"

# SIGUSR1: graceful stop with partial results.
(exec mpirun --oversubscribe -np 2 "$LBMC" run "$job" -o "$WORK/stopped.h5" --quiet) &
pid=$!
for _ in $(seq 600); do
  [ "$(records "$WORK/stopped.h5.ckpt")" -gt $((header + 1000)) ] && break
  sleep 0.05
done
kill -USR1 "$pid"
wait "$pid"
rc=$?
check "SIGUSR1 exits with status 3" test "$rc" -eq 3
check "partial results are marked incomplete" /usr/bin/python3 -c "import h5py,sys; sys.exit(int(h5py.File('$WORK/stopped.h5')['/'].attrs['complete'] != 0))"
check "resume after SIGUSR1" mpi 1 run "$job" -o "$WORK/stopped.h5" --resume --quiet
check "resumed equals uninterrupted" compare "$WORK/ref.h5" "$WORK/stopped.h5"
finish
