// tests/faults/blip_test.cpp: keep the lock through network blips, never stand beside another
// holder (docs/reliability.md, "Network blips").
//
// Session timeout T = 6 s. A holder's connection (its own FaultProxy) is blackholed once for
// 0.5 T, 0.75 T or 0.9 T and then healed (Heal::kResetDamaged: the connection that lost bytes is
// reset, the client reconnects to the same session), or cut until someone else has the lock
// ("expiry"). A waiter on a direct connection queues behind the holder the whole time.
//
//  * 0.5 T and 0.75 T: the holder keeps the lock (same acquisition), saw Suspended then Connected,
//    never Lost; the waiter stays waiting until the holder releases.
//  * 0.9 T and expiry: never two holders - when the holder loses, it is told (Mutex: the Lost
//    callback; `zklock exec`: the command gets SIGTERM) before the waiter acquires.
//
// For Mutex and for `zklock exec` (the real CLI, when built; the test skips otherwise). All
// trials of one client run concurrently (each on its own lock path, proxy and sessions), staggered
// by a random delay so that blips start at random points of the heartbeat cycle: 5 trials per
// blip length also in CI, 20 with ZKLOCK_SOAK (in rounds of 5 per length). Each test prints one
// parseable line per blip length
//   RELIABILITY suite=blip client=mutex|exec blip_x_T=... trials=... held_through=... ...
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fault_checker.h"
#include "fault_env.h"
#include "fenced_store.h"
#include "support/fault_proxy.h"
#include "support/files.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/wait.h"
#include "support/zk_server.h"
#include "test_env.h"
#include "zklock/zklock.h"

namespace zklock::testing::faults {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr milliseconds kT{6000};
constexpr double kExpiry = 0;  // "blip" that lasts until the waiter has acquired

std::string label(double x) {
  if (x == kExpiry) return "expiry";
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(2);
  os << x;
  return os.str();
}

struct TrialResult {
  double x = 0;
  std::string error;          // the trial could not run as designed (harness / liveness)
  bool held_through = false;  // same acquisition, still Held after the blip, never Lost
  bool saw_suspended = false;
  bool saw_connected_again = false;  // Suspended -> Connected in the same session
  bool saw_lost = false;
  bool waiter_acquired_during = false;  // the waiter got the lock while the holder held it
  bool two_holders = false;
  bool takeover = false;  // the waiter acquired because the holder lost
  std::optional<bool> told_before_takeover;
  std::int64_t lead_ns = 0;  // takeover - told
  std::int64_t blip_ms = 0;  // how long the partition really lasted
};

// Random stagger and heartbeat phase for trial `seed`.
milliseconds random_delay(unsigned seed, int lo_ms, int hi_ms) {
  std::mt19937 rng(seed);
  return milliseconds(std::uniform_int_distribution<int>(lo_ms, hi_ms)(rng));
}

// A waiter on a direct connection, on its own thread. It waits at most kWaiterPatience - longer
// than any wait of a trial, which reports a waiter that never got in - so that release() always
// returns (a trial whose waiter never acquired once hung the test until ctest killed it).
constexpr milliseconds kWaiterPatience = 15 * kT;
class DirectWaiter {
 public:
  explicit DirectWaiter(const std::string& path)
      : session_(quiet(options_for(fault_server().connect_string(), kT))), mutex_(session_, path) {
    thread_ = std::thread([this] {
      try {
        if (mutex_.try_lock_for(kWaiterPatience)) {
          acquired_ns_ = to_ns(mutex_.acquisition()->acquired_at);
        }
      } catch (const std::exception&) {
      }
    });
  }
  ~DirectWaiter() {
    mutex_.cancel();
    if (thread_.joinable()) thread_.join();
    mutex_.unlock();
  }
  std::int64_t acquired_ns() const { return acquired_ns_; }
  std::size_t queue_length() {
    try {
      auto kids = session_.children(mutex_.path());
      return kids ? kids->size() : 0;
    } catch (const Error&) {
      return 0;
    }
  }
  void release() {
    if (thread_.joinable()) thread_.join();
    mutex_.unlock();
  }

