#!/usr/bin/env bash
# --progress of lbmc run and lbmc sim: one vocabulary (auto, always, never, or the
# seconds between two lines), read by one reader: both commands take every form, a bad
# value names the flag, the value and what is allowed (exit 2), and the help of both
# commands shows the same forms. A few seconds of CPU. Usage: progress_flag.sh [LBMC]
set -u
LBMC=${1:-${LBMC:-lbmc}}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
check() {
  local what=$1
  shift
  if "$@"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $what"
  fi
}
cat >"$WORK/job.yaml" <<'YAML'
system:
  n: 10
  lambda: 0.5
  pools:
    - {beta: 1, mu: 1}
policy: random
run: {replicas: 2, warmup: 5, time: 50, seed: 3}
YAML
quick=(--n 10 --lambda 0.5 --pools 1:1:inf --time 50 --warmup 5 --replicas 2)
allowed="allowed: auto, always, never, or the seconds between two progress lines (a number >= 0)"

for v in auto always never 0.5 10; do
  rm -f "$WORK/r.h5"
  "$LBMC" run "$WORK/job.yaml" -o "$WORK/r.h5" --progress "$v" >/dev/null 2>"$WORK/run-$v.err"
  check "lbmc run --progress $v: runs (exit 0)" test $? -eq 0
  "$LBMC" sim "${quick[@]}" --progress "$v" >/dev/null 2>"$WORK/sim-$v.err"
  check "lbmc sim --progress $v: runs (exit 0)" test $? -eq 0
done
# never: no progress line on either command (lbmc run's other notes stay: not --quiet)
check "lbmc run --progress never: no progress line" \
  bash -c "! grep -q 'units done' '$WORK/run-never.err'"
check "lbmc run --progress never: still says what it wrote" grep -q "lbmc run: wrote" "$WORK/run-never.err"
check "lbmc sim --progress never: nothing" test ! -s "$WORK/sim-never.err"
# a number on lbmc sim: lines from the start, as always (stderr is not a terminal)
check "lbmc sim --progress 0.5: a progress line with the ETA" grep -q "lbmc sim: replica .*ETA" "$WORK/sim-0.5.err"

for v in sometimes -1 1x ''; do
  "$LBMC" run "$WORK/job.yaml" -o "$WORK/bad.h5" --progress "$v" >/dev/null 2>"$WORK/err"
  rc=$?
  check "lbmc run --progress '$v': exit 2 (got $rc)" test "$rc" -eq 2
  check "lbmc run --progress '$v': names the flag, the value and what is allowed" \
    grep -qF -- "--progress: '$v' is not allowed" "$WORK/err"
  "$LBMC" sim "${quick[@]}" --progress "$v" >/dev/null 2>"$WORK/err"
  rc=$?
  check "lbmc sim --progress '$v': exit 2 (got $rc)" test "$rc" -eq 2
  check "lbmc sim --progress '$v': names the flag, the value and what is allowed" \
    grep -qF -- "--progress: '$v' is not allowed" "$WORK/err"
done
"$LBMC" sim "${quick[@]}" --progress sometimes >/dev/null 2>"$WORK/err"
check "the words and the number are listed as allowed" grep -qF -- "$allowed" "$WORK/err"

# the help of both commands: the same forms
"$LBMC" run --help >"$WORK/run.help" 2>&1
"$LBMC" sim --help >"$WORK/sim.help" 2>&1
for f in run sim; do
  check "lbmc $f --help: --progress WHEN" grep -q -- "--progress WHEN" "$WORK/$f.help"
  check "lbmc $f --help: auto, always, never and SECONDS" \
    bash -c "tr -s ' \n' ' ' <'$WORK/$f.help' | grep -q 'auto.*always.*never.*a number'"
done
# bash completion: the words for both commands; each command's --help listed once
"$LBMC" completion bash >"$WORK/completion"
for f in run sim; do
  check "completion: $f --progress offers auto always never" \
    grep -qF "\"$f --progress\") COMPREPLY=(\$(compgen -W \"auto always never\"" "$WORK/completion"
done
check "completion: run's flags name --help once" \
  bash -c "[ \"\$(grep -o '^ *run) flags=.*' '$WORK/completion' | grep -o -- '--help' | wc -l)\" -eq 1 ]"
echo "progress flag: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
