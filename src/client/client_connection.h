// ClientConnection: one ZooKeeper C client handle - one session generation - behind zklock's typed
// client seam (internal).
//
// This file and client_connection.cpp are, with the log router, the only code that knows the C
// client: everything crosses this seam as zklock types (Errc, NodeMode, ConnectionEvent, NodeStat),
// and static_asserts in the .cpp tie every value to the C client's constant. In the manner of
// tgockel/zookeeper-cpp's connection.hpp / connection_zk.hpp: the header says what a connection
// does, the .cpp how the C client does it.
//
// Every request is asynchronous. The connection
//  - keeps every pending request's context alive until the C client is done with it (close may
//    drop completions without calling them: we then fail them ourselves, exactly once);
//  - never calls a completion on the thread that submitted it: a request the C client refuses on
//    the spot (or the fault hook fails) is completed on the listener's deferred-task thread, so a
//    submitter may hold its own locks while it submits;
//  - stamps each request with its send time (BootClock) and reports every answered request to the
//    listener with its connection epoch and whether it went through the ZooKeeper leader (the
//    basis of the Lost rule, see liveness_rule.h);
//  - calls the FaultHook (tests) before each request, outside its own lock.
// Watch callbacks are looked up by id when they fire, so a watch that fires after its owner gave
// up finds nothing and does nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/boot_clock.h"
#include "client/answer.h"
#include "client/log_router.h"
#include "metrics/request_counters.h"
#include "zklock/acl.h"
#include "zklock/errors.h"
#include "zklock/node_stat.h"
#include "zklock/testing/fault_hook.h"

typedef struct _zhandle zhandle_t;  // NOLINT: the C client's own name

namespace zklock::detail {

/// How a node is created. Values are the C client's (checked in client_connection.cpp).
enum class NodeMode {
  kPersistent = 0,
  kEphemeral = 1,
  kPersistentSequential = 2,
  kEphemeralSequential = 3,
  kContainer = 4,
};

// The ACL a created node gets (zklock/acl.h); empty: open to anyone (world:anyone, all).
using zklock::Acl;
using zklock::AclEntry;
namespace permission = zklock::permission;

struct OpResult {
  Errc rc = Errc::ok;
  std::string value;                  // create: the created path; get: the data
  NodeStat stat;                      // create (create2), get, exists; get_children: the parent's
  std::vector<std::string> children;  // get_children
  std::vector<Errc> multi_results;    // multi: one code per op
};
using Completion = std::function<void(OpResult&&)>;

enum class WatchEventType { kCreated, kDeleted, kChanged, kChildren, kNotWatching };
using WatchFn = std::function<void(WatchEventType type)>;

/// One operation of a multi (fenced writes).
struct MultiOp {
  enum class Kind { kCheck, kCreate, kSet, kDelete } kind;
  std::string path;
  std::string data;
  int version = -1;
  NodeMode mode = NodeMode::kPersistent;
};

/// What the C client told us about the connection under the session.
enum class ConnectionEvent {
  kConnected,     // (re)connected within this session; the server knows it
  kDisconnected,  // the connection broke; the C client is looking for a server
  kExpired,       // the server refused the session: it has expired
  kAuthFailed,    // the server refused our credentials
};

/// What the C client is doing right now, for deciding whether a forced reconnect helps.
enum class ConnectionPhase {
  kConnected,    // connected (also read-only)
  kAssociating,  // TCP is up, the session handshake is under way
  kConnecting,   // a TCP connect is under way, or about to be made
  kEnded,        // expired, auth failed or closed: it will not connect again
};

/// The phase of a TLS connection in the C client's SSL_CONNECTING state, which covers the TCP
/// connect, the TLS handshake and, after a failed attempt, a moment after the socket is closed.
/// `tcp_state` is its socket's, as TCP_INFO gives it, or -1 when it has none.
/// Returns: kAssociating over an established TCP connection (the handshake is under way: a forced
///   reconnect gives it suspend_after), else kConnecting (a SYN unanswered, or no socket: cut
///   after the reconnect interval, as over plain TCP).
ConnectionPhase ssl_connecting_phase(int tcp_state) noexcept;

/// What a ClientConnection reports to the Session that owns it. Called on C client threads:
/// every method must be quick and must not call back into the connection.
class ConnectionListener {
 public:
  virtual ~ConnectionListener() = default;
  virtual void on_answered(const Answer& answer) = 0;
  virtual void on_connection_event(unsigned generation, ConnectionEvent event) = 0;
  /// Runs `task` soon on a thread that holds none of zklock's locks (refused requests complete
  /// there). Must not run it inline.
  virtual void defer(std::function<void()> task) = 0;
};

class ClientConnection {
 public:
  /// Opens a C client handle for generation `generation`. `connect`: numeric addresses and the
  /// chroot, if any (host_resolver.h: the C client is never given names). `tls_settings`: the
  /// C client's TLS string (client/tls.h, checked_tls_settings), or none for plain TCP. Throws
  /// InvalidArgumentError when the C client refuses the connect string.
  ClientConnection(const std::string& connect, std::chrono::milliseconds session_timeout,
                   unsigned generation, ConnectionListener& listener, CLogCallback log_callback,
                   std::shared_ptr<testing::FaultHook> fault_hook,
                   RequestCounters* counters = nullptr,
                   const std::optional<std::string>& tls_settings = std::nullopt);
  /// Closes if still open.
  ~ClientConnection();
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  unsigned generation() const noexcept { return generation_; }
  /// True when this handle speaks TLS (it never falls back to plain TCP).
  bool encrypted() const noexcept { return tls_; }
  std::int64_t session_id() const noexcept;
  /// The session's password (tests attach a second handle with it to expire the session).
  std::string session_password() const;
  /// The timeout the server granted (the requested one until connected).
  std::chrono::milliseconds negotiated_timeout() const noexcept;
  ConnectionPhase phase() const noexcept;
  /// Counts CONNECTED events of this handle: a new epoch begins with each (re)connection. Answers
  /// and watch events of one epoch came over one TCP connection to one server.
  std::uint64_t epoch() const noexcept { return epoch_.load(); }
  /// Watches set and not yet fired, forgotten or removed (the figures' gauge).
  std::size_t watch_count() const;

