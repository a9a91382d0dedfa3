// LockSet and HoldSet: several locks all or none, in one canonical order (by lock path).
#include "zklock/lock_set.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <utility>

#include "lock/hold_access.h"
#include "lock/mutex_core.h"
#include "zklock/errors.h"

namespace zklock {
namespace {

// Lost > Suspended > Held: the set is only as sure as its least sure member.
int badness(LockState s) {
  switch (s) {
    case LockState::kHeld:
      return 0;
    case LockState::kSuspended:
      return 1;
    case LockState::kLost:
      return 2;
    case LockState::kNotHeld:
      break;
  }
  return 3;
}

LockState worst(LockState a, LockState b) { return badness(a) >= badness(b) ? a : b; }

}  // namespace

// ---- HoldSet ---------------------------------------------------------------------------------

LockState HoldSet::state() const noexcept {
  if (holds_.empty()) return LockState::kNotHeld;
  LockState s = LockState::kHeld;
  for (const auto& h : holds_) s = worst(s, h.state());
  return s;
}

void HoldSet::unlock() noexcept {
  for (auto it = holds_.rbegin(); it != holds_.rend(); ++it) it->unlock();
  holds_.clear();
}

// ---- LockSet members -------------------------------------------------------------------------

struct LockSet::Member {
  enum class Kind { kMutex, kWrite, kRead };
  Kind kind = Kind::kMutex;
  Mutex* mutex = nullptr;
  SharedMutex* shared = nullptr;

  const std::string& path() const { return mutex ? mutex->path() : shared->path(); }

