#include "command.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <system_error>

#include "exit_codes.h"

extern char** environ;

namespace zklock::cli {
namespace {

// Everything the child needs, prepared before fork: after it, no allocation, no locks.
struct ChildPlan {
  const char* program = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  bool own_process_group = true;
  pid_t parent = -1;
  int error_pipe = -1;  // write end, close-on-exec: EOF in the parent means the exec succeeded
  const std::pair<unsigned, unsigned>* close_ranges = nullptr;  // [first, last], inclusive
  std::size_t close_range_count = 0;
  const SignalReader* signals = nullptr;
};

[[noreturn]] void child_fail(int error_pipe, int error) {
  ssize_t ignored = ::write(error_pipe, &error, sizeof error);
  (void)ignored;
  _exit(exit_code::kNotFound);
}

void close_descriptor_range(unsigned first, unsigned last) {
  if (::close_range(first, last, 0) == 0) return;
  for (unsigned fd = first; fd <= last && fd < static_cast<unsigned>(INT_MAX); ++fd) {
    ::close(static_cast<int>(fd));
  }
}

[[noreturn]] void run_child(const ChildPlan& plan) {
  if (plan.own_process_group) setpgid(0, 0);
  // If zklock dies (even by SIGKILL), nobody would stop the command when the lock expires: die too.
  // If zklock already died before prctl took effect, our parent is someone else now: give up.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != plan.parent) _exit(exit_code::kSignalBase + SIGKILL);

  for (std::size_t i = 0; i < plan.close_range_count; ++i) {
    close_descriptor_range(plan.close_ranges[i].first, plan.close_ranges[i].second);
  }
  plan.signals->restore_in_child();
  execve(plan.program, plan.argv, plan.envp);
  child_fail(plan.error_pipe, errno);
}

bool is_executable_file(const std::string& path, int& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = errno;
    return false;
  }
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) {
    error = EACCES;
    return false;
  }
  return true;
}

// Closes every descriptor from 3 up that is not in `keep` (sorted): the gaps between them.
std::vector<std::pair<unsigned, unsigned>> ranges_to_close(std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  std::vector<std::pair<unsigned, unsigned>> ranges;
  unsigned next = 3;
  for (const int fd : keep) {
    if (fd < 3) continue;
    const auto ufd = static_cast<unsigned>(fd);
    if (ufd > next) ranges.emplace_back(next, ufd - 1);
    next = std::max(next, ufd + 1);
  }
  // Up to the descriptor limit: close_range() takes ~0U, but the fallback loop needs an end.
  struct rlimit limit {};
  unsigned last = 65535;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      limit.rlim_cur > 0) {
    last = static_cast<unsigned>(std::min<rlim_t>(limit.rlim_cur - 1, UINT_MAX - 1));
  }
  if (next <= last) ranges.emplace_back(next, last);
  return ranges;
}

}  // namespace

std::vector<int> open_descriptors() {
  std::vector<int> fds;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return {0, 1, 2};  // no /proc: pass on the standard three only
  const int own = ::dirfd(dir);
  // NOLINTNEXTLINE(concurrency-mt-unsafe): called at startup, before any other thread exists
  while (const dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && fd != own) fds.push_back(static_cast<int>(fd));
  }
  ::closedir(dir);
  std::sort(fds.begin(), fds.end());
  return fds;
}

