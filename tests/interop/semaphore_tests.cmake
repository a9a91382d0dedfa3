# Semaphore interop: zklock::Semaphore and Apache Curator's InterProcessSemaphoreV2 on one path
# (interop/semaphore_interop_test.cpp). Included by tests/CMakeLists.txt after interop/tests.cmake,
# whose Curator jar search (ZKLOCK_INTEROP_JAR_DIRS) and java_class.cmake it reuses. As there, a
# missing Curator makes the tests skip - or fail with CI / ZKLOCK_INTEROP_REQUIRED set.

set(_sem_interop_dir ${CMAKE_CURRENT_LIST_DIR})
set(_sem_curator_classes ${CMAKE_CURRENT_BINARY_DIR}/interop/semaphore-classes)
include(${CMAKE_CURRENT_LIST_DIR}/../java_class.cmake)
zklock_java_class(TARGET interop_curator_semaphore_contender
                  SOURCE ${_sem_interop_dir}/CuratorSemaphoreContender.java
                  CLASSES ${_sem_curator_classes} LABEL "Curator semaphore interop"
                  HINT "install libcurator-recipes-java"
                  JAR_DIRS ${ZKLOCK_INTEROP_JAR_DIRS}
                  JARS curator-framework curator-client curator-recipes zookeeper zookeeper-jute guava slf4j-api
                  OPTIONAL_JARS slf4j-nop
                  OUT_CLASSPATH _sem_curator_cp OUT_MISSING _sem_curator_missing)

zklock_add_test(semaphore_interop_test ${_sem_interop_dir}/semaphore_interop_test.cpp
                LIBS zklock TIMEOUT 240 LABELS interop)
target_compile_definitions(semaphore_interop_test PRIVATE
  ZKLOCK_SEM_JAVA="${Java_JAVA_EXECUTABLE}"
  ZKLOCK_SEM_CLASSPATH="${_sem_curator_classes}:${_sem_curator_cp}"
  ZKLOCK_SEM_CLASS_FILE="${_sem_curator_classes}/CuratorSemaphoreContender.class"
  ZKLOCK_SEM_CURATOR_MISSING="${_sem_curator_missing}")
if(TARGET interop_curator_semaphore_contender)
  add_dependencies(semaphore_interop_test interop_curator_semaphore_contender)
endif()
