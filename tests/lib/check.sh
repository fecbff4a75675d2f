# Shared by the shell tests (source it after `set -u`): a scratch directory $WORK removed
# at exit (its name from LBMC_TEST_NAME, default "test"), Open MPI allowed to run as root
# and to oversubscribe (4 ranks on 2 cores), and the pass/fail bookkeeping:
#   check DESCRIPTION COMMAND...   runs COMMAND, prints ok/FAIL, counts failures
#   finish                         prints the count; its status is the test's
WORK=$(mktemp -d "/tmp/lbmc-${LBMC_TEST_NAME:-test}.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
fails=0

check() {
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

finish() {
  echo "$fails failure(s)"
  [ "$fails" -eq 0 ]
}
