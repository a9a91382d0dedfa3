// SessionCore, the monitor: its loop, the Lost rule's inputs and decisions, heartbeats, forced
// reconnects, learning whether the server is standalone, and the lines it logs in zklock's words.
// The rest of SessionCore: session_core.cpp (state, requests), session_generation.cpp (opening
// and ending generations, connection events).
#include <algorithm>
#include <utility>

#include "session/session_core.h"

namespace zklock::detail {
namespace {

using std::chrono::milliseconds;

// The first pause before a new generation after one that had no answer (doubling up to T).
constexpr milliseconds kFirstGenerationBackoff{100};

LinkPhase to_link_phase(ConnectionPhase p) {
  switch (p) {
    case ConnectionPhase::kConnected:
      return LinkPhase::kConnected;
    case ConnectionPhase::kAssociating:
      return LinkPhase::kAssociating;
    case ConnectionPhase::kConnecting:
      return LinkPhase::kConnecting;
    case ConnectionPhase::kEnded:
      return LinkPhase::kEnded;
  }
  return LinkPhase::kConnecting;
}

// The monitor keeps the session's state current only while it runs: a step that holds a pass up
// (a deferred or scheduled task, the session lock, a send, an observer) or a wake-up that comes
// late (the thread was not scheduled, the machine stalled) delays Suspended and Lost alike. A
// hold-up of half the time to Suspended or more is said, once, in one line (kWarn): which step,
// and for how long - the clue a late Lost needs.
class MonitorStopwatch {
 public:
  using SteadyClock = std::chrono::steady_clock;

  MonitorStopwatch(const LogSlot& log, const std::atomic<std::int64_t>& session_id)
      : log_(log), session_id_(session_id) {}

  // A pass begins; `limit`: the longest hold-up that goes unsaid.
  void begin(SteadyClock::duration limit) {
    limit_ = limit;
    mark_ = SteadyClock::now();
  }
  // The step since the last mark ended now.
  void step(const char* what) {
    const auto now = SteadyClock::now();
    report(what, now - mark_);
    mark_ = now;
  }
  // The pass sleeps until `wake_at`; woke() reports how late the wake-up came. (A moment already
  // past counts from now: the step that made it pass was reported on its own.)
  void sleeping_until(SteadyClock::time_point wake_at) {
    planned_wake_ = std::max(wake_at, SteadyClock::now());
  }
  void woke() {
    const auto now = SteadyClock::now();
    if (now > planned_wake_) report("waking up (the thread was not run)", now - planned_wake_);
  }

 private:
  void report(const char* what, SteadyClock::duration took) const {
    if (took < limit_) return;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
    log_.log(LogLevel::kWarn, "session " + session_id_hex(session_id_.load()) +
                                  ": its monitor was held up " + std::to_string(ms) + " ms " +
                                  what + "; Suspended and Lost could not be told meanwhile");
  }

