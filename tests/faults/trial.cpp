// tests/faults/trial.cpp: see trial.h.
#include "trial.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>

#include "fault_env.h"
#include "support/four_letter_words.h"
#include "support/stall_watch.h"
#include "support/wait.h"
#include "test_env.h"
#include "zklock/errors.h"

namespace zklock::testing::faults {
namespace {

using namespace std::chrono_literals;

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

const std::vector<std::string> kHoldOnce = {
    "--hold-until-signal", "--write-pause-ms", "50", "--rounds", "1", "--linger"};

std::int64_t Trial::Holder::token(std::size_t acquisition) const {
  const auto acquired = log().of("acquired");
  return acquisition < acquired.size() ? acquired[acquisition].num("token") : 0;
}

Trial::Trial(std::string connect, std::vector<int> ports, int upstream_port,
             std::chrono::milliseconds session_timeout)
    : dir_("zklock-faults-"),
      started_ns_((start_stall_watch(), monotonic_clock_ns())),
      connect_(std::move(connect)),
      ports_(std::move(ports)),
      upstream_port_(upstream_port),
      session_timeout_(session_timeout),
      path_(unique_path("faults")),
      faults_(dir_.file("faults.log")),
      store_(FencedStore::start(dir_.file("store.sock"), dir_.file("store.log"))),
      admin_(std::make_unique<Session>(quiet(options_for(connect_, 10000ms)))) {}

Trial::~Trial() {
  for (auto& h : holders_) {
    if (h->process && h->process->running()) {
      h->process->thaw();
      h->process->kill();
    }
  }
}

Trial::Holder& Trial::spawn(const std::string& id, bool proxied,
                            const std::vector<std::string>& args) {
  std::unique_ptr<FaultProxy> proxy;
  if (proxied) proxy = FaultProxy::start("127.0.0.1", upstream_port_);
  return spawn_with(id, std::move(proxy), args);
}

Trial::Holder& Trial::spawn_with(const std::string& id, std::unique_ptr<FaultProxy> proxy,
                                 const std::vector<std::string>& args) {
  auto h = std::make_unique<Holder>();
  h->id = id;
  h->log_path = dir_.file(id + ".log");
  h->stderr_path = dir_.file(id + ".stderr");
  h->proxy = std::move(proxy);
  const std::string connect = h->proxy ? h->proxy->connect_string() : connect_;
  std::vector<std::string> argv = {FAULT_HOLDER_BIN,
                                   "holder",
                                   "--connect",
                                   connect,
                                   "--path",
                                   path_,
                                   "--id",
                                   id,
                                   "--log",
                                   h->log_path,
                                   "--store",
                                   store_->socket_path(),
                                   "--session-timeout-ms",
                                   std::to_string(session_timeout_.count())};
  argv.insert(argv.end(), args.begin(), args.end());
  SpawnOptions spawn;
  spawn.log_path = h->stderr_path;
  h->process = std::make_unique<ChildProcess>(argv, spawn);
  holders_.push_back(std::move(h));
  return *holders_.back();
}

bool Trial::wait_log(const Holder& h, const std::function<bool(const HolderLog&)>& pred,
                     std::chrono::milliseconds timeout) {
  return wait_until([&] { return pred(h.log()); }, timeout, 20ms);
}

bool Trial::wait_acquired(const Holder& h, std::chrono::milliseconds timeout) {
  return wait_log(
      h, [](const HolderLog& l) { return l.acquisitions() == 1; }, timeout);
}

bool Trial::wait_released(const Holder& h, std::chrono::milliseconds timeout) {
  return wait_log(
      h, [](const HolderLog& l) { return !l.of("released").empty(); }, timeout);
}

std::optional<std::vector<std::string>> Trial::children() {
  try {
    auto kids = admin_->children(path_);
    return kids ? *kids : std::vector<std::string>{};
  } catch (const Error&) {
    return std::nullopt;
  }
}

bool Trial::wait_children(std::size_t n, std::chrono::milliseconds timeout) {
  return wait_until(
      [&] {
        auto kids = children();
        return kids && kids->size() == n;
      },
      timeout, 20ms);
}

std::map<std::string, std::pair<std::int64_t, std::int64_t>> Trial::owners() {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> out;
  auto kids = children();
  if (!kids) return out;
  for (const auto& k : *kids) {
    try {
      if (auto d = admin_->get(path_ + "/" + k)) out[k] = {d->stat.ephemeral_owner, d->stat.czxid};
    } catch (const Error&) {
    }
  }
  return out;
}

void Trial::blackhole(Holder& h, const std::string& detail) {
  faults_.record("blackhole", h.id, detail);
  h.proxy->blackhole();
}

void Trial::heal(Holder& h, Heal how) {
  h.proxy->heal(how);
  faults_.record("heal", h.id, how == Heal::kResetDamaged ? "reset-damaged" : "resume");
}

void Trial::freeze(Holder& h) {
  h.process->freeze();
  faults_.record("freeze", h.id);
}

void Trial::thaw(Holder& h) {
  faults_.record("thaw", h.id);
  h.process->thaw();
}

void Trial::kill(Holder& h) {
  h.killed = true;
  // Recorded once the process is reaped, not before the signal: the checker ends the hold at
  // this moment, and a write the holder attempted between a record made first and the SIGKILL
  // landing was legitimately its own (CI: attempted 0.1 ms after such a record, judged a
  // write after the end).
  h.process->kill();
  faults_.record("kill", h.id);
}

CheckReport Trial::finish() {
  for (auto& h : holders_) {
    if (h->proxy) {
      h->proxy->set_delay(0ms);
      h->proxy->refuse_new(false);
      if (h->proxy->mode() == ProxyMode::kBlackhole) heal(*h);
    }
    if (h->process->running() && (h->process->frozen() || process_stopped(h->process->pid()))) {
      thaw(*h);
    }
  }
  for (auto& h : holders_) {
    if (!h->killed && h->process->running()) h->process->signal(SIGTERM);
  }
  for (auto& h : holders_) {
    if (h->killed) continue;
    const auto status = h->process->wait_exit(30s);
    if (!status) {
      ADD_FAILURE() << h->id << " did not exit within 30 s of SIGTERM\n"
                    << tail_file(h->stderr_path) << "its threads:\n"
                    << thread_stacks(h->process->pid());
      h->process->kill();
    } else {
      EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
          << h->id << " " << describe_wait_status(*status) << "\n"
          << tail_file(h->stderr_path) << tail_file(h->log_path, 1500);
    }
  }
  CheckReport report = check_run(store_->records(), logs(), faults_.records());
  std::printf("[  FAULTS  ] %s: %s", path_.c_str(), report.describe().c_str());
  const std::int64_t stall_ns = longest_stall_ns(started_ns_, monotonic_clock_ns());
  if (!report.violations.empty() && stall_ns * 2 >= session_timeout_.count() * 1'000'000) {
    // CI saw it: every process, the store and the fault log silent for 3 s at T = 3 s; the
    // server expired the holder's session as soon as the machine ran again, before the holder
    // had run an instruction. No lease can be told in time across a stall of the whole machine.
    report.not_applicable = true;
    std::printf(
        "[  FAULTS  ] not applicable: the machine stalled %lld ms (T = %lld ms); logs in %s\n",
        static_cast<long long>(stall_ns / 1'000'000),
        static_cast<long long>(session_timeout_.count()), dir_.path().c_str());
  } else {
    EXPECT_TRUE(report.violations.empty()) << report.describe() << "logs in " << dir_.path();
  }
  expect_server_clean();
  return report;
}

CheckReport Trial::stop_and_check(const std::string& label) {
  for (auto& h : holders_) h->process->signal(SIGTERM);
  for (auto& h : holders_) EXPECT_TRUE(h->process->wait_exit(30s)) << h->id;
  CheckReport report = check_run(store_->records(), logs(), faults_.records());
  std::printf("[  FAULTS  ] %s: %s", label.c_str(), report.describe().c_str());
  expect_server_clean();
  return report;
}

void Trial::expect_server_clean() {
  // Killed holders' sessions still have to expire: up to T (plus the server's tick).
  EXPECT_TRUE(wait_until(
      [&] {
        auto kids = children();
        return kids && kids->empty();
      },
      session_timeout_ + 20s))
      << "lock nodes left behind under " << path_;
  EXPECT_TRUE(wait_until([&] { return watches_left().empty(); }, 20s))
      << "watches left behind: " << join(watches_left());
  remove_path();
}

void Trial::remove_path() {
  try {
    admin_->remove(path_);
  } catch (const Error&) {
  }
}

std::vector<HolderLog> Trial::logs() const {
  std::vector<HolderLog> out;
  for (const auto& h : holders_) out.push_back(h->log());
  return out;
}

std::vector<std::string> Trial::watches_left() {
  std::vector<std::string> out;
  for (int port : ports_) {
    for (const auto& p : watched_paths(port)) {
      if (p.compare(0, path_.size(), path_) == 0) out.push_back(p);
    }
  }
  return out;
}

std::unique_ptr<Trial> standalone_trial() {
  ZkServer& server = fault_server();
  return std::make_unique<Trial>(server.connect_string(), std::vector<int>{server.port()},
                                 server.port());
}

CheckReport run_scenario(const Scenario& scenario,
                         const std::function<void(Trial&, int index)>& body) {
  CheckReport total;
  std::size_t faults = 0;
  int not_applicable = 0;
  for (int index = 0; index < scenario.trials; ++index) {
    const std::unique_ptr<Trial> trial = scenario.new_trial();
    body(*trial, index);
    if (::testing::Test::HasFatalFailure()) return total;
    const std::size_t injected = trial->faults().injected();
    const CheckReport report = trial->finish();
    if (report.not_applicable) {
      // Run again, at most twice per scenario: a machine that stalls every time tests nothing.
      EXPECT_LT(++not_applicable, 3) << scenario.name << ": every re-run stalled";
      if (not_applicable < 3) --index;
      continue;
    }
    faults += injected;
    if (scenario.check_trial) scenario.check_trial(report, injected);
    total.merge(report);
  }
  print_line(reliability_line(scenario.name, scenario.trials, faults, total,
                              scenario.extra ? scenario.extra(total) : std::string()));
  return total;
}

void print_line(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace zklock::testing::faults
