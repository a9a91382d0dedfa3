// tools/bench/server_stats.h: the server-side counters zklock-bench reads from ZooKeeper's `mntr`.
//
// Each server named in the connect string is asked for `mntr` over its client port (a "four letter
// word", through the test support library's client, tests/support/four_letter_words.h; the server
// must whitelist it, e.g. 4lw.commands.whitelist=*). The figures are summed over
// the servers, so on an ensemble they cover every client connection.
//
// Two things to know when taking deltas:
//  * ZooKeeper 3.8 counts the 4lw request itself in zk_packets_received (+1 per server per read):
//    subtract `cost_per_read()` for every read made inside the measured window.
//  * Watch notifications are not a plain counter in mntr. The server keeps summaries of "watchers
//    triggered per event" for each event type (zk_sum_node_{created,deleted,changed,children}_
//    watch_count); their sums added up are the number of (watch, session) notifications sent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zklock::bench {

struct ServerCounters {
  bool ok = false;                         // every server answered mntr with the keys below
  std::int64_t packets_received = 0;       // zk_packets_received
  std::int64_t watch_notifications = 0;    // sum of zk_sum_node_*_watch_count
  std::int64_t watch_count = 0;            // zk_watch_count (watches registered right now)
  std::int64_t ephemerals = 0;             // zk_ephemerals_count (0 if not reported)
  std::int64_t approximate_data_size = 0;  // zk_approximate_data_size: bytes of paths and data
  std::string version;                     // zk_version of the first server
};

class ServerStats {
 public:
  /// Parses "host:port[,host:port...][/chroot]". Unparsable hosts are skipped.
  explicit ServerStats(const std::string& connect);

  /// Reads every server's mntr (2 s timeout each). ok=false if any server did not answer.
  ServerCounters read() const;

  /// Watches that a session holds on one of its own ephemeral nodes under `prefix` ("/a/b/"), from
  /// `wchc` (watches by session) and `dump` (ephemerals by session); nullopt if unavailable. Such a
  /// watch fires when its owner deletes the node: a notification to the releasing session itself,
  /// not a wakeup of a waiter. Costs 2 x cost_per_read() packets.
  std::optional<std::int64_t> self_watches(const std::string& prefix) const;

  /// The sessions watching `path` (data or exists watches), from `wchp`, over every server;
  /// nullopt if unavailable. Costs cost_per_read() packets.
  std::optional<std::vector<std::int64_t>> watchers(const std::string& path) const;

  /// zk_packets_received added by one read() (one 4lw per server).
  std::int64_t cost_per_read() const { return static_cast<std::int64_t>(servers_.size()); }

 private:
  std::vector<std::pair<std::string, int>> servers_;
};

}  // namespace zklock::bench
