#!/usr/bin/env bash
# The sanitizer job (issue 19): builds the whole project with clang 22,
# ASan and UBSan (-DDLC_SANITIZE=address,undefined) into build-asan/, runs
# the unit tests and a subset of the lit tests under them, then fuzzes the
# MLIR parser + step pipeline (TrainStepFuzz) for a bounded time.
#
#   scripts/sanitize.sh                  build, tests, 60 s of TrainStepFuzz
#   scripts/sanitize.sh --fuzz SECONDS   only the fuzz target, for SECONDS
#   scripts/sanitize.sh --fuzz-runs N    only the fuzz target, for N inputs
#
# What runs under the sanitizers, and why not the rest, is in
# docs/Fuzzing.md. Crash reproducers land in build-asan/crashes/TrainStepFuzz/;
# new corpus inputs in build-asan/fuzz-corpus/, never in the repository.
# BUILD_DIR: the build directory (default build-asan); CLANG, CLANGXX: the
# compilers (default clang-22, clang++-22).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${BUILD_DIR:-build-asan}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
CLANG=${CLANG:-clang-22}
CLANGXX=${CLANGXX:-clang++-22}
MODE=all
FUZZ_LIMIT=(-max_total_time=60)
case "${1:-}" in
  --fuzz) MODE=fuzz; FUZZ_LIMIT=(-max_total_time="${2:?--fuzz needs seconds}") ;;
  --fuzz-runs) MODE=fuzz; FUZZ_LIMIT=(-runs="${2:?--fuzz-runs needs a count}") ;;
  '') ;;
  *) echo "sanitize: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
esac

# Leaks: MLIR's pass and option registries are process-lifetime by design,
# and a leak is not what this job looks for. UB and memory errors abort.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:detect_odr_violation=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
SYMBOLIZER=/usr/lib/llvm-22/bin/llvm-symbolizer
[ -x "$SYMBOLIZER" ] && export ASAN_SYMBOLIZER_PATH=$SYMBOLIZER

start=$(date +%s)
command -v "$CLANGXX" >/dev/null ||
  { echo "sanitize: no $CLANGXX on PATH (Debian: clang-22 libclang-rt-22-dev libomp-22-dev)" >&2; exit 1; }
if [ ! -f "$B/build.ninja" ]; then
  launcher=()
  command -v ccache >/dev/null &&
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -G Ninja -S . -B "$B" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DCMAKE_C_COMPILER="$CLANG" -DCMAKE_CXX_COMPILER="$CLANGXX" "${launcher[@]}" \
    -DDLC_SANITIZE=address,undefined >"$B.configure.log" 2>&1 ||
    { tail -30 "$B.configure.log"; echo "sanitize: configuring $B failed" >&2; exit 1; }
fi
targets=(TrainStepFuzz)
[ $MODE = all ] && targets+=(dlc-opt dlc-bench dlc-run dlc-kernels DLCUnitTests DLCRuntimeTests DLCBenchTests)
cmake --build "$B" -j "${JOBS:-2}" --target "${targets[@]}" ||
  { echo "sanitize: building $B failed" >&2; exit 1; }
echo "sanitize: built in $(( $(date +%s) - start )) s"

status=0
if [ $MODE = all ]; then
  t=$(date +%s)
  for test in DLCUnitTests DLCRuntimeTests DLCBenchTests; do
    "$B/bin/$test" --gtest_brief=1 >"$B/$test.log" 2>&1 ||
      { status=1; tail -60 "$B/$test.log"; echo "sanitize: $test FAILED" >&2; }
    grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$B/$test.log"
  done
  echo "sanitize: unit tests in $(( $(date +%s) - t )) s"
  # The lit subset: every parser, verifier, pass and lowering test, and the
  # bad-input tests of the tools. Not the whole-model numerics (minutes of
  # arithmetic each under ASan, and already run by check-dlc), nor MPI
  # (Open MPI is not instrumented and reports its own allocations).
  t=$(date +%s)
  /usr/lib/llvm-22/bin/lit -sv --time-tests \
    "$B/test/Dialect" "$B/test/Transforms" "$B/test/Pipelines" "$B/test/Target" \
    "$B"/test/Bench/{errors,options,nonfinite,interrupt,resume}.test >"$B/lit.log" 2>&1 ||
    { status=1; grep -E '^(FAIL|UNRESOLVED|TIMEOUT)' "$B/lit.log"; tail -60 "$B/lit.log";
      echo "sanitize: lit FAILED" >&2; }
  grep -E '^(Total Discovered|  Passed|  Failed|  Unsupported|  Expectedly)' "$B/lit.log"
  echo "sanitize: lit subset in $(( $(date +%s) - t )) s"
fi

# Seeds: the models, and every case of the dialect tests as its own input.
seeds=$B/fuzz-seeds
rm -rf "$seeds" && mkdir -p "$seeds" "$B/fuzz-corpus" "$B/crashes/TrainStepFuzz"
cp models/*.mlir "$seeds/"
for f in $(find test/Dialect -name '*.mlir'); do
  awk -v out="$seeds/$(echo "$f" | tr / _)" \
    '/^\/\/ -----/ { n++; next } { print > (out "." n ".mlir") }' "$f"
done
# The inputs earlier runs found that add coverage beyond these seeds.
tar -xzf test/fuzz/corpus/mlir.tar.gz -C "$seeds"
echo "sanitize: TrainStepFuzz ${FUZZ_LIMIT[*]} over $(ls "$seeds" | wc -l) seeds (models, test/Dialect, test/fuzz/corpus/mlir.tar.gz)"
# -timeout: ResNet-50's step under ASan compiles in a few seconds; a minute is a hang.
"$B/bin/TrainStepFuzz" "${FUZZ_LIMIT[@]}" -timeout=60 -rss_limit_mb=4096 -max_len=65536 \
  -artifact_prefix="$B/crashes/TrainStepFuzz/" -print_final_stats=1 \
  "$B/fuzz-corpus" "$seeds" >"$B/TrainStepFuzz.log" 2>&1
rc=$?
grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec|Done [0-9]+ runs)' \
  "$B/TrainStepFuzz.log"
if [ $rc -ne 0 ]; then
  status=1
  tail -60 "$B/TrainStepFuzz.log"
  echo "sanitize: TrainStepFuzz FAILED (exit $rc); reproducers in $B/crashes/TrainStepFuzz:" >&2
  ls "$B/crashes/TrainStepFuzz" >&2
fi
echo "sanitize: done in $(( $(date +%s) - start )) s"
[ $status = 0 ] && echo "sanitize: no failures"
exit $status
