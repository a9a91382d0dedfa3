// tests/faults/trial.h: the trial runner of the fault-injection suite (fault_suite_test.cpp).
//
// A Trial is one run of a scenario: a lock path, a fenced store, holder processes (fault_holder,
// each with its own FaultProxy when asked), the log of injected faults, and the checks at the end
// - the checker over every log, and a server left clean (no lock node, no watch). run_scenario()
// is a scenario's bookkeeping, once: its trials, their reports added up, and its RELIABILITY line.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fault_checker.h"
#include "fenced_store.h"
#include "support/fault_proxy.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "zklock/session.h"

namespace zklock::testing::faults {

// Every holder's session timeout on the standalone server (tickTime 200 ms: fault_server()).
inline constexpr std::chrono::milliseconds kT{3000};

// Holder flags used throughout: hold until told (SIGUSR1), writing every 50 ms; one round; stay.
extern const std::vector<std::string> kHoldOnce;

class Trial {
 public:
  struct Holder {
    std::string id;
    std::string log_path;
    std::string stderr_path;
    std::unique_ptr<FaultProxy> proxy;  // declared before the process: destroyed after it
    std::unique_ptr<ChildProcess> process;
    bool killed = false;

    HolderLog log() const { return read_holder_log(log_path); }
    // The token of its `acquisition`-th acquisition; 0 before it happened.
    std::int64_t token(std::size_t acquisition = 0) const;
  };

  // `connect`: the servers, directly; `ports`: their client ports (for 4lw checks); proxies are
  // started towards 127.0.0.1:`upstream_port`.
  Trial(std::string connect, std::vector<int> ports, int upstream_port,
        std::chrono::milliseconds session_timeout = kT);
  // Kills every holder still running (a trial that stopped at a failed ASSERT).
  ~Trial();
  Trial(const Trial&) = delete;
  Trial& operator=(const Trial&) = delete;

  const std::string& path() const { return path_; }
  FencedStore& store() { return *store_; }
  FaultLog& faults() { return faults_; }

  // Starts holder `id` (fault_holder with `args`), behind a FaultProxy of its own if `proxied`.
  Holder& spawn(const std::string& id, bool proxied, const std::vector<std::string>& args);
  // With `proxy` (may be null: direct connection; it may already be armed).
  Holder& spawn_with(const std::string& id, std::unique_ptr<FaultProxy> proxy,
                     const std::vector<std::string>& args);

  // Polls `pred` over `h`'s log.
  bool wait_log(const Holder& h, const std::function<bool(const HolderLog&)>& pred,
                std::chrono::milliseconds timeout);

  // Polls `h`'s log until its first acquisition (release) is there.
  bool wait_acquired(const Holder& h, std::chrono::milliseconds timeout);
  bool wait_released(const Holder& h, std::chrono::milliseconds timeout);

  // The lock's children (names), or nullopt when the admin session cannot answer right now.
  std::optional<std::vector<std::string>> children();
  bool wait_children(std::size_t n, std::chrono::milliseconds timeout);
  // Owner session and czxid of each child, by name (children that vanished meanwhile are absent).
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> owners();

  // ---- Faults, each recorded in the fault log (which the checker reads).
  void blackhole(Holder& h, const std::string& detail = {});
  void heal(Holder& h, Heal how = Heal::kResetDamaged);
  void freeze(Holder& h);  // returns once every thread of h is stopped
  void thaw(Holder& h);
  void kill(Holder& h);

  // Ends every fault, stops every holder (SIGTERM: release, leave the queue, exit 0), runs the
  // checker over all logs - any violation fails the test, unless the whole machine stalled for
  // half the session timeout or more during the trial (support/stall_watch.h: then nothing ran,
  // holders included, while the server's clock went on, and the report is not_applicable) - and
  // checks that the server is left clean: no lock node, no watch. Then removes the lock path.
  CheckReport finish();

  // For the runs that must break a rule (broken holders): stops every holder (SIGTERM), runs the
  // checker (printing its report under `label`) without requiring a clean report, checks that
  // the server is left clean and removes the lock path. Returns the report for the test to judge.
  CheckReport stop_and_check(const std::string& label);

  std::vector<HolderLog> logs() const;
  // Paths at or under the lock path that some session watches.
  std::vector<std::string> watches_left();

 private:
  void expect_server_clean();
  void remove_path();

  TempDir dir_;
  const std::int64_t started_ns_;  // CLOCK_MONOTONIC, for the stall watch
  const std::string connect_;
  const std::vector<int> ports_;
  const int upstream_port_;
  const std::chrono::milliseconds session_timeout_;
  const std::string path_;
  FaultLog faults_;
  std::unique_ptr<FencedStore> store_;
  std::unique_ptr<Session> admin_;
  std::vector<std::unique_ptr<Holder>> holders_;
};

// A trial on fault_server() (fault_env.h).
std::unique_ptr<Trial> standalone_trial();

// A scenario, run by run_scenario().
struct Scenario {
  Scenario(std::string scenario_name, int trial_count)
      : name(std::move(scenario_name)), trials(trial_count) {}

  std::string name;  // the RELIABILITY line's scenario=
  int trials;
  std::function<std::unique_ptr<Trial>()> new_trial = standalone_trial;
  // Looks at each trial's report, and the number of faults it injected (optional).
  std::function<void(const CheckReport&, std::size_t faults)> check_trial;
  // Extra key=value text for the RELIABILITY line, from the total report (optional).
  std::function<std::string(const CheckReport&)> extra;
};

// A scenario's bookkeeping, once: `scenario.trials` times, a fresh Trial, `body(trial, index)`
// on it, then Trial::finish() and check_trial; the reports are added up and the RELIABILITY line
// printed. A fatal failure (an ASSERT in `body`) ends the scenario there, as it would end the test:
// no line is printed. Returns the total.
CheckReport run_scenario(const Scenario& scenario,
                         const std::function<void(Trial&, int index)>& body);

// A line on stdout at once (the figures of docs/reliability.md are read from the output).
void print_line(const std::string& line);

}  // namespace zklock::testing::faults
