// tests/faults/fault_env.h: what the fault suites (fault_suite_test, blip_test) share: the soak
// switch, their server, and quiet sessions.
#pragma once

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "support/environment.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/session.h"

namespace zklock::testing::faults {

// ZKLOCK_SOAK: unset, "" or "0" - CI settings; "1" - soak with default lengths; N > 1 - soak, and
// the randomised run lasts N seconds.
struct SoakSettings {
  bool on = false;
  int seconds = 0;  // 0: the test's default soak length
};

inline SoakSettings soak() {
  SoakSettings s;
  const std::string value = env_or("ZKLOCK_SOAK");
  if (value.empty() || value == "0") return s;
  s.on = true;
  char* end = nullptr;
  const long n = std::strtol(value.c_str(), &end, 10);
  if (*end == '\0' && n > 1) s.seconds = static_cast<int>(n);
  return s;
}

// Trials of a scenario: `ci` normally, `soaked` under ZKLOCK_SOAK.
inline int trials(int ci, int soaked) { return soak().on ? soaked : ci; }

// The standalone server of one test binary, started on first use: tickTime 200 ms, so that a
// session expires within 200 ms of its deadline. Our own even with ZKLOCK_TEST_CONNECT: the
// timings are ours.
inline ZkServer& fault_server() {
  static std::unique_ptr<ZkServer> server = start_fast_expiry_server();
  return *server;
}

// The test's own sessions keep the C client's connection complaints (many, by design) to
// themselves.
inline SessionOptions quiet(SessionOptions options) {
  options.log_level = LogLevel::kError;
  options.log_sink = [](LogLevel, std::string_view) {};
  return options;
}

}  // namespace zklock::testing::faults
