// LeaseRequest, its life: the start and the deadline, the internal lock, session changes, failed
// steps, and every end - success, giving everything back, handing the outcome over. The steps
// that read and write the leases are in lease_request_steps.cpp.
#include "semaphore/lease_request.h"

#include <algorithm>
#include <utility>

#include "base/retry_rules.h"
#include "lock/hold_access.h"
#include "semaphore/semaphore_core.h"

namespace zklock::detail {

LeaseRequest::LeaseRequest(std::shared_ptr<SemaphoreCore> core, Params params, Done done)
    : core_(std::move(core)), session_(core_->session_), params_(params), done_(std::move(done)) {}

LeaseRequest::~LeaseRequest() = default;

void LeaseRequest::start() {
  std::weak_ptr<LeaseRequest> weak = shared_from_this();
  run([&] {
    if (params_.deadline) {
      const auto delay =
          std::chrono::ceil<std::chrono::milliseconds>(*params_.deadline - SteadyClock::now());
      deadline_task_ = session_->schedule(std::max(delay, std::chrono::milliseconds(0)), [weak] {
        if (auto self = weak.lock()) self->end(Errc::timed_out, {});
      });
    }
    if (session_->closed()) {
      end_locked(Errc::closed, {});
      return;
    }
    count_locked();
  });
}

void LeaseRequest::end(Errc code, const std::string& detail) noexcept {
  try {
    run([&] { end_locked(code, detail); });
  } catch (...) {  // out of memory: what is left goes with the session
  }
}

bool LeaseRequest::pending() const noexcept {
  std::lock_guard lock(mutex_);
  return !decided_;
}

void LeaseRequest::on_session_change() {
  run([&] {
    if (phase_ == Phase::kDone) return;
    if (phase_ == Phase::kEnding) {
      // No waiting for a reconnect (nor for a session that is gone): what is left is deleted
      // in the background, or goes with the session.
      if (!session_->connected() || session_->closed()) deliver_locked();
      return;
    }
    if (session_->closed()) {
      end_locked(Errc::closed, {});
      return;
    }
    const bool leasing = phase_ != Phase::kCount && phase_ != Phase::kInternalLock;
    if (leasing && session_->state_of(generation_) == SessionState::kLost) {
      requeue_locked(/*session_lost=*/true);
      return;
    }
    if (resume_ && connection_locked(leasing)) std::exchange(resume_, nullptr)();
  });
}

std::shared_ptr<ClientConnection> LeaseRequest::connection_locked(bool pinned) const {
  auto c = session_->connection();
  if (!c || !session_->connected()) return nullptr;
  if (pinned && c->generation() != generation_) return nullptr;
  return c;
}

void LeaseRequest::await_connection_locked(std::function<void()> resume) {
  const bool pinned = phase_ != Phase::kCount && phase_ != Phase::kInternalLock;
  if (connection_locked(pinned)) {
    resume();  // queued behind the reconnect if the connection has just dropped
    return;
  }
  resume_ = std::move(resume);  // on_session_change
}

void LeaseRequest::step_failed_locked(Errc rc, const char* what,
                                      const std::function<void()>& again) {
  if (rc == Errc::closed || session_->closed()) {
    end_locked(Errc::closed, {});
  } else if (is_session_gone(rc)) {
    if (phase_ == Phase::kCount) {
      await_connection_locked(again);  // the count is the path's: any session may read it
    } else {
      requeue_locked(/*session_lost=*/true);
    }
  } else if (cured_by_reconnecting(rc)) {
    await_connection_locked(again);
  } else if (worth_retrying_later(rc)) {
    std::weak_ptr<LeaseRequest> weak = shared_from_this();
    const unsigned step = step_;
    timer_ = session_->schedule(retry_backoff(races_++), [weak, step, again] {
      if (auto self = weak.lock()) {
        self->run([&] {
          if (self->step_ == step && !self->decided_) again();
        });
      }
    });
  } else {
    end_locked(rc, what);
  }
}

// ---- the internal lock ------------------------------------------------------------------------

void LeaseRequest::take_internal_lock_locked() {
  phase_ = Phase::kInternalLock;
  next_step_locked();
  AsyncLockOptions options;
  // try_once: only if free now (a deadline already past is one attempt, as try_lock()).
  options.deadline = params_.try_once ? std::optional(SteadyClock::now()) : params_.deadline;
  std::weak_ptr<LeaseRequest> weak = shared_from_this();
  internal_pending_ = true;
  internal_request_ = core_->lock_->async_acquire(
      ContenderKind::kExclusive, std::move(options),
      [weak](std::error_code error, Hold hold) {
        auto self = weak.lock();
        if (!self) return;  // ~Hold releases it
        self->run([&] { self->on_internal_lock_locked(error, std::move(hold)); });
      },
      /*internal=*/true);
}

void LeaseRequest::on_internal_lock_locked(std::error_code error, Hold hold) {
  internal_pending_ = false;
  if (decided_ || phase_ != Phase::kInternalLock) {
    give_back_internal_locked(std::move(hold));
    if (phase_ == Phase::kEnding) one_released_locked();  // its node is gone: it is settled
    return;
  }
  if (error) {
    const auto code = static_cast<Errc>(error.value());
    if (code == Errc::session_lost && params_.requeue_after_loss) {
      take_internal_lock_locked();  // queue again in the next session
      return;
    }
    end_locked(code == Errc::cancelled ? Errc::cancelled : code, "taking the internal lock");
    return;
  }
  internal_ = std::move(hold);
  generation_ = internal_.acquisition().generation;
  creates_ = 0;
  uuid_.clear();
  create_locked();
}

// ---- the ends ---------------------------------------------------------------------------------

void LeaseRequest::give_back_internal_locked(Hold hold) {
  if (hold.state() == LockState::kNotHeld) return;  // empty, or released already
  // Hold::unlock() takes the internal lock's mutex: after mutex_ is released.
  auto kept = std::make_shared<Hold>(std::move(hold));
  later_.push_back([kept] { kept->unlock(); });
}

void LeaseRequest::requeue_locked(bool session_lost) {
  remove_watches_locked();
  resume_ = nullptr;
  next_step_locked();
  // Our node and the leases taken went with the session, or are deleted now; nothing waits for
  // that: the next round's node has a new name.
  if (!node_path_.empty()) {
    auto lease = std::make_shared<LeaseCore>(
        session_, Acquisition{core_->path_, node_path_, sequence_, czxid_, owner_, generation_,
                              SteadyClock::now(), false});
    later_.push_back([lease] { lease->release(); });
    node_path_.clear();
  }
  for (auto& lease : std::exchange(taken_, {})) later_.push_back([lease] { lease->release(); });
  give_back_internal_locked(std::exchange(internal_, Hold()));
  if (session_->closed()) {
    end_locked(Errc::closed, {});
  } else if (session_lost && !params_.requeue_after_loss) {
    end_locked(Errc::session_lost, {});
  } else if (params_.try_once || (params_.deadline && SteadyClock::now() >= *params_.deadline)) {
    end_locked(Errc::timed_out, {});
  } else {
    take_internal_lock_locked();
  }
}

void LeaseRequest::succeed_locked() {
  decided_ = true;
  phase_ = Phase::kDone;
  next_step_locked();
  session_->cancel_scheduled(std::exchange(deadline_task_, {}));
  session_->cancel_scheduled(std::exchange(timer_, {}));
  // The next contender may take a lease now; we do not wait for our internal node to go.
  give_back_internal_locked(std::exchange(internal_, Hold()));
  code_ = Errc::ok;
  auto leases = std::exchange(taken_, {});
  later_.push_back([self = shared_from_this(), leases = std::move(leases)]() mutable {
    self->core_->finished(*self, Errc::ok, self->contended_, self->started_, leases);
    self->done_(Errc::ok, {}, std::move(leases));
  });
}

void LeaseRequest::end_locked(Errc code, std::string detail) {
  if (decided_) return;
  decided_ = true;
  code_ = code;
  detail_ = std::move(detail);
  phase_ = Phase::kEnding;
  next_step_locked();
  resume_ = nullptr;
  session_->cancel_scheduled(std::exchange(deadline_task_, {}));
  session_->cancel_scheduled(std::exchange(timer_, {}));
  remove_watches_locked();
  std::weak_ptr<LeaseRequest> weak = shared_from_this();
  const auto released = [weak] {
    if (auto self = weak.lock()) self->run([&] { self->one_released_locked(); });
  };
  // All or none: our node of this round, the leases taken, the internal lock - each given back,
  // and the outcome handed over once their deletes are answered.
  outstanding_ = 1;  // this function's own, so that no release completes the ending early
  if (!node_path_.empty()) {
    auto lease = std::make_shared<LeaseCore>(
        session_, Acquisition{core_->path_, node_path_, sequence_, czxid_, owner_, generation_,
                              SteadyClock::now(), false});
    ++outstanding_;
    later_.push_back([lease, released] { lease->release_then(released); });
    node_path_.clear();
  }
  for (auto& lease : std::exchange(taken_, {})) {
    ++outstanding_;
    later_.push_back([lease, released] { lease->release_then(released); });
  }
  if (internal_pending_) {
    ++outstanding_;  // its handler comes once its node is gone (on_internal_lock_locked)
    later_.push_back([request = internal_request_] { request.cancel(); });
  } else if (internal_.state() != LockState::kNotHeld) {
    ++outstanding_;
    auto kept = std::make_shared<Hold>(std::exchange(internal_, Hold()));
    later_.push_back(
        [kept, released] { HoldAccess::release_then(*kept, [kept, released] { released(); }); });
  }
  // Never waits long: a third of the session timeout at most (the deletes go on behind).
  timer_ = session_->schedule(session_->negotiated_timeout() / 3, [weak] {
    if (auto self = weak.lock()) self->run([&] { self->deliver_locked(); });
  });
  one_released_locked();  // this function's own
  if (phase_ == Phase::kEnding && (!session_->connected() || session_->closed())) {
    deliver_locked();
  }
}

void LeaseRequest::one_released_locked() {
  if (phase_ != Phase::kEnding) return;
  if (--outstanding_ <= 0) deliver_locked();
}

void LeaseRequest::deliver_locked() {
  if (phase_ != Phase::kEnding) return;
  phase_ = Phase::kDone;
  session_->cancel_scheduled(std::exchange(timer_, {}));
  later_.push_back([self = shared_from_this()] {
    self->core_->finished(*self, self->code_, self->contended_, self->started_, {});
    self->done_(self->code_, self->detail_, {});
  });
}

}  // namespace zklock::detail
