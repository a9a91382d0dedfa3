// tests/support/proc_status.h: a figure of this process from /proc/self/status (Linux) - its
// thread count ("Threads:"), its resident set ("VmRSS:", in kB). Header-only: the tests and
// tools/bench (which compiles a few support files in) share it.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace zklock::testing {

// The number after `field` (with its colon: "Threads:") in /proc/self/status; -1 if it is missing.
inline std::int64_t proc_status(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::stoll(line.substr(field.size()));
  }
  return -1;
}

}  // namespace zklock::testing
