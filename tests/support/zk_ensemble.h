// tests/support/zk_ensemble.h: a real ZooKeeper ensemble (quorum) on loopback, per test.
//
// Nodes are QuorumPeerMain JVMs (process.h: they cannot outlive the test process) with the
// settings of ServerOptions plus initLimit=5 and syncLimit=2, each with its own temporary
// directory (zoo.cfg, data/myid, server.log) under one root. Nodes are indexed 0..size()-1
// (ZooKeeper's myid is index + 1). Three nodes serve about 1 s after start; after the leader dies
// a new one is elected in about 1 s.
//
// start_in_netns() puts each node in a network namespace (netns.h) with its own client and
// quorum addresses, and may override initLimit and syncLimit. A node placed there may be an
// OBSERVER (peerType=observer, "server.N=...:observer" in every node's list: it serves clients and
// follows the commits but does not vote), and the ensemble may run ObserverMasters
// (observerMasterPort=P on every node, ZooKeeper 3.6+): each follower then serves observers on
// port P of its quorum address, and an observer syncs from a follower instead of the leader - its
// sessions' touches reach the leader in two hops (observer -> follower -> leader).
//
// TLS: with ServerOptions::tls every node also serves TLS on a secureClientPort of its own
// (secure_port(i)), on its client address, beside its plain client port (zookeeper_config writes
// the lines: the Netty factory for both ports, ssl.clientAuth, the X509AuthenticationProvider).
// The quorum stays plain, and so does every 4lw (on the plain port). The ensemble is ready only
// once every node's TLS port also accepts connections.
//
// Not thread-safe: drive an ensemble from one thread at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/netns.h"
#include "support/process.h"
#include "support/zk_server.h"

namespace zklock::testing {

class ZkEnsemble {
 public:
  // Starts `n` nodes on free loopback ports (client, quorum and election port each) and waits,
  // up to 60 s, until every node answers `srvr` with a Mode (and is ours: `conf` shows its data
  // directory) and exactly one is the leader. Retries with new ports if one was taken meanwhile.
  // Throws std::invalid_argument when n < 1 and std::runtime_error, quoting the nodes' logs, on
  // failure.
  static std::unique_ptr<ZkEnsemble> start(int n = 3, ServerOptions options = {});

  // Where one node runs (start_in_netns): in network namespace `netns` (netns.h; it must outlive
  // the ensemble), serving clients on `client_address` (clientPortAddress) and its peers on
  // `quorum_address` (server.N=quorum_address:quorum:election), so that client and quorum
  // traffic can take different links and be cut apart.
  struct NodePlacement {
    const NetNamespace* netns = nullptr;
    std::string client_address;
    std::string quorum_address;
    bool observer = false;  // a non-voting member (at least one placement must vote)
  };
  // Whether observers sync from an ObserverMaster on a follower (kOnFollowers) or from the
  // leader, ZooKeeper's default (kOff). kOnFollowers needs distinct quorum addresses (one port,
  // the same on every node): placements in namespaces.
  enum class ObserverMasters { kOff, kOnFollowers };
  // As start(), one node per placement. `extra_config` is appended to every node's zoo.cfg after
  // the defaults; a key given again there wins (e.g. "initLimit=10\nsyncLimit=5\n"). Ready when
  // every voter is leader or follower (exactly one leader) and every observer serves (Mode:
  // observer).
  static std::unique_ptr<ZkEnsemble> start_in_netns(
      std::vector<NodePlacement> placements, ServerOptions options = {},
      std::string extra_config = {}, ObserverMasters observer_masters = ObserverMasters::kOff);

  // Stops every node and removes the temporary directories (kept with ZKLOCK_KEEP_TEST_DIRS or
  // after a failed start).
  ~ZkEnsemble();
  ZkEnsemble(const ZkEnsemble&) = delete;
  ZkEnsemble& operator=(const ZkEnsemble&) = delete;

