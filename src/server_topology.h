// ServerTopology: what kind of ZooKeeper deployment a session talks to, read from the server's
// /zookeeper/config node, and what it means for the Lost rule's lag (internal; pure).
//
// The config node lists an ensemble's servers ("server.N=host:quorum:election[:role];client"),
// observers with the role "observer"; a standalone server's is empty. An observer passes our
// session's touches to the leader one hop later than a follower when it syncs from an
// ObserverMaster (3.6+: a follower relays them in its next ping answer), which a client cannot
// see - so any observer in the ensemble doubles the lag (leader_confirmation.h).
#pragma once

#include <string_view>

#include "boot_clock.h"

namespace zklock::detail {

enum class ServerTopology {
  kUnknown,                // not learned yet (or the node could not be read): as an ensemble
  kStandalone,             // the server expires sessions itself: every answer counts, no lag
  kEnsemble,               // followers and a leader: lag tickTime/2
  kEnsembleWithObservers,  // observers too (maybe behind an ObserverMaster): lag tickTime
};

/// The topology /zookeeper/config's data `config` describes.
ServerTopology topology_of_config(std::string_view config);

/// The confirmation lag for `topology` given the ensemble's tickTime `tick` (or its bound).
BootClock::duration confirmation_lag(ServerTopology topology, BootClock::duration tick);

const char* to_string(ServerTopology topology);

}  // namespace zklock::detail
