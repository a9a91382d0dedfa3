# CLI suite: the real `zklock` binary (tools/zklock) against real ZooKeeper servers started by the
# test (tests/cli/cli_*_test.cpp), and its command-line parsing on its own (unit tier). Included by
# tests/CMakeLists.txt.
if(NOT TARGET zklock-cli)
  message(STATUS "zklock CLI tests: skipped (ZKLOCK_BUILD_TOOLS is off)")
  return()
endif()
find_package(nlohmann_json REQUIRED)
# cli_status_watch_test runs `zklock status --watch` in a tmux pane: it needs tmux (scripts/deps.sh)
# and skips without it - fails with CI=true.
zklock_add_test(cli_test ${CMAKE_CURRENT_LIST_DIR}/cli_process.cpp ${CMAKE_CURRENT_LIST_DIR}/cli_exec_test.cpp
                ${CMAKE_CURRENT_LIST_DIR}/cli_hold_test.cpp ${CMAKE_CURRENT_LIST_DIR}/cli_lost_lock_test.cpp
                ${CMAKE_CURRENT_LIST_DIR}/cli_status_test.cpp
                ${CMAKE_CURRENT_LIST_DIR}/cli_status_watch_test.cpp
                ${CMAKE_CURRENT_LIST_DIR}/cli_shared_test.cpp
                ${CMAKE_CURRENT_LIST_DIR}/cli_lock_delay_test.cpp
                ${CMAKE_CURRENT_LIST_DIR}/cli_revoke_test.cpp
                ${CMAKE_CURRENT_LIST_DIR}/cli_elect_test.cpp
                LIBS zklock nlohmann_json::nlohmann_json TIMEOUT 300)
target_include_directories(cli_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)  # test_env.h
target_compile_definitions(cli_test PRIVATE ZKLOCK_CLI="$<TARGET_FILE:zklock-cli>")
add_dependencies(cli_test zklock-cli)
# --metrics-listen, fetched with cpp-httplib's client (the CLI needs the library anyway).
find_package(CppHttplib REQUIRED)
zklock_add_test(cli_metrics_listen_test ${CMAKE_CURRENT_LIST_DIR}/cli_process.cpp
                ${CMAKE_CURRENT_LIST_DIR}/cli_metrics_listen_test.cpp
                LIBS zklock CppHttplib::CppHttplib TIMEOUT 120)
target_include_directories(cli_metrics_listen_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)
target_compile_definitions(cli_metrics_listen_test PRIVATE ZKLOCK_CLI="$<TARGET_FILE:zklock-cli>")
add_dependencies(cli_metrics_listen_test zklock-cli)
zklock_add_unit_test(cli_options_test ${CMAKE_CURRENT_LIST_DIR}/command_line_test.cpp
                     ${CMAKE_CURRENT_LIST_DIR}/duration_test.cpp
                     ${CMAKE_CURRENT_LIST_DIR}/watch_view_test.cpp LIBS zklock_cli)