  // "127.0.0.1:p1,127.0.0.1:p2,...", every node, in index order.
  std::string connect_string() const;
  // "127.0.0.1:p" of node i only ("<client_address>:p" when placed in a namespace).
  std::string node_connect_string(int i) const;
  // With ServerOptions::tls: node i's TLS port and "<client_address>:<secure port>" of node i
  // only (0 and "" without).
  int secure_port(int i) const;
  std::string node_tls_connect_string(int i) const;
  // The address node i serves clients on ("127.0.0.1" unless placed in a namespace).
  const std::string& client_address(int i) const;
  // Node i was placed as an observer.
  bool is_observer(int i) const;
  // observerMasterPort, or 0 when ObserverMasters are off.
  int observer_master_port() const { return observer_master_port_; }
  int size() const { return static_cast<int>(nodes_.size()); }
  int client_port(int i) const;
  // PID of node i's current (or last) JVM.
  pid_t pid(int i) const;

  // Index of the node whose `srvr` reports "Mode: leader", among running nodes that are not
  // frozen; -1 if none does (e.g. during an election). Queries each node (1 s timeout each).
  int leader_index();

  // `srvr` Mode of node i ("leader", "follower", "observer"); "" when it is down, frozen or not
  // serving.
  std::string mode(int i);

  // SIGKILL node i (a crash) / SIGTERM it (a clean shutdown); both wait for the JVM to exit.
  // No-op when it is not running. Throws std::out_of_range for a bad index (as do all i-taking
  // functions).
  void kill(int i);
  void stop(int i);

  // Stops node i if it runs, starts it again (same ports and data) and waits, up to 60 s, until it
  // serves again (Mode leader or follower): this needs a quorum of nodes, including it, to be up.
  // Throws std::runtime_error with its log tail on failure.
  void restart(int i);

  // SIGSTOP / SIGCONT node i: it keeps its sockets open but answers nothing, neither clients nor
  // peers. freeze() returns once the JVM is stopped.
  void freeze(int i);
  void thaw(int i);

  // Kills the current leader. Returns its index. Throws std::runtime_error when there is none.
  int kill_leader();

  // Polls until some running, unfrozen node reports Mode: leader. Returns false on timeout.
  bool wait_for_leader(std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // True while node i's JVM is alive (also when frozen).
  bool running(int i);

  // A four-letter word sent to node i; "" when unreachable or frozen.
  std::string four_letter(
      int i, std::string_view word,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(2000)) const;

  // Node i's server log (stdout+stderr of its JVM, WARN and above).
  std::string log_path(int i) const;

 private:
  struct Node {
    int client_port = 0;
    int secure_port = 0;  // ServerOptions::tls only
    int quorum_port = 0;
    int election_port = 0;
    std::string dir;
    std::string data_dir;
    NodePlacement placement{nullptr, "127.0.0.1", "127.0.0.1"};
    std::unique_ptr<ChildProcess> process;
    pid_t last_pid = -1;
  };

  ZkEnsemble(ServerOptions options, std::string root_dir, int n);
  Node& node(int i);
  const Node& node(int i) const;
  void write_configs();
  void spawn(int i);
  // Mode leader/follower/observer, is_ours(i), and tls_port_ready(i).
  bool serving(int i);
  // Node i has no TLS port, or its TLS port accepts a TCP connection (no 4lw there).
  bool tls_port_ready(int i) const;
  // `conf` on node i's port names node i's data directory: the port is not someone else's.
  bool is_ours(int i) const;
  // Log tails of all nodes, for error messages.
  std::string all_logs() const;

  const ServerOptions options_;
  const std::string root_dir_;
  std::vector<Node> nodes_;
  std::string extra_config_;  // start_in_netns: appended to every zoo.cfg
  int observer_master_port_ = 0;
  bool keep_dir_ = false;
};

}  // namespace zklock::testing
