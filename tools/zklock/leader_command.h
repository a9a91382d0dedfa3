// `zklock leader [options] [--watch] ELECTION_PATH`: who leads an election (zklock::Election,
// `zklock elect`, Curator's LeaderSelector, kazoo's Election): one line
//   TERM SESSION_ID NODE_PATH [since=UTC_TIME] [host=HOST pid=PID] value="VALUE"
// (the leader's term token, its ZooKeeper session in hex, its node; since when it leads, by its
// own clock, and who it is, as a zklock leader's node says; its value as a JSON string), or with
// --watch that line for the leader now and for every change after it ("none" while nobody
// leads), until SIGINT, SIGTERM or SIGHUP. Its options and its --help text are command_line.cpp's.
#pragma once

#include <optional>
#include <string>

#include "console.h"
#include "options.h"
#include "signals.h"
#include "zklock/election.h"

namespace zklock::cli {

struct LeaderOptions {
  std::string path;
  bool watch = false;
};

/// The line for `leader` ("none" for nobody).
std::string leader_line(const std::optional<Leader>& leader);

/// Runs `zklock leader` without --watch. Returns: 0 and the line on stdout when someone leads;
/// 66 (nobody leads, said on stderr) otherwise.
/// Throws: Failure, zklock::Error (main() turns them into exit codes).
int run_leader(const LeaderOptions& leader, const CommonOptions& common, const Console& console);

/// Runs `zklock leader --watch` (Election::observe()): a line per change, flushed, until a
/// termination signal on `signals` (exit 0). A change after which a short term may have passed
/// unseen is noted on stderr.
int run_leader_watch(const LeaderOptions& leader, const CommonOptions& common,
                     const Console& console, SignalReader& signals);

}  // namespace zklock::cli
