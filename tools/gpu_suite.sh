#!/usr/bin/env bash
# The one GPU run: build everything, run every test (GPU suite included) and every benchmark,
# and write a summary, JUnit XML, JSON results and logs into the folder given.
#   tools/gpu_suite.sh OUT_DIR
# Optional: HOPPER_TESTS (ctest -R regex), HOPPER_BENCH (regex over bench executables, '-' for
# none), HOPPER_BENCH_ARGS (extra Google Benchmark flags).
set -uo pipefail
out=${1:?usage: tools/gpu_suite.sh OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOPPER_BUILD_DIR:-$root/build/gpu}
mkdir -p "$out" && out=$(cd "$out" && pwd)
logs=$out/work/logs results=$out/work/results
mkdir -p "$logs" "$results"
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

say "== hopper-async GPU suite, $(date -u +%FT%TZ), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo none)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1 | sed 's/^/   gpu: /' | tee -a "$summary"

gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
t0=$(date +%s)
if ! { cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DHOPPER_BUILD_TESTS=ON \
         -DHOPPER_BUILD_BENCH=ON -DHOPPER_BUILD_APPS=ON &&
       cmake --build "$build" --parallel "$(nproc)"; } >"$logs/build.log" 2>&1; then
  say "BUILD FAILED (see logs/build.log)"; tail -40 "$logs/build.log"
fi
say "build: $(( $(date +%s) - t0 )) s"

# Tests: every host and GPU test; skipped ones are counted apart so a skip never passes unseen.
t0=$(date +%s)
ctest --test-dir "$build" --output-junit "$out/junit.xml" --timeout 300 --parallel 1 \
  ${HOPPER_TESTS:+-R "$HOPPER_TESTS"} >"$logs/ctest.log" 2>&1
grep -E "tests passed|tests failed|Failed|\*\*\*|Not Run|Skipped" "$logs/ctest.log" | head -60 | tee -a "$summary"
say "tests: $(( $(date +%s) - t0 )) s"

# Benchmarks: JSON per executable.
if [ "${HOPPER_BENCH:-.}" != "-" ]; then
  for b in "$build"/bench/*; do
    [ -x "$b" ] && [ -f "$b" ] || continue
    name=$(basename "$b")
    [[ $name =~ ${HOPPER_BENCH:-.} ]] || continue
    t0=$(date +%s)
    (cd "$results" && "$b" --benchmark_out="$results/$name.json" --benchmark_out_format=json \
        ${HOPPER_BENCH_ARGS:-}) >"$logs/$name.log" 2>&1
    say "bench $name: rc=$? $(( $(date +%s) - t0 )) s"
    grep -E "^(SUMMARY|RATIO)" "$logs/$name.log" | tee -a "$summary"
  done
fi

# Main job (the showcase), which also writes its trace into results.
if [ -x "$build/apps/showcase" ]; then
  (cd "$root" && "$build/apps/showcase" "$results") >"$logs/showcase.log" 2>&1
  say "showcase: rc=$?"; tail -8 "$logs/showcase.log" | tee -a "$summary"
fi

# Plots, where matplotlib is there.
for p in "$root"/tools/plot_*.py; do
  [ -f "$p" ] && python3 "$p" "$results" >>"$logs/plots.log" 2>&1
done
tar -C "$out/work" -czf "$out/logs.tgz" logs
tar -C "$out/work" -czf "$out/results.tgz" results
rm -rf "$out/work"
say "== done"
