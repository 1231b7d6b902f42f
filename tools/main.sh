#!/usr/bin/env bash
# Builds and runs the main job: the showcase (GPU if there is an sm_90 device, else the model).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOPPER_BUILD_DIR:-$root/build/main}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DHOPPER_BUILD_TESTS=OFF -DHOPPER_BUILD_BENCH=OFF -DHOPPER_BUILD_APPS=ON "$@"
cmake --build "$build" --parallel "${HOPPER_JOBS:-$(nproc)}" --target showcase
# The showcase draws its timeline PNG with python3 tools/trace_png.py (matplotlib): take the
# virtual environment of .ci/run (build/venv) where it exists, and say so when no PNG can be drawn.
venv=${HOPPER_VENV:-$root/build/venv}
[ -x "$venv/bin/python3" ] && export PATH="$venv/bin:$PATH"
python3 -c "import matplotlib" >/dev/null 2>&1 ||
  echo "main.sh: no PNG timeline: matplotlib is missing for $(command -v python3 || echo python3) (pip install -r tools/requirements.txt; .ci/run makes build/venv)"
cd "$root" && "$build/apps/showcase" "${HOPPER_OUT:-$root/out}"
