// LeaseCore: one held lease - its state, its release, waiting for its loss, hearing revocation
// requests (internal).
#include <algorithm>
#include <utility>

#include "base/retry_rules.h"
#include "semaphore/lease_core.h"
#include "zklock/revocation.h"

namespace zklock::detail {

LeaseCore::LeaseCore(std::shared_ptr<SessionCore> session, Acquisition acquisition)
    : session_(std::move(session)), acquisition_(std::move(acquisition)) {}

LeaseCore::~LeaseCore() = default;

void LeaseCore::attach(LeaseRevocation revocation) {
  session_->add_observer(shared_from_this());
  std::weak_ptr<LeaseCore> weak = shared_from_this();
  const auto probe = session_->add_probe(acquisition_.node_path, [weak] {
    if (auto self = weak.lock()) self->on_missing();
  });
  {
    std::lock_guard lock(mutex_);
    probe_ = probe;
    revocation_ = std::move(revocation);
  }
  if (revocation_.callback) watch_own_node();
}

void LeaseCore::watch_own_node() {
  auto c = session_->connection();
  if (!c || c->generation() != acquisition_.generation) return;  // it went with its session
  std::weak_ptr<LeaseCore> weak = shared_from_this();
  std::lock_guard lock(mutex_);
  if (released_) return;
  // The read reports a request made already; the watch, later ones and a deletion.
  own_watch_ = c->get_data(
      acquisition_.node_path,
      [weak](WatchEventType type) {
        if (auto self = weak.lock()) self->on_own_node_event(type);
      },
      [weak](OpResult&& r) {
        auto self = weak.lock();
        if (!self) return;
        if (r.rc == Errc::no_node) {
          self->on_missing();
          return;
        }
        if (r.rc != Errc::ok || r.value != kRevokeMessage) return;
        std::lock_guard held(self->mutex_);
        if (self->released_) return;
        // Heard: the node says who holds it again - over the request read, nothing later.
        if (auto now = self->session_->connection();
            now && now->generation() == self->acquisition_.generation &&
            self->revocation_.node_data) {
          now->set(self->acquisition_.node_path, *self->revocation_.node_data, r.stat.version,
                   [](OpResult&&) {});
        }
        self->session_->post_event(
            [revocation = self->revocation_, acquisition = self->acquisition_, weak] {
              revocation.gate->run([&] {
                auto lease = weak.lock();
                if (lease && lease->state() != LockState::kNotHeld)
                  revocation.callback(acquisition);
              });
            });
      });
}

void LeaseCore::on_own_node_event(WatchEventType type) {
  {
    std::lock_guard lock(mutex_);
    own_watch_ = 0;
  }
  if (type == WatchEventType::kDeleted) {
    on_missing();
    return;
  }
  if (type == WatchEventType::kNotWatching) return;  // removed: released, or the session ended
  watch_own_node();  // used up: set it again (and read what was written)
}

void LeaseCore::on_missing() {
  deleted_ = true;
  std::lock_guard lock(mutex_);
  end_hold_locked();
  cv_.notify_all();
}

void LeaseCore::on_session_change() {
  std::lock_guard lock(mutex_);
  if (session_->lock_state_of(acquisition_.generation) == LockState::kLost) end_hold_locked();
  cv_.notify_all();
}

void LeaseCore::count_hold() {
  std::lock_guard lock(mutex_);
  hold_open_ = !released_;
}

void LeaseCore::end_hold_locked() {
  if (!hold_open_) return;
  hold_open_ = false;
  // Looked up here rather than kept: a held lease carries nothing more for the figures.
  if (LockMeter* meter = session_->lock_meter(Recipe::kSemaphore, acquisition_.lock_path)) {
    meter->hold_ended(acquisition_.lock_path,
                      session_->hold_end_of(acquisition_.generation, deleted_.load()),
                      SteadyClock::now() - acquisition_.acquired_at);
  }
}

std::size_t LeaseCore::nodes_on_server() const {
  std::lock_guard lock(mutex_);
  const bool gone = deleted_.load() || delete_done_ ||
                    session_->state_of(acquisition_.generation) == SessionState::kLost;
  return gone ? 0 : 1;
}

LockState LeaseCore::state() const noexcept {
  {
    std::lock_guard lock(mutex_);
    if (released_) return LockState::kNotHeld;
  }
  if (deleted_.load()) return LockState::kLost;
  return session_->lock_state_of(acquisition_.generation);
}

bool LeaseCore::wait_lost_until(std::optional<SteadyClock::time_point> deadline) const {
  std::unique_lock lock(mutex_);
  while (true) {
    if (released_) return true;
    lock.unlock();
    const LockState s = state();
    lock.lock();
    if (s == LockState::kLost || s == LockState::kNotHeld) return true;
    const auto now = SteadyClock::now();
    if (deadline && now >= *deadline) return false;
    cv_.wait_until(lock, session_->lost_wait_until(deadline));
  }
}

void LeaseCore::release() noexcept {
  SessionCore::ProbeId probe = 0;
  std::uint64_t own_watch = 0;
  {
    std::lock_guard lock(mutex_);
    if (released_) return;
    end_hold_locked();
    released_ = true;
    probe = std::exchange(probe_, 0);
    own_watch = std::exchange(own_watch_, 0);
    cv_.notify_all();
  }
  try {
    if (probe != 0) session_->remove_probe(probe);
    if (own_watch != 0) {
      auto c = session_->connection();
      if (c && c->generation() == acquisition_.generation) {
        c->remove_watch(acquisition_.node_path, own_watch, [](OpResult&&) {});
      }
    }
    session_->remove_observer(this);
    delete_node(0);
  } catch (...) {  // out of memory: the node goes with the session
    deleted_done();
  }
}

void LeaseCore::delete_node(int attempt) {
  auto c = session_->connection();
  if (!c || c->generation() != acquisition_.generation) {
    deleted_done();  // it went with its session
    return;
  }
  auto self = shared_from_this();
  c->remove(acquisition_.node_path, -1, [self, attempt](OpResult&& r) {
    switch (r.rc) {
      case Errc::connection_loss:
      case Errc::operation_timeout:
      case Errc::session_moved:
      case Errc::throttled: {
        // Again once a connection of this session can take it; the node goes with the session
        // if it comes to that. The task keeps the core alive: the Lease may be gone already.
        self->session_->schedule(retry_backoff(attempt),
                                 [self, attempt] { self->delete_node(attempt + 1); });
        if (r.rc != Errc::throttled) self->fire_released();  // no waiting for a reconnect
        return;
      }
      default:  // deleted, already gone, session over, closed - or refused: it goes with the
                // session
        self->deleted_done();
    }
  });
}

void LeaseCore::deleted_done() {
  {
    std::lock_guard lock(mutex_);
    delete_done_ = true;
    cv_.notify_all();
  }
  fire_released();
}

void LeaseCore::release_then(std::function<void()> released) noexcept {
  bool now = false;
  {
    std::lock_guard lock(mutex_);
    on_released_ = std::move(released);
    now = delete_done_;
  }
  release();
  if (now || !session_->connected() || session_->closed()) fire_released();
}

void LeaseCore::fire_released() {
  std::function<void()> released;
  {
    std::lock_guard lock(mutex_);
    released = std::exchange(on_released_, nullptr);
  }
  if (released) session_->defer(std::move(released));
}

}  // namespace zklock::detail
