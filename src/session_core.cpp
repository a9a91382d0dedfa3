#include "session_core.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <utility>

namespace zklock::detail {
namespace {

std::int64_t to_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
Clock::time_point from_ns(std::int64_t ns) {
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
}

}  // namespace

SessionCore::SessionCore(SessionOptions options)
    : options_(std::move(options)),
      log_slot_(options_.log_sink, options_.log_level),
      timeout_ms_(options_.session_timeout.count()) {}

SessionCore::~SessionCore() { close(); }

std::chrono::milliseconds SessionCore::negotiated_timeout() const noexcept {
  return std::chrono::milliseconds(timeout_ms_.load());
}

std::chrono::milliseconds SessionCore::heartbeat_interval() const noexcept {
  if (options_.heartbeat_interval.count() > 0) return options_.heartbeat_interval;
  return std::max(negotiated_timeout() / 10, std::chrono::milliseconds(10));
}

std::chrono::milliseconds SessionCore::lost_margin() const noexcept {
  if (options_.lost_margin.count() > 0) return options_.lost_margin;
  return std::max(negotiated_timeout() / 20, std::chrono::milliseconds(50));
}

std::chrono::milliseconds SessionCore::suspend_after() const noexcept {
  if (options_.suspend_after.count() > 0) return options_.suspend_after;
  return negotiated_timeout() / 3;
}

Clock::time_point SessionCore::lost_deadline() const noexcept {
  const std::int64_t last = last_answered_send_ns_.load();
  if (last == 0) return Clock::time_point::max();
  return from_ns(last) + negotiated_timeout() - lost_margin();
}

SessionState SessionCore::state() const noexcept {
  const SessionState s = state_.load();
  if ((s == SessionState::kConnected || s == SessionState::kSuspended) &&
      Clock::now() >= lost_deadline()) {
    return SessionState::kLost;  // the monitor may not have run yet; the clock has spoken
  }
  return s;
}

SessionState SessionCore::state_of(unsigned generation) const noexcept {
  if (closed_.load()) return SessionState::kClosed;
  if (generation != generation_.load()) return SessionState::kLost;
  return state();
}

std::shared_ptr<Handle> SessionCore::handle() const {
  std::lock_guard lock(mutex_);
  return handle_;
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
  c_connected_.store(false);
  expired_ = false;
  heartbeat_in_flight_ = false;
  heartbeat_now_ = false;
  last_answered_send_ns_.store(0);
  timeout_ms_.store(options_.session_timeout.count());
  generation_started_ = Clock::now();
  handle_ = std::make_shared<Handle>(options_.connect, options_.session_timeout, generation, *this,
                                     log_slot_.callback(), options_.fault_hook);
  if (options_.credentials) {
    handle_->add_digest_auth(options_.credentials->user + ":" + options_.credentials->password,
                             [](OpResult&&) {});
  }
  ++changes_;
  changed_.notify_all();
}

void SessionCore::set_state_locked(SessionState next) {
  const SessionState previous = state_.load();
  if (previous == next) return;
  state_.store(next);
  // Posted under mutex_, so listeners see transitions in the order they happened, and anything
  // posted after this (flush_events) runs after it.
  publish({next, previous, generation_.load(), session_id_.load()});
  ++changes_;
  changed_.notify_all();
}

void SessionCore::on_answered(unsigned generation, Clock::time_point sent) {
  if (generation != generation_.load()) return;
  const std::int64_t ns = to_ns(sent);
  std::int64_t seen = last_answered_send_ns_.load();
  while (seen < ns && !last_answered_send_ns_.compare_exchange_weak(seen, ns)) {
  }
}

void SessionCore::on_connection_state(unsigned generation, int c_state) {
  std::shared_ptr<Handle> handle;
  {
    std::lock_guard lock(mutex_);
    if (generation != generation_.load() || stopping_) return;
    handle = handle_;
  }
  // Read what the handle knows outside our lock (its own lock is taken).
  const bool up = c_state == ZOO_CONNECTED_STATE || c_state == ZOO_READONLY_STATE;
  const std::int64_t id = up && handle ? handle->session_id() : 0;
  const auto timeout = up && handle ? handle->negotiated_timeout() : std::chrono::milliseconds(0);
  std::lock_guard lock(mutex_);
  if (generation != generation_.load() || stopping_) return;
  if (up) {
    c_connected_.store(true);
    if (id != 0) session_id_.store(id);
    if (timeout.count() > 0) timeout_ms_.store(timeout.count());
    heartbeat_now_ = true;  // prove the session lives: answered requests, not events
  } else if (c_state == ZOO_EXPIRED_SESSION_STATE || c_state == ZOO_AUTH_FAILED_STATE) {
    c_connected_.store(false);
    expired_ = true;
  } else {
    c_connected_.store(false);
  }
  ++changes_;
  changed_.notify_all();
  wake_.notify_all();
}

void SessionCore::defer(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      deferred_.push_back(std::move(task));
      wake_.notify_all();
      return;
    }
  }
  // The monitor is gone (closing): run it on a thread of its own, never inline (the caller may
  // hold locks the task takes).
  std::thread(std::move(task)).detach();
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

