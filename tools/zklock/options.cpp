#include "options.h"

#include <cstdlib>
#include <optional>
#include <utility>

#include "duration.h"
#include "exit_codes.h"
#include "zklock/errors.h"

namespace zklock::cli {
namespace {

// An option given on the command line wins over its environment variable.
std::string or_environment(const std::string& given, const char* variable) {
  if (!given.empty()) return given;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): zklock calls setenv only before it starts a thread
  const char* value = std::getenv(variable);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

std::optional<TlsOptions> tls_options(const CommonOptions& options) {
  TlsOptions tls;
  tls.ca_file = or_environment(options.tls_ca, kTlsCaEnv);
  tls.cert_file = or_environment(options.tls_cert, kTlsCertEnv);
  tls.key_file = or_environment(options.tls_key, kTlsKeyEnv);
  tls.key_password = or_environment(options.tls_key_password, kTlsKeyPasswordEnv);
  const int given = static_cast<int>(!tls.ca_file.empty()) +
                    static_cast<int>(!tls.cert_file.empty()) +
                    static_cast<int>(!tls.key_file.empty());
  if (given == 0) {
    // $ZKLOCK_TLS_KEY_PASSWORD alone is ignored (it may be set for the runs that use TLS); the
    // option alone is a mistake.
    if (!options.tls_key_password.empty()) {
      throw Failure(exit_code::kUsage, "a TLS key password without --tls-key (or $ZKLOCK_TLS_KEY)");
    }
    return std::nullopt;
  }
  if (given != 3) {
    throw Failure(exit_code::kUsage,
                  "TLS needs --tls-ca, --tls-cert and --tls-key together (or $ZKLOCK_TLS_CA, "
                  "$ZKLOCK_TLS_CERT, $ZKLOCK_TLS_KEY)");
  }
  return tls;
}

std::unique_ptr<Session> open_session(const CommonOptions& options, const Console& console,
                                      std::vector<std::string> metrics_paths) {
  SessionOptions session_options;
  session_options.connect = options.connect;
  session_options.metrics_paths = std::move(metrics_paths);
  session_options.session_timeout = options.session_timeout;
  session_options.connect_timeout = options.connect_timeout;
  // Between Lost and the earliest moment the server can expire the session, zklock exec must
  // signal a command in another process: twice the library's default margin (T/20). Blips up to
  // T - T/20 (heartbeats) - T/10 - 150 ms (0.825 T at T = 6 s) are still survived
  // (docs/sessions.md).
  session_options.lost_margin = options.session_timeout / 10;
  if (!options.user.empty()) {
    const auto colon = options.user.find(':');
    session_options.credentials =
        DigestCredentials{options.user.substr(0, colon), options.user.substr(colon + 1)};
  }
  session_options.tls = tls_options(options);
  // The C client logs every failed connect attempt; zklock reports the outcome itself, so its
  // lines are only interesting when asked for.
  if (console.verbose()) {
    session_options.log_level = LogLevel::kWarn;
    session_options.log_sink = [&console](LogLevel, std::string_view line) {
      console.note("zookeeper client: " + std::string(line));
    };
  } else {
    session_options.log_level = LogLevel::kError;
    session_options.log_sink = [](LogLevel, std::string_view) {};
  }

  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(session_options);
  } catch (const ConnectionLossError&) {
    throw Failure(exit_code::kUnavailable, "no ZooKeeper server at " + options.connect +
                                               " answered within " +
                                               format_duration(options.connect_timeout));
  }
  console.note("connected to " + options.connect + (session->encrypted() ? " over TLS" : "") +
               " (session " + session_id_hex(session->session_id()) + ", timeout " +
               format_duration(session->negotiated_timeout()) + ")");
  return session;
}

}  // namespace zklock::cli
