# FindCppHttplib: cpp-httplib, the HTTP server behind the CLI's --metrics-listen, the metrics_http
# example and the Prometheus scrape test. The library itself never uses it (it speaks no HTTP).
#
# Debian's libcpp-httplib-dev is not the upstream single header: its httplib.h only declares, the
# code is in libcpp-httplib.so, and the header must be compiled with the definitions the library
# was built with (CPPHTTPLIB_OPENSSL_SUPPORT, ...: they change the classes' layout). Its
# pkg-config file (cpp-httplib.pc) says both, so it is asked first. Without one, an httplib.h found
# alone is taken to be upstream's self-contained header.
#
# Defines the imported target CppHttplib::CppHttplib. Result variables: CppHttplib_FOUND,
# CppHttplib_INCLUDE_DIR.

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(_cpp_httplib QUIET IMPORTED_TARGET cpp-httplib)
endif()

if(_cpp_httplib_FOUND)
  find_path(CppHttplib_INCLUDE_DIR NAMES httplib.h HINTS ${_cpp_httplib_INCLUDE_DIRS})
else()
  find_path(CppHttplib_INCLUDE_DIR NAMES httplib.h)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CppHttplib REQUIRED_VARS CppHttplib_INCLUDE_DIR)

if(CppHttplib_FOUND AND NOT TARGET CppHttplib::CppHttplib)
  add_library(CppHttplib::CppHttplib INTERFACE IMPORTED)
  if(_cpp_httplib_FOUND)
    set_target_properties(CppHttplib::CppHttplib PROPERTIES
      INTERFACE_LINK_LIBRARIES PkgConfig::_cpp_httplib)
  else()
    find_package(Threads REQUIRED)
    set_target_properties(CppHttplib::CppHttplib PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${CppHttplib_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES Threads::Threads)
  endif()
endif()
mark_as_advanced(CppHttplib_INCLUDE_DIR)
