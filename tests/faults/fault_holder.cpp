// tests/faults/fault_holder.cpp: a lock contender run as a child process by the fault-injection
// suite, so that a test can SIGKILL it (a crash), SIGSTOP it past its session timeout (a GC pause)
// or cut its network (it connects through a FaultProxy given as --connect).
//
//   fault_holder holder --connect HOSTS --path LOCK --id ID --log FILE --store SOCKET [options]
//     Loop: lock; write to the fenced store with the lock's fencing token (a few times, or for
//     --hold-ms, or until SIGUSR1), with small pauses; release; again. Before each write it looks
//     at the lock's state: Held - write; Suspended - wait for Held or Lost ("start nothing
//     irreversible"; the hold does not end while Suspended, except on a signal); Lost - give up
//     the hold. A rejected write also ends the hold (someone newer holds the lock).
//     Every event goes to FILE, one flushed line "<CLOCK_MONOTONIC ns> <kind> key=value ..."
//     (fault_checker.h lists the kinds). The timestamp of a write attempt is taken BEFORE the
//     state check, so "attempted before told Lost" is exact.
//   fault_holder command --log FILE --id ID [--store SOCKET] [--write-pause-ms N]
//     The COMMAND of `zklock exec`: logs "started" with $ZKLOCK_FENCING_TOKEN, writes with that
//     token every N ms when --store is given, logs "terminated" and exits 143 on SIGTERM, exits 0
//     after "finish" on SIGUSR1.
//
// Holder options:
//   --election        contend as a participant of a zklock::Election on LOCK instead of with a
//                     Mutex: acquired is leading, the token is the term, the release a resign()
//   --session-timeout-ms T (3000)   --writes N (3)   --write-pause-ms P (20)
//   --hold-ms D       hold for D ms (writing every P ms) instead of N writes
//   --hold-until-signal   hold (writing every P ms) until SIGUSR1, Lost or a rejected write
//   --idle-ms I (0)   pause between release and the next lock()
//   --rounds R (0 = forever)   stop after R acquisitions
//   --linger          after the rounds, stay alive (serving SIGUSR2) until SIGTERM
//   --tls-ca FILE --tls-cert FILE --tls-key FILE [--tls-key-password PW]
//                     speak TLS (zklock::TlsOptions; all three files, or none): HOSTS then names
//                     TLS ports. The first session line says encrypted=1|0, and a connection that
//                     is not encrypted ends the holder (fatal, exit 70): a test that asked for TLS
//                     must not pass over plain TCP
//   --pause-before-write N   on write number N (1-based, per process), after the state check and
//                     the attempt line, log "self_stop" and stop with SIGSTOP: a process paused
//                     between its check and its write; the test thaws it (SIGCONT)
// Broken variants, for showing that the checker catches them:
//   --ignore-lost     never look at the lock state; keep writing after Lost and after rejections
//   --stale-token     write with the token of the first acquisition, always
// Signals: SIGTERM/SIGINT - release (or leave the queue) and exit 0; SIGUSR1 - end the current
// hold (release); SIGUSR2 - one "late" write with the last token held, whatever the state (logged
// late=1; the test uses it to show that an old holder's late write is refused).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fenced_store.h"
#include "zklock/zklock.h"

namespace {

using namespace std::chrono_literals;
using zklock::testing::faults::FencedStoreClient;
using zklock::testing::faults::monotonic_ns;

// ---- The event log: one write(2) per line, so a SIGKILL never leaves half of a flushed line
// behind a complete one, and nothing sits in a user-space buffer.
class EventLog {
 public:
  void open(const std::string& path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      std::perror(("fault_holder: open " + path).c_str());
      std::exit(2);
    }
  }
  void line(std::int64_t at_ns, const std::string& kind, const std::string& fields = {}) {
    std::string text = std::to_string(at_ns) + " " + kind;
    if (!fields.empty()) text += " " + fields;
    text += "\n";
    std::lock_guard lock(mutex_);
    (void)!::write(fd_, text.data(), text.size());
  }
  void line(const std::string& kind, const std::string& fields = {}) {
    line(monotonic_ns(), kind, fields);
  }

