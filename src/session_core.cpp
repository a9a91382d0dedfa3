#include "session_core.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace zklock::detail {
namespace {

using std::chrono::milliseconds;

std::int64_t to_ns(BootClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
BootClock::time_point from_ns(std::int64_t ns) {
  return BootClock::time_point(std::chrono::nanoseconds(ns));
}
constexpr std::int64_t kNoDeadline = INT64_MAX;

LinkPhase to_link_phase(ConnectionPhase p) {
  switch (p) {
    case ConnectionPhase::kConnected: return LinkPhase::kConnected;
    case ConnectionPhase::kAssociating: return LinkPhase::kAssociating;
    case ConnectionPhase::kConnecting: return LinkPhase::kConnecting;
    case ConnectionPhase::kEnded: return LinkPhase::kEnded;
  }
  return LinkPhase::kConnecting;
}

// The config node lists the servers of an ensemble ("server.N=..."); a standalone server's is empty.
bool describes_ensemble(const std::string& config) { return config.find("server.") != std::string::npos; }

}  // namespace

// What one pass of the monitor decided to do once mutex_ is released.
struct SessionCore::Actions {
  std::shared_ptr<ClientConnection> connection;
  unsigned generation = 0;
  bool heartbeat = false;
  bool heartbeat_with_sync = false;
  std::string probe_path = "/";
  ProbeId probe = 0;
  bool reconnect = false;
  bool reconnect_connected = false;  // also drop a connection that is up (it stopped answering)
  bool credit_reconnect = false;     // a connection opened after the drop may be credited
  bool learn_route = false;
  BootClock::time_point wake_at = BootClock::time_point::max();
};

SessionCore::SessionCore(SessionOptions options, std::shared_ptr<testing::FaultHook> fault_hook)
    : options_(std::move(options)),
      fault_hook_(std::move(fault_hook)),
      chrooted_(options_.connect.find('/') != std::string::npos),
      node_acl_(options_.node_acl ? *options_.node_acl
                                  : options_.credentials ? creator_all_world_read() : Acl()),
      log_slot_(options_.log_sink, options_.log_level),
      timeout_ms_(options_.session_timeout.count()),
      lost_deadline_ns_(kNoDeadline) {
  settings_ = LivenessSettings::fitted(options_, options_.session_timeout);
}

SessionCore::~SessionCore() { close(); }

std::chrono::milliseconds SessionCore::negotiated_timeout() const noexcept {
  return milliseconds(timeout_ms_.load());
}

BootClock::time_point SessionCore::lost_deadline() const noexcept {
  const std::int64_t ns = lost_deadline_ns_.load();
  return ns == kNoDeadline ? BootClock::time_point::max() : from_ns(ns);
}

LivenessSettings SessionCore::settings() const {
  std::lock_guard lock(mutex_);
  return settings_;
}

SessionState SessionCore::state() const noexcept {
  const SessionState s = state_.load();
  if ((s == SessionState::kConnected || s == SessionState::kSuspended) &&
      BootClock::now() >= lost_deadline()) {
    return SessionState::kLost;  // the monitor may not have run yet; the clock has spoken
  }
  return s;
}

SessionState SessionCore::state_of(unsigned generation) const noexcept {
  if (closed_.load()) return SessionState::kClosed;
  if (generation != generation_.load()) return SessionState::kLost;
  return state();
}

std::shared_ptr<ClientConnection> SessionCore::connection() const {
  std::lock_guard lock(mutex_);
  return connection_;
}

std::string SessionCore::session_password() const {
  auto c = connection();
  return c ? c->session_password() : std::string();
}

void SessionCore::start() {
  {
    std::lock_guard lock(mutex_);
    open_generation_locked(1);
  }
  monitor_ = std::thread([this] { monitor_loop(); });
  events_thread_ = std::thread([this] { events_loop(); });
  reaper_ = std::thread([this] { reaper_loop(); });
}

void SessionCore::open_generation_locked(unsigned generation) {
  generation_.store(generation);
  session_id_.store(0);
  connected_.store(false);
  server_ended_session_ = false;
  ever_connected_ = false;
  heartbeat_pending_.reset();
  last_heartbeat_.reset();
  heartbeat_requested_ = false;
  last_reconnect_.reset();
  reconnect_credit_.reset();
  confirmation_.reset();
  confirm_locked(std::nullopt);
  route_query_in_flight_ = false;
  phase_ = LinkPhase::kConnecting;
  phase_since_ = BootClock::now();
  timeout_ms_.store(options_.session_timeout.count());
  settings_ = LivenessSettings::fitted(options_, options_.session_timeout);
  rule_ = LivenessRule();
  // The server creates the session after our first connect request, which leaves after this: the
  // session's first sign of life at the leader is no earlier than now.
  generation_started_ = BootClock::now();
  connection_ = std::make_shared<ClientConnection>(options_.connect, options_.session_timeout,
                                                   generation, *this, log_slot_.callback(),
                                                   fault_hook_);
  credentials_pending_ = options_.credentials.has_value();
  credentials_refused_ = Errc::ok;
  if (options_.credentials) {
    // A refusal on the spot completes on the monitor thread (defer), never here.
    connection_->add_digest_auth(
        options_.credentials->user + ":" + options_.credentials->password,
        [this, generation](OpResult&& r) {
          std::lock_guard lock(mutex_);
          if (generation != generation_.load()) return;
          // The C client completes it again on each reconnect only if it was re-sent: once is
          // enough to know whether the server takes our credentials.
          credentials_pending_ = false;
          if (r.rc != Errc::ok && r.rc != Errc::connection_loss && r.rc != Errc::closing) {
            credentials_refused_ = r.rc;
            log_slot_.log(LogLevel::kError, std::string("the server refused the credentials of user \"") +
                                                 options_.credentials->user + "\": " +
                                                 make_error_code(r.rc).message());
          }
          ++changes_;
          changed_.notify_all();
        });
  }
  ++changes_;
  changed_.notify_all();
}

namespace {

std::string hex_id(std::int64_t id) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(id));
  return text;
}

}  // namespace

