#!/usr/bin/env bash
# Builds and runs the main job: the showcase (GPU if there is an sm_90 device, else the model).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOPPER_BUILD_DIR:-$root/build/main}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DHOPPER_BUILD_TESTS=OFF -DHOPPER_BUILD_BENCH=OFF -DHOPPER_BUILD_APPS=ON "$@"
cmake --build "$build" --parallel "${HOPPER_JOBS:-$(nproc)}" --target showcase
cd "$root" && "$build/apps/showcase" "${HOPPER_OUT:-$root/out}"
