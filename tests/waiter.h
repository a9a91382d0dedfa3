// tests/waiter.h: a blocking acquisition - Mutex::lock(), SharedMutex::lock_shared(),
// Semaphore::acquire(), ... - on a thread of its own, for tests that need a waiter while the test
// thread acts and observes.
//
// What it guarantees: the call starts on its own thread when the Waiter is constructed. done()
// turns true once the call has returned or thrown, and from then on exactly one of acquired() (it
// returned; acquired_at() is when), cancelled() (it threw CancelledError) and failed() (it threw
// anything else) is true; error() is the exception's what() in the last two cases. The flags are
// set after the call's own effects, so a test that has seen acquired() may use what the call
// acquired. The destructor waits for the call to end (join()): the test must see to it that it
// does - release the lock ahead, cancel, close the session.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "zklock/errors.h"
#include "zklock/mutex.h"

namespace zklock::testing {

class Waiter {
 public:
  // Runs `acquire`: a call that blocks until it has acquired (returns) or gives up (throws).
  explicit Waiter(std::function<void()> acquire) {
    thread_ = std::thread([this, acquire = std::move(acquire)] { run(acquire); });
  }
  // Runs m.lock().
  explicit Waiter(Mutex& m) : Waiter([&m] { m.lock(); }) {}
  ~Waiter() { join(); }
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

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
  std::chrono::steady_clock::time_point acquired_at() const {
    std::lock_guard lock(error_mutex_);
    return acquired_at_;
  }

 private:
  void run(const std::function<void()>& acquire) {
    try {
      acquire();
      {
        std::lock_guard lock(error_mutex_);
        acquired_at_ = std::chrono::steady_clock::now();
      }
      acquired_ = true;
    } catch (const CancelledError& e) {
      set_error(e);
      cancelled_ = true;
    } catch (const std::exception& e) {
      set_error(e);
      failed_ = true;
    }
    done_ = true;
  }
  void set_error(const std::exception& e) {
    std::lock_guard lock(error_mutex_);
    error_ = e.what();
  }

  std::atomic<bool> done_{false}, acquired_{false}, cancelled_{false}, failed_{false};
  mutable std::mutex error_mutex_;  // error_, acquired_at_
  std::chrono::steady_clock::time_point acquired_at_{};
  std::string error_;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace zklock::testing
