// zklock/session.h: Session, one ZooKeeper session kept alive and watched over.
//
// A Session owns one ZooKeeper handle at a time and a monitor that decides, on this machine's
// clock, whether the server may have expired the session. It tells a disconnect (Suspended: the
// session may well live on) from a lost session (Lost: expired, or silent for so long that the
// server may have expired it), and reports Lost no later than the server can expire the session:
// it counts from the send time of the last request the server answered, not from when the
// disconnect was noticed. After Lost it opens a new ZooKeeper session by itself (generation + 1);
// nothing of the old session is carried over - locks held in it are reported lost.
//
// Thread safety: every member may be called from any thread. Listeners run on one zklock thread,
// one at a time, in order; they must not block for long (other listeners wait) and may call any
// Session member except close() and the destructor.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zklock/errors.h"
#include "zklock/metrics.h"
#include "zklock/node_stat.h"
#include "zklock/session_options.h"
#include "zklock/session_state.h"

namespace zklock {

namespace detail {
class SessionCore;
struct SessionAccess;
}  // namespace detail
namespace testing {
class FaultHook;
}  // namespace testing

class Session;
namespace testing {
std::unique_ptr<Session> open_session(SessionOptions options, std::shared_ptr<FaultHook> hook);
}  // namespace testing

/// Data and metadata of one znode.
struct NodeData {
  std::string data;
  NodeStat stat;
};

/// How a node created with Session::create lives.
enum class CreateMode { kPersistent = 0, kEphemeral = 1, kContainer = 4 };

class Session {
 public:
  using ListenerId = std::uint64_t;
  using Listener = std::function<void(const SessionEvent&)>;

  /// Effects: validates `options`, opens a ZooKeeper session and waits up to
  ///   options.connect_timeout for it to connect - and, within the same time, for the short
  ///   probe session that bounds the ensemble's tickTime (unless server_tick_time is set). Once
  ///   it returns, the Session runs its five threads (docs/architecture.md) and no other.
  /// Throws: InvalidArgumentError for a bad connect string (empty, no port, bad port, malformed
  ///   chroot) or non-positive timeouts - before anything is sent. ConnectionLossError (code
  ///   connection_loss) when no server answered within connect_timeout; nothing is left running.
  ///   With options.tls: TlsError (code tls), before anything is sent, when this zklock's C client
  ///   has no TLS (tls_available()) or a TLS file is unusable (unreadable, not PEM, an expired
  ///   certificate, a wrong key password, a key that is not the certificate's); and after
  ///   connect_timeout when servers were reached but no TLS handshake completed (a plain-text
  ///   port, a CA that does not sign the server, a server that refuses our certificate). A
  ///   peer that accepts the connection and never answers gives ConnectionLossError after
  ///   connect_timeout. Never a plain-text connection instead, never a wait past
  ///   connect_timeout.
  explicit Session(SessionOptions options);

  /// Effects: close().
  ~Session();

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Effects: closes the ZooKeeper session (its ephemeral nodes - held locks - go at once when
  ///   connected), fails every pending operation with ClosedError, reports Closed to listeners and
  ///   stops zklock's threads. Idempotent. Must not be called from a listener.
  void close() noexcept;

  /// Returns: the current state. Lost is reported as soon as the Lost deadline has passed, even
  ///   before the monitor thread has processed it.
  SessionState state() const noexcept;

  /// Returns: the current ZooKeeper session's id (0 while not yet connected).
  std::int64_t session_id() const noexcept;

  /// Returns: true when this session's connections are TLS (SessionOptions::tls): every one of
  ///   them, in every generation; there is no fallback to plain text.
  bool encrypted() const noexcept;

  /// Returns: true when this zklock was built against a ZooKeeper C client with TLS (one that
  ///   exports zookeeper_init_ssl; Debian's has none - docs/security.md, the build's summary
  ///   line "TLS in the client").
  static bool tls_available() noexcept;

  /// Returns: how many ZooKeeper sessions this object has opened (1 for the first).
  unsigned generation() const noexcept;

  /// Returns: the session timeout T the server granted (the requested one until connected).
  std::chrono::milliseconds negotiated_timeout() const noexcept;

  /// Returns: the moment at which Lost will be declared unless a newer request is answered first:
  ///   (send time of the last answered request) + T - margin.
  std::chrono::steady_clock::time_point lost_deadline() const noexcept;

  /// Effects: waits until the state is Connected, or `timeout` passes.
  /// Returns: true when connected. Throws: ClosedError if the Session was closed.
  bool wait_connected(std::chrono::milliseconds timeout);

  /// Effects: `listener` will see every later transition exactly once, in order, on zklock's
  ///   event thread. Returns: an id for remove_listener.
  ListenerId add_listener(Listener listener);
  /// Effects: no call to that listener starts after this returns (one running on the event
  ///   thread may finish, unless this is called from the listener itself).
  void remove_listener(ListenerId id);

  // Basic ZooKeeper operations on this session. Each waits at most one session timeout for its
  // answer (the C client has no per-call timeout); ConnectionLossError then means "unknown".
  // Throw: InvalidArgumentError (bad path), NotAuthorizedError, ConnectionLossError,
  // SessionLostError, ClosedError, Error (anything else, e.g. node_exists, not_empty).

  /// Returns: this Session's figures (zklock/metrics.h) - every generation's, from the start.
  ///   Cheap (no request is sent); safe from any thread, listeners and EventHooks included.
  MetricsSnapshot metrics() const;

  /// Returns: the names (not paths) of `path`'s children, unsorted; nullopt if `path` is missing.
  std::optional<std::vector<std::string>> children(const std::string& path);
  /// Returns: data and stat of `path`; nullopt if it is missing.
  std::optional<NodeData> get(const std::string& path);
  /// Effects: creates `path` (and, with `make_parents`, its missing ancestors as persistent nodes).
  /// Returns: the created path. Throws Error(node_exists) if it exists.
  std::string create(const std::string& path, const std::string& data = {},
                     CreateMode mode = CreateMode::kPersistent, bool make_parents = false);
  /// Effects: sets `path`'s data if its version matches (-1: any). Returns: the new stat.
  NodeStat set(const std::string& path, const std::string& data, int version = -1);
  /// Effects: deletes `path` if its version matches (-1: any). Returns: false if it was missing.
  bool remove(const std::string& path, int version = -1);

 private:
  friend struct detail::SessionAccess;  // zklock's recipes reach the core through it
  friend std::unique_ptr<Session> testing::open_session(SessionOptions,
                                                        std::shared_ptr<testing::FaultHook>);
  Session(SessionOptions options, std::shared_ptr<testing::FaultHook> hook);

  std::shared_ptr<detail::SessionCore> core_;
};

/// Returns: `session_id` as ZooKeeper's own logs and four-letter words print it, "0x" and
///   lower-case hex, e.g. "0x1000095c09c0000" (as `zklock status` shows a node's owner).
std::string session_id_hex(std::int64_t session_id);

}  // namespace zklock
