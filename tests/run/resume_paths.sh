#!/usr/bin/env bash
# Paths as given, resumes that do not repeat work, settings compared as parsed, bounds.
# The job file's `output:` obeys the checks of -o and is used as written: a directory
# (/, od/) or a device is refused, res.hdf5 stays res.hdf5 (a shard's part:
# res.shard-1-of-2.hdf5). --resume of a complete output says so and exits 0 without
# recomputing; of another job's results, refuses naming the setting. --resume and merge
# accept a job text that differs only in comments or in the spelling of a value (0.8 vs
# 4/5) and name the key and both values of a real difference. A signal after the final
# write exits 0. A job file over 16 MiB (/dev/zero) is refused at once; a 100 kB value is
# not echoed whole. A shard's checkpoint resumes only with its --shard (it records the
# shard: a killed shard leaves no results to say it). About 5 s of CPU.
. "$(dirname "$0")/lib.sh"
job="$HERE/small.yaml"
cd "$WORK" || exit 1
check "reference run" "$LBMC" run "$job" -o "$WORK/ref.h5" --quiet

with_output() { sed "s|^run:|output: $1\nrun:|" "$job" >"$WORK/out.yaml"; }
refused_output() { # refused_output VALUE PATTERN: exit 2, the message, nothing written
  local rc
  with_output "$1"
  "$LBMC" run "$WORK/out.yaml" --quiet 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 2 ] && grep -qF -- "$2" "$WORK/err" && [ ! -e "od/.h5" ] && [ ! -e "/.h5" ] &&
    [ ! -e "/dev/null.h5" ] || { echo "exit $rc"; cat "$WORK/err"; return 1; }
}
mkdir -p od
check "output: od/ is refused (a directory)" refused_output "od/" "output: od/ names a directory"
check "output: / is refused" refused_output "/" "output: / names a directory"
check "output: /dev/null is refused" refused_output "/dev/null" "/dev/null exists and is not a regular file"
as_given() {
  with_output res.hdf5
  "$LBMC" run "$WORK/out.yaml" --quiet && [ -f res.hdf5 ] && [ ! -e res.hdf5.h5 ] &&
    "$LBMC" run "$WORK/out.yaml" --shard 1/2 --quiet && [ -f res.shard-1-of-2.hdf5 ] &&
    with_output results && "$LBMC" run "$WORK/out.yaml" --quiet && [ -f results ] &&
    [ ! -e results.h5 ]
}
check "output: res.hdf5 (or results) is written as given, no .h5 appended" as_given

complete_resume() { # nothing recomputed: the file is not rewritten
  local before rc
  before=$(stat -c %Y.%s ref.h5)
  sleep 1.1
  "$LBMC" run "$job" -o "$WORK/ref.h5" --resume 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 0 ] && grep -qF "holds the complete results of this job already: nothing to do" "$WORK/err" &&
    [ "$(stat -c %Y.%s ref.h5)" = "$before" ] || { echo "exit $rc"; cat "$WORK/err"; return 1; }
}
check "--resume of a complete output says so and exits 0 without recomputing" complete_resume

sed 's/lambda: 0.8/lambda: 4\/5   # the same load, spelled as a fraction/' "$job" >"$WORK/same.yaml"
sed 's/time: 400/time: 401/' "$job" >"$WORK/other.yaml"
other_resume() {
  "$LBMC" run "$WORK/other.yaml" -o "$WORK/ref.h5" --resume 2>"$WORK/err"
  [ $? -eq 2 ] && grep -qF "run.time is 400 there and 401 here" "$WORK/err"
}
check "--resume over another job's complete results is refused naming run.time 400/401" other_resume
check "--resume of a complete output with 4/5 for 0.8 and a comment: nothing to do" \
  "$LBMC" run "$WORK/same.yaml" -o "$WORK/ref.h5" --resume --quiet

