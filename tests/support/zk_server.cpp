// tests/support/zk_server.cpp
#include "support/zk_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "support/four_letter_words.h"
#include "support/socket_io.h"
#include "support/test_pki.h"
#include "support/wait.h"

namespace zklock::testing {
namespace {

namespace fs = std::filesystem;

constexpr auto kStartTimeout = std::chrono::seconds(30);
constexpr auto kStopGrace = std::chrono::seconds(10);
constexpr int kStartAttempts = 4;

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): nobody setenv()s
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

// Every server of this process that serves TLS: its plain "address:port" -> its TLS one
// (tls_connect_for). A port reused by a later server overwrites the entry.
struct TlsEndpoints {
  std::mutex mutex;
  std::map<std::string, std::string> tls_of_plain;
};
TlsEndpoints& tls_endpoints() {
  // A child process of a test starts with its parent's (tls_child_environment).
  static TlsEndpoints endpoints;
  static std::once_flag inherited;
  std::call_once(inherited, [] {
    std::stringstream in(env_or("ZKLOCK_TEST_TLS_ENDPOINTS", ""));
    for (std::string entry; std::getline(in, entry, ';');) {
      const std::size_t equals = entry.find('=');
      if (equals != std::string::npos) {
        endpoints.tls_of_plain[entry.substr(0, equals)] = entry.substr(equals + 1);
      }
    }
  });
  return endpoints;
}

// Binds a TCP socket to 127.0.0.1:port (0: any). Returns the descriptor (the caller closes it)
// and sets `port` to the bound port; -1 when the port is in use.
int bind_loopback(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return -1;
  }
  port = ntohs(addr.sin_port);
  return fd;
}

void append_to_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app);
  out << text;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Building blocks

std::vector<int> pick_free_ports(int count) {
  // Below the ephemeral range: ports there are only ever taken by explicit binds, never by the
  // source port of some process's outgoing connection.
  int ephemeral_low = 32768;
  {
    std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
    int low = 0, high = 0;
    if (range >> low >> high && low > 0) ephemeral_low = low;
  }
  constexpr int kLowest = 10000;
  const bool use_low_range = ephemeral_low - kLowest >= 2000;
  std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(getpid()));
  std::uniform_int_distribution<int> dist(kLowest, ephemeral_low - 1);

  std::vector<int> ports;
  std::vector<int> fds;  // held open until all are chosen, so the ports are distinct
  for (int i = 0; i < count; ++i) {
    int fd = -1;
    int port = 0;
    for (int attempt = 0; use_low_range && fd < 0 && attempt < 200; ++attempt) {
      port = dist(rng);
      fd = bind_loopback(port);
    }
    if (fd < 0) {
      port = 0;  // the kernel's choice, from the ephemeral range
      fd = bind_loopback(port);
    }
    if (fd < 0) {
      for (int open_fd : fds) ::close(open_fd);
      throw std::runtime_error("cannot find a free TCP port on 127.0.0.1");
    }
    fds.push_back(fd);
    ports.push_back(port);
  }
  for (int fd : fds) ::close(fd);
  return ports;
}

int pick_free_port() { return pick_free_ports(1).front(); }

std::string make_temp_dir(const std::string& prefix) {
  std::string base = env_or("TMPDIR", "/tmp");
  std::error_code error;
  base = fs::weakly_canonical(fs::absolute(base, error), error).string();
  std::string pattern = base + "/" + prefix + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a temporary directory " + pattern + ": " +
                             std::generic_category().message(errno));
  }
  return pattern;
}

bool keep_test_dirs() {
  const std::string keep = env_or("ZKLOCK_KEEP_TEST_DIRS", "");
  return !keep.empty() && keep != "0";
}