void SessionCore::send_heartbeat(const std::shared_ptr<Handle>& handle, unsigned generation) {
  heartbeat_in_flight_ = true;
  heartbeat_sent_ = Clock::now();
  next_heartbeat_ = heartbeat_sent_ + heartbeat_interval();
  // exists() is the cheapest request with an answer. Without held locks it reads "/" (a chroot's
  // root may be missing, which is an answer all the same); with held locks, one of their nodes.
  std::string path = "/";
  ProbeId probe = 0;
  if (!probes_.empty()) {
    auto it = probes_.upper_bound(last_probe_);
    if (it == probes_.end()) it = probes_.begin();
    probe = last_probe_ = it->first;
    path = it->second.path;
  }
  handle->exists(path, [this, generation, probe](OpResult&& r) {
    std::function<void()> on_missing;
    {
      std::lock_guard lock(mutex_);
      if (generation != generation_.load()) return;
      heartbeat_in_flight_ = false;
      if (r.rc == Errc::session_expired || r.rc == Errc::invalid_state) expired_ = true;
      if (r.rc == Errc::no_node && probe != 0) {
        if (auto it = probes_.find(probe); it != probes_.end()) on_missing = it->second.on_missing;
      }
      wake_.notify_all();
    }
    if (on_missing) on_missing();
  });
}

Clock::time_point SessionCore::evaluate_locked(Clock::time_point now) {
  const std::int64_t last = last_answered_send_ns_.load();
  Clock::time_point next = now + std::chrono::seconds(1);
  SessionState s = state_.load();
  if (s == SessionState::kClosed) return next;

  if (s == SessionState::kConnecting) {
    if (expired_) {
      set_state_locked(SessionState::kLost);
      return now;
    }
    if (last != 0) {
      set_state_locked(SessionState::kConnected);
      s = SessionState::kConnected;
    }
  }
  if (s == SessionState::kConnected || s == SessionState::kSuspended) {
    const Clock::time_point deadline = lost_deadline();
    if (expired_ || now >= deadline) {
      set_state_locked(SessionState::kLost);
      return now;
    }
    next = std::min(next, deadline);
  }
  if (s == SessionState::kConnected) {
    const bool slow = heartbeat_in_flight_ && now - heartbeat_sent_ >= suspend_after();
    if (!c_connected_.load() || slow) {
      suspended_at_ = now;
      set_state_locked(SessionState::kSuspended);
    } else if (heartbeat_in_flight_) {
      next = std::min(next, heartbeat_sent_ + suspend_after());
    }
  } else if (s == SessionState::kSuspended) {
    if (c_connected_.load() && last > to_ns(suspended_at_)) {
      set_state_locked(SessionState::kConnected);
    }
  }
  return next;
}

