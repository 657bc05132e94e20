#!/usr/bin/env bash
# Fuzzes the runtime's file readers (plans, .npy) and what a read plan runs
# (PlanRunFuzz: one step on the reference and cpu backends) with libFuzzer,
# ASan and UBSan: builds test/fuzz/ with clang into build-fuzz/, then runs
# each target over its seed corpus (test/fuzz/corpus/<seeds>/).
#
#   scripts/fuzz.sh [SECONDS]     each target for SECONDS (default 60)
#   scripts/fuzz.sh --runs N      each target for N inputs (the ctest smoke run)
#
# Crash reproducers land in build-fuzz/crashes/<target>/; the exit status is 1
# when any target crashed, 0 with "skipped: ..." (77 with --runs, ctest's
# skip) when clang or libFuzzer is missing. New inputs libFuzzer finds go to
# build-fuzz/corpus/<name>/, never into the repository's seeds.
# FUZZ_BUILD_DIR: the build directory (default build-fuzz); CLANG, CLANGXX:
# the compilers (default: the newest clang-N on PATH, else clang).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${FUZZ_BUILD_DIR:-build-fuzz}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
LIMIT=(-max_total_time="${1:-60}")
SKIP=0
if [ "${1:-}" = --runs ]; then
  LIMIT=(-runs="${2:?--runs needs a count}")
  SKIP=77
fi
skip() { echo "fuzz: skipped: $*"; exit $SKIP; }

if [ -z "${CLANGXX:-}" ]; then
  for v in 22 21 20 19 18 17 16 15 14 ''; do
    if command -v "clang++${v:+-$v}" >/dev/null; then
      CLANGXX=clang++${v:+-$v}; CLANG=clang${v:+-$v}; break
    fi
  done
fi
[ -n "${CLANGXX:-}" ] || skip "no clang++ on PATH (Debian: clang)"
CLANG=${CLANG:-${CLANGXX/clang++/clang}}
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const char *, unsigned long) { return 0; }' \
  > "$probe/p.cpp"
"$CLANGXX" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>"$probe/err" ||
  skip "$CLANGXX cannot link -fsanitize=fuzzer,address,undefined (Debian: libclang-rt-N-dev): $(head -1 "$probe/err")"

start=$(date +%s)
if [ ! -f "$B/build.ninja" ]; then
  mkdir -p "$B"
  cmake -S test/fuzz -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER="$CLANG" -DCMAKE_CXX_COMPILER="$CLANGXX" >"$B/configure.log" 2>&1 ||
    { cat "$B/configure.log"; echo "fuzz: configuring $B failed" >&2; exit 1; }
fi
cmake --build "$B" -j "${FUZZ_JOBS:-2}" --target PlanReaderFuzz NpyReaderFuzz PlanRunFuzz ||
  { echo "fuzz: building $B failed" >&2; exit 1; }
echo "fuzz: built with $CLANGXX in $(( $(date +%s) - start )) s"

status=0
# target:name:seeds; new inputs go to $B/corpus/<name>/.
for triple in PlanReaderFuzz:plan:plan NpyReaderFuzz:npy:npy PlanRunFuzz:plan-run:plan; do
  IFS=: read -r target name seeds <<<"$triple"
  crashes=$B/crashes/$target
  mkdir -p "$crashes" "$B/corpus/$name"
  dict=()
  # PlanRunFuzz mutates plans as plans (PlanRunFuzz.cpp): no splicing.
  [ "$target" = PlanRunFuzz ] && dict=(-cross_over=0)
  [ -f "test/fuzz/$seeds.dict" ] && dict=(-dict="test/fuzz/$seeds.dict")
  echo "fuzz: $target ${LIMIT[*]} over test/fuzz/corpus/$seeds"
  # -timeout: a slow input is a hang; -rss_limit_mb: a huge allocation is a bug.
  "$B/bin/$target" "${LIMIT[@]}" "${dict[@]}" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$crashes/" -print_final_stats=1 \
    "$B/corpus/$name" "test/fuzz/corpus/$seeds" >"$B/$target.log" 2>&1
  rc=$?
  grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec|Done [0-9]+ runs)' \
    "$B/$target.log"
  if [ $rc -ne 0 ]; then
    status=1
    tail -40 "$B/$target.log"
    echo "fuzz: $target FAILED (exit $rc); reproducers in $crashes:" >&2
    ls "$crashes" >&2
  fi
done
[ $status = 0 ] && echo "fuzz: no crashes"
exit $status
