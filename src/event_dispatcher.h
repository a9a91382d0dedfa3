// EventDispatcher: the thread that runs a Session's user callbacks - its listeners and its Mutexes'
// callbacks - one at a time, in the order they were posted (internal).
//
// Posting never blocks on user code (a slow listener delays other callbacks, never ZooKeeper's
// threads or zklock's monitor). remove_listener() waits for a delivery to that listener that is
// running right now, unless it is called from a callback (on this thread).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "zklock/session.h"

namespace zklock::detail {

class EventDispatcher {
 public:
  EventDispatcher() = default;
  /// Effects: stop().
  ~EventDispatcher();
  EventDispatcher(const EventDispatcher&) = delete;
  EventDispatcher& operator=(const EventDispatcher&) = delete;

  void start();
  /// Effects: runs what was posted so far, then ends the thread (joined; detached when called
  /// from a callback). Later posts are dropped. Idempotent.
  void stop() noexcept;

  /// Runs `task` on the dispatcher's thread after everything posted before it.
  void post(std::function<void()> task);
  /// As post(), but refuses (returns false, `task` untouched) once stop() has begun, when the
  /// task might never run.
  bool try_post(std::function<void()>& task);
  /// Waits until everything posted so far has run (or `timeout` passes).
  void flush(std::chrono::milliseconds timeout);
  /// True on the dispatcher's thread.
  bool on_thread() const noexcept;

  Session::ListenerId add_listener(Session::Listener listener);
  void remove_listener(Session::ListenerId id);
  /// Posts the delivery of `event` to every listener registered when it runs.
  void publish(const SessionEvent& event);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;

  std::mutex listeners_mutex_;
  std::mutex delivery_mutex_;  // held while a listener runs: remove_listener waits on it
  std::map<Session::ListenerId, std::shared_ptr<Session::Listener>> listeners_;
  Session::ListenerId next_listener_id_ = 1;
};

}  // namespace zklock::detail