  const LogSlot& log_;
  const std::atomic<std::int64_t>& session_id_;
  SteadyClock::duration limit_{};
  SteadyClock::time_point mark_{};
  SteadyClock::time_point planned_wake_ = SteadyClock::time_point::max();
};

}  // namespace

// What one pass of the monitor decided to do once mutex_ is released.
struct SessionCore::Actions {
  std::shared_ptr<ClientConnection> connection;
  unsigned generation = 0;
  bool heartbeat = false;
  bool heartbeat_with_sync = false;
  std::uint64_t heartbeat_seq = 0;
  std::string probe_path = "/";
  ProbeId probe = 0;
  bool reconnect = false;
  bool reconnect_connected = false;  // also drop a connection that is up (it stopped answering)
  bool learn_route = false;
  BootClock::time_point wake_at = BootClock::time_point::max();
};

// One line in zklock's own words per transition that matters (log.h says what shows at which
// level).
void SessionCore::log_transition_locked(SessionState previous, SessionState next) {
  const std::string session = "session " + session_id_hex(session_id_.load());
  const auto now = SteadyClock::now();
  switch (next) {
    case SessionState::kSuspended:
      suspended_at_ = now;
      log_slot_.log(LogLevel::kWarn, session +
                                         " suspended: ZooKeeper does not answer; reconnecting "
                                         "(the session and its locks may well survive)");
      break;
    case SessionState::kConnected: {
      if (previous == SessionState::kSuspended) {
        const auto ms = std::chrono::duration_cast<milliseconds>(now - suspended_at_).count();
        log_slot_.log(LogLevel::kWarn, session + " answers again after " + std::to_string(ms) +
                                           " ms; its locks are still held");
      } else if (generation_.load() > 1) {
        log_slot_.log(LogLevel::kWarn, "new " + session + " (generation " +
                                           std::to_string(generation_.load()) + ")");
      } else {
        log_slot_.log(LogLevel::kInfo, "connected: " + session + ", timeout " +
                                           std::to_string(negotiated_timeout().count()) + " ms");
      }
      break;
    }
    case SessionState::kLost:
      log_slot_.log(LogLevel::kWarn,
                    session +
                        (server_ended_session_ ? " expired"
                                               : " lost: no sign of life the leader "
                                                 "counted for the session timeout "
                                                 "less the margin") +
                        "; its locks are gone; opening a new session");
      break;
    default:
      break;
  }
}

void SessionCore::wake_monitor() {
  std::lock_guard lock(wake_mutex_);
  woken_ = true;
  wake_.notify_all();
}

void SessionCore::defer(std::function<void()> task) {
  {
    std::lock_guard lock(defer_mutex_);
    if (!defer_closed_) {
      deferred_.push_back(std::move(task));
      wake_monitor();
      return;
    }
  }
  // The monitor is gone (closing): run it on a thread of its own, never inline (the caller may
  // hold locks the task takes).
  std::thread(std::move(task)).detach();
}

SessionCore::ScheduledId SessionCore::schedule(milliseconds delay, std::function<void()> task) {
  std::lock_guard lock(defer_mutex_);
  if (defer_closed_) return {};
  const ScheduledId id{SteadyClock::now() + delay, next_scheduled_++};
  scheduled_.emplace(std::make_pair(id.due, id.number), std::move(task));
  wake_monitor();
  return id;
}

void SessionCore::cancel_scheduled(const ScheduledId& id) noexcept {
  if (id.number == 0) return;
  std::function<void()> dropped;  // destroyed outside the lock
  std::lock_guard lock(defer_mutex_);
  auto it = scheduled_.find(std::make_pair(id.due, id.number));
  if (it == scheduled_.end()) return;
  dropped = std::move(it->second);
  scheduled_.erase(it);
}

std::size_t SessionCore::scheduled_tasks() const {
  std::lock_guard lock(defer_mutex_);
  return scheduled_.size();
}

void SessionCore::send_heartbeat(const std::shared_ptr<ClientConnection>& connection,
                                 unsigned generation, std::uint64_t seq, bool with_sync,
                                 const std::string& probe_path, ProbeId probe) {
  // The read goes first: a follower answers it at once, so its answer shows the connection works
  // even while the leader is slow to answer the sync (a slow leader is no reason to drop it:
  // LivenessRule). It is the probe of a held lock node, or "/" (a chroot's root may be missing,
  // which is an answer all the same). On an ensemble the answer that counts is the sync's: the
  // server forwards it to the leader.
  connection->exists(probe_path, [this, generation, seq, with_sync, probe](OpResult&& r) {
    std::function<void()> on_missing;
    {
      std::lock_guard lock(mutex_);
      if (generation != generation_.load()) return;
      heartbeat_done_locked(seq, r, false);
      if (!with_sync) heartbeat_done_locked(seq, r, true);
      if (r.rc == Errc::no_node && probe != 0) {
        if (auto it = probes_.find(probe); it != probes_.end()) on_missing = it->second.on_missing;
      }
    }
    wake_monitor();
    if (on_missing) on_missing();
  });
  if (!with_sync) return;
  connection->sync("/", [this, generation, seq](OpResult&& r) {
    {
      std::lock_guard lock(mutex_);
      if (generation != generation_.load()) return;
      heartbeat_done_locked(seq, r, true);
    }
    wake_monitor();
  });
}

void SessionCore::heartbeat_done_locked(std::uint64_t seq, const OpResult& r, bool sync) {
  if (r.rc == Errc::session_expired) server_ended_session_ = true;
  if (seq != heartbeat_seq_) return;  // an older heartbeat's late answer: not the pending one
  if (sync) {
    heartbeat_pending_.reset();
  } else if (answered(r.rc)) {
    heartbeat_read_answered_ = true;
    const auto now = BootClock::now();
    if (heartbeat_pending_) metrics_->heartbeat_answered(now - *heartbeat_pending_);
    if (heartbeat_pending_ && now - *heartbeat_pending_ >= settings_.heartbeat_interval) {
      late_read_at_ = now;  // a silence just ended
    }
  }
}

void SessionCore::learn_route(const std::shared_ptr<ClientConnection>& connection,
                              unsigned generation) {
  connection->get_config([this, generation](OpResult&& r) {
    std::lock_guard lock(mutex_);
    if (generation != generation_.load()) return;
    route_query_in_flight_ = false;
    if (r.rc == Errc::connection_loss || r.rc == Errc::operation_timeout) return;  // ask again
    // A server without the node (before 3.5) or that refuses it is taken for an ensemble.
    topology_ = r.rc == Errc::ok ? topology_of_config(r.value) : ServerTopology::kEnsemble;
    apply_route_locked();
    log_slot_.log(
        LogLevel::kDebug,
        std::string("servers: ") + to_string(topology_) + ", confirmation lag " +
            std::to_string(std::chrono::duration_cast<milliseconds>(confirmation_.lag()).count()) +
            " ms");
  });
}

SessionCore::Actions SessionCore::evaluate_locked(BootClock::time_point now) {
  Actions a;
  a.connection = connection_;
  a.generation = generation_.load();
  if (connection_) {
    const LinkPhase observed = to_link_phase(connection_->phase());
    if (observed != phase_) {
      phase_ = observed;
      phase_since_ = now;
      connected_.store(observed == LinkPhase::kConnected);
    }
  }
  LivenessInputs in;
  in.now = now;
  in.confirmed = confirmation_.confirmed();
  in.phase = phase_;
  in.phase_since = phase_since_;
  in.heartbeat_pending = heartbeat_pending_;
  in.heartbeat_read_answered = heartbeat_read_answered_;
  in.late_read_at = late_read_at_;
  in.rescue_window = confirmation_.direct()
                         ? BootClock::duration(0)
                         : confirmation_.relay() + 2 * settings_.heartbeat_interval;
  in.last_heartbeat = last_heartbeat_;
  in.heartbeat_requested = heartbeat_requested_;
  in.last_reconnect = last_reconnect_;
  in.server_ended_session = server_ended_session_;
  in.tls = tls_settings_.has_value();
  const LivenessDecision d = rule_.evaluate(settings_, in, state_.load());
  set_state_locked(d.state);
  a.wake_at = d.wake_at;
  if (d.state == SessionState::kLost || !connection_) return a;
  if (d.send_heartbeat) {
    heartbeat_pending_ = now;
    heartbeat_read_answered_ = false;
    a.heartbeat_seq = ++heartbeat_seq_;
    last_heartbeat_ = now;
    heartbeat_requested_ = false;
    a.heartbeat = true;
    a.heartbeat_with_sync = !confirmation_.direct();
    if (!probes_.empty()) {
      auto it = probes_.upper_bound(last_probe_);
      if (it == probes_.end()) it = probes_.begin();
      a.probe = last_probe_ = it->first;
      a.probe_path = it->second.path;
    }
  }
  if (d.force_reconnect) {
    last_reconnect_ = now;
    a.reconnect = true;
    a.reconnect_connected = phase_ == LinkPhase::kConnected;
  }
  if (phase_ == LinkPhase::kConnected && topology_ == ServerTopology::kUnknown &&
      !route_query_in_flight_) {
    route_query_in_flight_ = true;
    a.learn_route = true;
  }
  return a;
}

void SessionCore::run_deferred_and_scheduled() {
  std::deque<std::function<void()>> tasks;
  {
    std::lock_guard lock(defer_mutex_);
    tasks.swap(deferred_);
    const auto now = SteadyClock::now();
    while (!scheduled_.empty() && scheduled_.begin()->first.first <= now) {
      tasks.push_back(std::move(scheduled_.begin()->second));
      scheduled_.erase(scheduled_.begin());
    }
  }
  for (auto& task : tasks) task();
}

// The connection actions of one monitor pass: a forced reconnect, then the heartbeat and the
// route query, in that order (they must go out on the connection opened after the drop). On the
// monitor thread, or on the reconnector thread when the pass forces a reconnect.
void SessionCore::run_connection_actions(const Actions& actions) {
  if (actions.reconnect) {
    if (const auto dropped = actions.connection->force_reconnect(actions.reconnect_connected)) {
      log_slot_.log(LogLevel::kDebug, "forced a new connection (the last one was silent)");
      metrics_->forced_reconnect(actions.generation, session_id_.load());
      forced_drops_.fetch_add(1);
      request_resolve();  // the servers may have moved: look their names up again (reaper)
      std::lock_guard relock(mutex_);
      if (actions.generation == generation_.load()) {
        // Every request from now on goes out on a connection opened after the drop, whose
        // connect request the leader counts as a sign of life: the first answer to one earns
        // it.
        confirmation_.expect_reconnect_credit(*dropped);
        phase_ = LinkPhase::kConnecting;
        phase_since_ = *dropped;
        connected_.store(false);
        heartbeat_pending_.reset();  // it failed with the connection
      }
    }
  }
  if (actions.heartbeat) {
    send_heartbeat(actions.connection, actions.generation, actions.heartbeat_seq,
                   actions.heartbeat_with_sync, actions.probe_path, actions.probe);
  }
  if (actions.learn_route) learn_route(actions.connection, actions.generation);
}

bool SessionCore::reconnecting() const {
  std::lock_guard lock(reconnect_mutex_);
  return reconnect_busy_;
}

void SessionCore::post_to_reconnector(Actions actions) {
  {
    std::lock_guard lock(reconnect_mutex_);
    if (!reconnect_busy_ && !reconnector_stopping_) {
      reconnect_busy_ = true;
      reconnect_job_ = [this, a = std::move(actions)] { run_connection_actions(a); };
      reconnect_wake_.notify_all();
      return;
    }
  }
  // Dropped: a reconnect is in progress (or we are closing). A heartbeat not sent stays pending
  // (the rule treats it as unanswered: the safe side); a route query must be asked again.
  if (actions.learn_route) {
    std::lock_guard lock(mutex_);
    if (actions.generation == generation_.load()) route_query_in_flight_ = false;
  }
}

void SessionCore::reconnector_loop() {
  std::unique_lock lock(reconnect_mutex_);
  while (true) {
    reconnect_wake_.wait(lock, [&] { return reconnector_stopping_ || reconnect_job_; });
    if (reconnector_stopping_) break;
    auto job = std::move(reconnect_job_);
    reconnect_job_ = nullptr;
    lock.unlock();
    job();
    job = nullptr;  // the connection it held goes here, unlocked
    lock.lock();
    reconnect_busy_ = false;
    lock.unlock();
    wake_monitor();  // the rule may want to act on what the reconnect changed
    lock.lock();
  }
}

void SessionCore::monitor_loop() {
  std::uint64_t notified_changes = changes_.load();
  std::shared_ptr<std::atomic<std::int64_t>> ended_told;  // a generation ended in this pass
  MonitorStopwatch stopwatch(log_slot_, session_id_);
  while (true) {
    stopwatch.begin(hold_up_limit());
    run_deferred_and_scheduled();
    stopwatch.step("running deferred and scheduled tasks");
    std::unique_lock lock(mutex_);
    stopwatch.step("waiting for the session's lock");
    if (stopping_) break;
    const auto now = BootClock::now();
    Actions actions = evaluate_locked(now);
    if (state_.load() == SessionState::kLost) {
      // End this generation, then open the next one - at once after a generation that had
      // answers, else after a backoff (a session that dies at once, e.g. refused credentials,
      // must not be re-created at network speed: each is a session create at the leader).
      if (connection_) {
        // Healthy: it lived at least T. A generation that died sooner (refused credentials, a
        // server that ends fresh sessions) is followed by a growing pause.
        const bool healthy = generation_answered_ &&
                             BootClock::now() - generation_started_ >= settings_.session_timeout;
        ended_told = end_generation_locked(lock);
        actions.connection.reset();
        const auto limit =
            std::chrono::duration_cast<BootClock::duration>(options_.session_timeout);
        generation_backoff_ =
            healthy ? BootClock::duration(0)
                    : std::min<BootClock::duration>(
                          limit, std::max<BootClock::duration>(kFirstGenerationBackoff,
                                                               2 * generation_backoff_));
        next_generation_at_ = BootClock::now() + generation_backoff_;
      }
      if (stopping_) break;
      if (BootClock::now() >= next_generation_at_) {
        try {
          stopwatch.step("deciding");
          open_generation(lock, generation_.load() + 1);  // mutex_ released meanwhile
          stopwatch.step("opening the next generation's connection");
          if (stopping_) break;
          set_state_locked(SessionState::kConnecting);
          actions = evaluate_locked(BootClock::now());
        } catch (const std::exception&) {
          // The connect string was accepted before; a refusal now is transient (resolution).
          next_generation_at_ = BootClock::now() + std::chrono::seconds(1);
        }
      }
      if (!connection_) actions.wake_at = std::min(actions.wake_at, next_generation_at_);
    }
    const std::uint64_t changes = changes_.load();
    lock.unlock();
    stopwatch.step("deciding");
    drain_opening_events();  // a generation opened in this pass: its first events, in order

    if (actions.connection) {
      // A forced reconnect can wait on the C client for seconds (handle_mutex_ in
      // client_connection.h): the reconnector thread does it, with the sends of the same pass
      // after it, so that the monitor itself never waits and tells Lost at its deadline. While one
      // is in progress the monitor sends nothing.
      if (actions.reconnect || reconnecting()) {
        post_to_reconnector(actions);
      } else {
        run_connection_actions(actions);
      }
      stopwatch.step("sending");
    }
    if (changes != notified_changes) {
      notified_changes = changes;
      notify_observers();
      stopwatch.step("telling the locks of a change");
    }
    if (ended_told) {
      // The observers have posted their Lost callbacks (and the listeners theirs, under mutex_):
      // once the events thread has run them, the reaper may start counting the margin.
      events_.post([told = std::move(ended_told)] {
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            BootClock::now().time_since_epoch())
                            .count();
        std::int64_t unset = 0;
        told->compare_exchange_strong(unset, ns);
      });
      ended_told.reset();
    }

    // Sleep until the rule's next moment, a scheduled task, or a wake-up (at least once a second:
    // the steady clock we wait on stands still while the machine is suspended, BootClock not).
    auto wake_at = SteadyClock::now() + std::chrono::seconds(1);
    if (actions.wake_at != BootClock::time_point::max())
      wake_at = std::min(wake_at, to_steady(actions.wake_at));
    {
      std::lock_guard defer_lock(defer_mutex_);
      if (!deferred_.empty()) continue;
      if (!scheduled_.empty()) wake_at = std::min(wake_at, scheduled_.begin()->first.first);
    }
    if (changes_.load() != notified_changes) continue;
    std::unique_lock wake_lock(wake_mutex_);
    stopwatch.sleeping_until(wake_at);
    if (!wake_.wait_until(wake_lock, wake_at, [&] { return woken_; })) stopwatch.woke();
    woken_ = false;
  }
}

// Half the time to Suspended: a monitor held up that long has let the session's state go stale.
SessionCore::SteadyClock::duration SessionCore::hold_up_limit() const {
  std::lock_guard lock(mutex_);
  return std::chrono::duration_cast<SteadyClock::duration>(settings_.suspend_after / 2);
}

}  // namespace zklock::detail
