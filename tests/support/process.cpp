// tests/support/process.cpp: see process.h for the cleanup guarantees.
#include "support/process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "support/files.h"
#include "support/unique_fd.h"
#include "support/wait.h"

extern char** environ;  // NOLINT: POSIX global

namespace zklock::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Registry of live children, read by signal handlers: a fixed array of atomics, no allocation.
// A slot holds a PID from just after fork until just before the child is reaped (removal happens
// before the reap, so a handler never signals a PID the kernel may already have recycled).
//
// Each slot also records which process registered the child: a process forked without exec (a
// GoogleTest death test, "fast" style) inherits a copy of the registry and of the handlers, and
// its abort() or exit() must not kill its parent's servers. Slot = owner pid << 32 | child pid.

constexpr std::size_t kMaxChildren = 1024;
std::array<std::atomic<uint64_t>, kMaxChildren> g_children;  // 0 = free; zeroed (static storage)

static_assert(std::atomic<uint64_t>::is_always_lock_free, "signal handlers need lock-free atomics");

uint64_t registry_entry(pid_t owner, pid_t child) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(owner)) << 32) | static_cast<uint32_t>(child);
}

void register_child(pid_t pid) {
  const uint64_t entry = registry_entry(getpid(), pid);
  for (auto& slot : g_children) {
    uint64_t expected = 0;
    if (slot.compare_exchange_strong(expected, entry)) return;
  }
  // Not fatal: PR_SET_PDEATHSIG and the destructor still clean up.
  std::fprintf(stderr, "zklock test support: child registry full, pid %d not registered\n", pid);
}

void unregister_child(pid_t pid) {
  const uint64_t entry = registry_entry(getpid(), pid);
  for (auto& slot : g_children) {
    uint64_t expected = entry;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

// Async-signal-safe: only getpid(), kill() and atomic loads. Kills the children this process
// registered, never those of the process it was forked from.
void kill_all_children() {
  const pid_t self = getpid();
  for (auto& slot : g_children) {
    const uint64_t entry = slot.load();
    const auto owner = static_cast<pid_t>(entry >> 32);
    const auto pid = static_cast<pid_t>(entry & 0xffffffffU);
    if (entry != 0 && owner == self && pid > 0) {
      ::kill(-pid, SIGKILL);  // the child's process group (the child and what it spawned)
      ::kill(pid, SIGKILL);   // in case the group is gone or was never created
    }
  }
}

// Signals after which the process is about to die: kill the children first, then let the
// previously installed handler (or the default action) proceed.
constexpr std::array<int, 7> kFatalSignals = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE,
                                              SIGILL,  SIGTERM, SIGINT};
std::array<struct sigaction, NSIG> g_previous_actions;

void fatal_signal_handler(int sig, siginfo_t* info, void* context) {
  kill_all_children();
  const struct sigaction& previous = g_previous_actions[static_cast<std::size_t>(sig)];
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    if (previous.sa_sigaction != nullptr) {
      previous.sa_sigaction(sig, info, context);
      return;
    }
  } else if (previous.sa_handler == SIG_IGN) {
    return;
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != nullptr) {
    previous.sa_handler(sig);
    return;
  }
  // Default action: restore it and re-raise. The signal is blocked while this handler runs, so
  // it is delivered (and kills the process, with the right status) as soon as we return.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);
}

void install_cleanup_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit(kill_all_children);
    for (int sig : kFatalSignals) {
      struct sigaction action {};
      action.sa_sigaction = fatal_signal_handler;
      action.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&action.sa_mask);
      sigaction(sig, &action, &g_previous_actions[static_cast<std::size_t>(sig)]);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// The spawner thread: every fork happens here, so PR_SET_PDEATHSIG (which fires when the forking
// *thread* exits) only fires when the whole process goes away. It lives until the process exits
// (detached, never destroyed), and blocks all signals so that children start with every signal
// blocked until they have reset the dispositions inherited from us (see run_child).

