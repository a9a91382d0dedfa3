// tests/support/unique_name.h: znode names no other test uses - tests share servers (and an
// earlier run's leftovers may still be on an external one).
#pragma once

#include <string>

namespace zklock::testing {

// "<stem>-<Suite>.<Test>-<pid>-<n>": one path segment (no '/'), different for every call in every
// process. Outside a running test the test name part is "test".
std::string unique_name(const std::string& stem);

}  // namespace zklock::testing
