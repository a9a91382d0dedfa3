// LockSet: several locks (and semaphore leases) all or none, in one canonical order (by lock
// path) - its members and the blocking form. The asynchronous form and HoldSet are in
// lock_set_async.cpp.
#include "zklock/lock_set.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <utility>

#include "set/lock_set_member.h"
#include "set/member_state.h"
#include "zklock/errors.h"

namespace zklock {

// ---- LockSet members -------------------------------------------------------------------------

const std::string& LockSet::Member::path() const {
  if (semaphore) return semaphore->path();
  return mutex ? mutex->path() : shared->path();
}

bool LockSet::Member::take(std::optional<std::chrono::steady_clock::time_point> deadline,
                           bool try_once) {
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
    case Kind::kSemaphore:
      break;
  }
  if (!deadline && !try_once) {
    leases = semaphore->acquire(count);
    return true;
  }
  const auto left = try_once ? std::chrono::steady_clock::duration::zero()
                             : std::max(*deadline - std::chrono::steady_clock::now(),
                                        std::chrono::steady_clock::duration::zero());
  auto taken = semaphore->try_acquire_for(count, left);
  if (!taken) return false;
  leases = std::move(*taken);
  return true;
}

void LockSet::Member::release() noexcept {
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
    case Kind::kSemaphore:
      for (auto it = leases.rbegin(); it != leases.rend(); ++it) it->release();
      leases.clear();
      break;
  }
}

void LockSet::Member::release_and_wait() noexcept {
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
    case Kind::kSemaphore:
      for (auto it = leases.rbegin(); it != leases.rend(); ++it) {
        detail::SemaphoreAccess::release_and_wait(*it);
      }
      leases.clear();
      break;
  }
}

LockState LockSet::Member::state() const noexcept {
  if (kind != Kind::kSemaphore) return mutex ? mutex->state() : shared->state();
  if (leases.empty()) return LockState::kNotHeld;
  LockState s = LockState::kHeld;
  for (const auto& lease : leases) s = detail::worst(s, lease.state());
  return s;
}

detail::SessionCore& LockSet::Member::session() const noexcept {
  if (semaphore) return detail::SemaphoreAccess::core(*semaphore).session();
  return mutex ? detail::MutexAccess::core(*mutex).session()
               : detail::MutexAccess::core(*shared).session();
}

detail::LockMeter* LockSet::Member::set_meter() const {
  return session().lock_meter(Recipe::kLockSet, path());
}

std::vector<Acquisition> LockSet::Member::acquisitions() const {
  std::vector<Acquisition> out;
  if (kind == Kind::kSemaphore) {
    for (const auto& lease : leases) {
      if (lease) out.push_back(lease.acquisition());
    }
    return out;
  }
  if (auto a = mutex ? mutex->acquisition() : shared->acquisition()) out.push_back(std::move(*a));
  return out;
}

std::optional<unsigned> LockSet::Member::generation() const {
  const auto held = acquisitions();
  if (held.empty()) return std::nullopt;
  return held.front().generation;
}

LockRequest LockSet::Member::async_take(MemberHandler handler, AsyncLockOptions options) const {
  if (kind == Kind::kSemaphore) {
    return semaphore->async_acquire(
        count,
        [handler = std::move(handler)](std::error_code error, std::vector<Lease> taken) {
          handler(error, MemberTaken{Hold(), std::move(taken)});
        },
        std::move(options));
  }
  LockHandler on_hold = [handler = std::move(handler)](std::error_code error, Hold hold) {
    handler(error, MemberTaken{std::move(hold), {}});
  };
  switch (kind) {
    case Kind::kMutex:
      return mutex->async_lock(std::move(on_hold), std::move(options));
    case Kind::kWrite:
      return shared->async_lock(std::move(on_hold), std::move(options));
    default:
      return shared->async_lock_shared(std::move(on_hold), std::move(options));
  }
}

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

LockSet& LockSet::add(Semaphore& semaphore, int count) {
  if (count < 1 || count > semaphore.max_leases()) {
    throw InvalidArgumentError("zklock::LockSet::add: " + std::to_string(count) + " leases of \"" +
                               semaphore.path() + "\", which has " +
                               std::to_string(semaphore.max_leases()));
  }
  auto m = std::make_shared<Member>();
  m->kind = Member::Kind::kSemaphore;
  m->semaphore = &semaphore;
  m->count = count;
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
      const auto generation = m->generation();
      end = generation ? m->session().hold_end_of(*generation, false) : HoldEnd::kSessionSilent;
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
  for (const auto& m : members_) s = detail::worst(s, m->state());
  return s;
}

std::vector<Acquisition> LockSet::acquisitions() const {
  if (held_ == 0 || held_ != members_.size()) {
    throw Error(Errc::not_held, "zklock::LockSet::acquisitions: not held");
  }
  std::vector<Acquisition> out;
  for (const auto& m : members_) {
    auto held = m->acquisitions();
    if (held.empty()) throw Error(Errc::not_held, "zklock::LockSet::acquisitions: " + m->path());
    for (auto& a : held) out.push_back(std::move(a));
  }
  return out;
}

}  // namespace zklock