// One line in zklock's own words per transition that matters (log.h says what shows at which level).
void SessionCore::log_transition_locked(SessionState previous, SessionState next) {
  const std::string session = "session " + hex_id(session_id_.load());
  const auto now = SteadyClock::now();
  switch (next) {
    case SessionState::kSuspended:
      suspended_at_ = now;
      log_slot_.log(LogLevel::kWarn, session + " suspended: ZooKeeper does not answer; reconnecting "
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
                    session + (server_ended_session_ ? " expired" : " lost: no sign of life the leader "
                                                                    "counted for the session timeout "
                                                                    "less the margin") +
                        "; its locks are gone; opening a new session");
      break;
    default: break;
  }
}

void SessionCore::set_state_locked(SessionState next) {
  const SessionState previous = state_.load();
  if (previous == next) return;
  log_transition_locked(previous, next);
  state_.store(next);
  // Posted under mutex_, so listeners see transitions in the order they happened, and anything
  // posted after this (flush_events) runs after it.
  publish({next, previous, generation_.load(), session_id_.load()});
  ++changes_;
  changed_.notify_all();
}

void SessionCore::confirm_locked(std::optional<BootClock::time_point> confirmed) {
  if (!confirmed) {
    lost_deadline_ns_.store(kNoDeadline);
    return;
  }
  lost_deadline_ns_.store(to_ns(LivenessRule::lost_deadline(settings_, *confirmed)));
}

void SessionCore::refit_settings_locked(milliseconds negotiated) {
  bool fitted_down = false;
  settings_ = LivenessSettings::fitted(options_, negotiated, &fitted_down);
  if (fitted_down && !warned_fitted_down_) {
    warned_fitted_down_ = true;
    log_slot_.log(LogLevel::kWarn,
                  "the server granted a session timeout of " + std::to_string(negotiated.count()) +
                      " ms; heartbeat_interval, lost_margin, suspend_after or reconnect_interval did "
                      "not fit it and were replaced by their defaults for that timeout");
  }
  if (route_known_ && !confirmation_.direct()) {
    const auto tick = options_.server_tick_time.count() > 0 ? options_.server_tick_time : negotiated / 2;
    confirmation_.set_route(false, std::chrono::duration_cast<BootClock::duration>(tick / 2));
  }
  confirm_locked(confirmation_.confirmed());
}

