# Shared by the runner tests: LBMC (the program), SRC (the source tree), a scratch
# directory removed at exit, mpirun that works as root and on 2 cores with 4 ranks.
set -u
LBMC=${LBMC:?set LBMC to the lbmc program}
SRC=${LBMC_SOURCE_DIR:?set LBMC_SOURCE_DIR to the source tree}
HERE="$SRC/tests/run"
WORK=$(mktemp -d /tmp/lbmc-run-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
fails=0

mpi() { # mpi NP ARGS...: lbmc ARGS under mpirun with NP ranks
  local np=$1
  shift
  mpirun --oversubscribe -np "$np" "$LBMC" "$@"
}

check() { # check DESCRIPTION COMMAND...: run, record failure
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

compare() { /usr/bin/python3 "$HERE/compare.py" "$@"; }

finish() {
  echo "$fails failure(s)"
  [ "$fails" -eq 0 ]
}
