#include "cli_lock.h"

#include "lock_wait.h"

namespace zklock::cli {

CliLock::CliLock(const std::string& path, const CommonOptions& common, const LockOptions& lock,
                 const Console& console)
    : path_(path), lock_(lock), console_(console), session_(open_session(common, console)) {
  mutex_.emplace(*session_, path, cli_mutex_options(path, lock, console, state_changed_));
}

std::optional<int> CliLock::acquire(SignalReader& signals) {
  const WaitOutcome waited = wait_for_lock(*mutex_, lock_.timeout, signals);
  if (waited.result == WaitOutcome::Result::kAcquired) return std::nullopt;
  release();
  return not_acquired(waited, path_, lock_, console_);
}

void CliLock::release() {
  mutex_.reset();
  if (session_) session_->close();
}

}  // namespace zklock::cli
