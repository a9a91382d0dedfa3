# docs: the API reference from the public headers with Doxygen (docs/Doxyfile.in says what is
# checked). Any Doxygen warning fails the target. Without Doxygen the target says how to get it.
set(ZKLOCK_DOCS_OUTPUT ${PROJECT_BINARY_DIR}/docs)
find_package(Doxygen QUIET)
if(DOXYGEN_FOUND)
  configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${ZKLOCK_DOCS_OUTPUT}/Doxyfile @ONLY)
  file(GLOB _zklock_public_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/zklock/*.h
       ${PROJECT_SOURCE_DIR}/include/zklock/*/*.h)
  add_custom_command(
    OUTPUT ${ZKLOCK_DOCS_OUTPUT}/html/index.html
    COMMAND Doxygen::doxygen ${ZKLOCK_DOCS_OUTPUT}/Doxyfile
    DEPENDS ${ZKLOCK_DOCS_OUTPUT}/Doxyfile ${_zklock_public_headers}
    COMMENT "API reference (Doxygen) in ${ZKLOCK_DOCS_OUTPUT}/html"
    VERBATIM)
  add_custom_target(docs DEPENDS ${ZKLOCK_DOCS_OUTPUT}/html/index.html)
else()
  add_custom_target(docs
    COMMAND ${CMAKE_COMMAND} -E echo "docs: Doxygen not found (apt-get install doxygen)"
    COMMAND ${CMAKE_COMMAND} -E false)
endif()
