// tests/faults/fault_env.h: small helpers shared by fault_suite_test.cpp and blip_test.cpp.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "support/zk_server.h"

namespace zklock::testing::faults {

// ZKLOCK_SOAK: unset, "" or "0" - CI settings; "1" - soak with default lengths; N > 1 - soak, and
// the randomised run lasts N seconds.
struct SoakSettings {
  bool on = false;
  int seconds = 0;  // 0: the test's default soak length
};

inline SoakSettings soak() {
  SoakSettings s;
  const char* v = std::getenv("ZKLOCK_SOAK");
  if (v == nullptr || *v == '\0' || std::string(v) == "0") return s;
  s.on = true;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end == '\0' && n > 1) s.seconds = static_cast<int>(n);
  return s;
}

// Trials of a scenario: `ci` normally, `soaked` under ZKLOCK_SOAK.
inline int trials(int ci, int soaked) { return soak().on ? soaked : ci; }

// A fresh temporary directory; removed at the end unless the test failed (then its path is
// printed: the holders' logs are the evidence) or ZKLOCK_KEEP_TEST_DIRS is set.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "zklock-faults-") : path_(make_temp_dir(prefix)) {}
  ~TempDir() {
    const bool failed = ::testing::Test::HasFailure();
    if (failed || keep_test_dirs()) {
      std::printf("[  FAULTS  ] logs kept in %s\n", path_.c_str());
      return;
    }
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text;
}

// True when process `pid` is stopped (SIGSTOP): state 'T' in /proc/<pid>/stat.
inline bool process_stopped(pid_t pid) {
  const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'T';
}

inline std::string hex_id(std::int64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(static_cast<std::uint64_t>(v)));
  return buf;
}

}  // namespace zklock::testing::faults