  // Asynchronous requests. `done` is called exactly once, on a C client thread, the listener's
  // deferred-task thread, or the thread that calls fail_pending()/close().
  void create(const std::string& path, const std::string& data, NodeMode mode, const Acl& acl,
              Completion done);
  void get_children(const std::string& path, Completion done);
  /// getData; with `watch`, sets a data watch in the same call (none is left if the node is
  /// missing). Returns: the watch id (0 without a watch) for remove_watch().
  std::uint64_t get_data(const std::string& path, WatchFn watch, Completion done);
  void exists(const std::string& path, Completion done);
  /// Reads the ensemble's configuration (/zookeeper/config) - outside any chroot of the connect
  /// string, which applies to every other path. No watch.
  void get_config(Completion done);
  /// getChildren with a watch on the children of `path` (none is left if `path` is missing).
  /// Returns: the watch id (0 without a watch) for remove_watch().
  std::uint64_t get_children_watched(const std::string& path, WatchFn watch, Completion done);
  void remove(const std::string& path, int version, Completion done);
  void set(const std::string& path, const std::string& data, int version, Completion done);
  void multi(std::vector<MultiOp> ops, const Acl& acl, Completion done);
  /// Asks the server to catch up with the leader before it answers our later reads; the answer
  /// comes through the leader (Answer::via_leader).
  void sync(const std::string& path, Completion done);
  void add_digest_auth(const std::string& user_password, Completion done);
  /// Forgets a watch set by get_data() or get_children_watched() (its callback will not be called
  /// after this returns, even if the event is already on its way) and, when no other watch of ours
  /// of that kind is left on `path`, removes the session's watches of that kind on `path` from the
  /// server. (Server-side removal is per path, kind and session, hence the count.)
  void remove_watch(const std::string& path, std::uint64_t watch_id, Completion done);

  /// Gives the C client a new list of (numeric) addresses, "address:port,...": it moves to another
  /// server only if the one it talks to is no longer listed (the C client's own rule). The C
  /// client compares addresses without their ports: a list that differs from the last only in
  /// ports changes nothing. Two changes are made at least kListChangeSpacing apart (this call
  /// waits for the rest): the C client frees its copy of the addresses after releasing the lock
  /// that guards it, and two changes in quick succession while its I/O thread re-reads the list
  /// free that copy twice (connection_drop.h). Changes come from host-name lookups, seconds apart.
  void set_servers(const std::string& addresses);

