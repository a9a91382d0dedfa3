// SessionCore: state, requests, probes, observers, the reaper and closing. The monitor thread
// (the Lost rule, heartbeats, forced reconnects) is in session_monitor.cpp, the generations
// (opening, connection events, ending) in session_generation.cpp.
#include "session/session_core.h"

#include <algorithm>
#include <utility>

#include "client/host_resolver.h"
#include "client/timeout_probe.h"
#include "client/tls.h"

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
// How often the reaper looks whether the Lost callbacks of an ended generation have run.
constexpr std::chrono::milliseconds kReaperPoll{20};
// Host names are looked up again this often, and when the monitor asks (it is reconnecting: the
// servers may have moved) no sooner than kMinResolveInterval after the last lookup.
constexpr std::chrono::seconds kResolveInterval{60};
constexpr std::chrono::seconds kMinResolveInterval{5};

}  // namespace

SessionCore::SessionCore(SessionOptions options, std::shared_ptr<testing::FaultHook> fault_hook)
    : options_(std::move(options)),
      fault_hook_(std::move(fault_hook)),
      metrics_(std::make_unique<SessionMetrics>(options_.metrics_paths, options_.event_hook,
                                                options_.event_hook_queue)),
      hosts_(options_.connect.substr(0, options_.connect.find('/'))),
      chroot_(options_.connect.find('/') == std::string::npos
                  ? std::string()
                  : options_.connect.substr(options_.connect.find('/'))),
      needs_resolving_(!all_numeric(hosts_)),
      // With TLS the session has an identity even without credentials: its certificate's
      // subject (x509), which "auth" names on a server that authenticates clients by certificate.
      node_acl_(options_.node_acl                      ? *options_.node_acl
                : options_.credentials || options_.tls ? creator_all_world_read()
                                                       : Acl()),
      tls_settings_(options_.tls ? std::optional<std::string>(checked_tls_settings(*options_.tls))
                                 : std::nullopt),
      log_slot_(options_.log_sink, options_.log_level),
      timeout_ms_(options_.session_timeout.count()),
      lost_deadline_ns_(kNoDeadline) {
  settings_ = LivenessSettings::fitted(options_, options_.session_timeout);
  apply_route_locked();
  metrics_->set_gauge_source([this](MetricsSnapshot& s) { read_gauges(s); });
}

SessionCore::~SessionCore() {
  metrics_->set_gauge_source(nullptr);  // before anything it reads goes
  close();
}

ServerTopology SessionCore::topology() const {
  std::lock_guard lock(mutex_);
  return topology_;
}

BootClock::duration SessionCore::confirmation_lag() const {
  std::lock_guard lock(mutex_);
  return confirmation_.direct() ? BootClock::duration(0) : confirmation_.lag();
}

void SessionCore::apply_route_locked() {
  // tickTime: as configured, else bounded by the timeouts the ensemble granted (tick_bound.h).
  const milliseconds tick =
      tick_bound(options_.server_tick_time, negotiated_timeout(), probe_granted_);
  confirmation_.set_route(topology_ == ServerTopology::kStandalone,
                          detail::confirmation_lag(topology_, tick),
                          detail::confirmation_relay(topology_, tick));
}

std::chrono::milliseconds SessionCore::negotiated_timeout() const noexcept {
  return milliseconds(timeout_ms_.load());
}

BootClock::time_point SessionCore::lost_deadline() const noexcept {
  const std::int64_t ns = lost_deadline_ns_.load();
  return ns == kNoDeadline ? BootClock::time_point::max() : from_ns(ns);
}

