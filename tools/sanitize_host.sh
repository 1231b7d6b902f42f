#!/usr/bin/env bash
# The host tests (the model and the host-side checks) under AddressSanitizer and
# UndefinedBehaviorSanitizer: a host-only build (HOPPER_ENABLE_CUDA=OFF) in build/sanitize, every
# report fatal. The model's tasks run on their own stacks; hopper/model/scheduler.hpp tells ASan
# about each switch. Extra arguments go to ctest (for example -R host_model).
# Debug information is line tables only (-g1): the reports' stack traces keep their files and
# lines, and the build is shorter than with full -g.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOPPER_BUILD_DIR:-$root/build/sanitize}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DHOPPER_ENABLE_CUDA=OFF \
  -DHOPPER_HOST_SANITIZERS=address,undefined -DHOPPER_BUILD_TESTS=ON -DHOPPER_BUILD_BENCH=OFF \
  -DHOPPER_BUILD_APPS=OFF >/dev/null
cmake --build "$build" --parallel "${HOPPER_JOBS:-$(nproc)}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" --timeout 1200 "$@"
