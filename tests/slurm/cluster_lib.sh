# Shared by every Slurm test (smoke.sh, and through lib.sh sweep.sh and arrays.sh);
# sourced, after `set -uo pipefail`. Sets here (this folder), C (cluster.sh), a
# throw-away cluster directory D with a work directory W, removed at exit with the
# cluster stopped and the background processes of bg_pids killed (KEEP_SLURM_DIR=1
# keeps D); and the helpers ok/bad/check (counted in pass/fail), show, wj.
# shellcheck shell=bash
# shellcheck disable=SC2034  # the variables are for the scripts that source this
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
C=$here/cluster.sh
D=$(mktemp -d /tmp/lbmc-slurm.XXXXXX)
W=$D/work
mkdir -p "$W"
bg_pids=()
cleanup() {
    local p
    for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    "$C" stop "$D" >/dev/null
    if [ "${KEEP_SLURM_DIR:-0}" = 1 ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

T0=$(date +%s.%N)
elapsed() { printf '%5.1fs' "$(echo "$(date +%s.%N) - $T0" | bc)"; }
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "[$(elapsed)] ok   $*"; }
bad() { fail=$((fail + 1)); echo "[$(elapsed)] FAIL $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
show() { echo "    --- $1:"; sed 's/^/    /' "$1" 2>/dev/null; }
wj() { "$C" wait-job "$D" "$@"; }
