// tests/interop/interop_fixture.h: what the interop suites share - one test's lock path on the
// shared server, its scratch directory and event log, an observer session, and the check at the
// end that nothing of any contender is left on the server.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "contenders.h"
#include "event_log.h"
#include "support/files.h"
#include "support/four_letter_words.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing {

inline std::string dump(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += "  " + s + "\n";
  return out;
}

inline std::vector<std::string> at_or_under(const std::vector<std::string>& paths,
                                            const std::string& root) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (p == root || p.rfind(root + "/", 0) == 0) out.push_back(p);
  }
  return out;
}

template <class Lock>
std::vector<std::string> contender_names(const Lock& m) {
  std::vector<std::string> names;
  for (const auto& c : m.contenders()) names.push_back(c.name);
  return names;
}

// At the end of a test: nothing of any contender is left on the server for this lock path - no
// node under it, no ephemeral, no watch (checked while the zklock Sessions are still open) - and
// then the path itself is removed.
inline void expect_lock_path_clean(Session& observer, int port, const std::string& path) {
  std::vector<std::string> left;
  // Immediate when every contender closed its session; a crashed one's node lasts until its
  // session times out (6 s for the peers).
  EXPECT_TRUE(wait_until(
      [&] {
        left = observer.children(path).value_or(std::vector<std::string>{});
        return left.empty();
      },
      20s))
      << "nodes left under " << path << ":\n"
      << dump(left);
  std::vector<std::string> watches;
  EXPECT_TRUE(wait_until(
      [&] {
        watches = at_or_under(watched_paths(port), path);
        return watches.empty();
      },
      10s))
      << "watches left at or under " << path << ":\n"
      << dump(watches);
  EXPECT_EQ(at_or_under(ephemeral_paths(port), path), std::vector<std::string>{});
  if (left.empty()) observer.remove(path);  // (else remove() would throw not_empty over the report)
}

// A new lock path (persistent, created up front so that no library creates it as a container
// that the server might delete mid-test).
inline std::string make_lock_path(Session& observer, const std::string& stem) {
  const std::string path = unique_path(stem);
  observer.create(path, "", CreateMode::kPersistent, /*make_parents=*/true);
  return path;
}

// One test's lock path on the shared server (persistent, created up front so that no library
// creates it as a container the server might delete mid-test), its scratch directory, the event
// log all its contenders append to, and an observer session for the server's view.
class InteropFixture : public ::testing::Test {
 protected:
  InteropFixture()
      : server_(shared_server()),
        observer_(options_for(server_.connect)),
        path_(make_lock_path(observer_, "interop")),
        log_(dir_.file("events.log")) {}
  // The path goes also when a test skipped (a peer missing) or failed before its own cleanup.
  ~InteropFixture() override {
    try {
      observer_.remove(path_);
    } catch (const Error&) {
      // not empty: expect_lock_path_clean() has reported what was left
    }
  }

  // Arguments for a contender named `name` on this test's path and log.
  ContenderArgs args(const std::string& name, int iterations = 1, int hold_ms = 0) const {
    return contender_args(server_.connect, path_, log_, name, iterations, hold_ms);
  }
  // A `lib` contender named `name` that, once it has the lock, holds it until release(name).
  std::unique_ptr<Peer> start_holder(Lib lib, const std::string& name) const {
    ContenderArgs a = args(name);
    a.hold_until = dir_.file("release-" + name);
    return std::make_unique<Peer>(lib, a, dir_.file(name + ".out"));
  }
  void release(const std::string& name) const { write_file(dir_.file("release-" + name), ""); }
  // Waits until `n` contenders have entered (per the log) or `peer` has exited.
  bool wait_entered(std::size_t n, Peer& peer) const {
    return wait_until(
        [&] { return enter_order(read_events(log_)).size() >= n || !peer.process().running(); },
        kStartLimit);
  }

  const ServerRef server_;
  const TempDir dir_{"zklock-interop-"};
  Session observer_;
  const std::string path_;
  const std::string log_;
};

}  // namespace zklock::testing
