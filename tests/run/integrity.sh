#!/usr/bin/env bash
# Damaged results files are refused. A results file carries Fletcher32 on every numeric
# dataset and a SHA-256 per object and of the whole content (docs/results-format.md,
# "Checksums"). 60 single-bit flips and 6 zeroed 4 KiB blocks at random places (fixed
# seed) of a small file: lbmc info, lbmc merge and the Python loader either refuse the
# copy (lbmc: exit 1 or 2, no crash; a damaged dataset named) or give exactly the
# original's numbers (a flip in unused bytes). A file without checksums (an older lbmc's)
# still reads, with a note; --resume of a damaged complete output is refused. HDF5
# crashing on a file (it trusts the unchecksummed global heap of strings) is reported as
# damage: the files are checked in a process of their own. About 10 s of CPU.
. "$(dirname "$0")/lib.sh"
job="$HERE/small.yaml"
check "reference run" "$LBMC" run "$job" -o "$WORK/ref.h5" --quiet
"$LBMC" info --format csv "$WORK/ref.h5" >"$WORK/ref.csv" || fails=$((fails + 1))

every_numeric_dataset_checksummed() {
  PYTHONPATH="$SRC/analysis" /usr/bin/python3 - "$WORK/ref.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
bad = []
def visit(name, obj):
    if not isinstance(obj, h5py.Dataset):
        return
    if "sha256" not in obj.attrs:
        bad.append(f"{name}: no sha256")
    if obj.dtype.kind in "fiu" and obj.size and not (obj.fletcher32 and obj.chunks):
        bad.append(f"{name}: no Fletcher32")
f.visititems(visit)
if "content_sha256" not in f.attrs:
    bad.append("root: no content_sha256")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "every numeric dataset is chunked with Fletcher32; every object has its sha256" every_numeric_dataset_checksummed

# The damaged copies, and what lbmc info and merge make of each: "same" (output equal
# to the original's), "refused" (exit 1 or 2 with a message), or "BAD" (another exit
# status: a crash, or changed numbers accepted).
damage_all() {
  /usr/bin/python3 - "$LBMC" "$WORK" <<'PY'
import os, random, subprocess, sys
lbmc, work = sys.argv[1], sys.argv[2]
data = open(f"{work}/ref.h5", "rb").read()
ref = open(f"{work}/ref.csv").read()
merged_ref = None
rng = random.Random(24)
counts = {"same": 0, "refused": 0, "named": 0}
bad = []
for i in range(66):
    b = bytearray(data)
    if i < 60:
        off = rng.randrange(len(b)); b[off] ^= 1 << rng.randrange(8); what = f"bit flip at byte {off}"
    else:
        off = rng.randrange(len(b) // 4096) * 4096; b[off:off + 4096] = bytes(len(b[off:off + 4096]))
        what = f"4 KiB of zeros at byte {off}"
    path = f"{work}/d{i}.h5"
    open(path, "wb").write(b)
    info = subprocess.run([lbmc, "info", "--format", "csv", path], capture_output=True, text=True)
    merge = subprocess.run([lbmc, "merge", f"{work}/m{i}.h5", path], capture_output=True, text=True)
    for name, r in (("info", info), ("merge", merge)):
        if r.returncode == 0:
            continue
        if r.returncode not in (1, 2) or "lbmc: error:" not in r.stderr:
            bad.append(f"{what}: lbmc {name} exit {r.returncode}: {r.stderr[-300:]}")
    if info.returncode == 0:
        counts["same"] += 1
        if info.stdout != ref:
            bad.append(f"{what}: lbmc info accepted changed numbers")
        if merge.returncode != 0:
            bad.append(f"{what}: lbmc info accepted the file, lbmc merge refused it: {merge.stderr}")
    else:
        counts["refused"] += 1
        counts["named"] += " is damaged: /" in info.stderr
        if merge.returncode == 0:
            bad.append(f"{what}: lbmc merge accepted a file lbmc info refused")
        if os.path.exists(f"{work}/m{i}.h5"):
            bad.append(f"{what}: a refused merge left its output")
    if merge.returncode == 0:  # the merge of an intact copy equals the merge of the original
        out = subprocess.run([lbmc, "info", "--format", "csv", f"{work}/m{i}.h5"], capture_output=True,
                             text=True).stdout
        merged_ref = merged_ref or out
        if out != merged_ref:
            bad.append(f"{what}: the merge differs")
    open(f"{work}/verdict{i}", "w").write("refused" if info.returncode else "same")
print(counts)
print("\n".join(bad[:20]))
# the flips change something in most places: at least a third refused, a dataset named
sys.exit(1 if bad or counts["refused"] < 22 or counts["named"] < 10 else 0)
PY
}
check "lbmc info and merge refuse every damaged copy (or read the original's numbers)" damage_all

loader_refuses() { # the Python loader agrees with lbmc info on every copy
  PYTHONPATH="$SRC/analysis" /usr/bin/python3 - "$WORK" <<'PY'
import sys, warnings
import numpy as np
import lbmc_analysis as la
work = sys.argv[1]
ref = la.load(f"{work}/ref.h5", grid=False)
bad, named = [], 0
for i in range(66):
    verdict = open(f"{work}/verdict{i}").read()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", la.UnverifiedWarning)
            ds = la.load(f"{work}/d{i}.h5", grid=False)
    except la.LbmcFormatError as exc:
        named += " is damaged: /" in str(exc)
        if verdict == "same":
            bad.append(f"copy {i}: the loader refused what lbmc info read: {exc}")
        continue
    except Exception as exc:  # anything else is a crash of the loader
        bad.append(f"copy {i}: {type(exc).__name__}: {exc}")
        continue
    if verdict == "refused":
        bad.append(f"copy {i}: the loader read what lbmc info refused")
    for v in ref.data_vars:
        if not np.array_equal(ref[v].values, ds[v].values, equal_nan=True):
            bad.append(f"copy {i}: {v} differs")
print(f"{named} refusals named a dataset")
print("\n".join(bad[:20]))
sys.exit(1 if bad or named < 10 else 0)
PY
}
check "the Python loader refuses the same copies, naming the dataset" loader_refuses

unsealed_still_reads() { # an older lbmc's file: no checksum attributes
  PYTHONPATH="$SRC/analysis" /usr/bin/python3 - "$WORK" <<'PY' || return 1
import shutil, sys, h5py
work = sys.argv[1]
shutil.copy(f"{work}/ref.h5", f"{work}/old.h5")
with h5py.File(f"{work}/old.h5", "a") as f:
    del f.attrs["content_sha256"]
    f.visititems(lambda name, obj: obj.attrs.__delitem__("sha256"))
PY
  local out
  out=$("$LBMC" info --format csv "$WORK/old.h5" 2>"$WORK/err") &&
    [ "$out" = "$(cat "$WORK/ref.csv")" ] && grep -q "has no checksums" "$WORK/err" ||
    { cat "$WORK/err"; return 1; }
  "$LBMC" merge "$WORK/old-m.h5" "$WORK/old.h5" >/dev/null 2>&1 &&
    "$LBMC" info "$WORK/old-m.h5" >/dev/null 2>"$WORK/err" && ! grep -q "no checksums" "$WORK/err" ||
    { cat "$WORK/err"; return 1; }
  PYTHONPATH="$SRC/analysis" /usr/bin/python3 -c "
import sys, pytest, lbmc_analysis as la
with pytest.warns(la.UnverifiedWarning, match='no checksums'):
    la.load(sys.argv[1], grid=False)" "$WORK/old.h5"
}
check "a file without checksums (older lbmc) reads with a note; its merge is checksummed" unsealed_still_reads

crash_reported() { # HDF5 crashing on a file (the shim $LBMC_H5CRASH): damage, not a crash
  local rc
  LD_PRELOAD=${LBMC_H5CRASH:?set LBMC_H5CRASH to the crashing shim} "$LBMC" info "$WORK/ref.h5" \
    >/dev/null 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -qF "ref.h5 is damaged: the HDF5 library crashed reading it (signal 11" "$WORK/err" ||
    { echo "exit $rc"; cat "$WORK/err"; return 1; }
  LD_PRELOAD=$LBMC_H5CRASH PYTHONPATH="$SRC/analysis" /usr/bin/python3 -c "
import sys, lbmc_analysis as la
try:
    la.load(sys.argv[1], grid=False)
except la.LbmcDamagedError as exc:
    sys.exit(0 if 'crashed reading it' in str(exc) else print(exc) or 1)
sys.exit(1)" "$WORK/ref.h5"
}
check "an HDF5 crash while checking a file is reported as damage (lbmc info, the loader)" crash_reported

edited_value_named() { # a number changed through h5py: the dataset is named
  cp "$WORK/ref.h5" "$WORK/edited.h5"
  /usr/bin/python3 -c "
import sys, h5py
with h5py.File(sys.argv[1], 'a') as f:
    d = f['estimates/p_wait/mean']; v = d[()]; v[0] *= 1e77; d[...] = v" "$WORK/edited.h5"
  "$LBMC" info "$WORK/edited.h5" >/dev/null 2>"$WORK/err"
  [ $? -eq 1 ] && grep -qF "edited.h5 is damaged: /estimates/p_wait/mean does not match its SHA-256" "$WORK/err" ||
    { cat "$WORK/err"; return 1; }
}
check "a number changed after writing is refused naming /estimates/p_wait/mean" edited_value_named

resume_refuses_damage() { # --resume of a damaged complete output: refused, named, left alone
  local rc before
  before=$(md5sum <"$WORK/edited.h5")
  "$LBMC" run "$job" -o "$WORK/edited.h5" --resume --quiet 2>"$WORK/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -qF "edited.h5 is damaged: /estimates/p_wait/mean" "$WORK/err" &&
    [ "$(md5sum <"$WORK/edited.h5")" = "$before" ] || { echo "exit $rc"; cat "$WORK/err"; return 1; }
}
check "--resume of a damaged complete output is refused naming the dataset" resume_refuses_damage
finish
