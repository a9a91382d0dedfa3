// tests/mutex_waiter.h: a lock() call on a thread of its own, for tests that need a waiter.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "zklock/errors.h"
#include "zklock/mutex.h"

namespace zklock::testing {

// Runs lock() on a thread of its own; reports when it returned and how.
class Waiter {
 public:
  explicit Waiter(Mutex& m) : mutex_(m) {
    thread_ = std::thread([this] {
      try {
        mutex_.lock();
        acquired_at_ = std::chrono::steady_clock::now();
        acquired_ = true;
      } catch (const CancelledError&) {
        cancelled_ = true;
      } catch (const std::exception& e) {
        std::lock_guard lock(error_mutex_);
        error_ = e.what();
        failed_ = true;
      }
      done_ = true;
    });
  }
  ~Waiter() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  bool done() const { return done_; }
  bool acquired() const { return acquired_; }
  bool cancelled() const { return cancelled_; }
  bool failed() const { return failed_; }
  std::string error() const {
    std::lock_guard lock(error_mutex_);
    return error_;
  }
  std::chrono::steady_clock::time_point acquired_at() const { return acquired_at_; }

 private:
  Mutex& mutex_;
  std::atomic<bool> done_{false}, acquired_{false}, cancelled_{false}, failed_{false};
  std::chrono::steady_clock::time_point acquired_at_{};
  mutable std::mutex error_mutex_;
  std::string error_;
  std::thread thread_;
};

}  // namespace zklock::testing
