# zklock_warnings: the project's warning flags, in one place. The library links it privately (it
# is never exported: consumers keep their own flags); tools/, examples/ and tests/ give it to every
# target they define. ZKLOCK_WERROR=ON turns the warnings into errors (CI does).
add_library(zklock_warnings INTERFACE)
target_compile_options(zklock_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow
  $<$<BOOL:${ZKLOCK_WERROR}>:-Werror>)
# Under the sanitizers GCC's -Wmaybe-uninitialized reports false positives (its manual says so,
# and advises against -Werror with sanitizers; seen in libstdc++'s <regex> under
# -fsanitize=address): there it stays a warning. The plain build keeps it an error.
if(ZKLOCK_WERROR AND ZKLOCK_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(zklock_warnings INTERFACE -Wno-error=maybe-uninitialized)
endif()
