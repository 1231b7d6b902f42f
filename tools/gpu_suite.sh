#!/usr/bin/env bash
# The one GPU run: build everything (or take binaries staged by tools/stage_gpu.sh), run every
# GPU test executable, every benchmark and the showcase, and write into the folder given:
#   summary.txt   what ran and its headline figures (RATIO/SUMMARY lines, test counts)
#   junit.tgz     one GoogleTest JUnit XML per test executable
#   results.tgz   benchmark JSON, traces, plots
#   logs.tgz      every log
# Usage: tools/gpu_suite.sh OUT_DIR [BIN_DIR]
# Optional: HOPPER_TESTS (regex over test executables, '-' for none), HOPPER_BENCH (regex over
# bench executables, '-' for none), HOPPER_BENCH_ARGS (extra Google Benchmark flags).
set -uo pipefail
out=${1:?usage: tools/gpu_suite.sh OUT_DIR [BIN_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" && out=$(cd "$out" && pwd)
work=$out/work; logs=$work/logs; results=$work/results; junit=$work/junit
mkdir -p "$logs" "$results" "$junit"
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

say "== hopper-async GPU suite, $(date -u +%FT%TZ), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo none)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv,noheader 2>&1 | sed 's/^/   gpu: /' | tee -a "$summary"

if [ $# -ge 2 ]; then
  bin=$(cd "$2" && pwd)
  export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  tests=("$bin"/tests/gpu_*) benches=("$bin"/bench/*) showcase=$bin/showcase
  say "binaries: prebuilt in $2"
else
  build=${HOPPER_BUILD_DIR:-$root/build/gpu}
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  t0=$(date +%s)
  cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DHOPPER_BUILD_TESTS=ON \
    -DHOPPER_BUILD_BENCH=ON -DHOPPER_BUILD_APPS=ON >"$logs/build.log" 2>&1
  # Keep going past a failing target so one broken file does not hide every other result.
  cmake --build "$build" --parallel "$(nproc)" -- -k 0 >>"$logs/build.log" 2>&1 ||
    { say "BUILD HAD ERRORS (logs/build.log):"; grep -E "error|FAILED" "$logs/build.log" | head -20 | tee -a "$summary"; }
  say "build: $(( $(date +%s) - t0 )) s"
  tests=("$build"/tests/gpu_*) benches=("$build"/bench/*) showcase=$build/apps/showcase
fi

# GPU tests: each executable once (one CUDA context each), with a deadline, JUnit XML out.
passed=0 failed=0 skipped=0
if [ "${HOPPER_TESTS:-.}" != "-" ]; then
  for t in "${tests[@]}"; do
    [ -x "$t" ] && [ -f "$t" ] || continue
    name=$(basename "$t")
    [[ $name =~ ${HOPPER_TESTS:-.} ]] || continue
    t0=$(date +%s)
    timeout -k 5 "${HOPPER_TEST_TIMEOUT:-240}" "$t" --gtest_output="xml:$junit/$name.xml" >"$logs/$name.log" 2>&1
    rc=$?
    p=$(grep -c "^\[       OK \]" "$logs/$name.log"); f=$(grep -c "^\[  FAILED  \].*ms)" "$logs/$name.log")
    s=$(grep -c "^\[  SKIPPED \].*ms)" "$logs/$name.log")
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    say "test $name: rc=$rc passed=$p failed=$f skipped=$s $(( $(date +%s) - t0 )) s"
    grep -E "^\[  FAILED  \].*ms\)|^SUMMARY" "$logs/$name.log" | head -20 | tee -a "$summary"
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && say "   TIMED OUT: $name"
  done
fi
say "TESTS: passed=$passed failed=$failed skipped=$skipped"

# Benchmarks: JSON per executable, headline lines into the summary.
if [ "${HOPPER_BENCH:-.}" != "-" ]; then
  for b in "${benches[@]}"; do
    [ -x "$b" ] && [ -f "$b" ] || continue
    name=$(basename "$b")
    [[ $name =~ ${HOPPER_BENCH:-.} ]] || continue
    t0=$(date +%s)
    (cd "$results" && timeout -k 5 "${HOPPER_BENCH_TIMEOUT:-400}" "$b" --benchmark_out="$results/$name.json" \
        --benchmark_out_format=json ${HOPPER_BENCH_ARGS:-}) >"$logs/$name.log" 2>&1
    say "bench $name: rc=$? $(( $(date +%s) - t0 )) s"
    grep -E "^(SUMMARY|RATIO)" "$logs/$name.log" | tee -a "$summary"
  done
fi

# Main job (the showcase), which writes its trace into results.
if [ -x "$showcase" ] && [ "${HOPPER_SHOWCASE:-1}" = 1 ]; then
  (cd "$root" && timeout -k 10 120 "$showcase" "$results") >"$logs/showcase.log" 2>&1
  say "showcase: rc=$?"; tail -8 "$logs/showcase.log" | tee -a "$summary"
fi

for p in "$root"/tools/plot_*.py "$root"/tools/trace_png.py; do
  [ -f "$p" ] && python3 "$p" "$results" >>"$logs/plots.log" 2>&1
done
tar -C "$work" -czf "$out/logs.tgz" logs
tar -C "$work" -czf "$out/results.tgz" results
tar -C "$work" -czf "$out/junit.tgz" junit
rm -rf "$work"
say "== done"
