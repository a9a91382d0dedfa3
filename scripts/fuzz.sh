#!/usr/bin/env bash
# Bounded fuzzing (tests/fuzz): builds the libFuzzer targets with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in build-fuzz/ and runs each for ZKLOCK_FUZZ_SECONDS (default 25).
# A property violation or crash fails the run and leaves the input as build-fuzz/tests/fuzz/crash-*
# (the target prints it escaped, ready for a unit test); new interesting inputs are kept in
# build-fuzz/tests/fuzz/corpus/ for the next local run (copy good ones to tests/fuzz/corpus/).
#   scripts/fuzz.sh [build|run]             ZKLOCK_FUZZ_SECONDS=600 scripts/fuzz.sh
# `build` only builds, `run` only runs what was built (CI builds while the suite runs); neither:
# both. Only the fuzz targets are built: they link the three library files whose parsers they
# call (tests/fuzz/CMakeLists.txt), not the library.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FUZZ_BUILD_DIR:-build-fuzz}
step=${1:-all}
if [ "$step" != run ]; then
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DZKLOCK_BUILD_FUZZERS=ON -DZKLOCK_SANITIZE=address,undefined -DZKLOCK_WERROR=ON \
  -DZKLOCK_BUILD_TESTS=OFF -DZKLOCK_BUILD_EXAMPLES=OFF -DZKLOCK_BUILD_TOOLS=OFF -DZKLOCK_INSTALL=OFF \
  -DZKLOCK_FUZZ_SECONDS="${ZKLOCK_FUZZ_SECONDS:-25}" >/dev/null
cmake --build "$build" -j"${JOBS:-$(nproc)}" --target fuzz_paths fuzz_contender_names
fi
[ "$step" = build ] && exit 0
# One fuzzer per core at once; each is single-threaded.
ctest --test-dir "$build" -L fuzz --output-on-failure -j"${JOBS:-$(nproc)}"
