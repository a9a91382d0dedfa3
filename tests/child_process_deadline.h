// tests/child_process_deadline.h: runs a piece of a test in a forked child with a deadline, so that
// a hang (a deadlock under test) fails the test instead of hanging the test binary.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

namespace zklock::testing {

enum class ChildOutcome { kPassed, kFailed, kHung, kCrashed };

/// Forks; the child runs `body` and exits 0 if it returned true, 1 if false or it threw. The parent
/// waits up to `deadline`; a child still running then is killed (SIGKILL) and kHung is returned. A
/// child killed by a signal (a crash) gives kCrashed. The child leaves with _exit: nothing of the
/// parent's (servers, atexit handlers) is torn down by it.
inline ChildOutcome run_in_child(const std::function<bool()>& body,
                                 std::chrono::milliseconds deadline) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    bool ok = false;
    try {
      ok = body();
    } catch (...) {
      ok = false;
    }
    ::_exit(ok ? 0 : 1);
  }
  if (pid < 0) return ChildOutcome::kFailed;
  const auto until = std::chrono::steady_clock::now() + deadline;
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() >= until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return ChildOutcome::kHung;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFSIGNALED(status)) return ChildOutcome::kCrashed;
  return WEXITSTATUS(status) == 0 ? ChildOutcome::kPassed : ChildOutcome::kFailed;
}

inline const char* to_string(ChildOutcome o) {
  switch (o) {
    case ChildOutcome::kPassed: return "passed";
    case ChildOutcome::kFailed: return "failed";
    case ChildOutcome::kHung: return "hung (killed at the deadline)";
    case ChildOutcome::kCrashed: return "crashed";
  }
  return "?";
}

}  // namespace zklock::testing
