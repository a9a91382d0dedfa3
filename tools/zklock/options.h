// Options shared by zklock's commands: how to reach ZooKeeper, how chatty to be, and - for the
// commands that take the lock - how long to wait and what to store in the lock node.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "console.h"
#include "zklock/session.h"

namespace zklock::cli {

inline constexpr const char* kDefaultConnect = "127.0.0.1:2181";
inline constexpr const char* kConnectEnv = "ZKLOCK_CONNECT";
inline constexpr const char* kTlsCaEnv = "ZKLOCK_TLS_CA";
inline constexpr const char* kTlsCertEnv = "ZKLOCK_TLS_CERT";
inline constexpr const char* kTlsKeyEnv = "ZKLOCK_TLS_KEY";
inline constexpr const char* kTlsKeyPasswordEnv = "ZKLOCK_TLS_KEY_PASSWORD";

struct CommonOptions {
  /// After parse_command_line (command_line.h): --connect, else $ZKLOCK_CONNECT, else the default.
  std::string connect = kDefaultConnect;
  std::chrono::milliseconds session_timeout{10'000};
  std::chrono::milliseconds connect_timeout{15'000};
  std::string user;  // "USER:PASSWORD" for digest auth; empty: none
  // TLS (--tls-ca, --tls-cert, --tls-key, --tls-key-password; else $ZKLOCK_TLS_CA,
  // $ZKLOCK_TLS_CERT, $ZKLOCK_TLS_KEY, $ZKLOCK_TLS_KEY_PASSWORD). All empty: plain TCP.
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_key_password;
  bool quiet = false;
  bool verbose = false;

  Verbosity verbosity() const noexcept {
    return quiet ? Verbosity::kQuiet : verbose ? Verbosity::kVerbose : Verbosity::kNormal;
  }
};

/// Which lock `exec` and `hold` take on the path.
enum class LockMode {
  kExclusive,  // default: a zklock::Mutex (Curator's InterProcessMutex, kazoo's Lock)
  kShared,     // --shared: the read side of a zklock::SharedMutex (readers share it)
  kWrite,      // --write: its write side (alone; Curator's and kazoo's read/write lock paths)
};

struct LockOptions {
  std::optional<std::chrono::milliseconds> timeout;  // none: wait as long as it takes
  std::string description;
  LockMode mode = LockMode::kExclusive;
  std::chrono::milliseconds lock_delay{0};  // --lock-delay (MutexOptions::lock_delay)
  bool revocable = false;  // --revocable: a revocation request ends the hold (exec: the command)
  std::string metrics_listen;  // --metrics-listen HOST:PORT (metrics_listener.h); empty: none
};

/// Returns: the TLS settings of the --tls-* options, else of their variables ($ZKLOCK_TLS_CA...);
///   nullopt when none is given (plain TCP).
/// Throws: Failure(64) for a partial setting (CA, certificate and key go together) or a key
///   password alone.
std::optional<TlsOptions> tls_options(const CommonOptions& options);

/// Opens the ZooKeeper session. The C client's own log lines go to the console with --verbose
/// only (zklock reports failures itself). `metrics_paths`: the lock paths whose figures the
/// session keeps apart (SessionOptions::metrics_paths; --metrics-listen shows them).
/// Throws: Failure(69) when no server answered within the connect timeout; InvalidArgumentError
///   for a bad connect string; Failure(64) for a partial TLS setting (CA, certificate and key go
///   together); TlsError when TLS cannot be had (the Session's constructor).
std::unique_ptr<Session> open_session(const CommonOptions& options, const Console& console,
                                      std::vector<std::string> metrics_paths = {});

}  // namespace zklock::cli