SessionCore::SteadyClock::time_point SessionCore::lost_wait_until(
    std::optional<SteadyClock::time_point> deadline) const {
  const auto now = SteadyClock::now();
  auto wake = std::min(to_steady(lost_deadline()), now + std::chrono::seconds(1));
  if (wake <= now) wake = now + milliseconds(1);
  return deadline ? std::min(wake, *deadline) : wake;
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

LockState SessionCore::lock_state_of(unsigned generation) const noexcept {
  switch (state_of(generation)) {
    case SessionState::kConnected:
      return LockState::kHeld;
    case SessionState::kSuspended:
      return LockState::kSuspended;
    default:
      return LockState::kLost;
  }
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
  resolve_on_start();
  {
    std::unique_lock lock(mutex_);
    open_generation(lock, 1);
  }
  drain_opening_events();
  monitor_ = std::thread([this] { monitor_loop(); });
  reconnector_ = std::thread([this] { reconnector_loop(); });
  events_.start();
  reaper_ = std::thread([this] { reaper_loop(); });
  // Beside the first connect; Session's constructor waits for both (finish_probe()).
  if (options_.server_tick_time.count() <= 0) {
    probe_thread_ = std::thread([this] {
      probe_tick();
      std::lock_guard lock(reaper_mutex_);
      probe_done_ = true;
      reaper_wake_.notify_all();
    });
  } else {
    std::lock_guard lock(reaper_mutex_);
    probe_done_ = true;
  }
}

void SessionCore::set_state_locked(SessionState next) {
  const SessionState previous = state_.load();
  if (previous == next) return;
  log_transition_locked(previous, next);
  state_.store(next);
  // Posted under mutex_, so listeners see transitions in the order they happened, and anything
  // posted after this (flush_events) runs after it.
  const SessionEvent event{next, previous, generation_.load(), session_id_.load()};
  events_.publish(event);
  const bool expired = next == SessionState::kLost && server_ended_session_;
  if (expired) expired_generation_.store(event.generation);
  metrics_->state_changed(event, expired ? LostCause::kExpired : LostCause::kSilent);
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
    log_slot_.log(
        LogLevel::kWarn,
        "the server granted a session timeout of " + std::to_string(negotiated.count()) +
            " ms; heartbeat_interval, lost_margin, suspend_after or reconnect_interval did "
            "not fit it and were replaced by their defaults for that timeout");
  }
  apply_route_locked();
  confirm_locked(confirmation_.confirmed());
}

