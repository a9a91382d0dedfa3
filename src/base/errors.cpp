// Error category and the mapping from codes to exception types.
#include "zklock/errors.h"

#include <string>

namespace zklock {
namespace {

class Category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "zklock"; }
  std::string message(int code) const override {
    switch (static_cast<Errc>(code)) {
      case Errc::ok:
        return "ok";
      case Errc::system_error:
        return "system error in the ZooKeeper client";
      case Errc::runtime_inconsistency:
        return "runtime inconsistency (multi: another op failed)";
      case Errc::data_inconsistency:
        return "data inconsistency";
      case Errc::connection_loss:
        return "connection to ZooKeeper lost; outcome unknown";
      case Errc::marshalling_error:
        return "marshalling error";
      case Errc::unimplemented:
        return "operation not implemented";
      case Errc::operation_timeout:
        return "operation timed out; outcome unknown";
      case Errc::bad_arguments:
        return "bad arguments";
      case Errc::invalid_state:
        return "invalid handle state (session expired or auth failed)";
      case Errc::new_config_no_quorum:
        return "new config has no quorum";
      case Errc::reconfig_in_progress:
        return "reconfiguration in progress";
      case Errc::api_error:
        return "API error";
      case Errc::no_node:
        return "node does not exist";
      case Errc::no_auth:
        return "not authorized";
      case Errc::bad_version:
        return "version mismatch";
      case Errc::no_children_for_ephemerals:
        return "ephemeral nodes cannot have children";
      case Errc::node_exists:
        return "node already exists";
      case Errc::not_empty:
        return "node has children";
      case Errc::session_expired:
        return "session expired";
      case Errc::invalid_callback:
        return "invalid callback";
      case Errc::invalid_acl:
        return "invalid ACL";
      case Errc::auth_failed:
        return "authentication failed";
      case Errc::closing:
        return "ZooKeeper handle is closing";
      case Errc::nothing:
        return "no server responses to process";
      case Errc::session_moved:
        return "session moved to another server";
      case Errc::not_readonly:
        return "state-changing request sent to a read-only server";
      case Errc::ephemeral_on_local_session:
        return "ephemeral node on a local session";
      case Errc::no_watcher:
        return "no such watcher";
      case Errc::throttled:
        return "request throttled by the server";
      case Errc::session_lost:
        return "ZooKeeper session lost (expired, or may have expired)";
      case Errc::lock_lost:
        return "lock lost";
      case Errc::cancelled:
        return "cancelled";
      case Errc::invalid_argument:
        return "invalid argument";
      case Errc::closed:
        return "session closed";
      case Errc::would_deadlock:
        return "this thread already holds the lock (zklock::Mutex is not reentrant)";
      case Errc::not_held:
        return "lock not held";
      case Errc::incompatible_lock:
        return "the lock path holds read/write lock nodes (Curator's InterProcessReadWriteLock or "
               "kazoo's ReadLock), whose readers would not see a Mutex";
      case Errc::lease_count_mismatch:
        return "the semaphore path stores a different lease count: every client of a semaphore "
               "must be given the same count";
      case Errc::timed_out:
        return "not acquired before the deadline";
      case Errc::tls:
        return "TLS to ZooKeeper could not be set up";
    }
    return "ZooKeeper error " + std::to_string(code);
  }
};

}  // namespace

const std::error_category& error_category() noexcept {
  static const Category category;
  return category;
}

void throw_error(Errc code, const std::string& context) {
  const std::string& what = context;  // std::system_error appends ": <code's message>"
  switch (code) {
    case Errc::connection_loss:
    case Errc::operation_timeout:
    case Errc::closing:
      throw ConnectionLossError(code, what);
    case Errc::session_expired:
    case Errc::session_lost:
    case Errc::invalid_state:
      throw SessionLostError(code, what);
    case Errc::closed:
      throw ClosedError(code, what);
    case Errc::no_auth:
    case Errc::auth_failed:
    case Errc::invalid_acl:
      throw NotAuthorizedError(code, what);
    case Errc::invalid_argument:
    case Errc::bad_arguments:
      throw InvalidArgumentError(what);
    case Errc::lock_lost:
      throw LockLostError(what);
    case Errc::cancelled:
      throw CancelledError(what);
    case Errc::lease_count_mismatch:
      throw LeaseCountMismatchError(what);
    case Errc::tls:
      throw TlsError(what);
    default:
      throw Error(code, what);
  }
}

}  // namespace zklock
