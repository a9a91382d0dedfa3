# Interop suite: zklock::Mutex, Apache Curator's InterProcessMutex and python kazoo's Lock
# contending on one lock path (interop/interop_test.cpp). Included by tests/CMakeLists.txt.
#
# The peers are found at configure time:
#   Curator: javac + java (FindJava) and the jars below, searched in ZKLOCK_INTEROP_JAR_DIRS
#            (default: Debian's /usr/share/java, package libcurator-recipes-java). The contender
#            class is compiled at build time into the build tree.
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
find_package(Java COMPONENTS Runtime Development QUIET)
set(_curator_missing "")
if(NOT Java_JAVA_EXECUTABLE OR NOT Java_JAVAC_EXECUTABLE)
  set(_curator_missing "Curator interop: no java/javac found at configure time (install a JDK, e.g. openjdk-17-jdk-headless)")
endif()
# slf4j-nop only silences slf4j's "no binding" notice; every other jar is needed.
set(_curator_jars curator-framework curator-client curator-recipes zookeeper zookeeper-jute guava slf4j-api)
set(_curator_cp "")
foreach(_jar IN LISTS _curator_jars ITEMS slf4j-nop)
  string(MAKE_C_IDENTIFIER "${_jar}" _var)
  find_file(ZKLOCK_INTEROP_JAR_${_var} NAMES ${_jar}.jar PATHS ${ZKLOCK_INTEROP_JAR_DIRS} NO_DEFAULT_PATH)
  if(ZKLOCK_INTEROP_JAR_${_var})
    list(APPEND _curator_cp "${ZKLOCK_INTEROP_JAR_${_var}}")
  elseif(NOT _jar STREQUAL "slf4j-nop" AND NOT _curator_missing)
    set(_curator_missing "Curator interop: ${_jar}.jar not found in ${ZKLOCK_INTEROP_JAR_DIRS} at configure time (install libcurator-recipes-java)")
  endif()
endforeach()
string(JOIN ":" _curator_cp_string ${_curator_cp})
set(_curator_classes ${_interop_out}/classes)
if(NOT _curator_missing)
  add_custom_command(
    OUTPUT ${_curator_classes}/CuratorContender.class
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_curator_classes}
    # -Xlint:-path: zookeeper.jar's manifest names jars Debian does not ship (jline); harmless.
    COMMAND ${Java_JAVAC_EXECUTABLE} -Xlint:-path -d ${_curator_classes} -cp ${_curator_cp_string}
            ${_interop_dir}/CuratorContender.java
    DEPENDS ${_interop_dir}/CuratorContender.java
    COMMENT "Compiling the Curator interop contender"
    VERBATIM)
  add_custom_target(interop_curator_contender DEPENDS ${_curator_classes}/CuratorContender.class)
  message(STATUS "zklock interop: Curator contender with ${Java_JAVAC_EXECUTABLE}")
else()
  message(STATUS "zklock interop: ${_curator_missing}")
endif()

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

zklock_add_test(interop_test ${_interop_dir}/interop_test.cpp LIBS zklock TIMEOUT 240 LABELS interop)
target_compile_definitions(interop_test PRIVATE
  ZKLOCK_INTEROP_JAVA="${Java_JAVA_EXECUTABLE}"
  ZKLOCK_INTEROP_CLASSPATH="${_curator_classes}:${_curator_cp_string}"
  ZKLOCK_INTEROP_CURATOR_CLASS_FILE="${_curator_classes}/CuratorContender.class"
  ZKLOCK_INTEROP_CURATOR_MISSING="${_curator_missing}"
  ZKLOCK_INTEROP_PYTHON="${_kazoo_python}"
  ZKLOCK_INTEROP_KAZOO_SCRIPT="${_interop_dir}/kazoo_contender.py"
  ZKLOCK_INTEROP_KAZOO_MISSING="${_kazoo_missing}")
if(TARGET interop_curator_contender)
  add_dependencies(interop_test interop_curator_contender)
endif()