void SessionCore::on_answered(const Answer& answer) {
  std::lock_guard lock(mutex_);
  // The generation is checked under the same lock as the update: an answer of an ended
  // generation can never count for the next one.
  if (answer.generation != generation_.load() || stopping_) return;
  if (auto advanced = confirmation_.on_answered(answer)) {
    generation_answered_ = true;
    confirm_locked(advanced);
    if (state_.load() != SessionState::kConnected) wake_monitor();
  }
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

void SessionCore::notify_observers() {
  std::vector<std::shared_ptr<SessionObserver>> alive;
  {
    std::lock_guard lock(observers_mutex_);
    alive.reserve(observers_.size());
    for (auto it = observers_.begin(); it != observers_.end();) {
      if (auto o = it->second.lock()) {
        alive.push_back(std::move(o));
        ++it;
      } else {
        it = observers_.erase(it);
      }
    }
  }
  for (auto& o : alive) o->on_session_change();
}

void SessionCore::read_gauges(MetricsSnapshot& s) {
  std::vector<std::shared_ptr<SessionObserver>> alive;
  {
    std::lock_guard lock(observers_mutex_);
    alive.reserve(observers_.size());
    for (const auto& [address, weak] : observers_) {
      if (auto o = weak.lock()) alive.push_back(std::move(o));
    }
  }
  for (const auto& o : alive) s.nodes += static_cast<std::int64_t>(o->nodes_on_server());
  if (const auto c = connection()) s.watches = static_cast<std::int64_t>(c->watch_count());
  s.confirmation_lag_seconds = std::chrono::duration<double>(confirmation_lag()).count();
}

void SessionCore::add_observer(const std::shared_ptr<SessionObserver>& observer) {
  std::lock_guard lock(observers_mutex_);
  observers_.insert_or_assign(observer.get(), observer);
}

void SessionCore::remove_observer(const SessionObserver* observer) {
  std::lock_guard lock(observers_mutex_);
  observers_.erase(observer);
}

Session::ListenerId SessionCore::add_listener(Session::Listener listener) {
  return events_.add_listener(std::move(listener));
}

void SessionCore::remove_listener(Session::ListenerId id) { events_.remove_listener(id); }

bool SessionCore::on_events_thread() const noexcept { return events_.on_thread(); }

void SessionCore::post_event(std::function<void()> task) { events_.post(std::move(task)); }

void SessionCore::post_event_or_detach(std::function<void()> task) {
  if (!events_.try_post(task)) std::thread(std::move(task)).detach();
}

void SessionCore::flush_events(milliseconds timeout) { events_.flush(timeout); }

void SessionCore::probe_tick() {
  std::string addresses;
  {
    std::lock_guard lock(addresses_mutex_);
    addresses = addresses_;
  }
  const auto wait = options_.connect_timeout;
  const auto granted = granted_session_timeout(
      addresses, kProbeTimeout, wait,
      [this] {
        std::lock_guard lock(reaper_mutex_);
        return reaper_stopping_ || probe_abandoned_;
      },
      log_slot_.callback(), tls_settings_, [this] { forced_drops_.fetch_add(1); });
  if (!granted) {
    log_slot_.log(LogLevel::kDebug,
                  "the timeout probe got no answer: tickTime bounded by the session timeout");
    return;
  }
  std::lock_guard lock(mutex_);
  probe_granted_ = granted;
  apply_route_locked();
  log_slot_.log(LogLevel::kDebug, "a session asking for " + std::to_string(kProbeTimeout.count()) +
                                      " ms was granted " + std::to_string(granted->count()) +
                                      " ms: tickTime at most " +
                                      std::to_string(granted->count() / 2) + " ms");
}

void SessionCore::finish_probe(milliseconds timeout) noexcept {
  {
    std::unique_lock lock(reaper_mutex_);
    // Abandoned: its stop predicate is polled every 50 ms; a late answer is dropped.
    probe_abandoned_ = !reaper_wake_.wait_for(lock, timeout, [&] { return probe_done_; });
  }
  // probe_done_ is set just before the thread returns: only the join makes it gone.
  if (probe_thread_.joinable()) probe_thread_.join();
}

void SessionCore::reaper_loop() {
  std::unique_lock lock(reaper_mutex_);
  while (true) {
    if (reaper_stopping_ && to_close_.empty()) break;
    const auto now = BootClock::now();
    // The ended connection due first (they end in order; their deadlines need not be).
    auto due_at = [&](const EndedConnection& e) {
      const std::int64_t told = e.told_ns->load();
      if (told == 0) return e.latest;  // still waiting for the callbacks (polled below)
      const BootClock::time_point told_at{std::chrono::nanoseconds(told)};
      return std::min(e.latest, std::max(e.not_before, told_at + e.margin));
    };
    auto next = to_close_.begin();
    for (auto it = to_close_.begin(); it != to_close_.end(); ++it) {
      if (due_at(*it) < due_at(*next)) next = it;
    }
    if (next != to_close_.end() && (reaper_stopping_ || now >= due_at(*next))) {
      auto connection = std::move(next->connection);
      to_close_.erase(next);
      lock.unlock();
      connection->close(Errc::session_lost);
      connection.reset();
      lock.lock();
      continue;
    }
    // Host names: looked up again now and then, sooner when asked, never twice within
    // kMinResolveInterval.
    auto resolve_at = BootClock::time_point::max();
    if (needs_resolving_ && !reaper_stopping_) {
      resolve_at = last_resolve_ + (resolve_requested_ ? kMinResolveInterval : kResolveInterval);
    }
    if (now >= resolve_at) {
      resolve_requested_ = false;
      last_resolve_ = now;
      lock.unlock();
      refresh_addresses();
      lock.lock();
      continue;
    }
    // Poll while Lost callbacks are pending (their marker cannot wake us: it may outlive us), and
    // at least once a second (the boot clock runs on while the machine sleeps).
    auto wake = std::min(resolve_at, now + std::chrono::seconds(1));
    if (next != to_close_.end()) {
      wake = std::min(wake, due_at(*next));
      if (next->told_ns->load() == 0) wake = std::min(wake, now + kReaperPoll);
    }
    reaper_wake_.wait_for(lock, wake - now);
  }
}

bool SessionCore::wait_connected(milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout,
                    [&] { return closed_.load() || state_.load() == SessionState::kConnected; });
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
  return call_on(*connection, op, timeout);
}

OpResult SessionCore::call_on(ClientConnection& connection,
                              const std::function<void(ClientConnection&, Completion)>& op,
                              milliseconds timeout) {
  struct Waiter {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    OpResult result;
  };
  auto waiter = std::make_shared<Waiter>();
  op(connection, [waiter](OpResult&& r) {
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
  {
    std::lock_guard lock(reconnect_mutex_);
    reconnector_stopping_ = true;
    reconnect_wake_.notify_all();
  }
  // A reconnect in progress finishes first (it may wait on the C client; close() would too).
  if (reconnector_.joinable()) reconnector_.join();
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
  if (probe_thread_.joinable()) probe_thread_.join();  // it stops at once now
  std::deque<std::function<void()>> leftover;
  decltype(scheduled_) dropped;  // destroyed unlocked
  {
    std::lock_guard lock(defer_mutex_);
    defer_closed_ = true;
    leftover.swap(deferred_);
    dropped.swap(scheduled_);
  }
  for (auto& task : leftover) task();
  notify_observers();
  events_.stop();
  metrics_->stop_hook();  // after the recipes heard of the close: their last events are delivered
}

}  // namespace zklock::detail
