# Wrap suite: lock contenders whose sequence numbers reach the top of ZooKeeper's signed 32-bit
# child counter (2147483647), against a real server (wrap/wrap_test.cpp). Included by
# tests/CMakeLists.txt.
#
# Nobody can create 2^31 children in a test, so the test seeds the server's data directory with a
# snapshot in which the lock nodes' child counters are already near 2^31 - 1. The snapshot is
# written by SeedCversion.java through ZooKeeper's own server classes (DataTree, FileTxnSnapLog),
# compiled here at build time. Found at configure time: javac + java (FindJava) and the jars below
# in ZKLOCK_WRAP_JAR_DIRS (default: Debian's /usr/share/java, package zookeeper). When they are
# missing, the reason is compiled into the test: it then skips - or fails, on CI or with
# ZKLOCK_WRAP_REQUIRED set (the server itself needs java anyway).

set(_wrap_dir ${CMAKE_CURRENT_LIST_DIR})
set(_wrap_classes ${CMAKE_CURRENT_BINARY_DIR}/wrap/classes)
set(ZKLOCK_WRAP_JAR_DIRS "/usr/share/java" CACHE STRING "Directories searched for the ZooKeeper server jars (snapshot seeding)")

find_package(Java COMPONENTS Runtime Development QUIET)
set(_wrap_missing "")
if(NOT Java_JAVA_EXECUTABLE OR NOT Java_JAVAC_EXECUTABLE)
  set(_wrap_missing "wrap suite: no java/javac found at configure time (install a JDK, e.g. openjdk-17-jdk-headless)")
endif()
# slf4j-nop only silences slf4j's "no binding" notice on stderr; the others are needed.
set(_wrap_cp "")
foreach(_jar IN ITEMS zookeeper zookeeper-jute slf4j-api slf4j-nop)
  string(MAKE_C_IDENTIFIER "${_jar}" _var)
  find_file(ZKLOCK_WRAP_JAR_${_var} NAMES ${_jar}.jar PATHS ${ZKLOCK_WRAP_JAR_DIRS} NO_DEFAULT_PATH)
  if(ZKLOCK_WRAP_JAR_${_var})
    list(APPEND _wrap_cp "${ZKLOCK_WRAP_JAR_${_var}}")
  elseif(NOT _jar STREQUAL "slf4j-nop" AND NOT _wrap_missing)
    set(_wrap_missing "wrap suite: ${_jar}.jar not found in ${ZKLOCK_WRAP_JAR_DIRS} at configure time (install zookeeper)")
  endif()
endforeach()
string(JOIN ":" _wrap_cp_string ${_wrap_cp})

if(NOT _wrap_missing)
  add_custom_command(
    OUTPUT ${_wrap_classes}/SeedCversion.class
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_wrap_classes}
    # -Xlint:-path: zookeeper.jar's manifest names jars Debian does not ship (jline); harmless.
    COMMAND ${Java_JAVAC_EXECUTABLE} -Xlint:-path -d ${_wrap_classes} -cp ${_wrap_cp_string}
            ${_wrap_dir}/SeedCversion.java
    DEPENDS ${_wrap_dir}/SeedCversion.java
    COMMENT "Compiling the wrap suite's snapshot seeder"
    VERBATIM)
  add_custom_target(wrap_seed_cversion DEPENDS ${_wrap_classes}/SeedCversion.class)
  message(STATUS "zklock wrap suite: snapshot seeder with ${Java_JAVAC_EXECUTABLE}")
else()
  message(STATUS "zklock wrap suite: ${_wrap_missing}")
endif()

zklock_add_test(wrap_test ${_wrap_dir}/wrap_test.cpp LIBS zklock ZooKeeper::zookeeper_mt TIMEOUT 300 LABELS wrap)
target_compile_definitions(wrap_test PRIVATE
  ZKLOCK_WRAP_JAVA="${Java_JAVA_EXECUTABLE}"
  ZKLOCK_WRAP_CLASSPATH="${_wrap_classes}:${_wrap_cp_string}"
  ZKLOCK_WRAP_SEEDER_CLASS_FILE="${_wrap_classes}/SeedCversion.class"
  ZKLOCK_WRAP_MISSING="${_wrap_missing}")
if(TARGET wrap_seed_cversion)
  add_dependencies(wrap_test wrap_seed_cversion)
endif()
