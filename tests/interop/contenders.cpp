// tests/interop/contenders.cpp
#include "contenders.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <shared_mutex>
#include <utility>

#ifndef ZKLOCK_INTEROP_CURATOR_MISSING
#define ZKLOCK_INTEROP_CURATOR_MISSING \
  "Curator interop: not configured by tests/interop/tests.cmake"
#define ZKLOCK_INTEROP_JAVA ""
#define ZKLOCK_INTEROP_CLASSPATH ""
#define ZKLOCK_INTEROP_CURATOR_CLASS_FILE ""
#endif
#ifndef ZKLOCK_INTEROP_KAZOO_MISSING
#define ZKLOCK_INTEROP_KAZOO_MISSING "kazoo interop: not configured by tests/interop/tests.cmake"
#define ZKLOCK_INTEROP_PYTHON ""
#define ZKLOCK_INTEROP_KAZOO_SCRIPT ""
#endif

namespace zklock::testing {

// Why Curator contenders cannot run here, or "" when they can. Configured-but-missing files are
// a broken build, not a missing peer: reported as such so that the test fails instead of skipping.
std::string curator_missing(bool* broken) {
  *broken = false;
  if (std::string reason = ZKLOCK_INTEROP_CURATOR_MISSING; !reason.empty()) return reason;
  if (!std::filesystem::exists(ZKLOCK_INTEROP_CURATOR_CLASS_FILE) ||
      !std::filesystem::exists(ZKLOCK_INTEROP_JAVA)) {
    *broken = true;
    return std::string("Curator contender class or java missing: ") +
           ZKLOCK_INTEROP_CURATOR_CLASS_FILE + " / " + ZKLOCK_INTEROP_JAVA;
  }
  return "";
}

std::string kazoo_missing(bool* broken) {
  *broken = false;
  if (std::string reason = ZKLOCK_INTEROP_KAZOO_MISSING; !reason.empty()) return reason;
  if (!std::filesystem::exists(ZKLOCK_INTEROP_KAZOO_SCRIPT) ||
      !std::filesystem::exists(ZKLOCK_INTEROP_PYTHON)) {
    *broken = true;
    return std::string("kazoo contender or its python missing: ") + ZKLOCK_INTEROP_KAZOO_SCRIPT +
           " / " + ZKLOCK_INTEROP_PYTHON;
  }
  return "";
}

const char* lib_name(Lib lib) {
  switch (lib) {
    case Lib::kCurator:
      return "Curator";
    case Lib::kKazoo:
      return "kazoo";
    case Lib::kZklock:
      return "zklock";
  }
  return "?";
}

ContenderArgs contender_args(const std::string& connect, const std::string& lock_path,
                             const std::string& log, const std::string& name, int iterations,
                             int hold_ms) {
  ContenderArgs a;
  a.connect = connect;
  a.lock_path = lock_path;
  a.log = log;
  a.name = name;
  a.iterations = iterations;
  a.hold_ms = hold_ms;
  return a;
}

Peer::Peer(Lib lib, const ContenderArgs& a, std::string out_path)
    : lib_(lib), name_(a.name), out_path_(std::move(out_path)) {
  std::vector<std::string> argv;
  if (lib == Lib::kCurator) {
    // C1 only and a small serial heap: these JVMs live for seconds, on a shared 2-core machine.
    argv = {
        ZKLOCK_INTEROP_JAVA,      "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx64m", "-cp",
        ZKLOCK_INTEROP_CLASSPATH, "CuratorContender"};
  } else {
    argv = {ZKLOCK_INTEROP_PYTHON, "-B", ZKLOCK_INTEROP_KAZOO_SCRIPT};
  }
  for (const auto& s : {a.connect, a.lock_path, std::to_string(a.iterations), a.log, a.name,
                        std::to_string(a.hold_ms)}) {
    argv.push_back(s);
  }
  if (a.queue_once) argv.push_back("--queue-once");
  if (!a.mode.empty()) argv.insert(argv.end(), {"--mode", a.mode});
  if (a.kazoo_patterns) {
    std::string patterns;
    for (const auto& p : *a.kazoo_patterns) patterns += (patterns.empty() ? "" : ",") + p;
    argv.insert(argv.end(), {"--patterns", patterns});
  }
  if (!a.start_file.empty()) argv.insert(argv.end(), {"--start-file", a.start_file});
  if (!a.hold_until.empty()) argv.insert(argv.end(), {"--hold-until", a.hold_until});
  if (a.revocable) argv.push_back("--revocable");
  if (!a.revoke_node.empty()) argv.insert(argv.end(), {"--revoke", a.revoke_node});
  SpawnOptions options;
  options.log_path = out_path_;
  process_ = std::make_unique<ChildProcess>(argv, options);
}

// Asserts that `peer` exits with `code` within `limit`.
void expect_exit(Peer& peer, int code, std::chrono::milliseconds limit) {
  const auto status = peer.process().wait_exit(limit);
  ASSERT_TRUE(status.has_value()) << "still running after " << limit.count()
                                  << " ms: " << peer.describe();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == code)
      << describe_wait_status(*status) << ", expected exit " << code << ": " << peer.describe();
}