 private:
  int fd_ = -1;
  std::mutex mutex_;
};

EventLog g_log;

struct Options {
  std::string mode;
  std::string connect, path, id, log, store;
  long session_timeout_ms = 3000;
  long writes = 3;
  long write_pause_ms = 20;
  long hold_ms = 0;
  bool hold_until_signal = false;
  bool election = false;
  long idle_ms = 0;
  long rounds = 0;
  bool linger = false;
  long pause_before_write = 0;
  bool ignore_lost = false;
  bool stale_token = false;
  std::string tls_ca, tls_cert, tls_key, tls_key_password;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "fault_holder: %s\n(see the comment at the top of tests/faults/fault_holder.cpp)\n",
               why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  if (argc < 2) usage("missing mode (holder | command)");
  Options o;
  o.mode = argv[1];
  if (o.mode != "holder" && o.mode != "command") usage("unknown mode " + o.mode);
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value for " + a);
      return argv[++i];
    };
    auto number = [&]() -> long {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 0) usage("bad number for " + a + ": " + v);
      return n;
    };
    if (a == "--connect")
      o.connect = value();
    else if (a == "--path")
      o.path = value();
    else if (a == "--id")
      o.id = value();
    else if (a == "--log")
      o.log = value();
    else if (a == "--store")
      o.store = value();
    else if (a == "--session-timeout-ms")
      o.session_timeout_ms = number();
    else if (a == "--writes")
      o.writes = number();
    else if (a == "--write-pause-ms")
      o.write_pause_ms = number();
    else if (a == "--hold-ms")
      o.hold_ms = number();
    else if (a == "--hold-until-signal")
      o.hold_until_signal = true;
    else if (a == "--election")
      o.election = true;
    else if (a == "--idle-ms")
      o.idle_ms = number();
    else if (a == "--rounds")
      o.rounds = number();
    else if (a == "--linger")
      o.linger = true;
    else if (a == "--pause-before-write")
      o.pause_before_write = number();
    else if (a == "--ignore-lost")
      o.ignore_lost = true;
    else if (a == "--stale-token")
      o.stale_token = true;
    else if (a == "--tls-ca")
      o.tls_ca = value();
    else if (a == "--tls-cert")
      o.tls_cert = value();
    else if (a == "--tls-key")
      o.tls_key = value();
    else if (a == "--tls-key-password")
      o.tls_key_password = value();
    else
      usage("unknown option " + a);
  }
  if (o.id.empty() || o.log.empty()) usage("--id and --log are required");
  if (o.id.find_first_of(" \t\n=") != std::string::npos)
    usage("--id must not contain spaces or '='");
  if (o.mode == "holder" && (o.connect.empty() || o.path.empty() || o.store.empty())) {
    usage("holder needs --connect, --path and --store");
  }
  const int tls_files = static_cast<int>(!o.tls_ca.empty()) +
                        static_cast<int>(!o.tls_cert.empty()) +
                        static_cast<int>(!o.tls_key.empty());
  if (tls_files != 0 && tls_files != 3) usage("--tls-ca, --tls-cert and --tls-key go together");
  if (tls_files == 0 && !o.tls_key_password.empty()) usage("--tls-key-password without --tls-key");
  return o;
}

std::string no_spaces(std::string s) {
  for (char& c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '=') c = '_';
  }
  return s;
}

