// EventDispatcher: the thread that runs a Session's user callbacks - its listeners and its Mutexes'
// callbacks - one at a time, in the order they were posted (internal).
//
// Posting never blocks on user code (a slow listener delays other callbacks, never ZooKeeper's
// threads or zklock's monitor). remove_listener() waits for a delivery to that listener that is
// running right now, unless it is called from a callback (on this thread).
//
// Lifetime: everything the thread touches (its queue, the listeners) lives in a State that the
// thread co-owns. stop() called from a callback (Session::close() inside a listener or a lock
// handler) cannot join the thread it runs on: it detaches it, and the thread finishes the tasks
// already posted and ends on its own - also after the dispatcher (and the Session) are gone.
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
  /// from a callback, see above). Later posts are dropped. Idempotent.
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
  struct State {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::function<void()>> tasks;
    bool stopping = false;
    bool running = true;  // false once the thread has left its loop

    std::mutex listeners_mutex;
    std::mutex delivery_mutex;  // held while a listener runs: remove_listener waits on it
    std::map<Session::ListenerId, std::shared_ptr<Session::Listener>> listeners;
    Session::ListenerId next_listener_id = 1;
  };

  static void loop(const std::shared_ptr<State>& state);

  const std::shared_ptr<State> state_ = std::make_shared<State>();
  std::thread thread_;
  bool started_ = false;  // start() ran (set and read by the owner's thread only)
};

}  // namespace zklock::detail
