// SessionCore: the state behind zklock::Session - the current ClientConnection, the monitor that
// turns answered requests and connection events into Connected / Suspended / Lost (through the
// pure LivenessRule), and the threads that deliver events (internal).
//
// Threads: the C client's two (per connection), plus
//   monitor  - heartbeats, the Suspended/Lost decisions, opening the next generation, deferred
//              completions and scheduled retries; runs zklock code only (observers), never user
//              code, and never waits on the C client (the reconnector does);
//   reconnector - the monitor's passes that force a reconnect (the C client's server-list update
//              may wait seconds behind its I/O thread's address lookups): the reconnect, then
//              that pass's heartbeat and route query;
//   events   - user listeners and Mutex callbacks, one at a time, in order;
//   reaper   - closes connections of ended generations (zookeeper_close may wait on the network),
//              each no earlier than the server could have expired its session anyway and than
//              the margin after its Lost callbacks ran (see EndedConnection).
//
// Lock order: a recipe's own mutex -> SessionCore::mutex_ -> ClientConnection's mutex -> the leaf
// locks (wake_mutex_, defer_mutex_, reconnect_mutex_, events, reaper, observers, listeners).
// Nothing is called out of SessionCore while mutex_ is held except the connection's non-blocking
// accessors; requests are sent, observers told and connections closed with mutex_ released. A
// completion never runs on the thread that submitted its request (refusals go through defer(),
// which takes only a leaf lock).
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
#include <unordered_map>
#include <vector>

#include "base/boot_clock.h"
#include "client/client_connection.h"
#include "client/log_router.h"
#include "metrics/session_metrics.h"
#include "session/event_dispatcher.h"
#include "session/leader_confirmation.h"
#include "session/liveness_rule.h"
#include "session/server_topology.h"
#include "session/tick_bound.h"
#include "zklock/lock_state.h"
#include "zklock/session.h"

namespace zklock::detail {

/// A recipe that wants to hear about every change of state, generation or connection, promptly,
/// on the monitor thread. Must be quick and must not call back into SessionCore under its locks.
class SessionObserver {
 public:
  virtual ~SessionObserver() = default;
  virtual void on_session_change() = 0;
  /// The nodes it has on the server now, for the figures (called with no zklock lock held).
  virtual std::size_t nodes_on_server() const { return 0; }
};

class SessionCore final : public ConnectionListener {
 public:
  using SteadyClock = std::chrono::steady_clock;

  SessionCore(SessionOptions options, std::shared_ptr<testing::FaultHook> fault_hook);
  ~SessionCore() override;

  /// Opens generation 1 and starts the threads, and the probe of the ensemble's tickTime
  /// (probe_tick) beside the first connect.
  void start();
  /// Waits, at most `timeout`, for the probe started by start() to end, then abandons it if it
  /// has not (the session keeps the bound its own timeout gives, tick_bound.h) and joins its
  /// thread. Session's constructor calls it (once, before any other thread sees the core): the
  /// probe's connection and threads are gone, always, by the time the Session is handed out.
  void finish_probe(std::chrono::milliseconds timeout) noexcept;
  void close() noexcept;
  bool closed() const noexcept { return closed_.load(); }

