#!/usr/bin/env bash
# Bad job files: every tests/job/bad/*.yaml is one mistake. Its comments say what is
# wrong ("# wrong: ...") and which message fragments lbmc-job-check must print
# ("# expect: ...", matched as fixed strings, '@' standing for the file's path, so
# "# expect: @:7: system.lambda: -1 is not allowed" names file, line, key and value).
# Each must exit with status 2 (or the status of a "# status: N" line) and print
# exactly one "lbmc: error:" line. Usage: bad_jobs.sh LBMC_JOB_CHECK
set -u
CHECK=${1:?usage: bad_jobs.sh LBMC_JOB_CHECK}
cd "$(dirname "$0")" || exit 1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check FILE STATUS FRAGMENT...: run the driver on FILE and judge its stderr.
check() {
  local file=$1 want=$2 rc frag problems=""
  shift 2
  "$CHECK" "$file" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq "$want" ] || problems="exit $rc, want $want; "
  [ "$(grep -c '^lbmc: error:' "$tmp/err")" -eq 1 ] || problems+="not exactly one error line; "
  [ "$#" -gt 0 ] || problems+="no '# expect:' line; "
  for frag in "$@"; do
    grep -qF -- "${frag//@/$file}" "$tmp/err" || problems+="missing: ${frag//@/$file}; "
  done
  if [ -z "$problems" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $file: $problems"
    sed 's/^/    /' "$tmp/err" | head -5
  fi
}

for f in bad/*.yaml; do
  status=$(grep -a '^# status: ' "$f" | head -1 | sed 's/^# status: //')
  mapfile -t frags < <(grep -a '^# expect: ' "$f" | sed 's/^# expect: //')
  check "$f" "${status:-2}" "${frags[@]}"
done

# Cases that cannot carry their own comment.
: >"$tmp/zero.yaml" # a file of 0 bytes
check "$tmp/zero.yaml" 2 "@: the file is empty (no YAML content)"
check "$tmp/no-such-file.yaml" 1 "@: cannot read the job file: No such file or directory"

echo "bad job files: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
