// tests/support/process.h: child processes (servers, helpers) that never outlive the test.
//
// Guarantees about cleanup, strongest first:
//  * Every child is started with PR_SET_PDEATHSIG = SIGKILL. The kernel delivers it when the
//    *thread* that forked the child exits, so all forks happen on one dedicated spawner thread
//    that lives until the process ends: a child dies with the test process however that process
//    ends (even SIGKILL, e.g. a ctest timeout), and never because the test thread that asked for
//    it finished.
//  * A process-wide registry of live children (a fixed array of PIDs) is SIGKILLed by an atexit
//    handler and by a handler for SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM and SIGINT
//    (async-signal-safe: kill() over the array), which then chains to the previously installed
//    handler (GoogleTest, sanitizers) or to the default action. The handlers are installed by the
//    first ChildProcess. A process forked without exec (a "fast" death test) that aborts or exits
//    does not kill the children of the process it was forked from.
//  * ~ChildProcess stops the child (SIGCONT, SIGTERM, SIGKILL after a grace period) and reaps it.
//
// Each child runs in its own process group; signals are sent to the whole group, so whatever the
// child itself spawned is signalled too.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace zklock::testing {

// How to start a child process.
struct SpawnOptions {
  // File receiving the child's stdout and stderr, opened in append mode (created if missing), so
  // a restarted child keeps adding to the same log. Empty: both go to /dev/null.
  std::string log_path;
  // Working directory of the child. Empty: the parent's.
  std::string working_dir;
  // Extra environment entries "NAME=VALUE", added to (and overriding) the inherited environment.
  std::vector<std::string> extra_env;
};

// One child process, started by the constructor and stopped by the destructor.
// Not copyable or movable (hold it in a std::unique_ptr). All member functions are thread-safe.
class ChildProcess {
 public:
  // Starts argv[0] (looked up in PATH when it contains no '/') with arguments argv.
  // Returns once the child has exec'ed. Throws std::invalid_argument when argv is empty and
  // std::runtime_error (with the errno text) when the log file cannot be opened, the program is
  // not found, or fork/exec fails.
  explicit ChildProcess(std::vector<std::string> argv, SpawnOptions options = {});
  ~ChildProcess();  // stop(), reaping the child whatever happens.

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // PID of the child (also its process-group id). Stays valid after exit; once the child has been
  // reaped the number may belong to another process, so do not signal it yourself.
  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return options_.log_path; }

  // Sends `sig` to the child's process group. Returns false (and sends nothing) when the child
  // has already been reaped.
  bool signal(int sig);

  // Graceful stop: SIGCONT (a frozen child cannot act on SIGTERM), SIGTERM, then SIGKILL if the
  // child is still alive after `grace`. Waits until the child is reaped and returns its wait
  // status (see <sys/wait.h> WIFEXITED...). Returns the stored status if it had already exited.
  int stop(std::chrono::milliseconds grace = std::chrono::seconds(10));

  // SIGKILL, then waits until the child is reaped. Returns its wait status.
  int kill();

  // SIGSTOP / SIGCONT to the process group: a frozen child keeps its sockets open but answers
  // nothing, like a machine that hangs. freeze() on an exited child does nothing.
  void freeze();
  void thaw();
  bool frozen() const;

  // True while the child has not exited (a frozen child is running). Reaps it if it has exited.
  bool running();

  // Waits up to `timeout` for the child to exit. Returns its wait status, or std::nullopt if it
  // is still running at the deadline. Returns at once when it had already exited.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);

 private:
  // Non-blocking reap; updates status_. Requires mutex_ held. Returns true once reaped.
  bool reap_locked();

  const std::vector<std::string> argv_;
  const SpawnOptions options_;
  pid_t pid_ = -1;
  mutable std::mutex mutex_;
  std::optional<int> status_;  // wait status once reaped
  bool frozen_ = false;
};

// True when process `pid` exists and is not a zombie (an exited child nobody has reaped yet is
// "gone" for our purposes: it holds no sockets and runs no code).
bool pid_alive(pid_t pid);

// True when process `pid` is stopped (SIGSTOP): state 'T' in /proc/<pid>/stat. False when it runs,
// sleeps, or does not exist.
bool process_stopped(pid_t pid);

// The last `max_bytes` bytes of the file at `path` (the whole file when smaller); empty string when
// it cannot be read. Used to put a server's log into an error message.
std::string tail_file(const std::string& path, std::size_t max_bytes = 4000);

// Every thread's stack of process `pid` (gdb -p, at most 60 s), for the message of a test whose
// child is stuck; a line saying why not when gdb is missing or cannot attach.
std::string thread_stacks(pid_t pid);

// Describes a wait status for messages: "exited with 3", "killed by signal 9 (Killed)".
std::string describe_wait_status(int status);

}  // namespace zklock::testing
