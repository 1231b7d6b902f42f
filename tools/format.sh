#!/usr/bin/env bash
# Formats every C++/CUDA file of the work tree that git tracks or would track (new files not yet
# added, not ignored ones) with the repository's .clang-format, or, with --check, lists the files
# that differ from it and fails (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=${CLANG_FORMAT:-clang-format}
mapfile -t listed < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' '*.cu' '*.cuh' | sort -u)
files=()
for f in "${listed[@]}"; do
  [ -f "$f" ] && files+=("$f")  # a tracked file deleted in the work tree is gone, not unformatted
done
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
