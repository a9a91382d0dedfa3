#include "exec_command.h"

#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <optional>
#include <string_view>
#include <utility>

#include "cli_lock.h"
#include "command.h"
#include "duration.h"
#include "exit_codes.h"
#include "lock_state_watch.h"
#include "lock_wait.h"
#include "metrics_listener.h"
#include "wakeup.h"
#include "zklock/mutex.h"

namespace zklock::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Runs the command under the held lock until it ends; stops it if the lock is lost, or (with
// --revocable) when someone asks us to let go.
class Supervisor {
 public:
  Supervisor(const ExecOptions& exec, RunningCommand child, CliLock& held, const Console& console,
             SignalReader& signals)
      : exec_(exec),
        child_(child),
        console_(console),
        signals_(signals),
        state_changed_(held.state_changed()),
        revocation_requested_(held.revocation_requested()),
        watch_(held.lock(), held.session(), console),
        path_(held.lock().path()) {}

  // Returns: the exit code.
  int run() {
    for (;;) {
      // The lock's state first: a loss that happened by the time the command is seen to have
      // exited must not be reported as a success.
      if (watch_.check() == LockState::kLost && !lost_) on_lost();
      if (revocation_requested_ && !revoked_ && !lost_) on_revoked();
      if (grace_deadline_ && Clock::now() >= *grace_deadline_) {
        console_.error("command (or processes it started) still running " +
                       format_duration(exec_.grace) + " after SIGTERM: sending SIGKILL");
        child_.signal(SIGKILL);
        grace_deadline_.reset();
      }
      if (const auto status = child_.try_reap()) {
        if (!waiting_for_group()) return exit_code(*status);
      }
      wait_for_event();
    }
  }

  /// True once zklock itself was asked to stop (a termination signal, forwarded to the command).
  bool interrupted() const noexcept { return interrupted_; }

 private:
  void on_lost() {
    lost_ = true;
    const std::string what = "lock on " + path_ +
                             " LOST (our ZooKeeper session may have expired; "
                             "another process may hold the lock now)";
    switch (exec_.on_lost) {
      case OnLost::kTerm:
        console_.error(what + ": stopping the command (SIGTERM, SIGKILL after " +
                       format_duration(exec_.grace) + ")");
        child_.signal(SIGTERM);
        grace_deadline_ = Clock::now() + exec_.grace;
        break;
      case OnLost::kKill:
        console_.error(what + ": killing the command (SIGKILL)");
        child_.signal(SIGKILL);
        break;
      case OnLost::kIgnore:
        console_.error(what + ": the command runs on (--on-lost=ignore)");
        break;
    }
  }

  // Asked to let go: the command is stopped as --on-revoke says; the lock is released once it
  // has ended. (--on-revoke=ignore is never asked: its node says it is not revocable.)
  void on_revoked() {
    revoked_ = true;
    if (exec_.on_revoke == OnLost::kKill) {
      console_.error("revocation of " + path_ +
                     " requested: killing the command (SIGKILL), then releasing");
      child_.signal(SIGKILL);
      return;
    }
    console_.error("revocation of " + path_ + " requested: stopping the command (SIGTERM, " +
                   "SIGKILL after " + format_duration(exec_.grace) + "), then releasing");
    child_.signal(SIGTERM);
    grace_deadline_ = Clock::now() + exec_.grace;
  }

  // After a loss or a revocation, processes the command started (in its process group) must stop
  // too: once the command itself has exited, wait for them until the grace period ends (then
  // SIGKILL).
  bool waiting_for_group() const {
    const bool terminated = (lost_ && exec_.on_lost == OnLost::kTerm) || revoked_;
    return terminated && grace_deadline_ && child_.group_has_members();
  }

  int exit_code(int wait_status) const {
    const int code = RunningCommand::exit_code_of(wait_status);
    if (lost_) {
      console_.note("command ended (exit code " + std::to_string(code) +
                    ") after the lock was lost");
      return exit_code::kLockLost;
    }
    console_.note("command ended with exit code " + std::to_string(code) +
                  (revoked_ ? " after a revocation request" : "") + "; releasing " + path_);
    return code;
  }

  void wait_for_event() {
    int timeout = watch_.poll_timeout_ms();
    auto shorten = [&](Clock::duration left) {
      const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
      const int bounded = static_cast<int>(std::clamp<decltype(ms)>(ms, 0, 60'000));
      timeout = timeout < 0 ? bounded : std::min(timeout, bounded);
    };
    if (grace_deadline_) shorten(*grace_deadline_ - Clock::now());
    // Leftover group members exit without a SIGCHLD to us: look again soon.
    if (child_.try_reap()) shorten(std::chrono::milliseconds(20));

    for (const auto& info : signals_.wait(state_changed_, timeout)) {
      const int sig = static_cast<int>(info.ssi_signo);
      if (!SignalReader::is_termination(sig)) continue;  // SIGCHLD: reaped at the loop's top
      // In zklock's own process group the command already got what a terminal sent to the group.
      if (!child_.own_process_group() && info.ssi_code == SI_KERNEL) continue;
      console_.note("forwarding " + signal_name(sig) + " to the command");
      interrupted_ = true;
      child_.signal(sig);
    }
  }

  const ExecOptions& exec_;
  RunningCommand child_;
  const Console& console_;
  SignalReader& signals_;
  Wakeup& state_changed_;
  const std::atomic<bool>& revocation_requested_;
  LockStateWatch watch_;
  const std::string path_;
  bool lost_ = false;
  bool revoked_ = false;
  bool interrupted_ = false;
  std::optional<Clock::time_point> grace_deadline_;
};

// One run of exec: its exit code, whether it took the lock (a term, for elect: the command may
// still not have run, if the lock was lost at once), and whether zklock was interrupted.
struct ExecRun {
  int code = exit_code::kOk;
  bool acquired = false;
  bool interrupted = false;
};

std::vector<std::pair<std::string, std::string>> lock_environment(const Acquisition& acquisition) {
  return {
      {"ZKLOCK_PATH", acquisition.lock_path},
      {"ZKLOCK_NODE", acquisition.node_path},
      {"ZKLOCK_SEQUENCE", std::to_string(acquisition.sequence)},
      {"ZKLOCK_FENCING_TOKEN", acquisition.token().to_string()},
      {"ZKLOCK_SESSION_ID", session_id_hex(acquisition.session_id)},
  };
}

}  // namespace

// --on-lost's values, each way.
constexpr std::array<std::pair<OnLost, std::string_view>, 3> kOnLostNames = {{
    {OnLost::kTerm, "term"},
    {OnLost::kKill, "kill"},
    {OnLost::kIgnore, "ignore"},
}};

std::optional<OnLost> parse_on_lost(std::string_view text) {
  for (const auto& [policy, name] : kOnLostNames) {
    if (name == text) return policy;
  }
  return std::nullopt;
}

std::string on_lost_name(OnLost policy) {
  const auto* entry = std::find_if(kOnLostNames.begin(), kOnLostNames.end(),
                                   [policy](const auto& named) { return named.first == policy; });
  return std::string(entry != kOnLostNames.end() ? entry->second : "?");
}

namespace {

ExecRun run_exec_once(const ExecOptions& exec, const CommonOptions& common, const LockOptions& lock,
                      const Console& console, SignalReader& signals, const Inheritance& inherited) {
  // Found before queueing: a typo should not wait an hour for the lock to be reported.
  const Command command(exec.command);

  CliLock held(exec.path, common, lock, console);
  // From the session opened to the end: the wait for the lock shows in the figures too.
  const auto metrics = listen_for_metrics(lock.metrics_listen, console);
  if (const auto not_acquired_code = held.acquire(signals)) {
    return {*not_acquired_code, false, *not_acquired_code >= exit_code::kSignalBase};
  }
  const Acquisition acquisition = *held.lock().acquisition();
  console.note(std::string(held.lock().shared() ? "acquired (shared) " : "acquired ") + exec.path +
               " (node " + acquisition.node_path + ", fencing token " +
               acquisition.token().to_string() + ")");
  if (held.lock().state() == LockState::kLost) {
    console.error("lock on " + exec.path + " lost before the command could start");
    return {exit_code::kLockLost, true, false};
  }

  Command::StartOptions start;
  start.environment = lock_environment(acquisition);
  start.own_process_group = !exec.foreground;
  start.inherited = inherited;
  RunningCommand child = command.start(start, signals);
  console.note("running " + command.display() + " (pid " + std::to_string(child.pid()) + ")");
  Supervisor supervisor(exec, child, held, console, signals);
  const int code = supervisor.run();
  held.release();
  console.note("released " + exec.path);
  return {code, true, supervisor.interrupted()};
}

}  // namespace

int run_exec(const ExecOptions& exec, const CommonOptions& common, const LockOptions& lock,
             const Console& console, SignalReader& signals, const Inheritance& inherited) {
  return run_exec_once(exec, common, lock, console, signals, inherited).code;
}

int run_elect(const ExecOptions& exec, const CommonOptions& common, const LockOptions& lock,
              const Console& console, SignalReader& signals, const Inheritance& inherited) {
  constexpr auto kMinTerm = std::chrono::seconds(1);
  for (;;) {
    const auto started = Clock::now();
    const ExecRun run = run_exec_once(exec, common, lock, console, signals, inherited);
    if (!exec.again || !run.acquired || run.interrupted) return run.code;
    // A command that ends at once must not make us campaign (open a session, queue) at network
    // speed: at most one campaign a second. Signals still end it.
    Wakeup never;
    for (auto left = kMinTerm - (Clock::now() - started); left > Clock::duration::zero();
         left = kMinTerm - (Clock::now() - started)) {
      const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
      for (const auto& info : signals.wait(never, static_cast<int>(ms))) {
        const int sig = static_cast<int>(info.ssi_signo);
        if (SignalReader::is_termination(sig)) return exit_code::kSignalBase + sig;
      }
    }
    console.note("campaigning again for " + exec.path);
  }
}

}  // namespace zklock::cli
