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
// Not thread-safe: drive it from one thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "support/netns.h"
#include "support/zk_ensemble.h"
#include "support/zk_server.h"

namespace zklock::testing::netfaults {

class NetnsEnsemble {
 public:
  struct Options {
    int nodes = 3;
    // tickTime 2000; session timeouts from 2 to 20 ticks, as a default installation allows.
    ServerOptions server{2000, 4000, 40000, false};
    int init_limit = 10;
    int sync_limit = 5;
  };

  // Creates the namespaces, links and routes, turns on forwarding (IpForwarding) and starts the
  // ensemble (ZkEnsemble::start_in_netns). Throws std::runtime_error on failure.
  static std::unique_ptr<NetnsEnsemble> start(Options options);
  ~NetnsEnsemble();  // stops the servers, then removes every namespace and link

  ZkEnsemble& servers() { return *servers_; }
  int size() const { return static_cast<int>(nodes_.size()); }
  const Options& options() const { return options_; }

  // Node i's client address, and "ADDRESS:PORT" of node i alone (for a client that must talk to
  // that node only).
  const std::string& client_address(int i) const;
  std::string connect_string(int i) const;

  // The leader's index from `srvr` over the client addresses; -1 during an election.
  int leader() { return servers_->leader_index(); }

  // Silences node i's quorum link both ways (tc blackhole on both ends); its client link stays.
  void cut_quorum(int i);
  void heal_quorum(int i);

  // After heal_quorum(i): polls until node i serves as a follower again and the leader counts
  // every follower as synced (mntr zk_synced_followers == size() - 1). False on timeout.
  bool wait_rejoined(int i, std::chrono::milliseconds timeout);

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
