// tests/interop/contenders.h: the contenders of the interop suite - Curator and kazoo programs run
// as child processes (CuratorContender.java, kazoo_contender.py, built and located by tests.cmake)
// and zklock threads, each with its own Session - all following one protocol around their
// critical section (event_log.h): append "enter", create a marker file (a writer's exclusively,
// and no reader's may exist; a reader's own, and no writer's may exist: else "VIOLATION"), hold,
// delete the marker, append "exit".
//
// A peer that is not installed makes its tests skip - or fail, on CI or with
// ZKLOCK_INTEROP_REQUIRED (ZKLOCK_REQUIRE_PEER).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "event_log.h"
#include "support/environment.h"
#include "support/files.h"
#include "support/process.h"
#include "support/wait.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing {

// Generous deadlines: they bound a failing test, a passing one never waits for them. A JVM start
// on a loaded 2-core machine can take several seconds.
inline constexpr std::chrono::seconds kStartLimit{60};  // a child connected / its node queued
inline constexpr std::chrono::seconds kRunLimit{90};    // a contender finished its iterations

// ---- Which peers are available.

// Why Curator (kazoo) contenders cannot run here, or "" when they can. `*broken` is set when the
// build configured them but their files are missing: a broken build fails, never skips.
std::string curator_missing(bool* broken);
std::string kazoo_missing(bool* broken);

// Skips the test when a peer is not installed; fails when it should have been (a broken build,
// CI, ZKLOCK_INTEROP_REQUIRED).
#define ZKLOCK_REQUIRE_PEER(missing_fn)                                        \
  do {                                                                         \
    bool zklock_broken_ = false;                                               \
    const std::string zklock_missing_ = missing_fn(&zklock_broken_);           \
    if (!zklock_missing_.empty()) {                                            \
      if (zklock_broken_ || prerequisites_required("ZKLOCK_INTEROP_REQUIRED")) \
        FAIL() << zklock_missing_;                                             \
      GTEST_SKIP() << zklock_missing_;                                         \
    }                                                                          \
  } while (0)

// ---- Contenders.

enum class Lib { kCurator, kKazoo, kZklock };

const char* lib_name(Lib lib);

// The availability check of a peer library (kCurator or kKazoo), for ZKLOCK_REQUIRE_PEER.
using PeerCheck = std::string (*)(bool* broken);
inline PeerCheck peer_check(Lib lib) {
  return lib == Lib::kCurator ? curator_missing : kazoo_missing;
}

struct ContenderArgs {
  std::string connect;
  std::string lock_path;
  std::string log;  // shared event log; the marker is log + ".inside"
  std::string name;
  int iterations = 1;
  int hold_ms = 0;
  std::string start_file;  // peers wait for it after connecting (a common start line)
  std::string hold_until;  // hold the lock until this file exists
  bool queue_once = false;
  // What the contender takes: "" the library's exclusive lock (zklock's Mutex, Curator's
  // InterProcessMutex, kazoo's Lock); "read" / "write" a side of its read/write lock (zklock's
  // SharedMutex, Curator's InterProcessReadWriteLock, kazoo's ReadLock / WriteLock); leadership
  // of an election: "election" (zklock's Election, kazoo's Election), "selector" (Curator's
  // LeaderSelector), "latch" (Curator's LeaderLatch; zklock's Election with latch names).
  std::string mode;
  // Curator only: its mutex is revocable (a request ends a hold_until hold); or, with
  // revoke_node, no lock at all - it asks that node's holder to let go (Revoker) and exits.
  bool revocable = false;
  std::string revoke_node;
  // kazoo only: its extra_lock_patterns instead of the mode's default (kazoo_contender.py).
  std::optional<std::vector<std::string>> kazoo_patterns;
};

// The critical section's files (see above): enter_critical() creates ours and checks for the
// others - "" when fine, else what went wrong (another holder inside: "another holder was
// inside") - and leave_critical() deletes ours.
std::string enter_critical(const std::string& log, const std::string& name, bool reader);
void leave_critical(const std::string& log, const std::string& name, bool reader);

ContenderArgs contender_args(const std::string& connect, const std::string& lock_path,
                             const std::string& log, const std::string& name, int iterations,
                             int hold_ms);

