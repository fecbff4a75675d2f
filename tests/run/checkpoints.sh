#!/usr/bin/env bash
# Checkpoints that cannot be resumed: one written by another version of lbmc (another
# format) is refused by --resume with a message naming the file and the remedies, and
# replaced by a run without --resume, which then finishes as a fresh run would.
. "$(dirname "$0")/lib.sh"
job="$HERE/small.yaml"
check "reference run" mpi 2 run "$job" -o "$WORK/ref.h5" --quiet

printf 'LBMCCKP1 an old checkpoint' >"$WORK/old.h5.ckpt"
refuses_old() { # --resume: exit 2, the file named, both remedies, nothing written
  local out rc
  out=$("$LBMC" run "$job" -o "$WORK/old.h5" --resume --quiet 2>&1)
  rc=$?
  [ "$rc" -eq 2 ] && echo "$out" | grep -qF "$WORK/old.h5.ckpt was written by another version of lbmc" &&
    echo "$out" | grep -qF "rerun without --resume" && echo "$out" | grep -qF "or delete it" &&
    [ ! -e "$WORK/old.h5" ] || { echo "$out"; return 1; }
}
check "--resume refuses a checkpoint of another format" refuses_old
replaces_old() { # without --resume: a note, a fresh run, the checkpoint removed at the end
  local out
  out=$(mpi 2 run "$job" -o "$WORK/old.h5" --quiet 2>&1) || { echo "$out"; return 1; }
  echo "$out" | grep -qF "starting afresh and replacing it" && [ ! -e "$WORK/old.h5.ckpt" ] &&
    compare "$WORK/ref.h5" "$WORK/old.h5" >/dev/null
}
check "without --resume it is replaced and the run equals a fresh one" replaces_old
finish
