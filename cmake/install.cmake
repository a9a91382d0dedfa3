# Install rules (ZKLOCK_INSTALL): the library (static or shared as BUILD_SHARED_LIBS says), the
# headers, the CLI (tools/zklock), and what lets another build find them:
#   <libdir>/cmake/zklock/  zklockConfig.cmake, zklockConfigVersion.cmake, zklockTargets*.cmake
#                           and FindZooKeeper.cmake (Debian ships no CMake file for the C client)
#   <libdir>/pkgconfig/     zklock.pc
# Everything is relocatable: `cmake --install build --prefix P` works for any P.
include(CMakePackageConfigHelpers)

set(ZKLOCK_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/zklock CACHE STRING
    "Where zklockConfig.cmake goes, relative to the prefix")

install(TARGETS zklock EXPORT zklockTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/zklock DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT zklockTargets NAMESPACE zklock:: DESTINATION ${ZKLOCK_INSTALL_CMAKEDIR})

# While the major version is 0 a minor release may break the API (semver), so only the same
# minor version is compatible; from 1.0 on, the same major version.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_zklock_compatibility SameMinorVersion)
else()
  set(_zklock_compatibility SameMajorVersion)
endif()
set(ZKLOCK_HAVE_ZOOKEEPER_SSL 0)
if(ZooKeeper_HAS_SSL)
  set(ZKLOCK_HAVE_ZOOKEEPER_SSL 1)
endif()
configure_package_config_file(cmake/zklockConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/zklockConfig.cmake
  INSTALL_DESTINATION ${ZKLOCK_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/zklockConfigVersion.cmake
  COMPATIBILITY ${_zklock_compatibility})
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/zklockConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/zklockConfigVersion.cmake
  cmake/FindZooKeeper.cmake
  DESTINATION ${ZKLOCK_INSTALL_CMAKEDIR})

# pkg-config. A static libzklock needs the C client on the link line of whoever links it, and
# most users never pass --static, so it goes to Libs; a shared one records it itself (DT_NEEDED).
# -pthread: the public headers use std::thread and friends.
if(BUILD_SHARED_LIBS)
  set(ZKLOCK_PC_LIBS "-lzklock -pthread")
  set(ZKLOCK_PC_LIBS_PRIVATE "-lzookeeper_mt")
else()
  set(ZKLOCK_PC_LIBS "-lzklock -lzookeeper_mt -pthread")
  set(ZKLOCK_PC_LIBS_PRIVATE "")
endif()
# The prefix is found from the .pc file's own place, so the tree can be installed anywhere.
set(ZKLOCK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
if(NOT IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  file(RELATIVE_PATH _zklock_pc_up "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" _zklock_pc_up "${_zklock_pc_up}")
  set(ZKLOCK_PC_PREFIX "\${pcfiledir}/${_zklock_pc_up}")
endif()
foreach(_zklock_dir LIBDIR INCLUDEDIR)
  set(ZKLOCK_PC_${_zklock_dir} "${CMAKE_INSTALL_${_zklock_dir}}")
  if(NOT IS_ABSOLUTE "${CMAKE_INSTALL_${_zklock_dir}}")
    set(ZKLOCK_PC_${_zklock_dir} "\${prefix}/${CMAKE_INSTALL_${_zklock_dir}}")
  endif()
endforeach()
configure_file(cmake/zklock.pc.in ${CMAKE_CURRENT_BINARY_DIR}/zklock.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/zklock.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
