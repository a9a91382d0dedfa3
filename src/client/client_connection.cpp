// ClientConnection, its life: opening the C client handle, what it says of the connection and the
// session, moving and reconnecting, answers and watches coming back, and closing. The requests
// are in client_requests.cpp, the C client's glue in c_client.cpp.
#include "client/client_connection.h"

#include <cstring>
#include <system_error>
#include <thread>
#include <utility>

#include "client/c_client.h"
#include "client/connection_drop.h"
#include "client/tls.h"

namespace zklock::detail {

using namespace c_client;  // NOLINT(google-build-using-namespace): this seam's own glue
using testing::FaultDecision;
using testing::Operation;

ClientConnection::ClientConnection(const std::string& connect,
                                   std::chrono::milliseconds session_timeout, unsigned generation,
                                   ConnectionListener& listener, CLogCallback log_callback,
                                   std::shared_ptr<testing::FaultHook> fault_hook,
                                   RequestCounters* counters,
                                   const std::optional<std::string>& tls_settings)
    : generation_(generation),
      tls_(tls_settings.has_value()),
      listener_(listener),
      fault_hook_(std::move(fault_hook)),
      counters_(counters),
      hosts_(client_hosts(connect)) {
  errno = 0;
  const std::string client_connect = hosts_ + chroot_of(connect);
  zh_ = open_handle(client_connect, &on_global, static_cast<int>(session_timeout.count()), this,
                    log_callback, tls_settings);
  if (zh_ == nullptr) {
    throw InvalidArgumentError("connect string \"" + connect +
                               "\": the ZooKeeper client refused it (" +
                               std::generic_category().message(errno) + ")");
  }
  // Our list is numeric and SessionCore re-resolves host names on its own schedule: the I/O
  // thread need not call getaddrinfo on every turn of its loop while connected (it does so under
  // the lock zoo_set_servers takes, and getaddrinfo asks the kernel over netlink, which can wait
  // behind network reconfiguration). It still does on each new connection.
  zoo_set_servers_resolution_delay(zh_, -1);
}

ClientConnection::~ClientConnection() { close(Errc::closed); }

std::int64_t ClientConnection::session_id() const noexcept {
  std::lock_guard lock(mutex_);
  if (closed_ || zh_ == nullptr) return 0;
  const clientid_t* id = zoo_client_id(zh_);
  return id ? id->client_id : 0;
}

std::string ClientConnection::session_password() const {
  std::lock_guard lock(mutex_);
  if (closed_ || zh_ == nullptr) return {};
  const clientid_t* id = zoo_client_id(zh_);
  return id ? std::string(id->passwd, sizeof id->passwd) : std::string();
}

std::chrono::milliseconds ClientConnection::negotiated_timeout() const noexcept {
  std::lock_guard lock(mutex_);
  return std::chrono::milliseconds(!closed_ && zh_ ? zoo_recv_timeout(zh_) : 0);
}

// Only a handshake under way, over an established TCP connection, counts as associating, so that
// a forced reconnect waits suspend_after for it instead of the reconnect interval: a server just
// back (a thawed JVM, an ASan build) may take longer than 150 ms to answer a handshake, and
// cutting each one off would keep the session from ever reconnecting. Anything else is
// connecting, as over plain TCP: a connect whose SYN is unanswered is cut after the reconnect
// interval, so that after a network blip heals a fresh SYN goes out within 150 ms instead of at
// the kernel's next retransmission (1, 3, 7 s after the first), which a 0.75 T blip cannot
// afford; and the moment without a socket after a failed attempt (the C client's cleanup resets
// its state last) must not read as a handshake: the monitor, woken by the drop, looks just then,
// and would put the next cut off by suspend_after (seen: a fresh SYN a second apart).
ConnectionPhase ssl_connecting_phase(int tcp_state) noexcept {
  return tcp_state == kTcpEstablished ? ConnectionPhase::kAssociating
                                      : ConnectionPhase::kConnecting;
}

ConnectionPhase ClientConnection::phase() const noexcept {
  std::lock_guard lock(mutex_);
  if (closed_ || zh_ == nullptr) return ConnectionPhase::kEnded;
  const int s = zoo_state(zh_);
  if (s == ZOO_CONNECTED_STATE || s == ZOO_READONLY_STATE) return ConnectionPhase::kConnected;
  if (s == ZOO_ASSOCIATING_STATE) return ConnectionPhase::kAssociating;
  // Over TLS: the C client's SSL_CONNECTING state (7; exported, not declared) says too little.
  constexpr int kSslConnectingState = 7;
  if (tls_ && s == kSslConnectingState) return ssl_connecting_phase(tcp_state(zh_));
  if (s == ZOO_EXPIRED_SESSION_STATE || s == ZOO_AUTH_FAILED_STATE) return ConnectionPhase::kEnded;
  return ConnectionPhase::kConnecting;
}

void ClientConnection::set_servers(const std::string& addresses) {
  std::shared_lock handle(handle_mutex_);  // zh_ stays open; mutex_ is not held while we wait
  std::lock_guard one_update(servers_mutex_);
  zhandle_t* zh = nullptr;
  std::string hosts = client_hosts(addresses);
  {
    std::lock_guard lock(mutex_);
    if (closed_ || zh_ == nullptr || hosts == hosts_) return;
    hosts_ = hosts;
    zh = zh_;
  }
  // The C client's I/O thread re-reads the list on each turn while it has no socket, and frees
  // its own copy of the addresses a few instructions after releasing the lock that guards them:
  // a second change landing in between would free that copy twice. Spaced like this, its thread
  // would have to be held up for kListChangeSpacing between two adjacent lines.
  const auto since = BootClock::now() - last_list_change_;
  if (since < kListChangeSpacing) std::this_thread::sleep_for(kListChangeSpacing - since);
  // Numeric, but the C client still calls getaddrinfo, which may wait (handle_mutex_).
  zoo_set_servers(zh, hosts.c_str());
  last_list_change_ = BootClock::now();
}

std::optional<BootClock::time_point> ClientConnection::force_reconnect(bool even_if_connected) {
  bool moved = false;
  BootClock::time_point closed_at;
  {
    std::shared_lock handle(handle_mutex_);  // zh_ stays open; mutex_ is not held while we wait
    zhandle_t* zh = nullptr;
    std::string hosts;
    {
      std::lock_guard lock(mutex_);
      if (closed_ || zh_ == nullptr) return std::nullopt;
      zh = zh_;
      hosts = hosts_;
    }
    const int state = zoo_state(zh);
    if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) return std::nullopt;
    // No socket (between attempts, or just dropped by a list update): the I/O thread's next turn
    // opens a new one anyway.
    if (state == 0 || state == ZOO_NOTCONNECTED_STATE) return std::nullopt;
    const bool up = state == ZOO_CONNECTED_STATE || state == ZOO_READONLY_STATE;
    if (up && !even_if_connected) return std::nullopt;  // it got through meanwhile
    // The C client has no "reconnect now", and its server-list update is unsafe beside its I/O
    // thread (connection_drop.h): the socket is shut down instead, connected or still
    // connecting. The I/O thread sees it end, fails what it had sent with a connection loss and
    // connects to the next server of its list. The session, its ephemerals and its watches are
    // untouched: the next connection resumes them.
    moved = shut_down_connection(zh, hosts);
    closed_at = BootClock::now();
  }
  if (!moved) return std::nullopt;
  // The I/O thread wakes by itself (its poll() sees the shutdown) and fails what it had sent.
  // Having tried every address of its list (which it always finds, in practice, after a forced
  // drop - see client_hosts), it then pauses T/60 before its next connect: 100 ms at T = 6 s,
  // and the silence after a healed blip grew by as much. A request submitted after that failure
  // ends the pause (the submission wakes the I/O thread, and the pause is its poll() timeout); one
  // submitted before it does not (its wake-up is taken by the turn that sees the shutdown). So a
  // request goes now - it is pending when the I/O thread cleans the connection up - and the first
  // request that fails with the dropped connection sends another (finish): that failure comes
  // from the cleanup, after which nothing takes the wake-up but the pause. Their answers, on the
  // new connection, are heartbeats like any other.
  wake_after_drop_.store(true);
  exists("/", [](OpResult&&) {});
  return closed_at;
}

