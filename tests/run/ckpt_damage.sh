#!/usr/bin/env bash
# A damaged checkpoint loses only its damaged records. Records carry their own length and
# CRC: --resume skips a damaged record and resynchronises on the next valid one, keeps
# every later good record, says how many records and bytes it dropped, keeps the damaged
# file aside (OUT.h5.ckpt.damaged) instead of cutting it, and the results equal an
# uninterrupted run. lbmc info reports the damage first. A damaged header is called
# damaged (not "a different job"); a last record cut short is dropped with a note; a
# checkpoint of format 3 (lbmc before the owner slot) or 4 (before the shard) is still resumed. About 3 s of CPU.
. "$(dirname "$0")/lib.sh"
SHIM=$(preload "${LBMC_NOFLOCK:?set LBMC_NOFLOCK to the flock shim}")
job="$HERE/small.yaml"
check "reference run" "$LBMC" run "$job" -o "$WORK/ref.h5" --quiet
# A whole checkpoint (18 records): the final write fails (the flock shim on the temporary).
LD_PRELOAD=$SHIM LBMC_NOFLOCK_MATCH=".tmp." "$LBMC" run "$job" -o "$WORK/full.h5" --quiet 2>/dev/null
check "a checkpoint of 18 records" sh -c "'$LBMC' info '$WORK/full.h5.ckpt' | grep -q 'It holds 18 finished replicas'"

damage() { # damage IN OUT HOW: a copy of checkpoint IN with records damaged as HOW says
  /usr/bin/python3 - "$@" <<'PY'
import struct, sys, zlib
src, dst, how = sys.argv[1:4]
d = bytearray(open(src, "rb").read())
text = struct.unpack_from("<Q", d, 128)[0]
# format 5: seed, total, batches, shard index, shard count (5 x int64), then the CRC
off, recs = 128 + 8 + text + 40 + 4, []
while off < len(d):
    n = struct.unpack_from("<q", d, off)[0]
    recs.append((off, n))
    off += n + 4
if how == "middle":    # a flip inside record 3, a flip in the length of record 9, zeros over 12-13
    o, n = recs[3]; d[o + n // 2] ^= 0x10
    o, n = recs[9]; d[o] ^= 0x08
    o, n = recs[12]; d[o + 100:recs[13][0] + 200] = bytes(recs[13][0] + 100 - o)
elif how == "header":  # a flip in the job text
    d[128 + 8 + 5] ^= 0x01
elif how == "torn":    # the last record cut short
    d = d[:recs[-1][0] + recs[-1][1] // 2]
elif how == "format3": # the same records under the header of format 3 (no owner slot, no CRC)
    d = b"LBMCCKP3" + d[128:128 + 8 + text + 24] + d[128 + 8 + text + 40 + 4:]
elif how == "format4": # under the header of format 4 (no shard)
    head = bytes(d[128:128 + 8 + text + 24])
    d = (b"LBMCCKP4" + d[8:128] + head + struct.pack("<I", zlib.crc32(head))
         + d[128 + 8 + text + 40 + 4:])
open(dst, "wb").write(d)
PY
}

middle() {
  local out="$WORK/mid.h5" rc
  damage "$WORK/full.h5.ckpt" "$out.ckpt" middle && cp "$out.ckpt" "$WORK/damaged.copy"
  "$LBMC" info "$out.ckpt" >"$WORK/info"
  grep -q "It holds 14 finished replicas" "$WORK/info" &&
    grep -q "It is DAMAGED: 3 stretches of" "$WORK/info" || { cat "$WORK/info"; return 1; }
  "$LBMC" run "$job" -o "$out" --resume --quiet 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 0 ] && grep -qF "$out.ckpt was damaged: skipped 3 damaged stretches of" "$WORK/err" &&
    grep -qF "about 4 replica records" "$WORK/err" && grep -qF "kept the 14 good records" "$WORK/err" &&
    grep -qF "kept as $out.ckpt.damaged" "$WORK/err" && cmp -s "$out.ckpt.damaged" "$WORK/damaged.copy" &&
    compare "$WORK/ref.h5" "$out" >/dev/null && [ ! -e "$out.ckpt" ] ||
    { echo "exit $rc"; cat "$WORK/err"; ls "$WORK"; return 1; }
}
check "damaged records in the middle: the 14 good ones (before and after) kept, the file kept aside" middle

header() {
  local out="$WORK/head.h5" rc
  damage "$WORK/full.h5.ckpt" "$out.ckpt" header
  "$LBMC" run "$job" -o "$out" --resume --quiet 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -qF "$out.ckpt is damaged: its header" "$WORK/err" &&
    ! grep -q "different job" "$WORK/err" && "$LBMC" info "$out.ckpt" | grep -q "DAMAGED: its header" ||
    { echo "exit $rc"; cat "$WORK/err"; return 1; }
}
check "a damaged header is called damaged, not a different job" header

torn() {
  local out="$WORK/torn.h5" rc
  damage "$WORK/full.h5.ckpt" "$out.ckpt" torn
  "$LBMC" info "$out.ckpt" | grep -q "It holds 17 finished replicas" || return 1
  "$LBMC" run "$job" -o "$out" --resume --quiet 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 0 ] && grep -qF "ended in a record cut short" "$WORK/err" &&
    [ ! -e "$out.ckpt.damaged" ] && compare "$WORK/ref.h5" "$out" >/dev/null ||
    { echo "exit $rc"; cat "$WORK/err"; return 1; }
}
check "a last record cut short is dropped with a note; nothing kept aside" torn

format3() {
  local out="$WORK/old.h5"
  damage "$WORK/full.h5.ckpt" "$out.ckpt" format3
  "$LBMC" info "$out.ckpt" | grep -q "It holds 18 finished replicas" &&
    "$LBMC" run "$job" -o "$out" --resume --quiet && compare "$WORK/ref.h5" "$out" >/dev/null
}
check "a checkpoint of format 3 is resumed" format3

format4() { # format 4 records no shard: resumed, and lbmc info still gives the advice
  local out="$WORK/four.h5"
  damage "$WORK/full.h5.ckpt" "$out.ckpt" format4
  "$LBMC" info "$out.ckpt" >"$WORK/info" && grep -q "It holds 18 finished replicas" "$WORK/info" &&
    grep -qF -- "-o $out --resume" "$WORK/info" &&
    "$LBMC" run "$job" -o "$out" --resume --quiet && compare "$WORK/ref.h5" "$out" >/dev/null
}
check "a checkpoint of format 4 (no shard recorded) is resumed" format4
finish
