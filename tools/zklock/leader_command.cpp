#include "leader_command.h"

#include <deque>
#include <iostream>
#include <mutex>

#include "contender_view.h"
#include "exit_codes.h"
#include "wakeup.h"

namespace zklock::cli {

std::string leader_line(const std::optional<Leader>& leader) {
  if (!leader) return "none";
  std::string line =
      leader->term.to_string() + " " + session_id_hex(leader->session_id) + " " + leader->node_path;
  if (leader->since) line += " since=" + utc_time(*leader->since);
  if (!leader->host.empty()) line += " host=" + leader->host;
  if (leader->pid != 0) line += " pid=" + std::to_string(leader->pid);
  return line + " value=" + quoted(leader->value);
}

int run_leader(const LeaderOptions& leader, const CommonOptions& common, const Console& console) {
  const auto session = open_session(common, console);
  // Only for leader(): this participant never campaigns, so it never creates a node.
  const Election view(*session, leader.path);
  const auto now = view.leader();
  if (!now) {
    console.error("nobody leads " + leader.path);
    return exit_code::kNoHolder;
  }
  std::cout << leader_line(now) << std::endl;
  return exit_code::kOk;
}

int run_leader_watch(const LeaderOptions& leader, const CommonOptions& common,
                     const Console& console, SignalReader& signals) {
  // Declared before the Session: the event thread may deliver until the observation has stopped.
  Wakeup delivered;
  std::mutex mutex;
  std::deque<LeaderChange> changes;
  const auto session = open_session(common, console);
  const Election view(*session, leader.path);
  LeaderObservation observation = view.observe([&](const LeaderChange& change) {
    {
      std::lock_guard lock(mutex);
      changes.push_back(change);
    }
    delivered.notify();
  });
  for (;;) {
    const auto pending = signals.wait(delivered, -1);
    std::deque<LeaderChange> batch;
    {
      std::lock_guard lock(mutex);
      batch.swap(changes);
    }
    for (const LeaderChange& change : batch) {
      if (change.may_have_missed_terms) {
        console.note("(a leader may have come and gone unseen before this one)");
      }
      std::cout << leader_line(change.leader) << std::endl;
    }
    for (const auto& info : pending) {
      if (SignalReader::is_termination(static_cast<int>(info.ssi_signo))) {
        observation.stop();
        return exit_code::kOk;
      }
    }
  }
}

}  // namespace zklock::cli
