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
#     asan    the in-process suites - the unit tier and the library's suites against real
#             servers - under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/); the
#             suites whose subject is another process (CLI, examples, fault holders) and the
#             peers' run in `suite`
#     tsan    the concurrency suites - the client's forced reconnect, session, mutex (lifetime,
#             cleanup, lock-delay, revocation), shared mutex, async, lock set, semaphore,
#             election, the figures and the event hook - under ThreadSanitizer (build-tsan/,
#             tests/tsan.supp)
#     fuzz    each fuzz target for ZKLOCK_FUZZ_SECONDS (scripts/fuzz.sh, build-fuzz/)
#     tls     the TLS runs (ctest -L tls: the TLS suite, the wire suites and the kernel-fault
#             scenarios over TLS) in build-tls/ (TLS_BUILD_DIR) under ASan+UBSan, against
#             ZooKeeper's own C client built with OpenSSL and ASan by scripts/zookeeper-client.sh
#             into build-tls/zookeeper-client - once: later runs reuse it while the installed
#             zookeeper version is the same
#   A gate that fails does not stop the others; the run fails if any did. In `ci` each test runs
#   once: `suite` runs the out-of-process suites, `asan` the in-process ones and the unit tier.
#
# In `ci` every configuration is built once, and the CPU-bound work overlaps the runs, which mostly
# wait on servers: the sanitizer builds come first, on both cores; the plain compile runs in the
# background at the lowest priority while the sanitizer runs run, then tidy and the fuzz build the
# same way while the suite and the demo run; the fuzz run comes last (at niceness 0 instead of the
# lowest priority when other work keeps the machine busy). Each gate's time is printed (a
# sanitizer gate's build with it), and the total at the end.
#
# Environment for the default run and the build gate: BUILD_DIR (build), CMAKE_ARGS, CTEST_ARGS,
# e.g. the sanitizer runs by hand:
#   BUILD_DIR=build-tsan CMAKE_ARGS=-DZKLOCK_SANITIZE=thread CTEST_ARGS="-R session|mutex" scripts/test.sh
# JOBS: parallel compile jobs and tests (default: the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

jobs=${JOBS:-$(nproc)}
build=${BUILD_DIR:-build}
werror=OFF
# The sanitizer builds: the library at -O1 (what the sanitizers' documentation recommends), the
# tests at -O0 (ZKLOCK_TEST_CXX_FLAGS: they compile in 60% of the time, and they are not what is
# under test), line tables only (-g1); reports still name file and line.
# A sanitizer instruments the test process: the sanitizer builds hold the in-process suites only
# (ZKLOCK_BUILD_OUT_OF_PROCESS_SUITES=OFF, tests/CMakeLists.txt), without the CLI and the examples.
# The library as a unity build (CMAKE_UNITY_BUILD; the test tree stays file by file): a third of
# its compile time, and reports still name each source file and line.
sanitizer_build=(-DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -g1" -DZKLOCK_TEST_CXX_FLAGS=-O0
                 -DZKLOCK_BUILD_EXAMPLES=OFF -DZKLOCK_BUILD_TOOLS=OFF
                 -DZKLOCK_BUILD_OUT_OF_PROCESS_SUITES=OFF -DCMAKE_UNITY_BUILD=ON)
# The concurrency suites under TSan (ctest names a server suite by its binary).
tsan_suites=(client_reconnect_test session_test session_robustness_test session_handover_test session_resolver_test
             mutex_test mutex_lifetime_test mutex_cleanup_test shared_mutex_test async_lock_test
             mutex_lock_delay_test mutex_revocation_test lock_set_test semaphore_test
             semaphore_acquire_n_test semaphore_async_test
             semaphore_cleanup_test metrics_test election_test)
# Unit binaries under TSan: ctest knows their cases (SUITE.CASE), not the binary, so they are run by
# their GoogleTest suite names.
tsan_unit_binaries=(prometheus_test)
tsan_unit_suites=(PrometheusTest)

