// tests/support/zk_server.h: a real, standalone ZooKeeper server per test (or per test process).
//
// The server is Debian's ZooKeeper (jars in /usr/share/java) run as a child JVM (process.h: it
// cannot outlive the test process), listening on 127.0.0.1 only, with its config, data and log in
// a fresh temporary directory. Its log (server.log in that directory, WARN level and above) is
// quoted in every startup error.
//
// Environment variables:
//   ZKLOCK_TEST_CONNECT    "host:port[,host:port...]": shared_server() uses this existing server
//                          instead of starting one (4lw helpers then assume it is on 127.0.0.1).
//   ZKLOCK_JAVA            java executable (default: "java" from PATH).
//   ZKLOCK_ZK_CLASSPATH    classpath of the ZooKeeper server (default: Debian's jars).
//   ZKLOCK_KEEP_TEST_DIRS  when set and not "0", temporary directories are kept for inspection.
//   ZKLOCK_TEST_OVER_TLS   when set and not "0": the wire suites over TLS (wire_suites_over_tls).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/netns.h"
#include "support/process.h"

namespace zklock::testing {

// TLS for clients (tests/tls): a secureClientPort beside the plain client port, served by the
// Netty connection factory with a PKCS12 keystore and truststore (test_pki.h makes them), and the
// X509AuthenticationProvider, which gives each client the RFC 2253 subject of its certificate as
// its `x509` identity.
struct ServerTls {
  std::string keystore;              // PKCS12: the server's key and certificate
  std::string truststore;            // PKCS12: the CA that signs the clients it accepts
  std::string password;              // of both stores
  std::string client_auth = "need";  // ssl.clientAuth: need, want or none
};

// Server settings, the same for a standalone server and every node of an ensemble.
struct ServerOptions {
  int tick_ms = 500;                  // tickTime: session timeouts are rounded to ticks
  int min_session_timeout_ms = 1000;  // the server clamps clients' requested session timeouts
  int max_session_timeout_ms = 60000;
  bool force_sync = false;       // fsync each transaction; off: faster, and tests never lose power
  std::optional<ServerTls> tls;  // also serve TLS on secure_port()
};

// One standalone server. Drive it from one thread at a time; the const accessors (port,
// connect_string, data_dir, four_letter...) may be used from any thread.
class ZkServer {
 public:
  // Starts a standalone server on a free loopback port and waits until it answers `ruok` with
  // `imok` (and is really ours: `conf` shows our data directory), up to 30 s. Retries on a new
  // port if the chosen one was taken meanwhile. Throws std::runtime_error with the tail of the
  // server log (or the reason: java missing, jars missing...) on failure.
  static std::unique_ptr<ZkServer> start(ServerOptions options = {});

  // The same, with the server inside network namespace `netns` (netns.h), listening for clients
  // on `client_address` only (clientPortAddress: an address of `netns`, e.g. a VethLink end), and
  // every 4lw, connect_string() and restart() going to that address. `netns` must outlive the
  // server. Throws as start(), and std::runtime_error when the namespace cannot be entered.
  static std::unique_ptr<ZkServer> start_in_netns(const NetNamespace& netns,
                                                  const std::string& client_address,
                                                  ServerOptions options = {});

  // Stops the server (gracefully, then SIGKILL) and removes its temporary directory (kept when a
  // start failed, or with ZKLOCK_KEEP_TEST_DIRS).
  ~ZkServer();
  ZkServer(const ZkServer&) = delete;
  ZkServer& operator=(const ZkServer&) = delete;

  // "127.0.0.1:<port>" (start_in_netns: "<client_address>:<port>"). The port never changes, even
  // across restart().
  std::string connect_string() const;
  int port() const { return port_; }
  // With ServerOptions::tls: the TLS port and "127.0.0.1:<secure port>" (0 and "" without).
  int secure_port() const { return secure_port_; }
  std::string tls_connect_string() const;

  // PID of the current (or last) server JVM; -1 before the first start.
  pid_t pid() const;

  // SIGTERM, waits for exit (SIGKILL after 10 s). Sessions are kept in the data directory, so a
  // restart() soon enough lets clients resume them. No-op when not running.
  void stop();

  // SIGKILL (a crash), waits for exit. No-op when not running.
  void kill();

  // Stops the server if it runs, starts it again on the same port with the same data directory
  // and waits for `imok` (30 s). Sessions whose timeout has not elapsed survive. Throws
  // std::runtime_error with the log tail if it does not come back (e.g. the port was taken by
  // another process meanwhile).
  void restart();

  // SIGSTOP / SIGCONT: a frozen server keeps its connections open but answers nothing (its
  // clients time out as on a hung machine). freeze() returns once the JVM is stopped.
  void freeze();
  void thaw();

  // True while the JVM is alive (also when frozen).
  bool running();

  // A four-letter word sent to this server; "" when unreachable or frozen (see
  // four_letter_words.h).
  std::string four_letter(std::string_view word, std::chrono::milliseconds timeout =
                                                     std::chrono::milliseconds(2000)) const;

