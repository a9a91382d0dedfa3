// Signals in `zklock exec` and `zklock hold`: read from a file descriptor, never handled.
//
// A handler may only do async-signal-safe work, and zklock must do much more on a signal (cancel a
// wait, release a lock, forward it to the command). So SIGINT, SIGTERM, SIGHUP and SIGCHLD are
// blocked in every thread (the mask is set before the first thread exists, and threads inherit it)
// and read from a signalfd by the supervising loop, which can then do anything.
//
// Signals the invoker left ignored - `nohup` ignores SIGHUP, a non-interactive shell's `cmd &`
// ignores SIGINT - stay ignored: zklock neither reads nor forwards them, and the command inherits
// them ignored, as it would without zklock.
#pragma once

#include <signal.h>
#include <sys/signalfd.h>

#include <vector>

#include "wakeup.h"

namespace zklock::cli {

class SignalReader {
 public:
  /// Blocks SIGINT, SIGTERM, SIGHUP (unless ignored) and SIGCHLD in the calling thread and opens a
  /// signalfd for them. Must be called while the process has a single thread. Makes SIGCHLD's
  /// action the default one (an inherited SIG_IGN would let the kernel reap the command before
  /// its exit status could be read). Throws std::system_error on failure.
  SignalReader();
  ~SignalReader();
  SignalReader(const SignalReader&) = delete;
  SignalReader& operator=(const SignalReader&) = delete;

  /// Readable (poll) while signals are pending.
  int fd() const noexcept { return fd_; }

  /// Returns: every pending signal, oldest first; empty when none (never blocks).
  std::vector<signalfd_siginfo> read_pending();

  /// The supervising loops' wait: until a signal is pending, `other` is notified, or `timeout_ms`
  /// has passed (-1: no limit; an interrupted wait counts as a wakeup). Clears `other`.
  /// Returns: read_pending(). Throws std::system_error when poll fails.
  std::vector<signalfd_siginfo> wait(Wakeup& other, int timeout_ms);

  /// True for the signals that end a wait or the hold, and that exec forwards to its command:
  /// SIGINT, SIGTERM, SIGHUP - those zklock reads (not ignored ones).
  static bool is_termination(int signal) noexcept;

  /// In a forked child, before exec: restores the signal mask and the actions zklock inherited.
  /// Async-signal-safe.
  void restore_in_child() const noexcept;

 private:
  int fd_ = -1;
  sigset_t original_mask_{};
  static constexpr int kTouched[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};
  struct sigaction original_actions_[sizeof kTouched / sizeof kTouched[0]] = {};
};

}  // namespace zklock::cli
