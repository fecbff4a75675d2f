#!/usr/bin/env bash
# A frozen rank (SIGSTOP) under mpirun -np 3: rank 0 notices it (silent longer than
# --stall and 10 times its unit's expected time), warns naming its rank, host and pid,
# gives its unit to another rank, and the results are bit-identical to a run on one rank.
#   1. the rank stays stopped: the results are written complete, then the job ends with
#      MPI_Abort and a message saying why (a stopped rank cannot take part in the end);
#   2. the rank is continued after the warning: it answers again, its late result is
#      ignored, and the job ends normally.
#   3. the rank is slowed down (stopped and continued in turn, a few percent of a core) but
#      never silent for --stall: its heartbeats keep it from being presumed frozen.
# Progress never says "ETA 0 s". About a minute and a half of wall time on 2 cores (the
# units must last long enough for the test to find and stop rank 1 while the run is on).
. "$(dirname "$0")/lib.sh"
stopped=""
trap '[ -n "$stopped" ] && kill -CONT $stopped 2>/dev/null; rm -rf "$WORK"' EXIT

cat > "$WORK/live.yaml" <<'EOF'
system:
  n: [1000, 1001, 1002]
  lambda: 0.9
  pools:
    - {beta: 1, mu: 1}
policy: random
run:
  replicas: 8
  warmup: 50
  time: 2000
  seed: 3
EOF
check "reference on 1 rank" "$LBMC" run "$WORK/live.yaml" -o "$WORK/ref.h5" --quiet

rank_pid() { # rank_pid OUT RANK: pid of the lbmc process of that rank writing OUT
  local p
  for p in $(pgrep -f -- "-o $1 "); do
    if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

wait_for() { # wait_for FILE PATTERN PID: until FILE has PATTERN (0) or PID ended (1)
  until grep -q -- "$2" "$1" 2>/dev/null; do
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.2
  done
}

frozen() { # frozen NAME CONTINUE: run on 3 ranks, stop rank 1 after its first units
  local out="$WORK/$1.h5" log="$WORK/$1.log" mp pid
  mpirun --oversubscribe -np 3 "$LBMC" run "$WORK/live.yaml" -o "$out" --progress 0.5 \
    --stall 1 > "$log" 2>&1 &
  mp=$!
  if ! wait_for "$log" " [1-9][0-9]* units done" "$mp" || ! pid=$(rank_pid "$out" 1); then
    echo "FAIL: $1: no rank 1 to stop"; fails=$((fails + 1)); wait "$mp"; return
  fi
  kill -STOP "$pid"
  stopped="$pid"
  if [ "$2" = continue ]; then
    # rank 1's own warning (another rank starved by a loaded machine may be warned of too)
    wait_for "$log" "warning: rank 1 (host [^ ]*, pid $pid) has sent nothing" "$mp"
    kill -CONT "$pid"
    stopped=""
  fi
  wait "$mp"
  echo "exit $?" >> "$log"
  [ -n "$stopped" ] && kill -CONT "$stopped" 2>/dev/null
  stopped=""
  sed 's/^/  | /' "$log" | grep -v "^  | lbmc run: [0-9]* units done" | head -30
  check "$1: exit status 0" grep -qx "exit 0" "$log"
  check "$1: warning names rank 1, its host and pid $pid" \
    grep -q "warning: rank 1 (host [^ ]*, pid $pid) has sent nothing for .* presumed frozen" "$log"
  check "$1: never ETA 0 s" bash -c "! grep -q 'ETA 0 s' '$log'"
  check "$1: results identical to 1 rank" compare "$WORK/ref.h5" "$out"
  check "$1: no checkpoint left" test ! -e "$out.ckpt"
}

cpu_ticks() { # cpu_ticks PID: its user + system CPU time in clock ticks
  awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0
}

slow() { # run on 2 ranks with rank 1 slowed down, not frozen: SIGSTOP 0.5 s, SIGCONT 0.03 s
  # in turn (a few percent of a core, as on a machine loaded far beyond its cores): its units
  # take many times their expected time, but it sends heartbeats while it runs, so rank 0
  # does not take it for frozen. On a loaded machine 0.03 s may give it no CPU at all (it
  # would then be frozen, not slow): each turn lasts until it has had a clock tick of CPU
  # (at most 0.5 s more; none while it only waits for rank 0)
  local out="$WORK/slow.h5" log="$WORK/slow.log" mp pid="" t0
  mpirun --oversubscribe -np 2 "$LBMC" run "$WORK/live.yaml" -o "$out" --progress 0.5 \
    --stall 3 > "$log" 2>&1 &
  mp=$!
  until pid=$(rank_pid "$out" 1); do
    kill -0 "$mp" 2>/dev/null || break
    sleep 0.05
  done
  while [ -n "$pid" ] && kill -0 "$mp" 2>/dev/null; do
    kill -STOP "$pid" 2>/dev/null || break
    stopped="$pid"
    sleep 0.5
    t0=$(cpu_ticks "$pid")
    kill -CONT "$pid" 2>/dev/null
    stopped=""
    sleep 0.03
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      [ "$(cpu_ticks "$pid")" -gt "$t0" ] && break
      sleep 0.05
    done
  done
  wait "$mp"
  echo "exit $?" >> "$log"
  sed 's/^/  | /' "$log" | grep -v "^  | lbmc run: [0-9]* units done" | head -30
  check "slow: rank 1 found and slowed down" test -n "$pid"
  check "slow: exit status 0" grep -qx "exit 0" "$log"
  check "slow: a slow rank is not presumed frozen" bash -c "! grep -q 'presumed frozen' '$log'"
  check "slow: results identical to 1 rank" compare "$WORK/ref.h5" "$out"
}

slow
frozen stays stopped
check "stays: ends with a message naming the frozen rank" \
  grep -q "the results are complete in .*rank 1 on host .* cannot be released: ending the MPI job" \
  "$WORK/stays.log"
frozen back continue
check "back: rank 1 answers again" grep -q "rank 1 (host .*) answers again" "$WORK/back.log"
check "back: no MPI_Abort" bash -c "! grep -q MPI_Abort '$WORK/back.log'"
finish
