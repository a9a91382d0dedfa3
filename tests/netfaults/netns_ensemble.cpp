// tests/netfaults/netns_ensemble.cpp
#include "netns_ensemble.h"

#include "support/four_letter_words.h"
#include "support/wait.h"

namespace zklock::testing::netfaults {

std::unique_ptr<NetnsEnsemble> NetnsEnsemble::start(Options options) {
  std::unique_ptr<NetnsEnsemble> ensemble(new NetnsEnsemble(options));
  std::vector<ZkEnsemble::NodePlacement> placements;
  for (int i = 0; i < options.nodes; ++i) ensemble->nodes_.push_back(std::make_unique<Node>());
  for (int i = 0; i < options.nodes; ++i) {
    Node& node = *ensemble->nodes_[static_cast<std::size_t>(i)];
    // Clients (and anything else) through the client link; each peer's quorum address through
    // the quorum link, so that cutting the quorum link leaves the clients' path alone.
    node.routes.push_back(Route::via(node.netns, "default", node.client.left().address));
    for (int j = 0; j < options.nodes; ++j) {
      if (j == i) continue;
      const std::string peer =
          ensemble->nodes_[static_cast<std::size_t>(j)]->quorum.right().address;
      node.routes.push_back(Route::via(node.netns, peer + "/32", node.quorum.left().address));
    }
    placements.push_back({&node.netns, node.client.right().address, node.quorum.right().address});
  }
  const std::string timing = "initLimit=" + std::to_string(options.init_limit) +
                             "\nsyncLimit=" + std::to_string(options.sync_limit) +
                             "\nfastleader.maxNotificationInterval=1000\n";
  ensemble->servers_ = ZkEnsemble::start_in_netns(placements, options.server, timing);
  return ensemble;
}

NetnsEnsemble::~NetnsEnsemble() {
  servers_.reset();  // the JVMs go before their namespaces and links
}

const std::string& NetnsEnsemble::client_address(int i) const {
  return nodes_.at(static_cast<std::size_t>(i))->client.right().address;
}

std::string NetnsEnsemble::connect_string(int i) const { return servers_->node_connect_string(i); }

void NetnsEnsemble::cut_quorum(int i) { nodes_.at(static_cast<std::size_t>(i))->quorum.cut(); }

void NetnsEnsemble::heal_quorum(int i) { nodes_.at(static_cast<std::size_t>(i))->quorum.heal(); }

bool NetnsEnsemble::wait_rejoined(int i, std::chrono::milliseconds timeout) {
  return wait_until(
      [&] {
        if (servers_->mode(i) != "follower") return false;
        const int leader = servers_->leader_index();
        if (leader < 0) return false;
        const auto mntr = parse_mntr(servers_->four_letter(leader, "mntr"));
        const auto synced = mntr.find("zk_synced_followers");
        return synced != mntr.end() && synced->second == std::to_string(size() - 1);
      },
      timeout, std::chrono::milliseconds(100));
}

}  // namespace zklock::testing::netfaults
