// CallbackGate: lets an object's user callbacks run on another thread until the object closes the
// gate, and never after (internal).
//
// A callback posted to the session's events thread runs through the gate; close() waits for a
// callback that is running right now to return - unless it is called from inside that very callback
// (on the same thread), where it only marks the gate closed. After close() returns, no callback
// passed to run() starts.
#pragma once

#include <functional>
#include <mutex>

namespace zklock::detail {

class CallbackGate {
 public:
  /// Runs `callback` unless the gate is closed.
  void run(const std::function<void()>& callback) {
    std::lock_guard lock(mutex_);
    if (open_) callback();
  }
  void close() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }

 private:
  std::recursive_mutex mutex_;  // held while a callback runs; recursive for close() from within it
  bool open_ = true;
};

}  // namespace zklock::detail
