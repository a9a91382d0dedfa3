# ZKLOCK_SANITIZE: build everything (library, tools, examples, tests) with the given sanitizers.
#   address,undefined - any report aborts the process, so the test that caused it fails;
#   thread            - tests/CMakeLists.txt points TSAN_OPTIONS at tests/tsan.supp.
# ZKLOCK_BUILD_FUZZERS adds libFuzzer's coverage instrumentation (tests/fuzz; clang only).
if(ZKLOCK_SANITIZE)
  add_compile_options(-fsanitize=${ZKLOCK_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${ZKLOCK_SANITIZE})
  if(ZKLOCK_SANITIZE MATCHES "undefined")
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
endif()
if(ZKLOCK_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "ZKLOCK_BUILD_FUZZERS needs clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ (scripts/fuzz.sh does)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
