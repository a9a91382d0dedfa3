#include "zklock/mutex.h"

#include "mutex_core.h"
#include "paths.h"
#include "zklock/errors.h"

namespace zklock {

Mutex::Mutex(Session& session, std::string path, MutexOptions options) {
  detail::validate_lock_path(path);
  core_ = std::make_shared<detail::MutexCore>(session.core_ptr(), std::move(path), std::move(options));
  core_->attach();
}

Mutex::~Mutex() { core_->shutdown(); }

void Mutex::lock() {
  switch (core_->acquire(std::nullopt, false)) {
    case detail::MutexCore::Outcome::kAcquired: return;
    case detail::MutexCore::Outcome::kCancelled:
      throw CancelledError("zklock::Mutex(\"" + path() + "\")::lock: cancelled");
    default:
      throw Error(Errc::operation_timeout, "zklock::Mutex(\"" + path() + "\")::lock: not acquired");
  }
}

bool Mutex::try_lock() {
  return core_->acquire(std::chrono::steady_clock::now(), true) ==
         detail::MutexCore::Outcome::kAcquired;
}

bool Mutex::try_lock_until_steady(std::chrono::steady_clock::time_point deadline) {
  return core_->acquire(deadline, false) == detail::MutexCore::Outcome::kAcquired;
}

void Mutex::unlock() noexcept { core_->release(); }
void Mutex::cancel() noexcept { core_->cancel(); }
LockState Mutex::state() const noexcept { return core_->state(); }
bool Mutex::owns_lock() const noexcept {
  const LockState s = core_->state();
  return s == LockState::kHeld || s == LockState::kSuspended;
}
std::optional<Acquisition> Mutex::acquisition() const { return core_->acquisition(); }
FencingToken Mutex::fencing_token() const {
  auto a = core_->acquisition();
  if (!a) throw Error(Errc::not_held, "zklock::Mutex(\"" + path() + "\")::fencing_token: not held");
  return a->token();
}
bool Mutex::wait_lost_for(std::chrono::milliseconds timeout) const {
  return core_->wait_lost_until(std::chrono::steady_clock::now() + timeout);
}
std::vector<Contender> Mutex::contenders() const { return core_->contenders(); }
const std::string& Mutex::path() const noexcept { return core_->path(); }

}  // namespace zklock
