# Shared by the Slurm tests that submit sweeps (sweep.sh, arrays.sh); sourced, after
# `set -uo pipefail`. Requires LBMC (the lbmc program); sets what cluster_lib.sh sets
# (the cluster directory D, W, C, ok/bad/check, show, wj, clean-up at exit), SRC (the
# tree: LBMC_SOURCE_DIR, else from this path), SUBMIT (slurm/submit); and the helpers
# compare, submit, tasks_are, jobcomp_states, is_complete.
# shellcheck shell=bash
# shellcheck disable=SC2034  # the variables are for the scripts that source this
LBMC=${LBMC:?set LBMC to the lbmc program}
# shellcheck source=tests/slurm/cluster_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/cluster_lib.sh"
SRC=${LBMC_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
SUBMIT=$SRC/slurm/submit
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
compare() { /usr/bin/python3 "$SRC/tests/run/compare.py" "$@"; }

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