std::vector<std::string> zookeeper_command(const std::string& main_class,
                                           const std::string& config_path) {
  std::string classpath = env_or("ZKLOCK_ZK_CLASSPATH", "");
  bool simple_logger = false;
  if (classpath.empty()) {
    const std::string dir = "/usr/share/java/";
    // slf4j-simple (WARN and above to stderr, i.e. the server log) when available: with
    // slf4j-nop a server that fails to start (port in use...) would explain nothing.
    simple_logger = fs::exists(dir + "slf4j-simple.jar");
    const std::array<const char*, 15> jars = {"zookeeper.jar",
                                              "zookeeper-jute.jar",
                                              "slf4j-api.jar",
                                              simple_logger ? "slf4j-simple.jar" : "slf4j-nop.jar",
                                              "netty-handler.jar",
                                              "netty-common.jar",
                                              "netty-buffer.jar",
                                              "netty-transport.jar",
                                              "netty-codec.jar",
                                              "netty-resolver.jar",
                                              "netty-transport-native-epoll.jar",
                                              "netty-transport-native-unix-common.jar",
                                              "metrics-core.jar",
                                              "commons-io.jar",
                                              "snappy-java.jar"};
    for (const char* jar : jars) {
      if (!fs::exists(dir + jar)) {
        throw std::runtime_error("ZooKeeper server jar " + dir + jar +
                                 " not found: install Debian's zookeeper package or set "
                                 "ZKLOCK_ZK_CLASSPATH");
      }
      if (!classpath.empty()) classpath += ':';
      classpath += dir + jar;
    }
  }
  std::vector<std::string> command = {
      env_or("ZKLOCK_JAVA", "java"),
      "-Xmx256m",
      // Small, quick-starting JVMs: tests start many servers on few cores.
      "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1",
      "-XX:+PerfDisableSharedMem",
      "-Djava.net.preferIPv4Stack=true",
      // Quorum connections to a dead or frozen peer give up after 1 s, not 5: faster elections.
      "-Dzookeeper.cnxTimeout=1000",
  };
  if (simple_logger) {
    command.insert(command.end(), {"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                                   "-Dorg.slf4j.simpleLogger.showDateTime=true",
                                   "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS"});
  }
  command.insert(command.end(), {"-cp", classpath, main_class, config_path});
  return command;
}

std::string zookeeper_config(const ServerOptions& options, const std::string& data_dir,
                             int client_port, const std::string& client_address, int secure_port) {
  std::ostringstream cfg;
  cfg << "tickTime=" << options.tick_ms << "\n"
      << "dataDir=" << data_dir << "\n"
      << "clientPort=" << client_port << "\n"
      << "clientPortAddress=" << client_address << "\n"
      << "admin.enableServer=false\n"
      << "4lw.commands.whitelist=*\n"
      << "maxClientCnxns=0\n"
      << "forceSync=" << (options.force_sync ? "yes" : "no") << "\n"
      << "minSessionTimeout=" << options.min_session_timeout_ms << "\n"
      << "maxSessionTimeout=" << options.max_session_timeout_ms << "\n";
  if (options.tls && secure_port > 0) {
    cfg << "secureClientPort=" << secure_port << "\n"
        << "secureClientPortAddress=" << client_address << "\n"
        << "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n"
        << "ssl.keyStore.location=" << options.tls->keystore << "\n"
        << "ssl.keyStore.password=" << options.tls->password << "\n"
        << "ssl.keyStore.type=PKCS12\n"
        << "ssl.trustStore.location=" << options.tls->truststore << "\n"
        << "ssl.trustStore.password=" << options.tls->password << "\n"
        << "ssl.trustStore.type=PKCS12\n"
        << "ssl.clientAuth=" << options.tls->client_auth << "\n"
        << "authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider\n";
  }
  return cfg.str();
}

// ---------------------------------------------------------------------------------------------
// ZkServer

ZkServer::ZkServer(ServerOptions options, std::string root_dir)
    : options_(options),
      root_dir_(std::move(root_dir)),
      data_dir_(root_dir_ + "/data"),
      config_path_(root_dir_ + "/zoo.cfg"),
      log_path_(root_dir_ + "/server.log") {}

std::unique_ptr<ZkServer> ZkServer::start(ServerOptions options) {
  return start_in_netns_or_here(nullptr, "127.0.0.1", options);
}

std::unique_ptr<ZkServer> ZkServer::start_in_netns(const NetNamespace& netns,
                                                   const std::string& client_address,
                                                   ServerOptions options) {
  return start_in_netns_or_here(&netns, client_address, options);
}

