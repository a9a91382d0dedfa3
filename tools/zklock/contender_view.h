// What `zklock status` (one-shot and --watch) makes of a contender: the name of its kind and
// naming, whether it holds the lock, and the identity zklock writes into its own nodes. Lock nodes
// can be written by any client of the ensemble, so everything here treats their data as untrusted.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zklock/contender.h"

namespace zklock::cli {

/// "exclusive", "write" or "read".
const char* kind_name(ContenderKind kind);

/// "protected", "plain" or "kazoo".
const char* naming_name(NodeNaming naming);

/// Who holds the lock: the first contender, and every reader with only readers ahead of it (the
/// rule of zklock's SharedMutex and Curator's read lock). One entry per contender, in order.
std::vector<bool> holders(const std::vector<Contender>& contenders);

/// What zklock writes into its nodes:
/// {"lib":"zklock","host":...,"pid":...,"revocable":...,"held_since":...,"description":...}.
/// Each field is null when it is missing or of the wrong type.
struct Identity {
  nlohmann::json host = nullptr;         // a string
  nlohmann::json pid = nullptr;          // an integer
  nlohmann::json revocable = nullptr;    // a boolean (zklock 0.x before revocation: missing)
  nlohmann::json held_since = nullptr;   // an integer: ms since the Unix epoch (a stamped holder)
  nlohmann::json description = nullptr;  // a string
  bool ours = false;                     // the data is zklock's JSON object
};

/// Parses a node's data as zklock's identity; any other data gives `ours == false`.
Identity identity_of(const std::string& data);

/// A JSON string literal: quoted and escaped (also control characters; invalid UTF-8 replaced).
std::string quoted(const std::string& text);

/// `at` in UTC, to the millisecond: "2026-12-06T03:40:00.123Z".
std::string utc_time(std::chrono::system_clock::time_point at);

}  // namespace zklock::cli