configure() {  # DIR ARGS...
  local dir=$1
  shift
  # shellcheck disable=SC2086
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZKLOCK_WERROR=$werror \
    "${ci_build_flags[@]}" "$@" ${CMAKE_ARGS:-}
}
run_ctest() {  # DIR JOBS ARGS...
  local dir=$1 j=$2
  shift 2
  # shellcheck disable=SC2086
  ctest --test-dir "$dir" --output-on-failure --timeout 900 -j"$j" "$@" ${CTEST_ARGS:-}
}

gate_format() { scripts/format.sh --check; }
gate_docs() {
  configure "$build" "${plain_ci_flags[@]}" >/dev/null
  cmake --build "$build" --target docs
}
gate_compile() {
  configure "$build" "${plain_ci_flags[@]}"
  cmake --build "$build" -j"$jobs"
}
gate_suite() { run_ctest "$build" "$jobs"; }
gate_build() {
  gate_compile
  gate_suite
}
gate_unit() {
  gate_compile
  run_ctest "$build" "$jobs" -L unit
}
gate_demo() { BUILD_DIR=$build scripts/demo.sh; }
gate_tidy() { scripts/tidy.sh; }
build_asan() {
  configure build-asan "${sanitizer_build[@]}" -DZKLOCK_SANITIZE=address,undefined
  cmake --build build-asan -j"$jobs"
}
run_asan() { run_ctest build-asan "$jobs"; }
gate_asan() {
  build_asan
  run_asan
}
build_tsan() {
  configure build-tsan "${sanitizer_build[@]}" -DZKLOCK_SANITIZE=thread
  cmake --build build-tsan -j"$jobs" --target "${tsan_suites[@]}" "${tsan_unit_binaries[@]}"
}
run_tsan() {
  run_ctest build-tsan "$jobs" --no-tests=error \
    -R "^($(IFS='|'; echo "${tsan_suites[*]}"))\$|^($(IFS='|'; echo "${tsan_unit_suites[*]}"))\\."
}
gate_tsan() {
  build_tsan
  run_tsan
}
# The TLS build: under ASan+UBSan as the asan build, against ZooKeeper's C client built with
# OpenSSL and with ASan too (so that a forced reconnect racing the C client's SSL state is an ASan
# report, not a rare crash), holding only what the TLS runs need (ctest -L tls): the TLS suite, the
# wire suites run over TLS (tests/tls/tests.cmake) and the kernel-fault scenarios' TLS runs with
# their contenders (fault_holder, the CLI).
tls_build=${TLS_BUILD_DIR:-build-tls}
tls_targets=(tls_test tls_connection_phase_test tls_cli_test mutex_test shared_mutex_test
             semaphore_test semaphore_async_test async_lock_test follower_cut_test
             production_blip_test)
build_tls() {
  ZKLOCK_ZK_CFLAGS="-fsanitize=address -fno-omit-frame-pointer" \
    scripts/zookeeper-client.sh "$tls_build/zookeeper-client"
  configure "$tls_build" -DZooKeeper_ROOT="$PWD/$tls_build/zookeeper-client" \
    "${sanitizer_build[@]}" -DZKLOCK_SANITIZE=address,undefined \
    -DZKLOCK_BUILD_TOOLS=ON -DZKLOCK_BUILD_OUT_OF_PROCESS_SUITES=ON
  cmake --build "$tls_build" -j"$jobs" --target "${tls_targets[@]}"
}
run_tls() { run_ctest "$tls_build" "$jobs" -L tls --no-tests=error; }
gate_tls() {
  build_tls
  run_tls
}
build_fuzz() { scripts/fuzz.sh build; }
run_fuzz() { scripts/fuzz.sh run; }
gate_fuzz() { scripts/fuzz.sh; }