  bool take(std::optional<std::chrono::steady_clock::time_point> deadline, bool try_once) const {
    switch (kind) {
      case Kind::kMutex:
        if (try_once) return mutex->try_lock();
        if (!deadline) return mutex->lock(), true;
        return mutex->try_lock_until(*deadline);
      case Kind::kWrite:
        if (try_once) return shared->try_lock();
        if (!deadline) return shared->lock(), true;
        return shared->try_lock_until(*deadline);
      case Kind::kRead:
        if (try_once) return shared->try_lock_shared();
        if (!deadline) return shared->lock_shared(), true;
        return shared->try_lock_shared_until(*deadline);
    }
    return false;
  }
  void release() const noexcept {
    switch (kind) {
      case Kind::kMutex:
        mutex->unlock();
        break;
      case Kind::kWrite:
        shared->unlock();
        break;
      case Kind::kRead:
        shared->unlock_shared();
        break;
    }
  }
  /// As release(), and returns once the node is deleted (or the connection is down): a set that
  /// failed leaves nothing of itself on the server when it reports.
  void release_and_wait() const noexcept {
    switch (kind) {
      case Kind::kMutex:
        detail::MutexAccess::core(*mutex).release_and_wait();
        break;
      case Kind::kWrite:
        detail::MutexAccess::core(*shared).release_and_wait({ContenderKind::kWrite});
        break;
      case Kind::kRead:
        detail::MutexAccess::core(*shared).release_and_wait({ContenderKind::kRead});
        break;
    }
  }
  LockState state() const noexcept { return mutex ? mutex->state() : shared->state(); }
  detail::MutexCore& core() const noexcept {
    return mutex ? detail::MutexAccess::core(*mutex) : detail::MutexAccess::core(*shared);
  }
  /// Where a set whose first member this is counts (the figures of its first member's session).
  detail::LockMeter* set_meter() const {
    return core().session().lock_meter(Recipe::kLockSet, path());
  }
  std::optional<Acquisition> acquisition() const {
    return mutex ? mutex->acquisition() : shared->acquisition();
  }
  LockRequest async_lock(LockHandler handler, AsyncLockOptions options) const {
    switch (kind) {
      case Kind::kMutex:
        return mutex->async_lock(std::move(handler), std::move(options));
      case Kind::kWrite:
        return shared->async_lock(std::move(handler), std::move(options));
      case Kind::kRead:
        break;
    }
    return shared->async_lock_shared(std::move(handler), std::move(options));
  }
};

LockSet::~LockSet() { unlock(); }

void LockSet::check_new_path(const std::string& path) const {
  if (held_ != 0) throw InvalidArgumentError("zklock::LockSet::add: the set is held");
  for (const auto& m : members_) {
    if (m->path() == path) {
      throw InvalidArgumentError("zklock::LockSet::add: \"" + path +
                                 "\" is in the set already (it would wait for itself)");
    }
  }
}

void LockSet::insert(std::shared_ptr<Member> member) {
  check_new_path(member->path());
  members_.push_back(std::move(member));
  std::sort(members_.begin(), members_.end(),
            [](const auto& a, const auto& b) { return a->path() < b->path(); });
}

LockSet& LockSet::add(Mutex& mutex) {
  auto m = std::make_shared<Member>();
  m->mutex = &mutex;
  insert(std::move(m));
  return *this;
}

LockSet& LockSet::add(SharedMutex& mutex) {
  auto m = std::make_shared<Member>();
  m->kind = Member::Kind::kWrite;
  m->shared = &mutex;
  insert(std::move(m));
  return *this;
}

LockSet& LockSet::add_shared(SharedMutex& mutex) {
  auto m = std::make_shared<Member>();
  m->kind = Member::Kind::kRead;
  m->shared = &mutex;
  insert(std::move(m));
  return *this;
}

// ---- blocking --------------------------------------------------------------------------------

void LockSet::lock() {
  if (!lock_until(std::nullopt)) {
    throw Error(Errc::operation_timeout, "zklock::LockSet::lock: not acquired");
  }
}

bool LockSet::try_lock() { return lock_until(std::chrono::steady_clock::now(), true); }

bool LockSet::lock_until(std::optional<std::chrono::steady_clock::time_point> deadline,
                         bool try_once) {
  if (held_ != 0) throw Error(Errc::would_deadlock, "zklock::LockSet: already held");
  if (members_.empty()) return take_members(deadline, try_once);
  const auto started = std::chrono::steady_clock::now();
  const auto record = [&](AcquireOutcome outcome) {
    const Member& first = *members_.front();
    if (detail::LockMeter* meter = first.set_meter()) {
      meter->acquire_ended(first.path(), outcome, std::chrono::steady_clock::now() - started,
                           false);
    }
  };
  bool taken = false;
  try {
    taken = take_members(deadline, try_once);
  } catch (const CancelledError&) {
    record(AcquireOutcome::kCancelled);
    throw;
  } catch (const ClosedError&) {
    record(AcquireOutcome::kSessionLost);
    throw;
  } catch (const SessionLostError&) {
    record(AcquireOutcome::kSessionLost);
    throw;
  } catch (...) {
    record(AcquireOutcome::kError);
    throw;
  }
  record(taken ? AcquireOutcome::kAcquired : AcquireOutcome::kTimedOut);
  if (taken) held_since_ = std::chrono::steady_clock::now();
  return taken;
}

bool LockSet::take_members(std::optional<std::chrono::steady_clock::time_point> deadline,
                           bool try_once) {
  while (true) {
    try {
      for (; held_ < members_.size(); ++held_) {
        if (!members_[held_]->take(deadline, try_once)) {
          release_and_wait();
          return false;
        }
      }
    } catch (...) {
      release_and_wait();
      throw;
    }
    if (state() != LockState::kLost) return true;
    // A member was lost while the later ones were being taken: never hand that out.
    unlock();
    if (try_once || (deadline && std::chrono::steady_clock::now() >= *deadline)) return false;
  }
}

void LockSet::unlock() noexcept {
  if (held_ != 0 && held_ == members_.size() &&
      held_since_ != std::chrono::steady_clock::time_point{}) {
    // The set's hold ends as its worst member's: released, unless one of them was lost.
    HoldEnd end = HoldEnd::kReleased;
    for (const auto& m : members_) {
      if (m->state() != LockState::kLost) continue;
      const auto a = m->acquisition();
      end = a ? m->core().session().hold_end_of(a->generation, false) : HoldEnd::kSessionSilent;
      if (end == HoldEnd::kReleased) end = HoldEnd::kNodeDeleted;  // Lost with its session alive
      break;
    }
    const Member& first = *members_.front();
    if (detail::LockMeter* meter = first.set_meter()) {
      meter->hold_ended(first.path(), end, std::chrono::steady_clock::now() - held_since_);
    }
  }
  held_since_ = {};
  while (held_ > 0) members_[--held_]->release();
}

void LockSet::release_and_wait() noexcept {
  while (held_ > 0) members_[--held_]->release_and_wait();
}

LockState LockSet::state() const noexcept {
  if (held_ == 0 || held_ != members_.size()) return LockState::kNotHeld;
  LockState s = LockState::kHeld;
  for (const auto& m : members_) s = worst(s, m->state());
  return s;
}

std::vector<Acquisition> LockSet::acquisitions() const {
  if (held_ == 0 || held_ != members_.size()) {
    throw Error(Errc::not_held, "zklock::LockSet::acquisitions: not held");
  }
  std::vector<Acquisition> out;
  for (const auto& m : members_) {
    auto a = m->acquisition();
    if (!a) throw Error(Errc::not_held, "zklock::LockSet::acquisitions: " + m->path());
    out.push_back(std::move(*a));
  }
  return out;
}

// ---- asynchronous ----------------------------------------------------------------------------

// One asynchronous run over the members: a request per member, one after the other in canonical
// order; the Holds gathered so far are released on any failure.
struct LockSet::AsyncRun final : detail::PendingRequest, std::enable_shared_from_this<AsyncRun> {
  std::vector<std::shared_ptr<Member>> members;
  AsyncLockOptions options;
  LockSetHandler handler;