ckpt_settings() { # a checkpoint resumed by a job spelled differently; refused by another
  local rc
  LD_PRELOAD=$(preload "${LBMC_NOFLOCK:?}") LBMC_NOFLOCK_MATCH=".tmp." "$LBMC" run "$job" -o "$WORK/p.h5" \
    --quiet 2>/dev/null
  "$LBMC" run "$WORK/other.yaml" -o "$WORK/p.h5" --resume --quiet 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 2 ] && grep -qF "p.h5.ckpt belongs to a different job: run.time is 400 there and 401 in" \
    "$WORK/err" || { echo "exit $rc"; cat "$WORK/err"; return 1; }
  "$LBMC" run "$WORK/same.yaml" -o "$WORK/p.h5" --resume --quiet 2>"$WORK/err" &&
    /usr/bin/python3 "$HERE/compare.py" --ignore-job "$WORK/ref.h5" "$WORK/p.h5" >/dev/null ||
    { cat "$WORK/err"; return 1; }
}
check "--resume compares parsed settings: 4/5 for 0.8 passes, time 401 is named" ckpt_settings

merge_settings() {
  "$LBMC" run "$job" --shard 1/2 -o "$WORK/s1.h5" --quiet &&
    "$LBMC" run "$WORK/same.yaml" --shard 2/2 -o "$WORK/s2.h5" --quiet &&
    "$LBMC" run "$WORK/other.yaml" --shard 2/2 -o "$WORK/s3.h5" --quiet || return 1
  "$LBMC" merge "$WORK/m.h5" "$WORK/s1.h5" "$WORK/s2.h5" >/dev/null || return 1
  "$LBMC" merge "$WORK/m3.h5" "$WORK/s1.h5" "$WORK/s3.h5" 2>"$WORK/err"
  [ $? -eq 2 ] && grep -qF "run.time is 400 in $WORK/s1.h5 and 401 in $WORK/s3.h5" "$WORK/err" &&
    [ ! -e "$WORK/m3.h5" ]
}
check "merge compares parsed settings: 4/5 for 0.8 merges, time 401 is named" merge_settings

late_signal() { # a signal once the results are written: exit 0
  local pid rc
  for sig in TERM INT USR1; do
    rm -f late.h5
    "$LBMC" run "$job" -o late.h5 --quiet &
    pid=$!
    while [ ! -e late.h5 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.001; done
    kill -"$sig" "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    [ "$rc" -eq 0 ] || { echo "$sig: exit $rc"; return 1; }
  done
}
check "a signal after the final write exits 0" late_signal

big_job() { # /dev/zero: refused after 16 MiB, not read to the end of memory
  local rc
  "$LBMC" run /dev/zero --dry-run 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 2 ] && grep -qF "longer than 16 MiB" "$WORK/err" || { echo "exit $rc"; cat "$WORK/err"; return 1; }
}
check "lbmc run /dev/zero is refused (16 MiB at most)" big_job

long_value() { # a 100 kB value is cut in the message
  local len
  /usr/bin/python3 -c "
import sys
v = 'x' * 100000
open(sys.argv[1], 'w').write(open(sys.argv[2]).read().replace('lambda: 0.8', 'lambda: ' + v))" \
    "$WORK/long.yaml" "$job"
  "$LBMC" run "$WORK/long.yaml" --dry-run 2>"$WORK/err"
  len=$(wc -c <"$WORK/err")
  [ "$len" -lt 600 ] && grep -qF "(100000 characters, cut)" "$WORK/err" || { echo "$len bytes"; return 1; }
}
check "a 100 kB value is not echoed whole" long_value

info_bad_magic() { # a checkpoint whose first bytes are damaged is not called 'not an HDF5 file'
  printf 'XBMCCKP4 damaged' >"$WORK/bad.h5.ckpt"
  "$LBMC" info "$WORK/bad.h5.ckpt" 2>"$WORK/err"
  [ $? -eq 2 ] && grep -qF "is not a readable lbmc checkpoint" "$WORK/err" &&
    ! grep -q "HDF5" "$WORK/err" || return 1
  "$LBMC" run "$job" -o "$WORK/bad.h5" --resume 2>"$WORK/err"
  [ $? -eq 2 ] && grep -qF "is not an lbmc checkpoint (it does not start with LBMCCKP)" "$WORK/err" &&
    ! grep -q "HDF5" "$WORK/err"
}
check "a checkpoint with a damaged magic is called so, not 'not an HDF5 file'" info_bad_magic

