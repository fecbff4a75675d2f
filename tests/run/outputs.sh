#!/usr/bin/env bash
# Output paths are checked before anything is computed: lbmc run and lbmc merge
# refuse (exit 2, nothing replaced) a FIFO, a directory, a missing directory, an empty
# path, the job file or a part as output, and an existing file lbmc did not write;
# lbmc info refuses missing and foreign files with exit 2.
. "$(dirname "$0")/lib.sh"
cp "$HERE/small.yaml" "$WORK/job.yaml"
echo "not results" >"$WORK/notes.txt"
mkfifo "$WORK/fifo"
refuses() { # refuses PATTERN COMMAND...: exit 2 with the message
  local pat=$1 out rc
  shift
  out=$("$@" 2>&1)
  rc=$?
  [ "$rc" -eq 2 ] && echo "$out" | grep -q -- "$pat" || { echo "  exit $rc: $out"; return 1; }
}
check "run -o FIFO" refuses "is not a regular file" "$LBMC" run "$WORK/job.yaml" -o "$WORK/fifo" --quiet
check "FIFO untouched" test -p "$WORK/fifo"
check "run -o DIR" refuses "is a directory" "$LBMC" run "$WORK/job.yaml" -o "$WORK" --quiet
check "run -o missing/dir/x.h5" refuses "does not exist; create it first" "$LBMC" run "$WORK/job.yaml" -o "$WORK/no/x.h5" --quiet
check "run -o ''" refuses "empty path" "$LBMC" run "$WORK/job.yaml" -o "" --quiet
check "run -o JOB" refuses "is also an input" "$LBMC" run "$WORK/job.yaml" -o "$WORK/job.yaml" --quiet
check "run -o foreign file" refuses "is not an HDF5 file" "$LBMC" run "$WORK/job.yaml" -o "$WORK/notes.txt" --quiet
check "job and notes untouched" grep -q "^system:" "$WORK/job.yaml"
check "notes untouched" grep -qx "not results" "$WORK/notes.txt"
check "run" "$LBMC" run "$WORK/job.yaml" -o "$WORK/a.h5" --quiet
check "run again over its own results" "$LBMC" run "$WORK/job.yaml" -o "$WORK/a.h5" --quiet
check "merge into a part" refuses "is also an input" "$LBMC" merge "$WORK/a.h5" "$WORK/a.h5"
check "merge into a foreign file" refuses "is not an HDF5 file" "$LBMC" merge "$WORK/notes.txt" "$WORK/a.h5"
check "info of a missing file" refuses "no such file" "$LBMC" info "$WORK/none.h5"
check "info of a foreign file" refuses "not a readable lbmc results file" "$LBMC" info "$WORK/notes.txt"
finish
