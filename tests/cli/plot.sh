#!/usr/bin/env bash
# lbmc plot: from the build tree it runs the Python package of the source tree and draws
# the figure; its --help is the package's; without the package it says where it looked
# and how to get it (exit 1); the package's own argument errors pass through (exit 2).
# Usage: plot.sh LBMC
set -u
LBMC=${1:?usage: plot.sh LBMC}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fails=0
check() { # check NAME COMMAND...
  local name=$1
  shift
  if "$@" >"$WORK/out" 2>&1; then echo "ok: $name"; else
    echo "FAIL: $name"
    sed 's/^/    /' "$WORK/out" | tail -15
    fails=$((fails + 1))
  fi
}
cat >"$WORK/job.yaml" <<'YAML'
system:
  n: [10, 30]
  lambda: 0.8
  pools: [{beta: 1, mu: 1, buffer: [2, 4]}]
policy: [random, jsq(2)]
run: {replicas: 2, warmup: 10, time: 100, seed: 4}
YAML
check "a results file" "$LBMC" run "$WORK/job.yaml" -o "$WORK/r.h5" --quiet
check "lbmc plot draws a PNG" "$LBMC" plot "$WORK/r.h5" --metric p_block --x n --by policy \
  --where buffer_1=2 -o "$WORK/fig.png"
check "... a real one" /usr/bin/python3 -c "
import sys, matplotlib.image as im
a = im.imread('$WORK/fig.png'); sys.exit(0 if a.shape[0] > 100 and a.shape[1] > 100 else 1)"
check "lbmc plot --help is the package's" sh -c "'$LBMC' plot --help | grep -q -- '--metric'"
check "without the package: a clear error, exit 1" sh -c "
  LBMC_ANALYSIS_DIR='$WORK/none' '$LBMC' plot '$WORK/r.h5' --metric p_wait -o '$WORK/x.png' 2>'$WORK/err'
  [ \$? -eq 1 ] && grep -q 'needs the Python package lbmc_analysis' '$WORK/err' &&
  grep -q '$WORK/none (LBMC_ANALYSIS_DIR)' '$WORK/err' && grep -q 'cmake --install' '$WORK/err'"
check "a wrong argument: the package's message, exit 2" sh -c "
  '$LBMC' plot '$WORK/r.h5' -o '$WORK/x.png' 2>'$WORK/err'; [ \$? -eq 2 ] && grep -q -- '--metric' '$WORK/err'"
echo "plot: $fails failed"
[ "$fails" -eq 0 ]
