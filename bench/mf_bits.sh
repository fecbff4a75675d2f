#!/bin/sh
# The mean-field start and its refined expansion of 23 models, bit for bit, into DIR:
# per model the refined mean field's lines of LBMC_DEBUG_RELAX=1 (every entry's x* value
# and 1/n term at %.17g) and lbmc sim --json --limit refined without its timing keys (its
# estimates depend on the replicas' start, rounded from the mean-field point). Compare
# two builds with: bench/mf_bits.sh OLD_LBMC a && bench/mf_bits.sh NEW_LBMC b && diff -r a b
# lwl(d) has no mean-field start (not an occupancy policy); --mu-k runs on the general
# engine: neither is here.
# Usage: bench/mf_bits.sh LBMC DIR (about 3 minutes on a loaded machine).
set -eu
LBMC=$1
DIR=$2
mkdir -p "$DIR"
i=0
while IFS='|' read -r name args; do
  [ -n "$name" ] || continue
  i=$((i + 1))
  # shellcheck disable=SC2086
  LBMC_DEBUG_RELAX=1 "$LBMC" sim $args --init meanfield --replicas 10 --warmup 5 --time 40 \
    --batches 10 --tail-k 4 --seed 3 --progress never --json --limit refined \
    >"$DIR/$name.json" 2>"$DIR/$name.err" || true
  grep '^mf ' "$DIR/$name.err" >"$DIR/$name.mf" || true
  /usr/bin/python3 - "$DIR/$name.json" <<'PY'
import json, sys
p = sys.argv[1]
try:
    d = json.load(open(p))
except ValueError:
    sys.exit(0)
def drop(o):
    if isinstance(o, dict):
        return {k: drop(v) for k, v in o.items()
                if "cpu" not in k and "seconds" not in k and "timing" not in k}
    if isinstance(o, list):
        return [drop(v) for v in o]
    return o
json.dump(drop(d), open(p, "w"), indent=1, sort_keys=True)
PY
  rm -f "$DIR/$name.err"
done <<'MODELS'
jsq2|--n 1000 --lambda 0.9 --policy jsq(2)
jsq3|--n 500 --lambda 0.95 --policy jsq(3)
jsq2-small|--n 100 --lambda 0.5 --policy jsq(2)
jsq2-repl|--n 1000 --lambda 0.9 --policy jsq(2) --sampling with_replacement
random|--n 1000 --lambda 0.8 --policy random
pull2|--n 1000 --lambda 0.9 --pools 0.5:2:inf,0.5:1/3:inf --policy pull
pull-keep|--n 1000 --lambda 0.8 --policy pull --stale keep
balanced2|--n 1000 --lambda 0.85 --pools 0.5:2:inf,0.5:0.5:inf --policy balanced(2)
jsq2-buf|--n 1000 --lambda 0.95 --pools 1:1:5 --policy jsq(2)
jsq2-2pools|--n 1000 --lambda 0.6 --pools 0.5:2:inf,0.5:0.5:inf --policy jsq(2)
jsq2-2pools-buf|--n 1000 --lambda 0.9 --pools 0.4:1.5:4,0.6:0.7:6 --policy jsq(2)
jiq|--n 1000 --lambda 0.8 --policy jiq
jsq2-erlang3|--n 1000 --lambda 0.9 --policy jsq(2) --service erlang:k=3
jsq2-h2|--n 1000 --lambda 0.85 --policy jsq(2) --service hyperexponential:scv=4
pull-h2|--n 1000 --lambda 0.8 --policy pull --service hyperexponential:scv=2
random-erlang2|--n 1000 --lambda 0.7 --policy random --service erlang:k=2
jsq2-cox-2pools|--n 1000 --lambda 0.7 --pools 0.3:1.5:inf,0.7:0.6:inf --policy jsq(2) --service coxian:scv=0.7
balanced2-erlang2|--n 1000 --lambda 0.85 --pools 0.5:2:inf,0.5:0.5:inf --policy balanced(2) --service erlang:k=2
jsq2-h2-2pools-buf|--n 1000 --lambda 0.85 --pools 0.5:1:6,0.5:1:8 --policy jsq(2) --service hyperexponential:scv=3
jsq3-erlang2-buf|--n 1000 --lambda 0.9 --pools 1:1:5 --policy jsq(3) --service erlang:k=2
pull-erlang2-2pools|--n 1000 --lambda 0.8 --pools 0.5:2:inf,0.5:0.5:inf --policy pull --service erlang:k=2
jsq2-mixed|--n 1000 --lambda 0.8 --pools 0.4:1.5:inf,0.6:0.7:inf --policy jsq(2) --service exponential;erlang:k=2
pull-mixed-buf|--n 1000 --lambda 0.8 --pools 0.3:1:5,0.7:1:inf --policy pull --service hyperexponential:scv=2;exponential
MODELS
echo "$i models into $DIR"
