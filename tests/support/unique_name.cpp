// tests/support/unique_name.cpp
#include "support/unique_name.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace zklock::testing {

std::string unique_name(const std::string& stem) {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "test";
  std::replace(test.begin(), test.end(), '/', '_');  // parameterised tests: "Suite/0"
  return stem + "-" + test + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

}  // namespace zklock::testing