void SessionCore::on_answered(const Answer& answer) {
  std::lock_guard lock(mutex_);
  // The generation is checked under the same lock as the update: an answer of an ended
  // generation can never count for the next one.
  if (answer.generation != generation_.load() || stopping_) return;
  if (!route_known_) {
    // Until we know whether the server is standalone, count answers as an ensemble would.
    const auto tick = options_.server_tick_time.count() > 0 ? options_.server_tick_time
                                                             : negotiated_timeout() / 2;
    confirmation_.set_route(false, std::chrono::duration_cast<BootClock::duration>(tick / 2));
  }
  if (reconnect_credit_ && answer.epoch > credit_epoch_) {
    // A connection opened after our drop has answered: its connect request was counted.
    confirmation_.on_counted(*reconnect_credit_);
    reconnect_credit_.reset();
    confirm_locked(confirmation_.confirmed());
    wake_monitor();
  }
  if (auto advanced = confirmation_.on_answered(answer.epoch, answer.sent, answer.via_leader)) {
    confirm_locked(advanced);
    if (state_.load() != SessionState::kConnected) wake_monitor();
  }
}

void SessionCore::on_connection_event(unsigned generation, ConnectionEvent event) {
  std::shared_ptr<ClientConnection> connection;
  {
    std::lock_guard lock(mutex_);
    if (generation != generation_.load() || stopping_) return;
    connection = connection_;
  }
  // Read what the connection knows outside our lock (its own lock is taken).
  const bool up = event == ConnectionEvent::kConnected;
  const std::int64_t id = up && connection ? connection->session_id() : 0;
  const auto timeout = up && connection ? connection->negotiated_timeout() : milliseconds(0);
  std::lock_guard lock(mutex_);
  if (generation != generation_.load() || stopping_) return;
  const auto now = BootClock::now();
  switch (event) {
    case ConnectionEvent::kConnected: {
      connected_.store(true);
      phase_ = LinkPhase::kConnected;
      phase_since_ = now;
      if (id != 0) session_id_.store(id);
      if (timeout.count() > 0) {
        timeout_ms_.store(timeout.count());
        refit_settings_locked(timeout);
      }
      // The server (the leader, or a follower revalidating with it) touched the session when it
      // took our connect request, which left after the generation began - or after our forced
      // reconnect: a sign of life we know the send time of.
      // (After our own drop, see on_answered: counted once the new connection has answered.)
      if (!ever_connected_ && confirmation_.on_counted(generation_started_)) {
        confirm_locked(confirmation_.confirmed());
      }
      ever_connected_ = true;
      heartbeat_requested_ = true;  // prove the session lives: answered requests, not events
      break;
    }
    case ConnectionEvent::kDisconnected:
      connected_.store(false);
      phase_ = LinkPhase::kConnecting;
      phase_since_ = now;
      break;
    case ConnectionEvent::kExpired:
    case ConnectionEvent::kAuthFailed:
      connected_.store(false);
      phase_ = LinkPhase::kEnded;
      phase_since_ = now;
      server_ended_session_ = true;
      break;
  }
  ++changes_;
  changed_.notify_all();
  wake_monitor();
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

void SessionCore::schedule(milliseconds delay, std::function<void()> task) {
  std::lock_guard lock(defer_mutex_);
  if (defer_closed_) return;
  scheduled_.emplace(SteadyClock::now() + delay, std::move(task));
  wake_monitor();
}

SessionCore::ProbeId SessionCore::add_probe(std::string path, std::function<void()> on_missing) {
  std::lock_guard lock(mutex_);
  const ProbeId id = next_probe_id_++;
  probes_.emplace(id, Probe{std::move(path), std::move(on_missing)});
  return id;
}

void SessionCore::remove_probe(ProbeId id) {
  std::lock_guard lock(mutex_);
  probes_.erase(id);
}

void SessionCore::send_heartbeat(const std::shared_ptr<ClientConnection>& connection,
                                 unsigned generation, bool with_sync,
                                 const std::string& probe_path, ProbeId probe) {
  // On an ensemble the answer that counts is the sync's: the server forwards it to the leader.
  // The read behind it (answered after the sync, on the server's up-to-date view) is the probe of
  // a held lock node, or "/" (a chroot's root may be missing, which is an answer all the same).
  if (with_sync) connection->sync("/", [](OpResult&&) {});
  connection->exists(probe_path, [this, generation, probe](OpResult&& r) {
    std::function<void()> on_missing;
    {
      std::lock_guard lock(mutex_);
      if (generation != generation_.load()) return;
      heartbeat_pending_.reset();
      if (r.rc == Errc::session_expired) server_ended_session_ = true;
      if (r.rc == Errc::no_node && probe != 0) {
        if (auto it = probes_.find(probe); it != probes_.end()) on_missing = it->second.on_missing;
      }
    }
    wake_monitor();
    if (on_missing) on_missing();
  });
}

void SessionCore::learn_route(const std::shared_ptr<ClientConnection>& connection,
                              unsigned generation) {
  connection->get_data("/zookeeper/config", {}, [this, generation](OpResult&& r) {
    std::lock_guard lock(mutex_);
    if (generation != generation_.load()) return;
    route_query_in_flight_ = false;
    if (r.rc == Errc::connection_loss || r.rc == Errc::operation_timeout) return;  // ask again
    route_known_ = true;
    const bool standalone = r.rc == Errc::ok && !describes_ensemble(r.value);
    const auto tick = options_.server_tick_time.count() > 0 ? options_.server_tick_time
                                                             : negotiated_timeout() / 2;
    confirmation_.set_route(standalone, standalone ? BootClock::duration(0)
                                                   : std::chrono::duration_cast<BootClock::duration>(tick / 2));
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
  in.last_heartbeat = last_heartbeat_;
  in.heartbeat_requested = heartbeat_requested_;
  in.last_reconnect = last_reconnect_;
  in.server_ended_session = server_ended_session_;
  const LivenessDecision d = rule_.evaluate(settings_, in, state_.load());
  set_state_locked(d.state);
  a.wake_at = d.wake_at;
  if (d.state == SessionState::kLost || !connection_) return a;
  if (d.send_heartbeat) {
    heartbeat_pending_ = now;
    last_heartbeat_ = now;
    heartbeat_requested_ = false;
    a.heartbeat = true;
    a.heartbeat_with_sync = !(route_known_ && confirmation_.direct());
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
    // A handshake that was under way might complete instead of the new connection, with a connect
    // request sent before the drop: no credit after those.
    a.credit_reconnect = phase_ != LinkPhase::kAssociating;
  }
  if (phase_ == LinkPhase::kConnected && !route_known_ && !route_query_in_flight_ && !chrooted_) {
    route_query_in_flight_ = true;
    a.learn_route = true;
  }
  if (chrooted_ && !route_known_) {
    // /zookeeper/config lies outside the chroot: count answers as an ensemble's, conservatively.
    route_known_ = true;
  }
  return a;
}

void SessionCore::end_generation_locked(std::unique_lock<std::mutex>& lock) {
  // Whatever the ended generation owned is gone. Its connection is closed by the reaper.
  std::shared_ptr<ClientConnection> old = std::move(connection_);
  lock.unlock();
  if (old) {
    old->fail_pending(Errc::session_lost);
    std::lock_guard reaper_lock(reaper_mutex_);
    to_close_.push_back(std::move(old));
    reaper_wake_.notify_all();
  }
  lock.lock();
}

void SessionCore::run_deferred_and_scheduled() {
  std::deque<std::function<void()>> tasks;
  {
    std::lock_guard lock(defer_mutex_);
    tasks.swap(deferred_);
    const auto now = SteadyClock::now();
    while (!scheduled_.empty() && scheduled_.begin()->first <= now) {
      tasks.push_back(std::move(scheduled_.begin()->second));
      scheduled_.erase(scheduled_.begin());
    }
  }
  for (auto& task : tasks) task();
}

void SessionCore::monitor_loop() {
  std::uint64_t notified_changes = changes_.load();
  while (true) {
    run_deferred_and_scheduled();
    std::unique_lock lock(mutex_);
    if (stopping_) break;
    const auto now = BootClock::now();
    Actions actions = evaluate_locked(now);
    if (state_.load() == SessionState::kLost) {
      // End this generation, then open the next one at once.
      const unsigned generation = generation_.load();
      end_generation_locked(lock);
      if (stopping_) break;
      try {
        open_generation_locked(generation + 1);
        set_state_locked(SessionState::kConnecting);
      } catch (const std::exception&) {
        // The connect string was accepted before; a refusal now is transient (resolution).
        lock.unlock();
        std::unique_lock wake_lock(wake_mutex_);
        wake_.wait_for(wake_lock, std::chrono::seconds(1), [&] { return woken_; });
        woken_ = false;
        continue;
      }
      actions = evaluate_locked(BootClock::now());
    }
    const std::uint64_t changes = changes_.load();
    lock.unlock();

    if (actions.connection) {
      if (actions.reconnect) {
        const auto dropped_at = BootClock::now();
        const std::uint64_t epoch = actions.connection->epoch();
        if (actions.connection->force_reconnect(actions.reconnect_connected)) {
          log_slot_.log(LogLevel::kDebug, "forced a new connection (the last one was silent)");
          std::lock_guard relock(mutex_);
          if (actions.generation == generation_.load()) {
            // Every connection from now on was opened after dropped_at: its connect request, which
            // the leader counts as a sign of life, left after it.
            if (actions.credit_reconnect) {
              reconnect_credit_ = dropped_at;
              credit_epoch_ = epoch;
            }
            phase_ = LinkPhase::kConnecting;
            phase_since_ = dropped_at;
            connected_.store(false);
            heartbeat_pending_.reset();  // it failed with the connection
          }
        }
      }
      if (actions.heartbeat) {
        send_heartbeat(actions.connection, actions.generation, actions.heartbeat_with_sync,
                       actions.probe_path, actions.probe);
      }
      if (actions.learn_route) learn_route(actions.connection, actions.generation);
    }
    if (changes != notified_changes) {
      notified_changes = changes;
      notify_observers();
    }

    // Sleep until the rule's next moment, a scheduled task, or a wake-up (at least once a second:
    // the steady clock we wait on stands still while the machine is suspended, BootClock not).
    auto wake_at = SteadyClock::now() + std::chrono::seconds(1);
    if (actions.wake_at != BootClock::time_point::max()) wake_at = std::min(wake_at, to_steady(actions.wake_at));
    {
      std::lock_guard defer_lock(defer_mutex_);
      if (!deferred_.empty()) continue;
      if (!scheduled_.empty()) wake_at = std::min(wake_at, scheduled_.begin()->first);
    }
    if (changes_.load() != notified_changes) continue;
    std::unique_lock wake_lock(wake_mutex_);
    wake_.wait_until(wake_lock, wake_at, [&] { return woken_; });
    woken_ = false;
  }
}

void SessionCore::publish(const SessionEvent& event) {
  post_event([this, event] {
    std::vector<std::pair<Session::ListenerId, std::shared_ptr<Session::Listener>>> snapshot;
    {
      std::lock_guard lock(listeners_mutex_);
      snapshot.assign(listeners_.begin(), listeners_.end());
    }
    for (auto& [id, listener] : snapshot) {
      std::lock_guard delivery(delivery_mutex_);
      {
        std::lock_guard lock(listeners_mutex_);
        if (listeners_.count(id) == 0) continue;
      }
      (*listener)(event);
    }
  });
}

void SessionCore::notify_observers() {
  std::vector<std::shared_ptr<SessionObserver>> alive;
  {
    std::lock_guard lock(observers_mutex_);
    auto it = observers_.begin();
    while (it != observers_.end()) {
      if (auto o = it->lock()) {
        alive.push_back(std::move(o));
        ++it;
      } else {
        it = observers_.erase(it);
      }
    }
  }
  for (auto& o : alive) o->on_session_change();
}

void SessionCore::add_observer(const std::shared_ptr<SessionObserver>& observer) {
  std::lock_guard lock(observers_mutex_);
  observers_.push_back(observer);
}

void SessionCore::remove_observer(const SessionObserver* observer) {
  std::lock_guard lock(observers_mutex_);
  observers_.erase(std::remove_if(observers_.begin(), observers_.end(),
                                  [&](const std::weak_ptr<SessionObserver>& w) {
                                    auto o = w.lock();
                                    return !o || o.get() == observer;
                                  }),
                   observers_.end());
}

Session::ListenerId SessionCore::add_listener(Session::Listener listener) {
  std::lock_guard lock(listeners_mutex_);
  const auto id = next_listener_id_++;
  listeners_.emplace(id, std::make_shared<Session::Listener>(std::move(listener)));
  return id;
}

void SessionCore::remove_listener(Session::ListenerId id) {
  {
    std::lock_guard lock(listeners_mutex_);
    listeners_.erase(id);
  }
  if (!on_events_thread()) {
    std::lock_guard delivery(delivery_mutex_);  // a running delivery finishes first
  }
}

bool SessionCore::on_events_thread() const noexcept {
  return std::this_thread::get_id() == events_thread_.get_id();
}

void SessionCore::post_event(std::function<void()> task) {
  std::lock_guard lock(events_mutex_);
  events_.push_back(std::move(task));
  events_wake_.notify_one();
}

void SessionCore::flush_events(milliseconds timeout) {
  struct Flag {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
  };
  auto flag = std::make_shared<Flag>();
  post_event([flag] {
    std::lock_guard lock(flag->mutex);
    flag->done = true;
    flag->cv.notify_all();
  });
  std::unique_lock lock(flag->mutex);
  flag->cv.wait_for(lock, timeout, [&] { return flag->done; });
}

void SessionCore::events_loop() {
  std::unique_lock lock(events_mutex_);
  while (true) {
    events_wake_.wait(lock, [&] { return events_stopping_ || !events_.empty(); });
    if (events_.empty()) break;  // stopping and drained
    auto task = std::move(events_.front());
    events_.pop_front();
    lock.unlock();
    try {
      task();
    } catch (...) {
      // A throwing user callback must not take the Session down.
    }
    lock.lock();
  }
}

void SessionCore::reaper_loop() {
  std::unique_lock lock(reaper_mutex_);
  while (true) {
    reaper_wake_.wait(lock, [&] { return reaper_stopping_ || !to_close_.empty(); });
    if (to_close_.empty()) break;
    auto connection = std::move(to_close_.front());
    to_close_.pop_front();
    lock.unlock();
    connection->close(Errc::session_lost);
    connection.reset();
    lock.lock();
  }
}

bool SessionCore::wait_connected(milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] {
    return closed_.load() || state_.load() == SessionState::kConnected;
  });
  if (closed_.load()) throw ClosedError(Errc::closed, "zklock::Session::wait_connected");
  return state_.load() == SessionState::kConnected;
}

Errc SessionCore::wait_ready(milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] {
    return closed_.load() || credentials_refused_ != Errc::ok ||
           (state_.load() == SessionState::kConnected && !credentials_pending_);
  });
  if (closed_.load()) return Errc::closed;
  if (credentials_refused_ != Errc::ok) return credentials_refused_;
  return state_.load() == SessionState::kConnected && !credentials_pending_ ? Errc::ok
                                                                           : Errc::connection_loss;
}