  SessionState state() const noexcept;
  /// The state as seen by something that belongs to generation `generation`: Lost once that
  /// generation has ended.
  SessionState state_of(unsigned generation) const noexcept;
  /// The state of a lock (or lease) taken in `generation` whose node is still there: Held while
  /// Connected, Suspended while Suspended, else Lost.
  LockState lock_state_of(unsigned generation) const noexcept;
  unsigned generation() const noexcept { return generation_.load(); }
  /// How a hold taken in `generation` ends if it ends now (`node_deleted`: its node was seen
  /// gone): released while the session lives, else closed, expired or silent.
  HoldEnd hold_end_of(unsigned generation, bool node_deleted) const noexcept {
    if (node_deleted) return HoldEnd::kNodeDeleted;
    switch (state_of(generation)) {
      case SessionState::kConnected:
      case SessionState::kSuspended:
        return HoldEnd::kReleased;
      case SessionState::kClosed:
        return HoldEnd::kClosed;
      default:
        return lost_cause_of(generation) == LostCause::kExpired ? HoldEnd::kSessionExpired
                                                                : HoldEnd::kSessionSilent;
    }
  }
  /// Why generation `generation` was Lost: expired if the server said so, else silent.
  LostCause lost_cause_of(unsigned generation) const noexcept {
    return expired_generation_.load() == generation ? LostCause::kExpired : LostCause::kSilent;
  }
  std::int64_t session_id() const noexcept { return session_id_.load(); }
  /// True when every connection of this session is TLS (SessionOptions::tls).
  bool encrypted() const noexcept { return tls_settings_.has_value(); }
  /// True when the C client has logged more failed TLS handshakes than zklock broke itself by a
  /// forced reconnect: a server that does not speak TLS or does not take ours - not a peer
  /// that never answers (whose handshakes only zklock ends).
  bool tls_handshake_refused() const noexcept {
    return log_slot_.tls_handshake_failures() > forced_drops_.load();
  }
  std::chrono::milliseconds negotiated_timeout() const noexcept;
  BootClock::time_point lost_deadline() const noexcept;
  /// Until when a thread waiting for something of this session to be Lost may sleep before it
  /// looks again: the Lost deadline (the clock decides Lost even if no event comes), `deadline`,
  /// and no later than a second from now (the steady clock stands still while the machine sleeps).
  SteadyClock::time_point lost_wait_until(std::optional<SteadyClock::time_point> deadline) const;
  /// The Lost rule's settings, fitted to the negotiated timeout.
  LivenessSettings settings() const;
  /// What the session knows of the servers, and the confirmation lag it uses for it.
  ServerTopology topology() const;
  BootClock::duration confirmation_lag() const;
  /// True while the current connection is up (requests go out now).
  bool connected() const noexcept { return connected_.load(); }
  bool wait_connected(std::chrono::milliseconds timeout);
  /// Waits until Connected and, with credentials, until the server has answered them, or
  /// `timeout` passes. Returns: ok; connection_loss on timeout; the server's refusal (e.g.
  /// auth_failed) if it refused the credentials; closed after close().
  Errc wait_ready(std::chrono::milliseconds timeout);
  /// Waits until something changes (state, generation, connection) or `deadline`.
  void wait_change(std::uint64_t seen_changes, SteadyClock::time_point deadline);
  std::uint64_t changes() const noexcept { return changes_.load(); }

  /// The current session's password (tests use it to expire the session from outside).
  std::string session_password() const;

  /// The current generation's connection; null after close(), and for a moment after a
  /// generation is Lost, until the monitor has opened the next one (longer if opening it fails).
  std::shared_ptr<ClientConnection> connection() const;

  /// Held lock nodes double as heartbeat targets: each heartbeat reads one registered path (round
  /// robin) instead of "/", and calls its `on_missing` (on a C client thread) if the node is gone.
  using ProbeId = std::uint64_t;
  ProbeId add_probe(std::string path, std::function<void()> on_missing);
  void remove_probe(ProbeId id);

  /// Observers (every Mutex, Semaphore, lease and leader watch of the session) are told of each
  /// state change. Adding and removing one is O(1): a process holding 100,000 locks on one session
  /// destroys them in linear time. An observer that died without being removed is dropped at the
  /// next notification; the order in which observers are told is unspecified.
  void add_observer(const std::shared_ptr<SessionObserver>& observer);
  void remove_observer(const SessionObserver* observer);

  Session::ListenerId add_listener(Session::Listener listener);
  void remove_listener(Session::ListenerId id);
  /// Runs `task` on the events thread (user callbacks).
  void post_event(std::function<void()> task);
  /// As post_event(), but a task that must run exactly once (a completion handler) is run on a
  /// thread of its own once the events thread is stopping (after close()).
  void post_event_or_detach(std::function<void()> task);
  /// Waits until every event posted so far has been delivered (or `timeout` passes).
  void flush_events(std::chrono::milliseconds timeout);
  /// True on the events thread.
  bool on_events_thread() const noexcept;

