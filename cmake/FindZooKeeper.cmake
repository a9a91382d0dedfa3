# FindZooKeeper: the Apache ZooKeeper C client, multi-threaded flavour (libzookeeper_mt).
#
# Debian ships neither a pkg-config file nor a CMake config for it, hence this module.
# Defines the imported target ZooKeeper::zookeeper_mt, which carries THREADED: without that
# definition <zookeeper/zookeeper.h> declares none of the synchronous calls.
#
# Result variables: ZooKeeper_FOUND, ZooKeeper_INCLUDE_DIR, ZooKeeper_LIBRARY.

find_path(ZooKeeper_INCLUDE_DIR NAMES zookeeper/zookeeper.h)
find_library(ZooKeeper_LIBRARY NAMES zookeeper_mt)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ZooKeeper REQUIRED_VARS ZooKeeper_LIBRARY ZooKeeper_INCLUDE_DIR)

if(ZooKeeper_FOUND AND NOT TARGET ZooKeeper::zookeeper_mt)
  add_library(ZooKeeper::zookeeper_mt UNKNOWN IMPORTED)
  set_target_properties(ZooKeeper::zookeeper_mt PROPERTIES
    IMPORTED_LOCATION "${ZooKeeper_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ZooKeeper_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS THREADED)
endif()
mark_as_advanced(ZooKeeper_INCLUDE_DIR ZooKeeper_LIBRARY)
