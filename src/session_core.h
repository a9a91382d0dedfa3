// SessionCore: the state behind zklock::Session - the current Handle, the monitor that turns
// answered requests and connection events into Connected / Suspended / Lost, and the threads that
// deliver events (internal).
//
// Threads: the C client's two (per handle), plus
//   monitor  - heartbeats, the Suspended/Lost decisions, opening the next generation, deferred
//              completions; runs zklock code only (observers), never user code;
//   events   - user listeners and Mutex callbacks, one at a time, in order;
//   reaper   - closes handles of ended generations (zookeeper_close may wait on the network).
// Lock order: a recipe's own mutex -> SessionCore::mutex_ -> Handle's mutex. The monitor calls
// observers with no lock held.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "handle.h"
#include "log_router.h"
#include "zklock/session.h"

namespace zklock::detail {

/// A recipe that wants to hear about every change of state, generation or connection, promptly,
/// on the monitor thread. Must be quick and must not call back into SessionCore under its locks.
class SessionObserver {
 public:
  virtual ~SessionObserver() = default;
  virtual void on_session_change() = 0;
};

class SessionCore final : public HandleListener {
 public:
  explicit SessionCore(SessionOptions options);
  ~SessionCore() override;

  /// Opens generation 1 and starts the threads.
  void start();
  void close() noexcept;
  bool closed() const noexcept { return closed_.load(); }

  SessionState state() const noexcept;
  /// The state as seen by something that belongs to generation `generation`: Lost once that
  /// generation has ended.
  SessionState state_of(unsigned generation) const noexcept;
  unsigned generation() const noexcept { return generation_.load(); }
  std::int64_t session_id() const noexcept { return session_id_.load(); }
  std::chrono::milliseconds negotiated_timeout() const noexcept;
  Clock::time_point lost_deadline() const noexcept;
  /// True while the current handle's connection is up (requests go out now).
  bool c_connected() const noexcept { return c_connected_.load(); }
  bool wait_connected(std::chrono::milliseconds timeout);
  /// Waits until something changes (state, generation, connection) or `deadline`.
  void wait_change(std::uint64_t seen_changes, Clock::time_point deadline);
  std::uint64_t changes() const noexcept { return changes_.load(); }

  /// The current session's password (tests use it to expire the session from outside).
  std::string session_password() const {
    auto h = handle();
    return h ? h->session_password() : std::string();
  }

  /// The current generation's handle; null after close(), and for a moment after a generation
  /// is Lost, until the monitor has opened the next one (longer if opening it fails).
  std::shared_ptr<Handle> handle() const;

  /// Held lock nodes double as heartbeat targets: each heartbeat reads one registered path (round
  /// robin) instead of "/", and calls its `on_missing` (on a C client thread) if the node is gone.
  /// Detects a held node deleted by someone else within (number of probes) x heartbeat interval,
  /// at no cost per acquisition.
  using ProbeId = std::uint64_t;
  ProbeId add_probe(std::string path, std::function<void()> on_missing);
  void remove_probe(ProbeId id);

  void add_observer(const std::shared_ptr<SessionObserver>& observer);
  void remove_observer(const SessionObserver* observer);

  Session::ListenerId add_listener(Session::Listener listener);
  void remove_listener(Session::ListenerId id);
  /// Runs `task` on the events thread (user callbacks).
  void post_event(std::function<void()> task);
  /// Waits until every event posted so far has been delivered (or `timeout` passes).
  void flush_events(std::chrono::milliseconds timeout);

  /// Sends a request through `op` and waits for its answer until `timeout` has passed.
  /// Returns operation_timeout on timeout, closed after close().
  OpResult call(const std::function<void(Handle&, Completion)>& op,
                std::chrono::milliseconds timeout);

  const SessionOptions& options() const noexcept { return options_; }
  std::chrono::milliseconds heartbeat_interval() const noexcept;
  std::chrono::milliseconds lost_margin() const noexcept;
  std::chrono::milliseconds suspend_after() const noexcept;

  // HandleListener
  void on_answered(unsigned generation, Clock::time_point sent) override;
  void on_connection_state(unsigned generation, int c_state) override;
  void defer(std::function<void()> task) override;

 private:
  void monitor_loop();
  void events_loop();
  void reaper_loop();
  // With mutex_ held: decides transitions; returns the next moment worth waking at.
  Clock::time_point evaluate_locked(Clock::time_point now);
  void set_state_locked(SessionState next);
  void open_generation_locked(unsigned generation);
  void send_heartbeat(const std::shared_ptr<Handle>& handle, unsigned generation);
  void publish(const SessionEvent& event);
  void notify_observers();

  const SessionOptions options_;
  LogSlot log_slot_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;          // monitor
  std::condition_variable changed_;       // waiters on state changes
  std::shared_ptr<Handle> handle_;
  std::deque<std::function<void()>> deferred_;
  bool stopping_ = false;
  bool expired_ = false;                   // the C client said EXPIRED/AUTH_FAILED (current gen)
  bool heartbeat_in_flight_ = false;
  bool heartbeat_now_ = false;             // (re)connected: prove the session lives at once
  Clock::time_point heartbeat_sent_{};
  Clock::time_point next_heartbeat_{};
  Clock::time_point suspended_at_{};
  Clock::time_point generation_started_{};

  std::atomic<SessionState> state_{SessionState::kConnecting};
  std::atomic<unsigned> generation_{0};
  std::atomic<std::int64_t> session_id_{0};
  std::atomic<bool> c_connected_{false};
  std::atomic<bool> closed_{false};
  std::atomic<std::int64_t> timeout_ms_;
  std::atomic<std::int64_t> last_answered_send_ns_{0};  // 0: nothing answered in this generation
  std::atomic<std::uint64_t> changes_{0};

  struct Probe {
    std::string path;
    std::function<void()> on_missing;
  };
  std::map<ProbeId, Probe> probes_;  // guarded by mutex_
  ProbeId next_probe_id_ = 1;
  ProbeId last_probe_ = 0;

  std::mutex observers_mutex_;
  std::vector<std::weak_ptr<SessionObserver>> observers_;

  // events thread
  std::mutex events_mutex_;
  std::condition_variable events_wake_;
  std::deque<std::function<void()>> events_;
  bool events_stopping_ = false;
  std::mutex listeners_mutex_;
  std::mutex delivery_mutex_;  // held while a listener runs: remove_listener waits on it
  std::map<Session::ListenerId, std::shared_ptr<Session::Listener>> listeners_;
  Session::ListenerId next_listener_id_ = 1;

  // reaper thread
  std::mutex reaper_mutex_;
  std::condition_variable reaper_wake_;
  std::deque<std::shared_ptr<Handle>> to_close_;
  bool reaper_stopping_ = false;

  std::thread monitor_;
  std::thread events_thread_;
  std::thread reaper_;
};

}  // namespace zklock::detail
