// TLS in the client seam (internal): what the C client this zklock was built against can do, the
// checks made on SessionOptions::tls before anything is sent, how a handle is opened with TLS, and
// how a TLS connection is dropped from outside the C client's I/O thread without touching its
// OpenSSL state (docs/security.md).
#pragma once

#include <optional>
#include <string>

#include "client/log_router.h"
#include "zklock/session_options.h"

typedef struct _zhandle zhandle_t;  // NOLINT: the C client's own name

namespace zklock::detail {

/// Returns: true when the C client exports zookeeper_init_ssl (ZKLOCK_HAVE_ZOOKEEPER_SSL).
bool client_has_tls() noexcept;

/// Effects: checks `tls` before any connection is made: file names non-empty and without ','
///   (InvalidArgumentError); the C client has TLS, every file is readable PEM, the key opens with
///   its password and matches the certificate, the certificate is within its validity period
///   (TlsError, naming the file and the fix).
/// Returns: the C client's TLS settings string, "CA,CERT,KEY,PASSWORD".
std::string checked_tls_settings(const TlsOptions& tls);

/// Opens a C client handle: with `tls_settings`, over TLS (zookeeper_init_ssl, one at a time in
/// the process: it splits the string with strtok; its log callback is set right after), else
/// zookeeper_init2. Returns: the handle, or null (errno set) when the C client refused.
zhandle_t* open_handle(const std::string& hosts,
                       void (*watcher)(zhandle_t*, int, int, const char*, void*), int timeout_ms,
                       void* context, CLogCallback log,
                       const std::optional<std::string>& tls_settings);

/// Effects: shutdown(2)s the TCP socket of `zh`'s current connection, if its peer is one of
///   `hosts` ("address:port,..." numeric): the C client's I/O thread then sees the connection end
///   on its next read and drops it itself, freeing its OpenSSL state on its own thread - which
///   zoo_set_servers would instead free under a running SSL_read (the C client takes no lock
///   around its socket I/O). Needs the caller to keep `zh` open.
/// Returns: true if a socket was shut down.
bool shut_down_connection(zhandle_t* zh, const std::string& hosts) noexcept;

/// Effects: shutdown(2)s every TCP socket of this process that is connected to one of `hosts`
///   and has received no byte yet: a TLS handshake with a peer that never answers, which the
///   3.8 C client would wait for forever in its I/O thread (zookeeper_close would then never
///   return). A socket of another handle that has just connected and not heard its server yet
///   matches too: that handle then reconnects, nothing more. Reads no C client state.
/// Returns: how many sockets were shut down.
int shut_down_silent_handshakes(const std::string& hosts) noexcept;

/// Effects: zookeeper_close(zh) for a TLS handle, never stuck behind a handshake with a silent
///   peer: while it runs, shut_down_silent_handshakes(hosts) every 50 ms on a helper thread
///   (which reads no C client state: the handle is freed at the end of zookeeper_close).
void close_tls_handle(zhandle_t* zh, const std::string& hosts);

}  // namespace zklock::detail
