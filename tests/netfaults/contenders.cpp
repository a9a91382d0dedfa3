// tests/netfaults/contenders.cpp
#include "contenders.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "support/cli_tls.h"

namespace zklock::testing::netfaults {
namespace {

#ifdef ZKLOCK_CLI_BIN
constexpr const char* kCli = ZKLOCK_CLI_BIN;
#else
constexpr const char* kCli = "";
#endif

// `fault_holder holder` on the spec's server, lock, store and session timeout, then `extra`.
std::vector<std::string> fault_holder_argv(const ContenderSpec& s, const std::string& log,
                                           std::initializer_list<std::string> extra) {
  std::vector<std::string> argv = {FAULT_HOLDER_BIN, "holder", "--connect", s.connect,
                                   "--path",         s.path,   "--id",      s.id,
                                   "--log",          log,      "--store",   s.store};
  argv.insert(argv.end(), {"--session-timeout-ms", std::to_string(s.session_timeout.count())});
  if (s.tls) {
    argv.insert(argv.end(), {"--tls-ca", s.tls->ca_file, "--tls-cert", s.tls->cert_file,
                             "--tls-key", s.tls->key_file});
    if (!s.tls->key_password.empty()) {
      argv.insert(argv.end(), {"--tls-key-password", s.tls->key_password});
    }
  }
  argv.insert(argv.end(), extra);
  return argv;
}

std::vector<std::string> argv_for(ContenderKind kind, const ContenderSpec& s,
                                  const std::string& log) {
  switch (kind) {
    case ContenderKind::kLibraryHolder:
      return fault_holder_argv(s, log,
                               {"--hold-until-signal", "--rounds", "1", "--write-pause-ms", "50"});
    case ContenderKind::kElectionLeader:
      return fault_holder_argv(
          s, log, {"--election", "--hold-until-signal", "--rounds", "1", "--write-pause-ms", "50"});
    case ContenderKind::kWaiter:
      return fault_holder_argv(s, log,
                               {"--rounds", "1", "--writes", "3", "--write-pause-ms", "20"});
    case ContenderKind::kElectionWaiter:
      return fault_holder_argv(
          s, log, {"--election", "--rounds", "1", "--writes", "3", "--write-pause-ms", "20"});
    case ContenderKind::kExecHolder:
    case ContenderKind::kElectLeader: {
      const char* command = kind == ContenderKind::kExecHolder ? "exec" : "elect";
      std::vector<std::string> argv = {zklock_cli_path(), command, "-v", "--connect", s.connect};
      if (s.tls) {
        // The key's password goes through the environment (cli_environment).
        const std::vector<std::string> tls = cli_tls_options(*s.tls);
        argv.insert(argv.end(), tls.begin(), tls.end());
      }
      argv.insert(argv.end(),
                  {"--session-timeout", std::to_string(s.session_timeout.count()) + "ms",
                   "--connect-timeout", "20s", s.path, "--"});
      argv.insert(argv.end(), {FAULT_HOLDER_BIN, "command", "--log", log, "--id", s.id, "--store",
                               s.store, "--write-pause-ms", "50"});
      return argv;
    }
  }
  throw std::logic_error("unknown contender kind");
}

// What the CLI needs besides its arguments: the TLS key's password (cli_tls.h).
std::vector<std::string> cli_environment(const ContenderSpec& s) {
  return s.tls ? cli_tls_environment(*s.tls) : std::vector<std::string>{};
}

// The time of the first event of `kind` (with field `key` == `value` when given); 0 if none.
std::int64_t first_at(const faults::HolderLog& log, const std::string& kind,
                      const std::string& key = {}, const std::string& value = {}) {
  for (const auto& e : log.events) {
    if (e.kind != kind) continue;
    if (!key.empty() && e.get(key) != value) continue;
    return e.at_ns;
  }
  return 0;
}

std::string read_text(const std::string& path) { return tail_file(path, 1 << 20); }

}  // namespace

std::string zklock_cli_path() {
  const std::string cli = kCli;
  return !cli.empty() && std::filesystem::exists(cli) ? cli : std::string();
}

const char* to_string(ContenderKind kind) {
  switch (kind) {
    case ContenderKind::kLibraryHolder:
      return "mutex";
    case ContenderKind::kExecHolder:
      return "exec";
    case ContenderKind::kWaiter:
      return "waiter";
    case ContenderKind::kElectionLeader:
      return "election";
    case ContenderKind::kElectLeader:
      return "elect";
    case ContenderKind::kElectionWaiter:
      return "participant";
  }
  return "?";
}

bool runs_cli(ContenderKind kind) {
  return kind == ContenderKind::kExecHolder || kind == ContenderKind::kElectLeader;
}

ContenderKind waiter_for(ContenderKind holder) {
  return holder == ContenderKind::kElectionLeader || holder == ContenderKind::kElectLeader
             ? ContenderKind::kElectionWaiter
             : ContenderKind::kWaiter;
}

Contender::Contender(ContenderKind kind, const NetNamespace* netns, ContenderSpec spec)
    : kind_(kind), spec_(std::move(spec)) {
  if (runs_cli(kind_) && zklock_cli_path().empty()) {
    throw std::runtime_error("the zklock CLI (target zklock-cli) is not built");
  }
  std::vector<std::string> argv = argv_for(kind_, spec_, log_path());
  if (netns != nullptr) argv = netns->command(argv);
  SpawnOptions options;
  options.log_path = out_path();
  if (runs_cli(kind_)) options.extra_env = cli_environment(spec_);
  process_ = std::make_unique<ChildProcess>(argv, options);
}

Contender::~Contender() = default;  // ~ChildProcess stops and reaps it

const faults::HolderLog& Contender::events() const {
  if (events_.path.empty()) {
    events_.path = log_path();
    events_.id = spec_.id;
  }
  std::ifstream in(log_path(), std::ios::binary);
  if (!in) return events_;
  in.seekg(static_cast<std::streamoff>(parsed_bytes_));
  std::string fresh((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t whole = fresh.rfind('\n');
  if (whole == std::string::npos) return events_;  // nothing new, or half a line
  fresh.resize(whole + 1);
  parsed_bytes_ += fresh.size();
  for (auto& e : faults::parse_log(fresh)) {
    if (runs_cli(kind_)) {
      // The command's log, in a holder's words (see log()).
      if (e.kind == "started") {
        e.kind = "acquired";
        token_ = e.get("token");
      } else if (e.kind == "terminated") {
        e.kind = "lock_state";
        e.fields = {{"state", "Lost"}, {"token", token_}};
      } else if (e.kind == "finish") {
        e.kind = "released";
        e.fields = {{"token", token_}, {"reason", "asked"}};
      }
    }
    if (e.kind == "start" && !e.get("id").empty()) events_.id = e.get("id");
    events_.events.push_back(std::move(e));
  }
  return events_;
}

faults::HolderLog Contender::log() const { return events(); }

std::int64_t Contender::acquired_ns() const { return first_at(events(), "acquired"); }

std::int64_t Contender::told_lost_ns() const {
  const faults::HolderLog& log = events();
  const std::int64_t callback = first_at(log, "lock_state", "state", "Lost");
  const std::int64_t gave_up = first_at(log, "gave_up", "reason", "lost");
  if (callback == 0 || gave_up == 0) return std::max(callback, gave_up);
  return std::min(callback, gave_up);
}

std::int64_t Contender::fenced_ns() const {
  return first_at(events(), "gave_up", "reason", "fenced");
}

std::int64_t Contender::released_ns() const { return first_at(events(), "released"); }

std::int64_t Contender::answered_again_ns(std::int64_t after_ns) const {
  const faults::HolderLog& events = this->events();
  const auto acquired = events.of("acquired");
  if (acquired.empty()) return 0;
  const std::string generation = acquired.front().get("gen");
  for (const auto& e : events.events) {
    if (e.kind == "session" && e.at_ns > after_ns && e.get("state") == "Connected" &&
        e.get("prev") == "Suspended" && e.get("gen") == generation) {
      return e.at_ns;
    }
  }
  return 0;
}

bool Contender::saw_suspended() const {
  if (runs_cli(kind_)) {
    return read_text(out_path()).find("connection to ZooKeeper suspended") != std::string::npos;
  }
  return first_at(events(), "lock_state", "state", "Suspended") != 0;
}

std::int64_t Contender::session_trouble_ns() const {
  const faults::HolderLog& log = events();
  std::int64_t first = 0;
  for (const char* state : {"Suspended", "Lost"}) {
    const std::int64_t at = first_at(log, "session", "state", state);
    if (at != 0 && (first == 0 || at < first)) first = at;
  }
  return first;
}

bool Contender::exec_says_back() const {
  return runs_cli(kind_) &&
         read_text(out_path()).find("connection to ZooKeeper back") != std::string::npos;
}

bool Contender::encrypted() const {
  if (runs_cli(kind_)) {
    return read_text(out_path()).find(" over TLS (session ") != std::string::npos;
  }
  for (const auto& e : events().events) {
    if (e.kind == "session" && e.get("initial") == "1") return e.get("encrypted") == "1";
  }
  return false;
}

void Contender::finish() {
  if (kind_ == ContenderKind::kLibraryHolder || kind_ == ContenderKind::kElectionLeader) {
    process_->signal(SIGUSR1);
  } else if (runs_cli(kind_)) {
    // Not to zklock's process group: SIGUSR1 would end zklock itself. The command's own pid.
    const auto started = faults::read_holder_log(log_path()).of("started");
    if (!started.empty()) ::kill(static_cast<pid_t>(started.front().num("pid")), SIGUSR1);
  }
}

std::string Contender::evidence() const {
  // The log without its many write lines (the checker reports on writes).
  std::string events;
  int shown = 0;
  const std::string text = read_text(log_path());
  std::size_t end = text.size();
  while (end > 0 && shown < 25) {
    const std::size_t begin = text.rfind('\n', end - 1);
    const std::size_t from = begin == std::string::npos ? 0 : begin + 1;
    const std::string line = text.substr(from, end - from);
    if (line.find(" write_") == std::string::npos && !line.empty()) {
      events.insert(0, line + "\n");
      ++shown;
    }
    if (begin == std::string::npos) break;
    end = begin;
  }
  return "--- " + spec_.id + " (" + to_string(kind_) + "): " + out_path() + " ends:\n" +
         tail_file(out_path(), 1200) + "\n--- its events (" + log_path() + ", writes left out):\n" +
         events;
}

PairOutcome judge_pair(Contender& holder, Contender& waiter, const faults::FencedStore& store,
                       const faults::FaultLog& faults, std::chrono::milliseconds exit_wait) {
  PairOutcome out;
  out.holder_status = holder.process().wait_exit(exit_wait);
  out.waiter_status = waiter.process().wait_exit(exit_wait);
  out.told_ns = holder.told_lost_ns();
  out.taken_ns = waiter.acquired_ns();
  out.fenced_ns = holder.fenced_ns();
  out.report = faults::check_run(store.records(), {holder.log(), waiter.log()}, faults.records());
  return out;
}

std::string summarize(const faults::CheckReport& report, std::size_t shown) {
  std::string text = std::to_string(report.violations.size()) + " violation(s), " +
                     std::to_string(report.accepted) + " writes accepted, " +
                     std::to_string(report.rejected) + " rejected";
  for (std::size_t i = 0; i < report.violations.size() && i < shown; ++i) {
    text += "\n    " + report.violations[i].rule + ": " + report.violations[i].detail;
  }
  if (report.violations.size() > shown) {
    text += "\n    ... and " + std::to_string(report.violations.size() - shown) + " more";
  }
  return text;
}

std::string ms(std::int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(ns) / 1e6);
  return text;
}

}  // namespace zklock::testing::netfaults