std::unique_ptr<ZkServer> ZkServer::start_in_netns_or_here(const NetNamespace* netns,
                                                           const std::string& client_address,
                                                           ServerOptions options) {
  // The wire suites over TLS: every server started here serves TLS too (a namespaced one is the
  // kernel-fault scenarios', which choose for themselves).
  if (netns == nullptr && !options.tls && wire_suites_over_tls()) {
    options.tls = test_pki().server_tls();
  }
  std::unique_ptr<ZkServer> server(new ZkServer(options, make_temp_dir("zklock-zk-")));
  server->netns_ = netns;
  server->client_address_ = client_address;
  fs::create_directories(server->data_dir_);
  for (int attempt = 1;; ++attempt) {
    if (options.tls) {
      const std::vector<int> ports = pick_free_ports(2);
      server->port_ = ports[0];
      server->secure_port_ = ports[1];
    } else {
      server->port_ = pick_free_port();
    }
    server->write_config();
    if (server->launch()) {
      if (server->secure_port_ != 0) {
        register_tls_endpoint(server->connect_string(), server->tls_connect_string());
      }
      return server;
    }
    if (attempt == kStartAttempts) {
      server->keep_dir_ = true;
      throw std::runtime_error("ZooKeeper server did not start after " +
                               std::to_string(kStartAttempts) + " attempts (ports taken?); log " +
                               server->log_path_ + ":\n" + tail_file(server->log_path_));
    }
  }
}

ZkServer::~ZkServer() {
  try {
    stop();
  } catch (...) {
  }
  if (!keep_test_dirs() && !keep_dir_) {
    std::error_code ignored;
    fs::remove_all(root_dir_, ignored);
  }
}

void ZkServer::write_config() const {
  write_file(config_path_,
             zookeeper_config(options_, data_dir_, port_, client_address_, secure_port_));
}

bool ZkServer::launch() {
  append_to_file(log_path_, "=== zklock test harness: starting ZooKeeperServerMain on port " +
                                std::to_string(port_) + " ===\n");
  SpawnOptions spawn;
  spawn.log_path = log_path_;
  spawn.working_dir = root_dir_;
  std::vector<std::string> command =
      zookeeper_command("org.apache.zookeeper.server.ZooKeeperServerMain", config_path_);
  if (netns_ != nullptr) command = netns_->command(command);
  process_ = std::make_unique<ChildProcess>(command, spawn);
  last_pid_ = process_->pid();

  // Ready: answers imok, and it is our JVM answering, not another server that took the port.
  const std::string our_data_dir = "dataDir=" + data_dir_;
  bool ready = false;
  wait_until(
      [&] {
        if (!process_->running()) return true;
        ready = four_letter("ruok", std::chrono::milliseconds(1000)) == "imok" &&
                four_letter("conf", std::chrono::milliseconds(1000)).find(our_data_dir) !=
                    std::string::npos &&
                (secure_port_ == 0 || accepts_connections(client_address_, secure_port_));
        return ready;
      },
      kStartTimeout, std::chrono::milliseconds(20));
  if (ready) return true;
  keep_dir_ = true;  // the log is quoted below: keep the directory for a closer look

  if (auto status = process_->wait_exit(std::chrono::milliseconds(0))) {
    const std::string log = tail_file(log_path_);
    if (log.find("Address already in use") != std::string::npos ||
        log.find("BindException") != std::string::npos) {
      keep_dir_ = false;  // not a failure worth keeping: the caller retries or explains
      return false;
    }
    throw std::runtime_error("ZooKeeper server on port " + std::to_string(port_) + " " +
                             describe_wait_status(*status) + " during startup; log " + log_path_ +
                             ":\n" + log);
  }
  process_->kill();
  throw std::runtime_error("ZooKeeper server on port " + std::to_string(port_) +
                           " did not answer imok within 30 s; log " + log_path_ + ":\n" +
                           tail_file(log_path_));
}

std::string ZkServer::connect_string() const {
  return client_address_ + ":" + std::to_string(port_);
}

std::string ZkServer::tls_connect_string() const {
  return secure_port_ == 0 ? std::string() : client_address_ + ":" + std::to_string(secure_port_);
}

pid_t ZkServer::pid() const { return last_pid_; }

