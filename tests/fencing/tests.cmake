# Fencing: commit_fenced against a real server, the SQLite store that refuses stale tokens, and the
# two fencing examples run as processes (concurrent increments; a holder frozen past its expiry).
# Included by tests/CMakeLists.txt.

# The test runs the example programs: build them here too when examples are off (or not added to
# examples/CMakeLists.txt), so the suite never depends on that switch.
if(NOT TARGET zklock-example-fenced-counter)
  add_subdirectory(${PROJECT_SOURCE_DIR}/examples/fenced ${CMAKE_CURRENT_BINARY_DIR}/fenced-examples)
endif()

zklock_add_test(fencing_test fencing/fencing_test.cpp
  LIBS zklock zklock_example_sqlite_store
  TIMEOUT 300)
target_compile_definitions(fencing_test PRIVATE
  FENCED_COUNTER_BIN="$<TARGET_FILE:zklock-example-fenced-counter>"
  ZNODE_COUNTER_BIN="$<TARGET_FILE:zklock-example-znode-counter>")
add_dependencies(fencing_test zklock-example-fenced-counter zklock-example-znode-counter)
