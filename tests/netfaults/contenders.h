// tests/netfaults/contenders.h: lock contenders of the kernel-fault scenarios, each a process
// (so that it can run inside a network namespace), and what their logs say.
//
// The kinds, all built on tests/faults/fault_holder (its log format: fault_checker.h), every one
// writing to a fenced store with its fencing token while it holds, so that fault_checker can
// judge the run:
//  * kLibraryHolder - `fault_holder holder --hold-until-signal --rounds 1`: zklock::Mutex with
//    default SessionOptions (but T); holds until finish() (SIGUSR1) or until told Lost, then exits.
//  * kExecHolder - the real CLI, `zklock exec -v ... -- fault_holder command`: the command writes
//    with $ZKLOCK_FENCING_TOKEN until finish() or until zklock stops it (SIGTERM, logged as
//    "terminated"; zklock then exits 76).
//  * kWaiter - `fault_holder holder --rounds 1 --writes 3`: queues, acquires, writes, releases,
//    exits.
//  * the same three for leader election (issue 24: a leader is told Lost before anyone else can
//    lead): kElectionLeader (fault_holder --election: a zklock::Election participant that leads
//    until finish() or Lost), kElectLeader (`zklock elect -v ... -- fault_holder command`, as
//    kExecHolder), kElectionWaiter (a participant that campaigns, leads, writes, resigns).
// With ContenderSpec::tls each speaks TLS with that client certificate (fault_holder's and the
// CLI's --tls-* options; the CLI's key password through $ZKLOCK_TLS_KEY_PASSWORD, as its help
// advises), and encrypted() tells whether it really did: a TLS trial must not pass over plain TCP.
// Every timestamp is CLOCK_MONOTONIC, one clock for all processes of the machine (namespaces do
// not change it).
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "fault_checker.h"
#include "fenced_store.h"
#include "support/netns.h"
#include "support/process.h"
#include "support/test_pki.h"

namespace zklock::testing::netfaults {

// The zklock CLI from the build; "" when the target zklock-cli is not built.
std::string zklock_cli_path();

enum class ContenderKind {
  kLibraryHolder,
  kExecHolder,
  kWaiter,
  kElectionLeader,
  kElectLeader,
  kElectionWaiter
};
const char* to_string(ContenderKind kind);
// The CLI runs it (kExecHolder, kElectLeader): its events are its command's.
bool runs_cli(ContenderKind kind);
// Who queues behind a holder of `kind`: a lock waiter, or another election participant.
ContenderKind waiter_for(ContenderKind holder);

// The two kinds of holder every scenario runs: the library's Mutex and the CLI's exec.
inline constexpr std::array<ContenderKind, 2> kHolders = {ContenderKind::kLibraryHolder,
                                                          ContenderKind::kExecHolder};
// The leaders the scenarios that show elections run: the library's Election and `zklock elect`.
inline constexpr std::array<ContenderKind, 2> kLeaders = {ContenderKind::kElectionLeader,
                                                          ContenderKind::kElectLeader};

// At the top of a scenario that runs `zklock exec` holders: fails when the CLI was not built.
#define ZKLOCK_REQUIRE_CLI()                                            \
  ASSERT_FALSE(::zklock::testing::netfaults::zklock_cli_path().empty()) \
      << "the zklock CLI (target zklock-cli) is not built: the `zklock exec` half cannot run"

struct ContenderSpec {
  std::string id;       // unique in the run: names its files (no spaces, no '=')
  std::string dir;      // where <id>.log (events) and <id>.out (stdout+stderr) go
  std::string connect;  // ZooKeeper hosts
  std::string path;     // lock path
  std::chrono::milliseconds session_timeout{6000};
  std::string store;  // fenced store socket (faults::FencedStore)
  // TLS with this client certificate (`connect` names TLS ports); none: plain TCP.
  std::optional<ClientCertificate> tls = std::nullopt;
};

// Not thread-safe: one thread drives a contender (its log is read incrementally, see events()).
class Contender {
 public:
  // Starts it inside `netns` (nullptr: in the test's own namespace, the host). Throws
  // std::runtime_error when it cannot start (e.g. kExecHolder without the CLI).
  Contender(ContenderKind kind, const NetNamespace* netns, ContenderSpec spec);
  ~Contender();  // stops the process if it still runs
  Contender(const Contender&) = delete;
  Contender& operator=(const Contender&) = delete;

