#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole ctest suite. The tests start (and stop)
# every ZooKeeper server they need on loopback ports; none needs to be running beforehand.
#   scripts/test.sh                      # everything
#   BUILD_DIR=build-asan CMAKE_ARGS="-DZKLOCK_SANITIZE=address,undefined" scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
zklock_install_deps

build=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CMAKE_ARGS:-}
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure --timeout 900 ${CTEST_ARGS:-}
