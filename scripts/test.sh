#!/usr/bin/env bash
# The README's test command, and CI's gates. Installs what is missing (scripts/deps.sh), builds and
# runs the tests. The tests start (and stop) every ZooKeeper server they need on loopback ports;
# none needs to be running beforehand.
#
#   scripts/test.sh              build in build/ and run the whole ctest suite
#   scripts/test.sh unit         build, then only the server-free unit tier (ctest -L unit)
#   scripts/test.sh ci           every gate below, in this order (.ci/run)
#   scripts/test.sh GATE...      the named gates:
#     format  clang-format check of src include tests tools examples (scripts/format.sh --check)
#     docs    the API reference from the public headers, a Doxygen warning fails (target docs)
#     build   warnings as errors, the whole suite, ctest in parallel (build/)
#     demo    scripts/demo.sh on that build: every example, the CLI, a lost session
#     tidy    clang-tidy on src/ and include/, a finding fails (scripts/tidy.sh)
#     asan    the whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#     tsan    session_test and mutex_test under ThreadSanitizer (build-tsan/, tests/tsan.supp)
#     fuzz    each fuzz target for ZKLOCK_FUZZ_SECONDS (scripts/fuzz.sh, build-fuzz/)
#   A gate that fails does not stop the others; the run fails if any did.
#
# Environment for the default run and the build gate: BUILD_DIR (build), CMAKE_ARGS, CTEST_ARGS,
# e.g. the sanitizer runs by hand:
#   BUILD_DIR=build-tsan CMAKE_ARGS=-DZKLOCK_SANITIZE=thread CTEST_ARGS="-R session|mutex" scripts/test.sh
# JOBS: parallel compile and ctest jobs (default: the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

jobs=${JOBS:-$(nproc)}
build=${BUILD_DIR:-build}
werror=OFF

configure() {  # DIR ARGS...
  local dir=$1
  shift
  # shellcheck disable=SC2086
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZKLOCK_WERROR=$werror "$@" ${CMAKE_ARGS:-}
}
run_ctest() {  # DIR ARGS...
  local dir=$1
  shift
  # shellcheck disable=SC2086
  ctest --test-dir "$dir" --output-on-failure --timeout 900 -j"$jobs" "$@" ${CTEST_ARGS:-}
}

gate_format() { scripts/format.sh --check; }
gate_tidy() { scripts/tidy.sh; }
gate_build() {
  configure "$build"
  cmake --build "$build" -j"$jobs"
  run_ctest "$build"
}
gate_unit() {
  configure "$build"
  cmake --build "$build" -j"$jobs"
  run_ctest "$build" -L unit
}
gate_docs() {
  configure "$build" >/dev/null
  cmake --build "$build" --target docs
}
gate_demo() { BUILD_DIR=$build scripts/demo.sh; }
gate_asan() {
  # Examples: tests/fencing builds the two it runs. The consumer tests stay out (tests/consumers).
  configure build-asan -DZKLOCK_SANITIZE=address,undefined -DZKLOCK_BUILD_EXAMPLES=OFF
  cmake --build build-asan -j"$jobs"
  run_ctest build-asan
}
gate_tsan() {
  configure build-tsan -DZKLOCK_SANITIZE=thread -DZKLOCK_BUILD_EXAMPLES=OFF -DZKLOCK_BUILD_TOOLS=OFF
  cmake --build build-tsan -j"$jobs" --target session_test mutex_test
  run_ctest build-tsan -R '^(session_test|mutex_test)$'
}
gate_fuzz() { scripts/fuzz.sh; }

gates=("$@")
if [ ${#gates[@]} -eq 0 ]; then
  gates=(build)
elif [ "${gates[*]}" = "ci" ]; then
  gates=(format docs build demo tidy asan tsan fuzz)
  werror=ON
fi
for g in "${gates[@]}"; do
  declare -F "gate_$g" >/dev/null || { echo "scripts/test.sh: no gate \"$g\"" >&2; exit 64; }
done

# What the gates need beyond the build: clang-format, clang-tidy, clang, doxygen.
needs_gate_tools=false
for g in "${gates[@]}"; do
  case $g in format | tidy | docs | fuzz) needs_gate_tools=true ;; esac
done
if $needs_gate_tools; then zklock_install_deps gates; else zklock_install_deps; fi

if [ ${#gates[@]} -gt 1 ]; then
  echo "== $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); gates: ${gates[*]}"
fi
summary=()
failed=0
for g in "${gates[@]}"; do
  [ ${#gates[@]} -gt 1 ] && echo "== gate $g"
  start=$SECONDS
  # A subshell of its own with errexit, so that any failing step fails the gate (inside an `if`,
  # bash would ignore errexit and judge the gate by its last command only).
  set +e
  (
    set -e
    "gate_$g"
  )
  rc=$?
  set -e
  if [ "$rc" -eq 0 ]; then result=passed; else result=FAILED; failed=$((failed + 1)); fi
  summary+=("$(printf '%-7s %-6s %5d s' "$g" "$result" $((SECONDS - start)))")
done
if [ ${#gates[@]} -gt 1 ]; then
  echo "== summary (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  printf '  %s\n' "${summary[@]}"
  echo "gates: $((${#gates[@]} - failed)) passed, $failed failed"
fi
[ "$failed" -eq 0 ]