Command::Command(std::vector<std::string> argv) : argv_(std::move(argv)) {
  const std::string& name = argv_.at(0);
  int error = ENOENT;
  if (name.find('/') != std::string::npos) {
    if (is_executable_file(name, error)) program_ = name;
  } else if (!name.empty()) {
    // execvp's search: each $PATH entry in turn ("" is the current directory); a match that is
    // not executable is remembered (EACCES) but the search goes on.
    const char* path_env = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): no setenv()
    const std::string path = path_env != nullptr ? path_env : "/bin:/usr/bin";
    bool denied = false;
    std::size_t begin = 0;
    for (;;) {
      const std::size_t end = path.find(':', begin);
      std::string dir =
          path.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
      std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
      int candidate_error = 0;
      if (is_executable_file(candidate, candidate_error)) {
        program_ = std::move(candidate);
        break;
      }
      denied |= candidate_error == EACCES;
      if (end == std::string::npos) break;
      begin = end + 1;
    }
    if (program_.empty() && denied) error = EACCES;
  }
  if (program_.empty()) {
    if (error == ENOENT || error == ENOTDIR) {
      throw Failure(exit_code::kNotFound, "command not found: " + name);
    }
    throw Failure(exit_code::kCannotExecute,
                  "cannot execute " + name + ": " + std::generic_category().message(error));
  }
}

std::string Command::display() const {
  std::string out;
  for (const auto& arg : argv_) {
    if (!out.empty()) out += ' ';
    out += arg;
  }
  return out;
}

RunningCommand Command::start(const StartOptions& options, const SignalReader& signals) const {
  // argv and envp as C arrays, built now (the child must not allocate).
  std::vector<char*> argv;
  for (const auto& arg : argv_) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  std::vector<std::string> env_strings;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    const bool replaced =
        std::any_of(options.environment.begin(), options.environment.end(),
                    [&](const auto& var) { return var.first == name; }) ||
        std::any_of(options.inherited.environment.begin(), options.inherited.environment.end(),
                    [&](const InheritedVariable& var) { return var.name == name; });
    if (!replaced) env_strings.emplace_back(text);
  }
  for (const InheritedVariable& var : options.inherited.environment) {
    const bool replaced = std::any_of(options.environment.begin(), options.environment.end(),
                                      [&](const auto& extra) { return extra.first == var.name; });
    if (var.value && !replaced) env_strings.push_back(var.name + "=" + *var.value);
  }
  for (const auto& [name, value] : options.environment) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  std::vector<int> keep = options.inherited.descriptors;
  keep.push_back(pipe_fds[1]);
  const auto close_ranges = ranges_to_close(std::move(keep));

  ChildPlan plan;
  plan.program = program_.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.own_process_group = options.own_process_group;
  plan.parent = ::getpid();
  plan.error_pipe = pipe_fds[1];
  plan.close_ranges = close_ranges.data();
  plan.close_range_count = close_ranges.size();
  plan.signals = &signals;

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw std::system_error(error, std::generic_category(), "fork");
  }
  if (pid == 0) run_child(plan);

  ::close(pipe_fds[1]);
  int exec_error = 0;
  ssize_t n;
  do {
    n = ::read(pipe_fds[0], &exec_error, sizeof exec_error);
  } while (n < 0 && errno == EINTR);
  ::close(pipe_fds[0]);
  if (n == static_cast<ssize_t>(sizeof exec_error)) {
    int status = 0;
    ::waitpid(pid, &status, 0);  // it exits right after reporting
    if (exec_error == ENOENT || exec_error == ENOTDIR) {
      throw Failure(exit_code::kNotFound, "command not found: " + argv_[0]);
    }
    throw Failure(exit_code::kCannotExecute, "cannot execute " + argv_[0] + ": " +
                                                 std::generic_category().message(exec_error));
  }
  return RunningCommand(pid, options.own_process_group);
}

void RunningCommand::signal(int sig) const noexcept {
  if (own_group_) {
    // The group outlives its leader while processes it started remain.
    ::kill(-pid_, sig);
  } else if (!status_) {
    ::kill(pid_, sig);  // never after reaping: the pid may belong to someone else by then
  }
}

std::optional<int> RunningCommand::try_reap() {
  if (status_) return status_;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) status_ = status;
  return status_;
}

bool RunningCommand::group_has_members() const noexcept {
  return own_group_ && ::kill(-pid_, 0) == 0;
}

int RunningCommand::exit_code_of(int wait_status) noexcept {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return exit_code::kSignalBase + WTERMSIG(wait_status);
  return exit_code::kSoftware;
}

}  // namespace zklock::cli