// ---- Process-wide state shared with the signal thread.
std::atomic<bool> g_stop{false};
std::atomic<bool> g_end_hold{false};
std::atomic<bool> g_finish{false};
std::atomic<std::int64_t> g_last_token{0};
std::atomic<std::int64_t> g_write_no{0};
// What a holder contends for: a Mutex, or the leadership of an Election on the same path.
class Contest {
 public:
  Contest(zklock::Session& session, const std::string& path, bool election,
          const std::string& description,
          const std::function<void(zklock::LockState, const zklock::Acquisition&)>& on_state) {
    if (election) {
      zklock::ElectionOptions eo;
      eo.value = description;
      eo.on_state_change = on_state;
      election_ = std::make_unique<zklock::Election>(session, path, eo);
    } else {
      zklock::MutexOptions mo;
      mo.description = description;
      mo.on_state_change = on_state;
      mutex_ = std::make_unique<zklock::Mutex>(session, path, mo);
    }
  }
  void lock() { mutex_ ? mutex_->lock() : election_->campaign(); }
  void unlock() { mutex_ ? mutex_->unlock() : election_->resign(); }
  void cancel() noexcept { mutex_ ? mutex_->cancel() : election_->cancel(); }
  zklock::LockState state() const { return mutex_ ? mutex_->state() : election_->state(); }
  std::optional<zklock::Acquisition> acquisition() const {
    return mutex_ ? mutex_->acquisition() : election_->leadership();
  }

 private:
  std::unique_ptr<zklock::Mutex> mutex_;
  std::unique_ptr<zklock::Election> election_;
};

std::atomic<Contest*> g_mutex{nullptr};
// Command mode: a write and the exit on SIGTERM exclude each other, so that no write begins after
// the command was told (the signal), as a well-behaved command under `zklock exec` would.
std::mutex g_command_write_mutex;
Options g_options;

// One write to the store, logged as attempt (at `t0`) and result. Returns the reply, or nullopt
// (logged as write_error) when the store could not be reached.
std::optional<FencedStoreClient::Reply> logged_write(FencedStoreClient& store, std::int64_t t0,
                                                     std::int64_t token, bool late,
                                                     bool self_stop_check) {
  const std::int64_t n = ++g_write_no;
  g_log.line(
      t0, "write_attempt",
      "n=" + std::to_string(n) + " token=" + std::to_string(token) + " late=" + (late ? "1" : "0"));
  if (self_stop_check && g_options.pause_before_write == n) {
    // Paused between the state check and the write, like a GC pause at the worst moment.
    g_log.line("self_stop", "n=" + std::to_string(n));
    ::raise(SIGSTOP);
    g_log.line("self_resumed", "n=" + std::to_string(n));
  }
  try {
    const auto reply = store.write(g_options.id, token, n);
    g_log.line("write_result", "n=" + std::to_string(n) + " token=" + std::to_string(token) +
                                   " result=" + (reply.accepted ? "accepted" : "rejected") +
                                   " newest=" + std::to_string(reply.newest));
    return reply;
  } catch (const std::exception& e) {
    g_log.line("write_error", "n=" + std::to_string(n) + " what=" + no_spaces(e.what()));
    return std::nullopt;
  }
}

void signal_thread(sigset_t set) {
  std::unique_ptr<FencedStoreClient> late_store;
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
      if (g_options.mode == "command") {
        std::lock_guard no_more_writes(g_command_write_mutex);  // held until _exit
        g_log.line("signal", "sig=" + std::to_string(sig));
        g_log.line("terminated", "sig=" + std::to_string(sig));
        ::_exit(128 + sig);
      }
      g_log.line("signal", "sig=" + std::to_string(sig));
      g_stop = true;
      g_end_hold = true;
      if (auto* m = g_mutex.load()) m->cancel();
    } else if (sig == SIGUSR1) {
      g_log.line("signal", "sig=USR1");
      g_end_hold = true;
      g_finish = true;
    } else if (sig == SIGUSR2) {
      const std::int64_t token = g_last_token.load();
      if (token == 0 || g_options.store.empty()) continue;
      try {
        if (!late_store) late_store = std::make_unique<FencedStoreClient>(g_options.store);
        logged_write(*late_store, monotonic_ns(), token, /*late=*/true, false);
      } catch (const std::exception& e) {
        g_log.line("write_error", "late=1 what=" + no_spaces(e.what()));
      }
    }
  }
}

