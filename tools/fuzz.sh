#!/usr/bin/env bash
# Fuzzes every host-side entry point with libFuzzer (clang, -fsanitize=fuzzer,address,undefined):
# a host-only build in build/fuzz of the targets in tests/fuzz/, each started from its seed corpus
# (the seeds with one value at a time swapped for an extreme: 0, 1, -1, 2^31-1, 2^32, 2^62,
# SIZE_MAX, misaligned pointers, ...) and run for a bounded time. A finding (a crash, a hang, a
# sanitizer report, or the oracle's abort) fails the run and leaves its input in build/fuzz/findings.
#   HOPPER_FUZZ_SECONDS  seconds per target (default 30)
#   HOPPER_FUZZ_TARGETS  regex over target names (default: all)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOPPER_BUILD_DIR:-$root/build/fuzz}
seconds=${HOPPER_FUZZ_SECONDS:-30}
cxx=$(command -v clang++-14 || command -v clang++ || true)
[ -n "$cxx" ] || { echo "fuzz: no clang++ (libFuzzer needs clang)"; exit 1; }
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
# Line tables only (-g1), as in tools/sanitize_host.sh.
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_COMPILER="$cxx" \
  -DHOPPER_ENABLE_CUDA=OFF -DHOPPER_FUZZ=ON -DHOPPER_BUILD_TESTS=ON -DHOPPER_BUILD_BENCH=OFF \
  -DHOPPER_BUILD_APPS=OFF -DHOPPER_BUILD_EXAMPLES=OFF >/dev/null
targets=()
for src in "$root"/tests/fuzz/fuzz_*.cpp; do
  name=$(basename "$src" .cpp)
  [[ $name =~ ${HOPPER_FUZZ_TARGETS:-.} ]] || continue
  # A target the configuration left out (no CUDA headers for it) is named and skipped.
  if ! cmake --build "$build" --target help | grep -q "^\.\.\. $name\$\|^$name:"; then
    echo "fuzz: $name not configured here (see the cmake output); skipped"
    continue
  fi
  targets+=("$name")
done
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no target"; exit 1; }
build_targets=()
for t in "${targets[@]}"; do build_targets+=("$t" "${t}_replay"); done
cmake --build "$build" --parallel "${HOPPER_JOBS:-$(nproc)}" --target "${build_targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
rc=0
mkdir -p "$build/findings"
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t
  rm -rf "$corpus" && mkdir -p "$corpus"
  "$build/tests/${t}_replay" --write-corpus "$corpus" >/dev/null
  log=$build/$t.log
  # -timeout: an input running longer than 10 s is a hang; -rss_limit_mb: one using more memory
  # than that is a finding too.
  if "$build/tests/$t" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$build/findings/$t-" -print_final_stats=1 >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    echo "fuzz $t: ${runs:-?} inputs in ${seconds} s, $cov, 0 findings"
  else
    rc=1
    echo "fuzz $t: FINDING (log $log, input in $build/findings):"
    grep -E "FUZZ FINDING|ERROR: |runtime error|SUMMARY" "$log" | head -5
  fi
done
exit $rc
