#!/usr/bin/env bash
# Checkpoints that cannot be resumed: one written by another version of lbmc (another
# format) is refused by --resume with a message naming the file and the remedies, and
# replaced by a run without --resume, which then finishes as a fresh run would. One
# whose header was never fully written is called incomplete and the run starts afresh
# (with or without --resume). lbmc info on a checkpoint says what it is, what it holds
# and how to finish its run; lbmc merge refuses it saying so.
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
# A real checkpoint: the final write fails (the flock shim, for the temporary only).
SHIM=$(preload "${LBMC_NOFLOCK:?set LBMC_NOFLOCK to the flock shim}")
LD_PRELOAD=$SHIM LBMC_NOFLOCK_MATCH=".tmp." "$LBMC" run "$job" -o "$WORK/part.h5" --quiet 2>/dev/null
check "a run whose final write failed left its checkpoint" test -s "$WORK/part.h5.ckpt"
info_ckpt() { # exit 0; what it is, what it holds, how to finish
  local out
  out=$("$LBMC" info "$WORK/part.h5.ckpt" 2>&1) || { echo "$out"; return 1; }
  echo "$out" | grep -qF "the checkpoint of an unfinished lbmc run" &&
    echo "$out" | grep -qE "It holds [0-9]+ finished replicas of 6 points" &&
    echo "$out" | grep -qF "lbmc run JOB.yaml -o $WORK/part.h5 --resume" || { echo "$out"; return 1; }
}
check "lbmc info OUT.h5.ckpt explains the checkpoint and how to finish it" info_ckpt
merge_ckpt() { # exit 2, saying it is a checkpoint
  local out rc
  out=$("$LBMC" merge "$WORK/m.h5" "$WORK/part.h5.ckpt" 2>&1)
  rc=$?
  [ "$rc" -eq 2 ] && echo "$out" | grep -qF "is the checkpoint of an unfinished lbmc run" &&
    [ ! -e "$WORK/m.h5" ] || { echo "$out"; return 1; }
}
check "lbmc merge refuses a checkpoint, saying what it is" merge_ckpt

# Headers cut short: 0 bytes, part of the magic, the magic and part of the job text.
header=$((8 + 8 + $(wc -c <"$job") + 24))
for cut in 0 5 20 $((header - 1)); do
  for resume in --resume ""; do
    head -c "$cut" "$WORK/part.h5.ckpt" >"$WORK/cut.h5.ckpt"
    incomplete() {
      local out
      out=$("$LBMC" run "$job" -o "$WORK/cut.h5" $resume --quiet 2>&1) || { echo "$out"; return 1; }
      echo "$out" | grep -qF "$WORK/cut.h5.ckpt is incomplete" &&
        echo "$out" | grep -qF "starting afresh" && [ ! -e "$WORK/cut.h5.ckpt" ] &&
        compare "$WORK/ref.h5" "$WORK/cut.h5" >/dev/null || { echo "$out"; return 1; }
    }
    check "a checkpoint cut at byte $cut is incomplete: ${resume:-a run} starts afresh" incomplete
    rm -f "$WORK/cut.h5"
  done
done
info_incomplete() {
  head -c 20 "$WORK/part.h5.ckpt" >"$WORK/cut.h5.ckpt"
  "$LBMC" info "$WORK/cut.h5.ckpt" | grep -qF "It is incomplete"
}
check "lbmc info calls a cut checkpoint incomplete" info_incomplete
finish
