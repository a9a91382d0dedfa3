// zklock/session_options.h: how a Session connects and when it declares itself Suspended or Lost.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zklock/acl.h"
#include "zklock/log.h"

namespace zklock {

class EventHook;  // zklock/event_hook.h

struct DigestCredentials {
  std::string user;
  std::string password;
};

/// TLS between this client and ZooKeeper (docs/security.md). Every file is PEM. The servers serve
/// TLS on their secureClientPort: `connect` must name those ports. The C client always presents a
/// client certificate, so all three files are needed; with the servers' ssl.clientAuth=need, the
/// certificate's subject is also this client's `x509` identity on the server.
struct TlsOptions {
  /// The CA certificate(s) that verify the servers' certificates.
  std::string ca_file;
  /// This client's certificate (followed by its chain, if any).
  std::string cert_file;
  /// This client's private key.
  std::string key_file;
  /// The private key's password; empty: the key is not encrypted.
  std::string key_password;
};

struct SessionOptions {
  /// "host:port[,host:port...][/chroot]". Host names are resolved by zklock (when the Session
  /// opens, then every minute and when it reconnects, off its own threads' critical paths); the
  /// C client is given numeric addresses only, so a slow resolver never stalls the session.
  std::string connect = "127.0.0.1:2181";

  /// Requested session timeout T. The server clamps it to [2, 20] x its tickTime; the negotiated
  /// value is what the Lost rule uses (Session::negotiated_timeout()).
  std::chrono::milliseconds session_timeout{10'000};

  /// How long the constructor waits for the first connection (and how long a new session after
  /// Lost may take before its operations fail).
  std::chrono::milliseconds connect_timeout{15'000};

  /// Digest credentials (user:password), added to the session and re-added on reconnect. The
  /// Session's constructor throws NotAuthorizedError if the server refuses them.
  std::optional<DigestCredentials> credentials;

  /// The ACL of every node zklock creates: lock nodes, and the parents of a lock path it creates
  /// (see acl.h for why both). Unset: creator_all_world_read() with credentials or TLS (the
  /// server then stores the session's identities: its digest user, and with TLS the x509
  /// subject of its certificate - which needs servers with ssl.clientAuth=need and the
  /// X509AuthenticationProvider; against others, set open_acl() or your own ACL), open_acl()
  /// without either. An ACL naming the creator ("auth") needs credentials or TLS: the
  /// constructor throws InvalidArgumentError otherwise.
  std::optional<Acl> node_acl;

  /// TLS to the servers; unset: plain TCP. Needs a zklock built against a C client with TLS
  /// (Session::tls_available(), scripts/zookeeper-client.sh). The Session's constructor throws
  /// TlsError when TLS cannot be had (never falls back to plain text) and InvalidArgumentError
  /// for an empty file name or one with a ',' (the C client splits its TLS settings on commas).
  std::optional<TlsOptions> tls;

  /// The C client's log lines go here (default: stderr, prefixed "zklock: ").
  LogSink log_sink;
  LogLevel log_level = LogLevel::kWarn;

  // The Lost rule and its schedule (docs/sessions.md has the arithmetic). Each value is checked
  // against the timeout T the server grants: one that does not fit it (an interval or margin of
  // T/2 or more, a suspend_after of T or more, a reconnect interval of T/4 or more) is replaced by
  // its default for that T, with a warning in the log. Zero selects the default.

  /// Heartbeat interval i: zklock sends a cheap request of its own this often (on an ensemble, a
  /// `sync` that the leader answers), so that the send time of the last request the ZooKeeper
  /// leader has counted stays fresh. Default T / 20: with the default margin, blips up to
  /// T - T/20 - T/20 - reconnect_interval (0.875 T at T = 6 s) keep the session whatever their
  /// phase. Only idle sessions send heartbeats; a larger interval halves their requests and
  /// shortens the longest blip survived by as much (docs/sessions.md).
  std::chrono::milliseconds heartbeat_interval{0};

  /// Safety margin m: Lost is declared when (send time of the last leader-confirmed request) + T -
  /// m has passed. m covers clock-rate drift between this machine and the server, the one-way delay
  /// between a follower and its leader, and the time to tell listeners. Default max(T / 20, 50 ms).
  std::chrono::milliseconds lost_margin{0};

  /// Suspended is declared when the C client reports a disconnect, or when a heartbeat has waited
  /// this long for its answer. Default T / 3.
  std::chrono::milliseconds suspend_after{0};

  /// While Suspended and silent, a fresh connection is forced this often, so that the session
  /// answers again within a round trip of the network coming back instead of after TCP's backoff.
  /// Default 150 ms (at most T / 8).
  std::chrono::milliseconds reconnect_interval{0};

  /// The ensemble's tickTime, if known. A follower passes our session's signs of life to the leader
  /// only every tickTime / 2, which the Lost rule must allow for. Zero: not known, bounded by
  /// T / 2 (the server grants no timeout below 2 x tickTime unless minSessionTimeout was lowered).
  /// Ignored for a standalone server, which zklock recognises by itself.
  std::chrono::milliseconds server_tick_time{0};

  // Observability (zklock/metrics.h, zklock/event_hook.h, docs/observability.md).

  /// Keep the figures of this session's locks and requests (on by default: they cost a few
  /// relaxed atomic additions per acquisition and no request). false: only the session's own
  /// (generations, states, heartbeats) are kept; the EventHook still hears of state changes.
  bool metrics = true;

  /// Lock paths (as given to Mutex, SharedMutex, Semaphore) whose figures are kept apart; every
  /// other path is counted under "" (all others). Bounded on purpose: name the few paths you
  /// watch, never one per request.
  std::vector<std::string> metrics_paths;

  /// Receives every acquisition, release, state change and forced reconnect on a thread of its
  /// own (the Session's sixth); null: none, and no thread.
  std::shared_ptr<EventHook> event_hook;
  /// How many events may wait for a slow hook before new ones are dropped (and counted).
  std::size_t event_hook_queue = 10'000;
};

}  // namespace zklock
