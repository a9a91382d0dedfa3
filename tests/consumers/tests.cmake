# Consumer tests (label `packaging`): other projects build tests/consumers/app/app.cpp against
# zklock - installed (find_package, pkg-config; static and shared), added (add_subdirectory) and
# fetched (FetchContent) - and the program takes a lock on a real server. Each ctest entry runs
# one test of consumer_test (consumer_test.cpp says what each proves). Included by
# tests/CMakeLists.txt.
#
# A sanitizer build's library cannot be linked by an ordinary consumer: there the suite is left
# out (it runs in the normal build, as in .ci/run).
if(ZKLOCK_SANITIZE OR ZKLOCK_BUILD_FUZZERS)
  message(STATUS "zklock consumer tests: not in a sanitizer or fuzzer build (run them in a plain one)")
  return()
endif()
if(NOT ZKLOCK_INSTALL)
  message(FATAL_ERROR "the consumer tests install this build: configure with ZKLOCK_INSTALL=ON")
endif()

set(_consumers ${CMAKE_CURRENT_LIST_DIR})
add_executable(consumer_test ${_consumers}/consumer_test.cpp)
target_link_libraries(consumer_test PRIVATE zklock_test_support GTest::gtest GTest::gtest_main)
target_include_directories(consumer_test PRIVATE ${PROJECT_SOURCE_DIR}/include)  # version.h
target_compile_definitions(consumer_test PRIVATE
  ZKLOCK_CONSUMER_WORK_DIR="${CMAKE_CURRENT_BINARY_DIR}/consumers"
  ZKLOCK_CONSUMER_SOURCE_DIR="${_consumers}"
  ZKLOCK_CONSUMER_PROJECT_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  ZKLOCK_CONSUMER_BINARY_DIR="${PROJECT_BINARY_DIR}"
  ZKLOCK_CONSUMER_LIBDIR="${CMAKE_INSTALL_LIBDIR}"
  ZKLOCK_CONSUMER_CMAKE="${CMAKE_COMMAND}"
  ZKLOCK_CONSUMER_CXX="${CMAKE_CXX_COMPILER}"
  ZKLOCK_CONSUMER_ZOOKEEPER_INCLUDE_DIR="${ZooKeeper_INCLUDE_DIR}"
  ZKLOCK_CONSUMER_THIS_BUILD_SHARED=$<BOOL:${BUILD_SHARED_LIBS}>)
# Installing this build needs what it installs built.
add_dependencies(consumer_test zklock)
if(TARGET zklock-cli)
  target_compile_definitions(consumer_test PRIVATE ZKLOCK_CONSUMER_EXPECT_CLI)
  add_dependencies(consumer_test zklock-cli)
endif()

# zklock_add_consumer_test(NAME GTEST_NAME [ctest properties...]): one test of consumer_test.
function(zklock_add_consumer_test name gtest_name)
  add_test(NAME ${name} COMMAND consumer_test --gtest_filter=${gtest_name})
  set_tests_properties(${name} PROPERTIES LABELS packaging TIMEOUT 900 ${ARGN})
endfunction()

# The static and the shared install: this build is one, consumer_install_other_kind builds the other.
if(BUILD_SHARED_LIBS)
  set(_static zklock_other_kind)
  set(_shared zklock_this_build)
else()
  set(_static zklock_this_build)
  set(_shared zklock_other_kind)
endif()
zklock_add_consumer_test(consumer_install_this_build ConsumerSetup.InstallThisBuild FIXTURES_SETUP zklock_this_build)
zklock_add_consumer_test(consumer_install_other_kind ConsumerSetup.InstallOtherKind FIXTURES_SETUP zklock_other_kind)
zklock_add_consumer_test(consumer_find_package_static Consumer.FindPackageStatic FIXTURES_REQUIRED ${_static})
zklock_add_consumer_test(consumer_find_package_shared Consumer.FindPackageShared FIXTURES_REQUIRED ${_shared})
zklock_add_consumer_test(consumer_pkg_config_static Consumer.PkgConfigStatic FIXTURES_REQUIRED ${_static})
zklock_add_consumer_test(consumer_pkg_config_shared Consumer.PkgConfigShared FIXTURES_REQUIRED ${_shared})
zklock_add_consumer_test(consumer_add_subdirectory Consumer.AddSubdirectory)
zklock_add_consumer_test(consumer_fetch_content Consumer.FetchContent)
zklock_add_consumer_test(consumer_tls_detection Consumer.TlsDetectedOnlyWhenTheClientHasIt)
