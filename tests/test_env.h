// tests/test_env.h: small helpers shared by zklock's own tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "support/four_letter_words.h"
#include "support/unique_name.h"
#include "support/wait.h"
#include "support/zk_server.h"
#include "zklock/session.h"

namespace zklock::testing {

using namespace std::chrono_literals;

/// A lock path no other test (or earlier run against an external server) uses:
/// "/zklock-test/<stem>-<Suite>.<Test>-<pid>-<n>".
inline std::string unique_path(const std::string& stem) {
  return "/zklock-test/" + unique_name(stem);
}

/// A standalone server of the test's own with tickTime 200 ms: sessions expire within 200 ms of
/// their deadline, and the server grants timeouts from 1 s to `max_session_timeout_ms`.
inline std::unique_ptr<ZkServer> start_fast_expiry_server(int max_session_timeout_ms = 60000) {
  ServerOptions options;
  options.tick_ms = 200;
  options.min_session_timeout_ms = 1000;
  options.max_session_timeout_ms = max_session_timeout_ms;
  return ZkServer::start(options);
}

inline SessionOptions options_for(const std::string& connect,
                                  std::chrono::milliseconds timeout = 4000ms) {
  SessionOptions o;
  o.connect = connect;
  o.session_timeout = timeout;
  o.connect_timeout = 10s;
  return o;
}

/// The children of `path` (empty if it is missing).
inline std::vector<std::string> lock_children(Session& s, const std::string& path) {
  auto kids = s.children(path);
  return kids ? *kids : std::vector<std::string>{};
}

/// Paths under `prefix` that some session watches on the server at 127.0.0.1:`port` (wchp).
inline std::vector<std::string> watches_under(int port, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& p : watched_paths(port)) {
    if (p.compare(0, prefix.size(), prefix) == 0) out.push_back(p);
  }
  return out;
}

}  // namespace zklock::testing
