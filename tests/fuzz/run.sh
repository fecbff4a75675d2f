#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer (clang) of the job-file reader (fuzz_job.c)
# and the --pools/--service parsers (fuzz_cli.c), under AddressSanitizer and
# UndefinedBehaviorSanitizer, for a fixed budget. Run by hand, not in CI:
#
#   tests/fuzz/run.sh [SECONDS]        # per target, default 600; from any directory
#
# Needs Debian's clang and libclang-rt-14-dev (libFuzzer); it says what to install
# if they are missing. Builds into build-fuzz/ (CC=clang, -DLBMC_FUZZ=ON
# -DLBMC_SANITIZE=address,undefined), seeds each target with the repository's job
# files (jobs/, tests/job/good and bad, tests/run, tests/analysis/jobs) or with
# tests/fuzz/inputs/cli, and keeps its growing corpus in build-fuzz/fuzz/corpus-T/
# between runs. Each finding (crash, leak, timeout, out of memory) is copied to
# tests/fuzz/inputs/T/ as a regression input (the suite replays every file there:
# ctest -R fuzz-) and makes the script exit 1: fix the bug, keep the file.
# Prints per target: seconds, executions, executions per second, coverage (edges,
# features), corpus size, findings.
# Env: FUZZ_JOBS=N runs N fuzzer processes per target (default 1).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$here/../.." && pwd)
seconds=${1:-600}
[[ $seconds =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] || { echo "usage: tests/fuzz/run.sh [SECONDS]" >&2; exit 2; }
B=$SRC/build-fuzz
F=$B/fuzz

fuzzer_lib=$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null | head -n 1)
if ! command -v clang >/dev/null || [ -z "$fuzzer_lib" ]; then
    echo "run.sh: libFuzzer is missing: apt-get install clang libclang-rt-14-dev" >&2
    exit 1
fi

echo "== build ($B)"
mkdir -p "$F" || exit 1
CC=clang cmake -S "$SRC" -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLBMC_FUZZ=ON \
    -DLBMC_SANITIZE=address,undefined > "$F/cmake.log" 2>&1 ||
    { cat "$F/cmake.log"; exit 1; }
nice cmake --build "$B" -j2 --target lbmc-fuzz-job lbmc-fuzz-cli > "$F/build.log" 2>&1 ||
    { tail -n 40 "$F/build.log"; exit 1; }

export ASAN_OPTIONS=detect_leaks=1:check_initialization_order=1:strict_string_checks=1
export LSAN_OPTIONS=suppressions=$SRC/tests/sanitize/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# seeds T: the directories of seed inputs of target T
seeds() {
    case $1 in
        job) echo "$SRC/jobs $SRC/tests/job/good $SRC/tests/job/bad $SRC/tests/run $SRC/tests/analysis/jobs $SRC/tests/fuzz/inputs/job" ;;
        cli) echo "$SRC/tests/fuzz/inputs/cli" ;;
    esac
}

found=0
summary=()
jobs=
[ "${FUZZ_JOBS:-1}" -le 1 ] || jobs=$FUZZ_JOBS
for t in job cli; do
    corpus=$F/corpus-$t artifacts=$F/artifacts-$t/ log=$F/$t.log
    mkdir -p "$corpus" "$artifacts"
    cd "$F" || exit 1
    echo "== fuzz-$t: $seconds s"
    # shellcheck disable=SC2046  # seeds are directories without blanks
    "$B/tests/fuzz/lbmc-fuzz-$t" "$corpus" $(seeds "$t") -max_total_time="$seconds" \
        -dict="$here/$t.dict" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
        -close_fd_mask=2 -print_final_stats=1 -artifact_prefix="$artifacts" \
        ${jobs:+-jobs=$jobs -workers=$jobs} > "$log" 2>&1
    rc=$?
    # fuzz-N.log files hold the workers' output when -jobs > 1
    cat "$log" fuzz-*.log 2>/dev/null | grep -E '^(#[0-9]+|stat::|==[0-9]+==ERROR|SUMMARY)' > "$F/$t.stats"
    rm -f fuzz-*.log
    execs=$(awk '/stat::number_of_executed_units/ { s += $2 } END { print s + 0 }' "$F/$t.stats")
    rate=$(awk '/stat::average_exec_per_sec/ { s += $2 } END { print s + 0 }' "$F/$t.stats")
    last=$(grep -E '^#[0-9]+' "$F/$t.stats" | tail -n 1)
    cov=$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/\1 edges, \2 features, \3 corpus inputs/p' <<< "$last")
    n=0
    for a in "$artifacts"*; do
        [ -f "$a" ] || continue
        n=$((n + 1))
        cp "$a" "$SRC/tests/fuzz/inputs/$t/$(basename "$a")"
        echo "   finding: $a (copied to tests/fuzz/inputs/$t/)"
    done
    found=$((found + n))
    [ "$rc" -eq 0 ] || [ "$n" -gt 0 ] || { echo "   the fuzzer exited with status $rc:"; tail -n 30 "$log"; found=$((found + 1)); }
    summary+=("fuzz-$t: $seconds s, $execs executions ($rate/s), ${cov:-coverage unknown}, $n finding(s)")
done
echo "== summary"
printf '%s\n' "${summary[@]}"
[ "$found" -eq 0 ]