gates=("$@")
ci=false
ci_build_flags=()
plain_ci_flags=()
if [ ${#gates[@]} -eq 0 ]; then
  gates=(build)
elif [ "${gates[*]}" = "ci" ]; then
  ci=true
  gates=(format docs compile tidy suite demo asan tsan fuzz tls)
  werror=ON
  # RelWithDebInfo with line tables only (-g1): a fifth less compile time than -g, and a
  # backtrace still names file and line.
  ci_build_flags=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
  # The tests' own code at -O0 (a third less compile time; they wait on servers, they are not what
  # is under test); the library, the CLI, the examples and the benchmark keep -O2.
  ci_build_flags+=(-DZKLOCK_TEST_CXX_FLAGS=-O0)
  # Each test runs once, in the build that sees most in it: the unit tier and the library's
  # suites against real servers under ASan+UBSan (asan; the concurrency suites under TSan too),
  # the out-of-process suites - CLI, examples, fault holders, peers, kernel faults, packaging - in
  # the plain build (suite), which therefore does not compile the former.
  plain_ci_flags=(-DZKLOCK_BUILD_IN_PROCESS_SUITES=OFF)
fi
for g in "${gates[@]}"; do
  declare -F "gate_$g" >/dev/null || { echo "scripts/test.sh: no gate \"$g\"" >&2; exit 64; }
done

# What the gates need beyond the build: clang-format, clang-tidy, clang, doxygen.
needs_gate_tools=false
for g in "${gates[@]}"; do
  case $g in format | tidy | docs | fuzz | tls) needs_gate_tools=true ;; esac
done
if $needs_gate_tools; then zklock_install_deps gates; else zklock_install_deps; fi

summary=()
failed=0
run_start=$SECONDS
record() {  # NAME STATUS SECONDS [NOTE]
  local result=passed
  if [ "$2" -ne 0 ]; then
    result=FAILED
    failed=$((failed + 1))
  fi
  summary+=("$(printf '%-7s %-6s %5d s%s' "$1" "$result" "$3" "${4:+  ($4)}")")
}
# in_subshell FUNCTION: runs it with errexit in a subshell of its own, so that any failing step
# fails it (inside an `if`, bash would ignore errexit and judge it by its last command).
in_subshell() {
  local rc
  set +e
  (
    set -e
    "$1"
  )
  rc=$?
  set -e
  return "$rc"
}
run_gate() {  # NAME
  local start=$SECONDS rc=0
  [ ${#gates[@]} -gt 1 ] && echo "== gate $1"
  in_subshell "gate_$1" || rc=$?
  record "$1" "$rc" $((SECONDS - start))
}

# Background work in `ci`: started with start_background NAME FUNCTION NICENESS, collected (its
# output shown, its status and time kept) with finish_background NAME.
declare -A background_pid background_log background_start background_status background_time
start_background() {  # NAME FUNCTION NICENESS
  background_log[$1]=$(mktemp)
  background_start[$1]=$SECONDS
  (
    renice -n "$3" -p "$BASHPID" >/dev/null  # what it starts inherits the niceness
    begin=$SECONDS
    rc=0
    in_subshell "$2" || rc=$?
    echo "$rc $((SECONDS - begin))" >"${background_log[$1]}.status"
  ) >"${background_log[$1]}" 2>&1 &
  background_pid[$1]=$!
}
# renice_tree NICENESS PID: the process and everything it started, parents first (what a parent
# starts after its turn inherits the new niceness).
renice_tree() {
  renice -n "$1" -p "$2" >/dev/null 2>&1 || return 0
  local child
  for child in $(pgrep -P "$2"); do renice_tree "$1" "$child"; done
}
finish_background() {
  # Nothing in the foreground is left to give way to: on a loaded machine the lowest priority
  # would starve it (a busy loop at niceness 0 leaves niceness 19 about 1.5% of a core).
  renice_tree 0 "${background_pid[$1]}"
  wait "${background_pid[$1]}" || true
  echo "== $1 (ran in the background from $((background_start[$1] - run_start)) s)"
  cat "${background_log[$1]}"
  read -r background_status[$1] background_time[$1] <"${background_log[$1]}.status" ||
    { background_status[$1]=1; background_time[$1]=0; }
  rm -f "${background_log[$1]}" "${background_log[$1]}.status"
}
# ci_build NAME: build_NAME, its status and time kept in $builds_dir for run_built_gate.
ci_build() {
  local start=$SECONDS rc=0
  echo "== build $1"
  in_subshell "build_$1" || rc=$?
  if [ "$rc" -eq 0 ]; then echo "== build $1: $((SECONDS - start)) s"; else
    echo "== build $1 FAILED after $((SECONDS - start)) s"; fi
  echo "$rc $((SECONDS - start))" >"$builds_dir/$1"
}
ci_build_fuzz() { ci_build fuzz; }
ci_build_tls() { ci_build tls; }
# A sanitizer or fuzz gate in `ci`: its build ran before (ci_build); now the run.
run_built_gate() {  # NAME
  local start=$SECONDS rc=0 build_rc build_time
  echo "== gate $1"
  read -r build_rc build_time <"$builds_dir/$1" || { build_rc=1; build_time=0; }
  if [ "$build_rc" -ne 0 ]; then
    echo "its build failed (see \"build $1\" above)"
    rc=$build_rc
  else
    in_subshell "run_$1" || rc=$?
  fi
  record "$1" "$rc" $((SECONDS - start + build_time)) "build ${build_time} s of it"
}

# measure_busy_percent: sets busy_percent to how busy the cores were over one second, in percent
# of all of them (/proc/stat; user, nice, system, irq, softirq against the whole).
measure_busy_percent() {
  local before after
  before=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat)
  sleep 1
  after=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat)
  busy_percent=$(echo "$before $after" | awk '{t=$4-$2; print (t>0) ? int(100*($3-$1)/t) : 0}')
}
if [ ${#gates[@]} -gt 1 ]; then
  echo "== $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); gates: ${gates[*]}"
fi
if $ci; then
  builds_dir=$(mktemp -d)
  # The background work gives way to the runs (niceness 19) on a machine that is otherwise idle.
  # On one that other work keeps busy, the lowest priority would give way to that work instead:
  # a busy loop at niceness 0 leaves niceness 19 about 1.5% of a core, and the overlap is lost
  # (measured: the plain compile did nothing during the sanitizer runs, and the run took 46
  # minutes instead of 22). There it competes like everything else (niceness 0).
  measure_busy_percent  # before this run has started anything of its own
  background_niceness=19
  if [ "$busy_percent" -ge 40 ]; then background_niceness=0; fi
  echo "== the cores were ${busy_percent}% busy before the start:" \
    "background work at niceness $background_niceness"
  run_gate format
  run_gate docs
  # The sanitizer builds first, on both cores: their runs mostly wait on servers, so the plain
  # compile overlaps them - in the background at the lowest priority, so that the runs' timing
  # scenarios get the cores whenever they want them.
  ci_build asan
  ci_build tsan
  start_background compile gate_compile "$background_niceness"
  run_built_gate asan
  run_built_gate tsan
  finish_background compile
  record compile "${background_status[compile]}" "${background_time[compile]}" \
    "in the background from $((background_start[compile] - run_start)) s"
  # Then the suite and the demo, with tidy and the fuzz build in the background (the same way).
  start_background tidy gate_tidy "$background_niceness"
  start_background fuzz-build ci_build_fuzz "$background_niceness"
  start_background tls-build ci_build_tls "$background_niceness"
  if [ "${background_status[compile]}" -eq 0 ]; then
    run_gate suite
    run_gate demo
  else
    record suite 1 0 "not run: the compile failed"
    record demo 1 0 "not run: the compile failed"
  fi
  finish_background fuzz-build
  run_built_gate fuzz
  finish_background tls-build
  run_built_gate tls
  finish_background tidy
  record tidy "${background_status[tidy]}" "${background_time[tidy]}" "in the background"
  rm -rf "$builds_dir"
else
  for g in "${gates[@]}"; do run_gate "$g"; done
fi
if [ ${#gates[@]} -gt 1 ]; then
  echo "== summary: $((SECONDS - run_start)) s in all (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  printf '  %s\n' "${summary[@]}"
  echo "gates: $((${#gates[@]} - failed)) passed, $failed failed"
fi
[ "$failed" -eq 0 ]