  /// Makes the C client drop its connection and connect afresh at once (to the next server of the
  /// list), keeping the session, its ephemeral nodes and its watches: for a connection that stopped
  /// answering, or a connect that gets no answer, instead of waiting for TCP's retransmission and
  /// SYN backoff. Its socket is shut down (connection_drop.h); the list is not touched. Requests
  /// in flight fail with connection_loss. A connection that is up is left alone unless
  /// `even_if_connected`.
  /// Returns: if the old connection was dropped, a moment after its socket was closed: every
  ///   request sent from then on goes out on a connection opened later.
  std::optional<BootClock::time_point> force_reconnect(bool even_if_connected);

  /// Fails every pending request now with `code` (their contexts stay alive for the C client).
  void fail_pending(Errc code);
  /// Closes the C handle (ephemerals go at once if connected), then fails what is still pending
  /// with `code`. Idempotent. Must not be called from a C client thread.
  void close(Errc code);

  // Entry points for the C client's static callbacks (client_connection.cpp).
  struct OpContext;
  void finish(OpContext* ctx, OpResult&& result);
  void fire_watch(std::uint64_t id, int c_event_type);
  void session_event(int c_state);

 private:
  class Submission;
  OpContext* begin(Submission& submission, testing::Operation op, const std::string& path,
                   Completion& done, const testing::FaultDecision& decision, bool via_leader);
  void submitted(Submission& submission, OpContext* ctx, int rc);
  testing::FaultDecision consult_hook(testing::Operation op, const std::string& path) const;
  void forget_watch_locked(std::uint64_t watch_id);
  std::string hosts_copy() const {
    std::lock_guard lock(mutex_);
    return hosts_;
  }

  const unsigned generation_;
  const bool tls_;
  ConnectionListener& listener_;
  const std::shared_ptr<testing::FaultHook> fault_hook_;
  RequestCounters* const counters_;  // the Session's figures (outlive it); may be null
  std::string hosts_;                // the host list the C client has (numeric; guarded by mutex_)

  static constexpr std::chrono::milliseconds kCloseDrainWait{500};
  static constexpr std::chrono::milliseconds kListChangeSpacing{20};

  mutable std::mutex mutex_;  // guards zh_ use vs close, pending_, watches_, next_id_
  // Held shared around the C calls that may wait for the C client's I/O thread -
  // zoo_set_servers takes the lock the I/O thread holds while it resolves addresses, and
  // getaddrinfo(AI_ADDRCONFIG) asks the kernel over netlink, which can wait seconds behind network
  // reconfiguration - and exclusively by close() around zookeeper_close: mutex_ is never held
  // across them, so requests, completions and the monitor's reads of the state never wait there.
  // Lock order: handle_mutex_, then servers_mutex_, then mutex_.
  mutable std::shared_mutex handle_mutex_;
  // One list change at a time, kListChangeSpacing apart (set_servers). Held only by the reaper,
  // never by the monitor, the reconnector or a request.
  std::mutex servers_mutex_;
  BootClock::time_point last_list_change_{};  // guarded by servers_mutex_
  std::condition_variable drained_;           // pending_ became empty
  zhandle_t* zh_ = nullptr;
  bool closed_ = false;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, std::unique_ptr<OpContext>> pending_;
  struct Watch {
    std::string path;
    WatchFn fn;
    bool children = false;  // a child watch (get_children_watched), else a data watch
  };
  static std::string watch_key(const Watch& w) { return (w.children ? "c:" : "d:") + w.path; }
  std::unordered_map<std::uint64_t, Watch> watches_;
  std::unordered_map<std::string, int> watches_per_path_;  // our live watches, by watch_key()
  /// Sends RemoveWatches for `kind`'s path and kind, unless another watch of ours needs it.
  void send_removal_locked(Submission& submission, const Watch& kind, Completion done,
                           const testing::FaultDecision& decision);
  /// Sends again the removals whose connection was lost (on each new connection).
  void resend_lost_removals();
  // Server-side removals that failed with their connection (watch_key()s). Shared with their
  // completions, which may run on the Session's deferred-task thread after this is gone.
  struct LostRemovals {
    std::mutex mutex;
    std::set<std::string> keys;
  };
  const std::shared_ptr<LostRemovals> lost_removals_ = std::make_shared<LostRemovals>();
  std::atomic<std::uint64_t> epoch_{0};
  // Set by a forced reconnect; the next request failed with the dropped connection clears it and
  // sends one more, which ends the C client's pause before it connects again (force_reconnect).
  std::atomic<bool> wake_after_drop_{false};
};

}  // namespace zklock::detail
