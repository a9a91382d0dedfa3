// zklock/errors.h: error codes and exceptions.
//
// Defines:
//   Errc                 - ZooKeeper's result codes (same values) plus zklock's own (positive values).
//   error_category()     - the std::error_category for Errc ("zklock").
//   Error                - base of every zklock exception, a std::system_error carrying an Errc.
//   ConnectionLossError  - the request's outcome is unknown: it may have been applied.
//   SessionLostError     - the session expired or may have expired; what it owned is gone.
//   ClosedError          - the Session was closed.
//   NotAuthorizedError   - ACL or authentication refused the request.
//   InvalidArgumentError - bad input (path, connect string, timeout); nothing was sent.
//   LockLostError        - the lock is no longer held (fenced writes, guards).
//   CancelledError       - Mutex::cancel() stopped a waiting lock() (or a LockRequest was cancelled).
//   LeaseCountMismatchError - a Semaphore's path stores a different lease count (nothing of ours
//                          was left behind).
//
// A timeout that a bool can report (try_lock_for, wait_connected) is not an exception.
#pragma once

#include <string>
#include <system_error>

namespace zklock {

enum class Errc : int {
  ok = 0,
  // ZooKeeper C client codes (ZOO_ERRORS), same numeric values.
  system_error = -1,
  runtime_inconsistency = -2,
  data_inconsistency = -3,
  connection_loss = -4,
  marshalling_error = -5,
  unimplemented = -6,
  operation_timeout = -7,
  bad_arguments = -8,
  invalid_state = -9,
  new_config_no_quorum = -13,
  reconfig_in_progress = -14,
  api_error = -100,
  no_node = -101,
  no_auth = -102,
  bad_version = -103,
  no_children_for_ephemerals = -108,
  node_exists = -110,
  not_empty = -111,
  session_expired = -112,
  invalid_callback = -113,
  invalid_acl = -114,
  auth_failed = -115,
  closing = -116,
  nothing = -117,
  session_moved = -118,
  not_readonly = -119,
  ephemeral_on_local_session = -120,
  no_watcher = -121,
  throttled = -127,
  // zklock's own conditions.
  session_lost = 1,       // expired, or silent long enough that the server may have expired it
  lock_lost = 2,          // the lock is not held any more
  cancelled = 3,          // Mutex::cancel()
  invalid_argument = 4,   // rejected before anything was sent
  closed = 5,             // the Session was closed
  would_deadlock = 6,     // lock() from the thread that holds it (not reentrant)
  not_held = 7,           // an operation that needs the lock held, without it
  incompatible_lock = 8,  // the lock path holds another recipe's nodes (a read/write lock)
  // A Semaphore's path stores another lease count than the Semaphore was given.
  lease_count_mismatch = 9,
  timed_out = 10,  // an asynchronous acquisition's deadline passed before it was acquired
  // TLS was asked for and cannot be had: the C client has none, a TLS file or the key's password
  // is unusable, or no server completed a TLS handshake (SessionOptions::tls).
  tls = 11,
};

/// The category of Errc. Its name() is "zklock"; message() gives a sentence for each code.
const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(Errc e) noexcept {
  return {static_cast<int>(e), error_category()};
}

/// True for codes after which a write may or may not have been applied by the server.
constexpr bool outcome_unknown(Errc e) noexcept {
  return e == Errc::connection_loss || e == Errc::operation_timeout || e == Errc::closing ||
         e == Errc::session_expired || e == Errc::session_lost;
}

class Error : public std::system_error {
 public:
  Error(Errc code, const std::string& what) : std::system_error(make_error_code(code), what) {}
  Errc errc() const noexcept { return static_cast<Errc>(code().value()); }
};

/// The answer to a request that was sent did not come - the connection broke, the request timed
/// out, or (Mutex::commit_fenced) the session was Lost or closed while it was on its way: the
/// request may have been applied. errc() says which. Retrying a create blindly can leave a
/// duplicate; zklock's own recipes never do.
class ConnectionLossError : public Error {
  using Error::Error;
};
/// The session is gone (expired on the server, or unanswered for so long that it may be). Every
/// ephemeral node and watch of that session is gone with it; locks it held are lost.
class SessionLostError : public Error {
  using Error::Error;
};
class ClosedError : public Error {
  using Error::Error;
};
class NotAuthorizedError : public Error {
  using Error::Error;
};
class InvalidArgumentError : public Error {
 public:
  explicit InvalidArgumentError(const std::string& what) : Error(Errc::invalid_argument, what) {}
};
/// The lock is not held any more, and - from Mutex::commit_fenced - nothing was written: the multi
/// was refused before it was sent, or the server answered that the lock node is gone.
class LockLostError : public Error {
 public:
  explicit LockLostError(const std::string& what) : Error(Errc::lock_lost, what) {}
};
class CancelledError : public Error {
 public:
  explicit CancelledError(const std::string& what) : Error(Errc::cancelled, what) {}
};

/// TLS (SessionOptions::tls) was asked for and cannot be had: this zklock's C client was built
/// without TLS, a certificate, key or CA file is unusable (unreadable, not PEM, expired, a wrong
/// key password, a key that does not match the certificate), or no server completed a TLS
/// handshake within the connect timeout (a CA that does not sign the server, a server that speaks
/// plain text or nothing at all, a server that refuses our certificate). what() says which.
/// Nothing is left running, and nothing was sent in plain text.
class TlsError : public Error {
 public:
  explicit TlsError(const std::string& what) : Error(Errc::tls, what) {}
};

/// The semaphore path stores a lease count other than the one this Semaphore was constructed with
/// (or data that is not a lease count): the clients disagree on how many may hold at once. Nothing
/// of ours is left behind.
class LeaseCountMismatchError : public Error {
 public:
  explicit LeaseCountMismatchError(const std::string& what)
      : Error(Errc::lease_count_mismatch, what) {}
};

/// Throws the exception type that fits `code` (ConnectionLossError for connection_loss, ...),
/// with message "<context>: <code's message>". Never returns.
[[noreturn]] void throw_error(Errc code, const std::string& context);

}  // namespace zklock

namespace std {
template <>
struct is_error_code_enum<zklock::Errc> : true_type {};
}  // namespace std
