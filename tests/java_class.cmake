# zklock_java_class(): compiles the Java sources of a test suite at build time, in one javac run,
# against jars found at configure time. Shared by the interop suites (the Curator contenders) and
# the wrap suite (snapshot seeder).
#
#   zklock_java_class(TARGET t SOURCES File.java... CLASSES dir LABEL "what" HINT "install ..."
#                     JAR_DIRS dirs... JARS required... [OPTIONAL_JARS jars...]
#                     OUT_CLASSPATH var OUT_MISSING var)
#
# Sets OUT_CLASSPATH to the found jars joined by ':' and OUT_MISSING to "" or the reason the
# classes cannot be built (no JDK, a required jar missing). When nothing is missing, TARGET is a
# custom target producing CLASSES/<File>.class for each source. Java_JAVA_EXECUTABLE is left in
# the cache for callers.
function(zklock_java_class)
  cmake_parse_arguments(A "" "TARGET;CLASSES;LABEL;HINT;OUT_CLASSPATH;OUT_MISSING"
                        "SOURCES;JAR_DIRS;JARS;OPTIONAL_JARS" ${ARGN})
  find_package(Java COMPONENTS Runtime Development QUIET)
  set(missing "")
  if(NOT Java_JAVA_EXECUTABLE OR NOT Java_JAVAC_EXECUTABLE)
    set(missing "${A_LABEL}: no java/javac found at configure time (install a JDK, e.g. openjdk-17-jdk-headless)")
  endif()
  set(classpath "")
  foreach(jar IN LISTS A_JARS A_OPTIONAL_JARS)
    string(MAKE_C_IDENTIFIER "ZKLOCK_JAR_${jar}" var)
    find_file(${var} NAMES ${jar}.jar PATHS ${A_JAR_DIRS} NO_DEFAULT_PATH)
    if(${var})
      list(APPEND classpath "${${var}}")
    elseif(jar IN_LIST A_JARS AND NOT missing)
      set(missing "${A_LABEL}: ${jar}.jar not found in ${A_JAR_DIRS} at configure time (${A_HINT})")
    endif()
  endforeach()
  string(JOIN ":" classpath_string ${classpath})
  set(class_names "")
  set(class_files "")
  foreach(source IN LISTS A_SOURCES)
    get_filename_component(class_name ${source} NAME_WE)
    list(APPEND class_names ${class_name})
    list(APPEND class_files ${A_CLASSES}/${class_name}.class)
  endforeach()
  string(JOIN " " class_names ${class_names})
  if(NOT missing)
    add_custom_command(
      OUTPUT ${class_files}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${A_CLASSES}
      # -Xlint:-path: zookeeper.jar's manifest names jars Debian does not ship (jline); harmless.
      COMMAND ${Java_JAVAC_EXECUTABLE} -Xlint:-path -d ${A_CLASSES} -cp ${classpath_string} ${A_SOURCES}
      DEPENDS ${A_SOURCES}
      COMMENT "Compiling ${class_names} (${A_LABEL})"
      VERBATIM)
    add_custom_target(${A_TARGET} DEPENDS ${class_files})
    message(STATUS "zklock ${A_LABEL}: ${class_names} with ${Java_JAVAC_EXECUTABLE}")
  else()
    message(STATUS "zklock ${missing}")
  endif()
  set(${A_OUT_CLASSPATH} "${classpath_string}" PARENT_SCOPE)
  set(${A_OUT_MISSING} "${missing}" PARENT_SCOPE)
endfunction()