void ClientConnection::finish(OpContext* ctx, OpResult&& result) {
  Completion done;
  Answer answer;
  bool answered = false;
  bool already = false;
  bool ends_pause = false;
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(ctx->id);
    if (it == pending_.end()) return;
    if (dropped_by_client(result)) {
      // The C client dropped the connection (it found the server's answers out of the order it
      // expected) and failed what it had sent with ZRUNTIMEINCONSISTENCY: the outcome is unknown,
      // exactly as after a connection loss.
      result = OpResult{Errc::connection_loss, {}, {}, {}, {}};
    }
    answered = detail::answered(result.rc) && !ctx->lose_reply;
    if (ctx->lose_reply) result = OpResult{ctx->lose_code, {}, {}, {}, {}};
    // A read that set no watch (the node is missing, or the answer never came) leaves no watch
    // on the server: forget ours, or a later removal would think another watch still needs it.
    if (ctx->watch_id != 0 && result.rc != Errc::ok) forget_watch_locked(ctx->watch_id);
    answer =
        Answer{generation_, epoch_.load(), ctx->sent, BootClock::now(), ctx->via_leader, result.rc};
    ends_pause = result.rc == Errc::connection_loss && wake_after_drop_.exchange(false);
    already = ctx->delivered;
    if (!already) done = std::move(ctx->done);
    pending_.erase(it);  // frees ctx
    if (pending_.empty()) drained_.notify_all();
  }
  // On the C client's completion thread, which zookeeper_close joins: `this` is alive.
  if (ends_pause) exists("/", [](OpResult&&) {});  // see force_reconnect
  if (already) return;
  if (counters_) counters_->answered(answer.rc);
  if (answered) listener_.on_answered(answer);
  done(std::move(result));
}

