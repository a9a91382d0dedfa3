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

# slf4j-nop only silences slf4j's "no binding" notice on stderr; the others are needed.
include(${CMAKE_CURRENT_LIST_DIR}/../java_class.cmake)
zklock_java_class(TARGET wrap_seed_cversion SOURCES ${_wrap_dir}/SeedCversion.java
                  CLASSES ${_wrap_classes} LABEL "wrap suite" HINT "install zookeeper"
                  JAR_DIRS ${ZKLOCK_WRAP_JAR_DIRS} JARS zookeeper zookeeper-jute slf4j-api
                  OPTIONAL_JARS slf4j-nop
                  OUT_CLASSPATH _wrap_cp_string OUT_MISSING _wrap_missing)

zklock_add_test(wrap_test ${_wrap_dir}/wrap_test.cpp LIBS zklock ZooKeeper::zookeeper_mt TIMEOUT 300 LABELS wrap)
target_compile_definitions(wrap_test PRIVATE
  ZKLOCK_WRAP_JAVA="${Java_JAVA_EXECUTABLE}"
  ZKLOCK_WRAP_CLASSPATH="${_wrap_classes}:${_wrap_cp_string}"
  ZKLOCK_WRAP_SEEDER_CLASS_FILE="${_wrap_classes}/SeedCversion.class"
  ZKLOCK_WRAP_MISSING="${_wrap_missing}")
if(TARGET wrap_seed_cversion)
  add_dependencies(wrap_test wrap_seed_cversion)
endif()
