#!/usr/bin/env bash
# Saved fuzzer inputs of the job-file reader through lbmc-job-check: each must give a
# clean verdict, exit 0 with nothing on stderr or exit 2 with exactly one
# "lbmc: error:" line (never a crash, a hang guard aside). Usage:
# check_inputs.sh LBMC_JOB_CHECK DIR
set -u
CHECK=${1:?usage: check_inputs.sh LBMC_JOB_CHECK DIR}
DIR=${2:?usage: check_inputs.sh LBMC_JOB_CHECK DIR}
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$DIR"/*; do
  [ -f "$f" ] || continue
  "$CHECK" "$f" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  errors=$(grep -c '^lbmc: error:' "$tmp/err")
  if { [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ]; } || { [ "$rc" -eq 2 ] && [ "$errors" -eq 1 ]; }; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $f: exit $rc, $errors error line(s)"
    head -c 600 "$tmp/err" | sed 's/^/    /'
  fi
done
echo "fuzzer inputs through lbmc-job-check: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
