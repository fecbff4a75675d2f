#!/usr/bin/env bash
# Good job files: lbmc-job-check must accept each tests/job/good/NAME.yaml (exit 0,
# nothing on stderr) and print exactly good/NAME.expected (P, the axes, one line per
# point in grid order). The annotated example of docs/job-files.md must parse too.
# Usage: good_jobs.sh LBMC_JOB_CHECK
# After a deliberate change of the output, LBMC_UPDATE_EXPECTED=1 rewrites the
# .expected files; review the diff before committing it.
set -u
CHECK=${1:?usage: good_jobs.sh LBMC_JOB_CHECK}
HERE=$(cd "$(dirname "$0")" && pwd)
DOC=${LBMC_SOURCE_DIR:-$HERE/../..}/docs/job-files.md
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$HERE/good" || exit 1
for f in *.yaml; do
  want=${f%.yaml}.expected
  "$CHECK" "$f" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "${LBMC_UPDATE_EXPECTED:-0}" = 1 ] && [ "$rc" -eq 0 ]; then cp "$tmp/out" "$want"; fi
  if [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && diff -u "$want" "$tmp/out" >"$tmp/diff"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: good/$f -> exit $rc"
    sed 's/^/    /' "$tmp/err" "$tmp/diff" | head -30
  fi
done

# The first ```yaml block of docs/job-files.md is the complete annotated example.
awk '/^```yaml/ {on = 1; next} /^```/ && on {exit} on' "$DOC" >"$tmp/doc-example.yaml"
if [ -s "$tmp/doc-example.yaml" ] && "$CHECK" "$tmp/doc-example.yaml" >"$tmp/out" 2>"$tmp/err"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1))
  echo "FAIL: the example of docs/job-files.md does not parse:"
  sed 's/^/    /' "$tmp/err" | head -5
fi

echo "good job files: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
