// tests/session_log.h: SessionLog, a session's own account (its log at debug level, each line with
// the milliseconds since the SessionLog was made) - what a timing test prints when it fails, so
// that a late Lost shows what the monitor and the reaper were doing.
//
// What it guarantees: attach() sets `o` to log at debug level into this SessionLog, which must
// outlive the Session made with `o`; text() is every line so far, thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>

#include "zklock/session_options.h"

namespace zklock::testing {

class SessionLog {
 public:
  void attach(SessionOptions& o) {
    o.log_level = LogLevel::kDebug;
    o.log_sink = [this](LogLevel /*level*/, std::string_view line) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start_)
                          .count();
      std::lock_guard lock(mutex_);
      text_ += std::to_string(ms) + " ms: " + std::string(line) + "\n";
    };
  }
  std::string text() const {
    std::lock_guard lock(mutex_);
    return text_;
  }

 private:
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  mutable std::mutex mutex_;
  std::string text_;
};

}  // namespace zklock::testing
