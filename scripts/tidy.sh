#!/usr/bin/env bash
# clang-tidy over the library (src/*/*.cpp and, through them, the headers in src/ and
# include/zklock/) with .clang-tidy's checks, every finding an error. Needs clang-tidy (Debian's
# clang-tidy package; scripts/deps.sh installs it for CI).
#   scripts/tidy.sh [--deep] [FILE...]   default: every src/*/*.cpp
# The static analyzer (clang-analyzer-*) runs in its shallow mode: every checker, each function
# with less inlining of its callees - a tenth of the deep mode's CPU (25 s against 7 s for
# mutex_recipe.cpp), which made tidy the longest gate of CI on a busy machine. --deep (or
# TIDY_DEEP=1) runs the analyzer's default, deep mode: before a release, and on a change to the
# recipe's or the session's state machines.
# The compile database comes from a configure-only build of the library in build-tidy (seconds:
# nothing is compiled), so the flags are exactly the library's.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TIDY_BUILD_DIR:-build-tidy}
cmake -S . -B "$build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DZKLOCK_BUILD_TESTS=OFF \
  -DZKLOCK_BUILD_EXAMPLES=OFF -DZKLOCK_BUILD_TOOLS=OFF -DZKLOCK_INSTALL=OFF >/dev/null

deep=${TIDY_DEEP:-0}
if [ "${1:-}" = --deep ]; then
  deep=1
  shift
fi
analyzer=()
[ "$deep" = 1 ] || analyzer=(--extra-arg=-Xclang --extra-arg=-analyzer-config
                             --extra-arg=-Xclang --extra-arg=mode=shallow)
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(src/*/*.cpp)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# One file per process, as many at once as there are cores.
status=0
printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -n 1 clang-tidy -p "$build" --quiet --warnings-as-errors='*' "${analyzer[@]}" >"$log" 2>&1 ||
  status=$?
# clang-tidy prints each header finding once per file that includes it: show each once.
findings=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$log" | sort -u || true)
if [ "$status" -ne 0 ] || [ -n "$findings" ]; then
  cat "$log" >&2
  echo "tidy: $(printf '%s\n' "$findings" | grep -c . || true) findings in ${#files[@]} files:" >&2
  printf '%s\n' "$findings" | sed "s|^$PWD/||" >&2
  exit 1
fi
echo "tidy: ${#files[@]} files, no findings ($([ "$deep" = 1 ] && echo deep || echo shallow) analysis)"
