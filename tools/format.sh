#!/usr/bin/env bash
# Formats every C++/CUDA file git tracks with the repository's .clang-format, or, with --check,
# lists the files that differ from it and fails (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=${CLANG_FORMAT:-clang-format}
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf 'format: %d file(s) differ from .clang-format (run tools/format.sh):\n' "${#bad[@]}"
    printf '  %s\n' "${bad[@]}"
    exit 1
  fi
  echo "format: ${#files[@]} files match .clang-format"
else
  "$fmt" -i "${files[@]}"
fi
