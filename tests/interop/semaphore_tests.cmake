# Semaphore interop: zklock::Semaphore and Apache Curator's InterProcessSemaphoreV2 on one path
# (interop/semaphore_interop_test.cpp). Included by tests/CMakeLists.txt after interop/tests.cmake,
# which finds the Curator jars and compiles CuratorSemaphoreContender.java with the other contender
# classes (target interop_curator_contender). As there, a missing Curator makes the tests skip - or
# fail with CI / ZKLOCK_INTEROP_REQUIRED set.

zklock_add_test(semaphore_interop_test ${CMAKE_CURRENT_LIST_DIR}/semaphore_interop_test.cpp
                LIBS zklock TIMEOUT 240 LABELS interop)
target_compile_definitions(semaphore_interop_test PRIVATE
  ZKLOCK_SEM_JAVA="${Java_JAVA_EXECUTABLE}"
  ZKLOCK_SEM_CLASSPATH="${_curator_classes}:${_curator_cp_string}"
  ZKLOCK_SEM_CLASS_FILE="${_curator_classes}/CuratorSemaphoreContender.class"
  ZKLOCK_SEM_CURATOR_MISSING="${_curator_missing}")
if(TARGET interop_curator_contender)
  add_dependencies(semaphore_interop_test interop_curator_contender)
endif()
