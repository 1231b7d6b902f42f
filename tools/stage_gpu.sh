#!/usr/bin/env bash
# Builds the GPU suite here (no GPU needed) and stages the executables, with the shared
# libraries the GPU machine may lack, in one folder for tools/gpu_suite.sh OUT_DIR BIN_DIR.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOPPER_BUILD_DIR:-$root/build/gpu}
stage=${1:-$root/.gpubin}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DHOPPER_BUILD_TESTS=ON \
  -DHOPPER_BUILD_BENCH=ON -DHOPPER_BUILD_APPS=ON >/dev/null
cmake --build "$build" --parallel "${HOPPER_JOBS:-$(nproc)}"
rm -rf "$stage" && mkdir -p "$stage/tests" "$stage/bench" "$stage/lib"
cp "$build"/tests/gpu_* "$stage/tests/"
# The bug zoo's model verdicts, which tools/zoo_sanitizer.sh sets beside the GPU's.
[ -x "$build/tests/host_bug_zoo_target" ] && cp "$build/tests/host_bug_zoo_target" "$stage/tests/"
# The package test's consumer of the installed kernels (built by ctest -R package_full).
mkdir -p "$stage/package"
ctest --test-dir "$build" -R '^package_full$' >/dev/null 2>&1 || echo "stage: package_full failed (ctest -R package_full)"
for c in "$build"/tests/package_full/consumer/kernels_consumer "$build"/tests/package_full/subdir/kernels_consumer; do
  [ -x "$c" ] && cp "$c" "$stage/package/$(basename "$(dirname "$c")")_kernels_consumer"
done
find "$build/bench" -maxdepth 1 -type f -executable -exec cp {} "$stage/bench/" \;
[ -x "$build/apps/showcase" ] && cp "$build/apps/showcase" "$stage/"
# Google Benchmark is a shared library in Debian; carry it.
for b in "$stage"/bench/*; do
  ldd "$b" | awk '/libbenchmark/ {print $3}' | xargs -r -I{} cp -L {} "$stage/lib/"
done
du -sh "$stage"
