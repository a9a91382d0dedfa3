# Faults made by the kernel (tests/netfaults, docs/reliability.md "Faults made by the kernel"):
# servers and lock contenders in network namespaces, links cut silently with tc's blackhole qdisc.
# Needs root and iproute2; without them the tests skip with the reason - or fail, when
# ZKLOCK_REQUIRE_NETNS=1 (CI). ZKLOCK_SOAK=1 runs more trials (run the binaries directly then).
# Included by tests/CMakeLists.txt.
#
# Every safety scenario also runs in the client configurations production uses (client_config.h,
# issue 20) - chroot, host names, all servers listed, an observer - as more holder/waiter pairs
# sharing the same cut, not as more trials. One binary per scenario so that `ctest -j` overlaps
# them (wall times measured on the 2-core VM, 5 trials, ctest -j2 -L netfaults; under ASan in
# brackets): follower_cut_test 71 s [93 s] (follower and observer cuts), leader_isolation_test
# 136 s [143 s], physical_blip_test 124 s [157 s], production_blip_test 68 s [60 s], netns_test
# 11 s [17 s].

set(_netfaults ${CMAKE_CURRENT_LIST_DIR})

# The contenders (fault_holder, `zklock exec`) and the namespaced ensemble, shared by the suites.
add_library(zklock_netfault_tools STATIC ${_netfaults}/contenders.cpp
                                         ${_netfaults}/netns_ensemble.cpp
                                         ${_netfaults}/client_config.cpp)
target_include_directories(zklock_netfault_tools PUBLIC ${_netfaults})
target_link_libraries(zklock_netfault_tools PUBLIC zklock_fault_tools zklock_test_support)
target_compile_definitions(zklock_netfault_tools
                           PRIVATE FAULT_HOLDER_BIN="$<TARGET_FILE:fault_holder>")
add_dependencies(zklock_netfault_tools fault_holder)
if(TARGET zklock-cli)
  # `zklock exec` contenders run the real CLI; without the target they cannot start (and say so).
  target_compile_definitions(zklock_netfault_tools PRIVATE ZKLOCK_CLI_BIN="$<TARGET_FILE:zklock-cli>")
  add_dependencies(zklock_netfault_tools zklock-cli)
endif()

# The trials and verdicts of the cut scenarios (follower, observer, leader) and of the blips.
# Every test here runs alone among them (RESOURCE_LOCK netns): dozens of namespaces made and
# deleted at once by two of them hold the kernel's rtnl lock long enough for a heal's `tc` to
# miss its moment (seen: 30 s). COST: the seconds each takes, so that ctest starts them first.
add_library(zklock_netfault_trials STATIC ${_netfaults}/cut_trial.cpp ${_netfaults}/blip_trial.cpp
            ${_netfaults}/pace.cpp)
target_link_libraries(zklock_netfault_trials PUBLIC zklock zklock_netfault_tools)

zklock_add_test(netns_test ${_netfaults}/netns_test.cpp
                LIBS zklock_netfault_tools TIMEOUT 300 LABELS netfaults
                COST 15 RESOURCE_LOCK netns)

# The scenarios: NAME COST (seconds), each ${_netfaults}/NAME.cpp on the trials library.
foreach(_scenario follower_cut_test 90 physical_blip_test 130 leader_isolation_test 140
                  production_blip_test 100)
  if(NOT _name)
    set(_name ${_scenario})
    continue()
  endif()
  zklock_add_test(${_name} ${_netfaults}/${_name}.cpp LIBS zklock_netfault_trials TIMEOUT 900
                  LABELS netfaults COST ${_scenario} RESOURCE_LOCK netns)
  unset(_name)
endforeach()

# The same scenarios with clients that speak TLS (issue 25; client_config.h, kTls): the follower
# cut and the production blips again, the same binaries with ZKLOCK_NETFAULTS_TLS=1, which runs
# their TLS pairs only (see the file comments of follower_cut_test.cpp and
# production_blip_test.cpp). Only where the C client has TLS (ZooKeeper_HAS_SSL: CI's TLS gate,
# built with ASan); labelled tls, and netfaults like the plain runs. Each runs alone (RUN_SERIAL):
# a dozen ASan-built contenders doing TLS handshakes at once fill two cores by themselves, and
# beside another suite's servers a 0.75 T blip's budget went to the waiting, not to the network
# (measured: a 0.75 T blip kept 3 of 20 beside the mutex suite, 20 of 20 alone).
if(ZooKeeper_HAS_SSL)
  foreach(_scenario follower_cut_test 90 production_blip_test 90)
    if(NOT _name)
      set(_name ${_scenario})
      continue()
    endif()
    add_test(NAME ${_name}_over_tls COMMAND ${_name})
    set_tests_properties(${_name}_over_tls PROPERTIES
                         TIMEOUT 600 LABELS "netfaults;tls" COST ${_scenario} RUN_SERIAL ON
                         ENVIRONMENT "${ZKLOCK_TEST_ENVIRONMENT};${ZKLOCK_TLS_TEST_ENVIRONMENT};ZKLOCK_NETFAULTS_TLS=1")
    unset(_name)
  endforeach()
endif()
