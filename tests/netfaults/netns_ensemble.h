// tests/netfaults/netns_ensemble.h: a ZooKeeper ensemble whose nodes each live in a network
// namespace of their own, with TWO links to the host: one for client traffic (the node's
// clientPortAddress) and one for quorum traffic (server.N=QUORUM_ADDRESS:quorum:election). The
// host routes between them. Cutting a node's quorum link (a blackhole qdisc on both ends) cuts
// it from its peers silently while its clients still reach it: the follower that keeps answering
// reads after it lost its leader, as a real partition between server racks does.
//
// Production-like timing by default: tickTime=2000, initLimit=10, syncLimit=5 (a follower and its
// leader give up on each other after syncLimit x tickTime = 10 s of silence). One setting differs
// from a default installation: fastleader.maxNotificationInterval=1000 (default 60 s), so a node
// that spent a cut in leader election rejoins within about a second of the heal instead of after
// its election backoff - it shortens the wait between trials and changes nothing while cut.
//
// Observers (Options::observers): extra nodes, after the voters in index order, with the same two
// links; by default behind ObserverMasters (ZkEnsemble::ObserverMasters::kOnFollowers), so each
// syncs from a follower, not from the leader (docs/reliability.md; review 3, item 15).
//
// TLS: with Options::server.tls (e.g. test_pki().server_tls()) every node also serves TLS on a
// secureClientPort of its own, on its client address (ZkEnsemble); tls_connect_string(i) names it.
// The quorum links and every 4lw stay plain.
//
// Host names: host_name(i) is a name unique to this test process and ensemble
// ("<node's namespace>-zk<myid>", e.g. "zkl4242n3-zk1");
// hosts_entries() is what a client namespace's hosts file needs to resolve them
// (NetNamespace::set_hosts).
//
// Not thread-safe: drive it from one thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/netns.h"
#include "support/zk_ensemble.h"
#include "support/zk_server.h"

namespace zklock::testing::netfaults {

class NetnsEnsemble {
 public:
  struct Options {
    int nodes = 3;      // voters
    int observers = 0;  // non-voting members, indices nodes .. nodes + observers - 1
    ZkEnsemble::ObserverMasters observer_masters = ZkEnsemble::ObserverMasters::kOnFollowers;
    // tickTime 2000; session timeouts from 2 to 20 ticks, as a default installation allows. With
    // tls set, every node serves TLS too.
    ServerOptions server{2000, 4000, 40000, false, {}};
    int init_limit = 10;
    int sync_limit = 5;
  };

  // Creates the namespaces, links and routes, turns on forwarding (IpForwarding) and starts the
  // ensemble (ZkEnsemble::start_in_netns). Throws std::runtime_error on failure.
  static std::unique_ptr<NetnsEnsemble> start(Options options);
  ~NetnsEnsemble();  // stops the servers, then removes every namespace and link

  ZkEnsemble& servers() { return *servers_; }
  int size() const { return static_cast<int>(nodes_.size()); }  // voters and observers
  int voters() const { return options_.nodes; }
  bool is_observer(int i) const { return i >= options_.nodes; }
  const Options& options() const { return options_; }

  // Node i's client address, and "ADDRESS:PORT" of node i alone (for a client that must talk to
  // that node only).
  const std::string& client_address(int i) const;
  std::string connect_string(int i) const;
  // "ADDRESS:SECUREPORT" of node i alone, with Options::server.tls ("" without).
  std::string tls_connect_string(int i) const;
  // "NAME:PORT" of node i: its host name, resolved by a namespace with hosts_entries().
  std::string named_connect_string(int i) const;
  // "ADDRESS:PORT,..." of every voter, in index order.
  std::string voters_connect_string() const;
  // Node i's host name, unique to this test process, and the (address, name) of every node.
  std::string host_name(int i) const;
  std::vector<std::pair<std::string, std::string>> hosts_entries() const;

  // The leader's index from `srvr` over the client addresses; -1 during an election.
  int leader() { return servers_->leader_index(); }

  // Silences node i's quorum link both ways (tc blackhole on both ends); its client link stays.
  void cut_quorum(int i);
  void heal_quorum(int i);

  // After heal_quorum(i): polls until node i serves again (as a follower; an observer as an
  // observer) and the leader counts every follower as synced (mntr zk_synced_followers ==
  // voters() - 1). False on timeout.
  bool wait_rejoined(int i, std::chrono::milliseconds timeout);
  // Every voter but the leader and every observer serve, and the leader counts every follower as
  // synced. False on timeout.
  bool wait_all_serving(std::chrono::milliseconds timeout);

 private:
  struct Node {
    NetNamespace netns;
    VethLink client{nullptr, netns};
    VethLink quorum{nullptr, netns};
    std::vector<std::unique_ptr<Route>> routes;
  };

  explicit NetnsEnsemble(Options options) : options_(options) {}

  const Options options_;
  IpForwarding forwarding_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::unique_ptr<ZkEnsemble> servers_;
};

}  // namespace zklock::testing::netfaults