// A Curator or kazoo contender process. Its stdout/stderr go to their own file.
class Peer {
 public:
  // Starts it; `out_path` receives its stdout and stderr.
  Peer(Lib lib, const ContenderArgs& a, std::string out_path);

  Lib lib() const { return lib_; }
  const std::string& name() const { return name_; }
  std::string output() const { return read_file(out_path_); }
  bool printed(const std::string& line) const { return has_line(output(), line); }
  ChildProcess& process() { return *process_; }
  std::string describe() const {
    return std::string(lib_name(lib_)) + " contender " + name_ + ", output:\n" + output();
  }

  // Waits until the contender printed `line`; false (at once) if it exited first.
  bool wait_printed(const std::string& line, std::chrono::milliseconds limit = kStartLimit) {
    return wait_until([&] { return printed(line) || !process_->running(); }, limit) &&
           printed(line);
  }

 private:
  Lib lib_;
  std::string name_;
  std::string out_path_;
  std::unique_ptr<ChildProcess> process_;
};

// Asserts that `peer` exits with `code` within `limit`.
void expect_exit(Peer& peer, int code, std::chrono::milliseconds limit = kRunLimit);

// A zklock contender: a thread with its own Session and Mutex (or SharedMutex, by args.mode),
// running the same protocol as the peer programs. The Session stays open until the object is
// destroyed, so that the server-side checks at the end of a test still see anything (a watch, a
// node) it might have left behind.
class ZklockContender {
 public:
  explicit ZklockContender(const ContenderArgs& a) : args_(a), session_(options_for(a.connect)) {
    if (a.mode == "election" || a.mode == "latch") {
      ElectionOptions o;
      o.value = a.name;
      o.curator_latch_names = a.mode == "latch";
      election_.emplace(session_, a.lock_path, o);
    } else if (a.mode.empty()) {
      mutex_.emplace(session_, a.lock_path, mutex_options(a.name));
    } else {
      shared_.emplace(session_, a.lock_path, mutex_options(a.name));
    }
    thread_ = std::thread([this] { run(); });
  }
  ~ZklockContender() {
    {
      std::lock_guard lock(gate_mutex_);
      abort_ = go_ = true;
    }
    gate_.notify_all();
    if (!finished()) {
      if (mutex_) mutex_->cancel();  // a lock() waiting now
      if (election_) election_->cancel();
      if (shared_) shared_->cancel();
      session_.close();  // and any later one (fails with ClosedError)
    }
    thread_.join();
  }
  ZklockContender(const ZklockContender&) = delete;
  ZklockContender& operator=(const ZklockContender&) = delete;

  // Starts the iterations (the thread waits for this, like the peers wait for the start file).
  void go() {
    {
      std::lock_guard lock(gate_mutex_);
      go_ = true;
    }
    gate_.notify_all();
  }
  // Waits for the iterations to end; returns "" on success, else what went wrong.
  std::string wait_done(std::chrono::milliseconds limit = kRunLimit) {
    if (!wait_until([&] { return finished(); }, limit)) return args_.name + ": still running";
    std::lock_guard lock(gate_mutex_);
    if (!error_.empty()) return args_.name + ": " + error_;
    if (completed_ != args_.iterations)
      return args_.name + ": completed " + std::to_string(completed_) + " iterations";
    return "";
  }
  Session& session() { return session_; }
  const std::string& name() const { return args_.name; }
  // Our node while queued or holding (contenders() of the path: the one our session owns); a
  // lock's contender only.
  std::optional<std::string> node() const;

 private:
  static MutexOptions mutex_options(const std::string& name) {
    MutexOptions o;
    o.description = name;  // in the node's JSON data
    return o;
  }
  bool finished() {
    std::lock_guard lock(gate_mutex_);
    return finished_;
  }
  // The thread: waits for go(), then the iterations of the protocol.
  void run();

  const ContenderArgs args_;
  Session session_;
  std::optional<Mutex> mutex_;         // mode ""
  std::optional<SharedMutex> shared_;  // mode "read" or "write"
  std::optional<Election> election_;   // mode "election" or "latch"
  std::mutex gate_mutex_;
  std::condition_variable gate_;
  bool go_ = false;
  bool abort_ = false;
  bool finished_ = false;
  int completed_ = 0;
  std::string error_;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace zklock::testing
