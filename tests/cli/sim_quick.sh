#!/usr/bin/env bash
# lbmc sim for a quick question: --pools defaults to one pool 1:1:inf (the same output as
# given); --progress always writes a progress line with an ETA to stderr at once when it
# is not a terminal, auto writes none in a short run, never none at all, and a bad value
# is an error naming the flag; a run from empty that is not stationary names
# --init meanfield when its engine has that start (occupancy, servers), not when the
# policy has none (lwl(2): no occupancy form), nor once it is used.
# Usage: sim_quick.sh LBMC
set -u
LBMC=${1:?usage: sim_quick.sh LBMC}
LBMC_TEST_NAME=sim-quick
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
quick=(--n 100 --lambda 0.9 --policy 'jsq(2)' --time 100 --warmup 10 --replicas 2)
"$LBMC" sim "${quick[@]}" --json >"$WORK/default.json" 2>"$WORK/default.err"
check "no --pools: exit 0" test $? -eq 0
"$LBMC" sim "${quick[@]}" --pools 1:1:inf --json >"$WORK/given.json" 2>/dev/null
check "no --pools: the results of --pools 1:1:inf" \
  /usr/bin/python3 -c "import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for d in (a, b): d.pop('cpu_seconds')
sys.exit(a != b)" "$WORK/default.json" "$WORK/given.json"
check "--help: --pools' default" grep -q "(default 1:1:inf)" <("$LBMC" sim --help)

check "--progress auto, short run, not a terminal: no progress" test ! -s "$WORK/default.err"
# a transient run of 1.4e6 events (1000 replicas to T1 = 40): short, though its unused
# time setting (default 1000) would make it 3.6e7
"$LBMC" sim --n 20 --lambda 0.9 --transient 0:40:0.5 --replicas 1000 >/dev/null 2>"$WORK/tr.err"
check "--progress auto, a short transient run: no estimate, no progress" test ! -s "$WORK/tr.err"
"$LBMC" sim "${quick[@]}" --progress always >/dev/null 2>"$WORK/always.err"
check "--progress always: a line with the ETA at once" \
  grep -Eq "^lbmc sim: replica 1 of 2 \(0%\), [0-9.]+ s, ETA unknown$" "$WORK/always.err"
"$LBMC" sim "${quick[@]}" --progress never >/dev/null 2>"$WORK/never.err"
check "--progress never: nothing" test ! -s "$WORK/never.err"
"$LBMC" sim "${quick[@]}" --progress sometimes >/dev/null 2>"$WORK/bad.err"
check "--progress sometimes: exit 2" test $? -eq 2
check "--progress sometimes: names the flag and the choices" \
  grep -q "\-\-progress: 'sometimes' is not allowed; allowed: auto, always, never" "$WORK/bad.err"

# A heavy load from empty, far too short: not stationary.
short=(--n 100000 --lambda 0.95 --policy 'jsq(2)' --time 20 --warmup 0 --replicas 2)
"$LBMC" sim "${short[@]}" --engine occupancy >"$WORK/occ.out" 2>&1
check "occupancy from empty, not stationary: the advice names --init meanfield" \
  grep -q "^  or start near the mean-field fixed point: --init meanfield" "$WORK/occ.out"
"$LBMC" sim "${short[@]}" --engine occupancy --json 2>/dev/null | grep -q '"suggested_init": "meanfield"'
check "occupancy from empty, not stationary: JSON suggested_init" test $? -eq 0
# From the mean-field point, long enough for the relaxation rules (about 23 relaxation
# times at n = 1000, lambda 0.9): ok, and no advice.
"$LBMC" sim --n 1000 --lambda 0.9 --policy 'jsq(2)' --time 400 --warmup 20 --replicas 2 \
  --engine occupancy --init meanfield >"$WORK/mf.out" 2>&1
check "with --init meanfield: no such advice" test "$(grep -c "init meanfield" "$WORK/mf.out")" -eq 0
check "with --init meanfield: ok" grep -q "^status: ok" "$WORK/mf.out"
small=(--n 1000 --lambda 0.95 --time 20 --warmup 0 --replicas 2)
"$LBMC" sim "${small[@]}" --policy 'jsq(2)' --engine servers >"$WORK/srv.out" 2>&1
check "servers, not stationary" grep -q "^status: not_stationary" "$WORK/srv.out"
check "servers (a mean-field start): the advice names --init meanfield" \
  grep -q "^  or start near the mean-field fixed point: --init meanfield" "$WORK/srv.out"
"$LBMC" sim "${small[@]}" --policy 'lwl(2)' >"$WORK/lwl.out" 2>&1
check "lwl(2) (no occupancy form, no mean-field start), not stationary" \
  grep -q "^status: not_stationary" "$WORK/lwl.out"
check "lwl(2): no --init meanfield advice" test "$(grep -c "init meanfield" "$WORK/lwl.out")" -eq 0


# The verdict's words. A run far too short to read its relaxation time (no reading at
# all) says so, and does not call its period (1e-9) "shorter than" the raw reading's lower
# bound (5.5e-11) it quotes. A reason longer than its buffer (767 characters: Lomax 1.5,
# where the long heavy-tail clause comes last) ends with "..." instead of stopping
# mid-word, and the mean wait of that law is "inf", never a number.
"$LBMC" sim --n 1e12 --lambda 0.5 --policy 'jsq(2)' --time 1e-9 --warmup 0 --progress never \
  --json >"$WORK/short.json" 2>/dev/null
check "a run too short to read tau: 'too short to measure', not 'shorter than' a smaller number" \
  /usr/bin/python3 -c "import json, sys
r = json.load(open(sys.argv[1]))['reason']
print(r[:400])
sys.exit(not ('too short to measure the relaxation time' in r and 'far longer than the run' in r
              and 'shorter than the relaxation' not in r))" "$WORK/short.json"
"$LBMC" sim --n 100 --lambda 0.5 --service lomax:shape=1.5 --replicas 2 --time 100 --warmup 10 \
  --progress never --json >"$WORK/lomax.json" 2>/dev/null
check "Lomax 1.5: mean_wait inf; a reason cut at its buffer ends with '...'" \
  /usr/bin/python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
r, w = d['reason'], d['estimates']['mean_wait']
print(len(r), repr(r[-60:]), w['mean'], w['flags'])
sys.exit(not (w['mean'] == 'inf' and w['flags'] == ['infinite'] and len(r) <= 767
              and (r.endswith('...') or r.endswith('at any run length'))))" "$WORK/lomax.json"
# -o with stdout and stderr in one file: the table whole, then "wrote" (stdout is flushed
# first; a table of more than 4 KiB, the pairs', was cut by it)
"$LBMC" sim "${quick[@]}" --pairs --progress never -o "$WORK/pairs.h5" >"$WORK/both" 2>&1
check "-o into one file with the table: 'lbmc sim: wrote' is the last line, the table whole" \
  /usr/bin/python3 -c "import sys
lines = open(sys.argv[1]).read().splitlines()
sys.exit(not (lines[-1].startswith('lbmc sim: wrote ')
              and sum('lbmc sim: wrote' in l for l in lines) == 1 and len(lines) > 60))" "$WORK/both"


# --pairs with a pool of one server: a warning that its pair statistics stay empty, exit 0
"$LBMC" sim --n 1 --lambda 0.5 --time 10 --warmup 1 --pairs --progress never >/dev/null \
  2>"$WORK/one.err"
check "--pairs on one server: exit 0 and a warning naming --pairs and the pool" \
  grep -qF "lbmc: warning: --pairs: pool 1 has 1 server: the pair statistics within it" "$WORK/one.err"

finish
