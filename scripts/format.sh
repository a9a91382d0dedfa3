#!/usr/bin/env bash
# clang-format (.clang-format: Google-based, 100 columns) over the C and C++ sources.
#   scripts/format.sh [PATH...]            reformat in place
#   scripts/format.sh --check [PATH...]    change nothing; print the diff and fail if any file
#                                          is not formatted (CI)
# PATHs are files or directories; default: src include tests tools examples.
set -euo pipefail
cd "$(dirname "$0")/.."
check=false
if [ "${1:-}" = "--check" ]; then
  check=true
  shift
fi
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=(src include tests tools examples)
mapfile -t files < <(find "${paths[@]}" -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.c' \) |
  sort)
[ ${#files[@]} -gt 0 ] || { echo "format: no sources under ${paths[*]}" >&2; exit 1; }

if ! $check; then
  clang-format -i "${files[@]}"
  echo "format: ${#files[@]} files formatted"
  exit 0
fi
unformatted=()
for f in "${files[@]}"; do
  if ! clang-format "$f" | diff -u --label "$f" --label "$f (clang-format)" "$f" - >/dev/null; then
    unformatted+=("$f")
  fi
done
if [ ${#unformatted[@]} -eq 0 ]; then
  echo "format: ${#files[@]} files, all formatted"
  exit 0
fi
for f in "${unformatted[@]}"; do
  clang-format "$f" | diff -u --label "$f" --label "$f (clang-format)" "$f" - || true
done | head -n "${FORMAT_DIFF_LINES:-400}"
echo "format: ${#unformatted[@]} of ${#files[@]} files need scripts/format.sh:" >&2
printf '  %s\n' "${unformatted[@]}" >&2
exit 1
