// HookDispatcher: hands events to an application's EventHook on a thread of its own (internal).
//
// post() never waits for the hook: it takes a leaf lock for the time of a push onto a bounded
// queue and returns; an event that does not fit is dropped and counted. The thread calls the hook
// one event at a time, in the order posted, and stops (after delivering what was queued) on stop()
// - the Session's close() - or when the dispatcher is destroyed. Called from every zklock thread,
// with any of zklock's locks held: it takes only its own lock and calls no zklock code.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "zklock/event_hook.h"

namespace zklock::detail {

class HookDispatcher {
 public:
  HookDispatcher(std::shared_ptr<EventHook> hook, std::size_t capacity);
  ~HookDispatcher();
  HookDispatcher(const HookDispatcher&) = delete;
  HookDispatcher& operator=(const HookDispatcher&) = delete;

  /// Effects: queues `deliver` (it calls one method of the hook) unless the queue is full.
  void post(std::function<void(EventHook&)> deliver) noexcept;
  /// Effects: delivers what is queued, then stops the thread (idempotent; later events are
  ///   dropped). Must not be called from the hook.
  void stop() noexcept;
  /// Events dropped: the queue was full, or the hook threw.
  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

 private:
  void run();

  const std::shared_ptr<EventHook> hook_;
  const std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void(EventHook&)>> queue_;
  bool stopping_ = false;
  std::atomic<std::uint64_t> dropped_{0};
  std::mutex join_mutex_;  // one stop() joins, the others wait for it
  std::thread thread_;
};

}  // namespace zklock::detail
