#include "session/server_topology.h"

namespace zklock::detail {

ServerTopology topology_of_config(std::string_view config) {
  bool servers = false;
  bool observers = false;
  std::size_t start = 0;
  while (start < config.size()) {
    const std::size_t end = std::min(config.find('\n', start), config.size());
    const std::string_view line = config.substr(start, end - start);
    start = end + 1;
    if (line.substr(0, 7) != "server.") continue;
    servers = true;
    // server.N=host:quorum:election[:participant|:observer][;client]: the role, if given, is the
    // fourth field of the part before ';'.
    const std::string_view peer = line.substr(0, line.find(';'));
    if (peer.size() >= 9 && peer.substr(peer.size() - 9) == ":observer") observers = true;
  }
  if (!servers) return ServerTopology::kStandalone;
  return observers ? ServerTopology::kEnsembleWithObservers : ServerTopology::kEnsemble;
}

BootClock::duration confirmation_lag(ServerTopology topology, BootClock::duration tick) {
  return topology == ServerTopology::kStandalone ? BootClock::duration(0) : tick;
}

BootClock::duration confirmation_relay(ServerTopology topology, BootClock::duration tick) {
  switch (topology) {
    case ServerTopology::kStandalone:
      return BootClock::duration(0);
    case ServerTopology::kEnsemble:
      return tick / 2;
    case ServerTopology::kUnknown:
    case ServerTopology::kEnsembleWithObservers:
      break;
  }
  return tick;
}

const char* to_string(ServerTopology topology) {
  switch (topology) {
    case ServerTopology::kUnknown:
      return "unknown";
    case ServerTopology::kStandalone:
      return "standalone";
    case ServerTopology::kEnsemble:
      return "ensemble";
    case ServerTopology::kEnsembleWithObservers:
      return "ensemble with observers";
  }
  return "unknown";
}

}  // namespace zklock::detail