class Spawner {
 public:
  // The spawner of this process. A process forked without exec (a "fast" death test) has no
  // spawner thread, only a copy of its parent's Spawner object: it gets a new one.
  static Spawner& instance() {
    static std::mutex mutex;
    static Spawner* spawner = nullptr;  // intentionally leaked: must outlive exit()
    static pid_t owner = 0;
    std::lock_guard<std::mutex> lock(mutex);
    if (spawner == nullptr || owner != getpid()) {
      spawner = new Spawner();
      owner = getpid();
    }
    return *spawner;
  }

  // Runs `job` on the spawner thread and returns its result (or rethrows its exception).
  pid_t run(std::function<pid_t()> job) {
    std::packaged_task<pid_t()> task(std::move(job));
    auto result = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(task));
    }
    cv_.notify_one();
    return result.get();
  }

 private:
  Spawner() {
    std::thread([this] { loop(); }).detach();
  }

  void loop() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, nullptr);
    for (;;) {
      std::packaged_task<pid_t()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return !queue_.empty(); });
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<pid_t()>> queue_;
};

// Everything the child needs, prepared before fork: between fork and exec only async-signal-safe
// calls are allowed (no allocation), because other threads may have held locks at fork time.
struct ChildPlan {
  std::string program;
  std::vector<char*> argv;
  std::vector<char*> envp;
  const char* working_dir = nullptr;
  int stdin_fd = -1;
  int output_fd = -1;
  int error_pipe = -1;  // write end, close-on-exec: reading EOF in the parent means exec succeeded
  pid_t parent_pid = -1;
};

[[noreturn]] void child_fail(int error_pipe) {
  const int error = errno;
  ssize_t ignored = ::write(error_pipe, &error, sizeof error);
  (void)ignored;
  _exit(127);
}

[[noreturn]] void run_child(const ChildPlan& plan) {
  setpgid(0, 0);
  // Die with the spawner thread, i.e. with the test process. If the process already died before
  // prctl took effect, our parent is now someone else: give up.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != plan.parent_pid) _exit(127);

  // Our handlers must not run in the child (they would kill the parent's children via the copied
  // registry), and an ignored SIGPIPE would survive exec: reset to default, then unblock.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig : kFatalSignals) sigaction(sig, &dfl, nullptr);
  sigaction(SIGPIPE, &dfl, nullptr);

  if (plan.working_dir != nullptr && chdir(plan.working_dir) != 0) child_fail(plan.error_pipe);
  if (dup2(plan.stdin_fd, STDIN_FILENO) < 0 || dup2(plan.output_fd, STDOUT_FILENO) < 0 ||
      dup2(plan.output_fd, STDERR_FILENO) < 0) {
    child_fail(plan.error_pipe);
  }
  // Do not leak the test's sockets and files (a ZooKeeper client's connection held open by a
  // server JVM would hide disconnects) into the child: mark every other descriptor close-on-exec.
#if defined(SYS_close_range) && defined(CLOSE_RANGE_CLOEXEC)
  if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
#endif
  {
    for (int fd = 3; fd < 65536; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }

  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // NOLINT(concurrency-mt-unsafe): one thread here
  execve(plan.program.c_str(), plan.argv.data(), plan.envp.data());
  child_fail(plan.error_pipe);
}

std::string errno_text(const std::string& what, int error) {
  return what + ": " + std::generic_category().message(error);
}

// argv[0] resolved like execvp would, but before fork (execvp may allocate).
std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path_env = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): no setenv()
  const std::string path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = path.find(':', begin);
    std::string dir =
        path.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (dir.empty()) dir = ".";
    std::string candidate = dir;
    candidate += '/';
    candidate += name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  throw std::runtime_error("cannot start '" + name + "': not found in PATH (" + path + ")");
}