  ContenderKind kind() const { return kind_; }
  const ContenderSpec& spec() const { return spec_; }
  ChildProcess& process() { return *process_; }

  // Its events as fault_checker reads them. For kExecHolder the command's log, translated:
  // "started token=" is the acquisition, "terminated" is being told Lost, "finish" the release.
  faults::HolderLog log() const;

  // When it acquired (exec: when the command started); 0 before.
  std::int64_t acquired_ns() const;
  // When it was told its lock is lost: the first Lost callback or Lost seen by its state check
  // (exec: the command got SIGTERM); 0 if never.
  std::int64_t told_lost_ns() const;
  // When it gave up because the fenced store refused its write (someone newer wrote): it was
  // fenced out without being told; 0 if not.
  std::int64_t fenced_ns() const;
  // When its hold ended by a release it was asked for (not Lost); 0 if not (yet).
  std::int64_t released_ns() const;
  // kLibraryHolder: the first "session state=Connected prev=Suspended" of the acquisition's
  // generation logged after `after_ns` - the session answered again after a blip; 0 if none.
  std::int64_t answered_again_ns(std::int64_t after_ns) const;
  // The lock went Suspended (exec: zklock said "connection to ZooKeeper suspended").
  bool saw_suspended() const;
  // kLibraryHolder (a waiter): the first moment its session went Suspended or Lost, 0 if never -
  // on a link never cut, a sign that the servers did not serve their clients as they should.
  std::int64_t session_trouble_ns() const;
  // kExecHolder: zklock said "connection to ZooKeeper back" (the lock is Held again).
  bool exec_says_back() const;
  // Its session's connection was encrypted: fault_holder logged encrypted=1 on its first session
  // line (it exits 70 when TLS was asked for and the connection is not encrypted); the CLI said
  // "connected to ... over TLS". False before it connected.
  bool encrypted() const;

  // Ends the hold normally: SIGUSR1 to the holder (exec: to the command, which then exits 0 and
  // zklock releases). No-op for a waiter.
  void finish();

  // The tail of its output and its log, for failure messages.
  std::string evidence() const;

 private:
  std::string log_path() const { return spec_.dir + "/" + spec_.id + ".log"; }
  std::string out_path() const { return spec_.dir + "/" + spec_.id + ".out"; }
  // log(), kept up to date by parsing only the whole lines appended since the last call: the
  // tests poll a contender's state every 10 ms, often with dozens of contenders at once, and a
  // holder's log grows by some 40 lines a second (its writes).
  const faults::HolderLog& events() const;

  const ContenderKind kind_;
  const ContenderSpec spec_;
  std::unique_ptr<ChildProcess> process_;
  mutable faults::HolderLog events_;
  mutable std::size_t parsed_bytes_ = 0;  // of the log file, up to a whole line
  mutable std::string token_;             // kExecHolder: the token of its "started" line
};

// How a holder and the waiter queued behind it ended, once both are done.
struct PairOutcome {
  std::int64_t told_ns = 0;          // the holder was told Lost (0: never)
  std::int64_t taken_ns = 0;         // the waiter acquired (0: never)
  std::int64_t fenced_ns = 0;        // the holder gave up, fenced out by the store (0: it was not)
  std::optional<int> holder_status;  // wait status, once the holder exited
  std::optional<int> waiter_status;
  faults::CheckReport report;  // fault_checker over both logs and the store
  // The holder was told before the waiter acquired (false when the waiter acquired and the holder
  // was told later or never: two holders).
  bool told_first() const { return told_ns != 0 && (taken_ns == 0 || told_ns < taken_ns); }
};

// Waits up to `exit_wait` for each to exit, then judges the pair with fault_checker.
PairOutcome judge_pair(Contender& holder, Contender& waiter, const faults::FencedStore& store,
                       const faults::FaultLog& faults, std::chrono::milliseconds exit_wait);

// The checker's verdict for a failure message: its counts and the first `shown` violations.
std::string summarize(const faults::CheckReport& report, std::size_t shown = 5);

// "12.3" milliseconds from nanoseconds, for messages.
std::string ms(std::int64_t ns);

}  // namespace zklock::testing::netfaults
