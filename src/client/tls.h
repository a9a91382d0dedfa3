// TLS in the client seam (internal): what the C client this zklock was built against can do, the
// checks made on SessionOptions::tls before anything is sent, how a handle is opened with TLS, and
// how one is closed without waiting on a silent handshake (docs/security.md).
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
/// zookeeper_init2. A TLS handle counts as open, for close_tls_handle, until it is closed with it.
/// Returns: the handle, or null (errno set) when the C client refused.
zhandle_t* open_handle(const std::string& hosts,
                       void (*watcher)(zhandle_t*, int, int, const char*, void*), int timeout_ms,
                       void* context, CLogCallback log,
                       const std::optional<std::string>& tls_settings);

/// Effects: zookeeper_close(zh) for a TLS handle, never stuck behind a handshake with a silent
///   peer: while it runs, shut_down_silent_handshakes(hosts) every 50 ms on a helper thread,
///   sparing the sockets of the process's other open TLS handles (their handshakes go on). It
///   reads nothing of `zh`, which is freed at the end of zookeeper_close.
void close_tls_handle(zhandle_t* zh, const std::string& hosts);

}  // namespace zklock::detail