void sleep_ms(long ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// ---- command mode: the program `zklock exec` runs under the lock.
int run_command() {
  const char* token_text = std::getenv("ZKLOCK_FENCING_TOKEN");
  const auto token = zklock::FencingToken::parse(token_text ? token_text : "");
  g_log.line("started", "pid=" + std::to_string(::getpid()) +
                            " token=" + (token ? token->to_string() : "none"));
  if (token) g_last_token = token->value();
  std::unique_ptr<FencedStoreClient> store;
  if (!g_options.store.empty()) store = std::make_unique<FencedStoreClient>(g_options.store);
  while (!g_finish) {
    if (store && token) {
      std::lock_guard not_while_exiting(g_command_write_mutex);
      if (!logged_write(*store, monotonic_ns(), token->value(), false, false)) return 3;
    }
    sleep_ms(std::max(g_options.write_pause_ms, 5L));
  }
  g_log.line("finish");
  return 0;
}

// ---- holder mode.
int run_holder() {
  const Options& o = g_options;
  zklock::SessionOptions so;
  so.connect = o.connect;
  so.session_timeout = std::chrono::milliseconds(o.session_timeout_ms);
  so.connect_timeout = 10s;
  so.log_level = zklock::LogLevel::kWarn;
  // To stderr (the test's per-process log file), each line stamped on the clock of the event log
  // and of the test's fault records, so a trial's lines can be read against its cut and heal.
  so.log_sink = [](zklock::LogLevel, std::string_view line) {
    const std::string text = std::to_string(monotonic_ns()) + " " + std::string(line) + "\n";
    (void)!::write(STDERR_FILENO, text.data(), text.size());
  };
  const bool tls = !o.tls_key.empty();
  if (tls) so.tls = zklock::TlsOptions{o.tls_ca, o.tls_cert, o.tls_key, o.tls_key_password};
  // ZKLOCK_FAULT_HOLDER_DEBUG=1: the session's debug lines too (forced reconnects, the route), for
  // looking into a trial by hand.
  if (const char* debug = std::getenv("ZKLOCK_FAULT_HOLDER_DEBUG"); debug && *debug == '1') {
    so.log_level = zklock::LogLevel::kDebug;
  }

  std::unique_ptr<zklock::Session> session;
  while (!session) {
    if (g_stop) {
      g_log.line("exit", "code=0 before=session");
      return 0;
    }
    try {
      session = std::make_unique<zklock::Session>(so);
    } catch (const std::exception& e) {
      g_log.line("session_error", "what=" + no_spaces(e.what()));
      sleep_ms(300);
    }
  }
  session->add_listener([](const zklock::SessionEvent& e) {
    g_log.line("session", "state=" + std::string(zklock::to_string(e.state)) +
                              " prev=" + std::string(zklock::to_string(e.previous)) +
                              " gen=" + std::to_string(e.generation) +
                              " sid=" + zklock::session_id_hex(e.session_id));
  });
  g_log.line("session",
             "state=Connected prev=Connecting gen=" + std::to_string(session->generation()) +
                 " sid=" + zklock::session_id_hex(session->session_id()) + " timeout_ms=" +
                 std::to_string(session->negotiated_timeout().count()) + " initial=1" +
                 (tls ? std::string(" encrypted=") + (session->encrypted() ? "1" : "0") : ""));
  if (tls && !session->encrypted()) {
    g_log.line("fatal", "what=TLS_asked_for_but_the_connection_is_not_encrypted");
    std::fprintf(stderr, "fault_holder: TLS asked for, but the connection is not encrypted\n");
    return 70;
  }

  Contest mutex(*session, o.path, o.election, "fault_holder " + o.id,
                [](zklock::LockState s, const zklock::Acquisition& a) {
                  g_log.line("lock_state", "state=" + std::string(zklock::to_string(s)) +
                                               " token=" + std::to_string(a.token().value()) +
                                               " gen=" + std::to_string(a.generation));
                });
  g_mutex = &mutex;
  FencedStoreClient store(o.store);

  std::int64_t first_token = 0;
  long rounds_done = 0;
  int code = 0;
  while (!g_stop && (o.rounds == 0 || rounds_done < o.rounds)) {
    try {
      mutex.lock();
    } catch (const zklock::CancelledError&) {
      continue;  // g_stop is set
    } catch (const std::exception& e) {
      g_log.line("lock_error", "what=" + no_spaces(e.what()));
      sleep_ms(100);
      continue;
    }
    const zklock::Acquisition acq = *mutex.acquisition();
    const std::int64_t token = acq.token().value();
    if (first_token == 0) first_token = token;
    g_last_token = token;
    g_end_hold = g_stop.load();
    g_log.line(zklock::testing::faults::to_ns(acq.acquired_at), "acquired",
               "token=" + std::to_string(token) + " seq=" + std::to_string(acq.sequence) +
                   " gen=" + std::to_string(acq.generation) +
                   " sid=" + zklock::session_id_hex(acq.session_id));

    const auto hold_deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(o.hold_ms);
    long writes_done = 0;
    std::string reason = "done";
    for (;;) {
      if (g_end_hold) {
        reason = g_stop ? "stopped" : "asked";
        break;
      }
      const std::int64_t t0 = monotonic_ns();  // before the check: see the file comment
      if (!o.ignore_lost) {
        const zklock::LockState s = mutex.state();
        if (s == zklock::LockState::kLost || s == zklock::LockState::kNotHeld) {
          reason = "lost";
          break;
        }
        if (s == zklock::LockState::kSuspended) {
          // Start nothing irreversible, and do not end the hold either: wait for Held or Lost
          // (so a fault that hits a holder is seen through to its outcome).
          sleep_ms(5);
          continue;
        }
      }
      if (o.hold_until_signal) {
      } else if (o.hold_ms > 0) {
        if (std::chrono::steady_clock::now() >= hold_deadline) break;
      } else if (writes_done >= o.writes) {
        break;
      }
      const auto reply = logged_write(store, t0, o.stale_token ? first_token : token, false, true);
      if (!reply) {
        reason = "store-error";
        code = 3;
        break;
      }
      ++writes_done;
      if (!reply->accepted && !o.ignore_lost) {
        reason = "fenced";
        break;
      }
      sleep_ms(o.write_pause_ms);
    }
    const std::string state(zklock::to_string(mutex.state()));
    if (reason == "lost" || reason == "fenced" || reason == "store-error") {
      g_log.line("gave_up",
                 "token=" + std::to_string(token) + " reason=" + reason + " state=" + state);
    } else {
      g_log.line("released",
                 "token=" + std::to_string(token) + " reason=" + reason + " state=" + state);
    }
    mutex.unlock();
    ++rounds_done;
    if (code != 0) break;
    if (!g_stop) sleep_ms(o.idle_ms);
  }
  while (o.linger && !g_stop && code == 0) sleep_ms(10);
  g_mutex = nullptr;
  g_log.line("exit", "code=" + std::to_string(code));
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  g_options = parse(argc, argv);
  g_log.open(g_options.log);
  // Signals are taken by one thread with sigwait; blocked here before any other thread starts.
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread(signal_thread, set).detach();
  g_log.line("start", "id=" + g_options.id + " pid=" + std::to_string(::getpid()) + " mode=" +
                          g_options.mode + (g_options.ignore_lost ? " ignore_lost=1" : "") +
                          (g_options.stale_token ? " stale_token=1" : ""));
  try {
    const int code = g_options.mode == "command" ? run_command() : run_holder();
    std::fflush(nullptr);
    ::_exit(code);  // the detached signal thread must not run static destructors' race
  } catch (const std::exception& e) {
    g_log.line("fatal", "what=" + no_spaces(e.what()));
    std::fprintf(stderr, "fault_holder: %s\n", e.what());
    ::_exit(70);
  }
}
