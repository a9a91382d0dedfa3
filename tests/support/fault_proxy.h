// FaultProxy: a loopback TCP proxy that sits between ONE ZooKeeper client and a real ZooKeeper
// server and injects network faults for that client only: partitions (blackhole), delays, resets,
// refused connections and lost replies.
//
// ZooKeeper's wire protocol, as far as the proxy needs it: after the TCP connect every message in
// each direction is a frame = 4-byte big-endian length + payload. A server->client reply payload
// starts with a reply header: xid (int32 BE), zxid (int64 BE), err (int32 BE). xid -1 is a watch
// notification, -2 a ping reply, other negative xids are internal (auth -4, set-watches -8); the
// first server->client frame of a connection is the ConnectResponse, which has no reply header.
//
// Model. The proxy owns one background thread running a poll() loop over non-blocking sockets.
// Each accepted client connection gets its own upstream connection (non-blocking connect) and two
// byte queues, client->server and server->client. Bytes are never reordered, duplicated or altered;
// they are only delayed (set_delay) or dropped (blackhole, drop_next_reply_containing). The
// server->client stream is always split into frames at the moment it is read, so frame boundaries
// are known even while bytes are being dropped; a frame is held back (until complete) only while a
// drop is armed, otherwise bytes stream through as they arrive.
//
// Closing. An EOF from one side is passed on as a half-close (shutdown(SHUT_WR)) of the other side
// once everything read before it has been forwarded; a connection is closed when both directions
// are closed. A socket error (e.g. ECONNRESET) or a failed upstream connect on one side is passed
// on as a reset (RST) of the other side. While a connection is blackholed, nothing crosses it,
// not even an EOF or a reset: those are held and passed on when the connection is healed.
//
// Thread-safety: every public member function may be called from any thread, concurrently with
// each other and with the proxy's own thread. Control calls take effect synchronously: when
// blackhole(), reset_all(), set_delay() etc. return, the proxy's thread will not forward a single
// further byte under the old setting (bytes already written to a kernel socket buffer are of
// course beyond its reach).
//
// Linux only (eventfd, accept4, MSG_NOSIGNAL).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace zklock::testing {

// What a connection does with the bytes it reads.
enum class ProxyMode {
  kPass,       // forward (possibly delayed) to the other side
  kBlackhole,  // read and silently discard, both directions; sockets stay open, no EOF or reset
               // crosses; the client sees nothing and has to time out by itself
};

// What heal() does with connections whose streams lost bytes to the blackhole.
enum class Heal {
  kResume,        // they pass again, hole and all
  kResetDamaged,  // they are reset (both sides); connections that lost nothing resume
};

class FaultProxy {
 public:
  // Starts a proxy listening on 127.0.0.1:<free port> that forwards each accepted connection to
  // upstream_host:upstream_port. upstream_host is resolved once, here (an IPv4 address is preferred
  // when the name has several); the upstream need not be listening yet, since it is connected to
  // only when a client connects. The proxy starts in kPass mode, with no delay. Throws
  // std::invalid_argument (port not in 1..65535), std::runtime_error (host not resolvable) or
  // std::system_error (socket, bind, listen, thread creation failed).
  static std::unique_ptr<FaultProxy> start(const std::string& upstream_host, int upstream_port);

  // Stops the proxy thread and closes every socket (listening and proxied, plain close). Clients
  // still connected see an EOF (or a reset if the kernel still held unread bytes).
  ~FaultProxy();

  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;
  FaultProxy(FaultProxy&&) = delete;
  FaultProxy& operator=(FaultProxy&&) = delete;

  // The loopback port the proxy listens on; constant for the proxy's life.
  int port() const;
  // "127.0.0.1:PORT", ready for zookeeper_init().
  std::string connect_string() const;

  // Connections accepted from now on are forwarded to upstream_host:port (same host as given to
  // start()); existing connections keep their upstream. Throws std::invalid_argument if port is
  // not in 1..65535.
  void set_upstream(int port);

  // ---- Whole-proxy controls. Each applies to all current AND future connections until changed.

