// Dropping a connection of the C client from outside its I/O thread (internal).
//
// The C client has no "reconnect now". Its server-list update (zoo_set_servers) drops the
// connection when it decides to move the client, but it is unsafe beside the I/O thread, which
// re-reads the list itself while it has no socket: the 3.8 client (and 3.9) frees its own copy of
// the addresses after releasing the lock that guards them, so two list changes in quick
// succession while the I/O thread is between connections free one address vector twice (an ASan
// run of client_server_list_test caught it), and over TLS it would free the connection's OpenSSL
// state under a running SSL_read. shutdown(2) on the socket touches no C client state: the I/O
// thread sees the connection end on its next read, fails what it had sent with a connection
// loss, and connects to the next server of its list.
#pragma once

#include <set>
#include <string>

typedef struct _zhandle zhandle_t;  // NOLINT: the C client's own name

namespace zklock::detail {

/// The kernel's TCP states as TCP_INFO gives them (include/net/tcp_states.h; not in the uapi
/// headers): the two zklock tells apart.
inline constexpr int kTcpEstablished = 1;
inline constexpr int kTcpSynSent = 2;

/// Effects: shutdown(2)s the TCP socket of `zh`'s current connection if it is established and
///   its peer is one of `hosts` ("address:port,..." numeric). Needs the caller to keep `zh` open.
///   A connect still under way (no peer yet) is left alone.
/// Returns: true if a socket was shut down.
bool shut_down_connection(zhandle_t* zh, const std::string& hosts) noexcept;

/// Effects: shutdown(2)s every TCP socket of this process that is connected to one of `hosts`,
///   has received no byte yet and is not in `spared`: a TLS handshake with a peer that never
///   answers, which the 3.8 C client would wait for forever in its I/O thread (zookeeper_close
///   would then never return). `spared` holds the sockets of the handles that are not closing
///   (their handshakes with a slow server must go on); a socket number another handle takes
///   between the two reads may still match: that handle then reconnects, nothing more. Reads no
///   C client state.
/// Returns: how many sockets were shut down.
int shut_down_silent_handshakes(const std::string& hosts, const std::set<int>& spared) noexcept;

/// Returns: the socket of `zh`'s current connection, or -1 (the C client offers no accessor: read
///   from its handle's first field). The number may be stale - the I/O thread closes and reopens
///   it: callers check what it is connected to before acting on it. Needs `zh` open.
int current_socket(zhandle_t* zh) noexcept;

/// Returns: the TCP state of the socket of `zh`'s current connection, as TCP_INFO gives it (1
///   established, 2 SYN sent...), or -1 when it has none (between attempts, or while the C client
///   cleans a failed one up). Needs the caller to keep `zh` open. A stale socket number may answer
///   for another socket of the process: use it for scheduling, not for safety.
int tcp_state(zhandle_t* zh) noexcept;

}  // namespace zklock::detail
