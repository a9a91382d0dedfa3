#!/usr/bin/env bash
# The flake audit (issue 21): the whole suite several times in a row with every core kept busy by
# a busy loop, so that a test that depends on the machine's speed or on a sleep shows up.
#   scripts/flake-audit.sh [RUNS [BUILD_DIR]]   default: 5 runs of build/ (build it first)
# Each run's failures are listed; the audit fails if any run failed. CTEST_ARGS passes more
# arguments to ctest (e.g. -L unit, -E interop).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
build=${2:-build}
[ -f "$build/CTestTestfile.cmake" ] || { echo "flake-audit: no test tree in $build" >&2; exit 64; }
busy=()
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  busy+=($!)
done
trap 'kill "${busy[@]}" 2>/dev/null || true' EXIT
failed=0
for run in $(seq "$runs"); do
  start=$SECONDS
  log="$build/flake-audit-$run.log"
  # shellcheck disable=SC2086
  if ctest --test-dir "$build" --output-on-failure --timeout 900 -j"$(nproc)" ${CTEST_ARGS:-} \
    >"$log" 2>&1; then
    echo "run $run: passed ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1))
    echo "run $run: FAILED ($((SECONDS - start)) s):"
    sed -n '/The following tests FAILED/,/Errors while running/p' "$log" | sed 's/^/  /'
  fi
done
echo "flake audit: $runs runs with $(nproc) busy loops, $failed failed (logs: $build/flake-audit-*.log)"
[ "$failed" -eq 0 ]
