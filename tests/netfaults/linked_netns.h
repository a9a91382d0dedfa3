// tests/netfaults/linked_netns.h: a network namespace joined to the host by one veth link, with
// routes chosen by the test - the place a ZooKeeper client (or a standalone server) runs in.
//
// Packets between two linked namespaces go through the host, which routes them (an IpForwarding
// must live meanwhile). cut() / heal() of link() partition this namespace from everything, both
// ways and silently (netns.h).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/netns.h"

namespace zklock::testing::netfaults {

class LinkedNamespace {
 public:
  // A new namespace and its link to the host (left: host end, right: this namespace's end), with
  // no route beyond the link's own /30 yet. Throws std::runtime_error (netns.h) on failure.
  LinkedNamespace() : link_(nullptr, netns_) {}
  LinkedNamespace(const LinkedNamespace&) = delete;
  LinkedNamespace& operator=(const LinkedNamespace&) = delete;

  const NetNamespace& netns() const { return netns_; }
  VethLink& link() { return link_; }
  // The address of this namespace's end of the link.
  const std::string& address() const { return link_.right().address; }
  // `argv` run inside this namespace (NetNamespace::command).
  std::vector<std::string> command(const std::vector<std::string>& argv) const {
    return netns_.command(argv);
  }

  // This namespace's hosts file (NetNamespace::set_hosts).
  void set_hosts(const std::vector<std::pair<std::string, std::string>>& entries) {
    netns_.set_hosts(entries);
  }

  // Replaces the routes: `destinations` (each "a.b.c.d/32" or "default") via the host, and
  // nothing else. reach({"default"}) reaches everything the host routes.
  void reach(const std::vector<std::string>& destinations) {
    routes_.clear();
    for (const auto& destination : destinations) {
      routes_.push_back(Route::via(netns_, destination, link_.left().address));
    }
  }

 private:
  NetNamespace netns_;
  VethLink link_;
  std::vector<std::unique_ptr<Route>> routes_;
};

}  // namespace zklock::testing::netfaults
