#include "server_stats.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>

#include "support/four_letter_words.h"

namespace zklock::bench {

using testing::parse_dump_ephemerals;
using testing::parse_mntr;
using testing::parse_wchc;
using testing::parse_wchp;
using testing::try_four_letter_word;

ServerStats::ServerStats(const std::string& connect) {
  std::string hosts = connect.substr(0, connect.find('/'));
  std::stringstream ss(hosts);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0) continue;
    std::string host = item.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    const int port = std::atoi(item.c_str() + colon + 1);
    if (port <= 0 || port > 65535) continue;
    bool dup = false;
    for (const auto& s : servers_) dup = dup || (s.first == host && s.second == port);
    if (!dup) servers_.emplace_back(host, port);
  }
}

ServerCounters ServerStats::read() const {
  ServerCounters total;
  if (servers_.empty()) return total;
  total.ok = true;
  for (const auto& [host, port] : servers_) {
    const auto reply = try_four_letter_word(host, port, "mntr", std::chrono::seconds(2));
    if (!reply) {
      total.ok = false;
      continue;
    }
    auto kv = parse_mntr(*reply);
    auto num = [&](const char* key, std::int64_t& into) {
      auto it = kv.find(key);
      if (it == kv.end()) return false;
      into += std::strtoll(it->second.c_str(), nullptr, 10);
      return true;
    };
    bool ok = num("zk_packets_received", total.packets_received);
    ok = num("zk_watch_count", total.watch_count) && ok;
    std::int64_t notified = 0;
    ok = num("zk_sum_node_created_watch_count", notified) && ok;
    ok = num("zk_sum_node_deleted_watch_count", notified) && ok;
    ok = num("zk_sum_node_changed_watch_count", notified) && ok;
    ok = num("zk_sum_node_children_watch_count", notified) && ok;
    total.watch_notifications += notified;
    // Sizes, for the cost of a held lock on the server (not every version reports them).
    num("zk_ephemerals_count", total.ephemerals);
    num("zk_approximate_data_size", total.approximate_data_size);
    if (total.version.empty() && kv.count("zk_version")) {
      const std::string& v = kv["zk_version"];
      total.version = v.substr(0, v.find_first_of("-, "));
    }
    total.ok = total.ok && ok;
  }
  return total;
}

std::optional<std::vector<std::int64_t>> ServerStats::watchers(const std::string& path) const {
  if (servers_.empty()) return std::nullopt;
  std::vector<std::int64_t> sessions;
  for (const auto& [host, port] : servers_) {
    const auto wchp = try_four_letter_word(host, port, "wchp", std::chrono::seconds(5));
    if (!wchp || wchp->find("not executed") != std::string::npos) return std::nullopt;
    const auto by_path = parse_wchp(*wchp);
    if (const auto it = by_path.find(path); it != by_path.end()) {
      sessions.insert(sessions.end(), it->second.begin(), it->second.end());
    }
  }
  return sessions;
}

std::optional<std::int64_t> ServerStats::self_watches(const std::string& prefix) const {
  if (servers_.empty()) return std::nullopt;
  std::int64_t count = 0;
  for (const auto& [host, port] : servers_) {
    const auto wchc = try_four_letter_word(host, port, "wchc", std::chrono::seconds(5));
    const auto dump = try_four_letter_word(host, port, "dump", std::chrono::seconds(5));
    if (!wchc || !dump || wchc->find("not executed") != std::string::npos ||
        dump->find("Sessions with Ephemerals") == std::string::npos) {
      return std::nullopt;
    }
    const auto owned = parse_dump_ephemerals(*dump);
    for (const auto& [session, watched] : parse_wchc(*wchc)) {
      const auto mine = owned.find(session);
      if (mine == owned.end()) continue;
      for (const auto& path : watched) {
        if (path.compare(0, prefix.size(), prefix) != 0) continue;
        count += std::count(mine->second.begin(), mine->second.end(), path);
      }
    }
  }
  return count;
}

}  // namespace zklock::bench
