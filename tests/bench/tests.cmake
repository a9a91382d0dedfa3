# Benchmark smoke test: runs build/bin/zklock-bench once per mode on small numbers against the
# test server and checks its JSON line (keys present, counts right, overlaps == 0). No speed
# assertions: the figures themselves are for scripts/bench_compare.sh (docs/benchmarks.md).
# Included by tests/CMakeLists.txt; needs the tools (ZKLOCK_BUILD_TOOLS).
if(TARGET zklock-bench)
  zklock_add_test(bench_smoke_test bench/bench_smoke_test.cpp TIMEOUT 300 LABELS bench)
  target_compile_definitions(bench_smoke_test PRIVATE ZKLOCK_BENCH_BIN="$<TARGET_FILE:zklock-bench>")
  add_dependencies(bench_smoke_test zklock-bench)
endif()
