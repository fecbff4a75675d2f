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

# preload SHIM: the LD_PRELOAD value for an interposing shim (tests/run/*.c). In a
# sanitized build the program (and the shim, built with the same flags) links the ASan
# runtime, which must be the first library loaded ("ASan runtime does not come first in
# initial library list"): then the runtime, then the shim; otherwise the shim alone.
preload() {
  local rt
  rt=$(ldd "$LBMC" 2>/dev/null | awk '/libasan\.so/ { print $3; exit }')
  echo "${rt:+$rt:}$1"
}
