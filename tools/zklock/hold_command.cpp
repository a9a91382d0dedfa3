#include "hold_command.h"

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli_lock.h"
#include "exit_codes.h"
#include "lock_state_watch.h"
#include "lock_wait.h"
#include "metrics_listener.h"
#include "zklock/mutex.h"

namespace zklock::cli {
namespace {

void print_acquisition(const Acquisition& acquisition, bool json) {
  if (json) {
    const nlohmann::json out = {
        {"path", acquisition.lock_path},    {"node", acquisition.node_path},
        {"sequence", acquisition.sequence}, {"fencing_token", acquisition.token().to_string()},
        {"czxid", acquisition.czxid},       {"session_id", session_id_hex(acquisition.session_id)},
        {"shared", acquisition.shared},
    };
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  } else {
    std::cout << acquisition.token().to_string() << ' ' << acquisition.sequence << ' '
              << acquisition.node_path << std::endl;
  }
}

}  // namespace

int run_hold(const HoldOptions& hold, const CommonOptions& common, const LockOptions& lock,
             const Console& console, SignalReader& signals) {
  CliLock held(hold.path, common, lock, console);
  // From the session opened to the end: the wait for the lock shows in the figures too.
  const auto metrics = listen_for_metrics(lock.metrics_listen, console);
  if (const auto not_acquired_code = held.acquire(signals)) return *not_acquired_code;
  print_acquisition(*held.lock().acquisition(), hold.json);
  console.note("holding " + hold.path + " until SIGINT or SIGTERM");

  LockStateWatch watch(held.lock(), held.session(), console);
  int code = exit_code::kOk;
  for (;;) {
    if (watch.check() == LockState::kLost) {
      console.error("lock on " + hold.path +
                    " LOST (our ZooKeeper session may have expired; another process may hold "
                    "the lock now)");
      code = exit_code::kLockLost;
      break;
    }
    if (held.revocation_requested()) {
      console.note("revocation of " + hold.path + " requested: releasing");
      break;
    }
    bool stop = false;
    for (const auto& info : signals.wait(held.state_changed(), watch.poll_timeout_ms())) {
      if (SignalReader::is_termination(static_cast<int>(info.ssi_signo))) {
        console.note(signal_name(static_cast<int>(info.ssi_signo)) + ": releasing " + hold.path);
        stop = true;
      }
    }
    if (stop) break;
  }
  held.release();
  if (code == exit_code::kOk) console.note("released " + hold.path);
  return code;
}

}  // namespace zklock::cli