  // Partition: from now on every connection, current and future, reads and discards bytes in
  // both directions. Bytes read earlier but not yet forwarded (e.g. waiting out a delay, or a
  // frame held for drop_next_reply_containing) are discarded too. New connections are still
  // accepted (and connected upstream) but are blackholed.
  void blackhole();
  // Ends the partition: back to kPass for every connection, including those blackholed one by one
  // with blackhole_connection(). Bytes dropped meanwhile stay dropped; EOFs and resets held
  // meanwhile are now passed on.
  // A connection that lost bytes has a hole in its stream, which no real network makes (TCP
  // would deliver them late or give up). With Heal::kResetDamaged such connections are reset
  // instead of resumed, atomically with the heal: use it for "disconnect without expiry", where a
  // ZooKeeper client that reconnected during the partition would otherwise wait out a second
  // receive timeout on a ConnectRequest that was dropped, and its session could expire meanwhile.
  void heal(Heal how = Heal::kResume);
  // The whole-proxy mode (kBlackhole between blackhole() and heal()).
  ProxyMode mode() const;

  // Every chunk read from now on, in either direction, is forwarded no earlier than d after it
  // was read. Order is always kept (a chunk never overtakes an earlier one, even if d shrinks).
  // 0 = no delay. Chunks already queued keep their due time. Negative d is treated as 0.
  void set_delay(std::chrono::milliseconds d);

  // Resets (SO_LINGER 0, then close: an RST) both sides of every current connection and forgets
  // them; bytes not yet forwarded are lost. The client sees ECONNRESET (or an EOF). Synchronous.
  void reset_all();

  // While refuse is true, new connections are accepted and immediately reset (counted by
  // refused(), not by accepted()). Refusal takes precedence over blackhole. Existing connections
  // are untouched.
  void refuse_new(bool refuse);

  // ---- Frame-aware fault: "the reply was lost".

  // Arms a one-shot drop: the next complete server->client reply frame, on any connection, whose
  // payload contains `needle` (a byte substring; empty matches any reply) is discarded instead of
  // forwarded. A "reply" is any frame but a connection's first (the ConnectResponse) whose payload
  // holds a full reply header and whose xid is >= 0; watch notifications, ping replies and other
  // internal negative-xid frames are never dropped. Frames that had already started streaming to
  // the client when the drop was armed are not candidates, nor are frames read while their
  // connection is blackholed. Frames before and after the dropped one are forwarded intact.
  // If reset_after, the proxy then stops reading from that server, forwards what it had already
  // queued for the client, and resets both sides, so the client sees a connection loss after the
  // request was executed. Returns at once; re-arming replaces a drop not yet performed.
  void drop_next_reply_containing(std::string needle, bool reset_after = true);
  // Waits until the drop armed by the latest drop_next_reply_containing() has happened (and, with
  // reset_after, the connection has been reset). Returns false on timeout or if nothing was armed.
  bool wait_reply_dropped(std::chrono::milliseconds timeout);

  // ---- Per-connection view and control. Ids are positive, increase with each accepted
  // connection, and are never reused within one proxy.

  // Ids of the live (not yet closed) connections, oldest first.
  std::vector<int> connection_ids() const;
  // Blackholes connection `id` alone (as blackhole() does for all, including discarding what it
  // had queued). Returns false if there is no such live connection.
  bool blackhole_connection(int id);
  // Clears what blackhole_connection(id) set (the connection resumes, as with Heal::kResume).
  // The connection stays blackholed while the whole proxy is (see blackhole()). Returns false if
  // there is no such live connection.
  bool heal_connection(int id);
  // Resets both sides of connection `id` as reset_all() does. Returns false if no such connection.
  bool reset_connection(int id);

  // ---- Counters and waits for assertions.

  // Connections accepted and proxied since start (refused ones excluded).
  size_t accepted() const;
  // Connections accepted and reset at once because of refuse_new(true).
  size_t refused() const;
  // Proxied connections currently open (in connection_ids()).
  size_t live() const;
  // Reply frames discarded by drop_next_reply_containing() (blackholed bytes are not counted).
  uint64_t frames_dropped() const;
  // Bytes the proxy read and threw away because of a blackhole (including bytes it had queued
  // when the blackhole began). Lets a test know a partition really swallowed what it sent.
  uint64_t bytes_discarded() const;
  // Bytes read and not yet written on (queued, e.g. waiting out a delay, or held in a frame being
  // inspected), summed over both directions of every live connection.
  size_t in_flight() const;
  // Wait until accepted() >= n (resp. live() == n); false on timeout. For synchronising tests
  // without sleeps.
  bool wait_accepted(size_t n, std::chrono::milliseconds timeout) const;
  bool wait_live(size_t n, std::chrono::milliseconds timeout) const;

 private:
  struct State;  // everything the proxy thread and the control calls share; in fault_proxy.cpp

  explicit FaultProxy(std::unique_ptr<State> state);
  void run();  // the poll loop, on thread_

  std::unique_ptr<State> state_;
  std::thread thread_;
};

}  // namespace zklock::testing