void ClientConnection::fire_watch(std::uint64_t id, int c_event_type) {
  WatchFn fn;
  {
    std::lock_guard lock(mutex_);
    auto it = watches_.find(id);
    if (it == watches_.end()) return;
    fn = std::move(it->second.fn);
    forget_watch_locked(id);
  }
  fn(watch_type(c_event_type));
}

void ClientConnection::session_event(int c_state) {
  ConnectionEvent event = ConnectionEvent::kDisconnected;
  if (c_state == ZOO_CONNECTED_STATE || c_state == ZOO_READONLY_STATE) {
    ++epoch_;  // before anyone hears of it: answers from here on belong to the new connection
    event = ConnectionEvent::kConnected;
    resend_lost_removals();  // after the C client set its watches again on this connection
  } else if (c_state == ZOO_EXPIRED_SESSION_STATE) {
    event = ConnectionEvent::kExpired;
  } else if (c_state == ZOO_AUTH_FAILED_STATE) {
    event = ConnectionEvent::kAuthFailed;
  }
  listener_.on_connection_event(generation_, event);
}

void ClientConnection::fail_pending(Errc code) {
  std::vector<Completion> to_fail;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, ctx] : pending_) {
      if (ctx->delivered) continue;
      ctx->delivered = true;
      to_fail.push_back(std::move(ctx->done));
    }
    watches_.clear();
    watches_per_path_.clear();
  }
  for (auto& done : to_fail) {
    OpResult r;
    r.rc = code;
    done(std::move(r));
  }
}

void ClientConnection::close(Errc code) {
  zhandle_t* zh;
  {
    std::unique_lock lock(mutex_);
    if (closed_) return;
    closed_ = true;  // no new requests from here on
    zh = zh_;
    // zookeeper_close may drop the completions of requests still in flight without calling them -
    // and without freeing them. Over a live connection their answers are a round trip away: let
    // them come (briefly; a connection that does not answer is not waited for).
    if (zh && (zoo_state(zh) == ZOO_CONNECTED_STATE || zoo_state(zh) == ZOO_READONLY_STATE)) {
      drained_.wait_for(lock, kCloseDrainWait, [&] { return pending_.empty(); });
    }
  }
  // Outside our lock: completions running on the C client's thread during close take it. Once no
  // set_servers or force_reconnect is using the handle.
  if (zh) {
    std::unique_lock handle(handle_mutex_);
    if (tls_) {
      close_tls_handle(zh, hosts_copy());
    } else {
      zookeeper_close(zh);
    }
  }
  {
    std::lock_guard lock(mutex_);
    zh_ = nullptr;
  }
  fail_pending(code);
  std::lock_guard lock(mutex_);
  pending_.clear();
}

}  // namespace zklock::detail
