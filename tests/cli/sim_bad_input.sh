#!/usr/bin/env bash
# Bad input to `lbmc sim`: each case must exit with status 2 and print a message that
# names the flag, the value and what is allowed. Usage: sim_bad_input.sh [LBMC]
set -u
LBMC=${1:-${LBMC:-lbmc}}
pass=0 fail=0
ok="--n 10 --lambda 0.5 --pools 1:1:inf --time 5 --warmup 1"
okt="--n 10 --lambda 0.5 --pools 1:1:inf" # a transient run: no --time, --warmup

# expect STATUS PATTERN ARGS...: run lbmc with ARGS, check the exit status and that
# stderr (or stdout for status 0) matches the extended regex PATTERN.
expect() {
  local want=$1 pat=$2
  shift 2
  local out err rc
  out=$(mktemp) err=$(mktemp)
  "$LBMC" "$@" >"$out" 2>"$err"
  rc=$?
  if [ "$rc" -eq "$want" ] && grep -Eq -- "$pat" "$err" "$out"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: lbmc $* -> exit $rc (want $want), output:"
    sed 's/^/    /' "$err" "$out" | head -5
    echo "    (wanted /$pat/)"
  fi
  rm -f "$out" "$err"
}

# shellcheck disable=SC2086
{
expect 2 "--lambda: -1 is not allowed; a positive finite number" sim --n 10 --lambda -1 --pools 1:1:inf
expect 2 "--transient: '0:1:0.3' is not allowed; allowed: DT dividing T1 - T0" sim $ok --transient 0:1:0.3
expect 2 "--transient: '5:1:1' is not allowed; allowed: 0 <= T0 < T1 and DT > 0" sim $ok --transient 5:1:1
expect 2 "--transient: '0:x' is not allowed; allowed: T0:T1:DT" sim $ok --transient 0:x
# the observation times are numbers as every other: decimal, whole (strtod took these)
expect 2 "--transient: '0x1:10:1' is not allowed; allowed: T0:T1:DT" sim $okt --transient 0x1:10:1
expect 2 "--transient: '0:inf:1' is not allowed; allowed: T0:T1:DT" sim $okt --transient 0:inf:1
expect 2 "--transient: '0:10:nan' is not allowed; allowed: T0:T1:DT" sim $okt --transient 0:10:nan
expect 2 "--transient: '0:10:1x' is not allowed; allowed: T0:T1:DT" sim $okt --transient 0:10:1x
expect 2 "--transient: '0:1e999:1' is not allowed; allowed: T0:T1:DT" sim $okt --transient 0:1e999:1
expect 2 "--init: 'tail:0x1' is not allowed; allowed: tail:F1,F2" sim $ok --init tail:0x1
expect 2 "--init: 'tail:1,nan' is not allowed; allowed: tail:F1,F2" sim $ok --init tail:1,nan
expect 2 "--init: 'tail:1,0.5junk' is not allowed; allowed: tail:F1,F2" sim $ok --init tail:1,0.5junk
expect 2 "--warmup: auto is not allowed with --transient" sim $ok --transient 0:1:1 --warmup auto
expect 2 "--precision: not with --transient" sim $okt --transient 0:1:1 --precision p_wait:0.1
expect 2 "--limit: .refinedx. is not allowed; allowed: nothing" sim $ok --limit refinedx
expect 2 "--time: not allowed with --transient" sim $okt --transient 0:1:1 --time 5
expect 2 "--warmup: not allowed with --transient" sim $okt --transient 0:1:1 --warmup 0
expect 2 "--init: 'tail:0.5,0.7' is not allowed; allowed: tail:F1,F2" sim $ok --init tail:0.5,0.7
expect 2 "--init: 'tail:1;0.5;0.2' .*3 lists of fractions for 1 pools|3 lists of fractions for 1 pools" sim $ok --init "tail:1;0.5;0.2"
expect 2 "a tail:... start is not allowed with the servers engine" sim $ok --engine servers --init tail:1,0.5
expect 2 "F_3 = 0.5 > 0 but pool 1 holds at most 2 customers" sim --n 10 --lambda 0.5 --pools 1:1:2 --init tail:1,1,0.5
expect 2 "--lambda: 'abc' is not a number" sim --n 10 --lambda abc --pools 1:1:inf
expect 2 "--n: 0 is not allowed; an integer from 1" sim --n 0 --lambda 0.5 --pools 1:1:inf
expect 2 "--n: 'ten' is not an integer" sim --n ten --lambda 0.5 --pools 1:1:inf
expect 2 "--n: the number of servers is required" sim --lambda 0.5 --pools 1:1:inf
expect 2 "beta: the pool fractions sum to 0.9.*allowed: a sum of 1" sim --n 10 --lambda 0.5 --pools 0.5:1:inf,0.4:1:inf
expect 2 "pool 1: mu: -2 is not allowed" sim --n 10 --lambda 0.5 --pools 1:-2:inf
expect 2 "pool 1: buffer: 0 is not allowed; a buffer is an integer >= 1" sim --n 10 --lambda 0.5 --pools 1:1:0
expect 2 "pool 2 '0.5:2' is not allowed; write beta:mu:buffer" sim --n 10 --lambda 0.5 --pools 0.5:1:inf,0.5:2
expect 2 "pool 1: beta: 1.5 is not allowed" sim --n 10 --lambda 0.5 --pools 1.5:1:inf
expect 2 "d = 5 exceeds n = 3; allowed: 1 <= d <= n" sim --n 3 --lambda 0.5 --pools 1:1:inf --policy "jsq(5)"
expect 2 "c = 4 exceeds n = 3" sim --n 3 --lambda 0.5 --pools 1:1:inf --policy "balanced(4)"
expect 2 "policy: 'foo' is not allowed \(unknown policy\); allowed: random, jsq\(d\)" sim $ok --policy foo
expect 2 "policy: 'pull\(2\)' is not allowed \(this policy takes no parameter\)" sim $ok --policy "pull(2)"
expect 2 "policy: 'jsq\(0\)': d = 0 is not allowed" sim $ok --policy "jsq(0)"
expect 2 "--stale: applies only to policy pull, not to jsq\(2\)" sim $ok --policy "jsq(2)" --stale keep
expect 2 "stale: 'never' is not allowed; allowed: withdraw, keep" sim $ok --policy pull --stale never
expect 2 "stale: 'withdraw' is not allowed with policy jiq" sim $ok --policy jiq --stale withdraw
expect 2 "--sampling: applies only to policies jsq\(d\), lwl\(d\), not to pull" sim $ok --policy pull --sampling with_replacement
expect 2 "sampling: 'some' is not allowed; allowed: distinct, with_replacement" sim $ok --policy "jsq(2)" --sampling some
expect 2 "--routers: 0 is not allowed" sim $ok --routers 0
expect 2 "--confidence: 1.5 is not allowed; a number strictly between 0 and 1" sim $ok --confidence 1.5
expect 2 "--batches: 1 is not allowed; an integer from 2" sim $ok --batches 1
expect 2 "--warmup: -5 is not allowed; a finite number >= 0" sim $ok --warmup -5
expect 2 "--time: 0 is not allowed; a positive finite number" sim --n 10 --lambda 0.5 --pools 1:1:inf --time 0
expect 2 "--seed: 3000000000 is not allowed; an integer from 0 to 2147483647" sim $ok --seed 3000000000
expect 2 "--replicas: 0 is not allowed" sim $ok --replicas 0
expect 2 "--tail-k: 0 is not allowed" sim $ok --tail-k 0
expect 2 "'--bogus' is not an option of lbmc sim" sim $ok --bogus
expect 2 "--engine: 'fast' is not allowed; allowed: auto, occupancy, occupancy-ph, servers, lean, general" sim $ok --engine fast
expect 2 "--engine: occupancy cannot simulate this model \\(lwl\\(2\\) reads workloads\\); engines that apply: lean, general" sim $ok --policy 'lwl(2)' --engine occupancy
expect 2 "--engine: occupancy cannot simulate this model \\(general service \\(pool 1: lognormal:scv=4\\)\\); engines that apply: lean, general" sim $ok --service lognormal:scv=4 --engine occupancy
expect 2 "--engine: occupancy cannot simulate this model \\(pull with stale: keep and R > 1.*engines that apply: servers, lean, general" sim $ok --policy jiq --routers 2 --engine occupancy
expect 2 "--engine: servers cannot simulate this model \\(lwl\\(2\\) reads workloads\\); engines that apply: lean, general" sim $ok --policy 'lwl(2)' --engine servers
expect 2 "--engine: servers cannot simulate this model \\(n = 3000000000 exceeds the per-server limit of 2147483647 servers.*occupancy engine.*engines that apply: occupancy" sim --n 3e9 --lambda 0.5 --pools 1:1:inf --time 1e-6 --warmup 0 --engine servers
expect 2 "--engine: no engine can simulate this model \\(occupancy: lwl\\(2\\) reads workloads; occupancy-ph: lwl\\(2\\) reads workloads; servers: .*general: n = 3000000000 exceeds the per-server limit" sim --n 3e9 --lambda 0.5 --pools 1:1:inf --time 1e-6 --warmup 0 --policy 'lwl(2)'
# a number past the limit and one past any integer: the same words, naming the limit
expect 2 "--n: 2000000000000 is not allowed; an integer from 1 to 10\\^12 \\(servers\\) is required" sim --n 2e12 --lambda 0.5 --pools 1:1:inf
expect 2 "--n: '1e300' is not allowed; an integer from 1 to 10\\^12 \\(servers\\) is required" sim --n 1e300 --lambda 0.5 --pools 1:1:inf
expect 2 "--max-customers: 3000000000 is not allowed with the servers engine, which holds customers one by one" sim $ok --engine servers --max-customers 3e9
expect 2 "--init: 'full' is not allowed; allowed: empty, meanfield" sim $ok --init full
expect 2 "--lambda: a value is required" sim --n 10 --pools 1:1:inf --lambda
expect 2 "'frobnicate' is not a command; allowed: sim" frobnicate
# --service: the distribution, its parameters, one per pool
two="--n 10 --lambda 0.5 --pools 0.5:1:inf,0.5:2:inf --time 5 --warmup 1"
# a text over 65535 characters: its length is named, not called "not a distribution"
long_r=$(printf '1,%.0s' $(seq 40000))
expect 2 "--service: 'coxian:r=\\[1,1,1,.*' \\(80012 characters\\) is not allowed; allowed: at most 65535 characters \\(a phase-type law has at most 16 phases\\)" sim $ok --service "coxian:r=[${long_r}1]"
expect 2 "--service: 'gamma' is not a service distribution; allowed: exponential, deterministic, erlang, hyperexponential, lognormal, weibull, lomax" sim $ok --service gamma:k=2
expect 2 "--service: 'cv' is not a parameter of lognormal; write lognormal:scv=VALUE" sim $ok --service lognormal:cv=2
expect 2 "--service: lognormal needs the parameter scv; write lognormal:scv=VALUE" sim $ok --service lognormal
expect 2 "--service: k = 2.5 is not allowed; erlang needs an integer k from 1 to 1000000" sim $ok --service erlang:k=2.5
expect 2 "--service: scv = 0 is not allowed; lognormal needs a finite scv > 0" sim $ok --service lognormal:scv=0
expect 2 "--service: shape = 1 is not allowed; lomax needs a finite shape > 1" sim $ok --service lomax:shape=1
expect 2 "--service: shape = 0.01 is not allowed; weibull needs a finite shape >= 0.1" sim $ok --service weibull:shape=0.01
expect 2 "--service: scv = 0.5 is not allowed; a hyperexponential has scv >= 1" sim $ok --service hyperexponential:scv=0.5
expect 2 "--service: p/r1 \+ \(1-p\)/r2 = 0.75; allowed: the mean must be 1" sim $ok --service hyperexponential:p=0.5,r1=1,r2=2
expect 2 "--service: hyperexponential: give either scv or p, r1, r2, not both" sim $ok --service hyperexponential:scv=4,p=0.5
expect 2 "--service: 'lognormal:4' is not allowed; write NAME\[:KEY=VALUE" sim $ok --service lognormal:4
expect 2 "--service: scv: 'four' is not a number" sim $ok --service lognormal:scv=four
expect 2 "--service: '' is not allowed; a service distribution such as exponential or lognormal:scv=4 is required" sim $ok --service ""
expect 2 "--service: 'exponential;deterministic;erlang:k=2' gives 3 distributions for 2 pools; allowed: one for all pools, or one per pool separated by ';'" sim $two --service "exponential;deterministic;erlang:k=2"
expect 2 "--service: pool 2: '' is not allowed; a service distribution" sim $two --service "exponential;"
expect 2 "--service: pool 2: k = 0 is not allowed; erlang needs an integer k" sim $two --service "exponential;erlang:k=0"
# --service: phase-type laws (ph, coxian): each error names the key, the value and what is allowed
expect 2 "--service: ph needs the parameters alpha and T; write ph:alpha=" sim $ok --service "ph:alpha=[1]"
expect 2 "--service: alpha sums to 0.90000000000000002; allowed: a probability vector summing to 1 \(within 1e-12\)" sim $ok --service "ph:alpha=[0.5,0.4],T=[[-1,0],[0,-1]]"
expect 2 "--service: alpha\[2\] = -0.5 is not allowed; alpha holds the probabilities of the start phases, each >= 0" sim $ok --service "ph:alpha=[1.5,-0.5],T=[[-1,0],[0,-1]]"
expect 2 "--service: T\[2\]\[1\] = -1 is not allowed; off the diagonal T holds the rates from phase to phase, >= 0" sim $ok --service "ph:alpha=[1,0],T=[[-1,0],[-1,-1]]"
expect 2 "--service: T\[1\]\[1\] = 2 is not allowed; a diagonal entry of T is minus the total rate out of its phase, < 0" sim $ok --service "ph:alpha=[1,0],T=[[2,0],[0,-1]]"
expect 2 "--service: row 1 of T sums to 0.5; allowed: row sums <= 0 .*T must be a sub-generator" sim $ok --service "ph:alpha=[1,0],T=[[-1,1.5],[0,-1]]"
expect 2 "--service: from phase 1 of T absorption is never reached .*allowed: every phase leads to absorption" sim $ok --service "ph:alpha=[1,0],T=[[-1,1],[1,-1]]"
expect 2 "--service: ph: the mean alpha \(-T\)\^-1 1 = 2; allowed: the mean must be 1 \(within 1e-09\)" sim $ok --service "ph:alpha=[1,0],T=[[-1,1],[0,-1]]"
expect 2 "--service: T has 1 rows; allowed: 2 rows of 2, one per phase \(alpha has 2 entries\)" sim $ok --service "ph:alpha=[1,0],T=[[-2,2]]"
expect 2 "--service: row 2 of T has 3 entries; allowed: 2" sim $ok --service "ph:alpha=[1,0],T=[[-2,2],[0,-2,0]]"
expect 2 "--service: alpha has 17 entries; allowed: at most 16 phases" sim $ok --service "ph:alpha=[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],T=[[-1]]"
expect 2 "--service: T: '\[\[-1\]' is not allowed; rows are separated by commas and the list closed" sim $ok --service "ph:alpha=[1],T=[[-1]"
expect 2 "--service: T: 'x' is not a number" sim $ok --service "ph:alpha=[1],T=[[x]]"
expect 2 "--service: scv = 0.25 is not allowed; coxian:scv=C needs 0.5 <= C <= 1e\+12" sim $ok --service coxian:scv=0.25
expect 2 "--service: coxian: p has 0 entries and r 2; allowed: m - 1 continuation probabilities" sim $ok --service "coxian:r=[2,2]"
expect 2 "--service: p\[1\] = 1.5 is not allowed; a continuation probability is in \(0, 1\]" sim $ok --service "coxian:r=[2,1],p=[1.5]"
expect 2 "--service: coxian: the mean sum_i p1...p\(i-1\) / r_i = 0.75; allowed: the mean must be 1" sim $ok --service "coxian:r=[2,2],p=[0.5]"
expect 2 "--service: scv: a list is not allowed for lognormal; lists are for ph and coxian" sim $ok --service "lognormal:scv=[4]"
expect 2 "--service: pool 2: alpha sums to 2" sim $two --service "erlang:k=2;ph:alpha=[1,1],T=[[-1,0],[0,-1]]"
expect 2 "--engine: occupancy cannot simulate this model \(general service \(pool 1: coxian:scv=2\)\)" sim $ok --service coxian:scv=2 --engine occupancy
# --mu-k: the pool, the speeds
expect 2 "--mu-k: '1' is not allowed; write J=R1,R2,...,RL" sim $ok --mu-k 1
expect 2 "--mu-k: '1=' is not allowed; write J=R1,R2,...,RL" sim $ok --mu-k 1=
expect 2 "--mu-k: pool 2 is not allowed; --pools has 1 pool, allowed: 1 to 1" sim $ok --mu-k 2=1,2
expect 2 "--mu-k: pool 0 is not allowed; --pools has 2 pools, allowed: 1 to 2" sim $two --mu-k 0=1
expect 2 "--mu-k: pool: 'x' is not an integer" sim $ok --mu-k x=1
expect 2 "--mu-k: pool 1: speed 2: -2 is not allowed; a positive finite number is required" sim $ok --mu-k 1=1,-2
expect 2 "--mu-k: pool 1: speed 2: an empty value is not a number" sim $ok --mu-k 1=1,,2
expect 2 "--mu-k: pool 1: speed 2: 'abc' is not a number" sim $ok --mu-k 1=1,abc
expect 2 "--mu-k: pool 1: more than 64 speeds are not allowed" sim $ok --mu-k "1=$(seq -s, 1 65)"
expect 2 "--mu-k: pool 1 is given twice; give each pool's speeds once" sim $two --mu-k 1=1,2 --mu-k 1=3
# numbers: one reader checks the whole text, the range and underflow
long_frac="1.00000000000000000000000000000000000000000000000000000000000000e-3/2"  # 67 characters before the slash
expect 0 "lambda = 0.0005 per server" sim $ok --lambda "$long_frac"
expect 0 "mu = 1, buffer = inf" sim --n 10 --lambda 0.5 --pools "1:100000000000000000000000000000000000000000000000000000000000000/100000000000000000000000000000000000000000000000000000000000000:inf" --time 5 --warmup 1
expect 2 "--lambda: '1e-400' is not allowed; a number is 0 or of magnitude at least 2.225e-308 \(this one underflows" sim $ok --lambda 1e-400
expect 2 "--warmup: '1e-400' is not allowed; a number is 0 or of magnitude at least" sim $ok --warmup 1e-400
expect 2 "--warmup: '1e-310' is not allowed; a number is 0 or of magnitude at least" sim $ok --warmup 1e-310
expect 2 "--time: '1e-300/1e300' is not allowed; a number is 0 or of magnitude at least" sim $ok --time 1e-300/1e300
expect 2 "--time: '1e400' is not allowed; a number of magnitude at most 1.798e\+308 is required \(this one overflows\)" sim $ok --time 1e400
expect 2 "--time: '1e300/1e-300' is not allowed; a number of magnitude at most" sim $ok --time 1e300/1e-300
expect 2 "pool 1: mu: '1/1e-400' is not allowed; a number is 0 or of magnitude at least" sim --n 10 --lambda 0.5 --pools 1:1/1e-400:inf
expect 2 "--lambda: '0.5/2x' is not a number" sim $ok --lambda 0.5/2x
expect 2 "--lambda: '100000000000000000000000000000000000000000000000000000000000000x/2' is not a number" sim $ok --lambda "100000000000000000000000000000000000000000000000000000000000000x/2"
expect 2 "--n: '99999999999999999999' is not allowed; an integer from 1 to 10\\^12 \\(servers\\) is required" sim --n 99999999999999999999 --lambda 0.5 --pools 1:1:inf
expect 2 "--seed: '1e19' is not allowed; an integer from 0 to 2147483647 is required" sim $ok --seed 1e19
expect 2 "--warmup: '1e-400' is not allowed" sim $ok --warmup 1e-400
expect 2 "--replicas: '1e-400' is not an integer" sim $ok --replicas 1e-400
expect 2 "--batches: '1e400' is not allowed; an integer from 2 to 100000 is required" sim $ok --batches 1e400
expect 2 "--max-customers: '1e30' is not allowed; an integer from 0 \\(the default cap\\) to 2\\^62 is required" sim $ok --max-customers 1e30
expect 2 "policy: 'jsq\\(1e30\\)': the parameter: '1e30' is not allowed; an integer from 1 to n" sim $ok --policy 'jsq(1e30)'
expect 2 "pool 1: buffer: '1e30' is not allowed; an integer >= 1 \\(customers per server" sim --n 10 --lambda 0.5 --pools 1:1:1e30
expect 2 "--service: scv: '1e-400' is not allowed; a number is 0 or of magnitude at least" sim $ok --service lognormal:scv=1e-400
# -o -: HDF5 needs a seekable file; "-" would have become a file named '-'
expect 2 "output: '-' \\(standard output\\) is not allowed: HDF5 writes a file it can seek in" sim $ok -o -
if [ -e - ]; then
  fail=$((fail + 1))
  echo "FAIL: lbmc sim -o - left a file named '-'"
fi
# did you mean: a misspelt option of each command, a misspelt policy (its parameter kept)
expect 2 "'--polcy' is not an option of lbmc sim \\(did you mean '--policy'\\?\\)" sim $ok --polcy pull
expect 2 "'--lamda=0.5' is not an option of lbmc sim \\(did you mean '--lambda'\\?\\)" sim --n 10 --lamda=0.5
expect 2 "'--outptu' is not an option of lbmc run \\(did you mean '--output'\\?\\)" run --outptu x.h5 job.yaml
expect 2 "'--metrix' is not an option of lbmc info \\(did you mean '--metrics'\\?\\)" info --metrix p x.h5
expect 2 "'--frobnicate' is not an option of lbmc sim \\(see lbmc sim --help\\)" sim $ok --frobnicate
expect 2 "policy: 'jsk\\(2\\)' is not allowed \\(unknown policy; did you mean 'jsq\\(2\\)'\\?\\)" sim $ok --policy 'jsk(2)'
expect 2 "policy: 'pul' is not allowed \\(unknown policy; did you mean 'pull'\\?\\)" sim $ok --policy pul
# good input still works: status ok needs a run long against the relaxation time (each
# server is an M/M/1 queue at rho = 0.5 under random routing, whose relaxation time is
# exactly (1 + rho) / (1 - rho)^2 = 6): the bad-input runs ($ok, time 5) are honestly
# not_stationary
good="--n 10 --lambda 0.5 --pools 1:1:inf --time 2000 --warmup 100"
expect 0 "status: ok" sim $good
expect 0 "status: not_stationary: the measured period \(5 per replica\) is 0.83 relaxation times: .* over 6 \(integrated autocorrelation time, exact" sim $ok
expect 0 "usage: lbmc sim" sim --help
expect 0 "\"status\": \"ok\"" sim $good --json
# all observed (no buffer, nobody turned away): the bound as 1 - b (it printed "> 1" when
# the bound rounded to 1 at six digits)
expect 0 "admitted_share\\[1\\] +1 \\(all observed, > 1 - [0-9.]+(e-[0-9]+)?\\) " sim $good
expect 0 "pool 2: beta = 0.5, mu = 1, buffer = inf, 5 servers, service deterministic, speeds mu_k = 1, 2, 3" sim $two --service "lognormal:scv=4;deterministic" --mu-k 2=1,2,3
expect 0 "\"service\": \"erlang:k=3\"" sim $two --service erlang:k=3 --json
expect 0 "\"service\": \"ph:alpha=\[0.5,0.5\],T=\[\[-2,1\],\[0,-1\]\]\"" sim $two --service "ph:alpha=[1/2,1/2],T=[[-2,1],[0,-1]];coxian:scv=3" --json
expect 0 "service coxian:r=\[2,1\],p=\[0.5\]" sim $ok --service "coxian:r=[2,1],p=[1/2]"
}
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
