#!/usr/bin/env bash
# cmake --install into a temporary prefix, then what a user does with it: a CMake project
# with find_package(lbmc) builds and runs (one replica through lbmc::sim, a job's grid
# through lbmc::lbmc); the installed lbmc runs (--version, sim, info, plot from the
# installed Python package); the man page renders; the bash completion completes.
# Usage: install.sh BUILD_DIR
set -u
BUILD=${1:?usage: install.sh BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PREFIX=$WORK/prefix
fails=0
check() { # check NAME COMMAND...: run it, report
  local name=$1
  shift
  if "$@" >"$WORK/out" 2>&1; then
    echo "ok: $name"
  else
    echo "FAIL: $name"
    sed 's/^/    /' "$WORK/out" | tail -20
    fails=$((fails + 1))
  fi
}

check "cmake --install into a temporary prefix" cmake --install "$BUILD" --prefix "$PREFIX"
for f in bin/lbmc liblbmc_sim.a liblbmc.a include/lbmc/sim.h include/lbmc/version.h \
  include/lbmc/job.h cmake/lbmc/lbmcConfig.cmake cmake/lbmc/lbmcConfigVersion.cmake \
  cmake/lbmc/lbmcTargets.cmake share/man/man1/lbmc.1 share/bash-completion/completions/lbmc \
  share/lbmc/python/lbmc_analysis/__init__.py; do # libraries in lib/ or lib/<multiarch>/
  check "installed: $f" sh -c "test -e '$PREFIX/$f' || test -e '$PREFIX'/lib/$f || ls '$PREFIX'/lib/*/$f"
done
check "a project with find_package(lbmc) configures" \
  cmake -S "$HERE/consumer" -B "$WORK/consumer" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release
check "... builds" cmake --build "$WORK/consumer"
check "... runs one replica through lbmc::sim" "$WORK/consumer/one_replica"
check "... reads a job through lbmc::lbmc" "$WORK/consumer/read_job"
check "the installed lbmc --version names the revision and build type" \
  sh -c "'$PREFIX/bin/lbmc' --version | grep -E '^lbmc [0-9.]+ \\(revision [^,]+, [A-Za-z]+ build\\)$'"
check "the installed lbmc simulates" "$PREFIX/bin/lbmc" sim --n 10 --lambda 0.5 --pools 1:1:inf --time 100
cat >"$WORK/job.yaml" <<'YAML'
system:
  n: [10, 20]
  lambda: 0.5
  pools: [{beta: 1, mu: 1}]
policy: [random, jsq(2)]
run: {replicas: 2, warmup: 10, time: 100}
YAML
check "the installed lbmc runs a job" "$PREFIX/bin/lbmc" run "$WORK/job.yaml" -o "$WORK/job.h5" --quiet
check "the results record the revision" sh -c "h5dump -a source_revision '$WORK/job.h5' | grep -q '(0): \"'"
check "the installed lbmc plot uses the installed package" \
  env -u PYTHONPATH "$PREFIX/bin/lbmc" plot "$WORK/job.h5" --metric p_wait --x n --by policy -o "$WORK/fig.png"
check "... and drew the figure" test -s "$WORK/fig.png"
if command -v man >/dev/null; then
  check "the man page renders" sh -c "MANWIDTH=80 man -l '$PREFIX/share/man/man1/lbmc.1' | grep -q 'lbmc info'"
else # no man-db: the roff source names every command
  check "the man page names the commands" grep -q '^\.SS lbmc info' "$PREFIX/share/man/man1/lbmc.1"
fi
check "the bash completion completes commands and flags" bash -c "
  source '$PREFIX/share/bash-completion/completions/lbmc'
  COMP_WORDS=(lbmc in); COMP_CWORD=1; _lbmc; [ \"\${COMPREPLY[*]}\" = info ] || exit 1
  COMP_WORDS=(lbmc info --for); COMP_CWORD=2; _lbmc; [ \"\${COMPREPLY[*]}\" = --format ] || exit 1
  COMP_WORDS=(lbmc sim --sampling ''); COMP_CWORD=3; _lbmc
  [ \"\${COMPREPLY[*]}\" = 'distinct with_replacement' ]"
echo "install: $fails failed"
[ "$fails" -eq 0 ]