  mutable std::mutex mutex;
  std::vector<Hold> holds;
  LockRequest current;    // the member request in flight (to cancel)
  unsigned started = 0;   // member requests started so far
  unsigned answered = 0;  // the last of them that has answered
  bool cancelled = false;
  bool settled = false;

  void cancel() noexcept override {
    LockRequest to_cancel;
    {
      const std::lock_guard lock(mutex);
      if (settled) return;
      cancelled = true;
      to_cancel = current;
    }
    to_cancel.cancel();
  }
  bool pending() const noexcept override {
    const std::lock_guard lock(mutex);
    return !settled;
  }

  void start_next(std::size_t index) {
    AsyncLockOptions member_options;
    member_options.deadline = options.deadline;  // one deadline for the whole set
    unsigned step = 0;
    {
      const std::lock_guard lock(mutex);
      step = ++started;
    }
    auto self = shared_from_this();
    LockRequest request = members[index]->async_lock(
        [self, step](std::error_code error, Hold hold) {
          self->on_member(step, error, std::move(hold));
        },
        member_options);
    bool cancel_now = false;
    {
      const std::lock_guard lock(mutex);
      // Its handler may have run already (and started the next member): keep only a request
      // that is still in flight.
      if (answered != step) current = request;
      cancel_now = cancelled && answered != step;
    }
    if (cancel_now) request.cancel();
  }

  void on_member(unsigned step, std::error_code error, Hold hold) {
    std::unique_lock lock(mutex);
    answered = step;
    current = LockRequest();
    if (!error && cancelled) error = make_error_code(Errc::cancelled);
    if (error) {
      std::vector<Hold> taken = std::move(holds);
      lock.unlock();
      // Release, then report: the handler runs once every member's node is gone (or the
      // connection is down), the last taken released first.
      auto remaining = std::make_shared<std::atomic<std::size_t>>(taken.size() + 1);
      auto self = shared_from_this();
      const auto one_released = [self, remaining, error] {
        if (--*remaining == 0) self->finish(error, HoldSet());
      };
      detail::HoldAccess::release_then(hold, one_released);
      for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
        detail::HoldAccess::release_then(*it, one_released);
      }
      return;
    }
    holds.push_back(std::move(hold));
    if (holds.size() < members.size()) {
      const std::size_t next = holds.size();
      lock.unlock();
      start_next(next);
      return;
    }
    HoldSet all(std::move(holds));
    holds.clear();
    lock.unlock();
    if (all.state() == LockState::kLost) {
      // A member was lost while the later ones were taken: release and take them again.
      all.unlock();
      start_next(0);
      return;
    }
    finish({}, std::move(all));
  }

  void finish(std::error_code error, HoldSet result) {
    {
      const std::lock_guard lock(mutex);
      settled = true;
      current = LockRequest();
    }
    auto shared_result = std::make_shared<HoldSet>(std::move(result));
    std::function<void()> deliver = [handler = std::move(handler), error, shared_result] {
      handler(error, std::move(*shared_result));
    };
    if (options.executor) {
      options.executor(std::move(deliver));
    } else {
      deliver();  // on the event thread of the session that answered last
    }
  }
};

LockRequest LockSet::async_lock(LockSetHandler handler, AsyncLockOptions options) {
  if (!handler) throw InvalidArgumentError("zklock::LockSet::async_lock: empty handler");
  if (members_.empty()) throw InvalidArgumentError("zklock::LockSet::async_lock: no member");
  auto run = std::make_shared<AsyncRun>();
  run->members = members_;
  run->options = std::move(options);
  run->handler = std::move(handler);
  run->start_next(0);
  return LockRequest(run);
}

}  // namespace zklock
