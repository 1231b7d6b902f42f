#!/usr/bin/env bash
# Builds and runs every test: the host model and host-side checks everywhere; the GPU suite
# runs where an sm_90 device exists and skips, printing why, elsewhere.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOPPER_BUILD_DIR:-$root/build/test}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DHOPPER_BUILD_TESTS=ON -DHOPPER_BUILD_BENCH=OFF -DHOPPER_BUILD_APPS=OFF "$@"
cmake --build "$build" --parallel "${HOPPER_JOBS:-$(nproc)}"
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" --timeout 600