namespace {

std::string reader_marker(const std::string& log, const std::string& name) {
  return log + ".reader." + name;
}

bool readers_inside(const std::string& log) {
  const std::filesystem::path path(log);
  const std::string prefix = path.filename().string() + ".reader.";
  for (const auto& entry : std::filesystem::directory_iterator(path.parent_path())) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::string enter_critical(const std::string& log, const std::string& name, bool reader) {
  const std::string writer_marker = log + ".inside";
  const std::string ours = reader ? reader_marker(log, name) : writer_marker;
  const UniqueFd created(::open(ours.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644));
  if (!created.valid()) {
    const int err = errno;
    return err == EEXIST ? "another holder was inside" : std::strerror(err);
  }
  // Ours first, then theirs: of a reader and a writer inside at once, one sees the other's file.
  const bool other = reader ? std::filesystem::exists(writer_marker) : readers_inside(log);
  return other ? "another holder was inside" : "";
}

void leave_critical(const std::string& log, const std::string& name, bool reader) {
  ::unlink((reader ? reader_marker(log, name) : log + ".inside").c_str());
}

std::optional<std::string> ZklockContender::node() const {
  if (election_) return std::nullopt;  // not asked of a participant (no test needs it)
  const auto contenders = mutex_ ? mutex_->contenders() : shared_->contenders();
  for (const auto& c : contenders) {
    if (c.ephemeral_owner == session_.session_id()) return c.name;
  }
  return std::nullopt;
}

void ZklockContender::run() {
  std::string error;
  int completed = 0;
  try {
    {
      std::unique_lock lock(gate_mutex_);
      gate_.wait(lock, [&] { return go_; });
    }
    LogWriter log(args_.log);
    const bool reader = args_.mode == "read";
    for (int i = 0; i < args_.iterations && error.empty(); ++i) {
      {
        std::lock_guard lock(gate_mutex_);
        if (abort_) break;
      }
      std::unique_lock<Mutex> hold_exclusive;
      std::unique_lock<SharedMutex> hold_write;
      std::shared_lock<SharedMutex> hold_read;
      struct Resign {
        Election* leading = nullptr;
        ~Resign() {
          if (leading != nullptr) leading->resign();
        }
      } term;
      if (election_) {
        election_->campaign();
        term.leading = &*election_;
      } else if (mutex_) {
        hold_exclusive = std::unique_lock<Mutex>(*mutex_);
      } else if (reader) {
        hold_read = std::shared_lock<SharedMutex>(*shared_);
      } else {
        hold_write = std::unique_lock<SharedMutex>(*shared_);
      }
      log.append("enter", args_.name);
      if (std::string problem = enter_critical(args_.log, args_.name, reader); !problem.empty()) {
        log.append("VIOLATION", args_.name);
        error = problem;
        break;
      }
      if (!args_.hold_until.empty()) {
        if (!wait_until([&] { return std::filesystem::exists(args_.hold_until); }, kRunLimit))
          error = "hold-until timeout";
      } else {
        std::this_thread::sleep_for(
            std::chrono::milliseconds(args_.hold_ms));  // the work, not sync
      }
      leave_critical(args_.log, args_.name, reader);
      log.append("exit", args_.name);
      ++completed;
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::lock_guard lock(gate_mutex_);
  error_ = error;
  completed_ = completed;
  finished_ = true;
}

}  // namespace zklock::testing
