// tests/test_env.h: small helpers shared by zklock's own tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "support/four_letter_words.h"
#include "support/test_pki.h"
#include "support/unique_name.h"
#include "support/wait.h"
#include "support/zk_server.h"
#include "zklock/acl.h"
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

/// How many sessions' options options_for() pointed at a TLS port (the wire suites over TLS).
inline std::atomic<int>& sessions_over_tls() {
  static std::atomic<int> count{0};
  return count;
}

/// Options of a test session on `connect`. In the wire suites over TLS (wire_suites_over_tls(),
/// zk_server.h), when `connect` names servers of this process that serve TLS, the session goes to
/// their TLS ports with the test certificate ("holder") instead, and creates open nodes, as it
/// would over plain TCP without credentials: what is under test is the wire, not the ACLs
/// (tests/tls tests those). A proxy's connect string stays plain.
inline SessionOptions options_for(const std::string& connect,
                                  std::chrono::milliseconds timeout = 4000ms) {
  SessionOptions o;
  o.connect = connect;
  o.session_timeout = timeout;
  o.connect_timeout = 10s;
  if (wire_suites_over_tls()) {
    if (auto tls_connect = tls_connect_for(connect)) {
      const ClientCertificate c = test_pki().client("holder");
      o.connect = *tls_connect;
      o.tls = TlsOptions{c.ca_file, c.cert_file, c.key_file, c.key_password};
      o.node_acl = open_acl();
      ++sessions_over_tls();
    }
  }
  return o;
}

/// In the wire suites over TLS, a run in which no session went over TLS fails (the suite would
/// otherwise pass over plain TCP and prove nothing); the count is printed.
class OverTlsCheck : public ::testing::Environment {
 public:
  void TearDown() override {
    if (!wire_suites_over_tls()) return;
    std::printf("[ OVER TLS ] %d sessions' options pointed at TLS ports\n",
                sessions_over_tls().load());
    EXPECT_GT(sessions_over_tls().load(), 0) << "ZKLOCK_TEST_OVER_TLS is set, and no test session "
                                                "went over TLS";
  }
};
inline ::testing::Environment* const kOverTlsCheck = ::testing::AddGlobalTestEnvironment(
    new OverTlsCheck);  // NOLINT(cppcoreguidelines-owning-memory)

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
