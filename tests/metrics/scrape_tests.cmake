# The Prometheus scrape test (metrics/prometheus_scrape_test.cpp): zklock's figures served at
# /metrics with cpp-httplib and read back from a real Prometheus. Included by tests/CMakeLists.txt
# with the peer suites (label interop: Prometheus is the peer).
#
# Needs, found at configure time:
#   prometheus   Debian's package prometheus (ZKLOCK_PROMETHEUS: another binary)
#   cpp-httplib  libcpp-httplib-dev (cmake/FindCppHttplib.cmake)
# What is missing is compiled into the test as its reason: it GTEST_SKIPs with it - or fails, on CI
# or with ZKLOCK_INTEROP_REQUIRED set, where everything is installed and a skip would hide it.
find_program(ZKLOCK_PROMETHEUS prometheus DOC "The Prometheus server the scrape test runs")
find_package(CppHttplib QUIET)
find_package(nlohmann_json REQUIRED)

set(_scrape_missing "")
if(NOT ZKLOCK_PROMETHEUS)
  list(APPEND _scrape_missing "prometheus (install the package prometheus)")
endif()
set(_scrape_sources ${CMAKE_CURRENT_LIST_DIR}/prometheus_scrape_test.cpp)
set(_scrape_libs zklock)
if(CppHttplib_FOUND)
  list(APPEND _scrape_sources ${CMAKE_CURRENT_LIST_DIR}/prometheus_server.cpp)
  list(APPEND _scrape_libs CppHttplib::CppHttplib nlohmann_json::nlohmann_json)
else()
  list(APPEND _scrape_missing "cpp-httplib (install libcpp-httplib-dev)")
endif()
if(_scrape_missing)
  list(JOIN _scrape_missing ", " _scrape_missing)
  message(STATUS "zklock Prometheus scrape test: missing ${_scrape_missing}")
  set(_scrape_missing "missing: ${_scrape_missing}")
endif()

zklock_add_test(prometheus_scrape_test ${_scrape_sources} LIBS ${_scrape_libs} LABELS interop
                TIMEOUT 180)
target_include_directories(prometheus_scrape_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)
target_compile_definitions(prometheus_scrape_test PRIVATE
  ZKLOCK_PROMETHEUS="$<$<BOOL:${ZKLOCK_PROMETHEUS}>:${ZKLOCK_PROMETHEUS}>"
  ZKLOCK_SCRAPE_MISSING="${_scrape_missing}"
  ZKLOCK_SCRAPE_HAVE_HTTPLIB=$<BOOL:${CppHttplib_FOUND}>)
unset(_scrape_missing)
unset(_scrape_sources)
unset(_scrape_libs)
