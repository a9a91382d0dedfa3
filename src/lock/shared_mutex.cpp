#include "zklock/shared_mutex.h"

#include "base/paths.h"
#include "lock/mutex_core.h"
#include "zklock/errors.h"

namespace zklock {
namespace {

ContenderKind kind_of(bool shared) { return shared ? ContenderKind::kRead : ContenderKind::kWrite; }

}  // namespace

// As in Mutex: every member works on a copy of core_ taken on entry, so a thread still inside a
// lock call when another destroys the object touches nothing of it on the way out.

SharedMutex::SharedMutex(Session& session, std::string path, MutexOptions options) {
  detail::validate_lock_path(path);
  if (options.lock_delay.count() != 0) {
    throw InvalidArgumentError(
        "zklock::SharedMutex(\"" + path +
        "\"): lock_delay is a Mutex option (readers release without a mark)");
  }
  core_ = std::make_shared<detail::MutexCore>(detail::SessionAccess::core(session), std::move(path),
                                              std::move(options), /*read_write=*/true);
  core_->attach();
}

SharedMutex::~SharedMutex() { core_->shutdown(); }

void SharedMutex::lock() {
  const std::shared_ptr<detail::MutexCore> core = core_;
  if (!core->acquire(ContenderKind::kWrite, std::nullopt, false, true)) {
    throw Error(Errc::operation_timeout, core->context() + "::lock: not acquired");
  }
}

void SharedMutex::lock_shared() {
  const std::shared_ptr<detail::MutexCore> core = core_;
  if (!core->acquire(ContenderKind::kRead, std::nullopt, false, true)) {
    throw Error(Errc::operation_timeout, core->context() + "::lock_shared: not acquired");
  }
}

bool SharedMutex::try_lock() {
  const std::shared_ptr<detail::MutexCore> core = core_;
  return core->acquire(ContenderKind::kWrite, std::chrono::steady_clock::now(), true, false);
}

bool SharedMutex::try_lock_shared() {
  const std::shared_ptr<detail::MutexCore> core = core_;
  return core->acquire(ContenderKind::kRead, std::chrono::steady_clock::now(), true, false);
}

bool SharedMutex::try_lock_until_steady(
    bool shared, std::optional<std::chrono::steady_clock::time_point> deadline) {
  const std::shared_ptr<detail::MutexCore> core = core_;
  return core->acquire(kind_of(shared), deadline, false, false);
}

bool SharedMutex::try_downgrade() {
  const std::shared_ptr<detail::MutexCore> core = core_;
  return core->downgrade();
}

LockRequest SharedMutex::async_lock(LockHandler handler, AsyncLockOptions options) {
  return detail::async_lock(core_, ContenderKind::kWrite, std::move(handler), std::move(options));
}
LockRequest SharedMutex::async_lock_shared(LockHandler handler, AsyncLockOptions options) {
  return detail::async_lock(core_, ContenderKind::kRead, std::move(handler), std::move(options));
}
std::future<Hold> SharedMutex::lock_future(AsyncLockOptions options) {
  return detail::lock_future(core_, ContenderKind::kWrite, std::move(options));
}
std::future<Hold> SharedMutex::lock_shared_future(AsyncLockOptions options) {
  return detail::lock_future(core_, ContenderKind::kRead, std::move(options));
}

void SharedMutex::unlock() noexcept { core_->release({ContenderKind::kWrite}); }
void SharedMutex::unlock_shared() noexcept { core_->release({ContenderKind::kRead}); }
void SharedMutex::cancel() noexcept { core_->cancel(); }
LockState SharedMutex::state() const noexcept { return core_->state(); }
bool SharedMutex::owns_lock() const noexcept {
  const LockState s = core_->state();
  return s == LockState::kHeld || s == LockState::kSuspended;
}
bool SharedMutex::owns_shared() const noexcept {
  try {
    const auto a = core_->acquisition();
    return a && a->shared && owns_lock();
  } catch (...) {  // copying the acquisition could only fail to allocate
    return false;
  }
}
std::optional<Acquisition> SharedMutex::acquisition() const { return core_->acquisition(); }
FencingToken SharedMutex::fencing_token() const {
  auto a = core_->acquisition();
  if (!a) throw Error(Errc::not_held, core_->context() + "::fencing_token: not held");
  return a->token();
}
void SharedMutex::commit_fenced(const FencedWrite& writes) const {
  const std::shared_ptr<detail::MutexCore> core = core_;
  detail::commit_fenced(core, writes);
}
bool SharedMutex::wait_lost_for(std::chrono::milliseconds timeout) const {
  const std::shared_ptr<detail::MutexCore> core = core_;
  return core->wait_lost_until(detail::deadline_after(timeout));
}
std::vector<Contender> SharedMutex::contenders() const { return core_->contenders(); }
const std::string& SharedMutex::path() const noexcept { return core_->path(); }

}  // namespace zklock