  const std::string& data_dir() const { return data_dir_; }  // dataDir of zoo.cfg
  const std::string& log_path() const { return log_path_; }  // the JVM's stdout+stderr
  const ServerOptions& options() const { return options_; }

 private:
  ZkServer(ServerOptions options, std::string root_dir);
  static std::unique_ptr<ZkServer> start_in_netns_or_here(const NetNamespace* netns,
                                                          const std::string& client_address,
                                                          ServerOptions options);
  void write_config() const;
  // Spawns the JVM and waits for readiness. Returns false when it exited because its port was in
  // use (the caller may pick another port); throws on any other failure.
  bool launch();

  const ServerOptions options_;
  const std::string root_dir_;  // temporary directory holding everything below
  const std::string data_dir_;
  const std::string config_path_;
  const std::string log_path_;
  int port_ = 0;
  int secure_port_ = 0;
  const NetNamespace* netns_ = nullptr;       // start_in_netns: where the JVM runs
  std::string client_address_ = "127.0.0.1";  // clientPortAddress
  std::unique_ptr<ChildProcess> process_;
  pid_t last_pid_ = -1;
  bool keep_dir_ = false;  // set when a start failed: the directory holds the evidence
};

// The server shared by the tests of one process: see shared_server().
struct ServerRef {
  std::string connect;        // connect string for clients
  int port = 0;               // client port (of the first host when external), for 4lw queries
  ZkServer* owned = nullptr;  // nullptr when external (ZKLOCK_TEST_CONNECT)
};

// True when ZKLOCK_TEST_CONNECT is set: tests that must stop, freeze or restart a server should
// GTEST_SKIP, or start their own with ZkServer::start().
bool using_external_server();

// The external server when ZKLOCK_TEST_CONNECT is set; otherwise one standalone server started on
// first use (thread-safe) and kept until the process exits. Tests sharing it must use distinct
// znode paths and must not stop, freeze or restart it. Throws std::runtime_error when the server
// cannot be started or ZKLOCK_TEST_CONNECT cannot be parsed.
ServerRef shared_server();

// The wire suites over TLS (issue 25): with ZKLOCK_TEST_OVER_TLS=1 (the tls gate's *_over_tls
// tests, tests/tls/tests.cmake) every standalone server a test starts outside a namespace
// (shared_server(), ZkServer::start(), ZkEnsemble::start()) also serves TLS with the process's
// certificates (test_pki.h), and options_for() (test_env.h) points sessions at its TLS port.
bool wire_suites_over_tls();

// "host:port,...[/chroot]" of the TLS ports of the servers behind the plain `connect` string,
// when each of its hosts is the plain port of a server of this process that serves TLS (or one
// registered with register_tls_endpoint); std::nullopt otherwise (a proxy, a server without TLS,
// an external server). Thread-safe.
std::optional<std::string> tls_connect_for(const std::string& connect);
// Makes a server's plain "address:port" map to its TLS one (ZkServer::start and ZkEnsemble::start
// do it for every server with a TLS port). Thread-safe.
void register_tls_endpoint(const std::string& plain, const std::string& tls);
// For a child process's environment (a test that runs parts of itself in child processes):
// "ZKLOCK_TEST_TLS_ENDPOINTS=..." and "ZKLOCK_TEST_PKI_DIR=...", with which its tls_connect_for()
// knows this process's TLS servers and its test_pki() is this process's certificates. Empty
// when no server of this process serves TLS.
std::vector<std::string> tls_child_environment();

// ---- Building blocks, also used by zk_ensemble.h. ----

// Free TCP ports on 127.0.0.1, distinct, each verified by a bind. They are chosen below the
// kernel's ephemeral range (ip_local_port_range) when possible, so that an outgoing connection
// cannot grab one while its server is down between stop and restart. A port is only known free
// at the time of the check: callers retry on a clash.
std::vector<int> pick_free_ports(int count);
int pick_free_port();

// A new empty directory "$TMPDIR/<prefix>XXXXXX" (or /tmp), as an absolute path. Throws
// std::runtime_error on failure.
std::string make_temp_dir(const std::string& prefix);

// Command line of a ZooKeeper JVM: `main_class` (ZooKeeperServerMain or QuorumPeerMain) with
// `config_path`. Throws std::runtime_error when the ZooKeeper jars cannot be found.
std::vector<std::string> zookeeper_command(const std::string& main_class,
                                           const std::string& config_path);

// The zoo.cfg lines shared by standalone servers and ensemble nodes: tickTime, dataDir,
// clientPort on `client_address` (127.0.0.1 unless in a namespace), no admin server (it would
// take port 8080), all 4lw whitelisted, no connection limit, forceSync and the session timeout
// bounds from `options`; with options.tls and a `secure_port`, the TLS lines (ServerTls).
std::string zookeeper_config(const ServerOptions& options, const std::string& data_dir,
                             int client_port, const std::string& client_address = "127.0.0.1",
                             int secure_port = 0);

// True when the ZKLOCK_KEEP_TEST_DIRS environment variable asks to keep temporary directories.
bool keep_test_dirs();

}  // namespace zklock::testing
