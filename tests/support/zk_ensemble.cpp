// tests/support/zk_ensemble.cpp
#include "support/zk_ensemble.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "support/four_letter_words.h"
#include "support/socket_io.h"
#include "support/test_pki.h"
#include "support/wait.h"

namespace zklock::testing {
namespace {

namespace fs = std::filesystem;

constexpr auto kStartTimeout = std::chrono::seconds(60);
constexpr auto kStopGrace = std::chrono::seconds(10);
constexpr auto kQueryTimeout = std::chrono::milliseconds(1000);
constexpr int kStartAttempts = 3;

bool mentions_bind_failure(const std::string& log) {
  return log.find("Address already in use") != std::string::npos ||
         log.find("BindException") != std::string::npos;
}

}  // namespace

ZkEnsemble::ZkEnsemble(ServerOptions options, std::string root_dir, int n)
    : options_(options), root_dir_(std::move(root_dir)), nodes_(static_cast<std::size_t>(n)) {
  for (int i = 0; i < n; ++i) {
    Node& each = nodes_[static_cast<std::size_t>(i)];
    each.dir = root_dir_ + "/node" + std::to_string(i + 1);
    each.data_dir = each.dir + "/data";
  }
}

std::unique_ptr<ZkEnsemble> ZkEnsemble::start(int n, ServerOptions options) {
  if (n < 1) throw std::invalid_argument("ZkEnsemble::start: n must be >= 1");
  // The wire suites over TLS (zk_server.h): every node serves TLS too, and options_for() finds
  // each node's TLS port.
  if (!options.tls && wire_suites_over_tls()) options.tls = test_pki().server_tls();
  auto ensemble =
      start_in_netns(std::vector<NodePlacement>(static_cast<std::size_t>(n),
                                                NodePlacement{nullptr, "127.0.0.1", "127.0.0.1"}),
                     options);
  if (options.tls) {
    for (int i = 0; i < n; ++i) {
      register_tls_endpoint(ensemble->node_connect_string(i), ensemble->node_tls_connect_string(i));
    }
  }
  return ensemble;
}

std::unique_ptr<ZkEnsemble> ZkEnsemble::start_in_netns(std::vector<NodePlacement> placements,
                                                       ServerOptions options,
                                                       std::string extra_config,
                                                       ObserverMasters observer_masters) {
  const int n = static_cast<int>(placements.size());
  if (n < 1) throw std::invalid_argument("ZkEnsemble::start_in_netns: no placements");
  if (std::all_of(placements.begin(), placements.end(),
                  [](const NodePlacement& p) { return p.observer; })) {
    throw std::invalid_argument("ZkEnsemble::start_in_netns: no voting member");
  }
  std::unique_ptr<ZkEnsemble> ensemble(
      new ZkEnsemble(options, make_temp_dir("zklock-ensemble-"), n));
  for (int i = 0; i < n; ++i) ensemble->node(i).placement = placements[static_cast<std::size_t>(i)];
  ensemble->extra_config_ = std::move(extra_config);
  // Three ports per node, one for the ObserverMasters, and with TLS a secure port per node after
  // those (the plain ensemble's ports are picked as they always were).
  const bool tls = options.tls.has_value();
  for (int attempt = 1;; ++attempt) {
    const std::vector<int> ports = pick_free_ports(3 * n + 1 + (tls ? n : 0));
    for (int i = 0; i < n; ++i) {
      Node& each = ensemble->node(i);
      const std::size_t first = 3 * static_cast<std::size_t>(i);
      each.client_port = ports[first];
      each.quorum_port = ports[first + 1];
      each.election_port = ports[first + 2];
      each.secure_port = tls ? ports[3 * static_cast<std::size_t>(n) + 1 + i] : 0;
    }
    ensemble->observer_master_port_ = observer_masters == ObserverMasters::kOnFollowers
                                          ? ports[3 * static_cast<std::size_t>(n)]
                                          : 0;
    ensemble->write_configs();
    for (int i = 0; i < n; ++i) ensemble->spawn(i);

    int exited = -1;
    const bool ready = wait_until(
        [&] {
          int leaders = 0;
          for (int i = 0; i < n; ++i) {
            if (!ensemble->running(i)) {
              exited = i;
              return true;
            }
          }
          for (int i = 0; i < n; ++i) {
            const std::string mode = ensemble->mode(i);
            if (ensemble->is_observer(i) ? mode != "observer"
                                         : mode != "leader" && mode != "follower") {
              return false;
            }
            if (!ensemble->is_ours(i) || !ensemble->tls_port_ready(i)) return false;
            if (mode == "leader") ++leaders;
          }
          return leaders == 1;
        },
        kStartTimeout, std::chrono::milliseconds(50));
    if (ready && exited < 0) return ensemble;

    if (exited >= 0) {
      // One node died: the others usually die of the same cause a moment later. Give them that
      // moment, so that their logs say why.
      wait_until(
          [&] {
            for (int i = 0; i < n; ++i) {
              if (ensemble->running(i)) return false;
            }
            return true;
          },
          std::chrono::seconds(2));
    }
    for (int i = 0; i < n; ++i) {
      if (ensemble->running(i)) ensemble->kill(i);
    }
    const std::string logs = ensemble->all_logs();
    if (exited >= 0 && mentions_bind_failure(logs) && attempt < kStartAttempts) continue;
    ensemble->keep_dir_ = true;
    std::string reason = exited >= 0 ? "node " + std::to_string(exited) + " exited during startup"
                                     : "no stable leader with every node serving within 60 s";
    throw std::runtime_error("ZooKeeper ensemble of " + std::to_string(n) + " did not start (" +
                             reason + "; attempt " + std::to_string(attempt) + "); directory " +
                             ensemble->root_dir_ + "\n" + logs);
  }
}

ZkEnsemble::~ZkEnsemble() {
  // SIGTERM everyone first so that the JVMs shut down in parallel, then reap each.
  for (auto& each : nodes_) {
    if (each.process && each.process->running()) {
      each.process->thaw();
      each.process->signal(SIGTERM);
    }
  }
  for (auto& each : nodes_) {
    try {
      if (each.process) each.process->stop(kStopGrace);
    } catch (...) {
    }
  }
  if (!keep_test_dirs() && !keep_dir_) {
    std::error_code ignored;
    fs::remove_all(root_dir_, ignored);
  }
}

ZkEnsemble::Node& ZkEnsemble::node(int i) {
  if (i < 0 || i >= size()) {
    throw std::out_of_range("ZkEnsemble: no node " + std::to_string(i) + " (size " +
                            std::to_string(size()) + ")");
  }
  return nodes_[static_cast<std::size_t>(i)];
}

const ZkEnsemble::Node& ZkEnsemble::node(int i) const {
  return const_cast<ZkEnsemble*>(this)->node(i);
}

void ZkEnsemble::write_configs() {
  std::ostringstream servers;
  for (int i = 0; i < size(); ++i) {
    servers << "server." << i + 1 << "=" << node(i).placement.quorum_address << ":"
            << node(i).quorum_port << ":" << node(i).election_port
            << (node(i).placement.observer ? ":observer" : "") << "\n";
  }
  if (observer_master_port_ != 0) servers << "observerMasterPort=" << observer_master_port_ << "\n";
  for (int i = 0; i < size(); ++i) {
    Node& each = node(i);
    // A fresh data directory: a retry on new ports must not inherit epochs of the failed attempt.
    std::error_code ignored;
    fs::remove_all(each.data_dir, ignored);
    fs::create_directories(each.data_dir);
    std::ofstream(each.data_dir + "/myid") << i + 1 << "\n";
    std::ofstream cfg(each.dir + "/zoo.cfg", std::ios::trunc);
    cfg << zookeeper_config(options_, each.data_dir, each.client_port,
                            each.placement.client_address, each.secure_port)
        << "initLimit=5\n"
        << "syncLimit=2\n"
        // A 1-node "ensemble" stays a quorum (Mode: leader) rather than turning standalone.
        << "standaloneEnabled=false\n"
        << (each.placement.observer ? "peerType=observer\n" : "") << servers.str() << extra_config_;
    cfg.close();
    if (!cfg) throw std::runtime_error("cannot write " + each.dir + "/zoo.cfg");
  }
}

void ZkEnsemble::spawn(int i) {
  Node& each = node(i);
  std::ofstream(log_path(i), std::ios::app)
      << "=== zklock test harness: starting QuorumPeerMain myid " << i + 1 << " client port "
      << each.client_port << " ===\n";
  SpawnOptions spawn_options;
  spawn_options.log_path = log_path(i);
  spawn_options.working_dir = each.dir;
  std::vector<std::string> command =
      zookeeper_command("org.apache.zookeeper.server.quorum.QuorumPeerMain", each.dir + "/zoo.cfg");
  if (each.placement.netns != nullptr) command = each.placement.netns->command(command);
  each.process = std::make_unique<ChildProcess>(command, spawn_options);
  each.last_pid = each.process->pid();
}

bool ZkEnsemble::serving(int i) {
  const std::string current = mode(i);
  return (current == "leader" || current == "follower" || current == "observer") && is_ours(i) &&
         tls_port_ready(i);
}

bool ZkEnsemble::tls_port_ready(int i) const {
  return node(i).secure_port == 0 ||
         accepts_connections(node(i).placement.client_address, node(i).secure_port);
}

bool ZkEnsemble::is_ours(int i) const {
  return four_letter(i, "conf", kQueryTimeout).find("dataDir=" + node(i).data_dir) !=
         std::string::npos;
}

std::string ZkEnsemble::all_logs() const {
  std::string logs;
  for (int i = 0; i < size(); ++i) {
    logs += "--- node " + std::to_string(i) + " log " + log_path(i) + ":\n" +
            tail_file(log_path(i), 2500) + "\n";
  }
  return logs;
}

std::string ZkEnsemble::connect_string() const {
  std::string connect;
  for (int i = 0; i < size(); ++i) {
    if (i > 0) connect += ',';
    connect += node_connect_string(i);
  }
  return connect;
}

std::string ZkEnsemble::node_connect_string(int i) const {
  return node(i).placement.client_address + ":" + std::to_string(node(i).client_port);
}

int ZkEnsemble::secure_port(int i) const { return node(i).secure_port; }

std::string ZkEnsemble::node_tls_connect_string(int i) const {
  const Node& each = node(i);
  return each.secure_port == 0
             ? std::string()
             : each.placement.client_address + ":" + std::to_string(each.secure_port);
}

const std::string& ZkEnsemble::client_address(int i) const {
  return node(i).placement.client_address;
}

bool ZkEnsemble::is_observer(int i) const { return node(i).placement.observer; }

int ZkEnsemble::client_port(int i) const { return node(i).client_port; }

pid_t ZkEnsemble::pid(int i) const { return node(i).last_pid; }

std::string ZkEnsemble::log_path(int i) const { return node(i).dir + "/server.log"; }

bool ZkEnsemble::running(int i) {
  Node& each = node(i);
  return each.process && each.process->running();
}

std::string ZkEnsemble::mode(int i) {
  Node& each = node(i);
  if (!each.process || each.process->frozen() || !each.process->running()) return {};
  return parse_mode(four_letter(i, "srvr", kQueryTimeout));
}

int ZkEnsemble::leader_index() {
  for (int i = 0; i < size(); ++i) {
    if (mode(i) == "leader") return i;
  }
  return -1;
}

bool ZkEnsemble::wait_for_leader(std::chrono::milliseconds timeout) {
  return wait_until([this] { return leader_index() >= 0; }, timeout, std::chrono::milliseconds(20));
}

void ZkEnsemble::kill(int i) {
  Node& each = node(i);
  if (each.process) each.process->kill();
}

void ZkEnsemble::stop(int i) {
  Node& each = node(i);
  if (each.process) each.process->stop(kStopGrace);
}

void ZkEnsemble::restart(int i) {
  stop(i);
  spawn(i);
  const bool ready = wait_until([&] { return !running(i) || serving(i); }, kStartTimeout,
                                std::chrono::milliseconds(20));
  if (ready && running(i)) return;
  keep_dir_ = true;
  const std::string what = running(i) ? "does not serve within 60 s (no quorum?)"
                                      : "exited during restart (port taken?)";
  throw std::runtime_error("ZooKeeper ensemble node " + std::to_string(i) + " " + what +
                           "; directory " + root_dir_ + "\n" + all_logs());
}

void ZkEnsemble::freeze(int i) {
  Node& each = node(i);
  if (each.process) each.process->freeze();
}

void ZkEnsemble::thaw(int i) {
  Node& each = node(i);
  if (each.process) each.process->thaw();
}

int ZkEnsemble::kill_leader() {
  const int leader = leader_index();
  if (leader < 0) throw std::runtime_error("ZkEnsemble::kill_leader: no node reports leader");
  kill(leader);
  return leader;
}

std::string ZkEnsemble::four_letter(int i, std::string_view word,
                                    std::chrono::milliseconds timeout) const {
  return four_letter_word(node(i).placement.client_address, node(i).client_port, word, timeout);
}

}  // namespace zklock::testing
