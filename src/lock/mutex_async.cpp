// MutexCore's asynchronous acquisitions: a contender no thread waits for. The recipe's steps are
// the same as for lock(); only the ends differ - the outcome is settled once, through a handler
// posted to the session's event thread (and from there to the caller's executor), and an acquired
// lock belongs to a Hold rather than to the Mutex object.
#include <string>
#include <utility>

#include "base/promise_outcome.h"
#include "lock/hold_access.h"
#include "lock/mutex_attempt.h"
#include "lock/mutex_core.h"

namespace zklock::detail {
namespace {

// A LockRequest's view of one asynchronous attempt: neither keeps the other alive.
class AttemptRequest final : public PendingRequest {
 public:
  AttemptRequest(const std::shared_ptr<MutexCore>& core, const std::shared_ptr<void>& attempt)
      : core_(core), attempt_(attempt) {}
  void cancel() noexcept override {
    auto core = core_.lock();
    auto attempt = attempt_.lock();
    if (core && attempt) core->cancel_request(attempt);
  }
  bool pending() const noexcept override {
    auto core = core_.lock();
    auto attempt = attempt_.lock();
    return core && attempt && core->request_pending(attempt);
  }

 private:
  std::weak_ptr<MutexCore> core_;
  std::weak_ptr<void> attempt_;
};

}  // namespace

LockRequest MutexCore::async_acquire(ContenderKind kind, AsyncLockOptions options,
                                     LockHandler handler, bool internal) {
  auto a = std::make_shared<Attempt>();
  a->kind = kind;
  a->async = std::make_unique<Attempt::Async>();
  a->async->internal = internal;
  a->async->started = SteadyClock::now();
  a->async->handler = std::move(handler);
  a->async->executor = std::move(options.executor);
  const auto now = SteadyClock::now();
  // A deadline already past is one attempt (as try_lock()); that attempt still gets its round
  // trip, up to the session timeout.
  a->try_once = options.deadline && *options.deadline <= now;
  std::optional<SteadyClock::time_point> deadline = options.deadline;
  if (a->try_once) deadline = now + session_->negotiated_timeout();

  std::lock_guard lock(mutex_);
  LockRequest request(std::make_shared<AttemptRequest>(shared_from_this(), a));
  if (session_->closed() || shut_down_) {
    a->result = Attempt::Result::kFailed;
    settle_async_locked(a, shut_down_ ? Errc::cancelled : Errc::closed);
    return request;
  }
  attempts_.push_back(a);
  if (deadline) {
    const auto delay = std::chrono::ceil<std::chrono::milliseconds>(*deadline - now);
    std::weak_ptr<MutexCore> weak_core = shared_from_this();
    std::weak_ptr<Attempt> weak_attempt = a;
    a->async->deadline_task = session_->schedule(
        std::max(delay, std::chrono::milliseconds(0)), [weak_core, weak_attempt] {
          auto core = weak_core.lock();
          auto attempt = weak_attempt.lock();
          if (!core || !attempt) return;
          std::lock_guard deadline_lock(core->mutex_);
          if (attempt->result == Attempt::Result::kPending && !attempt->async->settled) {
            core->end_async_locked(attempt, Errc::timed_out);
          }
        });
  }
  start_create_locked(a);
  return request;
}

void MutexCore::settle_async_locked(const AttemptPtr& a, Errc code) {
  Attempt::Async& async = *a->async;
  if (async.settled) return;
  async.settled = true;
  session_->cancel_scheduled(std::exchange(async.deadline_task, {}));
  if (code == Errc::ok && a->result != Attempt::Result::kAcquired) code = Errc::timed_out;
  record_acquire_locked(a, outcome_of(code), async.started);
  auto hold = std::make_shared<Hold>();
  if (code == Errc::ok) {
    async.acquisition = acquisition_of_locked(a);
    *hold = HoldAccess::make_hold(shared_from_this(), a, *async.acquisition);
  }
  // The Hold travels inside the task: a task that is never run (an executor that drops its work)
  // destroys it, which releases the lock - nothing is left held by nobody. The task holds the only
  // reference: were this thread to keep one, an executor dropping the work before this returns
  // would leave the last reference here, and ~Hold would take mutex_, which this thread holds.
  std::function<void()> deliver = [handler = std::move(async.handler), code,
                                   hold = std::move(hold)] {
    handler(make_error_code(code), std::move(*hold));
  };
  if (async.internal) {
    session_->defer(std::move(deliver));  // never inline: this thread holds mutex_
  } else {
    session_->post_event_or_detach(
        [executor = std::move(async.executor), deliver = std::move(deliver)]() mutable {
          if (executor) {
            executor(std::move(deliver));
          } else {
            deliver();
          }
        });
  }
  report_async_state_locked(a);  // its first report: Held (only its own: O(1), not O(attempts))
  cv_.notify_all();
}

void MutexCore::end_async_locked(const AttemptPtr& a, Errc code) {
  a->error = code;
  a->result = Attempt::Result::kNotAcquired;
  const bool recovering = a->phase == Attempt::Phase::kRecovering;
  cleanup_locked(a);  // settles when nothing of it is left (finish_cleanup_locked)
  if (!a->async->settled && (!session_->connected() || recovering)) {
    // No waiting for a reconnect (the node goes with the session if it comes to that), nor for
    // a lost create's recovery: that goes on in the background and deletes what it finds.
    settle_async_locked(a, code);
  }
}

void MutexCore::end_all_async_locked() {
  const std::vector<AttemptPtr> attempts = attempts_;
  for (const auto& a : attempts) {
    if (!a->async) continue;
    if (!a->async->settled && a->result == Attempt::Result::kPending) {
      end_async_locked(a, Errc::cancelled);
    } else if (a->phase == Attempt::Phase::kHeld && !a->async->released) {
      a->async->released = true;
      cleanup_locked(a);
    }
    // After this the Mutex stops hearing about the session: whatever is still being deleted is
    // not waited for (it goes with the session at the latest).
    if (!a->async->settled)
      settle_async_locked(a, a->error == Errc::ok ? Errc::cancelled : a->error);
  }
}

void MutexCore::report_async_states_locked() {
  for (const auto& a : attempts_) report_async_state_locked(a);
}

void MutexCore::report_async_state_locked(const AttemptPtr& a) {
  if (!a->async || !a->async->settled || a->async->released || a->phase != Attempt::Phase::kHeld) {
    return;
  }
  Attempt::Async& async = *a->async;
  const LockState now = attempt_state_locked(a);
  if (now == LockState::kLost) end_hold_locked(a);
  if (now == async.reported_state) return;
  const LockState before = async.reported_state;
  async.reported_state = now;
  if (!options_.on_state_change || before == LockState::kLost) return;
  post_callback_locked([callback = options_.on_state_change, now,
                        acquisition = *async.acquisition] { callback(now, acquisition); });
}

void MutexCore::cancel_request(const std::shared_ptr<void>& attempt) noexcept {
  const auto a = std::static_pointer_cast<Attempt>(attempt);
  std::lock_guard lock(mutex_);
  if (a->result == Attempt::Result::kPending && !a->async->settled) {
    end_async_locked(a, Errc::cancelled);
  }
}

bool MutexCore::request_pending(const std::shared_ptr<void>& attempt) const noexcept {
  const auto a = std::static_pointer_cast<Attempt>(attempt);
  std::lock_guard lock(mutex_);
  return !a->async->settled;
}

void MutexCore::release_hold(const std::shared_ptr<void>& attempt) noexcept {
  const auto a = std::static_pointer_cast<Attempt>(attempt);
  std::lock_guard lock(mutex_);
  if (a->async->released || a->phase != Attempt::Phase::kHeld) return;
  a->async->released = true;
  cleanup_locked(a);  // delete, retried in the background on connection loss
  cv_.notify_all();
}

void MutexCore::release_hold_then(const std::shared_ptr<void>& attempt,
                                  std::function<void()> released) noexcept {
  const auto a = std::static_pointer_cast<Attempt>(attempt);
  std::lock_guard lock(mutex_);
  a->async->on_released = std::move(released);
  if (!a->async->released && a->phase == Attempt::Phase::kHeld) {
    a->async->released = true;
    cleanup_locked(a);
    cv_.notify_all();
  }
  // Nothing left to wait for: done already, or not waiting for a reconnect (the node goes with
  // the session, or its delete is sent again once the connection is back).
  if (a->phase == Attempt::Phase::kDone || !session_->connected() || session_->closed()) {
    fire_released_locked(a);
  }
}

void MutexCore::fire_released_locked(const AttemptPtr& a) {
  if (!a->async || !a->async->on_released) return;
  auto released = std::exchange(a->async->on_released, nullptr);
  if (a->async->internal) {
    session_->defer(std::move(released));
  } else {
    session_->post_event_or_detach(std::move(released));
  }
}

LockState MutexCore::hold_state(const std::shared_ptr<void>& attempt) const noexcept {
  const auto a = std::static_pointer_cast<Attempt>(attempt);
  std::lock_guard lock(mutex_);
  if (a->async->released || a->phase != Attempt::Phase::kHeld) return LockState::kNotHeld;
  return attempt_state_locked(a);
}

bool MutexCore::wait_hold_lost_until(const std::shared_ptr<void>& attempt,
                                     std::optional<SteadyClock::time_point> deadline) const {
  const auto a = std::static_pointer_cast<Attempt>(attempt);
  return wait_lost_until(
      [this, a] {
        if (a->async->released || a->phase != Attempt::Phase::kHeld) return LockState::kNotHeld;
        return attempt_state_locked(a);
      },
      deadline);
}

LockRequest async_lock(const std::shared_ptr<MutexCore>& core, ContenderKind kind,
                       LockHandler handler, AsyncLockOptions options) {
  if (!handler) throw InvalidArgumentError(core->context() + "::async_lock: empty handler");
  return core->async_acquire(kind, std::move(options), std::move(handler));
}

std::future<Hold> lock_future(const std::shared_ptr<MutexCore>& core, ContenderKind kind,
                              AsyncLockOptions options) {
  auto promise = std::make_shared<std::promise<Hold>>();
  std::future<Hold> future = promise->get_future();
  const std::string context = core->context() + "::lock_future";
  core->async_acquire(kind, std::move(options),
                      [promise, context](std::error_code error, Hold hold) mutable {
                        fulfil(promise, context, error, std::move(hold));
                      });
  return future;
}

}  // namespace zklock::detail
