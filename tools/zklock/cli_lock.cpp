#include "cli_lock.h"

#include <utility>

#include "lock_wait.h"

namespace zklock::cli {

CliLock::CliLock(const std::string& path, const CommonOptions& common, const LockOptions& lock,
                 const Console& console)
    : path_(path),
      lock_(lock),
      console_(console),
      // The lock path's figures apart: --metrics-listen shows them as path="LOCK_PATH".
      session_(open_session(common, console, {path})) {
  MutexOptions options =
      cli_mutex_options(path, lock, console, state_changed_, revocation_requested_);
  if (lock.mode == LockMode::kExclusive) {
    handle_.emplace(mutex_.emplace(*session_, path, std::move(options)));
  } else {
    handle_.emplace(shared_mutex_.emplace(*session_, path, std::move(options)),
                    lock.mode == LockMode::kShared);
  }
}

std::optional<int> CliLock::acquire(SignalReader& signals) {
  const WaitOutcome waited = wait_for_lock(*handle_, lock_.timeout, signals);
  if (waited.result == WaitOutcome::Result::kAcquired) return std::nullopt;
  release();
  return not_acquired(waited, path_, lock_, console_);
}

void CliLock::release() {
  handle_.reset();
  mutex_.reset();
  shared_mutex_.reset();
  if (session_) session_->close();
}

}  // namespace zklock::cli