  /// Which scheduled task (for cancel_scheduled()); a default one names none.
  struct ScheduledId {
    SteadyClock::time_point due{};
    std::uint64_t number = 0;
  };
  /// Runs `task` on the monitor thread after `delay` (retries with a backoff). Dropped on close.
  /// Returns: its id, for cancel_scheduled().
  ScheduledId schedule(std::chrono::milliseconds delay, std::function<void()> task);
  /// Effects: drops the task if it has not started (a no-op otherwise). Takes only a leaf lock.
  void cancel_scheduled(const ScheduledId& id) noexcept;
  /// Tasks scheduled and not run yet (tests).
  std::size_t scheduled_tasks() const;

  /// Sends a request through `op` and waits for its answer until `timeout` has passed.
  /// Returns operation_timeout on timeout, closed after close().
  OpResult call(const std::function<void(ClientConnection&, Completion)>& op,
                std::chrono::milliseconds timeout);
  /// The same on `connection` (one generation's, which a recipe may pin), whatever the current
  /// one is. Returns operation_timeout on timeout.
  static OpResult call_on(ClientConnection& connection,
                          const std::function<void(ClientConnection&, Completion)>& op,
                          std::chrono::milliseconds timeout);

  const SessionOptions& options() const noexcept { return options_; }
  /// The figures of this session and its recipes (they record into it).
  SessionMetrics& metrics() const noexcept { return *metrics_; }
  /// Where a recipe counts its acquisitions on `path`; null when SessionOptions::metrics is off.
  LockMeter* lock_meter(Recipe recipe, const std::string& path) const {
    return options_.metrics ? &metrics_->meter(recipe, path) : nullptr;
  }
  /// The ACL of the nodes zklock creates (lock nodes and the parents it creates).
  const Acl& node_acl() const noexcept { return node_acl_; }

  // ConnectionListener
  void on_answered(const Answer& answer) override;
  void on_connection_event(unsigned generation, ConnectionEvent event) override;
  void defer(std::function<void()> task) override;

 private:
  struct Actions;  // what one pass of the monitor decided to send (session_core.cpp)
  // The connection of an ended generation, waiting for the reaper. Closing a connection that
  // still works (CloseSession) deletes the session's nodes at once and hands its locks on, while
  // the server itself would have kept them until at least confirmed + T - and the holders may
  // not have heard yet. So one that works is closed no earlier than
  //   max(confirmed + T, the Lost callbacks delivered + m)
  // (its C client keeps the session alive meanwhile), and no later than confirmed + 2T whatever
  // the events thread is doing. One that is down, or whose session the server ended or that never
  // confirmed anything, is closed at once.
  struct EndedConnection {
    std::shared_ptr<ClientConnection> connection;
    BootClock::time_point not_before;  // confirmed + T
    BootClock::time_point latest;      // confirmed + 2T
    BootClock::duration margin{0};
    // BootClock ns at which the events thread had run everything posted up to the end (the Lost
    // callbacks): 0 until then. Shared with the marker task, which may outlive this SessionCore.
    std::shared_ptr<std::atomic<std::int64_t>> told_ns;
  };

