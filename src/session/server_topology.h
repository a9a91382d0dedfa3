// ServerTopology: what kind of ZooKeeper deployment a session talks to, read from the server's
// /zookeeper/config node, and what it means for the Lost rule's lag (internal; pure).
//
// The config node lists an ensemble's servers ("server.N=host:quorum:election[:role];client"),
// observers with the role "observer"; a standalone server's is empty.
//
// The lag through an ensemble is a whole tickTime. It must cover two things (docs/sessions.md):
//  * the relay: a follower passes our session's touches to the leader in its next ping answer,
//    up to tickTime/2 later; an observer syncing from an ObserverMaster two hops away, up to a
//    tickTime;
//  * a stale leader: a leader cut off from its followers goes on answering syncs (not a quorum
//    operation, ZOOKEEPER-1675) until its own check notices that no quorum acknowledged it for
//    syncLimit ticks - up to a tickTime after its followers, counting the same silence, gave up on
//    it and could elect a new leader, which counts every session from its election.
#pragma once

#include <string_view>

#include "base/boot_clock.h"

namespace zklock::detail {

enum class ServerTopology {
  kUnknown,                // not learned yet (or the node could not be read): as an ensemble
  kStandalone,             // the server expires sessions itself: every answer counts, no lag
  kEnsemble,               // followers and a leader: lag tickTime
  kEnsembleWithObservers,  // observers too (maybe behind an ObserverMaster): lag tickTime
};

/// The topology /zookeeper/config's data `config` describes.
ServerTopology topology_of_config(std::string_view config);

/// The confirmation lag for `topology` given the ensemble's tickTime `tick` (or its bound): the
/// newest send a leader-made answer may confirm lies this far before that request's send.
BootClock::duration confirmation_lag(ServerTopology topology, BootClock::duration tick);
/// The relay: how long before that send the confirmed request must have been answered (its touch
/// had reached the leader) - tick/2 through followers, a tick when observers may relay in two hops
/// or the topology is not known yet.
BootClock::duration confirmation_relay(ServerTopology topology, BootClock::duration tick);

const char* to_string(ServerTopology topology);

}  // namespace zklock::detail
