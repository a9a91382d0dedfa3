# FindZooKeeper: the Apache ZooKeeper C client, multi-threaded flavour (libzookeeper_mt).
#
# Debian ships neither a pkg-config file nor a CMake config for it, hence this module. zklock
# installs it beside zklockConfig.cmake, so a consumer of an installed zklock needs nothing else.
#
# Defines the imported target ZooKeeper::zookeeper_mt, which carries THREADED: without that
# definition <zookeeper/zookeeper.h> declares none of the synchronous calls. When the client was
# built with TLS the target also carries HAVE_OPENSSL_H, which the header needs to declare
# zookeeper_init_ssl and to lay out its socket struct as the library does.
#
# Result variables: ZooKeeper_FOUND, ZooKeeper_INCLUDE_DIR, ZooKeeper_LIBRARY, and
# ZooKeeper_HAS_SSL (TRUE when the library exports zookeeper_init_ssl and the header declares it;
# Debian's does not).

find_path(ZooKeeper_INCLUDE_DIR NAMES zookeeper/zookeeper.h)
find_library(ZooKeeper_LIBRARY NAMES zookeeper_mt)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ZooKeeper REQUIRED_VARS ZooKeeper_LIBRARY ZooKeeper_INCLUDE_DIR)

if(ZooKeeper_FOUND AND NOT DEFINED ZooKeeper_HAS_SSL)
  # Compiles and links a reference to the symbol: the header must declare it (HAVE_OPENSSL_H and
  # OpenSSL's headers present) and the library must export it.
  include(CheckSymbolExists)
  include(CMakePushCheckState)
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_QUIET ON)
  set(CMAKE_REQUIRED_DEFINITIONS -DTHREADED -DHAVE_OPENSSL_H)
  set(CMAKE_REQUIRED_INCLUDES ${ZooKeeper_INCLUDE_DIR})
  set(CMAKE_REQUIRED_LIBRARIES ${ZooKeeper_LIBRARY})
  if(CMAKE_C_COMPILER_LOADED)
    check_symbol_exists(zookeeper_init_ssl zookeeper/zookeeper.h ZooKeeper_HAS_SSL)
  else()
    include(CheckCXXSymbolExists)
    check_cxx_symbol_exists(zookeeper_init_ssl zookeeper/zookeeper.h ZooKeeper_HAS_SSL)
  endif()
  cmake_pop_check_state()
endif()

if(ZooKeeper_FOUND AND NOT TARGET ZooKeeper::zookeeper_mt)
  add_library(ZooKeeper::zookeeper_mt UNKNOWN IMPORTED)
  set(_zookeeper_definitions THREADED)
  if(ZooKeeper_HAS_SSL)
    list(APPEND _zookeeper_definitions HAVE_OPENSSL_H)
  endif()
  set_target_properties(ZooKeeper::zookeeper_mt PROPERTIES
    IMPORTED_LOCATION "${ZooKeeper_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ZooKeeper_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS "${_zookeeper_definitions}")
  unset(_zookeeper_definitions)
endif()
mark_as_advanced(ZooKeeper_INCLUDE_DIR ZooKeeper_LIBRARY ZooKeeper_HAS_SSL)