  void monitor_loop();
  void reaper_loop();
  // The reconnector thread (session_monitor.cpp): the monitor's passes that force a reconnect.
  void reconnector_loop();
  void run_connection_actions(const Actions& actions);
  void post_to_reconnector(Actions actions);
  bool reconnecting() const;
  void wake_monitor();
  // The longest hold-up of a monitor pass that goes unsaid (session_monitor.cpp).
  SteadyClock::duration hold_up_limit() const;
  // With mutex_ held: feeds the rule, applies its decision; returns what to send and when to wake.
  Actions evaluate_locked(BootClock::time_point now);
  void set_state_locked(SessionState next);
  void log_transition_locked(SessionState previous, SessionState next);
  // Opens `generation`: its connection is made with mutex_ released - the C client looks the
  // addresses up as it starts, and getaddrinfo(AI_ADDRCONFIG) waits for the kernel's network
  // configuration lock, which has been held for seconds (tens under load) - and then installed.
  // Connection events for it that come meanwhile are kept, and handled in order by
  // drain_opening_events() (the caller runs it once mutex_ is released), before any later one.
  // Throws what making the connection throws (mutex_ held again, nothing changed).
  void open_generation(std::unique_lock<std::mutex>& lock, unsigned generation);
  void install_generation_locked(unsigned generation, std::shared_ptr<ClientConnection> connection,
                                 BootClock::time_point started);
  void drain_opening_events();
  void handle_connection_event(unsigned generation, ConnectionEvent event);
  /// Ends the current generation; returns what tells the reaper that its Lost callbacks ran.
  std::shared_ptr<std::atomic<std::int64_t>> end_generation_locked(
      std::unique_lock<std::mutex>& lock);
  void refit_settings_locked(std::chrono::milliseconds negotiated);
  // Sets the confirmation route from topology_ and the tickTime (known, or bounded by T/2).
  void apply_route_locked();
  void confirm_locked(std::optional<BootClock::time_point> confirmed);
  void send_heartbeat(const std::shared_ptr<ClientConnection>& connection, unsigned generation,
                      std::uint64_t seq, bool with_sync, const std::string& probe_path,
                      ProbeId probe);
  // A heartbeat's answer (`sync`: its sync's, else its read's) for the heartbeat `seq`.
  void heartbeat_done_locked(std::uint64_t seq, const OpResult& r, bool sync);
  void learn_route(const std::shared_ptr<ClientConnection>& connection, unsigned generation);
  // Host names (host_resolver.h): resolved on start() (throws when none resolves), then again on
  // the reaper thread every kResolveInterval, or sooner when the monitor asks (reconnecting).
  void resolve_on_start();
  void refresh_addresses();
  void request_resolve();
  // Asks the ensemble, with a session of its own, what timeout it grants (the reaper does it
  // once, unless SessionOptions::server_tick_time is given): bounds tickTime tighter than T/2.
  void probe_tick();
  void run_deferred_and_scheduled();
  void notify_observers();
  // The figures' gauges: nodes, watches, the confirmation lag (any thread, no lock held).
  void read_gauges(MetricsSnapshot& snapshot);

  const SessionOptions options_;
  const std::shared_ptr<testing::FaultHook> fault_hook_;
  // Made first and destroyed last: every thread and recipe of the session records into it.
  const std::unique_ptr<SessionMetrics> metrics_;
  const std::string hosts_;     // the connect string's hosts (no chroot)
  const std::string chroot_;    // "" or "/app"
  const bool needs_resolving_;  // some host is a name
  const Acl node_acl_;
  // The C client's TLS settings (client/tls.h); none: plain TCP. Checked when made.
  const std::optional<std::string> tls_settings_;
  LogSlot log_slot_;
  std::atomic<std::uint64_t> forced_drops_{0};  // connections we dropped (reconnects, the probe)

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // waiters on state changes (with mutex_)
  std::shared_ptr<ClientConnection> connection_;
  bool stopping_ = false;
  LivenessSettings settings_;
  LivenessRule rule_;
  LeaderConfirmation confirmation_;
  // Learned from /zookeeper/config, once per SessionCore; until then, answers count as an
  // ensemble's (the safe side).
  ServerTopology topology_ = ServerTopology::kUnknown;
  // The timeout the probe session was granted (reaper thread, once): bounds tickTime.
  std::optional<std::chrono::milliseconds> probe_granted_;
  bool route_query_in_flight_ = false;
  bool ever_connected_ = false;       // in this generation
  bool generation_answered_ = false;  // an answer of this generation advanced the confirmation
  // Between generations that had no answer: the pause before the next, and when it may open.
  BootClock::duration generation_backoff_{0};
  BootClock::time_point next_generation_at_{};
  bool server_ended_session_ = false;
  LinkPhase phase_ = LinkPhase::kConnecting;
  BootClock::time_point phase_since_{};
  std::optional<BootClock::time_point> heartbeat_pending_;  // send time of the one in flight
  std::uint64_t heartbeat_seq_ = 0;  // numbers heartbeats: a late completion is not the current
  bool heartbeat_read_answered_ = false;               // the pending heartbeat's read came back
  std::optional<BootClock::time_point> late_read_at_;  // LivenessInputs::late_read_at
  std::optional<BootClock::time_point> last_heartbeat_;
  bool heartbeat_requested_ = false;
  std::optional<BootClock::time_point> last_reconnect_;
  BootClock::time_point generation_started_{};
  // The generation whose connection is being made or whose early events are being handled
  // (open_generation; 0: none), and those events, in the order they came.
  unsigned opening_generation_ = 0;
  std::vector<ConnectionEvent> opening_events_;
  bool warned_fitted_down_ = false;
  SteadyClock::time_point suspended_at_{};
  bool credentials_pending_ = false;  // this generation's credentials not answered yet
  Errc credentials_refused_ = Errc::ok;