shard_resume() { # a shard's checkpoint beside its results: resumed as that shard only
  local rc
  # the shard's checkpoint, its final write failed (a shim whose flock fails on .tmp.),
  # beside the shard's results (what a stopped run leaves: complete or not, they name
  # the shard)
  "$LBMC" run "$job" --shard 1/2 -o "$WORK/sr-ref.h5" --quiet || return 1
  LD_PRELOAD=$(preload "${LBMC_NOFLOCK:?}") LBMC_NOFLOCK_MATCH=".tmp." "$LBMC" run "$job" --shard 1/2 \
    -o "$WORK/sr.h5" --quiet 2>"$WORK/err"
  grep -qF -- "-o $WORK/sr.h5 --resume --shard 1/2 (nothing is simulated again)" "$WORK/err" ||
    { echo "the failed write's advice:"; cat "$WORK/err"; return 1; }
  [ -s "$WORK/sr.h5.ckpt" ] && [ ! -e "$WORK/sr.h5" ] || return 1
  # the checkpoint alone (a shard killed with SIGKILL leaves no results): it names its
  # shard itself, to lbmc info and to a resume without the shard
  "$LBMC" info "$WORK/sr.h5.ckpt" >"$WORK/out" &&
    grep -qF -- "-o $WORK/sr.h5 --resume --shard 1/2" "$WORK/out" &&
    grep -qF "of shard 1/2 of its job" "$WORK/out" ||
    { echo "lbmc info's advice, the checkpoint alone:"; cat "$WORK/out"; return 1; }
  for other in "" "--shard 2/2"; do
    # shellcheck disable=SC2086
    "$LBMC" run "$job" $other -o "$WORK/sr.h5" --resume --quiet 2>"$WORK/err"
    rc=$?
    [ "$rc" -eq 2 ] && grep -qF "belong to shard 1/2 of $job" "$WORK/err" &&
      grep -qF -- "resume with --resume --shard 1/2" "$WORK/err" && [ ! -e "$WORK/sr.h5" ] &&
      [ -s "$WORK/sr.h5.ckpt" ] ||
      { echo "the checkpoint alone, ${other:-no --shard}: exit $rc"; cat "$WORK/err"; return 1; }
  done
  cp "$WORK/sr-ref.h5" "$WORK/sr.h5" || return 1
  "$LBMC" info "$WORK/sr.h5.ckpt" >"$WORK/out" &&
    grep -qF -- "-o $WORK/sr.h5 --resume --shard 1/2" "$WORK/out" ||
    { echo "lbmc info's advice:"; cat "$WORK/out"; return 1; }
  for other in "" "--shard 2/2"; do # without --shard it would run the whole job into sr.h5
    # shellcheck disable=SC2086
    "$LBMC" run "$job" $other -o "$WORK/sr.h5" --resume --quiet 2>"$WORK/err"
    rc=$?
    [ "$rc" -eq 2 ] && grep -qF -- "--shard: $WORK/sr.h5 and its checkpoint" "$WORK/err" &&
      grep -qF "belong to shard 1/2 of $job" "$WORK/err" &&
      grep -qF -- "resume with --resume --shard 1/2" "$WORK/err" &&
      [ -s "$WORK/sr.h5.ckpt" ] || { echo "${other:-no --shard}: exit $rc"; cat "$WORK/err"; return 1; }
  done
  "$LBMC" run "$job" --shard 1/2 -o "$WORK/sr.h5" --resume --quiet &&
    compare "$WORK/sr-ref.h5" "$WORK/sr.h5" >/dev/null && [ ! -e "$WORK/sr.h5.ckpt" ]
}
check "--resume of a shard's checkpoint needs its --shard (else refused, naming it)" shard_resume
finish