// Opens `path` close-on-exec at a descriptor >= 3 (so dup2 onto 0/1/2 in the child never
// collides with it, even if the parent runs with a standard descriptor closed).
int open_high_cloexec(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(errno_text("cannot open '" + path + "'", errno));
  if (fd >= 3) return fd;
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  const int error = errno;
  ::close(fd);
  if (high < 0) throw std::runtime_error(errno_text("fcntl(F_DUPFD_CLOEXEC)", error));
  return high;
}

// 'R', 'S', 'T', 'Z'... from /proc/<pid>/stat; '\0' when unreadable (no such process).
char state_in_stat(const std::string& stat) {
  const std::size_t paren = stat.rfind(')');  // the command name may contain spaces and parens
  if (paren == std::string::npos || paren + 2 >= stat.size()) return '\0';
  return stat[paren + 2];
}

char process_state(pid_t pid) {
  return state_in_stat(read_file("/proc/" + std::to_string(pid) + "/stat"));
}

// True when no thread of `pid` can run user code before being stopped (or the process is gone:
// nothing left to wait for).
bool all_threads_stopped(pid_t pid) {
  std::error_code error;
  const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& entry : std::filesystem::directory_iterator(task_dir, error)) {
    const char state = state_in_stat(read_file((entry.path() / "stat").string()));
    // '\0': the thread just exited. R or S: may still be on its way to the stop. D
    // (uninterruptible, e.g. a vfork parent whose child got stopped): it handles the pending
    // SIGSTOP before it can run user code again.
    if (state == 'R' || state == 'S') return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

ChildProcess::ChildProcess(std::vector<std::string> argv, SpawnOptions options)
    : argv_(std::move(argv)), options_(std::move(options)) {
  if (argv_.empty()) throw std::invalid_argument("ChildProcess: empty argv");
  install_cleanup_handlers();

  ChildPlan plan;
  plan.program = resolve_program(argv_[0]);
  std::vector<std::string> argv_copy = argv_;
  for (auto& arg : argv_copy) plan.argv.push_back(arg.data());
  plan.argv.push_back(nullptr);

  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::string name = text.substr(0, text.find('='));
    bool overridden = false;
    for (const auto& extra : options_.extra_env) {
      if (extra.substr(0, extra.find('=')) == name) overridden = true;
    }
    if (!overridden) env.push_back(text);
  }
  env.insert(env.end(), options_.extra_env.begin(), options_.extra_env.end());
  for (auto& entry : env) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
  if (!options_.working_dir.empty()) plan.working_dir = options_.working_dir.c_str();

  // Descriptors, closed on every path out of this constructor.
  const UniqueFd in(open_high_cloexec("/dev/null", O_RDONLY));
  const UniqueFd out(open_high_cloexec(options_.log_path.empty() ? "/dev/null" : options_.log_path,
                                       O_WRONLY | O_CREAT | O_APPEND));
  std::array<int, 2> pipe_fds{};
  if (pipe2(pipe_fds.data(), O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe2", errno));
  const UniqueFd pipe_read(pipe_fds[0]);
  UniqueFd pipe_write(pipe_fds[1]);
  plan.stdin_fd = in.get();
  plan.output_fd = out.get();
  plan.error_pipe = pipe_write.get();
  plan.parent_pid = getpid();

  pid_ = Spawner::instance().run([&plan]() -> pid_t {
    const pid_t pid = fork();
    if (pid == 0) run_child(plan);
    if (pid < 0) throw std::runtime_error(errno_text("fork", errno));
    register_child(pid);
    return pid;
  });

  // EOF on the pipe: exec succeeded (the write end was closed by exec). An int: exec failed.
  pipe_write.reset();
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(pipe_read.get(), &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    unregister_child(pid_);
    int status = 0;
    waitpid(pid_, &status, 0);
    status_ = status;
    throw std::runtime_error(errno_text("cannot start '" + plan.program + "'", child_errno));
  }
}

ChildProcess::~ChildProcess() {
  try {
    stop();
  } catch (...) {
    // Destructors must not throw; stop() only throws on impossible waitpid failures.
  }
}

bool ChildProcess::reap_locked() {
  if (status_) return true;
  siginfo_t info{};
  // WNOWAIT: look without reaping, so the PID leaves the registry before it can be recycled.
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    // ECHILD: someone else reaped it (SIGCHLD ignored?). Its status is unknown.
    unregister_child(pid_);
    status_ = -1;
    return true;
  }
  if (info.si_pid == 0) return false;  // still running
  unregister_child(pid_);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
  frozen_ = false;
  return true;
}

bool ChildProcess::signal(int sig) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_) return false;
  if (::kill(-pid_, sig) != 0) ::kill(pid_, sig);
  return true;
}