void SessionCore::wait_change(std::uint64_t seen_changes, SteadyClock::time_point deadline) {
  std::unique_lock lock(mutex_);
  changed_.wait_until(lock, deadline, [&] { return changes_.load() != seen_changes; });
}

OpResult SessionCore::call(const std::function<void(ClientConnection&, Completion)>& op,
                           milliseconds timeout) {
  auto connection = this->connection();
  if (closed_.load()) return OpResult{Errc::closed, {}, {}, {}, {}};
  // No connection while open: the monitor has ended a lost generation and not opened the next.
  if (!connection) return OpResult{Errc::session_lost, {}, {}, {}, {}};
  struct Waiter {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    OpResult result;
  };
  auto waiter = std::make_shared<Waiter>();
  op(*connection, [waiter](OpResult&& r) {
    std::lock_guard lock(waiter->mutex);
    waiter->result = std::move(r);
    waiter->done = true;
    waiter->cv.notify_all();
  });
  std::unique_lock lock(waiter->mutex);
  if (!waiter->cv.wait_for(lock, timeout, [&] { return waiter->done; })) {
    return OpResult{Errc::operation_timeout, {}, {}, {}, {}};
  }
  return std::move(waiter->result);
}

void SessionCore::close() noexcept {
  {
    std::lock_guard lock(mutex_);
    if (closed_.exchange(true)) return;
    stopping_ = true;
    set_state_locked(SessionState::kClosed);
  }
  wake_monitor();
  if (monitor_.joinable()) monitor_.join();
  std::shared_ptr<ClientConnection> connection;
  {
    std::lock_guard lock(mutex_);
    connection = std::move(connection_);
  }
  // Closing while connected deletes our ephemeral nodes (held locks) at once.
  if (connection) connection->close(Errc::closed);
  {
    std::lock_guard lock(reaper_mutex_);
    reaper_stopping_ = true;
    reaper_wake_.notify_all();
  }
  if (reaper_.joinable()) reaper_.join();
  std::deque<std::function<void()>> leftover;
  std::multimap<SteadyClock::time_point, std::function<void()>> dropped;  // destroyed unlocked
  {
    std::lock_guard lock(defer_mutex_);
    defer_closed_ = true;
    leftover.swap(deferred_);
    dropped.swap(scheduled_);
  }
  for (auto& task : leftover) task();
  notify_observers();
  {
    std::lock_guard lock(events_mutex_);
    events_stopping_ = true;
    events_wake_.notify_all();
  }
  if (events_thread_.joinable()) {
    if (on_events_thread()) {
      events_thread_.detach();
    } else {
      events_thread_.join();
    }
  }
}

}  // namespace zklock::detail
