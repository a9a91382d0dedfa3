// `zklock revoke [options] [--node NAME] LOCK_PATH`: asks the holder(s) of a lock - or the
// contender NAME - to let go (zklock/revocation.h: "__REVOKE__" written into the node, as Apache
// Curator's Revoker does). Its options and its --help text are command_line.cpp's.
#pragma once

#include <string>

#include "console.h"
#include "options.h"

namespace zklock::cli {

struct RevokeOptions {
  std::string path;
  std::string node;  // --node: one contender's node name; empty: the holder(s)
};

/// Runs `zklock revoke`: one request per holder (or to --node), each reported on stdout as
/// "asked NODE to let go". A zklock holder whose node says "revocable":false is not asked.
/// Returns: 0 when every one was asked; 66 when nobody holds the lock (or --node names no
/// contender); 77 when a holder does not accept revocation (those that do are asked still).
/// Throws: Failure, zklock::Error (main() turns them into exit codes: not authorized is 77).
int run_revoke(const RevokeOptions& revoke, const CommonOptions& common, const Console& console);

}  // namespace zklock::cli