bool ChildProcess::running() {
  std::lock_guard<std::mutex> lock(mutex_);
  return !reap_locked();
}

bool ChildProcess::frozen() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return frozen_;
}

std::optional<int> ChildProcess::wait_exit(std::chrono::milliseconds timeout) {
  std::optional<int> result;
  wait_until(
      [&] {
        std::lock_guard<std::mutex> lock(mutex_);
        if (reap_locked()) result = status_;
        return result.has_value();
      },
      timeout, std::chrono::milliseconds(2));
  return result;
}

int ChildProcess::kill() {
  signal(SIGKILL);
  // SIGKILL cannot be caught or blocked, and also ends a stopped process: this returns quickly.
  for (;;) {
    if (auto status = wait_exit(std::chrono::seconds(60))) return *status;
    std::fprintf(stderr, "zklock test support: pid %d survives SIGKILL for 60 s\n", pid_);
  }
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (reap_locked()) return *status_;
  }
  // SIGCONT first: a stopped process would only act on SIGTERM once continued.
  signal(SIGCONT);
  signal(SIGTERM);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    frozen_ = false;
  }
  if (auto status = wait_exit(grace)) return *status;
  return kill();
}

void ChildProcess::freeze() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (reap_locked()) return;
    ::kill(-pid_, SIGSTOP);
    frozen_ = true;
  }
  // kill() returns before the group stop completes: wait (at most 2 s) until the kernel reports
  // every thread stopped, so the caller can rely on "frozen" right away.
  wait_until([this] { return all_threads_stopped(pid_); }, std::chrono::seconds(2),
             std::chrono::milliseconds(1));
}

void ChildProcess::thaw() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (reap_locked()) return;
  ::kill(-pid_, SIGCONT);
  frozen_ = false;
}

// ---------------------------------------------------------------------------------------------

bool process_stopped(pid_t pid) { return process_state(pid) == 'T'; }

bool pid_alive(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  const char state = process_state(pid);
  // Unreadable /proc entry although kill() found it: assume alive rather than hide a leak.
  return state != 'Z' && state != 'X';
}

std::string tail_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > static_cast<std::streamoff>(max_bytes)
                                   ? size - static_cast<std::streamoff>(max_bytes)
                                   : 0;
  in.seekg(start);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string thread_stacks(pid_t pid) {
  const std::string command =
      "timeout 60 gdb -p " + std::to_string(pid) + " -batch -nx -ex 'thread apply all bt' 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> gdb(::popen(command.c_str(), "r"), &::pclose);
  if (!gdb) return "(no stacks: popen failed)\n";
  std::string out;
  std::array<char, 4096> chunk{};
  while (const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), gdb.get())) {
    out.append(chunk.data(), n);
  }
  if (out.find("Thread ") == std::string::npos) return "(no stacks from gdb: " + out + ")\n";
  return out;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = sigdescr_np(WTERMSIG(status));  // strsignal is not thread-safe
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           (name != nullptr ? name : "?") + ")";
  }
  return "unknown wait status " + std::to_string(status);
}

}  // namespace zklock::testing
