#!/usr/bin/env bash
# Soak test (label soak; not in the default test set, run by hand, see below): a job
# of 3000 work units under mpirun -np 4 on this machine's cores is interrupted at
# random moments, ROUNDS times in all, by one of
#   USR1 to mpirun (forwarded: lbmc checkpoints and exits 3),
#   TERM to mpirun (mpirun stops the ranks itself),
#   kill -9 of one rank (mpirun aborts the others),
#   kill -9 of mpirun and every rank at once (a node failure),
# and resumed with --resume each time. A campaign ends when a run completes; its file
# must be bit-identical to an uninterrupted run (tests/run/compare.py), and the
# campaigns go on until ROUNDS interruptions are done. After every round no process
# of it may be left (each round runs in its own session) and an existing results file
# must read as an lbmc file; at the end no temporary (OUT.h5.tmp.*) may be left.
# Open MPI 4.1's mpirun sometimes hangs when a rank is killed while starting: such a
# round is ended 5 x the run's length + 60 s after the signal, counted and reported,
# and the soak goes on (the resume after it must still give the same file).
#
#   LBMC=build/src/lbmc LBMC_SOURCE_DIR=. tests/run/soak.sh [ROUNDS [SEED]]
#   cmake -S . -B build -DLBMC_SOAK=ON && ctest --test-dir build -L soak
#
# ROUNDS defaults to 50, SEED (of the random moments and kinds) to 1. Prints one line
# per round and a summary: rounds by kind, campaigns, resumes, comparisons, orphans,
# temporaries, wall time. Takes about 5-10 minutes on 2 cores.
# shellcheck source=tests/run/lib.sh
. "$(dirname "$0")/lib.sh"
rounds=${1:-${SOAK_ROUNDS:-50}}
RANDOM=${2:-${SOAK_SEED:-1}}
np=4
job=$WORK/soak.yaml
out=$WORK/soak.h5
cat >"$job" <<'EOF'
# soak: 6 points x 500 replicas = 3000 short work units
system:
  n: [20, 50]
  lambda: 0.8
  pools:
    - {beta: 0.5, mu: 2}
    - {beta: 0.5, mu: 1/2, buffer: 5}
policy: [pull, jsq(2), random]
run:
  replicas: 500
  warmup: 10
  time: 100
  batches: 10
  seed: 13
  tail_k: 4
EOF

t0=$(date +%s.%N)
check "uninterrupted reference run (-np $np)" mpi $np run "$job" -o "$WORK/ref.h5" --quiet
ref_seconds=$(echo "$(date +%s.%N) - $t0" | bc)
echo "reference: $ref_seconds s wall"
# Interrupt within the first 35% of a run's length (startup included): a campaign
# takes several rounds, and several campaigns complete.
max_ms=$(echo "$ref_seconds * 350 / 1" | bc)
[ "$max_ms" -ge 300 ] || max_ms=300

# session_procs SID: pids of the processes of session SID (none once all are gone).
session_procs() { ps -e -o pid=,sid= | awk -v s="$1" '$2 == s { print $1 }'; }
# wait_gone SID: wait (up to 30 s) until session SID is empty; 1 if not.
wait_gone() {
  for _ in $(seq 300); do
    [ -z "$(session_procs "$1")" ] && return 0
    sleep 0.1
  done
  return 1
}