 private:
  Session session_;
  Mutex mutex_;
  std::atomic<std::int64_t> acquired_ns_{0};
  std::thread thread_;
};

// ---------------------------------------------------------------------------------------------
// zklock::Mutex

TrialResult mutex_trial(double x, unsigned seed) {
  TrialResult r;
  r.x = x;
  std::this_thread::sleep_for(random_delay(seed, 0, 1000));  // stagger the trials
  const std::string path = unique_path("blip");
  // What the callbacks record lives longer than the Session that calls them.
  std::mutex mu;
  std::vector<SessionEvent> events;
  std::atomic<std::int64_t> told_ns{0};
  std::atomic<bool> saw_suspended{false};
  auto proxy = FaultProxy::start("127.0.0.1", fault_server().port());
  SessionOptions so = quiet(options_for(proxy->connect_string(), kT));
  so.connect_timeout = 20s;
  Session session(so);
  session.add_listener([&](const SessionEvent& e) {
    std::lock_guard lock(mu);
    events.push_back(e);
  });
  MutexOptions mo;
  mo.on_state_change = [&](LockState s, const Acquisition&) {
    if (s == LockState::kSuspended) saw_suspended = true;
    if (s == LockState::kLost && told_ns == 0) told_ns = monotonic_ns();
  };
  Mutex holder(session, path, mo);
  if (!holder.try_lock_for(20s)) {
    r.error = "the holder could not acquire";
    return r;
  }
  const Acquisition acquired = *holder.acquisition();
  DirectWaiter waiter(path);
  if (!wait_until([&] { return waiter.queue_length() == 2; }, 20s)) {
    r.error = "the waiter did not queue";
    holder.unlock();
    return r;
  }

  std::this_thread::sleep_for(random_delay(seed + 1, 0, 600));  // a random heartbeat phase
  const std::int64_t cut = monotonic_ns();
  proxy->blackhole();
  if (x != kExpiry) {
    std::this_thread::sleep_for(milliseconds(static_cast<long>(x * kT.count())));  // the blip
    proxy->heal(Heal::kResetDamaged);
    const std::int64_t healed = monotonic_ns();
    r.blip_ms = (healed - cut) / 1'000'000;
    // The outcome: a request sent after the heal was answered (the Lost deadline moved past
    // heal + T - m), or Lost.
    const std::int64_t margin_ns =
        std::chrono::nanoseconds(std::max(kT / 20, milliseconds(50))).count();
    const bool settled = wait_until(
        [&] {
          if (holder.state() == LockState::kLost) return true;
          return holder.state() == LockState::kHeld &&
                 to_ns(session.lost_deadline()) >
                     healed + std::chrono::nanoseconds(kT).count() - margin_ns;
        },
        3 * kT);
    if (!settled) r.error = "neither Held again nor Lost within 3 T of the heal";
    if (holder.state() == LockState::kLost || told_ns != 0) {
      if (!wait_until([&] { return waiter.acquired_ns() != 0; }, 3 * kT)) {
        r.error = "the holder lost but the waiter never acquired";
      }
    } else {
      r.held_through = holder.state() == LockState::kHeld && holder.acquisition() &&
                       holder.acquisition()->czxid == acquired.czxid;
    }
  } else {
    if (!wait_until([&] { return waiter.acquired_ns() != 0; }, 3 * kT + 10s)) {
      r.error = "the waiter never acquired while the holder was cut off";
    }
    proxy->heal(Heal::kResetDamaged);
    r.blip_ms = (monotonic_ns() - cut) / 1'000'000;
  }

  const std::int64_t taken = waiter.acquired_ns();
  const std::int64_t told = told_ns;
  r.saw_suspended = saw_suspended;
  r.saw_lost = told != 0;
  r.takeover = taken != 0 && r.saw_lost;
  r.waiter_acquired_during = taken != 0 && !r.saw_lost;
  r.two_holders = taken != 0 && (told == 0 || told > taken);
  if (taken != 0 && told != 0) {
    r.told_before_takeover = told < taken;
    r.lead_ns = taken - told;
  }
  // Listeners run on zklock's event thread, a little after state() changed: give the
  // Suspended -> Connected events a moment to arrive when the lock was kept.
  auto connected_again = [&] {
    std::lock_guard lock(mu);
    for (std::size_t i = 0; i + 1 < events.size(); ++i) {
      if (events[i].state != SessionState::kSuspended) continue;
      for (std::size_t j = i + 1; j < events.size(); ++j) {
        if (events[j].state == SessionState::kConnected &&
            events[j].generation == events[i].generation) {
          return true;
        }
      }
    }
    return false;
  };
  r.saw_connected_again = r.held_through ? wait_until(connected_again, 5s) : connected_again();
  // Release: the waiter, which stayed waiting, now gets the lock.
  holder.unlock();
  if (r.held_through && !wait_until([&] { return waiter.acquired_ns() != 0; }, 20s)) {
    r.error = "the waiter did not acquire after the holder released";
  }
  waiter.release();
  return r;
}

// ---------------------------------------------------------------------------------------------
// zklock exec

#ifdef ZKLOCK_CLI_BIN
constexpr const char* kCli = ZKLOCK_CLI_BIN;
#else
constexpr const char* kCli = "";
#endif

struct ExecOutcome {
  TrialResult result;
  std::optional<int> exit_status;
  std::string exec_log;
};

ExecOutcome exec_trial(double x, unsigned seed, const std::string& dir) {
  ExecOutcome out;
  TrialResult& r = out.result;
  r.x = x;
  std::this_thread::sleep_for(random_delay(seed, 0, 1000));
  const std::string path = unique_path("blip-exec");
  const std::string name = "exec-" + label(x) + "-" + std::to_string(seed);
  const std::string cmd_log = dir + "/" + name + ".cmd.log";
  const std::string exec_log = dir + "/" + name + ".stderr";
  auto proxy = FaultProxy::start("127.0.0.1", fault_server().port());
  SpawnOptions so;
  so.log_path = exec_log;
  ChildProcess exec({kCli, "exec", "-v", "--connect", proxy->connect_string(), "--session-timeout",
                     "6s", "--connect-timeout", "20s", path, "--", FAULT_HOLDER_BIN, "command",
                     "--log", cmd_log, "--id", name},
                    so);
  auto cmd = [&] { return read_holder_log(cmd_log); };
  if (!wait_until([&] { return !cmd().of("started").empty(); }, 30s)) {
    r.error = "the command never started";
    return out;
  }
  const pid_t cmd_pid = static_cast<pid_t>(cmd().of("started")[0].num("pid"));
  DirectWaiter waiter(path);
  if (!wait_until([&] { return waiter.queue_length() == 2; }, 20s)) {
    r.error = "the waiter did not queue";
    return out;
  }

  std::this_thread::sleep_for(random_delay(seed + 1, 0, 600));
  const std::int64_t cut = monotonic_ns();
  proxy->blackhole();
  auto log_has = [&](const std::string& text) {
    return read_file(exec_log).find(text) != std::string::npos;
  };
  if (x != kExpiry) {
    std::this_thread::sleep_for(milliseconds(static_cast<long>(x * kT.count())));
    proxy->heal(Heal::kResetDamaged);
    r.blip_ms = (monotonic_ns() - cut) / 1'000'000;
    // Held again ("connection to ZooKeeper back") or stopped.
    const bool settled = wait_until(
        [&] {
          return log_has("connection to ZooKeeper back") || !cmd().of("terminated").empty() ||
                 !exec.running();
        },
        3 * kT);
    if (!settled) r.error = "neither back nor stopped within 3 T of the heal";
    const bool stopped = !cmd().of("terminated").empty() || !exec.running();
    if (stopped && !wait_until([&] { return waiter.acquired_ns() != 0; }, 3 * kT)) {
      r.error = "the command was stopped but the waiter never acquired";
    }
    r.held_through = !stopped && exec.running();
  } else {
    if (!wait_until([&] { return waiter.acquired_ns() != 0; }, 3 * kT + 10s)) {
      r.error = "the waiter never acquired while zklock exec was cut off";
    }
    proxy->heal(Heal::kResetDamaged);
    r.blip_ms = (monotonic_ns() - cut) / 1'000'000;
  }

  const auto terminated = cmd().of("terminated");
  const std::int64_t told = terminated.empty() ? 0 : terminated[0].at_ns;
  const std::int64_t taken = waiter.acquired_ns();
  r.saw_suspended = log_has("connection to ZooKeeper suspended");
  r.saw_connected_again = log_has("connection to ZooKeeper back");
  r.saw_lost = log_has("LOST") || told != 0;
  r.takeover = taken != 0 && told != 0;
  r.waiter_acquired_during = taken != 0 && told == 0;
  r.two_holders = taken != 0 && (told == 0 || told > taken);
  if (taken != 0 && told != 0) {
    r.told_before_takeover = told < taken;
    r.lead_ns = taken - told;
  }
  if (r.held_through) {
    ::kill(cmd_pid, SIGUSR1);  // the command finishes normally: zklock exits with its code, 0
  }
  out.exit_status = exec.wait_exit(30s);
  if (r.held_through && !wait_until([&] { return waiter.acquired_ns() != 0; }, 20s)) {
    r.error = "the waiter did not acquire after zklock exec released";
  }
  waiter.release();
  out.exec_log = tail_file(exec_log, 1500);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reporting and assertions shared by both clients.

const std::vector<double> kBlips = {0.5, 0.75, 0.9, kExpiry};

void report_and_check(const std::string& client, const std::vector<TrialResult>& results) {
  for (double x : kBlips) {
    std::vector<TrialResult> rs;
    for (const auto& r : results) {
      if (r.x == x) rs.push_back(r);
    }
    // How many of the trials saw `what`.
    auto count = [&rs](bool TrialResult::*what) {
      return static_cast<int>(
          std::count_if(rs.begin(), rs.end(), [what](const TrialResult& r) { return r.*what; }));
    };
    int told_before = 0;
    std::vector<std::int64_t> leads, blips;
    for (const auto& r : rs) {
      if (r.told_before_takeover) {
        told_before += *r.told_before_takeover;
        leads.push_back(r.lead_ns);
      }
      blips.push_back(r.blip_ms * 1'000'000);
    }
    std::printf(
        "RELIABILITY suite=blip client=%s blip_x_T=%s trials=%zu held_through=%d saw_suspended=%d "
        "saw_connected_again=%d saw_lost=%d two_holders=%d takeovers=%d told_before_takeover=%d "
        "told_lead_ms_median=%s told_lead_ms_worst=%s blip_ms_median=%s session_timeout_ms=%lld\n",
        client.c_str(), label(x).c_str(), rs.size(), count(&TrialResult::held_through),
        count(&TrialResult::saw_suspended), count(&TrialResult::saw_connected_again),
        count(&TrialResult::saw_lost), count(&TrialResult::two_holders),
        count(&TrialResult::takeover), told_before, ms_median(leads).c_str(), ms_min(leads).c_str(),
        ms_median(blips).c_str(), static_cast<long long>(kT.count()));
    std::fflush(stdout);

    for (const auto& r : rs) {
      SCOPED_TRACE(client + " blip " + label(x) + " T (" + std::to_string(r.blip_ms) + " ms)");
      EXPECT_EQ(r.error, "");
      EXPECT_FALSE(r.two_holders) << "two holders inside at once";
      EXPECT_FALSE(r.waiter_acquired_during) << "the waiter got in while the holder was never told";
      if (r.told_before_takeover) {
        EXPECT_TRUE(*r.told_before_takeover)
            << "told " << -r.lead_ns / 1'000'000 << " ms after the takeover";
      }
      if (x == 0.5 || x == 0.75) {
        EXPECT_TRUE(r.held_through) << "a " << label(x) << " T blip cost the lock";
        EXPECT_FALSE(r.saw_lost);
        EXPECT_FALSE(r.takeover);
      }
      if (x == 0.75) {
        EXPECT_TRUE(r.saw_suspended) << "no Suspended during a 0.75 T blip";
        EXPECT_TRUE(r.saw_connected_again) << "no Suspended -> Connected after the blip";
      }
      if (x == kExpiry) {
        EXPECT_TRUE(r.saw_lost);
        EXPECT_TRUE(r.takeover);
        EXPECT_TRUE(r.told_before_takeover.value_or(false));
      }
    }
  }
}

int reps() { return trials(5, 20); }

// Trials run in rounds of at most 5 per blip length (20 at once), all concurrently within a round.
constexpr int kPerRound = 5;

// Runs `run_trial(x, seed)` for every blip length x, reps() times each: in rounds of at most
// kPerRound per length, all trials of a round at once.
template <typename Outcome>
std::vector<Outcome> run_in_rounds(
    const std::function<Outcome(double x, unsigned seed)>& run_trial) {
  std::vector<Outcome> outcomes;
  unsigned seed = std::random_device{}();
  for (int done = 0; done < reps(); done += kPerRound) {
    std::vector<std::future<Outcome>> futures;
    for (double x : kBlips) {
      for (int i = done; i < std::min(reps(), done + kPerRound); ++i) {
        futures.push_back(std::async(std::launch::async, run_trial, x, seed += 7));
      }
    }
    for (auto& f : futures) outcomes.push_back(f.get());
  }
  return outcomes;
}

TEST(BlipTest, MutexKeepsTheLockThroughShortBlipsAndIsToldBeforeTakeoverOnLongOnes) {
  fault_server();
  report_and_check("mutex", run_in_rounds<TrialResult>(mutex_trial));
}

TEST(BlipTest, ZklockExecKeepsItsCommandThroughShortBlipsAndStopsItBeforeTakeover) {
  if (std::string(kCli).empty() || !std::filesystem::exists(kCli)) {
    GTEST_SKIP() << "the zklock CLI (target zklock-cli, build/bin/zklock) is not built";
  }
  fault_server();
  TempDir dir("zklock-blip-");
  const std::vector<ExecOutcome> outcomes = run_in_rounds<ExecOutcome>(
      [&](double x, unsigned seed) { return exec_trial(x, seed, dir.path()); });
  std::vector<TrialResult> results;
  for (auto& o : outcomes) {
    const TrialResult& r = o.result;
    SCOPED_TRACE("zklock exec, blip " + label(r.x) + " T");
    if (!o.exit_status) {
      ADD_FAILURE() << "zklock exec did not exit\n" << o.exec_log;
    } else if (r.held_through) {
      EXPECT_TRUE(WIFEXITED(*o.exit_status) && WEXITSTATUS(*o.exit_status) == 0)
          << describe_wait_status(*o.exit_status) << "\n"
          << o.exec_log;
    } else if (r.saw_lost) {
      EXPECT_TRUE(WIFEXITED(*o.exit_status) && WEXITSTATUS(*o.exit_status) == 76)
          << "a lost lock must end zklock exec with 76: " << describe_wait_status(*o.exit_status)
          << "\n"
          << o.exec_log;
    }
    results.push_back(r);
  }
  report_and_check("exec", results);
}

}  // namespace
}  // namespace zklock::testing::faults
