#!/usr/bin/env bash
# The README's test command, and CI's gates. Installs what is missing (scripts/deps.sh), builds and
# runs the tests. The tests start (and stop) every ZooKeeper server they need on loopback ports;
# none needs to be running beforehand.
#
#   scripts/test.sh              build in build/ and run the whole ctest suite
#   scripts/test.sh unit         build, then only the server-free unit tier (ctest -L unit)
#   scripts/test.sh ci           every gate below (.ci/run), warnings as errors
#   scripts/test.sh GATE...      the named gates:
#     format  clang-format check of src include tests tools examples (scripts/format.sh --check)
#     docs    the API reference from the public headers, a Doxygen warning fails (target docs)
#     build   compile, then suite: the whole ctest suite in parallel (build/)
#     demo    scripts/demo.sh on that build: every example, the CLI, a lost session
#     tidy    clang-tidy on src/ and include/, a finding fails (scripts/tidy.sh)
#     asan    the whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#     tsan    the session, mutex, shared mutex, async, lock set and semaphore suites under
#             ThreadSanitizer (build-tsan/, tests/tsan.supp)
#     fuzz    each fuzz target for ZKLOCK_FUZZ_SECONDS (scripts/fuzz.sh, build-fuzz/)
#   A gate that fails does not stop the others; the run fails if any did. In `ci`, tidy runs
#   while the suite runs (the suite mostly waits on servers; tidy is all CPU).
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
# The sanitizer builds: -O1 (what the sanitizers' documentation recommends) and line tables only
# (-g1) compile in half the time of RelWithDebInfo's -O2 -g; reports still name file and line.
sanitizer_build=(-DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1" -DZKLOCK_BUILD_EXAMPLES=OFF)

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
gate_docs() {
  configure "$build" >/dev/null
  cmake --build "$build" --target docs
}
gate_compile() {
  configure "$build"
  cmake --build "$build" -j"$jobs"
}
gate_suite() { run_ctest "$build"; }
gate_build() {
  gate_compile
  gate_suite
}
gate_unit() {
  gate_compile
  run_ctest "$build" -L unit
}
gate_demo() { BUILD_DIR=$build scripts/demo.sh; }
# In `ci`, tidy runs beside the suite: at the lowest CPU priority, so that the suite's timing
# scenarios (blips, frozen holders) get the cores whenever they need them.
gate_tidy() { nice -n 19 scripts/tidy.sh; }
gate_asan() {
  # Examples: tests/fencing builds the two it runs. The consumer tests stay out (tests/consumers).
  configure build-asan "${sanitizer_build[@]}" -DZKLOCK_SANITIZE=address,undefined
  cmake --build build-asan -j"$jobs"
  run_ctest build-asan
}
gate_tsan() {
  configure build-tsan "${sanitizer_build[@]}" -DZKLOCK_SANITIZE=thread -DZKLOCK_BUILD_TOOLS=OFF
  local suites=(session_test session_robustness_test mutex_test mutex_lifetime_test shared_mutex_test
                async_lock_test lock_set_test semaphore_test)
  cmake --build build-tsan -j"$jobs" --target "${suites[@]}"
  run_ctest build-tsan -R "^($(IFS='|'; echo "${suites[*]}"))\$"
}
gate_fuzz() { scripts/fuzz.sh; }

gates=("$@")
ci=false
if [ ${#gates[@]} -eq 0 ]; then
  gates=(build)
elif [ "${gates[*]}" = "ci" ]; then
  ci=true
  gates=(format docs compile tidy suite demo asan tsan fuzz)
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

summary=()
failed=0
# run_gate NAME: runs gate_NAME in a subshell of its own with errexit, so that any failing step
# fails the gate (inside an `if`, bash would ignore errexit and judge it by its last command).
run_gate() {
  local start=$SECONDS rc
  [ ${#gates[@]} -gt 1 ] && echo "== gate $1"
  set +e
  (
    set -e
    "gate_$1"
  )
  rc=$?
  set -e
  record "$1" "$rc" "$start"
}
record() {  # NAME STATUS START
  local result=passed
  if [ "$2" -ne 0 ]; then
    result=FAILED
    failed=$((failed + 1))
  fi
  summary+=("$(printf '%-7s %-6s %5d s' "$1" "$result" $((SECONDS - $3)))")
}
# start_gate NAME / finish_gate NAME: the same, in the background, its output shown at the end.
start_gate() {
  background_start=$SECONDS
  background_log=$(mktemp)
  (
    set -e
    "gate_$1"
  ) >"$background_log" 2>&1 &
  background_pid=$!
}
finish_gate() {
  local rc=0
  wait "$background_pid" || rc=$?
  echo "== gate $1 (ran in the background from $((background_start - run_start)) s)"
  cat "$background_log"
  rm -f "$background_log"
  record "$1" "$rc" "$background_start"
}

run_start=$SECONDS
if [ ${#gates[@]} -gt 1 ]; then
  echo "== $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); gates: ${gates[*]}"
fi
for g in "${gates[@]}"; do
  if $ci && [ "$g" = tidy ]; then
    start_gate tidy
  elif $ci && [ "$g" = suite ]; then
    run_gate suite
    finish_gate tidy
  else
    run_gate "$g"
  fi
done
if [ ${#gates[@]} -gt 1 ]; then
  echo "== summary: $((SECONDS - run_start)) s in all (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  printf '  %s\n' "${summary[@]}"
  echo "gates: $((${#gates[@]} - failed)) passed, $failed failed"
fi
[ "$failed" -eq 0 ]
