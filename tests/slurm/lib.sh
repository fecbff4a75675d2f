# Shared by the Slurm tests that submit sweeps (sweep.sh, arrays.sh); sourced, after
# `set -uo pipefail`. Sets SRC (the tree: LBMC_SOURCE_DIR, else from this path),
# LBMC (required), C (cluster.sh), SUBMIT (slurm/submit), a throw-away cluster
# directory D with a work directory W, removed at exit with the cluster stopped and
# the background processes of bg_pids killed (KEEP_SLURM_DIR=1 keeps D); and the
# helpers ok/bad/check (counted in pass/fail), show, compare, wj, submit,
# tasks_are, jobcomp_states, is_complete.
# shellcheck shell=bash
# shellcheck disable=SC2034  # the variables are for the scripts that source this
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=${LBMC_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
LBMC=${LBMC:?set LBMC to the lbmc program}
C=$here/cluster.sh
SUBMIT=$SRC/slurm/submit
D=$(mktemp -d /tmp/lbmc-slurm.XXXXXX)
W=$D/work
mkdir -p "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
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
compare() { /usr/bin/python3 "$SRC/tests/run/compare.py" "$@"; }
wj() { "$C" wait-job "$D" "$@"; }

# submit NAME ARGS...: slurm/submit into $W/NAME; sets sub_rc, sub_out (stdout
# and stderr), array_id, merge_id.
submit() {
    local name=$1; shift
    sub_out=$("$SUBMIT" "$@" --dir "$W/$name" 2>&1)
    sub_rc=$?
    array_id=$(sed -n 's/^submitted shard array \([0-9]*\) .*/\1/p' <<< "$sub_out")
    merge_id=$(sed -n 's/^submitted merge job *\([0-9]*\) .*/\1/p' <<< "$sub_out")
    echo "    submit $name: rc=$sub_rc array=${array_id:-none} merge=${merge_id:-none}"
    [ "$sub_rc" -eq 0 ] && [ -n "$array_id" ] && [ -n "$merge_id" ]
}
# tasks_are ARRAY K STATE: wait-job output lists K tasks, all in STATE.
tasks_are() {
    local out=$1 k=$2 state=$3
    [ "$(wc -l <<< "$out")" -eq "$k" ] && ! grep -qv " $state\$" <<< "$out"
}
# jobcomp_states ARRAYID TASK: JobState of every record of that array task.
jobcomp_states() {
    awk -v a="ArrayJobId=$1" -v t="ArrayTaskId=$2" '
        { ha = ht = 0; s = ""
          for (i = 1; i <= NF; i++) {
              if ($i == a) ha = 1; if ($i == t) ht = 1
              if ($i ~ /^JobState=/) s = substr($i, 10)
          }
          if (ha && ht) print s }' "$D/jobcomp.txt"
}
is_complete() { [ -f "$1" ] && "$LBMC" info "$1" | head -n 1 | grep -qv INCOMPLETE; }
