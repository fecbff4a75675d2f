#!/usr/bin/env bash
# lbmc run on every bad job file of tests/job/bad/: the exit status the file states
# (default 2), the expected messages, one error line from rank 0 even with 2 ranks,
# and nothing written: no results file, no checkpoint.
. "$(dirname "$0")/lib.sh"
cd "$SRC/tests/job" || exit 1
runs_clean() { # runs_clean FILE STATUS NP FRAGMENTS...
  local file=$1 want=$2 np=$3 rc frag
  shift 3
  if [ "$np" -gt 1 ]; then
    mpirun --oversubscribe -np "$np" "$LBMC" run "$file" -o "$WORK/out.h5" --quiet >"$WORK/out" 2>"$WORK/err"
  else
    "$LBMC" run "$file" -o "$WORK/out.h5" --quiet >"$WORK/out" 2>"$WORK/err"
  fi
  rc=$?
  [ "$rc" -eq "$want" ] || { echo "  exit $rc, want $want"; return 1; }
  [ "$(grep -c '^lbmc: error:' "$WORK/err")" -eq 1 ] || { echo "  not exactly one error line"; cat "$WORK/err"; return 1; }
  for frag in "$@"; do
    grep -qF -- "${frag//@/$file}" "$WORK/err" || { echo "  missing: ${frag//@/$file}"; return 1; }
  done
  [ ! -e "$WORK/out.h5" ] && [ ! -e "$WORK/out.h5.ckpt" ] || { echo "  something was written"; return 1; }
}
for f in bad/*.yaml; do
  status=$(grep -a '^# status: ' "$f" | head -1 | sed 's/^# status: //')
  mapfile -t frags < <(grep -a '^# expect: ' "$f" | sed 's/^# expect: //')
  check "lbmc run $f: exit ${status:-2}, message, nothing written" runs_clean "$f" "${status:-2}" 1 "${frags[@]}"
done
# under MPI: rank 0 reports once, every rank exits
f=bad/lambda_negative.yaml
mapfile -t frags < <(grep -a '^# expect: ' "$f" | sed 's/^# expect: //')
check "mpirun -np 2 lbmc run $f: one message, exit 2" runs_clean "$f" 2 2 "${frags[@]}"
finish
