// tests/netfaults/netns_ensemble.cpp
#include "netns_ensemble.h"

#include "support/four_letter_words.h"
#include "support/wait.h"

namespace zklock::testing::netfaults {

std::unique_ptr<NetnsEnsemble> NetnsEnsemble::start(Options options) {
  std::unique_ptr<NetnsEnsemble> ensemble(new NetnsEnsemble(options));
  std::vector<ZkEnsemble::NodePlacement> placements;
  const int total = options.nodes + options.observers;
  for (int i = 0; i < total; ++i) ensemble->nodes_.push_back(std::make_unique<Node>());
  for (int i = 0; i < total; ++i) {
    Node& node = *ensemble->nodes_[static_cast<std::size_t>(i)];
    // Clients (and anything else) through the client link; each peer's quorum address through
    // the quorum link, so that cutting the quorum link leaves the clients' path alone.
    node.routes.push_back(Route::via(node.netns, "default", node.client.left().address));
    for (int j = 0; j < total; ++j) {
      if (j == i) continue;
      const std::string peer =
          ensemble->nodes_[static_cast<std::size_t>(j)]->quorum.right().address;
      node.routes.push_back(Route::via(node.netns, peer + "/32", node.quorum.left().address));
    }
    placements.push_back({&node.netns, node.client.right().address, node.quorum.right().address,
                          i >= options.nodes});
  }
  const std::string timing = "initLimit=" + std::to_string(options.init_limit) +
                             "\nsyncLimit=" + std::to_string(options.sync_limit) +
                             "\nfastleader.maxNotificationInterval=1000\n";
  ensemble->servers_ = ZkEnsemble::start_in_netns(
      placements, options.server, timing,
      options.observers > 0 ? options.observer_masters : ZkEnsemble::ObserverMasters::kOff);
  return ensemble;
}

NetnsEnsemble::~NetnsEnsemble() {
  servers_.reset();  // the JVMs go before their namespaces and links
}

const std::string& NetnsEnsemble::client_address(int i) const {
  return nodes_.at(static_cast<std::size_t>(i))->client.right().address;
}

std::string NetnsEnsemble::connect_string(int i) const { return servers_->node_connect_string(i); }

std::string NetnsEnsemble::tls_connect_string(int i) const {
  return servers_->node_tls_connect_string(i);
}

std::string NetnsEnsemble::named_connect_string(int i) const {
  return host_name(i) + ":" + std::to_string(servers_->client_port(i));
}

std::string NetnsEnsemble::voters_connect_string() const {
  std::string connect;
  for (int i = 0; i < voters(); ++i) {
    if (i > 0) connect += ',';
    connect += connect_string(i);
  }
  return connect;
}

std::string NetnsEnsemble::host_name(int i) const {
  // The node's namespace name is unique in the process, and has the pid in it.
  return nodes_.at(static_cast<std::size_t>(i))->netns.name() + "-zk" + std::to_string(i + 1);
}

std::vector<std::pair<std::string, std::string>> NetnsEnsemble::hosts_entries() const {
  std::vector<std::pair<std::string, std::string>> entries;
  for (int i = 0; i < size(); ++i) entries.emplace_back(client_address(i), host_name(i));
  return entries;
}

void NetnsEnsemble::cut_quorum(int i) { nodes_.at(static_cast<std::size_t>(i))->quorum.cut(); }

void NetnsEnsemble::heal_quorum(int i) { nodes_.at(static_cast<std::size_t>(i))->quorum.heal(); }

bool NetnsEnsemble::wait_rejoined(int i, std::chrono::milliseconds timeout) {
  return wait_until(
      [&] {
        if (servers_->mode(i) != (is_observer(i) ? "observer" : "follower")) return false;
        const int leader = servers_->leader_index();
        if (leader < 0) return false;
        const auto mntr = parse_mntr(servers_->four_letter(leader, "mntr"));
        const auto synced = mntr.find("zk_synced_followers");
        return synced != mntr.end() && synced->second == std::to_string(voters() - 1);
      },
      timeout, std::chrono::milliseconds(100));
}

bool NetnsEnsemble::wait_all_serving(std::chrono::milliseconds timeout) {
  return wait_until(
      [&] {
        const int leader = servers_->leader_index();
        if (leader < 0) return false;
        for (int i = 0; i < size(); ++i) {
          if (i != leader && servers_->mode(i) != (is_observer(i) ? "observer" : "follower")) {
            return false;
          }
        }
        const auto mntr = parse_mntr(servers_->four_letter(leader, "mntr"));
        const auto synced = mntr.find("zk_synced_followers");
        return synced != mntr.end() && synced->second == std::to_string(voters() - 1);
      },
      timeout, std::chrono::milliseconds(100));
}

}  // namespace zklock::testing::netfaults
