#include "lock_wait.h"

#include <string.h>

#include <atomic>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

#include "duration.h"
#include "exit_codes.h"
#include "zklock/errors.h"

namespace zklock::cli {

MutexOptions cli_mutex_options(const std::string& path, const LockOptions& lock,
                               const Console& console, Wakeup& state_changed,
                               std::atomic<bool>& revocation_requested) {
  MutexOptions options;
  options.description = lock.description;
  options.lock_delay = lock.lock_delay;
  // `zklock status` and `zklock leader` show since when a CLI holder holds the lock: one write
  // after it is held, nothing for a process that runs a command.
  options.stamp_held_since = true;
  options.on_state_change = [&state_changed](LockState, const Acquisition&) {
    state_changed.notify();
  };
  if (lock.revocable) {
    options.on_revocation_requested = [&state_changed, &revocation_requested](const Acquisition&) {
      revocation_requested = true;
      state_changed.notify();
    };
  }
  if (console.verbose()) {
    options.on_queue_position = [&console, path](std::size_t ahead) {
      // 0 ahead means acquired, which is reported anyway.
      if (ahead == 0) return;
      console.note("waiting for " + path + ": " + std::to_string(ahead) +
                   (ahead == 1 ? " contender" : " contenders") + " ahead");
    };
  }
  return options;
}

void LockHandle::lock() {
  if (mutex_ != nullptr) {
    mutex_->lock();
  } else if (shared_) {
    shared_mutex_->lock_shared();
  } else {
    shared_mutex_->lock();
  }
}

bool LockHandle::try_lock_for(std::chrono::milliseconds timeout) {
  if (mutex_ != nullptr) return mutex_->try_lock_for(timeout);
  return shared_ ? shared_mutex_->try_lock_shared_for(timeout)
                 : shared_mutex_->try_lock_for(timeout);
}

void LockHandle::unlock() noexcept {
  if (mutex_ != nullptr) {
    mutex_->unlock();
  } else if (shared_) {
    shared_mutex_->unlock_shared();
  } else {
    shared_mutex_->unlock();
  }
}

void LockHandle::cancel() noexcept {
  if (mutex_ != nullptr) {
    mutex_->cancel();
  } else {
    shared_mutex_->cancel();
  }
}

LockState LockHandle::state() const noexcept {
  return mutex_ != nullptr ? mutex_->state() : shared_mutex_->state();
}

std::optional<Acquisition> LockHandle::acquisition() const {
  return mutex_ != nullptr ? mutex_->acquisition() : shared_mutex_->acquisition();
}

const std::string& LockHandle::path() const noexcept {
  return mutex_ != nullptr ? mutex_->path() : shared_mutex_->path();
}

WaitOutcome wait_for_lock(LockHandle& mutex, std::optional<std::chrono::milliseconds> timeout,
                          SignalReader& signals) {
  // The wait runs on its own thread so that this one can keep reading signals and cancel it.
  Wakeup finished;
  std::atomic<bool> done{false};
  bool acquired = false;
  std::exception_ptr error;
  std::thread locker([&] {
    try {
      if (timeout) {
        acquired = mutex.try_lock_for(*timeout);
      } else {
        mutex.lock();
        acquired = true;
      }
    } catch (const CancelledError&) {
      acquired = false;
    } catch (...) {
      error = std::current_exception();
    }
    done.store(true);
    finished.notify();
  });

  int interrupted_by = 0;
  while (!done.load()) {
    std::vector<signalfd_siginfo> pending;
    try {
      // cancel() only wakes waits already in progress: one issued before the locker thread began
      // to wait would be missed. So, once interrupted, cancel again until the locker returns.
      pending = signals.wait(finished, interrupted_by != 0 ? 20 : -1);
    } catch (const std::system_error&) {
      mutex.cancel();
      locker.join();
      throw;
    }
    for (const auto& info : pending) {
      const int sig = static_cast<int>(info.ssi_signo);
      if (SignalReader::is_termination(sig) && interrupted_by == 0) interrupted_by = sig;
      // SIGCHLD: no child yet (nothing to do).
    }
    if (interrupted_by != 0) mutex.cancel();
  }
  locker.join();

  if (error) std::rethrow_exception(error);
  if (interrupted_by != 0) {
    if (acquired) mutex.unlock();  // the signal came as the lock was granted: do not keep it
    return {WaitOutcome::Result::kInterrupted, interrupted_by};
  }
  return {acquired ? WaitOutcome::Result::kAcquired : WaitOutcome::Result::kTimedOut, 0};
}

int not_acquired(const WaitOutcome& outcome, const std::string& path, const LockOptions& lock,
                 const Console& console) {
  if (outcome.result == WaitOutcome::Result::kInterrupted) {
    console.error("interrupted by " + signal_name(outcome.signal) + " while waiting for " + path +
                  "; left the queue");
    return exit_code::kSignalBase + outcome.signal;
  }
  console.error("timed out after " +
                format_duration(lock.timeout.value_or(std::chrono::milliseconds(0))) +
                " waiting for " + path);
  return exit_code::kTimedOut;
}

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

}  // namespace zklock::cli