void SessionCore::monitor_loop() {
  std::uint64_t notified_changes = changes_.load();
  std::unique_lock lock(mutex_);
  while (true) {
    while (!deferred_.empty()) {
      auto task = std::move(deferred_.front());
      deferred_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
    if (stopping_) break;
    const Clock::time_point now = Clock::now();
    Clock::time_point next = evaluate_locked(now);

    if (state_.load() == SessionState::kLost) {
      // End this generation: whatever it owned is gone. Then open the next one at once.
      std::shared_ptr<Handle> old = std::move(handle_);
      const unsigned generation = generation_.load();
      lock.unlock();
      if (old) {
        old->fail_pending(Errc::session_lost);
        std::lock_guard reaper_lock(reaper_mutex_);
        to_close_.push_back(std::move(old));
        reaper_wake_.notify_all();
      }
      lock.lock();
      if (stopping_) break;
      try {
        open_generation_locked(generation + 1);
        set_state_locked(SessionState::kConnecting);
      } catch (const std::exception&) {
        // The connect string was accepted before; a refusal now is transient (resolution).
        wake_.wait_until(lock, Clock::now() + std::chrono::seconds(1));
        continue;
      }
    }

    if (c_connected_.load() && !heartbeat_in_flight_ && handle_) {
      // A heartbeat is due one interval after the last one - or after the send time of the last
      // answered request, whichever is later: a busy session needs none of its own.
      const std::int64_t last = last_answered_send_ns_.load();
      const Clock::time_point due =
          last == 0 ? next_heartbeat_ : std::max(next_heartbeat_, from_ns(last) + heartbeat_interval());
      if (heartbeat_now_ || now >= due) {
        heartbeat_now_ = false;
        send_heartbeat(handle_, generation_.load());
      } else {
        next = std::min(next, due);
      }
    }
    const std::uint64_t changes = changes_.load();
    lock.unlock();
    if (changes != notified_changes) {
      notified_changes = changes;
      notify_observers();
    }
    lock.lock();
    if (!deferred_.empty() || stopping_ || changes_.load() != notified_changes) continue;
    wake_.wait_until(lock, next);
  }
}

void SessionCore::publish(const SessionEvent& event) {
  {
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
  if (std::this_thread::get_id() != events_thread_.get_id()) {
    std::lock_guard delivery(delivery_mutex_);  // a running delivery finishes first
  }
}

void SessionCore::post_event(std::function<void()> task) {
  std::lock_guard lock(events_mutex_);
  events_.push_back(std::move(task));
  events_wake_.notify_one();
}

void SessionCore::flush_events(std::chrono::milliseconds timeout) {
  auto done = std::make_shared<std::pair<std::mutex, std::condition_variable>>();
  auto flag = std::make_shared<bool>(false);
  post_event([done, flag] {
    std::lock_guard lock(done->first);
    *flag = true;
    done->second.notify_all();
  });
  std::unique_lock lock(done->first);
  done->second.wait_for(lock, timeout, [&] { return *flag; });
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
    auto handle = std::move(to_close_.front());
    to_close_.pop_front();
    lock.unlock();
    handle->close(Errc::session_lost);
    handle.reset();
    lock.lock();
  }
}

bool SessionCore::wait_connected(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] {
    return closed_.load() || state_.load() == SessionState::kConnected;
  });
  if (closed_.load()) throw ClosedError(Errc::closed, "zklock::Session::wait_connected");
  return state_.load() == SessionState::kConnected;
}

void SessionCore::wait_change(std::uint64_t seen_changes, Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  changed_.wait_until(lock, deadline, [&] { return changes_.load() != seen_changes; });
}

OpResult SessionCore::call(const std::function<void(Handle&, Completion)>& op,
                           std::chrono::milliseconds timeout) {
  auto handle = this->handle();
  if (closed_.load()) return OpResult{Errc::closed, {}, {}, {}, {}};
  // No handle while open: the monitor has ended a lost generation and not opened the next yet.
  if (!handle) return OpResult{Errc::session_lost, {}, {}, {}, {}};
  struct Waiter {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    OpResult result;
  };
  auto waiter = std::make_shared<Waiter>();
  op(*handle, [waiter](OpResult&& r) {
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
    wake_.notify_all();
  }
  if (monitor_.joinable()) monitor_.join();
  std::shared_ptr<Handle> handle;
  {
    std::lock_guard lock(mutex_);
    handle = std::move(handle_);
  }
  // Closing while connected deletes our ephemeral nodes (held locks) at once.
  if (handle) handle->close(Errc::closed);
  {
    std::lock_guard lock(reaper_mutex_);
    reaper_stopping_ = true;
    reaper_wake_.notify_all();
  }
  if (reaper_.joinable()) reaper_.join();
  std::deque<std::function<void()>> leftover;
  {
    std::lock_guard lock(mutex_);
    leftover.swap(deferred_);
  }
  for (auto& task : leftover) task();
  notify_observers();
  {
    std::lock_guard lock(events_mutex_);
    events_stopping_ = true;
    events_wake_.notify_all();
  }
  if (events_thread_.joinable()) {
    if (std::this_thread::get_id() == events_thread_.get_id()) {
      events_thread_.detach();
    } else {
      events_thread_.join();
    }
  }
}

}  // namespace zklock::detail