declare -A kinds=()
campaigns=0 interrupted=0 completed=0 compared=0 orphans=0 bad_files=0 round=0 resumed=0 hangs=0
# a round longer than this is a hang (a resume never takes longer than a whole run)
hang_limit=$(echo "($ref_seconds * 5 + 60) / 1" | bc)
streak=0 longest=0 # interruptions in the current campaign, and the most in one
while [ "$interrupted" -lt "$rounds" ] || [ -e "$out.ckpt" ]; do
  round=$((round + 1))
  resume=--resume
  if [ -e "$out.ckpt" ]; then
    resumed=$((resumed + 1))
  else
    rm -f "$out"
    campaigns=$((campaigns + 1)) streak=0
  fi
  setsid mpirun --oversubscribe -np $np "$LBMC" run "$job" -o "$out" $resume --quiet \
    >"$WORK/round.log" 2>&1 &
  pid=$!   # setsid forks only when it is a group leader; here $! is mpirun (sid = pid)
  kind=none
  if [ "$interrupted" -lt "$rounds" ]; then
    ms=$((RANDOM % max_ms + 50))
    sleep "$(echo "scale=3; $ms / 1000" | bc)"
    if kill -0 "$pid" 2>/dev/null; then
      case $((RANDOM % 4)) in
        0) kind=usr1 && kill -USR1 "$pid" ;;
        1) kind=term && kill -TERM "$pid" ;;
        2) kind=kill-rank
           mapfile -t ranks < <(pgrep -s "$pid" -x lbmc)
           if [ ${#ranks[@]} -gt 0 ]; then kill -KILL "${ranks[RANDOM % ${#ranks[@]}]}"; else kill -KILL "$pid"; fi ;;
        3) kind=kill-all # every process of the session (the ranks have their own groups)
           mapfile -t all < <(session_procs "$pid")
           kill -KILL "${all[@]}" 2>/dev/null ;;
      esac
    fi
  fi
  # Open MPI 4.1's mpirun can hang for good when a rank is killed while it starts
  # (its ranks gone, "PMIX ERROR: UNREACHABLE"): after hang_limit seconds the
  # round's session is killed and the hang counted (an Open MPI fault, not lbmc's).
  # (stderr off: bash would report "Killed" as it reaps mpirun)
  {
    for _ in $(seq $((hang_limit * 10))); do
      kill -0 "$pid" || break
      sleep 0.1
    done
    if kill -0 "$pid"; then
      hangs=$((hangs + 1))
      echo "  round $round: mpirun still running ${hang_limit} s after the signal ($kind); killing its session"
      tail -n 4 "$WORK/round.log" | sed 's/^/    /'
      mapfile -t all < <(session_procs "$pid")
      kill -KILL "${all[@]}"
    fi
    wait "$pid"
    rc=$?
  } 2>/dev/null
  if ! wait_gone "$pid"; then
    orphans=$((orphans + 1))
    echo "  round $round: processes left: $(session_procs "$pid" | tr '\n' ' ')"
    for p in $(session_procs "$pid"); do kill -KILL "$p" 2>/dev/null; done
  fi
  if [ -e "$out" ] && ! "$LBMC" info "$out" >/dev/null 2>&1; then
    bad_files=$((bad_files + 1))
    echo "  round $round: $out does not read as an lbmc results file"
  fi
  if [ "$kind" != none ] && [ "$rc" -ne 0 ]; then
    interrupted=$((interrupted + 1)) streak=$((streak + 1))
    kinds[$kind]=$((${kinds[$kind]:-0} + 1))
    [ "$streak" -le "$longest" ] || longest=$streak
  fi
  printf 'round %3d: %-9s exit %3d%s%s\n' "$round" "$kind" "$rc" \
    "$([ -e "$out.ckpt" ] && echo ", checkpoint $(stat -c %s "$out.ckpt") bytes")" \
    "$(find "$WORK" -maxdepth 1 -name '*.tmp.*' -printf ', temporary %f')"
  if [ "$rc" -eq 0 ]; then
    completed=$((completed + 1))
    if [ -e "$out.ckpt" ]; then
      echo "  round $round: exit 0 but the checkpoint is still there"
      bad_files=$((bad_files + 1))
      rm -f "$out.ckpt"
    fi
    if compare "$WORK/ref.h5" "$out" >"$WORK/compare.log" 2>&1; then
      compared=$((compared + 1))
    else
      cat "$WORK/compare.log"
      check "campaign $campaigns: resumed file equals the uninterrupted run" false
    fi
  elif [ "$rc" -ne 3 ] && [ "$kind" = none ]; then
    cat "$WORK/round.log"
    check "round $round: an uninterrupted resume completes" false
    rm -f "$out.ckpt"
  fi
done
temporaries=$(find "$WORK" -name '*.tmp.*' | wc -l)
elapsed=$(echo "$(date +%s.%N) - $t0" | bc)
summary="$interrupted interruptions in $round rounds ($(for k in "${!kinds[@]}"; do printf '%s %s, ' "$k" "${kinds[$k]}"; done | sed 's/, $//')), $campaigns campaigns (at most $longest interruptions in one), $resumed resumes from a checkpoint, $completed completed runs, $compared bit-identical to the reference, $orphans rounds with processes left, $hangs mpirun hangs, $bad_files unreadable or inconsistent files, $temporaries temporaries left, $elapsed s"
echo "soak: $summary"
check "every completed campaign equals the uninterrupted run" test "$compared" -eq "$completed" -a "$completed" -ge 1
check "no process left after any round" test "$orphans" -eq 0
check "every results file read as an lbmc file" test "$bad_files" -eq 0
check "no temporary left" test "$temporaries" -eq 0
finish