  std::atomic<SessionState> state_{SessionState::kConnecting};
  std::atomic<unsigned> generation_{0};
  std::atomic<unsigned> expired_generation_{0};  // the last generation the server expired
  std::atomic<std::int64_t> session_id_{0};
  std::atomic<bool> connected_{false};
  std::atomic<bool> closed_{false};
  std::atomic<std::int64_t> timeout_ms_;
  std::atomic<std::int64_t> lost_deadline_ns_;  // BootClock ns; max while nothing is confirmed
  std::atomic<std::uint64_t> changes_{0};

  struct Probe {
    std::string path;
    std::function<void()> on_missing;
  };
  std::map<ProbeId, Probe> probes_;  // guarded by mutex_
  ProbeId next_probe_id_ = 1;
  ProbeId last_probe_ = 0;

  // Waking the monitor: a leaf lock of its own, so anyone may wake it whatever it holds.
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool woken_ = false;

  // Deferred completions and scheduled tasks, run by the monitor with no lock held.
  mutable std::mutex defer_mutex_;
  std::deque<std::function<void()>> deferred_;
  std::map<std::pair<SteadyClock::time_point, std::uint64_t>, std::function<void()>> scheduled_;
  std::uint64_t next_scheduled_ = 1;
  bool defer_closed_ = false;

  std::mutex observers_mutex_;
  // Keyed by address: removal by the observer itself (shutdown) needs no scan. An entry whose
  // observer died unremoved is replaced if a new observer gets its address.
  std::unordered_map<const SessionObserver*, std::weak_ptr<SessionObserver>> observers_;

  EventDispatcher events_;  // the events thread

  // reaper thread
  std::mutex reaper_mutex_;
  std::condition_variable reaper_wake_;
  std::deque<EndedConnection> to_close_;
  bool reaper_stopping_ = false;
  BootClock::time_point last_resolve_{};
  bool probe_done_ = false;
  bool probe_abandoned_ = false;  // finish_probe() gave up waiting: the probe stops at once
  bool resolve_requested_ = false;

  // The hosts' numeric addresses, as last resolved (a leaf lock).
  mutable std::mutex addresses_mutex_;
  std::string addresses_;

  // reconnector thread: runs one job at a time; the monitor drops its connection actions while
  // one runs (reconnect_busy_). A leaf lock.
  mutable std::mutex reconnect_mutex_;
  std::condition_variable reconnect_wake_;
  std::function<void()> reconnect_job_;
  bool reconnect_busy_ = false;
  bool reconnector_stopping_ = false;

  std::thread monitor_;
  std::thread reconnector_;
  std::thread reaper_;
  std::thread probe_thread_;
};

/// How zklock's recipes reach a Session's core (a friend of Session; not for applications).
struct SessionAccess {
  static const std::shared_ptr<SessionCore>& core(const Session& session) noexcept {
    return session.core_;
  }
};

}  // namespace zklock::detail
