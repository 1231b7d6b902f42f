#!/usr/bin/env bash
# Builds and runs every test: the host model and host-side checks everywhere; the GPU suite
# runs where an sm_90 device exists and skips, printing why, elsewhere. Ends with every skipped
# test and its reason, then one line of counts; the exit status is ctest's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOPPER_BUILD_DIR:-$root/build/test}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DHOPPER_BUILD_TESTS=ON -DHOPPER_BUILD_BENCH=OFF -DHOPPER_BUILD_APPS=OFF "$@"
cmake --build "$build" --parallel "${HOPPER_JOBS:-$(nproc)}"

# ctest's console shows a skip only as ***Skipped: keep its console to count, and take each
# skip's reason from the test output that ctest keeps in LastTest.log.
console=$build/Testing/Temporary/console.log
mkdir -p "$(dirname "$console")"
rc=0
ctest --test-dir "$build" --output-on-failure --no-tests=error --parallel "$(nproc)" --timeout 600 | tee "$console" ||
  rc=${PIPESTATUS[0]}

# GoogleTest prints "<file>:<line>: Skipped", then the reason, then "[  SKIPPED ] <test> (N ms)".
skips=$( (awk '
  /^[0-9]+\/[0-9]+ Testing: / { name = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, "", name); why = ""; take = 0; next }
  /^\[  SKIPPED \] .*\([0-9]+ ms\)$/ { take = 0; next }
  /: Skipped$/ { take = 1; why = ""; next }
  take { why = why (why == "" ? "" : " / ") $0; next }
  /^Skip regular expression found/ { print "  " name ": " (why == "" ? "(no reason printed)" : why) }
' "$build/Testing/Temporary/LastTest.log" 2>/dev/null
  # Disabled tests (GoogleTest's DISABLED_ prefix) never run, so LastTest.log has no entry.
  sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .*\*\*\*Not Run (Disabled).*/  \1: disabled/p' "$console"
) | sort | cut -c1-400) || true
echo "Skipped tests and why:"
echo "${skips:-  none}"

# One status line per test in ctest's console: Passed, ***Skipped or ***Not Run (Disabled), or a
# failure (***Failed, ***Timeout, ***Not Run, ...).
awk '
  /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / {
    if ($0 ~ / Passed +[0-9.]+ sec/) p++; else if ($0 ~ /\*\*\*(Skipped|Not Run \(Disabled\))/) s++; else f++
  }
  END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }
' "$console"
exit "$rc"
