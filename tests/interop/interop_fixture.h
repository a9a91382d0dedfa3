// tests/interop/interop_fixture.h: what the interop suites share - one test's lock path on the
// shared server, its scratch directory and event log, an observer session, the test's contenders
// (started, held at a common start line, waited for), and the check at the end that nothing of any
// contender is left on the server.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <map>
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

// The stem of a contender's name: "curator-", "kazoo-", "zklock-".
inline std::string name_prefix(Lib lib) {
  std::string prefix = lib_name(lib);
  for (char& c : prefix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return prefix + "-";
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
        try {
          left = observer.children(path).value_or(std::vector<std::string>{});
        } catch (const ConnectionLossError&) {
          return false;  // the read went with its connection (a server stalled under load): again
        }
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
  // The path goes also when a test skipped (a peer missing) or failed before its own cleanup -
  // once the contenders have gone (their nodes with them).
  ~InteropFixture() override {
    zklocks_.clear();
    peers_.clear();
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
  // Waits until `n` contenders are queued on the path, as `view` lists them; false if `peer`
  // (when given) exited first.
  template <class Lock>
  bool wait_queued(const Lock& view, std::size_t n, Peer* peer) const {
    return wait_until(
        [&] {
          if (peer != nullptr && !peer->process().running()) return true;
          try {
            return view.contenders().size() >= n;
          } catch (const ConnectionLossError&) {
            return false;  // the read went with its connection (a server stalled): again
          }
        },
        kStartLimit);
  }

  // Starts a `lib` contender with `a`, kept until the end of the test: a peer process (its output
  // in <name>.out of the scratch directory), or a zklock thread. It begins at once - unless
  // a.start_file is set: then it waits at the common start line, open_start_line(). Records its
  // library and the iterations it must complete (lib_of_, expected_). Returns the peer, or
  // nullptr for a zklock contender.
  Peer* start(Lib lib, const ContenderArgs& a) {
    lib_of_[a.name] = lib;
    expected_[a.name] = a.queue_once ? 1 : a.iterations;
    if (lib == Lib::kZklock) {
      zklocks_.push_back(std::make_unique<ZklockContender>(a));
      if (a.start_file.empty()) zklocks_.back()->go();
      return nullptr;
    }
    peers_.push_back(std::make_unique<Peer>(lib, a, dir_.file(a.name + ".out")));
    return peers_.back().get();
  }
  // The common start line (start_file_): once every peer has connected, creates the file the
  // peers wait for and lets the zklock contenders go - so that all contend from the start instead
  // of one finishing before another's process is up. Fails (at once) if a peer did not connect.
  ::testing::AssertionResult open_start_line() {
    for (auto& p : peers_) {
      if (!p->wait_printed("ready")) return ::testing::AssertionFailure() << p->describe();
    }
    write_file(start_file_, "");
    for (auto& z : zklocks_) z->go();
    return ::testing::AssertionSuccess();
  }
  // Every contender ended well: each peer exited 0, each zklock thread completed its iterations.
  void expect_all_done() {
    for (auto& p : peers_) expect_exit(*p, 0);
    for (auto& z : zklocks_) EXPECT_EQ(z->wait_done(), "");
  }

  // Mixed mutual exclusion: two contenders of `peer_lib` (taking `peer_mode`) and two zklock
  // threads (taking `zklock_mode`; ContenderArgs::mode), all looping `iterations` times on one
  // path at once. No VIOLATION, strictly alternating enter/exit and increasing times in the shared
  // log, everyone completed. A side that ignored the other side's nodes would be inside together
  // with it; the check that the two libraries really did alternate (their activity overlapped)
  // is what makes "no overlap" mean something. Nothing is left on the server.
  void run_mixed_exclusion(Lib peer_lib, const std::string& peer_mode = "",
                           const std::string& zklock_mode = "", int iterations = 15) {
    ZKLOCK_REQUIRE_PEER(peer_check(peer_lib));
    constexpr int kHoldMs = 20;
    for (int i = 1; i <= 2; ++i) {
      for (const Lib lib : {peer_lib, Lib::kZklock}) {
        ContenderArgs a = args(name_prefix(lib) + std::to_string(i), iterations, kHoldMs);
        a.mode = lib == Lib::kZklock ? zklock_mode : peer_mode;
        a.start_file = start_file_;
        start(lib, a);
      }
    }
    ASSERT_TRUE(open_start_line());
    expect_all_done();

    const auto events = read_events(log_);
    EXPECT_EQ(exclusion_problem(events, expected_), "") << "log:\n" << read_file(log_);
    const auto order = enter_order(events);
    int to_zklock = 0, to_peer = 0;
    for (std::size_t i = 1; i < order.size(); ++i) {
      const Lib from = lib_of_[order[i - 1]], to = lib_of_[order[i]];
      if (from != to) ++(to == Lib::kZklock ? to_zklock : to_peer);
    }
    EXPECT_GE(to_zklock, 1) << "no hand-over from " << lib_name(peer_lib) << " to zklock:\n"
                            << read_file(log_);
    EXPECT_GE(to_peer, 1) << "no hand-over from zklock to " << lib_name(peer_lib) << ":\n"
                          << read_file(log_);
    expect_lock_path_clean(observer_, server_.port, path_);
  }

  const ServerRef server_;
  const TempDir dir_{"zklock-interop-"};
  Session observer_;
  const std::string path_;
  const std::string log_;
  const std::string start_file_ = dir_.file("start");
  // The contenders start() started, in that order, and what it recorded of them.
  std::vector<std::unique_ptr<Peer>> peers_;
  std::vector<std::unique_ptr<ZklockContender>> zklocks_;
  std::map<std::string, Lib> lib_of_;
  std::map<std::string, int> expected_;  // name -> iterations, as exclusion_problem() takes them
};

}  // namespace zklock::testing
