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
find "$build/bench" -maxdepth 1 -type f -executable -exec cp {} "$stage/bench/" \;
[ -x "$build/apps/showcase" ] && cp "$build/apps/showcase" "$stage/"
# Google Benchmark is a shared library in Debian; carry it.
for b in "$stage"/bench/*; do
  ldd "$b" | awk '/libbenchmark/ {print $3}' | xargs -r -I{} cp -L {} "$stage/lib/"
done
du -sh "$stage"
