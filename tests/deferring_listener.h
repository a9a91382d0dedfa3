// tests/deferring_listener.h (white box): a ConnectionListener for tests that drive a
// ClientConnection alone. Nothing is answered; the tasks the connection defers (refused requests'
// completions) wait until the test runs them, after the connection is closed.
#pragma once

#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "client/client_connection.h"

namespace zklock::detail {

class DeferringListener : public ConnectionListener {
 public:
  void on_answered(const Answer&) override {}
  void on_connection_event(unsigned, ConnectionEvent) override {}
  void defer(std::function<void()> task) override {
    std::lock_guard lock(mutex_);
    deferred_.push_back(std::move(task));
  }
  // Runs what was deferred so far, on the caller's thread.
  void run_deferred() {
    std::vector<std::function<void()>> tasks;
    {
      std::lock_guard lock(mutex_);
      tasks.swap(deferred_);
    }
    for (auto& task : tasks) task();
  }

 private:
  std::mutex mutex_;
  std::vector<std::function<void()>> deferred_;
};

}  // namespace zklock::detail
