# Shared by the runner tests: LBMC (the program), SRC (the source tree), a scratch
# directory removed at exit, mpirun that works as root and on 2 cores with 4 ranks.
set -u
LBMC=${LBMC:?set LBMC to the lbmc program}
SRC=${LBMC_SOURCE_DIR:?set LBMC_SOURCE_DIR to the source tree}
HERE="$SRC/tests/run"
LBMC_TEST_NAME=run-test
# shellcheck source=tests/lib/check.sh
. "$SRC/tests/lib/check.sh"

mpi() { # mpi NP ARGS...: lbmc ARGS under mpirun with NP ranks
  local np=$1
  shift
  mpirun --oversubscribe -np "$np" "$LBMC" "$@"
}

compare() { /usr/bin/python3 "$HERE/compare.py" "$@"; }
