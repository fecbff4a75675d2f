#!/usr/bin/env bash
# The results file follows docs/results-format.md: checked by the analysis package's
# conformance checker and by h5dump (strings are variable-length UTF-8); lbmc info
# prints it; the sequential mode adds replicas and records its status.
. "$(dirname "$0")/lib.sh"
check "run" mpi 2 run "$HERE/small.yaml" -o "$WORK/s.h5" --quiet
check "layout conforms" env PYTHONPATH="$SRC/analysis" /usr/bin/python3 -c "
import sys, lbmc_analysis as la
problems = la.check_file('$WORK/s.h5')
print('\n'.join(problems)); sys.exit(1 if problems else 0)"
check "strings are variable-length UTF-8" sh -c "h5dump -H -d /points/policy '$WORK/s.h5' | grep -q 'H5T_CSET_UTF8'"
check "every dataset has units and description" sh -c "
  n=\$(h5dump -H '$WORK/s.h5' | grep -c 'DATASET \"'); u=\$(h5dump -H '$WORK/s.h5' | grep -c 'ATTRIBUTE \"units\"')
  d=\$(h5dump -H '$WORK/s.h5' | grep -c 'ATTRIBUTE \"description\"'); test \$n -gt 40 -a \$d -ge \$n -a \$u -ge \$n"
check "lbmc info prints every point" sh -c "'$LBMC' info --metrics p_wait '$WORK/s.h5' | grep -cE ' (ok|not_stationary)$' | grep -qx 6"
check "dry run prints the grid" sh -c "'$LBMC' run '$HERE/small.yaml' --dry-run | grep -q '6 points, 18 work units'"
check "dry run writes nothing" test ! -e "$WORK/dry.h5"
# Each point's CPU s (a calibration of its engine: positive, finite) and their total.
"$LBMC" run "$HERE/small.yaml" --dry-run >"$WORK/dry.txt"
check "dry run: each point's CPU s, and their total" /usr/bin/python3 - "$WORK/dry.txt" <<'PY'
import math, re, sys
lines = open(sys.argv[1]).read().splitlines()
head = next(l for l in lines if l.lstrip().startswith("point"))
end = head.index("CPU s") + len("CPU s")
cpu = [float(l[end - 10:end]) for l in lines if re.match(r"^ +[0-9]+ ", l)]
total = float(re.search(r"about ([0-9.e+-]+) CPU seconds \(each point's engine calibrated", lines[-1]).group(1))
print("  points %s, total %g" % (cpu, total))
sys.exit(0 if len(cpu) == 6 and all(c > 0 and math.isfinite(c) for c in cpu)
         and abs(sum(cpu) - total) <= 0.01 * total else 1)
PY
check "precision run" mpi 2 run "$HERE/precision.yaml" -o "$WORK/p.h5" --quiet
check "precision: replicas added, target or budget reported" /usr/bin/python3 -c "
import h5py, sys
f = h5py.File('$WORK/p.h5')
reps = f['points/replicas'][()]; status = [s.decode() if isinstance(s, bytes) else s for s in f['points/status'][()]]
mean = f['estimates/p_wait/mean'][()]; hw = f['estimates/p_wait/half_width'][()]
print(list(reps), status)
ok = any(r > 4 for r in reps)
for r, s, m, h in zip(reps, status, mean, hw):
    ok &= (s == 'ok' and h / m <= 0.05) or (s == 'precision_not_met' and r == 40)
sys.exit(0 if ok else 1)"
check "precision run on 1 rank identical" mpi 1 run "$HERE/precision.yaml" -o "$WORK/p1.h5" --quiet
check "precision: same replicas on 1 and 2 ranks" compare "$WORK/p.h5" "$WORK/p1.h5"
finish
