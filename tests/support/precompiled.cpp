// The translation unit that compiles the test tree's precompiled headers (tests/CMakeLists.txt,
// ZKLOCK_TEST_PCH): the headers are the target's; this file only gives the compiler a reason to
// build them.
