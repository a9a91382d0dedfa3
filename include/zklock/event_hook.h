// zklock/event_hook.h: lock and session events handed to the application, to bridge zklock to
// OpenTelemetry or its own metrics system without parsing anything.
//
// Set SessionOptions::event_hook. The Session then runs one thread more (the hook thread) and
// calls the hook there, in the order the events happened, one at a time. The recipes never wait
// for the hook: they put the event in a bounded queue (SessionOptions::event_hook_queue) and go
// on; a hook slower than the events costs only its own thread and, once the queue is full, the
// events that do not fit (counted: MetricsSnapshot::hook_events_dropped). A hook must not throw;
// if it does, the exception is swallowed and counted as a dropped event. Session::close() delivers
// what is queued and stops the hook thread (so a hook must not call close()); events after that
// are dropped.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "zklock/metrics.h"
#include "zklock/session_state.h"

namespace zklock {

/// An acquisition ended (any outcome). `wait`: from the call to its outcome.
struct AcquireEvent {
  Recipe recipe;
  std::string path;  // the lock path (the Semaphore's path; a LockSet's first member's)
  AcquireOutcome outcome;
  std::chrono::nanoseconds wait;
  bool contended;             // it waited behind another contender
  std::int32_t sequence = 0;  // the node's sequence number, when acquired
};

/// A hold ended. `held`: from acquired to its end.
struct ReleaseEvent {
  Recipe recipe;
  std::string path;
  HoldEnd end;
  std::chrono::nanoseconds held;
};

/// The session changed state. `cause` means something only when state is Lost. `in_previous`:
/// how long it was in `event.previous`.
struct SessionStateEvent {
  SessionEvent event;
  LostCause cause = LostCause::kSilent;
  std::chrono::nanoseconds in_previous{0};
};

/// zklock dropped a silent connection and connected afresh (the session kept).
struct ReconnectEvent {
  unsigned generation;
  std::int64_t session_id;
};

class EventHook {
 public:
  virtual ~EventHook() = default;
  virtual void on_acquire(const AcquireEvent& /*event*/) {}
  virtual void on_release(const ReleaseEvent& /*event*/) {}
  virtual void on_session_state(const SessionStateEvent& /*event*/) {}
  virtual void on_reconnect(const ReconnectEvent& /*event*/) {}
};

}  // namespace zklock