void ZkServer::stop() {
  if (process_) process_->stop(kStopGrace);
}

void ZkServer::kill() {
  if (process_) process_->kill();
}

void ZkServer::restart() {
  stop();
  if (!launch()) {
    throw std::runtime_error("ZooKeeper server cannot restart: port " + std::to_string(port_) +
                             " was taken by another process while it was down; log " + log_path_ +
                             ":\n" + tail_file(log_path_));
  }
}

void ZkServer::freeze() {
  if (process_) process_->freeze();
}

void ZkServer::thaw() {
  if (process_) process_->thaw();
}

bool ZkServer::running() { return process_ && process_->running(); }

std::string ZkServer::four_letter(std::string_view word, std::chrono::milliseconds timeout) const {
  return four_letter_word(client_address_, port_, word, timeout);
}

// ---------------------------------------------------------------------------------------------
// The shared server

bool wire_suites_over_tls() {
  static const bool over_tls =
      !env_or("ZKLOCK_TEST_OVER_TLS", "").empty() && env_or("ZKLOCK_TEST_OVER_TLS", "") != "0";
  return over_tls;
}

void register_tls_endpoint(const std::string& plain, const std::string& tls) {
  TlsEndpoints& endpoints = tls_endpoints();
  std::lock_guard lock(endpoints.mutex);
  endpoints.tls_of_plain[plain] = tls;
}

std::vector<std::string> tls_child_environment() {
  std::vector<std::string> out;
  TlsEndpoints& endpoints = tls_endpoints();
  std::lock_guard lock(endpoints.mutex);
  if (endpoints.tls_of_plain.empty()) return out;
  std::string list = "ZKLOCK_TEST_TLS_ENDPOINTS=";
  for (const auto& [plain, tls] : endpoints.tls_of_plain) list += plain + "=" + tls + ";";
  out.push_back(list);
  out.push_back("ZKLOCK_TEST_PKI_DIR=" + test_pki().dir());
  return out;
}

std::optional<std::string> tls_connect_for(const std::string& connect) {
  const std::size_t slash = connect.find('/');
  const std::string hosts = connect.substr(0, slash);
  const std::string chroot = slash == std::string::npos ? std::string() : connect.substr(slash);
  TlsEndpoints& endpoints = tls_endpoints();
  std::lock_guard lock(endpoints.mutex);
  std::string out;
  std::size_t begin = 0;
  while (begin <= hosts.size()) {
    const std::size_t comma = std::min(hosts.find(',', begin), hosts.size());
    const auto it = endpoints.tls_of_plain.find(hosts.substr(begin, comma - begin));
    if (it == endpoints.tls_of_plain.end()) return std::nullopt;
    out += (out.empty() ? "" : ",") + it->second;
    begin = comma + 1;
  }
  return out + chroot;
}

bool using_external_server() { return !env_or("ZKLOCK_TEST_CONNECT", "").empty(); }

ServerRef shared_server() {
  if (using_external_server()) {
    const std::string connect = env_or("ZKLOCK_TEST_CONNECT", "");
    // "host:port[,host:port...][/chroot]": the 4lw port is the first host's.
    const std::string first = connect.substr(0, connect.find_first_of(",/"));
    const std::size_t colon = first.rfind(':');
    int port = 0;
    if (colon != std::string::npos) {
      try {
        std::size_t used = 0;
        port = std::stoi(first.substr(colon + 1), &used);
        if (used != first.size() - colon - 1) port = 0;
      } catch (const std::exception&) {
        port = 0;
      }
    }
    if (port <= 0 || port > 65535) {
      throw std::runtime_error("ZKLOCK_TEST_CONNECT=\"" + connect +
                               "\" is not host:port[,host:port...]");
    }
    return ServerRef{connect, port, nullptr};
  }
  // Kept until exit: then the atexit cleanup of process.cpp or this destructor stops the JVM, and
  // the destructor removes its directory.
  static std::mutex mutex;
  static std::unique_ptr<ZkServer> server;
  std::lock_guard<std::mutex> lock(mutex);
  if (!server) server = ZkServer::start();
  return ServerRef{server->connect_string(), server->port(), server.get()};
}

}  // namespace zklock::testing
