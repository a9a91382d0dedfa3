# Interop suite: zklock::Mutex, Apache Curator's InterProcessMutex and python kazoo's Lock
# contending on one lock path (interop/interop_test.cpp), and zklock::SharedMutex with Curator's
# and kazoo's read/write locks (interop/shared_interop_test.cpp). Included by tests/CMakeLists.txt.
#
# The peers are found at configure time:
#   Curator: javac + java (FindJava) and the jars below, searched in ZKLOCK_INTEROP_JAR_DIRS
#            (default: Debian's /usr/share/java, package libcurator-recipes-java). The contender
#            classes (this suite's and the semaphore suite's, with the ContenderSupport they
#            share) are compiled at build time into the build tree.
#   kazoo:   the first of ZKLOCK_INTEROP_PYTHON (if set), /usr/bin/python3, python3 on PATH that
#            imports kazoo with Lock(extra_lock_patterns=...) (kazoo >= 2.7.1, python3-kazoo). The
#            order matters: another python3 earlier on PATH usually cannot see Debian's packages.
# A peer that is missing is compiled into the test as a reason: its tests GTEST_SKIP with it - or
# fail, when the test's environment has CI or ZKLOCK_INTEROP_REQUIRED set (CI installs every peer,
# so a skip there means a broken setup; ZKLOCK_INTEROP_REQUIRED=0 allows skipping anyway). ctest
# shows a partly skipped binary as passed: read the configure messages below, or the test output.

set(_interop_dir ${CMAKE_CURRENT_LIST_DIR})
set(_interop_out ${CMAKE_CURRENT_BINARY_DIR}/interop)

# ---- Curator ----
set(ZKLOCK_INTEROP_JAR_DIRS "/usr/share/java" CACHE STRING "Directories searched for the Curator/ZooKeeper jars")
set(_curator_classes ${_interop_out}/classes)
# slf4j-nop only silences slf4j's "no binding" notice; every other jar is needed.
include(${CMAKE_CURRENT_LIST_DIR}/../java_class.cmake)
zklock_java_class(TARGET interop_curator_contender
                  SOURCES ${_interop_dir}/CuratorContender.java
                          ${_interop_dir}/CuratorSemaphoreContender.java
                          ${_interop_dir}/ContenderSupport.java
                  CLASSES ${_curator_classes} LABEL "Curator interop" HINT "install libcurator-recipes-java"
                  JAR_DIRS ${ZKLOCK_INTEROP_JAR_DIRS}
                  JARS curator-framework curator-client curator-recipes zookeeper zookeeper-jute guava slf4j-api
                  OPTIONAL_JARS slf4j-nop
                  OUT_CLASSPATH _curator_cp_string OUT_MISSING _curator_missing)

# ---- kazoo ----
set(_kazoo_python "")
set(_kazoo_missing "")
find_program(ZKLOCK_INTEROP_PATH_PYTHON3 NAMES python3)
set(_kazoo_probe "import inspect, kazoo.recipe.lock as l; assert 'extra_lock_patterns' in inspect.signature(l.Lock.__init__).parameters")
foreach(_py IN ITEMS ${ZKLOCK_INTEROP_PYTHON} /usr/bin/python3 ${ZKLOCK_INTEROP_PATH_PYTHON3})
  if(EXISTS "${_py}")
    execute_process(COMMAND "${_py}" -c "${_kazoo_probe}" RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(_rc EQUAL 0)
      set(_kazoo_python "${_py}")
      break()
    endif()
  endif()
endforeach()
if(NOT _kazoo_python)
  set(_kazoo_missing "kazoo interop: no python3 imports kazoo >= 2.7.1 (Lock extra_lock_patterns) at configure time (install python3-kazoo)")
  message(STATUS "zklock interop: ${_kazoo_missing}")
else()
  message(STATUS "zklock interop: kazoo contender with ${_kazoo_python}")
endif()

# interop_test: the exclusive locks (interop_test.cpp); shared_interop_test: the read/write locks
# (shared_interop_test.cpp: zklock's SharedMutex, Curator's InterProcessReadWriteLock, kazoo's
# ReadLock and WriteLock); election_interop_test: the elections (zklock's Election, Curator's
# LeaderSelector and LeaderLatch, kazoo's Election). Same contender programs, same peers.
foreach(_interop_test IN ITEMS interop_test shared_interop_test election_interop_test)
  zklock_add_test(${_interop_test} ${_interop_dir}/${_interop_test}.cpp ${_interop_dir}/contenders.cpp
                  ${_interop_dir}/event_log.cpp LIBS zklock TIMEOUT 240 LABELS interop)
  target_compile_definitions(${_interop_test} PRIVATE
    ZKLOCK_INTEROP_JAVA="${Java_JAVA_EXECUTABLE}"
    ZKLOCK_INTEROP_CLASSPATH="${_curator_classes}:${_curator_cp_string}"
    ZKLOCK_INTEROP_CURATOR_CLASS_FILE="${_curator_classes}/CuratorContender.class"
    ZKLOCK_INTEROP_CURATOR_MISSING="${_curator_missing}"
    ZKLOCK_INTEROP_PYTHON="${_kazoo_python}"
    ZKLOCK_INTEROP_KAZOO_SCRIPT="${_interop_dir}/kazoo_contender.py"
    ZKLOCK_INTEROP_KAZOO_MISSING="${_kazoo_missing}")
  if(TARGET interop_curator_contender)
    add_dependencies(${_interop_test} interop_curator_contender)
  endif()
endforeach()
