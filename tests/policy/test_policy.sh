#!/usr/bin/env bash
# The test-only policy round_robin (round_robin.c, registered only in lbmc-test-policy)
# through every place that lists policies: lbmc sim --help, lbmc sim (name, alias,
# messages, a wrong parameter naming it among the policies allowed), a job file through
# lbmc run --dry-run and lbmc run, lbmc info; and lbmc itself, which does not know it.
# Usage: test_policy.sh LBMC_TEST_POLICY (LBMC, LBMC_SOURCE_DIR from the environment).
set -u
TP=${1:?usage: test_policy.sh LBMC_TEST_POLICY}
LBMC=${LBMC:?set LBMC to the lbmc program}
HERE="${LBMC_SOURCE_DIR:?set LBMC_SOURCE_DIR}/tests/policy"
LBMC_TEST_NAME=policy-test
# shellcheck source=tests/lib/check.sh
. "${LBMC_SOURCE_DIR:?set LBMC_SOURCE_DIR}/tests/lib/check.sh"
sys="--n 20 --lambda 0.8 --pools 1:1:inf --replicas 8 --time 2000 --warmup 100 --seed 3"

# --help lists the policy and its alias, with their help lines.
"$TP" sim --help >"$WORK/help" 2>&1
check "--help lists round_robin" grep -Eq "^ +round_robin +each router sends" "$WORK/help"
check "--help lists the alias rr" grep -Eq "^ +rr +round_robin, short" "$WORK/help"
check "--help still lists jiq" grep -Eq "^ +jiq +pull with --stale keep" "$WORK/help"

# lbmc sim: by name and by alias; no messages. With one router a server sees every
# 20th arrival of a Poisson stream: a GI/M/1 queue with Erlang-20 interarrival times,
# whose probability of waiting is the root sigma of sigma = (k lambda / (k lambda +
# mu (1 - sigma)))^k, k = 20 (Kleinrock, Queueing Systems I, section 6.4).
# shellcheck disable=SC2086
{
  "$TP" sim $sys --policy round_robin --json >"$WORK/rr.json"
  check "sim --policy round_robin" test $? -eq 0
  "$TP" sim $sys --policy rr --json >"$WORK/rr2.json"
  check "sim --policy rr" test $? -eq 0
  "$TP" sim $sys --policy 'round_robin(2)' >"$WORK/err" 2>&1
  check "round_robin(2): exit 2" test $? -eq 2
  check "round_robin(2): message from the table" grep -q \
    "'round_robin(2)' is not allowed (this policy takes no parameter); allowed: random, jsq(d), jsq, pull, balanced(c), lwl(d), round_robin, jiq, rr" \
    "$WORK/err"
  "$LBMC" sim $sys --policy round_robin >"$WORK/err" 2>&1
  check "lbmc does not know round_robin (exit 2)" test $? -eq 2
  check "lbmc: unknown policy" grep -q "'round_robin' is not allowed (unknown policy)" "$WORK/err"
}
check "sim: JSON of round_robin and rr" /usr/bin/python3 - "$WORK/rr.json" "$WORK/rr2.json" <<'PY'
import json, sys
rr, rr2 = (json.load(open(p)) for p in sys.argv[1:3])
est = rr["estimates"]
assert rr["model"]["policy"] == "round_robin", rr["model"]
assert rr2["model"]["policy"] == "rr", rr2["model"]
assert est["messages_per_arrival"]["mean"] == 0
assert est == rr2["estimates"]  # the alias is the same policy: the same numbers
k, lam, sigma = 20, 0.8, 0.5
for _ in range(500):
    sigma = (k * lam / (k * lam + 1 - sigma)) ** k
p, se = est["p_wait"]["mean"], est["p_wait"]["std_err"]
print("p_wait %.5f, std err %.5f, GI/M/1 sigma %.5f" % (p, se, sigma))
assert abs(p - sigma) <= 5 * se
PY

# A job file: the grid, a run, lbmc info; lbmc itself refuses the job at the policy.
"$TP" run "$HERE/round_robin.yaml" --dry-run >"$WORK/dry" 2>&1
check "run --dry-run" grep -q "round_robin" "$WORK/dry"
"$TP" run "$HERE/round_robin.yaml" -o "$WORK/rr.h5" --quiet >"$WORK/run" 2>&1
check "run: exit 0" test $? -eq 0
"$TP" info "$WORK/rr.h5" >"$WORK/info" 2>&1
check "info: a row of round_robin" grep -Eq "^ +0 .* round_robin .* ok( |$)" "$WORK/info"
check "info: a row of rr" grep -Eq "^ +1 .* rr .* ok( |$)" "$WORK/info"
"$LBMC" run "$HERE/round_robin.yaml" --dry-run >"$WORK/err" 2>&1
check "lbmc refuses the job (exit 2)" test $? -eq 2
check "lbmc: the job file's line and the policies allowed" grep -Eq \
  "round_robin.yaml:7: policy.*'round_robin' is not allowed \(unknown policy\); allowed: .*lwl\(d\), jiq" \
  "$WORK/err"

finish
