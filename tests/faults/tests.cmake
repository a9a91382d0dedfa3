# Fault injection (tests/faults, docs/reliability.md): lock holders as child processes
# (fault_holder) cut off by FaultProxy, frozen with SIGSTOP, SIGKILLed; a fenced store that refuses
# stale tokens; a checker over the logs; network blips against a 6 s session for Mutex and
# `zklock exec`. Included by tests/CMakeLists.txt.
#
# ZKLOCK_SOAK=1 (or a number of seconds) turns on the long run: more trials per scenario and a
# longer randomised run. Run the binaries directly for that (ctest's timeout below is for CI);
# ZKLOCK_FAULT_SEED=<n> replays the randomised run's fault schedule.

set(_faults ${CMAKE_CURRENT_LIST_DIR})

# The store and the checker, shared by the tests and (the store's client) by fault_holder.
add_library(zklock_fault_tools STATIC ${_faults}/fenced_store.cpp ${_faults}/fault_logs.cpp
            ${_faults}/fault_checker.cpp)
target_include_directories(zklock_fault_tools PUBLIC ${_faults})
target_link_libraries(zklock_fault_tools PUBLIC zklock_test_support)

add_executable(fault_holder ${_faults}/fault_holder.cpp)
target_link_libraries(fault_holder PRIVATE zklock zklock_fault_tools Threads::Threads)

zklock_add_unit_test(fault_checker_test ${_faults}/fault_checker_test.cpp LIBS zklock_fault_tools)
zklock_add_test(fault_suite_test ${_faults}/fault_suite_test.cpp ${_faults}/broken_holder_test.cpp
                ${_faults}/trial.cpp
                LIBS zklock zklock_fault_tools TIMEOUT 900 LABELS faults COST 115)
target_compile_definitions(fault_suite_test PRIVATE FAULT_HOLDER_BIN="$<TARGET_FILE:fault_holder>")
add_dependencies(fault_suite_test fault_holder)

# Its trials judge timing (a 0.75 T blip must be kept) by the blip asked for, through a proxy in
# this process: beside the kernel-fault suites' forty trials at once it is not run as designed
# (the flake audit: every trial of one run lost at once), so it never runs beside them either.
zklock_add_test(blip_test ${_faults}/blip_test.cpp
                LIBS zklock zklock_fault_tools TIMEOUT 900 LABELS faults RESOURCE_LOCK netns)
target_compile_definitions(blip_test PRIVATE FAULT_HOLDER_BIN="$<TARGET_FILE:fault_holder>")
add_dependencies(blip_test fault_holder)
if(TARGET zklock-cli)
  # The `zklock exec` trials run the real CLI; without the target they skip (and say why).
  target_compile_definitions(blip_test PRIVATE ZKLOCK_CLI_BIN="$<TARGET_FILE:zklock-cli>")
  add_dependencies(blip_test zklock-cli)
endif()
