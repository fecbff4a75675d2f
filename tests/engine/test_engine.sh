#!/usr/bin/env bash
# The test-only engine `single` (single.c, registered only in lbmc-test-engine) through
# every place that lists engines: lbmc sim --help, --engine (by name, refused where it
# does not apply, and in the message of a wrong name), M/M/1 values through lbmc sim
# --json, a job file through lbmc run --dry-run and lbmc run (the results file names the
# engine), and lbmc itself, which does not know it.
# Usage: test_engine.sh LBMC_TEST_ENGINE (LBMC from the environment).
set -u
TE=${1:?usage: test_engine.sh LBMC_TEST_ENGINE}
LBMC=${LBMC:?set LBMC to the lbmc program}
LBMC_TEST_NAME=engine-test
# shellcheck source=tests/lib/check.sh
. "${LBMC_SOURCE_DIR:?set LBMC_SOURCE_DIR}/tests/lib/check.sh"
mm1="--n 1 --lambda 0.5 --pools 1:1:inf --policy random --replicas 8 --time 4000 --warmup 200 --seed 5"

"$TE" sim --help >"$WORK/help" 2>&1
check "--help lists single" grep -Eq "^ +single +test only: the M/M/1/B queue" "$WORK/help"
check "--help lists occupancy first" grep -Eq "^ +occupancy +counts of servers" "$WORK/help"
"$LBMC" sim --help >"$WORK/help0" 2>&1
check "lbmc --help does not list single" bash -c "! grep -q single '$WORK/help0'"

# shellcheck disable=SC2086
"$TE" sim $mm1 --engine single --json >"$WORK/mm1.json"
check "sim --engine single" test $? -eq 0
check "M/M/1 on single: mean_queue 1, p_wait 0.5, mean_sojourn 2 within the intervals" \
  /usr/bin/python3 - "$WORK/mm1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["engine"] == "single", d["engine"]
e = d["estimates"]
def covers(name, exact, idx=None):
    x = e[name]
    lo, hi = (x["lower"], x["upper"]) if idx is None else (x["lower"][idx], x["upper"][idx])
    ok = lo <= exact <= hi
    print(name, lo, hi, exact, "ok" if ok else "MISS")
    return ok
sys.exit(0 if all([covers("mean_queue", 1.0, 0), covers("p_wait", 0.5), covers("mean_sojourn", 2.0)]) else 1)
PY

"$TE" sim --n 4 --lambda 0.5 --pools 1:1:inf --policy random --engine single >"$WORK/err" 2>&1
check "single refused for n = 4: exit 2" test $? -eq 2
check "single refused: the engine's reason" grep -q "single applies to one exponential server" "$WORK/err"
"$TE" sim $mm1 --engine nosuch >"$WORK/err" 2>&1
check "a wrong engine name lists single among those allowed" grep -q "allowed: auto, occupancy, occupancy-ph, servers, lean, general, single" "$WORK/err"
"$LBMC" sim $mm1 --engine single >"$WORK/err" 2>&1
check "lbmc refuses --engine single" test $? -eq 2

cat >"$WORK/job.yaml" <<'YAML'
system: {n: 1, lambda: [0.3, 0.5], pools: [{beta: 1, mu: 1, buffer: 4}]}
policy: random
run: {engine: single, replicas: 4, time: 500, warmup: 50, seed: 9}
YAML
"$TE" run "$WORK/job.yaml" --dry-run >"$WORK/dry" 2>&1
check "run --dry-run names single" grep -q " single " "$WORK/dry"
"$TE" run "$WORK/job.yaml" -o "$WORK/out.h5" >"$WORK/run.log" 2>&1
check "run on single" test $? -eq 0
check "the results file names the engine" /usr/bin/python3 -c "
import h5py, sys
f = h5py.File('$WORK/out.h5', 'r')
sys.exit(0 if [e.decode() if isinstance(e, bytes) else e for e in f['points/engine'][()]] == ['single'] * 2 else 1)"

finish
