#include "zklock/mutex.h"

#include "base/paths.h"
#include "lock/mutex_core.h"
#include "zklock/errors.h"

namespace zklock {
namespace {
constexpr ContenderKind kExclusive = ContenderKind::kExclusive;
}  // namespace

// Every member works on a copy of core_ taken on entry: a thread still inside lock() when another
// thread destroys the Mutex keeps the core alive, and touches nothing of the destroyed object on
// its way out (~Mutex waits for it to leave the core).

Mutex::Mutex(Session& session, std::string path, MutexOptions options) {
  detail::validate_lock_path(path);
  if (options.lock_delay.count() < 0) {
    throw InvalidArgumentError("zklock::Mutex(\"" + path + "\"): lock_delay must not be negative");
  }
  core_ = std::make_shared<detail::MutexCore>(detail::SessionAccess::core(session), std::move(path),
                                              std::move(options));
  core_->attach();
}

Mutex::~Mutex() { core_->shutdown(); }

void Mutex::lock() {
  const std::shared_ptr<detail::MutexCore> core = core_;
  if (!core->acquire(kExclusive, std::nullopt, false, true)) {
    throw Error(Errc::operation_timeout,
                "zklock::Mutex(\"" + core->path() + "\")::lock: not acquired");
  }
}

bool Mutex::try_lock() {
  const std::shared_ptr<detail::MutexCore> core = core_;
  return core->acquire(kExclusive, std::chrono::steady_clock::now(), true, false);
}

bool Mutex::try_lock_until_steady(std::optional<std::chrono::steady_clock::time_point> deadline) {
  const std::shared_ptr<detail::MutexCore> core = core_;
  return core->acquire(kExclusive, deadline, false, false);
}

LockRequest Mutex::async_lock(LockHandler handler, AsyncLockOptions options) {
  return detail::async_lock(core_, kExclusive, std::move(handler), std::move(options));
}
std::future<Hold> Mutex::lock_future(AsyncLockOptions options) {
  return detail::lock_future(core_, kExclusive, std::move(options));
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
  const std::shared_ptr<detail::MutexCore> core = core_;
  return core->wait_lost_until(detail::deadline_after(timeout));
}
std::vector<Contender> Mutex::contenders() const { return core_->contenders(); }
const std::string& Mutex::path() const noexcept { return core_->path(); }

}  // namespace zklock
