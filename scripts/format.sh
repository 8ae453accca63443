#!/usr/bin/env bash
# The house format (.clang-format, Debian's clang-format 14) over every tracked C++ and CUDA file.
#   scripts/format.sh           reformat in place
#   scripts/format.sh --check   list the files that differ and exit 1 (ctest style.format);
#                               exit 77 (skipped) without clang-format or outside a git checkout
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
fmt="$(command -v clang-format-14 || command -v clang-format || true)"
if [[ -z "$fmt" ]] || ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "format: clang-format or git not found; skipped" >&2
  exit 77
fi
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.cu' '*.cuh')
if [[ "${1:-}" != "--check" ]]; then
  "$fmt" -i --style=file "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$fmt" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "format: $f differs from .clang-format (run scripts/format.sh)"
    bad=1
  fi
done
exit "$bad"
