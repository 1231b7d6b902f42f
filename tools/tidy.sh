#!/usr/bin/env bash
# Runs clang-tidy (14, Debian 12's) with the repository's .clang-tidy on the plain C++ host
# sources, tests/host/*.cpp, and the headers of this repository they include. Fails on any
# finding.
#
#   tools/tidy.sh [FILE...]     default: every tests/host/*.cpp
#
# The compile commands come from a configure-only build directory, build/tidy (HOPPER_TIDY_DIR):
# the host sources need nothing generated, so nothing is built. HOPPER_JOBS files run at once.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tidy=${CLANG_TIDY:-clang-tidy-14}
command -v "$tidy" >/dev/null || tidy=clang-tidy
command -v "$tidy" >/dev/null || { echo "tidy: clang-tidy not found (set CLANG_TIDY)" >&2; exit 2; }
build=${HOPPER_TIDY_DIR:-$root/build/tidy}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DHOPPER_BUILD_TESTS=ON -DHOPPER_BUILD_BENCH=OFF -DHOPPER_BUILD_APPS=OFF >/dev/null

if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(ls tests/host/*.cpp)
fi
# Only sources the build compiles (a host test that needs CUDA is left out without it).
compiled=()
for f in "${files[@]}"; do
  grep -q "\"file\": \"$root/$f\"" "$build/compile_commands.json" && compiled+=("$f")
done

start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf '%s\n' "${compiled[@]}" |
  xargs -P "${HOPPER_JOBS:-$(nproc)}" -I{} sh -c '"$0" -p "$1" --quiet --extra-arg=-std=c++17 "$2" 2>/dev/null' \
    "$tidy" "$build" {} >"$log" || true
cat "$log"
# A header's finding is reported once per file that includes it: count each once.
findings=$({ grep -E '^[^ ].*:[0-9]+:[0-9]+: (warning|error):' "$log" || true; } | sort -u | wc -l)
echo "tidy: ${#compiled[@]} files, $findings finding(s), $(($(date +%s) - start)) s"
[ "$findings" -eq 0 ]
