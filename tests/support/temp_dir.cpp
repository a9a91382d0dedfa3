// tests/support/temp_dir.cpp
#include "support/temp_dir.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "support/zk_server.h"

namespace zklock::testing {

TempDir::TempDir(const std::string& prefix) : path_(make_temp_dir(prefix)) {}

TempDir::~TempDir() {
  if (::testing::Test::HasFailure() || keep_test_dirs()) {
    std::printf("[ TEMP DIR ] kept %s\n", path_.c_str());
    std::fflush(stdout);
    return;
  }
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace zklock::testing
